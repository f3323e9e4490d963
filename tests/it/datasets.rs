//! The team's labeled eval datasets stay decodable as API v1 requests.

use std::collections::HashSet;

#[test]
fn every_dataset_case_is_a_valid_request() {
    let mut files: Vec<_> = std::fs::read_dir("evals/datasets")
        .expect("evals/datasets exists")
        .chain(std::fs::read_dir("evals/datasets/heldout").expect("heldout exists"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 11, "expected one file per category");
    let mut ids = HashSet::new();
    let mut count = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable");
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let case: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", f.display(), i + 1));
            let id = case["id"].as_str().expect("id").to_string();
            assert!(ids.insert(id.clone()), "duplicate id {id}");
            assert!(
                matches!(case["expected"].as_str(), Some("allow" | "deny")),
                "{id}"
            );
            let req = serde_json::to_vec(&case["request"]).expect("serialises");
            if let Err(e) = guardian::ReviewRequest::from_json(&req) {
                panic!("{id}: {}: {}", e.field, e.message);
            }
            count += 1;
        }
    }
    assert!(count >= 400, "only {count} cases");
}

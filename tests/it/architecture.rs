//! Dependencies point one way: request → normalize → policy → reviewer → pipeline → adapters
//! (server, integrations, CLI). A module may use what comes before it, never what comes after;
//! this test reads the sources (comments and doc links aside) and names any import that points
//! backwards.

use std::path::{Path, PathBuf};

/// (module path under src/, modules it must not use)
const RULES: &[(&str, &[&str])] = &[
    (
        "request.rs",
        &[
            "normalize",
            "policy",
            "reviewer",
            "pipeline",
            "server",
            "integrations",
            "audit",
            "eval",
        ],
    ),
    (
        "verdict.rs",
        &[
            "normalize",
            "policy",
            "reviewer",
            "pipeline",
            "server",
            "integrations",
            "audit",
            "eval",
        ],
    ),
    (
        "normalize",
        &[
            "policy",
            "reviewer",
            "pipeline",
            "server",
            "integrations",
            "audit",
            "eval",
            "config",
        ],
    ),
    (
        "policy",
        &[
            "reviewer",
            "pipeline",
            "server",
            "integrations",
            "audit",
            "eval",
        ],
    ),
    (
        "reviewer",
        &[
            "policy",
            "pipeline",
            "server",
            "integrations",
            "audit",
            "eval",
        ],
    ),
    ("pipeline.rs", &["server", "integrations", "eval"]),
    ("audit", &["pipeline", "server", "integrations", "policy"]),
];

fn rust_files(p: &Path) -> Vec<PathBuf> {
    if p.is_file() {
        return vec![p.to_path_buf()];
    }
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).expect("read_dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

/// The lines of `text` that use one of `forbidden` (comments aside), as (line, module, code).
fn backward_uses(text: &str, forbidden: &[&str]) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        for m in forbidden {
            let used = [
                format!("crate::{m}::"),
                format!("crate::{m};"),
                format!("crate::{m} "),
                format!("crate::{{{m}"),
            ]
            .iter()
            .any(|needle| code.contains(needle.as_str()));
            if used {
                out.push((n + 1, (*m).to_string(), code.to_string()));
            }
        }
    }
    out
}

#[test]
fn dependencies_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (module, forbidden) in RULES {
        let files = rust_files(&src.join(module));
        assert!(!files.is_empty(), "no sources for {module}");
        for f in files {
            let text = std::fs::read_to_string(&f).expect("read");
            for (line, m, code) in backward_uses(&text, forbidden) {
                violations.push(format!(
                    "{}:{line}: {module} uses {m}: {code}",
                    f.strip_prefix(&src).unwrap_or(&f).display()
                ));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports pointing backwards:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_check_finds_backward_uses_and_skips_comments() {
    let text = "use crate::request::Action;\n/// see [`crate::policy::Policy`]\n    let g = crate::policy::protect::gitdir_of(d);\nuse crate::{policy, request};\n";
    let found = backward_uses(text, &["policy"]);
    assert_eq!(
        found.iter().map(|f| f.0).collect::<Vec<_>>(),
        vec![3, 4],
        "{found:?}"
    );
}

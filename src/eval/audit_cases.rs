//! Guardian's own audit log as eval cases (`guardian traces import audit`): every action a rule
//! or the reviewer decided becomes a case whose request is replayed as it was asked (the action,
//! the session, the user's words, the escalation), with the decision as a provisional label, or
//! the label a person gave it ([`crate::labels`]).
//!
//! This module owns turning a record into a case; reading the records, with every line that
//! cannot be read reported by file and line and skipped, is [`crate::audit_report`]'s.

use std::path::Path;

use serde_json::{Value, json};

pub use crate::audit_report::{BadLine, files_of_log, is_action_decision, read_records, record_id};
use crate::eval::Case;
use crate::labels::Label;
use crate::verdict::Decision;

/// The `/v1/review` request a record says was asked: its action (judged in the recorded
/// working directory), its session, the user's words, strict mode, the retry and escalation.
pub fn request_of(record: &Value) -> Option<Value> {
    let mut action = record.get("action")?.clone();
    let cwd = record.get("cwd").and_then(Value::as_str).unwrap_or("");
    if let Some(obj) = action.as_object_mut()
        && !obj.contains_key("cwd")
        && !cwd.is_empty()
        && obj.get("kind").and_then(Value::as_str) != Some("mcp")
    {
        obj.insert("cwd".into(), json!(cwd));
    }
    let mut session = serde_json::Map::new();
    for (from, to) in [
        ("session_id", "id"),
        ("agent", "agent"),
        ("workspace_roots", "workspace_roots"),
    ] {
        if let Some(v) = record.get(from).filter(|v| !v.is_null()) {
            session.insert(to.into(), v.clone());
        }
    }
    let mut req = serde_json::Map::new();
    req.insert("action".into(), action);
    req.insert("session".into(), Value::Object(session));
    for key in ["intent", "retry", "escalation"] {
        if let Some(v) = record.get(key).filter(|v| !v.is_null()) {
            req.insert(key.into(), v.clone());
        }
    }
    if record.get("strict").and_then(Value::as_bool) == Some(true) {
        req.insert("strict".into(), json!(true));
    }
    Some(Value::Object(req))
}

/// The decision a record states.
pub fn decision_of(record: &Value) -> Option<Decision> {
    match record.get("decision").and_then(Value::as_str)? {
        "allow" => Some(Decision::Allow),
        "deny" => Some(Decision::Deny),
        _ => None,
    }
}

/// Which stages an import takes by default: a rule's decisions and the reviewer's (cached
/// approvals and fallbacks repeat or lack a judgment; `--decided-by` asks for them).
pub fn default_stage(record: &Value) -> bool {
    matches!(
        record.get("decided_by").and_then(Value::as_str),
        Some("rule" | "reviewer")
    )
}

/// The eval case of a record: the provisional label is the decision, or, with `label`, what
/// the person said (`right` keeps the decision, `wrong` flips it). `file` names the segment.
pub fn case_of(record: &Value, file: &Path, label: Option<&Label>) -> Option<Case> {
    let request = request_of(record)?;
    let decided = decision_of(record)?;
    let hash = record_id(record)?;
    let seq = record.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let decided_by = record
        .get("decided_by")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let short = hash.get(..16).unwrap_or(hash);
    let (expected, category, notes) = match label {
        Some(l) => {
            let expected = l.expected(decided);
            let note = if l.note.is_empty() {
                String::new()
            } else {
                format!(": {}", l.note)
            };
            (
                expected,
                "audit-labelled".to_string(),
                format!(
                    "labelled {} by {} at {} (guardian said {} by {decided_by}){note}",
                    l.verdict.as_str(),
                    l.labeller,
                    l.time,
                    decided.as_str()
                ),
            )
        }
        None => (
            decided,
            "audit-provisional".to_string(),
            format!(
                "provisional: guardian's own decision ({} by {decided_by}), not yet labelled",
                decided.as_str()
            ),
        ),
    };
    Some(Case {
        id: format!("audit-{seq}-{short}"),
        request,
        expected,
        category,
        source: format!("audit {} seq {seq} hash {hash}", file.display()),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Value {
        json!({
            "seq": 7, "time": "2026-12-03T10:00:00.000Z", "review_id": "rev_1",
            "session_id": "s1", "agent": "codex", "client": "ci",
            "action": {"kind": "shell", "command": "git push --force"},
            "cwd": "/w/app", "workspace_roots": ["/w/app"], "intent": "fix the test",
            "strict": false, "retry": null, "decision": "deny", "decided_by": "reviewer",
            "hash": "ab".repeat(32)
        })
    }

    #[test]
    fn a_record_replays_as_the_request_it_was() {
        let r = request_of(&record()).expect("request");
        assert_eq!(r["action"]["cwd"], "/w/app", "judged where it was judged");
        assert_eq!(r["session"]["id"], "s1");
        assert_eq!(r["session"]["workspace_roots"][0], "/w/app");
        assert_eq!(r["intent"], "fix the test");
        assert!(r.get("retry").is_none() && r.get("strict").is_none());
        crate::request::ReviewRequest::from_json(r.to_string().as_bytes())
            .expect("a request the API takes");
    }

    #[test]
    fn the_provisional_label_is_the_decision_and_a_label_flips_it() {
        let p = Path::new("audit.jsonl");
        let c = case_of(&record(), p, None).expect("case");
        assert_eq!(c.expected, Decision::Deny);
        assert_eq!(c.category, "audit-provisional");
        assert_eq!(c.id, "audit-7-abababababababab");
        assert!(
            c.source.contains(&"ab".repeat(32)),
            "traceable to the record"
        );
        let wrong = Label::new(
            &"ab".repeat(32),
            7,
            crate::labels::Verdict::Wrong,
            "ann",
            "ok",
        );
        let c = case_of(&record(), p, Some(&wrong)).expect("case");
        assert_eq!(c.expected, Decision::Allow);
        assert!(
            c.notes.contains("by ann") && c.notes.ends_with(": ok"),
            "{}",
            c.notes
        );
    }
}

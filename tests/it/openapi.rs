//! `GET /openapi.json` is generated from the wire types, and it agrees with what the server
//! accepts and answers.

use crate::common::*;
use axum::http::StatusCode;
use serde_json::{Value, json};

fn validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let root = json!({"components": doc["components"].clone(), "allOf": [schema]});
    jsonschema::validator_for(&root).expect("the generated schema compiles")
}

#[tokio::test]
async fn openapi_document_matches_the_api() {
    let h = Harness::new("[reviewer]\nbackend = \"none\"\n");
    let (status, doc) = h.call("GET", "/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(doc["openapi"], "3.0.3");
    let post = &doc["paths"]["/v1/review"]["post"];
    let request = validator(
        &doc,
        &post["requestBody"]["content"]["application/json"]["schema"],
    );
    let response = validator(
        &doc,
        &post["responses"]["200"]["content"]["application/json"]["schema"],
    );
    for path in ["/v1/hooks/claude-code", "/v1/policy", "/healthz"] {
        assert!(doc["paths"][path].is_object(), "{path} missing");
    }
    // Every kind of action in the README's shapes validates, and the server accepts it.
    let bodies = [
        json!({
            "action": {"kind": "shell", "command": "git push origin main", "cwd": "/work/repo"},
            "session": {"id": "s-42", "agent": "claude-code", "workspace_roots": ["/work/repo"], "sandbox": "workspace-write"},
            "intent": "Fix the failing test in src/lib.rs",
            "transcript": [{"role": "user", "content": "..."}, {"role": "tool", "name": "Bash", "content": "..."}],
            "retry": {"sandbox_denied": true, "output": "touch: /etc/x: Read-only file system", "previous_review_id": "rev_1"},
            "strict": false
        }),
        json!({"action": {"kind": "read", "path": "src/lib.rs"}}),
        json!({"action": {"kind": "write", "path": "a", "content": "x", "diff": "+x"}}),
        json!({"action": {"kind": "fetch", "url": "https://docs.rs"}}),
        json!({"action": {"kind": "mcp", "server": "github", "tool": "create_issue", "arguments": {"title": "x"}}}),
        json!({"action": {"kind": "shell", "command": "cargo test"},
               "escalation": {"kind": "unsandboxed", "justification": "the tests bind a port"}}),
        json!({"action": {"kind": "shell", "command": "make"},
               "escalation": {"kind": "additional_permissions", "read": ["/opt/sdk"], "write": ["/tmp/out"], "network": true}}),
    ];
    for b in bodies {
        assert!(request.is_valid(&b), "{b} should validate");
        let (status, resp) = h.review(b).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            response.is_valid(&resp),
            "the server's answer {resp} does not match its own schema"
        );
    }
    // What the server rejects, the schema rejects too.
    for bad in [
        json!({"action": {"kind": "shell", "command": "ls", "cwdd": "/"}}),
        json!({"action": {"kind": "teleport"}}),
        json!({"intent": "no action"}),
        json!({"action": {"kind": "shell", "command": "ls"}, "extra": 1}),
        json!({"action": {"kind": "shell", "command": "ls"}, "escalation": {"kind": "root"}}),
    ] {
        assert!(!request.is_valid(&bad), "{bad} should not validate");
        let (status, _) = h.review(bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }
}

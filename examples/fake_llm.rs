//! A fake OpenAI-compatible reviewer with a fixed latency, for the reviewer-path benchmark: every
//! `POST /v1/chat/completions` is answered after `DELAY_MS` (default 200) with an allow verdict.
//!
//! `cargo run --release --example fake_llm -- 127.0.0.1:18802 200`

use std::time::Duration;

use axum::Router;
use axum::routing::post;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:18802".into());
    let delay_ms: u64 = args.next().and_then(|d| d.parse().ok()).unwrap_or(200);
    let verdict = r#"{"rationale":"a routine build step","risk_level":"low","user_authorization":"high","outcome":"allow"}"#;
    let body = serde_json::json!({
        "id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": verdict},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 40, "total_tokens": 1040}
    })
    .to_string();
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move |_: axum::body::Bytes| {
            let body = body.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                ([("content-type", "application/json")], body)
            }
        }),
    );
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fake_llm: cannot listen on {addr}: {e}");
            std::process::exit(2);
        }
    };
    eprintln!("fake_llm listening on http://{addr} ({delay_ms} ms)");
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("fake_llm: {e}");
    }
}

//! The benchmark baseline: a bare axum service answering `POST /v1/review` with a fixed decision
//! (no parsing, no policy, no audit). `scripts/bench-http.sh` drives it and guardian with the same
//! load generator to express guardian's throughput as a ratio of what axum alone does here.
//!
//! `cargo run --release --example hello -- 127.0.0.1:18801`

use axum::Router;
use axum::routing::{get, post};

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18801".into());
    let app = Router::new()
        .route(
            "/v1/review",
            post(|body: axum::body::Bytes| async move {
                let _ = body.len();
                (
                    [("content-type", "application/json")],
                    r#"{"id":"rev_hello","decision":"allow","decided_by":"rule","rule":null,"risk_level":null,"rationale":"hello","message":"allowed","interrupt":false}"#,
                )
            }),
        )
        .route("/healthz", get(|| async { "ok" }));
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("hello: cannot listen on {addr}: {e}");
            std::process::exit(2);
        }
    };
    eprintln!("hello listening on http://{addr}");
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("hello: {e}");
    }
}

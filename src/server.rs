//! The HTTP adapter: API v1 over axum.
//!
//! This module owns routes and the translation between HTTP and the pipeline: decoding bodies
//! (400 naming the field, 413 past the size limit), and serialising answers. It decides nothing.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use tower_http::catch_panic::CatchPanicLayer;

use crate::pipeline::Guardian;
use crate::request::ReviewRequest;

/// The router for a service.
pub fn router(guardian: Arc<Guardian>) -> Router {
    let limit = guardian.config().server.max_body_bytes;
    Router::new()
        .route("/v1/review", post(review))
        .route("/v1/policy", get(policy))
        .route("/v1/hooks/claude-code", post(claude_code_hook))
        .route("/v1/hooks/codex", post(codex_hook))
        .route("/healthz", get(healthz))
        .route("/openapi.json", get(openapi))
        .layer(DefaultBodyLimit::max(limit))
        .layer(CatchPanicLayer::custom(|_| {
            error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                ".",
                "internal error; nothing was allowed",
            )
        }))
        .with_state(guardian)
}

/// A JSON error body: `{"error": {"field": …, "message": …}}`.
pub fn error_response(status: StatusCode, field: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"field": field, "message": message}})),
    )
        .into_response()
}

async fn review(State(g): State<Arc<Guardian>>, body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(rejection) => {
            let status = rejection.status();
            let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
                format!(
                    "request body is larger than the limit of {} bytes (server.max_body_bytes)",
                    g.config().server.max_body_bytes
                )
            } else {
                rejection.body_text()
            };
            return error_response(status, ".", &message);
        }
    };
    let req = match ReviewRequest::from_json(&body) {
        Ok(r) => r,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, &e.field, &e.message),
    };
    let client = req
        .session
        .as_ref()
        .and_then(|s| s.agent.clone())
        .unwrap_or_else(|| "anonymous".to_string());
    Json(g.review(req, &client).await).into_response()
}

/// Claude Code HTTP hooks. Claude Code lets a tool call proceed when an HTTP hook fails, so every
/// failure this handler can see is answered 200 with a deny in the event's shape.
async fn claude_code_hook(
    State(g): State<Arc<Guardian>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    agent_hook(&g, "claude-code", body).await
}

/// Codex hooks (same wire format as Claude Code's; Codex calls them through
/// `guardian hook codex`, a command hook).
async fn codex_hook(
    State(g): State<Arc<Guardian>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    agent_hook(&g, "codex", body).await
}

async fn agent_hook(
    g: &Arc<Guardian>,
    agent: &str,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    use crate::integrations::claude_code::{
        HookInput, Translation, deny_output, output, translate,
    };
    let body = match body {
        Ok(b) => b,
        Err(rejection) => {
            return Json(deny_output("PreToolUse", &rejection.body_text())).into_response();
        }
    };
    let mut input: HookInput = match serde_json::from_slice(&body) {
        Ok(i) => i,
        Err(e) => {
            // Answer in the event's shape when the event name can still be read.
            let event = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| {
                    v.get("hook_event_name")
                        .and_then(|e| e.as_str())
                        .map(str::to_string)
                })
                .unwrap_or_else(|| "PreToolUse".into());
            return Json(deny_output(
                &event,
                &format!("the hook input is not valid: {e}"),
            ))
            .into_response();
        }
    };
    input.agent = Some(agent.to_string());
    match translate(&input) {
        Ok(Translation::Review(reqs)) => {
            // Every file of a multi-file patch must be allowed; the first denial answers.
            let mut last = None;
            for req in reqs {
                let resp = g.review(req, agent).await;
                let denied = resp.decision != crate::verdict::Decision::Allow;
                last = Some(resp);
                if denied {
                    break;
                }
            }
            match last {
                Some(resp) => Json(output(&input.hook_event_name, &resp)).into_response(),
                None => {
                    Json(deny_output(&input.hook_event_name, "nothing to review")).into_response()
                }
            }
        }
        Ok(Translation::Pass(_)) => Json(json!({})).into_response(),
        Err(e) => Json(deny_output(&input.hook_event_name, &e)).into_response(),
    }
}

async fn policy(State(g): State<Arc<Guardian>>) -> Response {
    let cfg = g.config();
    Json(json!({
        "rules": g.policy().listing(),
        "default": "ask",
        "order": ["deny", "ask", "allow"],
        "reviewer": {
            "backend": g.reviewer().backend(),
            "model": g.reviewer().model(),
            "timeout_ms": cfg.reviewer.timeout_ms,
        },
        "config": cfg.source_name,
    }))
    .into_response()
}

async fn openapi() -> Response {
    Json(crate::openapi::document()).into_response()
}

async fn healthz() -> Response {
    Json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")})).into_response()
}

/// Serves until the process gets SIGINT or SIGTERM.
pub async fn serve(
    guardian: Arc<Guardian>,
    listener: tokio::net::TcpListener,
) -> std::io::Result<()> {
    axum::serve(listener, router(guardian))
        .with_graceful_shutdown(shutdown_signal())
        .await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

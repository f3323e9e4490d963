//! The HTTP adapter: API v1 over axum, and the connection handling in front of it.
//!
//! This module owns routes and the translation between HTTP and the pipeline: decoding bodies
//! (400 naming the field, 413 past the size limit), and serialising answers. It decides nothing.
//! In front of the routes a gate ([`gate`]) reads the body within `server.body_read_timeout_ms`,
//! checks the bearer token (`[[auth.tokens]]`, compared as SHA-256 digests in constant time),
//! sheds load past `server.max_concurrent_requests` (503 + `Retry-After`, never a queue), and
//! bounds each request by `server.request_timeout_ms`. [`serve_until`] accepts connections itself
//! (hyper) to cap them and to time out slow request heads (slowloris), and shuts down gracefully.
//! Hook endpoints never answer an error status: the agents treat a failing hook as "proceed", so
//! every refusal there is a 200 deny in the hook's own shape.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, RawQuery, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde_json::json;
use tower_http::catch_panic::CatchPanicLayer;

use crate::config::Unreviewed;
use crate::integrations::Agent;
use crate::integrations::contract::{Event, HookAnswer, render};
use crate::pipeline::Guardian;

/// The authenticated client of a request (`[[auth.tokens]]` client name), when tokens are set.
#[derive(Debug, Clone)]
pub struct Client(pub Option<String>);

/// What the gate needs: the service, the token digests, the in-flight permits, the drain flag.
pub struct Gate {
    guardian: Arc<Guardian>,
    tokens: Vec<(String, [u8; 32])>,
    permits: Arc<tokio::sync::Semaphore>,
    draining: AtomicBool,
    request_timeout: Duration,
    body_timeout: Duration,
}

impl Gate {
    /// The gate for a service, from its `[server]` and `[auth]` settings.
    pub fn new(guardian: Arc<Guardian>) -> Gate {
        let cfg = guardian.config();
        let tokens = crate::auth::token_digests(cfg);
        let request_timeout = Duration::from_millis(match cfg.server.request_timeout_ms {
            0 => cfg.reviewer.timeout_ms.saturating_add(10_000),
            ms => ms,
        });
        Gate {
            tokens,
            permits: Arc::new(tokio::sync::Semaphore::new(
                cfg.server.max_concurrent_requests,
            )),
            draining: AtomicBool::new(false),
            request_timeout,
            body_timeout: Duration::from_millis(cfg.server.body_read_timeout_ms),
            guardian,
        }
    }

    /// From now on, every new request is refused (503, or a deny for hooks): shutting down.
    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// The client a bearer token belongs to. Every configured digest is compared, in constant
    /// time, whatever matches first: the time taken says nothing about the token.
    fn client_of(&self, token: &str) -> Option<String> {
        crate::auth::client_of(&self.tokens, token)
    }
}

/// The router for a service.
pub fn router(guardian: Arc<Guardian>) -> Router {
    router_with_gate(Arc::new(Gate::new(guardian)))
}

/// The router, sharing a gate with the connection loop (which drains it on shutdown).
pub fn router_with_gate(gate: Arc<Gate>) -> Router {
    let guardian = Arc::clone(&gate.guardian);
    let limit = guardian.config().server.max_body_bytes;
    let mut router = Router::new()
        .route("/v1/review", post(review))
        .route("/v1/refusals", post(refusals))
        .route("/v1/policy", get(policy));
    // A hook endpoint per agent with hooks: `/v1/hooks/claude-code`, `/v1/hooks/codex`.
    for agent in Agent::with_hooks() {
        router = router.route(&agent.hook_path(), hook_route(agent));
    }
    let api = router
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn_with_state(gate, gate_layer));
    let ui_enabled = guardian.config().ui.enabled;
    let ui = Arc::new(crate::ui::UiState::of_config(guardian.config()));
    let mut app = api.with_state(guardian);
    // The review page checks the same tokens itself (a header or its login cookie).
    if ui_enabled {
        app = app.merge(crate::ui::router(ui));
    }
    app.layer(CatchPanicLayer::custom(|_| {
        error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            ".",
            "internal error; nothing was allowed",
        )
    }))
}

/// The `hook_event_name` of a hook body, when it can be read; else `PreToolUse`.
fn hook_event_of(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("hook_event_name")
                .and_then(|e| e.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| "PreToolUse".into())
}

/// A hook failure caught before any review, as a deny in the agent's and event's shape.
fn hook_failure(agent: Agent, event: &str, reason: &str) -> Response {
    Json(render(
        agent,
        Event::of(event),
        &HookAnswer::failure(reason),
    ))
    .into_response()
}

/// A refusal before the handler ran: an error status with a JSON body, or for a hook endpoint a
/// 200 deny in the shape of the agent and the hook event named in the body.
fn refuse(hook: Option<(Agent, &[u8])>, status: StatusCode, message: &str) -> Response {
    let hook_body = hook.map(|(_, b)| b);
    let mut resp = match hook {
        Some((agent, body)) => hook_failure(agent, &hook_event_of(body), message),
        None => error_response(status, ".", message),
    };
    if hook_body.is_none() {
        if status == StatusCode::SERVICE_UNAVAILABLE {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"guardian\""),
            );
        }
    }
    resp
}

/// The gate in front of every route (see the module header).
async fn gate_layer(State(gate): State<Arc<Gate>>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    if path == "/healthz" {
        return next.run(req).await;
    }
    let hook = path
        .starts_with(crate::integrations::HOOK_PATH_PREFIX)
        .then(|| Agent::of_hook_path(&path));
    let metrics = gate.guardian.metrics();
    // Read the whole body first, within the body deadline (a slow drip is cut off).
    let limit = gate.guardian.config().server.max_body_bytes;
    let (parts, body) = req.into_parts();
    let bytes =
        match tokio::time::timeout(gate.body_timeout, axum::body::to_bytes(body, limit)).await {
            Ok(Ok(b)) => b,
            Ok(Err(_)) => {
                let msg = format!(
                    "request body is larger than the limit of {limit} bytes (server.max_body_bytes)"
                );
                return refuse(
                    hook.map(|a| (a, &b""[..])),
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &msg,
                );
            }
            Err(_) => {
                let msg = format!(
                    "the request body did not arrive within {} ms (server.body_read_timeout_ms)",
                    gate.body_timeout.as_millis()
                );
                return refuse(
                    hook.map(|a| (a, &b""[..])),
                    StatusCode::REQUEST_TIMEOUT,
                    &msg,
                );
            }
        };
    let hook_body = hook.map(|a| (a, &bytes[..]));
    if gate.draining.load(Ordering::SeqCst) {
        return refuse(
            hook_body,
            StatusCode::SERVICE_UNAVAILABLE,
            "guardian is shutting down",
        );
    }
    let client = if gate.tokens.is_empty() {
        None
    } else {
        match crate::auth::bearer(&parts.headers).and_then(|t| gate.client_of(t)) {
            Some(c) => Some(c),
            None => {
                metrics.auth_failures.inc();
                tracing::warn!(path = %path, "request without a valid bearer token");
                return refuse(
                    hook_body,
                    StatusCode::UNAUTHORIZED,
                    "a valid `Authorization: Bearer <token>` header is required",
                );
            }
        }
    };
    let Ok(permit) = Arc::clone(&gate.permits).try_acquire_owned() else {
        metrics.shed.inc();
        return refuse(
            hook_body,
            StatusCode::SERVICE_UNAVAILABLE,
            "too many requests in flight (server.max_concurrent_requests); retry shortly",
        );
    };
    let mut req = Request::from_parts(parts, Body::from(bytes.clone()));
    req.extensions_mut().insert(Client(client));
    metrics.in_flight.inc();
    let answered = tokio::time::timeout(gate.request_timeout, next.run(req)).await;
    metrics.in_flight.dec();
    drop(permit);
    match answered {
        Ok(resp) => resp,
        Err(_) => {
            metrics.error("request_timeout");
            let msg = format!(
                "the request took longer than {} ms (server.request_timeout_ms); nothing was allowed",
                gate.request_timeout.as_millis()
            );
            refuse(
                hook.map(|a| (a, &bytes[..])),
                StatusCode::SERVICE_UNAVAILABLE,
                &msg,
            )
        }
    }
}

pub use crate::http_error::error_response;

/// A JSON endpoint's request, decoded by `from_json`, or the error answer: 413 naming
/// `server.max_body_bytes`, 400 naming the bad field.
fn decoded<T>(
    g: &Guardian,
    body: Result<Bytes, BytesRejection>,
    from_json: impl Fn(&[u8]) -> Result<T, crate::request::RequestError>,
) -> Result<T, Box<Response>> {
    let body = body.map_err(|rejection| {
        let status = rejection.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            format!(
                "request body is larger than the limit of {} bytes (server.max_body_bytes)",
                g.config().server.max_body_bytes
            )
        } else {
            rejection.body_text()
        };
        Box::new(error_response(status, ".", &message))
    })?;
    from_json(&body).map_err(|e| {
        Box::new(error_response(
            StatusCode::BAD_REQUEST,
            &e.field,
            &e.message,
        ))
    })
}

async fn review(
    State(g): State<Arc<Guardian>>,
    client: Option<Extension<Client>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let req = match decoded(&g, body, crate::mandate::request_from_json) {
        Ok(r) => r,
        Err(resp) => return *resp,
    };
    // An authenticated client is who it says; without tokens, the agent named in the request.
    let client = client
        .and_then(|Extension(Client(c))| c)
        .or_else(|| req.session.as_ref().and_then(|s| s.agent.clone()))
        .unwrap_or_else(|| "anonymous".to_string());
    Json(g.review(req, &client).await).into_response()
}

/// `POST /v1/refusals`: a tool call an integration refused before any review, recorded in the
/// audit log (201 with the record's id). The client is the authenticated one, else the report's
/// agent; 400 names a bad field; 500 when the record could not be written.
async fn refusals(
    State(g): State<Arc<Guardian>>,
    client: Option<Extension<Client>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let report = match decoded(&g, body, crate::request::RefusalReport::from_json) {
        Ok(r) => r,
        Err(resp) => return *resp,
    };
    let client = client
        .and_then(|Extension(Client(c))| c)
        .unwrap_or_else(|| report.agent.clone());
    match g
        .record_refusal(&crate::pipeline::Refusal::of(&report, &client))
        .await
    {
        Ok(id) => (StatusCode::CREATED, Json(json!({"id": id}))).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "audit write failed for a reported refusal");
            error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                ".",
                &format!("the refusal could not be recorded in the audit log: {e}"),
            )
        }
    }
}

/// `?unreviewed=deny|ask` on a hook URL, which overrides `[hooks] unreviewed` for that hook.
fn unreviewed_query(query: Option<&str>) -> Option<String> {
    url::form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == "unreviewed")
        .map(|(_, v)| v.into_owned())
}

/// The hook endpoint of `agent`. The agents let a tool call proceed when a hook fails (Claude
/// Code's HTTP hooks, Codex's through `guardian hook codex`), so every failure this handler can
/// see is answered 200 with a deny in the agent's and the event's shape
/// ([`crate::integrations::contract`]).
fn hook_route(agent: Agent) -> axum::routing::MethodRouter<Arc<Guardian>> {
    post(
        move |State(g): State<Arc<Guardian>>,
              client: Option<Extension<Client>>,
              RawQuery(query): RawQuery,
              body: Result<Bytes, BytesRejection>| async move {
            agent_hook(&g, agent, client, query, body).await
        },
    )
}

async fn agent_hook(
    g: &Arc<Guardian>,
    agent: Agent,
    client: Option<Extension<Client>>,
    query: Option<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    use crate::integrations::claude_code::{HookInput, Translation, translate};
    let client = client
        .and_then(|Extension(Client(c))| c)
        .unwrap_or_else(|| agent.name().to_string());
    let body = match body {
        Ok(b) => b,
        Err(rejection) => return hook_failure(agent, "PreToolUse", &rejection.body_text()),
    };
    let mode = match unreviewed_query(query.as_deref()) {
        None => g.config().hooks.unreviewed,
        Some(m) => match Unreviewed::parse(&m) {
            Some(mode) => mode,
            None => {
                return hook_failure(
                    agent,
                    &hook_event_of(&body),
                    &format!("the hook URL's unreviewed={m:?} is not \"deny\" or \"ask\""),
                );
            }
        },
    };
    let mut input: HookInput = match serde_json::from_slice(&body) {
        Ok(i) => i,
        Err(e) => {
            // Answer in the event's shape when the event name can still be read.
            return hook_failure(
                agent,
                &hook_event_of(&body),
                &format!("the hook input is not valid: {e}"),
            );
        }
    };
    input.agent = Some(agent.name().to_string());
    // The user's prompt, before any tool call (Claude Code's `UserPromptSubmit`): its mandate
    // is compiled now and kept in the session store, where the first review finds it. Nothing
    // is decided on this event.
    if input.hook_event_name == "UserPromptSubmit" {
        if let (Some(session), Some(prompt)) =
            (input.session_id.as_deref(), input.prompt.as_deref())
        {
            g.prepare_mandate(session, prompt).await;
        }
        return Json(serde_json::json!({})).into_response();
    }
    let event = Event::of(&input.hook_event_name);
    // Translation reads the transcript file: blocking I/O, kept off the async threads (and
    // without a transcript, done here: no thread hand-off on the hot path).
    let translated = if input.transcript_path.is_none() {
        translate(&input)
    } else {
        let input = input.clone();
        tokio::task::spawn_blocking(move || translate(&input))
            .await
            .unwrap_or(Err(crate::integrations::claude_code::HookError::Failed))
    };
    let answer = match translated {
        // Every file of a multi-file patch (and an escalation's extra paths) must be allowed.
        Ok(Translation::Review(reqs)) => {
            HookAnswer::from_response(&g.review_all(reqs, &client, mode).await, mode)
        }
        Ok(Translation::Pass(_)) => HookAnswer::NoDecision,
        // A call that never becomes an action is still an answer: audited like a decision.
        Ok(Translation::Unknown(tool)) => {
            let answer = HookAnswer::unknown_tool(&tool, mode);
            let reason = format!("tool {tool:?} is not known to guardian");
            refusal(g, &input, &client, &tool, "unknown_tool", &reason, answer).await
        }
        Err(e) => {
            let tool = input.tool_name.clone().unwrap_or_default();
            let reason = e.to_string();
            let answer = HookAnswer::failure(&reason);
            refusal(g, &input, &client, &tool, "invalid_input", &reason, answer).await
        }
    };
    Json(render(agent, event, &answer)).into_response()
}

/// Audits a hook's tool call refused before any review and returns `answer` (a deny, or no
/// decision when the agent's own prompt asks); a deny when the record could not be written
/// (nothing unrecorded runs, and a question to the user is not asked either).
async fn refusal(
    g: &Guardian,
    input: &crate::integrations::claude_code::HookInput,
    client: &str,
    tool: &str,
    error: &'static str,
    reason: &str,
    answer: HookAnswer,
) -> HookAnswer {
    let message = match &answer {
        HookAnswer::Deny { message, .. } => message.as_str(),
        _ => "",
    };
    let r = crate::pipeline::Refusal {
        tool,
        input: input.tool_input.as_ref(),
        session_id: input.session_id.as_deref(),
        agent: input.agent.as_deref().unwrap_or(""),
        client,
        cwd: input.cwd.as_deref().unwrap_or(""),
        error,
        reason,
        message,
        deferred_to_user: !matches!(answer, HookAnswer::Deny { .. }),
    };
    match g.record_refusal(&r).await {
        Ok(_) => answer,
        Err(e) => {
            tracing::error!(error = %e, tool, "audit write failed; denying");
            HookAnswer::failure(&format!(
                "the decision could not be recorded in the audit log: {e}"
            ))
        }
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

async fn metrics(State(g): State<Arc<Guardian>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        g.metrics().render(),
    )
        .into_response()
}

/// Liveness and readiness: always 200 while the process serves (a fleet whose shared store is
/// down still answers, denying what it cannot check), with the session store's state:
/// `"status": "degraded"` when it does not answer.
async fn healthz(State(guardian): State<Arc<Guardian>>) -> Response {
    let (store, health) = guardian.session_store_health().await;
    let status = if health.is_ok() { "ok" } else { "degraded" };
    let mut body = json!({
        "status": status,
        "version": env!("CARGO_PKG_VERSION"),
        "session_store": {"kind": store, "ok": health.is_ok()},
    });
    if let Err(e) = health {
        body["session_store"]["error"] = e.to_string().into();
    }
    Json(body).into_response()
}

/// Serves until the process gets SIGINT or SIGTERM; SIGHUP rotates the audit log (as
/// `guardian audit rotate` does, for an operator's logrotate `postrotate`).
pub async fn serve(
    guardian: Arc<Guardian>,
    listener: tokio::net::TcpListener,
) -> std::io::Result<()> {
    #[cfg(unix)]
    if let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        let g = Arc::clone(&guardian);
        tokio::spawn(async move {
            while hup.recv().await.is_some() {
                match g.rotate_audit().await {
                    Ok(rotated) => tracing::info!(rotated, "SIGHUP: audit log rotation"),
                    Err(e) => tracing::error!(error = %e, "SIGHUP: audit log rotation failed"),
                }
            }
        });
    }
    serve_until(guardian, listener, shutdown_signal()).await
}

/// Serves until `stop` completes, then shuts down gracefully: stops accepting, refuses new
/// requests on open connections, lets in-flight reviews finish for `server.shutdown_grace_ms`,
/// denies (and records) those still running, and flushes the audit log.
pub async fn serve_until(
    guardian: Arc<Guardian>,
    listener: tokio::net::TcpListener,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let cfg = guardian.config().server.clone();
    let gate = Arc::new(Gate::new(Arc::clone(&guardian)));
    let app = router_with_gate(Arc::clone(&gate));
    let connections = Arc::new(tokio::sync::Semaphore::new(cfg.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(cfg.header_read_timeout_ms))
        .max_buf_size(cfg.max_header_bytes);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: back off, keep serving.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
                    // Over server.max_connections: close at once rather than queue.
                    drop(stream);
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let service = hyper_util::service::TowerToHyperService::new(app.clone());
                let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
                    let _ = conn.await;
                    drop(permit);
                });
            }
        }
    }
    drop(listener);
    gate.drain();
    tracing::info!(grace_ms = cfg.shutdown_grace_ms, "shutting down");
    let closing = graceful.shutdown();
    tokio::pin!(closing);
    let grace = tokio::time::sleep(Duration::from_millis(cfg.shutdown_grace_ms));
    tokio::select! {
        () = &mut closing => {}
        () = grace => {
            // Past the grace period: deny what is still running, then let those answers go out.
            guardian.abort_in_flight();
            let _ = tokio::time::timeout(Duration::from_secs(5), &mut closing).await;
        }
    }
    guardian.flush_audit().await
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

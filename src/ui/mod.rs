//! The review page (`/ui`): guardian's decisions from its audit log, as a list a person goes
//! through with the keyboard and labels right or wrong, into the labels file ([`crate::labels`]).
//!
//! This module owns the page's routes, its access check and its response headers; the page's
//! data is [`page`], the labels file is [`crate::labels`]. The page is server-rendered HTML
//! (minijinja, every value escaped) with one small script and one stylesheet embedded in the
//! binary; a strict Content-Security-Policy allows nothing else (no inline script or style, no
//! other origin). GET changes nothing; a label is a POST of JSON with the `X-Guardian-UI`
//! header, which a page of another origin cannot send without a preflight this server never
//! answers.
//!
//! **Access.** With `[[auth.tokens]]`, the page takes the API's bearer token, in the
//! `Authorization` header or in a cookie set by the login form (`HttpOnly`, `SameSite=Strict`,
//! path `/ui`); the labeller is the token's client. Without tokens the page is as open as the
//! API, and labels are given as `anonymous`. `guardian label --audit` serves the page alone with
//! a token of its own.

pub mod page;

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::http_error::error_response;
use crate::labels::{Label, Verdict};

/// The page's strict Content-Security-Policy: its own script and stylesheet, nothing inline,
/// no other origin, no framing.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/// The cookie the login form sets.
const COOKIE: &str = "guardian_ui";
/// The header a label's POST must carry.
pub const UI_HEADER: &str = "x-guardian-ui";

const PAGE_HTML: &str = include_str!("assets/page.html");
const LOGIN_HTML: &str = include_str!("assets/login.html");
const APP_JS: &str = include_str!("assets/app.js");
const APP_CSS: &str = include_str!("assets/app.css");

/// Who may use the page.
#[derive(Debug, Clone)]
pub enum Access {
    /// Anyone who reaches it, labelling as this name.
    Open(String),
    /// Holders of these tokens: (client, SHA-256 digest of the token).
    Tokens(Vec<(String, [u8; 32])>),
}

/// What the page serves.
pub struct UiState {
    /// The audit log's active file (its segments are read too).
    pub audit: PathBuf,
    /// The labels file.
    pub labels: PathBuf,
    /// The deny threshold scores are compared with, when reviews are scored.
    pub threshold: Option<f64>,
    /// Who may use it.
    pub access: Access,
    templates: minijinja::Environment<'static>,
}

impl UiState {
    /// The page over `audit`, labelling into `labels`.
    pub fn new(audit: PathBuf, labels: PathBuf, threshold: Option<f64>, access: Access) -> UiState {
        let mut templates = minijinja::Environment::new();
        // Names ending in .html are escaped by minijinja's default callback; the templates are
        // part of the binary, so an error here is a bug caught by the tests.
        for (name, text) in [("page.html", PAGE_HTML), ("login.html", LOGIN_HTML)] {
            if let Err(e) = templates.add_template(name, text) {
                tracing::error!(template = name, error = %e, "the review page's template is broken");
            }
        }
        UiState {
            audit,
            labels,
            threshold,
            access,
            templates,
        }
    }

    /// The page for a service: its audit log, `[ui] labels`, its threshold and tokens.
    pub fn of_config(cfg: &crate::Config) -> UiState {
        let threshold = (cfg.reviewer.scoring != crate::config::Scoring::Label)
            .then_some(cfg.reviewer.deny_threshold);
        let tokens = crate::auth::token_digests(cfg);
        let access = if tokens.is_empty() {
            Access::Open("anonymous".into())
        } else {
            Access::Tokens(tokens)
        };
        UiState::new(cfg.audit.path.clone(), cfg.labels_path(), threshold, access)
    }

    /// The labeller a request is from, or `None` when it may not use the page.
    fn labeller(&self, headers: &HeaderMap) -> Option<String> {
        match &self.access {
            Access::Open(name) => Some(name.clone()),
            Access::Tokens(tokens) => {
                let bearer = crate::auth::bearer(headers).map(str::to_string);
                let cookie = headers
                    .get_all(header::COOKIE)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .flat_map(|v| v.split(';'))
                    .filter_map(|c| c.trim().strip_prefix(&format!("{COOKIE}=")))
                    .find_map(|hexed| {
                        hex::decode(hexed)
                            .ok()
                            .and_then(|b| String::from_utf8(b).ok())
                    });
                bearer
                    .into_iter()
                    .chain(cookie)
                    .find_map(|t| crate::auth::client_of(tokens, &t))
            }
        }
    }

    fn render(&self, name: &str, ctx: minijinja::Value) -> Response {
        match self
            .templates
            .get_template(name)
            .and_then(|t| t.render(ctx))
        {
            Ok(html) => {
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
            }
            Err(e) => {
                tracing::error!(error = %e, "the review page did not render");
                error_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ".",
                    "the page did not render",
                )
            }
        }
    }
}

/// The page's routes, under `/ui`, with their access check and headers.
pub fn router(state: Arc<UiState>) -> Router {
    let guarded = Router::new()
        .route("/ui", get(show))
        .route("/ui/", get(show))
        .route("/ui/labels", axum::routing::post(label))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            require_access,
        ));
    Router::new()
        .route("/ui/login", get(login_form).post(login))
        .route("/ui/static/app.js", get(app_js))
        .route("/ui/static/app.css", get(app_css))
        .merge(guarded)
        .layer(axum::middleware::from_fn(security_headers))
        .layer(axum::extract::DefaultBodyLimit::max(64 * 1024))
        .with_state(state)
}

/// Headers on every response of the page: the CSP, no sniffing, no referrer, no caching, no
/// framing.
async fn security_headers(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    for (name, value) in [
        ("content-security-policy", CSP),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("cache-control", "no-store"),
        ("x-frame-options", "DENY"),
    ] {
        h.insert(name, HeaderValue::from_static(value));
    }
    resp
}

/// The labeller of an authorised request, as an extension; otherwise the login form (a page)
/// or 401 (a label).
async fn require_access(
    State(state): State<Arc<UiState>>,
    mut req: Request,
    next: Next,
) -> Response {
    match state.labeller(req.headers()) {
        Some(who) => {
            req.extensions_mut().insert(Labeller(who));
            next.run(req).await
        }
        None if req.method() == axum::http::Method::GET => {
            (StatusCode::SEE_OTHER, [(header::LOCATION, "/ui/login")]).into_response()
        }
        None => error_response(
            StatusCode::UNAUTHORIZED,
            "authorization",
            "a valid bearer token (or the login cookie) is required",
        ),
    }
}

#[derive(Clone)]
struct Labeller(String);

async fn show(
    State(state): State<Arc<UiState>>,
    axum::Extension(Labeller(who)): axum::Extension<Labeller>,
    uri: axum::http::Uri,
) -> Response {
    let query = match axum::extract::Query::<page::Query>::try_from_uri(&uri) {
        Ok(q) => q.0,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, "query", &e.body_text()),
    };
    let st = Arc::clone(&state);
    let built = tokio::task::spawn_blocking(move || {
        page::build(&st.audit, &st.labels, st.threshold, &query)
    })
    .await;
    match built {
        Ok(Ok(mut p)) => {
            p.labeller = who;
            state.render("page.html", minijinja::Value::from_serialize(&p))
        }
        Ok(Err(e)) => error_response(StatusCode::BAD_REQUEST, e.field, &e.message),
        Err(_) => error_response(StatusCode::INTERNAL_SERVER_ERROR, ".", "the page failed"),
    }
}

/// A label's POST body.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LabelBody {
    record: String,
    verdict: Verdict,
    #[serde(default)]
    note: String,
}

async fn label(
    State(state): State<Arc<UiState>>,
    axum::Extension(Labeller(who)): axum::Extension<Labeller>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if headers.get(UI_HEADER).is_none() {
        return error_response(
            StatusCode::FORBIDDEN,
            UI_HEADER,
            "a label is posted by the page (the X-Guardian-UI header is missing)",
        );
    }
    if !headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
    {
        return error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "content-type",
            "must be application/json",
        );
    }
    let mut de = serde_json::Deserializer::from_slice(&body);
    let parsed: LabelBody = match serde_path_to_error::deserialize(&mut de) {
        Ok(b) => b,
        Err(e) => {
            let field = e.path().to_string();
            return error_response(StatusCode::BAD_REQUEST, &field, &e.inner().to_string());
        }
    };
    let st = Arc::clone(&state);
    let written = tokio::task::spawn_blocking(move || {
        let seq = seq_of(&st.audit, &parsed.record)?;
        let l = Label::new(&parsed.record, seq, parsed.verdict, &who, &parsed.note);
        crate::labels::append(&st.labels, &l)
            .map(|()| l)
            .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, "labels", e.to_string()))
    })
    .await;
    match written {
        Ok(Ok(l)) => (StatusCode::CREATED, axum::Json(l)).into_response(),
        Ok(Err((status, field, message))) => error_response(status, field, &message),
        Err(_) => error_response(StatusCode::INTERNAL_SERVER_ERROR, ".", "the label failed"),
    }
}

/// The `seq` of the record with this hash, or why it cannot be labelled.
fn seq_of(
    audit: &std::path::Path,
    record: &str,
) -> Result<u64, (StatusCode, &'static str, String)> {
    let files = crate::audit_report::files_of_log(audit)
        .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, "audit", e.to_string()))?;
    let mut found = None;
    crate::audit_report::read_records(&files, &crate::audit_report::Filter::default(), |_, r| {
        if found.is_none() && crate::audit_report::record_id(&r) == Some(record) {
            found = r.get("seq").and_then(serde_json::Value::as_u64);
        }
    });
    found.ok_or((
        StatusCode::NOT_FOUND,
        "record",
        format!("no audit record has the hash {record:?}"),
    ))
}

async fn login_form(State(state): State<Arc<UiState>>) -> Response {
    state.render("login.html", minijinja::context! { failed => false })
}

#[derive(serde::Deserialize)]
struct LoginForm {
    token: String,
}

/// Checks the token and sets the cookie; the token itself never reaches a URL or a log.
async fn login(
    State(state): State<Arc<UiState>>,
    form: Result<axum::Form<LoginForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Ok(axum::Form(form)) = form else {
        return error_response(
            StatusCode::BAD_REQUEST,
            "token",
            "a form with a token is required",
        );
    };
    let ok = match &state.access {
        Access::Open(_) => true,
        Access::Tokens(t) => crate::auth::client_of(t, form.token.trim()).is_some(),
    };
    if !ok {
        let mut resp = state.render("login.html", minijinja::context! { failed => true });
        *resp.status_mut() = StatusCode::UNAUTHORIZED;
        return resp;
    }
    let cookie = format!(
        "{COOKIE}={}; Path=/ui; HttpOnly; SameSite=Strict",
        hex::encode(form.token.trim())
    );
    let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, "/ui")]).into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    resp
}

async fn app_js() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        APP_JS,
    )
        .into_response()
}

async fn app_css() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], APP_CSS).into_response()
}

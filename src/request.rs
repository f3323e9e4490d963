//! The API v1 request: what an agent asks guardian to judge.
//!
//! This module owns the wire types of `POST /v1/review` (and of `POST /v1/refusals`, a tool call
//! an integration refused before any review) and their decoding. Decoding is strict:
//! an unknown field anywhere is an error that names the field's path (`action.comand`), so a typo
//! in an integration fails loudly instead of silently dropping a constraint.

use serde::{Deserialize, Serialize};

/// One request to review a proposed tool call.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewRequest {
    /// The tool call the agent proposes. The only required field.
    pub action: Action,
    /// Who is asking; a missing `session.id` gets a fresh one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionInfo>,
    /// The user's request the agent is working on (evidence for the reviewer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// Earlier turns of the conversation (untrusted evidence for the reviewer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<TranscriptEntry>,
    /// Set when the agent retries an action after a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
    /// Strict mode: no session memory, and rule-allowed actions still go to review.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
    /// Set when the agent asks for more than its sandbox gives: to run the action outside the
    /// sandbox, or with extra paths or network access (Codex's `approval_context`, Claude Code's
    /// `dangerouslyDisableSandbox`, OpenCode's `external_directory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Escalation>,
}

/// What an escalation asks for.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EscalationKind {
    /// Run the action outside the sandbox (Codex `require_escalated`, Claude Code
    /// `dangerouslyDisableSandbox`). Never allowed by a rule: deny rules first, then a fresh
    /// review that knows the action would run unsandboxed, with no session memory.
    Unsandboxed,
    /// Stay in the sandbox, but with the listed extra read and write paths and, when `network`
    /// is true, network access (Codex `with_additional_permissions`, OpenCode
    /// `external_directory`). Each path is reviewed as a read or a write, and every one must be
    /// allowed; a network request is never allowed by a rule.
    AdditionalPermissions,
}

impl EscalationKind {
    /// The kind as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            EscalationKind::Unsandboxed => "unsandboxed",
            EscalationKind::AdditionalPermissions => "additional_permissions",
        }
    }
}

/// An escalation request: what the agent asks for beyond its sandbox, and its own reason.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Escalation {
    /// What is asked for.
    pub kind: EscalationKind,
    /// Extra paths the action wants to read (absolute, or relative to the action's cwd).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Extra paths the action wants to write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// True when the action asks for network access it does not have.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub network: bool,
    /// The agent's own reason for asking (untrusted evidence for the reviewer, fenced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
}

/// The proposed tool call, tagged by `kind`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Action {
    /// A shell command line, run by a POSIX shell in `cwd`.
    Shell {
        /// The command line as the agent would pass it to `bash -c`.
        command: String,
        /// Working directory; defaults to the first workspace root, else the server's cwd.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// Reading a file, or with `recursive`, everything under a directory.
    Read {
        /// The file read, absolute or relative to `cwd`.
        path: String,
        /// Working directory for a relative `path`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// True for a search of a directory tree (Claude Code's Grep and Glob, OpenCode's grep
        /// and glob): everything under `path` is read.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        recursive: bool,
    },
    /// Creating, editing or patching a file.
    Write {
        /// The file written, absolute or relative to `cwd`.
        path: String,
        /// Working directory for a relative `path`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// The full new content, when the agent writes the whole file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// A diff or patch, when the agent edits part of the file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
    },
    /// An HTTP request to a URL (a plain fetch is a GET with no body).
    Fetch {
        /// The URL requested.
        url: String,
        /// The HTTP method (`GET` when absent), any method: `POST`, `PUT`, `PATCH` and `DELETE`
        /// send or change something; a GET of a deploy hook or a purge endpoint is an effect too.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        method: Option<String>,
        /// The request's headers, name to value. The values of credential headers
        /// (`Authorization`, `Cookie`, API-key and token headers) are redacted as the request
        /// arrives: nothing after (signals, the reviewer, the audit log) sees them; the reviewer
        /// sees header names only.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        headers: std::collections::BTreeMap<String, String>,
        /// The request body: the data sent (token-budgeted and redacted for the reviewer).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
    },
    /// Calling a tool of an MCP server.
    Mcp {
        /// The MCP server's name as configured in the agent.
        server: String,
        /// The tool's name on that server.
        tool: String,
        /// The call's arguments, as the agent would send them.
        #[serde(default)]
        arguments: serde_json::Value,
    },
}

impl Action {
    /// The action's kind as it appears on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Shell { .. } => "shell",
            Action::Read { .. } => "read",
            Action::Write { .. } => "write",
            Action::Fetch { .. } => "fetch",
            Action::Mcp { .. } => "mcp",
        }
    }

    /// A plain fetch of `url`: a GET without headers or body.
    pub fn fetch(url: impl Into<String>) -> Action {
        Action::Fetch {
            url: url.into(),
            method: None,
            headers: Default::default(),
            body: None,
        }
    }

    /// A fetch's method, upper-cased (`GET` when none was given); `None` for other actions.
    pub fn http_method(&self) -> Option<String> {
        match self {
            Action::Fetch { method, .. } => Some(
                method
                    .as_deref()
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .unwrap_or("GET")
                    .to_ascii_uppercase(),
            ),
            _ => None,
        }
    }

    /// Replaces the values of a fetch's credential headers with `[REDACTED:header]` (see
    /// [`is_credential_header`]); other actions are unchanged.
    pub fn redact_credential_headers(&mut self) {
        if let Action::Fetch { headers, .. } = self {
            for (name, value) in headers.iter_mut() {
                if is_credential_header(name) && !value.is_empty() && !names_a_variable(value) {
                    *value = "[REDACTED:header]".to_string();
                }
            }
        }
    }

    /// The action's own `cwd`, when it has one.
    pub fn cwd(&self) -> Option<&str> {
        match self {
            Action::Shell { cwd, .. } | Action::Read { cwd, .. } | Action::Write { cwd, .. } => {
                cwd.as_deref()
            }
            Action::Fetch { .. } | Action::Mcp { .. } => None,
        }
    }
}

/// Who is asking.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionInfo {
    /// The agent's session id; decisions are remembered and rate-limited per session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The agent's name, e.g. `claude-code`, `codex`, `opencode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Directories the agent works in; paths outside them are "outside the workspace".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workspace_roots: Vec<String>,
    /// The sandbox the agent runs commands in, e.g. `workspace-write`, `read-only`, `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// The agent's home directory (absolute): what `~` means in its commands and in `~/…` rules.
    /// Without it, `~` is guardian's own `$HOME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// What the operator lets this session do, whatever the user's words say: grants in the
    /// grammar `ACT [TARGET ...]` (`publish npm:@acme/ui-kit`, `merge #88`), and `no ACT
    /// [TARGET ...]` prohibitions. They widen nothing a deny rule or a critical signal forbids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grants: Vec<String>,
}

/// Who spoke a transcript entry.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The agent.
    Assistant,
    /// A tool's output.
    Tool,
}

/// One turn of the conversation before the action.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptEntry {
    /// Who spoke.
    pub role: Role,
    /// What was said or printed.
    pub content: String,
    /// For tool entries: the tool's name. On an assistant entry it marks a tool call (what the
    /// agent asked a tool to do), which `reviewer.evidence = "blind"` keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A retry of an action that failed before.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Retry {
    /// True when the failure was the sandbox refusing the action.
    #[serde(default)]
    pub sandbox_denied: bool,
    /// What the failed attempt printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The review that allowed the failed attempt, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_review_id: Option<String>,
}

/// `POST /v1/refusals`: a tool call an integration refused before any review (a tool guardian
/// does not model, input it cannot read), reported by an integration that decides through a
/// running server (`guardian mcp --server`, the OpenCode bridge of `guardian run`), so that the
/// server's audit log holds every answer given in its name.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefusalReport {
    /// The tool's (or OpenCode permission's) name as the agent gave it; empty when unreadable.
    pub tool: String,
    /// The tool's input as the agent gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<serde_json::Value>,
    /// The agent's session id, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The integration that refused (`mcp`, `opencode`).
    pub agent: String,
    /// The call's working directory, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Why no action could be reviewed.
    pub error: RefusalKind,
    /// Why, in words: the record's rationale.
    pub reason: String,
    /// What the agent was told.
    pub message: String,
    /// True when the agent's own permission prompt decides instead (`unreviewed = "ask"`).
    #[serde(default)]
    pub deferred_to_user: bool,
}

/// Why a tool call never became an action to review.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefusalKind {
    /// A tool (or permission kind) guardian does not model.
    UnknownTool,
    /// A call whose input guardian could not read.
    InvalidInput,
    /// The agent repeating the same call (OpenCode's `doom_loop`).
    RepeatedCall,
}

impl RefusalKind {
    /// The audit record's `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalKind::UnknownTool => "unknown_tool",
            RefusalKind::InvalidInput => "invalid_input",
            RefusalKind::RepeatedCall => "repeated_call",
        }
    }
}

impl RefusalReport {
    /// Decodes a report strictly (an unknown or missing field is named); `agent` must not be
    /// empty.
    pub fn from_json(body: &[u8]) -> Result<Self, RequestError> {
        let r: RefusalReport = decode(body)?;
        if r.agent.trim().is_empty() {
            return Err(RequestError::new("agent", "must not be empty"));
        }
        Ok(r)
    }
}

/// A request that could not be decoded or is not acceptable.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("{message}")]
pub struct RequestError {
    /// The path of the offending field, e.g. `action.command`; `.` for the body itself.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl RequestError {
    /// An error naming `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        RequestError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl ReviewRequest {
    /// A request for a shell action and nothing else (the CLI's `-- <command…>` form).
    pub fn shell(command: String, cwd: Option<String>) -> ReviewRequest {
        ReviewRequest {
            action: Action::Shell { command, cwd },
            session: None,
            intent: None,
            transcript: Vec::new(),
            retry: None,
            strict: false,
            escalation: None,
        }
    }

    /// The user's request in their own words: the intent, else the last user message of the
    /// transcript.
    pub fn users_request(&self) -> Option<String> {
        self.intent.clone().or_else(|| {
            self.transcript
                .iter()
                .rev()
                .find(|e| e.role == Role::User)
                .map(|e| e.content.clone())
        })
    }

    /// The action as JSON without its `cwd` (the short texts the model reads carry no
    /// working directory).
    pub fn action_without_cwd(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(&self.action).unwrap_or_default();
        if let Some(obj) = value.as_object_mut() {
            obj.remove("cwd");
        }
        value
    }

    /// True when the action must not be allowed by a rule and must get a fresh review with no
    /// session memory: a sandbox-denied retry, a request to run outside the sandbox, or a shell
    /// command asking for network access its sandbox does not give.
    pub fn escalates(&self) -> bool {
        self.retry.as_ref().is_some_and(|r| r.sandbox_denied)
            || self.escalation.as_ref().is_some_and(|e| {
                e.kind == EscalationKind::Unsandboxed
                    || (e.network && matches!(self.action, Action::Shell { .. }))
            })
    }

    /// The requests this one stands for, all of which must be allowed: itself, and for an
    /// escalation that names extra paths, a read or write of each path (as the same session,
    /// carrying the escalation's kind and justification but no paths of their own).
    pub fn expand(self) -> Vec<ReviewRequest> {
        let Some(esc) = self.escalation.as_ref() else {
            return vec![self];
        };
        if esc.read.is_empty() && esc.write.is_empty() {
            return vec![self];
        }
        let cwd = self.action.cwd().map(str::to_string);
        let derived = Escalation {
            kind: esc.kind,
            read: Vec::new(),
            write: Vec::new(),
            network: false,
            justification: esc.justification.clone(),
        };
        let extra: Vec<Action> = esc
            .read
            .iter()
            .map(|path| Action::Read {
                path: path.clone(),
                cwd: cwd.clone(),
                recursive: false,
            })
            .chain(esc.write.iter().map(|path| Action::Write {
                path: path.clone(),
                cwd: cwd.clone(),
                content: None,
                diff: None,
            }))
            .collect();
        let mut out = Vec::with_capacity(extra.len() + 1);
        for action in extra {
            out.push(ReviewRequest {
                action,
                escalation: Some(derived.clone()),
                ..self.clone()
            });
        }
        out.insert(0, self);
        out
    }

    /// Decodes a request body, naming the offending field on error, then validates it.
    pub fn from_json(body: &[u8]) -> Result<Self, RequestError> {
        let req: ReviewRequest = decode(body)?;
        req.validate()?;
        Ok(req)
    }

    /// Checks what the types alone cannot: non-empty commands, parseable URLs.
    pub fn validate(&self) -> Result<(), RequestError> {
        if let Some(home) = self.session.as_ref().and_then(|s| s.home.as_deref())
            && !std::path::Path::new(home).is_absolute()
        {
            return Err(RequestError::new(
                "session.home",
                "session.home must be an absolute path",
            ));
        }
        match &self.action {
            Action::Shell { command, .. } if command.trim().is_empty() => Err(RequestError::new(
                "action.command",
                "action.command must not be empty",
            )),
            Action::Read { path, .. } | Action::Write { path, .. } if path.is_empty() => Err(
                RequestError::new("action.path", "action.path must not be empty"),
            ),
            Action::Fetch {
                url,
                method,
                headers,
                ..
            } => match url::Url::parse(url) {
                Ok(_) if method.as_deref().is_some_and(|m| !is_token(m.trim())) => {
                    Err(RequestError::new(
                        "action.method",
                        "action.method must be an HTTP method (letters, e.g. GET or POST)",
                    ))
                }
                Ok(_) if headers.keys().any(|k| !is_token(k)) => Err(RequestError::new(
                    "action.headers",
                    "action.headers: every name must be an HTTP header name (e.g. Content-Type)",
                )),
                Ok(u) if u.host_str().is_some() => Ok(()),
                Ok(_) => Err(RequestError::new(
                    "action.url",
                    "action.url must be an absolute URL with a host",
                )),
                Err(e) => Err(RequestError::new(
                    "action.url",
                    format!("action.url is not a valid URL: {e}"),
                )),
            },
            Action::Mcp { server, tool, .. } if server.is_empty() || tool.is_empty() => {
                let field = if server.is_empty() {
                    "action.server"
                } else {
                    "action.tool"
                };
                Err(RequestError::new(
                    field,
                    format!("{field} must not be empty"),
                ))
            }
            _ => Ok(()),
        }?;
        if let Some(esc) = &self.escalation {
            for (field, paths) in [("read", &esc.read), ("write", &esc.write)] {
                if let Some(i) = paths.iter().position(|p| p.trim().is_empty()) {
                    return Err(RequestError::new(
                        format!("escalation.{field}[{i}]"),
                        "an escalation path must not be empty",
                    ));
                }
            }
            if esc.read.len() + esc.write.len() > MAX_ESCALATION_PATHS {
                return Err(RequestError::new(
                    "escalation",
                    format!("an escalation may name at most {MAX_ESCALATION_PATHS} paths"),
                ));
            }
        }
        Ok(())
    }
}

/// Paths one escalation may name, at most (each is reviewed on its own).
pub const MAX_ESCALATION_PATHS: usize = 64;

/// Decodes a body strictly, naming the offending field's path in the error. The common case
/// decodes directly; only a failure is decoded again, tracking the path, to name the field.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, RequestError> {
    if let Ok(v) = serde_json::from_slice::<T>(body) {
        return Ok(v);
    }
    let de = &mut serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = inner.to_string();
        // For an unknown field serde reports the parent's path; name the field itself.
        let field = match unknown_field_name(&message) {
            Some(name) if path == "." => name.to_string(),
            Some(name) if path == name || path.ends_with(&format!(".{name}")) => path,
            Some(name) => format!("{path}.{name}"),
            None if message.contains("missing field") => missing_field(&path, &message),
            None => path,
        };
        RequestError::new(field, message)
    })
}

fn unknown_field_name(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split('`').next()
}

fn missing_field(path: &str, message: &str) -> String {
    let name = message
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next());
    match name {
        Some(n) if path == "." => n.to_string(),
        Some(n) => format!("{path}.{n}"),
        None => path.to_string(),
    }
}

/// Whether an HTTP method only reads (`GET`, `HEAD`, `OPTIONS`; upper-cased): any other sends or
/// changes something.
pub fn is_read_method(method: &str) -> bool {
    matches!(method, "GET" | "HEAD" | "OPTIONS")
}

/// Whether `s` is an HTTP token (RFC 9110: a method or a header name), at most 64 bytes.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// Whether a header's value only names a variable the credential is taken from (`Bearer
/// ${CF_API_TOKEN}`, `$FASTLY_KEY`): the value itself is not in the request, so it is kept as it
/// came where a credential's value is redacted (a variable's name is no secret).
pub fn names_a_variable(value: &str) -> bool {
    let v = value.trim();
    // Any one-word scheme before it (`Bearer`, `token`, `OAuth`, Opsgenie's `GenieKey`,
    // Okta's `SSWS`).
    let v = match v.split_once(' ') {
        Some((scheme, rest))
            if !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            rest
        }
        _ => v,
    }
    .trim();
    let name = v
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| v.strip_prefix('$'));
    name.is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// Whether a header carries a credential: `Authorization`, `Proxy-Authorization`, `Cookie`,
/// and any name holding `token`, `secret`, `api-key`/`apikey`, `password` or `signature`
/// (`X-Api-Key`, `X-Auth-Token`, `PRIVATE-TOKEN`, `X-Hub-Signature`).
pub fn is_credential_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('_', "-");
    matches!(
        n.as_str(),
        "authorization" | "proxy-authorization" | "cookie"
    ) || [
        "token",
        "secret",
        "api-key",
        "apikey",
        "password",
        "signature",
        "session",
    ]
    .iter()
    .any(|w| n.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_naming_a_variable_after_any_scheme_names_no_secret() {
        for v in [
            "${LD_API_TOKEN}",
            "Bearer ${CF_TOKEN}",
            "GenieKey ${OPSGENIE_API_KEY}",
            "SSWS $OKTA_TOKEN",
        ] {
            assert!(names_a_variable(v), "{v}");
        }
        for v in [
            "GenieKey 9f2c-11aa",
            "Bearer abc.def",
            "Two Words ${X}",
            "${X} tail",
        ] {
            assert!(!names_a_variable(v), "{v}");
        }
    }

    #[test]
    fn unknown_nested_field_is_named() {
        let err =
            ReviewRequest::from_json(br#"{"action":{"kind":"shell","command":"ls","cwdd":"/"}}"#)
                .unwrap_err();
        assert_eq!(err.field, "action.cwdd");
        let err = ReviewRequest::from_json(
            br#"{"action":{"kind":"fetch","url":"https://a.b"},"sesion":{}}"#,
        )
        .unwrap_err();
        assert_eq!(err.field, "sesion");
        let err = ReviewRequest::from_json(
            br#"{"action":{"kind":"fetch","url":"https://a.b"},"session":{"idd":"x"}}"#,
        )
        .unwrap_err();
        assert_eq!(err.field, "session.idd");
    }

    #[test]
    fn a_fetch_is_an_http_request_and_a_bare_url_still_works() {
        let bare =
            ReviewRequest::from_json(br#"{"action":{"kind":"fetch","url":"https://a.b/x"}}"#)
                .expect("url alone");
        assert_eq!(bare.action, Action::fetch("https://a.b/x"));
        assert_eq!(bare.action.http_method().as_deref(), Some("GET"));
        for method in [
            "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND",
        ] {
            let body = format!(
                r#"{{"action":{{"kind":"fetch","url":"https://a.b","method":"{}","headers":{{"Content-Type":"text/plain"}},"body":"x"}}}}"#,
                method.to_ascii_lowercase()
            );
            let r = ReviewRequest::from_json(body.as_bytes()).expect("every method is accepted");
            assert_eq!(r.action.http_method().as_deref(), Some(method));
        }
        let err = ReviewRequest::from_json(
            br#"{"action":{"kind":"fetch","url":"https://a.b","method":"GET /x"}}"#,
        )
        .unwrap_err();
        assert_eq!(err.field, "action.method");
        let err = ReviewRequest::from_json(
            br#"{"action":{"kind":"fetch","url":"https://a.b","headers":{"Bad Name":"v"}}}"#,
        )
        .unwrap_err();
        assert_eq!(err.field, "action.headers");
    }

    #[test]
    fn credential_header_values_are_redacted_and_others_kept() {
        let mut a = ReviewRequest::from_json(
            br#"{"action":{"kind":"fetch","url":"https://a.b","headers":{"Authorization":"Bearer s3cr3t","X-Api-Key":"k","private_token":"t","Cookie":"c=1","Accept":"application/json"}}}"#,
        )
        .expect("valid")
        .action;
        a.redact_credential_headers();
        let Action::Fetch { headers, .. } = &a else {
            panic!("a fetch")
        };
        for name in ["Authorization", "X-Api-Key", "private_token", "Cookie"] {
            assert_eq!(headers[name], "[REDACTED:header]", "{name}");
        }
        assert_eq!(headers["Accept"], "application/json");
        assert!(!serde_json::to_string(&a).expect("json").contains("s3cr3t"));
        // A value that only names a variable holds no secret: kept, so that what the call uses
        // stays visible (`Bearer ${CF_API_TOKEN}`); a literal after a variable is redacted.
        let mut b = ReviewRequest::from_json(
            br#"{"action":{"kind":"fetch","url":"https://a.b","headers":{"Authorization":"Bearer ${CF_API_TOKEN}","X-Api-Key":"$KEY","X-Token":"$KEY-extra"}}}"#,
        )
        .expect("valid")
        .action;
        b.redact_credential_headers();
        let Action::Fetch { headers, .. } = &b else {
            panic!("a fetch")
        };
        assert_eq!(headers["Authorization"], "Bearer ${CF_API_TOKEN}");
        assert_eq!(headers["X-Api-Key"], "$KEY");
        assert_eq!(headers["X-Token"], "[REDACTED:header]");
    }

    #[test]
    fn missing_and_invalid_fields_are_named() {
        let err = ReviewRequest::from_json(br#"{"intent":"x"}"#).unwrap_err();
        assert_eq!(err.field, "action");
        let err = ReviewRequest::from_json(br#"{"action":{"kind":"shell"}}"#).unwrap_err();
        assert_eq!(err.field, "action.command");
        let err = ReviewRequest::from_json(br#"{"action":{"kind":"fetch","url":"not a url"}}"#)
            .unwrap_err();
        assert_eq!(err.field, "action.url");
        let err =
            ReviewRequest::from_json(br#"{"action":{"kind":"shell","command":"  "}}"#).unwrap_err();
        assert_eq!(err.field, "action.command");
        let err = ReviewRequest::from_json(
            br#"{"action":{"kind":"shell","command":"ls"},"transcript":[{"role":"robot","content":"x"}]}"#,
        )
        .unwrap_err();
        assert!(err.field.starts_with("transcript[0].role"), "{}", err.field);
    }

    #[test]
    fn full_example_decodes() {
        let body = br#"{
          "action": {"kind": "shell", "command": "git push origin main", "cwd": "/work/repo"},
          "session": {"id": "s-42", "agent": "claude-code", "workspace_roots": ["/work/repo"], "sandbox": "workspace-write"},
          "intent": "Fix the failing test in src/lib.rs",
          "transcript": [{"role": "user", "content": "..."}, {"role": "tool", "name": "Bash", "content": "..."}],
          "retry": {"sandbox_denied": true, "output": "touch: /etc/x: Read-only file system", "previous_review_id": "rev_1"},
          "strict": false
        }"#;
        let req = ReviewRequest::from_json(body).expect("decodes");
        assert_eq!(req.action.kind(), "shell");
        assert_eq!(req.transcript.len(), 2);
        assert!(req.retry.as_ref().is_some_and(|r| r.sandbox_denied));
    }
}

//! Configuration: `guardian.toml` and the embedded default policy.
//!
//! This module owns reading and validating the config file. The keys of `[server]`, `[policy]`,
//! `[reviewer]` and `[audit]` are public: new keys may be added, none renamed or removed. Unknown
//! keys are errors, so a misspelt key never silently weakens a policy. Every policy rule keeps the
//! file and line it came from, for `GET /v1/policy`, responses and audit records.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::verdict::Effect;

pub use crate::reviewer::config::{BackendKind, Evidence, Explain, ReviewerConfig, Scoring};
pub use crate::session::{BreakerConfig, SessionConfig, StoreKind};

/// The shipped default policy, used when no `--config` is given.
pub const DEFAULT_POLICY: &str = include_str!("../policies/default.toml");
/// How the embedded default policy is named in rule sources.
pub const DEFAULT_POLICY_NAME: &str = "policies/default.toml";

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[server]`: where and how the HTTP service listens.
    pub server: ServerConfig,
    /// `[policy]`: the rules.
    pub policy: PolicyConfig,
    /// `[reviewer]`: the second model.
    pub reviewer: ReviewerConfig,
    /// `[audit]`: where decisions are recorded.
    pub audit: AuditConfig,
    /// `[breaker]`: when to tell an agent to stop and report to its user.
    pub breaker: BreakerConfig,
    /// `[session]`: where session state (remembered approvals, breaker counts) is kept.
    pub session: SessionConfig,
    /// `[limits]`: request and reviewer quotas.
    pub limits: LimitsConfig,
    /// `[auth]`: who may ask.
    pub auth: AuthConfig,
    /// `[hooks]`: how the agent integrations answer what nothing could review.
    pub hooks: HooksConfig,
    /// `[signals]`: risk-signal severities and the hosts reading from which is no signal.
    pub signals: crate::signals::SignalsConfig,
    /// `[mandate]`: how the user's request is compiled into grants and prohibitions, and the
    /// operator's own grants.
    pub mandate: crate::mandate::compile::MandateConfig,
    /// `[ui]`: the review page over the audit log (`/ui`).
    pub ui: UiConfig,
    /// The name rule sources are given under (the config's path as the user gave it).
    #[serde(skip)]
    pub source_name: String,
    /// The config text, kept to turn rule spans into line numbers.
    #[serde(skip)]
    text: String,
    /// The config `[policy] extends` names, loaded: its rules, imports and protections come
    /// before this config's own.
    #[serde(skip)]
    base: Option<Box<Config>>,
}

/// `[server]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to listen on; loopback by default.
    pub listen: String,
    /// Largest accepted request body in bytes (413 beyond it).
    pub max_body_bytes: usize,
    /// Largest request head (request line and headers) in bytes (431 beyond it; at least 8192).
    pub max_header_bytes: usize,
    /// Requests handled at once; beyond it the answer is 503 with Retry-After (load shedding).
    pub max_concurrent_requests: usize,
    /// Open connections at most; beyond it new connections are closed at once.
    pub max_connections: usize,
    /// A client must send a request's whole head within this many ms (slowloris protection).
    pub header_read_timeout_ms: u64,
    /// A client must send the whole body within this many ms after its head.
    pub body_read_timeout_ms: u64,
    /// Backstop for a whole request; 0: the reviewer's `timeout_ms` plus 10 s.
    pub request_timeout_ms: u64,
    /// On SIGTERM, how long in-flight reviews may still finish before the rest are denied.
    pub shutdown_grace_ms: u64,
    /// Diff a whole-file write against the file at its path on this machine, when the path is
    /// inside the workspace roots the request names (true by default). Set it false when the
    /// server does not share the agents' file system: the same path here is another file. The
    /// command hook (`guardian hook`, `guardian-hook`) sends the diff it computed beside the
    /// agent either way.
    pub read_workspace_files: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: "127.0.0.1:8700".to_string(),
            max_body_bytes: 1024 * 1024,
            max_header_bytes: 16 * 1024,
            max_concurrent_requests: 1024,
            max_connections: 16 * 1024,
            header_read_timeout_ms: 10_000,
            body_read_timeout_ms: 10_000,
            request_timeout_ms: 0,
            shutdown_grace_ms: 30_000,
            read_workspace_files: true,
        }
    }
}

/// `[ui]`: the review page `guardian serve` answers at `/ui`, behind the same tokens as the API.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UiConfig {
    /// Serve the page (default true; false: `/ui` is 404).
    pub enabled: bool,
    /// The labels file (append-only JSON lines; relative to the config file). Default: beside
    /// the audit log, `<audit stem>-labels.jsonl`.
    pub labels: Option<PathBuf>,
}

impl Default for UiConfig {
    fn default() -> Self {
        UiConfig {
            enabled: true,
            labels: None,
        }
    }
}

impl Config {
    /// The labels file: `[ui] labels`, else beside the audit log.
    pub fn labels_path(&self) -> PathBuf {
        self.ui
            .labels
            .clone()
            .unwrap_or_else(|| default_labels_path(&self.audit.path))
    }
}

/// The labels file beside an audit log: `<dir>/<stem>-labels.jsonl` (a name the log's segment
/// patterns never match).
pub fn default_labels_path(audit: &Path) -> PathBuf {
    let stem = crate::audit::segment::stem(audit);
    crate::audit::segment::dir_of(audit).join(format!("{stem}-labels.jsonl"))
}

/// `[hooks]`: the agent integrations (Claude Code and Codex hooks, the OpenCode bridge).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// What an integration answers when an action needed a reviewer and none could answer, and
    /// for a tool guardian does not know: `deny` (the default, for CI and headless runs) or
    /// `ask` (hand the question to the agent's own prompt, for a user at a terminal).
    pub unreviewed: Unreviewed,
}

/// `[hooks] unreviewed`: what cannot be decided becomes a deny or a question to the user.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Unreviewed {
    /// Deny it (headless: nobody can answer a prompt).
    #[default]
    Deny,
    /// Defer to the agent's own permission prompt (interactive). A rule deny or a reviewer deny
    /// is never turned into a question.
    Ask,
}

impl Unreviewed {
    /// The mode as written in config and URLs.
    pub fn as_str(self) -> &'static str {
        match self {
            Unreviewed::Deny => "deny",
            Unreviewed::Ask => "ask",
        }
    }

    /// Parses `deny` or `ask` (a hook URL's `?unreviewed=` query).
    pub fn parse(s: &str) -> Option<Unreviewed> {
        match s {
            "deny" => Some(Unreviewed::Deny),
            "ask" => Some(Unreviewed::Ask),
            _ => None,
        }
    }
}

/// `[auth]`: bearer tokens, stored as SHA-256 hashes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    /// `[[auth.tokens]]`: with any, every request but `/healthz` needs a valid token.
    pub tokens: Vec<TokenConfig>,
}

/// One `[[auth.tokens]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// The client's name: in audit records, logs, metrics and rate limits.
    pub client: String,
    /// Hex SHA-256 of the token (`printf %s "$TOKEN" | sha256sum`).
    pub sha256: String,
}

/// `[policy]`: rule lists in Claude Code's syntax, and the built-in behaviours' settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// Layer this policy on another: `"default"` (the embedded default policy) or a config file
    /// (relative to this one). Its rules, imports and protections come first; this file adds to
    /// them. Only `[policy]` is inherited; `default`, `outside_workspace` and `remote_code` are
    /// this file's.
    pub extends: Option<String>,
    /// Rules that deny; nothing overrides them.
    pub deny: Vec<Spanned<String>>,
    /// Rules that send the action to the reviewer.
    pub ask: Vec<Spanned<String>>,
    /// Rules that allow without review.
    pub allow: Vec<Spanned<String>>,
    /// Rules with examples: `[[policy.rule]] rule = "…" effect = "deny" match = […] not_match = […]`.
    pub rule: Vec<Spanned<RuleTable>>,
    /// Policy files of other agents to import (Claude Code settings.json, opencode.json, Codex .rules).
    pub import: Vec<Spanned<String>>,
    /// What nothing matched means: `ask` (the reviewer decides) or `deny`.
    pub default: Effect,
    /// Files read by shell commands, or written, outside every workspace root: `ask`, `deny` or
    /// `allow` (an explicit Read/Edit allow rule for the path always counts).
    pub outside_workspace: Effect,
    /// Downloads fed to an interpreter (`curl … | sh`): `deny` or `ask`.
    pub remote_code: Effect,
    /// Extra paths no rule may allow reading (added to the built-in list).
    pub protect_read: Vec<String>,
    /// Extra paths no rule may allow writing (added to the built-in list).
    pub protect_write: Vec<String>,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            extends: None,
            deny: Vec::new(),
            ask: Vec::new(),
            allow: Vec::new(),
            rule: Vec::new(),
            import: Vec::new(),
            default: Effect::Ask,
            outside_workspace: Effect::Ask,
            remote_code: Effect::Deny,
            protect_read: Vec::new(),
            protect_write: Vec::new(),
        }
    }
}

/// `[[policy.rule]]`: one rule with its effect and examples checked at load time.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleTable {
    /// The rule, e.g. `Bash(git push *)`.
    pub rule: String,
    /// deny, ask or allow.
    pub effect: Effect,
    /// Commands (or paths, hosts, tool names) the rule must match.
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    /// Ones it must not match.
    #[serde(default)]
    pub not_match: Vec<String>,
    /// Why the rule exists (shown in explanations).
    #[serde(default)]
    pub justification: Option<String>,
}

/// `[limits]`: quotas; beyond them the answer is a fast deny by `fallback` ("rate limited").
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// Review requests per minute per client (0: unlimited).
    pub requests_per_minute_per_client: u32,
    /// Reviewer calls per minute, all clients together (0: unlimited).
    pub reviewer_calls_per_minute: u32,
    /// Reviewer calls in flight at once; more wait, within the review deadline.
    pub reviewer_concurrency: usize,
    /// Where the per-minute quotas are counted: `fleet` (in the shared session store when
    /// `[session] store = "redis"`, so a client's quota is one for every replica) or `replica`
    /// (each process counts its own).
    pub scope: LimitScope,
}

/// `limits.scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LimitScope {
    /// One count for the whole fleet, in Redis (with the in-memory store: this process).
    #[default]
    Fleet,
    /// Each replica counts its own.
    Replica,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            requests_per_minute_per_client: 1200,
            reviewer_calls_per_minute: 240,
            reviewer_concurrency: 4,
            scope: LimitScope::Fleet,
        }
    }
}

/// `[audit]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditConfig {
    /// The JSON-lines file decisions are appended to.
    pub path: PathBuf,
    /// Redact well-known secrets (API keys, tokens, private keys, …) from records.
    pub redact: bool,
    /// More regexes whose matches are redacted (`[REDACTED:custom]`).
    pub redact_patterns: Vec<String>,
    /// When a decision's record is durable before the answer: `always` (fdatasync by group
    /// commit) or `interval` (written to the file before the answer, fdatasync every
    /// `fsync_interval_ms`).
    pub fsync: FsyncPolicy,
    /// The longest time between two fdatasyncs with `fsync = "interval"`.
    pub fsync_interval_ms: u64,
    /// Rotate the active file into a closed segment when it reaches this many bytes (0: never).
    pub rotate_bytes: u64,
    /// Also rotate when the active file's first record is this old (`"24h"`, `"7d"`).
    pub rotate_interval: Option<String>,
    /// Keep at most this many closed segments (the oldest are deleted, and that is recorded).
    pub keep_segments: Option<usize>,
    /// Delete closed segments last written more than this many days ago (recorded).
    pub keep_days: Option<u64>,
    /// Compress closed segments: `none`, `gzip` or `zstd`.
    pub compress: crate::audit::Compression,
    /// `stdout`: also write every record to stdout as a JSON line (container log collection);
    /// `none`: only the file.
    pub mirror: AuditMirror,
}

/// `[audit] mirror`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditMirror {
    /// Only the file.
    #[default]
    None,
    /// The file, and stdout.
    Stdout,
}

/// `[audit] fsync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsyncPolicy {
    /// Every record is fdatasynced before its answer (group commit). The default.
    #[default]
    Always,
    /// Every record is written before its answer and fdatasynced within `fsync_interval_ms`.
    Interval,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            path: PathBuf::from("guardian-audit.jsonl"),
            redact: true,
            redact_patterns: Vec::new(),
            fsync: FsyncPolicy::Always,
            fsync_interval_ms: 100,
            rotate_bytes: 100 * 1024 * 1024,
            rotate_interval: None,
            keep_segments: None,
            keep_days: None,
            compress: crate::audit::Compression::None,
            mirror: AuditMirror::None,
        }
    }
}

impl AuditConfig {
    /// The redactor these settings describe.
    pub fn redactor(&self) -> Result<crate::redact::Redactor, crate::redact::RedactError> {
        if self.redact {
            crate::redact::Redactor::new(&self.redact_patterns)
        } else {
            Ok(crate::redact::Redactor::none())
        }
    }

    /// The rotation, retention and mirroring these settings describe (`rotate_interval` is
    /// checked by [`Config::validate`]).
    pub fn rotation(&self) -> crate::audit::Rotation {
        crate::audit::Rotation {
            max_bytes: self.rotate_bytes,
            interval: self
                .rotate_interval
                .as_deref()
                .and_then(|t| humantime::parse_duration(t).ok()),
            keep_segments: self.keep_segments,
            keep_days: self.keep_days,
            compress: self.compress,
            mirror_stdout: self.mirror == AuditMirror::Stdout,
        }
    }

    /// The fsync policy these settings describe.
    pub fn durability(&self) -> crate::audit::Durability {
        match self.fsync {
            FsyncPolicy::Always => crate::audit::Durability::Always,
            FsyncPolicy::Interval => crate::audit::Durability::Interval(
                std::time::Duration::from_millis(self.fsync_interval_ms),
            ),
        }
    }
}

/// A configuration that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Read {
        /// The path given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown or mistyped keys.
    #[error("invalid config {path}: {message}")]
    Parse {
        /// The path given.
        path: String,
        /// The TOML parser's message, with line and column.
        message: String,
    },
    /// A value is out of range or inconsistent.
    #[error("invalid config {path}: {key}: {message}")]
    Invalid {
        /// The path given.
        path: String,
        /// The offending key, e.g. `reviewer.timeout_ms`.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// One rule as written, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleSpec {
    /// Its effect (which list it is in).
    pub effect: Effect,
    /// The rule text.
    pub pattern: String,
    /// `file:line`.
    pub source: String,
    /// Examples the rule must match (checked when the policy is compiled).
    pub matches: Vec<String>,
    /// Examples the rule must not match.
    pub not_matches: Vec<String>,
    /// Why the rule exists.
    pub justification: Option<String>,
}

/// What `guardian init` writes: the default policy extended, a reviewer commented out.
pub const INIT_TEMPLATE: &str = r#"# guardian.toml, written by `guardian init`. See docs/configuration.md.
#
# The embedded default policy applies first (`guardian policy --config guardian.toml` lists it);
# the rules below are added to it. Order: deny > ask > allow, and a deny anywhere wins. Built-in
# protections (secrets, git hooks and config, guardian's own files) apply whatever you write.

[policy]
extends = "default"
deny = []      # e.g. "Bash(terraform apply *)", "Read(./secrets/**)"
ask = []       # e.g. "Bash(git commit *)": the reviewer decides
allow = []     # e.g. "Bash(make lint)", "WebFetch(domain:docs.rs)"

# What no rule decides goes to a reviewer model; without one it is denied.
# [reviewer]
# backend = "openai"                      # any OpenAI-compatible API, or "anthropic"
# base_url = "http://127.0.0.1:8089/v1"   # scripts/local-model.sh serve
# model = "qwen2.5-coder-1.5b"
# api_key_env = "OPENAI_API_KEY"

# For a user at a terminal (rather than CI): hand what no reviewer could answer to the agent's
# own prompt instead of denying it.
# [hooks]
# unreviewed = "ask"

[audit]
path = "guardian-audit.jsonl"   # relative to this file
"#;

/// Configs that extend one another, at most.
const MAX_EXTENDS: usize = 8;

/// Where guardian keeps its state when no config says otherwise: `$XDG_STATE_HOME/guardian`, or
/// `~/.local/state/guardian` (the audit log of a run without `--config` goes there).
pub fn state_dir() -> PathBuf {
    let from = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    from("XDG_STATE_HOME")
        .or_else(|| from("HOME").map(|h| h.join(".local/state")))
        .unwrap_or_else(std::env::temp_dir)
        .join("guardian")
}

/// The largest config, policy or import file read.
pub const MAX_CONFIG_FILE_BYTES: u64 = 16 << 20;

/// Reads an operator-named text file (config, import, tenant policy): only a regular file of at
/// most [`MAX_CONFIG_FILE_BYTES`], so a path to `/dev/zero`, a FIFO or a huge file is an error
/// instead of a hang.
pub fn read_text_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    // Read one byte past the cap: a file that grew after the check is refused too.
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_CONFIG_FILE_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONFIG_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB",
            MAX_CONFIG_FILE_BYTES >> 20
        )));
    }
    Ok(text)
}

impl Config {
    /// Loads a config file, or the embedded default when `path` is `None`.
    ///
    /// A relative `audit.path` is relative to the config file's directory; without a config it
    /// is in the state directory ([`state_dir`]), never the working directory of a one-shot
    /// command.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let mut cfg = match path {
            None => Config::parse(DEFAULT_POLICY, DEFAULT_POLICY_NAME)?,
            Some(p) => {
                let name = p.display().to_string();
                let text = read_text_file(p).map_err(|source| ConfigError::Read {
                    path: name.clone(),
                    source,
                })?;
                Config::parse(&text, &name)?
            }
        };
        if cfg.audit.path.is_relative() {
            let base = match path {
                // Absolute, so the same file is found whatever the working directory later.
                Some(p) => crate::normalize::absolute(p.parent().unwrap_or(Path::new(""))),
                None => state_dir(),
            };
            cfg.audit.path = base.join(&cfg.audit.path);
        }
        if let (Some(labels), Some(p)) = (&cfg.ui.labels, path)
            && labels.is_relative()
        {
            let base = crate::normalize::absolute(p.parent().unwrap_or(Path::new("")));
            cfg.ui.labels = Some(base.join(labels));
        }
        Ok(cfg)
    }

    /// The config this one extends (`[policy] extends`), loaded, if any.
    pub fn base(&self) -> Option<&Config> {
        self.base.as_deref()
    }

    /// The names of the configs this one extends, nearest first (`["default"]`, …).
    pub fn extends_chain(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = self.base();
        while let Some(c) = cur {
            out.push(if c.source_name == DEFAULT_POLICY_NAME {
                "default".to_string()
            } else {
                c.source_name.clone()
            });
            cur = c.base();
        }
        out
    }

    /// `protect_read` of this config and every config it extends.
    pub fn protect_read(&self) -> Vec<String> {
        let mut out = self.base().map(Config::protect_read).unwrap_or_default();
        out.extend(self.policy.protect_read.iter().cloned());
        out
    }

    /// `protect_write` of this config and every config it extends.
    pub fn protect_write(&self) -> Vec<String> {
        let mut out = self.base().map(Config::protect_write).unwrap_or_default();
        out.extend(self.policy.protect_write.iter().cloned());
        out
    }

    /// Loads what `[policy] extends` names (depth-limited: a cycle is an error).
    fn load_base(&mut self, depth: usize) -> Result<(), ConfigError> {
        let Some(ext) = self.policy.extends.clone() else {
            return Ok(());
        };
        let invalid = |message: String| ConfigError::Invalid {
            path: self.source_name.clone(),
            key: "policy.extends".into(),
            message,
        };
        if depth >= MAX_EXTENDS {
            return Err(invalid(format!(
                "more than {MAX_EXTENDS} configs extend one another (a cycle?)"
            )));
        }
        let base = if ext == "default" {
            Config::parse_at(DEFAULT_POLICY, DEFAULT_POLICY_NAME, depth + 1)?
        } else {
            let dir = Path::new(&self.source_name)
                .parent()
                .unwrap_or(Path::new(""));
            let p = dir.join(&ext);
            let name = p.display().to_string();
            let text = read_text_file(&p).map_err(|source| ConfigError::Read {
                path: name.clone(),
                source,
            })?;
            Config::parse_at(&text, &name, depth + 1)?
        };
        self.base = Some(Box::new(base));
        Ok(())
    }

    /// A config holding only `policy`, whose spans point into `text` (named `name`).
    pub fn with_policy(policy: PolicyConfig, name: &str, text: &str) -> Config {
        Config {
            policy,
            source_name: name.to_string(),
            text: text.to_string(),
            ..Config::default()
        }
    }

    /// Parses config text; `name` is what rule sources are prefixed with (and what a relative
    /// `[policy] extends` is resolved against).
    pub fn parse(text: &str, name: &str) -> Result<Config, ConfigError> {
        Config::parse_at(text, name, 0)
    }

    fn parse_at(text: &str, name: &str, depth: usize) -> Result<Config, ConfigError> {
        let mut cfg: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: name.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        cfg.source_name = name.to_string();
        cfg.text = text.to_string();
        cfg.validate()?;
        cfg.load_base(depth)?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        self.validate_server()?;
        self.validate_policy()?;
        self.validate_reviewer()?;
        self.validate_audit()?;
        self.validate_mandate()
    }

    /// `[mandate]`: every operator grant parses.
    fn validate_mandate(&self) -> Result<(), ConfigError> {
        if let Err((i, e)) = crate::mandate::declared(&self.mandate.grants) {
            return Err(self.invalid(&format!("mandate.grants[{i}]"), &e.to_string()));
        }
        if self.mandate.timeout_ms == 0 {
            return Err(self.invalid("mandate.timeout_ms", "must be at least 1"));
        }
        Ok(())
    }

    /// A config error naming the key.
    fn invalid(&self, key: &str, message: &str) -> ConfigError {
        ConfigError::Invalid {
            path: self.source_name.clone(),
            key: key.to_string(),
            message: message.to_string(),
        }
    }

    /// `[server]` and `[auth]`.
    fn validate_server(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: &str| self.invalid(key, message);
        if self.server.listen.parse::<std::net::SocketAddr>().is_err() {
            return Err(invalid(
                "server.listen",
                "must be an address with a port, e.g. 127.0.0.1:8700",
            ));
        }
        if self.server.max_body_bytes == 0 {
            return Err(invalid("server.max_body_bytes", "must be greater than 0"));
        }
        if self.server.max_header_bytes < 8192 {
            return Err(invalid("server.max_header_bytes", "must be at least 8192"));
        }
        for (key, v) in [
            (
                "server.max_concurrent_requests",
                self.server.max_concurrent_requests as u64,
            ),
            ("server.max_connections", self.server.max_connections as u64),
            (
                "server.header_read_timeout_ms",
                self.server.header_read_timeout_ms,
            ),
            (
                "server.body_read_timeout_ms",
                self.server.body_read_timeout_ms,
            ),
        ] {
            if v == 0 {
                return Err(invalid(key, "must be greater than 0"));
            }
        }
        let mut clients = std::collections::HashSet::new();
        for (i, t) in self.auth.tokens.iter().enumerate() {
            let key = format!("auth.tokens[{i}]");
            if t.client.trim().is_empty() {
                return Err(invalid(&format!("{key}.client"), "must not be empty"));
            }
            if !clients.insert(t.client.as_str()) {
                return Err(invalid(
                    &format!("{key}.client"),
                    &format!("client {:?} is listed twice", t.client),
                ));
            }
            if t.sha256.len() != 64 || !t.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(invalid(
                    &format!("{key}.sha256"),
                    "must be the 64 hex digits of the token's SHA-256 (printf %s \"$TOKEN\" | sha256sum), never the token itself",
                ));
            }
        }
        Ok(())
    }

    /// `[policy]`, `[limits]`, `[signals]`, `[session]` and `[breaker]`.
    fn validate_policy(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: &str| self.invalid(key, message);
        if self.policy.remote_code == Effect::Allow {
            return Err(invalid(
                "policy.remote_code",
                "must be \"deny\" or \"ask\": a download fed to an interpreter is never allowed by rule",
            ));
        }
        if self.policy.default == Effect::Allow {
            return Err(invalid("policy.default", "must be \"ask\" or \"deny\""));
        }
        if self.limits.reviewer_concurrency == 0 {
            return Err(invalid("limits.reviewer_concurrency", "must be at least 1"));
        }
        for (i, k) in self.signals.known_paths.iter().enumerate() {
            if !k.starts_with('/') {
                return Err(invalid(
                    &format!("signals.known_paths[{i}]"),
                    &format!("must be an absolute path, not {k:?}"),
                ));
            }
        }
        if self.session.store == StoreKind::Redis
            && (self.session.deadline_ms == 0 || self.session.ttl_s == 0)
        {
            return Err(invalid(
                "session.deadline_ms",
                "session.deadline_ms and session.ttl_s must be greater than 0",
            ));
        }
        if self.breaker.window == 0 || self.breaker.window_denials > self.breaker.window {
            return Err(invalid(
                "breaker.window_denials",
                "must not exceed breaker.window (which must be > 0)",
            ));
        }
        Ok(())
    }

    /// `[reviewer]`.
    fn validate_reviewer(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: &str| self.invalid(key, message);
        if self.reviewer.tenant_policy.is_some() && self.reviewer.tenant_policy_file.is_some() {
            return Err(invalid(
                "reviewer.tenant_policy",
                "give tenant_policy or tenant_policy_file, not both",
            ));
        }
        if self.reviewer.attempt_timeout_ms == Some(0) {
            return Err(invalid(
                "reviewer.attempt_timeout_ms",
                "must be greater than 0",
            ));
        }
        if !(0.0..=1.0).contains(&self.reviewer.deny_threshold) {
            return Err(invalid(
                "reviewer.deny_threshold",
                "must be between 0 and 1",
            ));
        }
        if self
            .reviewer
            .deny_threshold_no_signal
            .is_some_and(|t| !(0.0..=1.0).contains(&t))
        {
            return Err(invalid(
                "reviewer.deny_threshold_no_signal",
                "must be between 0 and 1",
            ));
        }
        if !(0.0..=100.0).contains(&self.reviewer.authorization_weight) {
            return Err(invalid(
                "reviewer.authorization_weight",
                "must be between 0 and 100",
            ));
        }
        if !(0.0..=1.0).contains(&self.reviewer.authorization_threshold) {
            return Err(invalid(
                "reviewer.authorization_threshold",
                "must be between 0 and 1",
            ));
        }
        if !(0.0..=1.0).contains(&self.reviewer.authorization_high_threshold) {
            return Err(invalid(
                "reviewer.authorization_high_threshold",
                "must be between 0 and 1",
            ));
        }
        if self.reviewer.scoring == Scoring::Logprobs
            && self.reviewer.backend == BackendKind::Anthropic
        {
            return Err(invalid(
                "reviewer.scoring",
                "\"logprobs\" needs an OpenAI-compatible backend that returns log-probabilities; the Anthropic API returns none (use \"label\")",
            ));
        }
        if self.reviewer.scoring == Scoring::Probe {
            if self.reviewer.backend == BackendKind::Anthropic {
                return Err(invalid(
                    "reviewer.scoring",
                    "\"probe\" needs an OpenAI-compatible server with an embeddings endpoint (llama.cpp's, started with embeddings on); the Anthropic API has none",
                ));
            }
            if self.reviewer.backend == BackendKind::Openai && self.reviewer.model_sha256.is_none()
            {
                return Err(invalid(
                    "reviewer.model_sha256",
                    "is required with scoring = \"probe\": the sha256 of the model file the server runs (a probe reads one model's hidden state only)",
                ));
            }
        }
        if self.reviewer.max_attempts == 0 {
            return Err(invalid("reviewer.max_attempts", "must be at least 1"));
        }
        if self.reviewer.timeout_ms == 0 {
            return Err(invalid("reviewer.timeout_ms", "must be greater than 0"));
        }
        if self.reviewer.backend != BackendKind::None {
            match url::Url::parse(&self.reviewer.base_url) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => {}
                _ => {
                    return Err(invalid(
                        "reviewer.base_url",
                        "must be an http(s) URL, e.g. http://127.0.0.1:8089/v1",
                    ));
                }
            }
            if self.reviewer.model.trim().is_empty() {
                return Err(invalid("reviewer.model", "must not be empty"));
            }
        }
        Ok(())
    }

    /// `[audit]`.
    fn validate_audit(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: &str| self.invalid(key, message);
        if let Err(e) = self.audit.redactor() {
            return Err(invalid("audit.redact_patterns", &e.to_string()));
        }
        if let Some(t) = &self.audit.rotate_interval {
            match humantime::parse_duration(t) {
                Ok(d) if d >= std::time::Duration::from_secs(1) => {}
                Ok(_) => return Err(invalid("audit.rotate_interval", "must be at least 1s")),
                Err(e) => {
                    return Err(invalid(
                        "audit.rotate_interval",
                        &format!("{t:?} is not a duration like \"24h\" or \"7d\": {e}"),
                    ));
                }
            }
        }
        if self.audit.keep_segments == Some(0) {
            return Err(invalid(
                "audit.keep_segments",
                "must be at least 1 (omit it to keep every segment)",
            ));
        }
        if self.audit.keep_days == Some(0) {
            return Err(invalid(
                "audit.keep_days",
                "must be at least 1 (omit it to keep every segment)",
            ));
        }
        if !(1..=60_000).contains(&self.audit.fsync_interval_ms) {
            return Err(invalid(
                "audit.fsync_interval_ms",
                "must be between 1 and 60000",
            ));
        }
        Ok(())
    }

    /// The rules of `[policy]` in deny, ask, allow order, each with its `file:line`: those of the
    /// configs it extends first, then its own.
    pub fn rule_specs(&self) -> Vec<RuleSpec> {
        let mut out = self.base().map(Config::rule_specs).unwrap_or_default();
        out.extend(self.own_rule_specs());
        out.sort_by_key(|r| r.effect);
        out
    }

    fn own_rule_specs(&self) -> Vec<RuleSpec> {
        let lists = [
            (Effect::Deny, &self.policy.deny),
            (Effect::Ask, &self.policy.ask),
            (Effect::Allow, &self.policy.allow),
        ];
        let mut out = Vec::new();
        for (effect, list) in lists {
            for item in list {
                out.push(RuleSpec {
                    effect,
                    pattern: item.get_ref().clone(),
                    source: format!("{}:{}", self.source_name, self.line_of(item.span().start)),
                    ..RuleSpec::default()
                });
            }
        }
        for item in &self.policy.rule {
            let t = item.get_ref();
            out.push(RuleSpec {
                effect: t.effect,
                pattern: t.rule.clone(),
                source: format!("{}:{}", self.source_name, self.line_of(item.span().start)),
                matches: t.matches.clone(),
                not_matches: t.not_match.clone(),
                justification: t.justification.clone(),
            });
        }
        out.sort_by_key(|r| r.effect);
        out
    }

    /// The tenant policy text: `tenant_policy`, or the content of `tenant_policy_file`
    /// (relative to the config file).
    pub fn tenant_policy(&self) -> Result<Option<String>, ConfigError> {
        if let Some(t) = &self.reviewer.tenant_policy {
            return Ok(Some(t.clone()));
        }
        let Some(file) = &self.reviewer.tenant_policy_file else {
            return Ok(None);
        };
        let base = Path::new(&self.source_name)
            .parent()
            .unwrap_or(Path::new(""));
        let path = base.join(file);
        read_text_file(&path)
            .map(Some)
            .map_err(|source| ConfigError::Read {
                path: path.display().to_string(),
                source,
            })
    }

    /// The probe `reviewer.scoring = "probe"` reads: `probe_file` (relative to the config file)
    /// or the one shipped with guardian, checked against `reviewer.model_sha256`.
    pub fn probe(&self) -> Result<crate::reviewer::probe::Probe, ConfigError> {
        use crate::reviewer::probe::Probe;
        let invalid = |key: &str, message: String| ConfigError::Invalid {
            path: self.source_name.clone(),
            key: key.to_string(),
            message,
        };
        let probe = match &self.reviewer.probe_file {
            None => Probe::embedded(),
            Some(file) => {
                let base = Path::new(&self.source_name)
                    .parent()
                    .unwrap_or(Path::new(""));
                let path = base.join(file);
                let text = read_text_file(&path).map_err(|source| ConfigError::Read {
                    path: path.display().to_string(),
                    source,
                })?;
                Probe::parse(&text)
            }
        }
        .map_err(|e| invalid("reviewer.probe_file", e.to_string()))?;
        if let Some(sha) = &self.reviewer.model_sha256 {
            probe
                .check_model(sha)
                .map_err(|e| invalid("reviewer.model_sha256", e.to_string()))?;
        }
        Ok(probe)
    }

    /// The files named by `[policy] import` (of the configs it extends too), resolved against
    /// the directory of the config file that names them.
    pub fn imports(&self) -> Vec<(PathBuf, String)> {
        let mut out = self.base().map(Config::imports).unwrap_or_default();
        let base = Path::new(&self.source_name)
            .parent()
            .unwrap_or(Path::new(""));
        out.extend(self.policy.import.iter().map(|i| {
            let raw = i.get_ref();
            let p = match (raw.strip_prefix("~/"), std::env::var_os("HOME")) {
                (Some(rest), Some(h)) => PathBuf::from(h).join(rest),
                _ => base.join(raw),
            };
            (
                p,
                format!("{}:{}", self.source_name, self.line_of(i.span().start)),
            )
        }));
        out
    }

    fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_sources_carry_lines() {
        let text = "[server]\nlisten = \"127.0.0.1:9\"\n\n[policy]\ndeny = [\"Bash(git push *)\",\n  \"Read(./.env)\"]\nallow = [\"Bash(git status)\"]\n";
        let cfg = Config::parse(text, "guardian.toml").expect("parses");
        let specs = cfg.rule_specs();
        assert_eq!(specs.len(), 3);
        assert_eq!(specs[0].source, "guardian.toml:5");
        assert_eq!(specs[1].source, "guardian.toml:6");
        assert_eq!(specs[2].effect, Effect::Allow);
        assert_eq!(specs[2].source, "guardian.toml:7");
    }

    #[test]
    fn unknown_keys_are_errors() {
        let err = Config::parse("[policy]\ndenny = []\n", "g.toml").unwrap_err();
        assert!(err.to_string().contains("denny"), "{err}");
        let err = Config::parse("[reviewer]\nbackend = \"gpt\"\n", "g.toml").unwrap_err();
        assert!(
            err.to_string().contains("backend") || err.to_string().contains("gpt"),
            "{err}"
        );
        let err = Config::parse("[server]\nlisten = \"nowhere\"\n", "g.toml").unwrap_err();
        assert!(err.to_string().contains("server.listen"), "{err}");
    }

    #[test]
    fn embedded_default_loads() {
        let cfg = Config::load(None).expect("default policy parses");
        assert_eq!(cfg.reviewer.backend, BackendKind::None);
        assert!(!cfg.rule_specs().is_empty());
    }
}

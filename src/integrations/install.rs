//! `guardian install`: writes guardian's hook snippet into an agent's own settings file.
//!
//! This module owns planning and writing an install for any agent of the list
//! ([`super::Agent`]): what to install ([`Options`]), the plan (the file, its old and new
//! content, what changes), backing the old file up and replacing it atomically, and the helpers
//! the agents' merges share. Each agent's file owns its snippet and its merge (the same snippets
//! the README shows: [`super::claude_code::claude_code_entry`], [`super::codex::codex_groups`],
//! [`super::opencode::OPENCODE_ASKS`]): JSON files keep their key order, Codex's `config.toml`
//! goes through `toml_edit` (comments and layout kept), and nothing is lost. A guardian entry
//! already there is replaced in place, so installing twice changes nothing; the old file is
//! backed up before a change; nothing is written on a dry run.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::Agent;
use crate::config::Unreviewed;

/// Codex's trust hash of one command hook ([`super::codex::codex_hook_hash`]).
pub use super::codex::codex_hook_hash;

/// The hook `timeout` written into the agents' settings, in seconds. guardian's own deadlines
/// are shorter (reviewer 30 s < server backstop 40 s < `guardian hook --timeout` 60 s), so
/// guardian answers, with a deny if need be, before the agent gives up on the hook.
pub const HOOK_TIMEOUT_S: u64 = 120;

/// Whose settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The user's own (`~/.claude/settings.json`, `$CODEX_HOME/config.toml`,
    /// `~/.config/opencode/opencode.json`).
    User,
    /// The project's (`.claude/settings.json`, `.codex/config.toml`, `opencode.json`).
    Project,
}

/// How Claude Code reaches guardian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookKind {
    /// `guardian hook claude-code`: blocks (exit 2) when the server cannot answer.
    Command,
    /// Claude Code's HTTP hook straight to the server (`onFailure: "block"` needs Claude Code
    /// 2.1.295 or later to block when the server is down).
    Http,
}

/// What to install.
#[derive(Debug, Clone)]
pub struct Options {
    /// The agent.
    pub agent: Agent,
    /// User or project settings.
    pub scope: Scope,
    /// The guardian server, e.g. `http://127.0.0.1:8700`.
    pub server: String,
    /// How the guardian binary is named in command hooks (`guardian`, or an absolute path).
    pub command: String,
    /// The small hook binary (`guardian-hook`, or its absolute path) when it sits beside
    /// guardian: command hooks run it instead of `guardian hook` (2 MB against 30 MB, about half
    /// the start-up time) whenever the server is `http://`, which is all it speaks.
    pub hook_binary: Option<String>,
    /// Command or HTTP hook (Claude Code only).
    pub hook: HookKind,
    /// `--unreviewed` for the hook, when not the server's default.
    pub unreviewed: Option<Unreviewed>,
    /// The project directory (project scope).
    pub project_dir: PathBuf,
    /// The user's home directory (user scope).
    pub home: PathBuf,
    /// `$CODEX_HOME`, when set.
    pub codex_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, when set.
    pub xdg_config_home: Option<PathBuf>,
    /// Codex: also record guardian's hooks as trusted in `$CODEX_HOME/config.toml`
    /// (`[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash`), as `/hooks` would, so
    /// an unattended `codex exec` runs them without `--dangerously-bypass-hook-trust`.
    pub trust: bool,
}

/// Why an install could not be planned or written.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The settings file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The settings file is not what the agent reads (invalid JSON or TOML, a key of the wrong
    /// type); guardian does not guess, and changes nothing.
    #[error("{path}: {problem}; nothing was changed (edit it by hand, see the README)")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: SettingsError,
    },
}

/// What is wrong with an agent's settings file, by key.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// Not JSON.
    #[error("not valid JSON ({0})")]
    NotJson(serde_json::Error),
    /// JSON, but not an object.
    #[error("the file is not a JSON object")]
    NotAJsonObject,
    /// Not TOML.
    #[error("not valid TOML ({0})")]
    NotToml(toml_edit::TomlError),
    /// A key that must hold an object.
    #[error("{0} is not an object")]
    NotAnObject(String),
    /// A key that must hold an array.
    #[error("{0} is not an array")]
    NotAnArray(String),
    /// A key that must hold a table.
    #[error("{0} is not a table")]
    NotATable(String),
    /// Codex's `hooks` written as an inline table.
    #[error("hooks is not a table (an inline hooks table cannot be merged)")]
    InlineHooks,
    /// Codex's `hooks.<event>` that is not `[[hooks.<event>]]`.
    #[error("hooks.{0} is not an array of tables ([[hooks.{0}]])")]
    NotArrayOfTables(String),
    /// OpenCode's `permission.<kind>` that is neither a string nor an object.
    #[error("permission.{0} is neither a string nor an object")]
    PermissionType(String),
}

/// What an install would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The settings file.
    pub path: PathBuf,
    /// Its content now, if it exists.
    pub old: Option<String>,
    /// Its content after the install.
    pub new: String,
    /// What changes, one line each; empty when nothing does.
    pub changes: Vec<String>,
    /// What the user must still do or know.
    pub notes: Vec<String>,
}

impl Plan {
    /// True when the file would not change.
    pub fn unchanged(&self) -> bool {
        self.old.as_deref() == Some(self.new.as_str())
    }
}

/// The settings file an install writes.
pub fn settings_path(o: &Options) -> PathBuf {
    o.agent.integration().settings_path(o)
}

/// The command a command hook runs: `<guardian> hook <agent> --server <url>` (and
/// `--unreviewed` when set).
impl Options {
    /// The program a command hook runs: the small hook binary when it is used, else guardian.
    pub fn hook_program(&self) -> &str {
        match &self.hook_binary {
            Some(small) if self.server.starts_with("http://") => small,
            _ => &self.command,
        }
    }
}

pub(super) fn hook_command(o: &Options, agent: &str) -> String {
    let mut cmd = if o.hook_program() == o.command {
        format!("{} hook {agent} --server {}", o.command, o.server)
    } else {
        format!("{} {agent} --server {}", o.hook_program(), o.server)
    };
    if let Some(mode) = o.unreviewed {
        cmd.push_str(&format!(" --unreviewed {}", mode.as_str()));
    }
    cmd
}

/// A settings file's content, or `None` when it does not exist yet.
pub(super) fn read_existing(path: &Path) -> Result<Option<String>, InstallError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(InstallError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Turns what is wrong with the file at `path` into the install's error.
pub(super) fn invalid_settings(path: &Path) -> impl FnOnce(SettingsError) -> InstallError + use<> {
    let path = path.to_path_buf();
    move |problem| InstallError::Invalid { path, problem }
}

/// Plans an install: reads the settings file (if any) and computes its new content; the agent
/// may add more (Codex with `trust`: trusting the hooks in the user's `$CODEX_HOME/config.toml`).
pub fn plan(o: &Options) -> Result<Vec<Plan>, InstallError> {
    let agent = o.agent.integration();
    let path = settings_path(o);
    let old = read_existing(&path)?;
    let (new, changes, notes) = agent
        .merge_settings(old.as_deref(), o)
        .map_err(invalid_settings(&path))?;
    let mut plans = vec![Plan {
        path,
        old,
        new,
        changes,
        notes,
    }];
    agent.complete_plans(o, &mut plans)?;
    Ok(plans)
}

/// Writes a plan: backs the old file up (`<name>.guardian-<time>.bak`) and replaces it
/// atomically. Returns the backup's path, if one was made. An unchanged plan writes nothing.
pub fn apply(plan: &Plan) -> Result<Option<PathBuf>, InstallError> {
    if plan.unchanged() {
        return Ok(None);
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| InstallError::Io { path, source }
    };
    if let Some(parent) = plan.path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let mut backup = None;
    if let Some(old) = &plan.old {
        let name = plan
            .path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
        let b = plan
            .path
            .with_file_name(format!("{name}.guardian-{stamp}.bak"));
        std::fs::write(&b, old).map_err(io(&b))?;
        backup = Some(b);
    }
    let tmp = plan.path.with_extension("guardian-tmp");
    std::fs::write(&tmp, &plan.new).map_err(io(&tmp))?;
    std::fs::rename(&tmp, &plan.path).map_err(io(&plan.path))?;
    Ok(backup)
}

/// A JSON settings file's top-level object (empty for a missing or blank file).
pub(super) fn parse_json_object(old: Option<&str>) -> Result<Map<String, Value>, SettingsError> {
    match old {
        None => Ok(Map::new()),
        Some(t) if t.trim().is_empty() => Ok(Map::new()),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(SettingsError::NotAJsonObject),
            Err(e) => Err(SettingsError::NotJson(e)),
        },
    }
}

/// The object at `key` (created when missing); `path` names it in the error.
pub(super) fn object_at<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a mut Map<String, Value>, SettingsError> {
    map.entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| SettingsError::NotAnObject(path.to_string()))
}

/// What the user must know about the binary a command hook runs.
pub(super) fn command_note(command: &str) -> String {
    if Path::new(command).is_absolute() {
        format!(
            "the hook runs {command}: install guardian on PATH (`cargo install --path .`) and install again, or keep this binary where it is"
        )
    } else {
        format!(
            "the hook runs `{command}`: it must resolve on the PATH the agent runs hooks with (`cargo install --path .`); if it does not, the agent reports a failed hook"
        )
    }
}

/// A JSON settings file's text: pretty, with a final newline.
pub(super) fn pretty_json(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(agent: Agent) -> Options {
        Options {
            agent,
            scope: Scope::Project,
            server: "http://127.0.0.1:8700".into(),
            command: "guardian".into(),
            hook_binary: None,
            hook: HookKind::Command,
            unreviewed: None,
            project_dir: PathBuf::from("/p"),
            home: PathBuf::from("/h"),
            codex_home: None,
            xdg_config_home: None,
            trust: false,
        }
    }

    #[test]
    fn paths_follow_scope_and_environment() {
        let mut o = opts(Agent::Codex);
        assert_eq!(settings_path(&o), PathBuf::from("/p/.codex/config.toml"));
        o.scope = Scope::User;
        assert_eq!(settings_path(&o), PathBuf::from("/h/.codex/config.toml"));
        o.codex_home = Some("/ch".into());
        assert_eq!(settings_path(&o), PathBuf::from("/ch/config.toml"));
        let mut o = opts(Agent::Opencode);
        o.scope = Scope::User;
        o.xdg_config_home = Some("/x".into());
        assert_eq!(
            settings_path(&o),
            PathBuf::from("/x/opencode/opencode.json")
        );
    }

    #[test]
    fn command_hooks_run_the_small_binary_when_it_is_there_and_the_server_is_http() {
        let mut o = opts(Agent::ClaudeCode);
        assert_eq!(
            hook_command(&o, "claude-code"),
            "guardian hook claude-code --server http://127.0.0.1:8700"
        );
        o.hook_binary = Some("/opt/g/guardian-hook".into());
        o.unreviewed = Some(Unreviewed::Deny);
        assert_eq!(
            hook_command(&o, "claude-code"),
            "/opt/g/guardian-hook claude-code --server http://127.0.0.1:8700 --unreviewed deny"
        );
        assert_eq!(o.hook_program(), "/opt/g/guardian-hook");
        // guardian-hook speaks http:// only.
        o.server = "https://guardian.internal:8700".into();
        assert_eq!(
            hook_command(&o, "codex"),
            "guardian hook codex --server https://guardian.internal:8700 --unreviewed deny"
        );
        assert_eq!(o.hook_program(), "guardian");
    }

    #[test]
    fn codex_trust_hash_is_codexs() {
        let h = codex_hook_hash(
            "pre_tool_use",
            "Bash|apply_patch|mcp__.*",
            "guardian hook codex --server http://127.0.0.1:8700",
            120,
        );
        // Computed by the end-to-end suite's codex_hook_hash (tests/e2e/test_codex.py), whose
        // values match what Codex 0.171 reports for the same hooks.
        assert_eq!(
            h,
            "sha256:3142a51389403d0bc25b301ff500e89e4ade3d948365a96bfa383cfe632508c5"
        );
        assert_ne!(
            h,
            codex_hook_hash(
                "pre_tool_use",
                "Bash|apply_patch|mcp__.*",
                "guardian hook codex --server http://127.0.0.1:9999",
                120
            ),
            "the command is part of the hash"
        );
    }

    #[test]
    fn an_invalid_file_is_refused_not_guessed() {
        let merge = |agent: Agent, old: &str| {
            agent
                .integration()
                .merge_settings(Some(old), &opts(agent))
                .is_err()
        };
        assert!(merge(Agent::ClaudeCode, "{not json"));
        assert!(merge(Agent::ClaudeCode, "{\"hooks\": []}"));
        assert!(merge(Agent::Codex, "hooks = 3"));
        assert!(merge(Agent::Opencode, "{\"permission\": \"allow\"}"));
    }
}

//! `guardian install`: writes guardian's hook snippet into an agent's own settings file.
//!
//! This module owns the snippets (the same ones the README shows: [`claude_code_entry`],
//! [`codex_groups`], [`OPENCODE_ASKS`]) and merging them into existing files without losing a
//! key: Claude Code's `settings.json` and OpenCode's `opencode.json` as JSON (key order kept),
//! Codex's `config.toml` through `toml_edit` (comments and layout kept). A guardian entry already
//! there is replaced in place, so installing twice changes nothing; the old file is backed up
//! before a change; nothing is written on a dry run.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::claude_code::{CLAUDE_CODE_MATCHER, CODEX_MATCHER};
use crate::config::Unreviewed;

/// The hook `timeout` written into the agents' settings, in seconds. guardian's own deadlines
/// are shorter (reviewer 30 s < server backstop 40 s < `guardian hook --timeout` 60 s), so
/// guardian answers, with a deny if need be, before the agent gives up on the hook.
pub const HOOK_TIMEOUT_S: u64 = 120;

/// The permission kinds the OpenCode snippet makes OpenCode ask about (and so the bridge answer).
pub const OPENCODE_ASKS: &[&str] = &["bash", "edit", "webfetch", "external_directory"];

/// Which agent to install into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// Claude Code: a PreToolUse hook in `settings.json`.
    ClaudeCode,
    /// Codex: PreToolUse and PermissionRequest hooks in `config.toml`.
    Codex,
    /// OpenCode: `permission` entries set to ask, for `guardian opencode` to answer.
    Opencode,
}

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
    pub target: Target,
    /// User or project settings.
    pub scope: Scope,
    /// The guardian server, e.g. `http://127.0.0.1:8700`.
    pub server: String,
    /// How the guardian binary is named in command hooks (`guardian`, or an absolute path).
    pub command: String,
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
    match (o.target, o.scope) {
        (Target::ClaudeCode, Scope::User) => o.home.join(".claude/settings.json"),
        (Target::ClaudeCode, Scope::Project) => o.project_dir.join(".claude/settings.json"),
        (Target::Codex, Scope::User) => o
            .codex_home
            .clone()
            .unwrap_or_else(|| o.home.join(".codex"))
            .join("config.toml"),
        (Target::Codex, Scope::Project) => o.project_dir.join(".codex/config.toml"),
        (Target::Opencode, Scope::User) => o
            .xdg_config_home
            .clone()
            .unwrap_or_else(|| o.home.join(".config"))
            .join("opencode/opencode.json"),
        (Target::Opencode, Scope::Project) => o.project_dir.join("opencode.json"),
    }
}

fn hook_command(o: &Options, agent: &str) -> String {
    let mut cmd = format!("{} hook {agent} --server {}", o.command, o.server);
    if let Some(mode) = o.unreviewed {
        cmd.push_str(&format!(" --unreviewed {}", mode.as_str()));
    }
    cmd
}

/// Claude Code's PreToolUse hook group: the tools guardian judges, one hook that blocks when it
/// fails (`onFailure: "block"`).
pub fn claude_code_entry(o: &Options) -> Value {
    let hook = match o.hook {
        HookKind::Command => json!({
            "type": "command",
            "command": hook_command(o, "claude-code"),
            "timeout": HOOK_TIMEOUT_S,
            "onFailure": "block"
        }),
        HookKind::Http => {
            let mut url = format!("{}/v1/hooks/claude-code", o.server.trim_end_matches('/'));
            if let Some(mode) = o.unreviewed {
                url.push_str(&format!("?unreviewed={}", mode.as_str()));
            }
            json!({"type": "http", "url": url, "timeout": HOOK_TIMEOUT_S, "onFailure": "block"})
        }
    };
    json!({"matcher": CLAUDE_CODE_MATCHER, "hooks": [hook]})
}

/// Codex's hook groups: `(event, matcher, command)`.
pub fn codex_groups(o: &Options) -> Vec<(&'static str, &'static str, String)> {
    let cmd = hook_command(o, "codex");
    vec![
        ("PreToolUse", CODEX_MATCHER, cmd.clone()),
        ("PermissionRequest", "Bash", cmd),
    ]
}

fn read_existing(path: &Path) -> Result<Option<String>, InstallError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(InstallError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Plans an install: reads the settings file (if any) and computes its new content. With
/// `trust` for a project's Codex hooks, a second plan adds the trust records to the user's
/// `$CODEX_HOME/config.toml`.
pub fn plan(o: &Options) -> Result<Vec<Plan>, InstallError> {
    let path = settings_path(o);
    let old = read_existing(&path)?;
    let invalid = |path: &Path| {
        let path = path.to_path_buf();
        move |problem: SettingsError| InstallError::Invalid { path, problem }
    };
    let (new, changes, notes) = match o.target {
        Target::ClaudeCode => merge_claude_code(old.as_deref(), o).map_err(invalid(&path))?,
        Target::Codex => merge_codex(old.as_deref(), o).map_err(invalid(&path))?,
        Target::Opencode => merge_opencode(old.as_deref(), o).map_err(invalid(&path))?,
    };
    let mut plans = vec![Plan {
        path: path.clone(),
        old,
        new,
        changes,
        notes,
    }];
    if o.target == Target::Codex && o.trust {
        let user = Options {
            scope: Scope::User,
            ..o.clone()
        };
        let user_path = settings_path(&user);
        let hooks_file = crate::normalize::absolute(&path);
        let groups = codex_group_indices(&plans[0].new);
        if user_path == path {
            let p = &mut plans[0];
            let (text, changes) =
                add_codex_trust(&p.new, &hooks_file, &groups).map_err(invalid(&path))?;
            p.new = text;
            p.changes.extend(changes);
        } else {
            let old = read_existing(&user_path)?;
            let (new, changes) =
                add_codex_trust(old.as_deref().unwrap_or(""), &hooks_file, &groups)
                    .map_err(invalid(&user_path))?;
            plans.push(Plan {
                path: user_path,
                old,
                new,
                changes,
                notes: vec![
                    "Codex reads a project's .codex/config.toml only in a trusted project ([projects.\"<path>\"] trust_level = \"trusted\" in your Codex config); for unattended runs prefer --scope user".into(),
                ],
            });
        }
    }
    Ok(plans)
}

/// Codex's trust hash of one command hook: `sha256:` and the hex SHA-256 of the compact,
/// key-sorted JSON `{"event_name", "hooks": [{"async", "command", "timeout", "type"}],
/// "matcher"}` (openai/codex `codex-rs/hooks/src/engine/discovery.rs` `command_hook_hash`, with
/// `codex-rs/config/src/fingerprint.rs` `version_for_toml`; checked against Codex 0.171's own
/// `hooks/list` by the end-to-end suite). The command text is part of it: a changed `--server`
/// needs trusting again.
pub fn codex_hook_hash(event_key: &str, matcher: &str, command: &str, timeout: u64) -> String {
    use sha2::{Digest, Sha256};
    let s = |t: &str| serde_json::to_string(t).unwrap_or_default();
    let text = format!(
        "{{\"event_name\":{},\"hooks\":[{{\"async\":false,\"command\":{},\"timeout\":{timeout},\"type\":\"command\"}}],\"matcher\":{}}}",
        s(event_key),
        s(command),
        s(matcher)
    );
    format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes())))
}

/// `(event, event key, group index, matcher, command)` of guardian's hook groups in a merged
/// Codex config.
fn codex_group_indices(text: &str) -> Vec<(String, &'static str, usize, String, String)> {
    let Ok(v) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, key) in [
        ("PreToolUse", "pre_tool_use"),
        ("PermissionRequest", "permission_request"),
    ] {
        let groups = v
            .get("hooks")
            .and_then(|h| h.get(event))
            .and_then(toml::Value::as_array);
        for (i, g) in groups.into_iter().flatten().enumerate() {
            let command = g
                .get("hooks")
                .and_then(|h| h.get(0))
                .and_then(|h| h.get("command"))
                .and_then(toml::Value::as_str)
                .unwrap_or("");
            if command.contains(" hook codex") {
                let matcher = g.get("matcher").and_then(toml::Value::as_str).unwrap_or("");
                out.push((
                    event.to_string(),
                    key,
                    i,
                    matcher.to_string(),
                    command.to_string(),
                ));
            }
        }
    }
    out
}

/// Adds `[hooks.state."<file>:<event>:<group>:0"] trusted_hash` for guardian's groups.
fn add_codex_trust(
    text: &str,
    hooks_file: &Path,
    groups: &[(String, &'static str, usize, String, String)],
) -> Result<(String, Vec<String>), SettingsError> {
    use toml_edit::{DocumentMut, Item, Table, value};
    let mut doc: DocumentMut = text.parse().map_err(SettingsError::NotToml)?;
    let hooks = doc.entry("hooks").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let hooks = hooks.as_table_mut().ok_or(SettingsError::InlineHooks)?;
    let state = hooks.entry("state").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let state = state
        .as_table_mut()
        .ok_or_else(|| SettingsError::NotATable("hooks.state".into()))?;
    let mut changes = Vec::new();
    for (event, key, i, matcher, command) in groups {
        let id = format!("{}:{key}:{i}:0", hooks_file.display());
        let hash = codex_hook_hash(key, matcher, command, HOOK_TIMEOUT_S);
        let current = state
            .get(&id)
            .and_then(|t| t.get("trusted_hash"))
            .and_then(Item::as_str);
        if current != Some(hash.as_str()) {
            let entry = state
                .entry(&id)
                .or_insert_with(|| Item::Table(Table::new()));
            let Some(entry) = entry.as_table_like_mut() else {
                return Err(SettingsError::NotATable(format!("hooks.state.{id:?}")));
            };
            entry.insert("trusted_hash", value(hash));
            changes.push(format!("trusted guardian's {event} hook (hooks.state)"));
        }
    }
    Ok((doc.to_string(), changes))
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

type Merged = (String, Vec<String>, Vec<String>);

fn parse_json_object(old: Option<&str>) -> Result<Map<String, Value>, SettingsError> {
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

fn object_at<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a mut Map<String, Value>, SettingsError> {
    map.entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| SettingsError::NotAnObject(path.to_string()))
}

fn merge_claude_code(old: Option<&str>, o: &Options) -> Result<Merged, SettingsError> {
    let mut root = parse_json_object(old)?;
    let entry = claude_code_entry(o);
    let hooks = object_at(&mut root, "hooks", "hooks")?;
    let groups = hooks
        .entry("PreToolUse".to_string())
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| SettingsError::NotAnArray("hooks.PreToolUse".into()))?;
    let ours = |g: &Value| {
        g["hooks"].as_array().is_some_and(|hs| {
            hs.iter().any(|h| {
                h["command"]
                    .as_str()
                    .is_some_and(|c| c.contains(" hook claude-code"))
                    || h["url"]
                        .as_str()
                        .is_some_and(|u| u.contains("/v1/hooks/claude-code"))
            })
        })
    };
    let mut changes = Vec::new();
    match groups.iter().position(ours) {
        Some(i) if groups[i] == entry => {}
        Some(i) => {
            groups[i] = entry;
            changes.push(format!(
                "replaced guardian's PreToolUse hook (hooks.PreToolUse[{i}])"
            ));
        }
        None => {
            groups.push(entry);
            changes.push(format!(
                "added a PreToolUse hook for the tools guardian judges (matcher {CLAUDE_CODE_MATCHER})"
            ));
        }
    }
    let mut notes = vec![format!(
        "`onFailure: \"block\"` needs Claude Code 2.1.295 or later; older versions let the call proceed when the hook fails"
    )];
    if o.hook == HookKind::Command {
        notes.push(command_note(&o.command));
    }
    notes.push(format!(
        "start the server first: guardian serve (answers on {})",
        o.server
    ));
    Ok((pretty_json(&Value::Object(root)), changes, notes))
}

fn merge_opencode(old: Option<&str>, o: &Options) -> Result<Merged, SettingsError> {
    let mut root = parse_json_object(old)?;
    let perms = object_at(&mut root, "permission", "permission")?;
    let mut changes = Vec::new();
    let mut notes = Vec::new();
    for kind in OPENCODE_ASKS {
        match perms.get_mut(*kind) {
            None => {
                perms.insert((*kind).to_string(), json!("ask"));
                changes.push(format!("permission.{kind}: \"ask\" (added)"));
            }
            Some(Value::String(s)) if s == "ask" || s == "deny" => {}
            Some(v @ Value::String(_)) => {
                changes.push(format!("permission.{kind}: {v} → \"ask\""));
                *v = json!("ask");
            }
            Some(Value::Object(rules)) => {
                // OpenCode applies the LAST matching pattern: a leading "*" keeps the user's own
                // more specific patterns in force.
                match rules.get("*") {
                    Some(Value::String(s)) if s == "ask" || s == "deny" => {}
                    Some(_) => {
                        rules.insert("*".into(), json!("ask"));
                        changes.push(format!("permission.{kind}.\"*\": → \"ask\""));
                    }
                    None => {
                        let mut with = Map::new();
                        with.insert("*".into(), json!("ask"));
                        with.extend(std::mem::take(rules));
                        *rules = with;
                        changes.push(format!("permission.{kind}.\"*\": \"ask\" (added first)"));
                    }
                }
                let allowed: Vec<&String> = rules
                    .iter()
                    .filter(|(k, v)| k.as_str() != "*" && v.as_str() == Some("allow"))
                    .map(|(k, _)| k)
                    .collect();
                if !allowed.is_empty() {
                    notes.push(format!(
                        "OpenCode still allows these {kind} patterns without asking guardian: {}",
                        allowed
                            .iter()
                            .map(|k| format!("{k:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            Some(_) => {
                return Err(SettingsError::PermissionType((*kind).to_string()));
            }
        }
    }
    notes.push(format!(
        "OpenCode asks guardian through the bridge: `opencode serve --port 4096`, then `{} opencode --server http://127.0.0.1:4096`",
        o.command
    ));
    Ok((pretty_json(&Value::Object(root)), changes, notes))
}

/// What the user must know about the binary a command hook runs.
fn command_note(command: &str) -> String {
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

fn pretty_json(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    s.push('\n');
    s
}

fn merge_codex(old: Option<&str>, o: &Options) -> Result<Merged, SettingsError> {
    use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};
    let mut doc: DocumentMut = old.unwrap_or("").parse().map_err(SettingsError::NotToml)?;
    let mut changes = Vec::new();
    // [features] hooks = true: Codex runs no hook without it.
    let features = doc
        .entry("features")
        .or_insert_with(|| Item::Table(Table::new()));
    let Some(features) = features.as_table_like_mut() else {
        return Err(SettingsError::NotATable("features".into()));
    };
    if features.get("hooks").and_then(Item::as_bool) != Some(true) {
        features.insert("hooks", value(true));
        changes.push("features.hooks = true".to_string());
    }
    let hooks = doc.entry("hooks").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let Some(hooks) = hooks.as_table_mut() else {
        return Err(SettingsError::InlineHooks);
    };
    for (event, matcher, command) in codex_groups(o) {
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
        let Some(groups) = groups.as_array_of_tables_mut() else {
            return Err(SettingsError::NotArrayOfTables(event.to_string()));
        };
        let mut group = Table::new();
        group.insert("matcher", value(matcher));
        let mut handler = Table::new();
        handler.insert("type", value("command"));
        handler.insert("command", value(command.as_str()));
        handler.insert("timeout", value(HOOK_TIMEOUT_S as i64));
        let mut handlers = ArrayOfTables::new();
        handlers.push(handler);
        group.insert("hooks", Item::ArrayOfTables(handlers));
        let is_ours = |t: &Table| {
            t.get("hooks")
                .and_then(Item::as_array_of_tables)
                .is_some_and(|hs| {
                    hs.iter().any(|h| {
                        h.get("command")
                            .and_then(Item::as_str)
                            .is_some_and(|c| c.contains(" hook codex"))
                    })
                })
        };
        let same = |t: &Table| {
            t.get("matcher").and_then(Item::as_str) == Some(matcher)
                && t.get("hooks")
                    .and_then(Item::as_array_of_tables)
                    .is_some_and(|hs| {
                        hs.len() == 1
                            && hs.iter().all(|h| {
                                h.get("command").and_then(Item::as_str) == Some(command.as_str())
                                    && h.get("type").and_then(Item::as_str) == Some("command")
                                    && h.get("timeout").and_then(Item::as_integer)
                                        == Some(HOOK_TIMEOUT_S as i64)
                            })
                    })
        };
        let found = groups.iter().position(is_ours);
        match found {
            Some(i) if groups.get(i).is_some_and(same) => {}
            Some(i) => {
                if let Some(t) = groups.get_mut(i) {
                    *t = group;
                }
                changes.push(format!("replaced guardian's hooks.{event}[{i}]"));
            }
            None => {
                groups.push(group);
                changes.push(format!("added [[hooks.{event}]] (matcher {matcher:?})"));
            }
        }
    }
    let notes = vec![
        "Codex runs a new or changed hook only after it is trusted: review it with /hooks in the Codex TUI; an automated `codex exec` needs --dangerously-bypass-hook-trust (only for hooks you vetted)".to_string(),
        command_note(&o.command),
        format!("start the server first: guardian serve (answers on {})", o.server),
    ];
    Ok((doc.to_string(), changes, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(target: Target) -> Options {
        Options {
            target,
            scope: Scope::Project,
            server: "http://127.0.0.1:8700".into(),
            command: "guardian".into(),
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
        let mut o = opts(Target::Codex);
        assert_eq!(settings_path(&o), PathBuf::from("/p/.codex/config.toml"));
        o.scope = Scope::User;
        assert_eq!(settings_path(&o), PathBuf::from("/h/.codex/config.toml"));
        o.codex_home = Some("/ch".into());
        assert_eq!(settings_path(&o), PathBuf::from("/ch/config.toml"));
        let mut o = opts(Target::Opencode);
        o.scope = Scope::User;
        o.xdg_config_home = Some("/x".into());
        assert_eq!(
            settings_path(&o),
            PathBuf::from("/x/opencode/opencode.json")
        );
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
        let o = opts(Target::ClaudeCode);
        assert!(merge_claude_code(Some("{not json"), &o).is_err());
        assert!(merge_claude_code(Some("{\"hooks\": []}"), &o).is_err());
        assert!(merge_codex(Some("hooks = 3"), &opts(Target::Codex)).is_err());
        assert!(
            merge_opencode(Some("{\"permission\": \"allow\"}"), &opts(Target::Opencode)).is_err()
        );
    }
}

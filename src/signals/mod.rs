//! Risk signals: what an action does, in the terms of the risk taxonomy, computed in code.
//!
//! This module owns the signal catalogue: from a normalised action (the shell commands with their
//! files and hosts, a file read or write, a fetch, an MCP tool call) and the request (the user's
//! intent, the content written, the MCP arguments) it derives trusted facts such as "writes a
//! systemd unit", "force-pushes main", "posts a secret-looking string through an MCP tool". Each
//! [`Signal`] has a fixed [`Category`], a [`Severity`] and an `evidence` string naming its target,
//! and says whether the user's intent names that target ([`named_in_intent`]). Signals decide
//! nothing here: the pipeline puts them in the reviewer's prompt and the decision module applies
//! the outcome table (`crate::decision::table`) to the reviewer's verdict; a rule still decides
//! before any of it. One file per family: `shell` (the table of programs), `files`, `git`,
//! `network`, `mcp`, `packages`, `scope`, and `overreach` (publishing and safeguards switched
//! off: what over-eager agents do).

mod changes;
mod files;
mod git;
mod mcp;
mod network;
mod overreach;
mod packages;
mod scope;
mod shell;

use changes::*;
use files::*;
use git::*;
use mcp::*;
use network::*;
use overreach::*;
use packages::*;
use scope::*;
use shell::*;

use std::path::Path;

use serde::Deserialize;

use crate::normalize::shell::SimpleCommand;
use crate::normalize::{Context, NormalizedAction};
use crate::request::{Action, ReviewRequest};

pub use crate::verdict::{Category, Severity, Signal};
pub(crate) use changes::ci_file;
pub(crate) use overreach::helm_push_parts;
pub(crate) use shell::KUBE_VALUED;

/// `[signals]`: severity overrides per category and the hosts reading from which is no signal.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SignalsConfig {
    /// A category's severity, replacing the catalogue's (`destructive = "critical"`); a
    /// signal's own escalation (e.g. production targets) is kept when it is higher.
    pub severity: std::collections::BTreeMap<Category, Severity>,
    /// More hosts that are no egress signal when only read from (documentation, registries).
    pub known_hosts: Vec<String>,
    /// System paths (each with everything under it) whose reading is routine here and no
    /// scope signal (`/etc/hosts`, `/var/log/nginx`): absolute paths.
    pub known_paths: Vec<String>,
}

fn sig(category: Category, severity: Severity, evidence: String, target: &str) -> Signal {
    Signal {
        category,
        severity,
        evidence,
        named_in_intent: false,
        target: target.to_string(),
    }
}

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn home_rel(p: &Path, ctx: &Context) -> String {
    match ctx.home.as_deref().and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    }
}

/// The signals of what a write of `p` puts in the file: with a diff (the agent's, or the one
/// from disk) the change is judged, not what the file held before it, and a secret the file
/// already held (a context or removed line) is not this write's.
fn written_signals(p: &Path, content: Option<&str>, diff: Option<&str>, out: &mut Vec<Signal>) {
    match (content, diff) {
        (_, Some(text)) => content_safeguards(p, text, true, out),
        (Some(text), None) => content_safeguards(p, text, false, out),
        (None, None) => {}
    }
    let change = Change::of(content, diff);
    change_signals(p, &change, out);
    secrets_in(&change.added_text(), "the content written", out);
    for text in [content, diff].into_iter().flatten() {
        download_exec_in(text, "the content written", out);
        registry_config_in(p, text, out);
    }
}

/// The signals of a request's action.
pub fn detect(
    req: &ReviewRequest,
    action: &NormalizedAction,
    ctx: &Context,
    cfg: &SignalsConfig,
) -> Vec<Signal> {
    let mut out = Vec::new();
    match action {
        NormalizedAction::Shell(a) => {
            for c in &a.commands {
                command_signals(c, ctx, cfg, &mut out);
            }
            push_history(a.commands.as_slice(), &mut out);
            for r in &a.remote_code {
                out.push(sig(
                    Category::SupplyChain,
                    Severity::High,
                    r.clone(),
                    "remote code",
                ));
            }
            if let Action::Shell { command, .. } = &req.action {
                secrets_in(command, "the command line", &mut out);
                script_signals(command, ctx, &mut out);
                variable_safeguards(command, &mut out);
                migration_variables(command, a.commands.as_slice(), &mut out);
            }
        }
        NormalizedAction::Read(p) | NormalizedAction::ReadTree(p) => {
            credential_read(p, ctx, &mut out);
        }
        NormalizedAction::Write(p) => {
            write_signals(p, ctx, &mut out);
            if let Action::Write { content, diff, .. } = &req.action {
                written_signals(p, content.as_deref(), diff.as_deref(), &mut out);
            }
        }
        NormalizedAction::Fetch { url, host } => {
            fetch_signals(url, host, &req.action, cfg, &mut out);
            secrets_in(url, "the URL", &mut out);
        }
        NormalizedAction::Mcp { server, tool } => {
            let args = match &req.action {
                Action::Mcp { arguments, .. } => arguments.to_string(),
                _ => String::new(),
            };
            mcp_signals(server, tool, &args, cfg, &mut out);
            download_exec_in(
                &args,
                &format!("the arguments of {server}/{tool}"),
                &mut out,
            );
            secrets_in(
                &args,
                &format!("the arguments of {server}/{tool}"),
                &mut out,
            );
        }
    }
    scope_signals(req, action, ctx, cfg, &mut out);
    if let Action::Shell { command, .. } = &req.action {
        drop_names_only_dumps(command, &mut out);
    }
    for s in &mut out {
        if let Some(sev) = cfg.severity.get(&s.category) {
            s.severity = *sev;
        }
        s.named_in_intent = req
            .intent
            .as_deref()
            .is_some_and(|i| named_in_intent(&s.target, i));
        // A safeguard the user names is one they want to pass ("fix the lint errors"), not one
        // they asked to switch off: only words asking to skip or lower it name its bypass.
        if s.category == Category::SafeguardBypass && s.named_in_intent {
            s.named_in_intent = req.intent.as_deref().is_some_and(asks_to_bypass);
        }
        // Asked what a release, deploy or deletion would do, the user named it to look at it:
        // the action that does it is not what they asked for.
        if s.named_in_intent
            && matches!(
                s.category,
                Category::Publish
                    | Category::Production
                    | Category::Destructive
                    | Category::RemoteHistory
            )
            && req.intent.as_deref().is_some_and(asks_for_preview)
        {
            s.named_in_intent = false;
        }
    }
    // Reading from a host the user named (a GET of the API they asked about) is no egress.
    out.retain(|s| {
        !(s.category == Category::NetworkEgress
            && s.severity == Severity::Medium
            && s.named_in_intent
            && s.evidence.starts_with("contacts "))
    });
    dedup(out)
}

fn dedup(mut v: Vec<Signal>) -> Vec<Signal> {
    let mut seen = std::collections::HashSet::new();
    v.retain(|s| seen.insert((s.category, s.evidence.clone())));
    v
}

/// GitLab's CLI spelled as GitHub's: `glab mr merge 342` is `gh pr merge 342`, `glab mr note`
/// is `gh pr comment`. Both tools do the same things to a forge, so they raise the same signals
/// and acts.
pub(crate) fn glab_as_gh(c: &SimpleCommand) -> SimpleCommand {
    let mut g = c.clone();
    if let Some(p) = g.argv.first_mut() {
        *p = "gh".into();
    }
    if let Some(n) = g.argv.get_mut(1).filter(|n| n.as_str() == "mr") {
        *n = "pr".into();
    }
    if let Some(v) = g.argv.get_mut(2).filter(|v| v.as_str() == "note") {
        *v = "comment".into();
    }
    g
}

/// The words of a command after its program, options first-class.
fn args(c: &SimpleCommand) -> &[String] {
    c.argv.get(1..).unwrap_or(&[])
}

fn has(c: &SimpleCommand, flags: &[&str]) -> bool {
    args(c).iter().any(|a| flags.contains(&a.as_str()))
}

/// Short flags as letters: `-rf` has `r` and `f`.
fn has_short(c: &SimpleCommand, letter: char) -> bool {
    args(c)
        .iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(letter))
}

/// The value of the first of these options: `NAME VALUE`, or `NAME=VALUE` for a long one.
fn option_value<'a>(a: &'a [String], names: &[&str]) -> Option<&'a str> {
    a.iter().enumerate().find_map(|(i, x)| {
        if names.contains(&x.as_str()) {
            return a.get(i + 1).map(String::as_str);
        }
        let (name, value) = x.split_once('=')?;
        (name.starts_with("--") && names.contains(&name)).then_some(value)
    })
}

fn subcommand(c: &SimpleCommand) -> Option<&str> {
    args(c)
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str)
}

fn names_prod(c: &SimpleCommand) -> bool {
    c.argv.iter().any(|a| word_names_prod(a))
}

/// Medium, or high when the command names production (`-n prod`, `--app acme-prod`).
fn medium_or_high_in_prod(c: &SimpleCommand) -> Severity {
    if names_prod(c) {
        Severity::High
    } else {
        Severity::Medium
    }
}

/// Whether one word names a production environment: `prod`, `production` or `live`, alone or
/// as a part between `=`, `/`, `:`, `-`, `_`, `.` or `,` (`acme-prod`, `env=production`).
fn word_names_prod(word: &str) -> bool {
    word.to_ascii_lowercase()
        .split(['=', '/', ':', '-', '_', '.', ','])
        .any(|part| matches!(part, "prod" | "production" | "live"))
}

/// Whether the user's words ask to switch a check off, rather than to make it pass.
fn asks_to_bypass(intent: &str) -> bool {
    let i = intent.to_ascii_lowercase();
    [
        "skip",
        "dismiss",
        "disable",
        "ignore",
        "bypass",
        "turn off",
        "switch off",
        "lower",
        "without",
        "no-verify",
        "override",
        "silence",
        "suppress",
        "allowlist",
        "informational",
        "approve",
        "unsigned",
        "insecure",
    ]
    .iter()
    .any(|w| i.contains(w))
        || (i.contains("update") && i.contains("snapshot"))
}

/// A dump whose single pipeline keeps only names or a count (the environment's variables, a
/// cluster secret's keys) prints no value: its credential-access signal goes.
fn drop_names_only_dumps(command: &str, out: &mut Vec<Signal>) {
    let env = env_names_only(command);
    let secret = secret_keys_only(command);
    out.retain(|s| {
        !(s.category == Category::CredentialAccess
            && ((env && s.target == "environment") || (secret && s.target.starts_with("secret"))))
    });
}

/// Whether the command pipes `env` or `printenv` into a filter that keeps only the variables'
/// names or a count (`env | cut -d= -f1 | grep -i token`, `printenv | wc -l`): it lists which
/// variables are set, no value. Any other use of the dump stays a signal.
fn env_names_only(command: &str) -> bool {
    static NAMES_ONLY: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let re = NAMES_ONLY.get_or_init(|| {
        regex::Regex::new(concat!(
            r#"^\s*(?:env|printenv)\s*\|\s*(?:"#,
            r#"cut\s+(?:-d\s*['"]?=['"]?\s+-f\s*1|-f\s*1\s+-d\s*['"]?=['"]?)"#,
            r#"|awk\s+-F\s*['"]?=['"]?\s+['"]\{\s*print\s+\$1\s*\}['"]"#,
            r#"|sed\s+(?:-e\s+)?['"]s/=\.\*//['"]"#,
            r#"|wc\s+-l|grep\s+-c\b[^|]*"#,
            r#")(?:\s*$|\s*\|)"#,
        ))
        .ok()
    });
    // Only a single pipeline: `env | cut -d= -f1; env` dumps in its second command.
    !command
        .replace("$1", "")
        .contains([';', '&', '\n', '`', '$', '>', '<'])
        && re.as_ref().is_some_and(|re| re.is_match(command))
}

/// Whether the command pipes a cluster secret's JSON into a `jq` filter that keeps only its
/// key names, a count or its metadata (`kubectl get secret app -o json | jq '.data | keys'`):
/// which keys a secret holds, no value. Any other filter, or anything after it, prints values.
fn secret_keys_only(command: &str) -> bool {
    static KEYS_ONLY: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    const FILTERS: &[&str] = &[
        ".data|keys",
        ".data|keys[]",
        ".data|keys_unsorted",
        ".data|keys_unsorted[]",
        ".data|keys|.[]",
        ".data|keys|length",
        ".data|length",
        ".metadata",
        ".metadata.name",
        ".metadata.labels",
        ".metadata.annotations",
        ".type",
        ".items|length",
        ".items[].metadata.name",
        ".items[]|.metadata.name",
    ];
    let re = KEYS_ONLY.get_or_init(|| {
        regex::Regex::new(concat!(
            r#"^\s*(?:kubectl|oc)\s[^|;&`$<>\n]*\|\s*jq\s+(?:-[a-zA-Z]+\s+)*"#,
            r#"(?:'([^']*)'|"([^"$`]*)")\s*$"#,
        ))
        .ok()
    });
    re.as_ref()
        .and_then(|re| re.captures(command))
        .and_then(|c| c.get(1).or_else(|| c.get(2)))
        .is_some_and(|f| {
            let f: String = f.as_str().chars().filter(|c| !c.is_whitespace()).collect();
            FILTERS.contains(&f.as_str())
        })
}

/// Whether the user's words ask to see what something would do rather than to do it ("show me
/// what cargo-release would do", "dry-run the deploy", "show me the plan", "don't publish it").
fn asks_for_preview(intent: &str) -> bool {
    let i = intent.to_ascii_lowercase().replace(['’', '`'], "'");
    [
        "what would",
        "would do",
        "would change",
        "would happen",
        "would be published",
        "would be deleted",
        "would be removed",
        "would be deployed",
        "dry run",
        "dry-run",
        "dryrun",
        "show me the plan",
        "plan only",
        "only plan",
        "don't publish",
        "do not publish",
        "don't deploy",
        "do not deploy",
        "don't apply",
        "do not apply",
        "don't push",
        "do not push",
        "without publishing",
        "without deploying",
        "without applying",
        "without pushing",
    ]
    .iter()
    .any(|w| i.contains(w))
}

/// Whether the user's intent names `target`: one of the target's distinctive tokens (a file
/// name, a host or its registrable part, a branch, a namespace, a tool) appears in the intent
/// as a word.
pub fn named_in_intent(target: &str, intent: &str) -> bool {
    let intent = intent.to_ascii_lowercase();
    let intent_words: Vec<&str> = intent
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')))
        .filter(|w| !w.is_empty())
        .collect();
    let target = target.to_ascii_lowercase();
    let mut tokens: Vec<String> = vec![target.clone()];
    tokens.extend(
        target
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
            .filter(|t| t.len() >= 3)
            .map(str::to_string),
    );
    // A host's registrable part: `api.prod.example.com` → `example`.
    if target.contains('.') && !target.contains('/') {
        let parts: Vec<&str> = target.split('.').collect();
        if parts.len() >= 2 {
            tokens.push(parts[parts.len() - 2].to_string());
        }
    }
    const GENERIC: &[&str] = &[
        "the",
        "and",
        "com",
        "org",
        "net",
        "www",
        "http",
        "https",
        "git",
        "src",
        "tmp",
        "usr",
        "etc",
        "home",
        "bin",
        "lib",
        "var",
        "local",
        "config",
        "file",
        "files",
        "push",
        "main",
        "all",
        "refs",
        "environment",
        "history",
        "remote",
        "code",
        "json",
        "txt",
    ];
    let trim = |x: &str| {
        x.trim_matches(|c: char| matches!(c, '.' | '-' | '/' | '~'))
            .to_string()
    };
    tokens.iter().map(|t| trim(t)).any(|t| {
        !GENERIC.contains(&t.as_str())
            && t.len() >= 3
            && intent_words.iter().any(|w| {
                let w = trim(w);
                w == t || w.ends_with(&format!("/{t}")) || (t.len() >= 5 && contains_whole(&w, &t))
            })
    })
}

/// Whether `t` occurs in `w` not continued as a longer name: `gs://acme-site` is in
/// `gs://acme-site/blog` but not in `gs://acme-site-staging`.
fn contains_whole(w: &str, t: &str) -> bool {
    w.match_indices(t).any(|(i, _)| {
        let after = &w[i + t.len()..];
        let mut cs = after.chars();
        match cs.next() {
            None => true,
            Some(c) if c.is_ascii_alphanumeric() => false,
            Some('-' | '_') => !cs.next().is_some_and(|c| c.is_ascii_alphanumeric()),
            Some(_) => true,
        }
    })
}

/// A signal as a line of trusted facts in the reviewer's prompt.
pub fn fact(s: &Signal) -> String {
    format!(
        "RISK SIGNAL ({}, {}): {}; the user's request {} its target",
        s.category.as_str(),
        s.severity.as_str(),
        s.evidence,
        if s.named_in_intent {
            "names"
        } else {
            "does not name"
        }
    )
}

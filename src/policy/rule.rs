//! Rule syntax: parsing Claude Code style rules into matchers.
//!
//! This module owns the grammar `Tool` / `Tool(specifier)` and what each specifier means:
//! - `Bash(cmd *)`: `*` matches anything; a trailing ` *` (or the legacy `:*`) is a word
//!   boundary, so `Bash(ls *)` matches `ls` and `ls -la` but not `lsof`.
//! - `Read(path)`, `Edit(path)`, `Write(path)`: gitignore-style globs: `//abs`, `~/home`,
//!   `/project-root-relative`, `./cwd-relative`, bare; `*` stays within one directory, `**`
//!   recurses, and `dir/**` also covers `dir` itself.
//! - `WebFetch(domain:example.com)`; `*.example.com` covers subdomains.
//! - `mcp__server`, `mcp__server__*`, `mcp__server__tool`.
//!
//! Matching itself is in [`Matcher::matches`]; the order of evaluation is the policy's business.

use std::path::Path;

use globset::{Glob, GlobBuilder, GlobMatcher};
use regex::Regex;

use super::error::{PatternError, RuleError, RuleErrorKind};
use crate::normalize::{Context, NormalizedAction};

/// Which kinds of action a rule's tool name covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// `Bash`: shell actions.
    Bash,
    /// `Read` (and Claude Code's other read tools `Grep`, `Glob`, `LS`): reads.
    Read,
    /// `Edit`, `Write`, `MultiEdit`, `NotebookEdit`: writes.
    Write,
    /// `WebFetch`: fetches.
    WebFetch,
    /// `mcp__…`: MCP calls.
    Mcp,
}

/// How a path rule is anchored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// `//path`: absolute.
    Absolute,
    /// `~/path`: under the home directory.
    Home,
    /// `/path`: under a workspace root (or the cwd when the session names none).
    ProjectRoot,
    /// `./path` or `dir/path`: under the action's cwd.
    Cwd,
    /// A bare name without `/` (`.env`, `*.pem`): that name at any depth. For deny and ask
    /// rules anywhere on disk; for allow rules only under the cwd.
    AnyDepth,
}

/// A compiled path pattern.
#[derive(Debug, Clone)]
pub struct PathPattern {
    anchor: Anchor,
    glob: GlobMatcher,
    /// For `dir/**`: matches `dir` itself.
    dir_itself: Option<GlobMatcher>,
    /// `//`, `~`: only the base directory itself.
    exact_base: bool,
    /// The pattern's components below its base, for the static overlap test
    /// ([`PathPattern::may_match_under`]).
    comps: Vec<Comp>,
}

/// One component of a path pattern.
#[derive(Debug, Clone)]
enum Comp {
    /// `**`: any number of components, none included.
    AnyDepth,
    /// A glob (or literal) for one component; `hidden` when it can only match a name starting
    /// with `.`.
    One { glob: GlobMatcher, hidden: bool },
}

/// What a rule matches.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// A bare tool name: every action of that kind.
    AnyOf(ToolKind),
    /// `Bash(pattern)`, and when its words name a known command with flags
    /// ([`crate::normalize::shell::flags`]), the same taken apart: deny and ask rules also match
    /// any spelling of those flags.
    Command(Regex, Option<FlagRule>),
    /// `Read(path)`.
    ReadPath(PathPattern),
    /// `Edit(path)` / `Write(path)`.
    WritePath(PathPattern),
    /// `WebFetch(domain:…)`.
    Domain(DomainPattern),
    /// `mcp__server[__tool]`.
    Mcp {
        /// Server name pattern.
        server: Regex,
        /// Tool name pattern; `None` covers every tool of the server.
        tool: Option<Regex>,
    },
}

/// A Bash rule taken apart by its flags: it matches a command with the same head, at least these
/// flags (in any spelling) and operands its pattern matches.
#[derive(Debug, Clone)]
pub struct FlagRule {
    head: String,
    flags: std::collections::BTreeSet<String>,
    operands: Regex,
}

impl FlagRule {
    fn matches(&self, text: &str) -> bool {
        let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
        crate::normalize::shell::flags::parse(&words).is_some_and(|f| {
            f.head == self.head
                && self.flags.is_subset(&f.flags)
                && self.operands.is_match(&f.operands.join(" "))
        })
    }
}

/// `domain:example.com` or `domain:*.example.com`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainPattern {
    /// Exactly this host.
    Exact(String),
    /// Any subdomain of this suffix (not the bare suffix itself).
    Subdomains(String),
}

/// Parses a rule's text into a matcher.
pub fn parse(text: &str) -> Result<Matcher, RuleError> {
    let err = |kind: RuleErrorKind| RuleError {
        rule: text.to_string(),
        kind,
    };
    let text_trimmed = text.trim();
    if text_trimmed.is_empty() {
        return Err(err(RuleErrorKind::Empty));
    }
    if let Some(rest) = text_trimmed.strip_prefix("mcp__") {
        return parse_mcp(rest).map_err(|e| err(e.into()));
    }
    let (tool, spec) = match text_trimmed.split_once('(') {
        None => (text_trimmed, None),
        Some((tool, rest)) => {
            let spec = rest
                .strip_suffix(')')
                .ok_or_else(|| err(RuleErrorKind::Unclosed))?;
            (tool, Some(spec))
        }
    };
    let kind = match tool {
        "Bash" => ToolKind::Bash,
        "Read" | "Grep" | "Glob" | "LS" => ToolKind::Read,
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => ToolKind::Write,
        "WebFetch" => ToolKind::WebFetch,
        other => return Err(err(RuleErrorKind::UnknownTool(other.to_string()))),
    };
    let spec = match spec {
        None => return Ok(Matcher::AnyOf(kind)),
        Some(s) if s.trim().is_empty() => return Err(err(RuleErrorKind::EmptySpecifier)),
        Some(s) => s,
    };
    match kind {
        ToolKind::Bash => {
            let re = command_regex(spec).map_err(|e| err(e.into()))?;
            let words: Vec<&str> = spec.split_whitespace().collect();
            let flags = crate::normalize::shell::flags::parse(&words).and_then(|f| {
                Some(FlagRule {
                    operands: command_regex(&f.operands.join(" ")).ok()?,
                    head: f.head,
                    flags: f.flags,
                })
            });
            Ok(Matcher::Command(re, flags))
        }
        ToolKind::Read => path_pattern(spec)
            .map(Matcher::ReadPath)
            .map_err(|e| err(e.into())),
        ToolKind::Write => path_pattern(spec)
            .map(Matcher::WritePath)
            .map_err(|e| err(e.into())),
        ToolKind::WebFetch => {
            let domain = spec
                .strip_prefix("domain:")
                .ok_or_else(|| err(RuleErrorKind::NotADomain))?
                .trim()
                .trim_end_matches('.')
                .to_ascii_lowercase();
            if domain.is_empty() || domain.contains(['/', ' ', ':']) {
                return Err(err(RuleErrorKind::NotAHost));
            }
            Ok(Matcher::Domain(match domain.strip_prefix("*.") {
                Some(suffix) => DomainPattern::Subdomains(suffix.to_string()),
                None if domain == "*" => DomainPattern::Subdomains(String::new()),
                None => DomainPattern::Exact(domain),
            }))
        }
        // MCP rules are parsed above, by their `mcp__` prefix.
        ToolKind::Mcp => Err(err(PatternError::McpSpecifier.into())),
    }
}

fn parse_mcp(rest: &str) -> Result<Matcher, PatternError> {
    if rest.contains('(') {
        return Err(PatternError::McpSpecifier);
    }
    let (server, tool) = match rest.split_once("__") {
        Some((s, t)) => (s, Some(t)),
        None => (rest, None),
    };
    if server.is_empty() {
        return Err(PatternError::McpServerMissing);
    }
    let tool = match tool {
        None | Some("*") => None,
        Some("") => return Err(PatternError::McpToolMissing),
        Some(t) => Some(wildcard_regex(t, false)?),
    };
    Ok(Matcher::Mcp {
        server: wildcard_regex(server, false)?,
        tool,
    })
}

/// Compiles a Bash specifier: `*` matches anything, a trailing ` *` or `:*` is a word boundary.
pub fn command_regex(spec: &str) -> Result<Regex, PatternError> {
    let spec = spec.trim();
    let spec = match spec.strip_suffix(":*") {
        Some(prefix) => format!("{prefix} *"),
        None => spec.to_string(),
    };
    // Match on whitespace-collapsed text, so collapse the pattern the same way.
    let spec = spec.split_whitespace().collect::<Vec<_>>().join(" ");
    wildcard_regex(&spec, true)
}

fn wildcard_regex(spec: &str, word_boundary_suffix: bool) -> Result<Regex, PatternError> {
    let (body, tail) = match spec.strip_suffix(" *") {
        Some(prefix) if word_boundary_suffix && !prefix.is_empty() => (prefix, "(?: .*)?"),
        _ => (spec, ""),
    };
    let mut re = String::from("(?s)^");
    for (i, piece) in body.split('*').enumerate() {
        if i > 0 {
            re.push_str(".*");
        }
        re.push_str(&regex::escape(piece));
    }
    re.push_str(tail);
    re.push('$');
    Ok(Regex::new(&re)?)
}

/// Compiles a path specifier (`./src/**`, `~/.ssh/**`, `//etc/passwd`, `.env`).
pub fn path_pattern(spec: &str) -> Result<PathPattern, PatternError> {
    let spec = spec.trim();
    let (anchor, rel) = if let Some(r) = spec.strip_prefix("//") {
        (Anchor::Absolute, r)
    } else if let Some(r) = spec.strip_prefix("~/") {
        (Anchor::Home, r)
    } else if spec == "~" {
        (Anchor::Home, "")
    } else if let Some(r) = spec.strip_prefix('/') {
        (Anchor::ProjectRoot, r)
    } else if let Some(r) = spec.strip_prefix("./") {
        (Anchor::Cwd, r)
    } else if spec.contains('/') {
        (Anchor::Cwd, spec)
    } else {
        (Anchor::AnyDepth, spec)
    };
    let rel = rel.trim_end_matches('/');
    if rel.split('/').any(|c| c == "..") {
        return Err(PatternError::ParentDir);
    }
    // An empty rest (`//`, `~`, `./`) names the base directory itself, nothing below it.
    let exact_base = rel.is_empty();
    let rel = if exact_base { "**" } else { rel };
    let glob = build_glob(rel)?;
    let dir_itself = match rel.strip_suffix("/**") {
        Some(dir) => Some(build_glob(dir)?),
        None => None,
    };
    let comps = if exact_base {
        Vec::new()
    } else {
        rel.split('/')
            .filter(|c| !c.is_empty())
            .map(|c| {
                if c == "**" {
                    Ok(Comp::AnyDepth)
                } else {
                    Ok(Comp::One {
                        glob: build_glob(c)?,
                        hidden: c.starts_with('.'),
                    })
                }
            })
            .collect::<Result<Vec<_>, PatternError>>()?
    };
    Ok(PathPattern {
        anchor,
        glob,
        dir_itself,
        exact_base,
        comps,
    })
}

fn build_glob(pattern: &str) -> Result<GlobMatcher, PatternError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g: Glob| g.compile_matcher())
        .map_err(|source| PatternError::Glob {
            glob: pattern.to_string(),
            source,
        })
}

impl PathPattern {
    /// Whether `path` (absolute, normalised) matches. `broad` widens bare names to any directory
    /// (used for deny and ask rules, where matching more is the safe side).
    pub fn matches(&self, path: &Path, ctx: &Context, broad: bool) -> bool {
        let try_rel = |base: &Path| -> bool {
            match path.strip_prefix(base) {
                Ok(rel) => self.matches_rel(rel),
                Err(_) => false,
            }
        };
        match self.anchor {
            Anchor::Absolute => path
                .strip_prefix("/")
                .is_ok_and(|rel| self.matches_rel(rel)),
            Anchor::Home => ctx.home.as_deref().is_some_and(try_rel),
            Anchor::ProjectRoot => {
                if ctx.workspace_roots.is_empty() {
                    try_rel(&ctx.cwd)
                } else {
                    ctx.workspace_roots.iter().any(|r| try_rel(r))
                }
            }
            Anchor::Cwd => try_rel(&ctx.cwd),
            Anchor::AnyDepth => {
                let name_matches = path
                    .file_name()
                    .is_some_and(|n| self.glob.is_match(Path::new(n)));
                if broad {
                    // Any component: `.git` also covers files inside `.git/`.
                    name_matches
                        || path
                            .iter()
                            .any(|c| c != "/" && self.glob.is_match(Path::new(c)))
                } else {
                    name_matches && path.starts_with(&ctx.cwd)
                }
            }
        }
    }

    /// Whether some path under the directory `dir` (absolute, normalised), or `dir` itself, may
    /// match, judged from the pattern alone (no file system). With `skip_hidden`, paths with a
    /// component below `dir` that starts with `.` do not count (ripgrep's default).
    /// Conservative: `true` whenever a match cannot be ruled out.
    pub fn may_match_under(&self, dir: &Path, ctx: &Context, skip_hidden: bool) -> bool {
        let dir_comps: Vec<String> = dir
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(n) => Some(n.to_string_lossy().to_string()),
                _ => None,
            })
            .collect();
        let anchored = |base: &Path| {
            let mut full: Vec<Comp> = base
                .components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(n) => {
                        let name = n.to_string_lossy();
                        build_glob(&globset_escape(&name))
                            .ok()
                            .map(|glob| Comp::One {
                                glob,
                                hidden: name.starts_with('.'),
                            })
                    }
                    _ => None,
                })
                .collect();
            if self.exact_base {
                // Only the base itself: under `dir` when the base is `dir` or below it.
                return full.len() >= dir_comps.len()
                    && comps_overlap(&full, &dir_comps, skip_hidden);
            }
            full.extend(self.comps.iter().cloned());
            comps_overlap(&full, &dir_comps, skip_hidden)
        };
        match self.anchor {
            Anchor::Absolute => anchored(Path::new("/")),
            Anchor::Home => ctx.home.as_deref().is_none_or(anchored),
            Anchor::ProjectRoot => {
                if ctx.workspace_roots.is_empty() {
                    anchored(&ctx.cwd)
                } else {
                    ctx.workspace_roots.iter().any(|r| anchored(r))
                }
            }
            Anchor::Cwd => anchored(&ctx.cwd),
            Anchor::AnyDepth => {
                // A component of `dir` itself already matches: everything under it does.
                if dir_comps.iter().any(|c| self.glob.is_match(Path::new(c))) {
                    return true;
                }
                // Otherwise a name below `dir` must match, and a hidden-only name cannot be
                // seen by a reader that skips hidden files.
                !(skip_hidden
                    && self
                        .comps
                        .iter()
                        .all(|c| matches!(c, Comp::One { hidden: true, .. })))
            }
        }
    }

    fn matches_rel(&self, rel: &Path) -> bool {
        if self.exact_base {
            return rel.as_os_str().is_empty();
        }
        self.glob.is_match(rel) || self.dir_itself.as_ref().is_some_and(|d| d.is_match(rel))
    }
}

/// Escapes a literal name for globset.
fn globset_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Whether a pattern (its components from the root) may match `dir` or a path below it. Below
/// `dir`, any remaining component can be met by some name, except a hidden-only one when hidden
/// names are skipped.
fn comps_overlap(pat: &[Comp], dir: &[String], skip_hidden: bool) -> bool {
    match (pat.first(), dir.first()) {
        // Past `dir`: the rest of the pattern names paths under it (or `dir` itself).
        (_, None) => pat.iter().all(|c| match c {
            Comp::AnyDepth => true,
            Comp::One { hidden, .. } => !(skip_hidden && *hidden),
        }),
        // The pattern ends above `dir`: it names an ancestor, not what is under `dir`.
        (None, Some(_)) => false,
        (Some(Comp::AnyDepth), Some(_)) => {
            comps_overlap(&pat[1..], dir, skip_hidden) || comps_overlap(pat, &dir[1..], skip_hidden)
        }
        (Some(Comp::One { glob, .. }), Some(d)) => {
            glob.is_match(Path::new(d)) && comps_overlap(&pat[1..], &dir[1..], skip_hidden)
        }
    }
}

impl DomainPattern {
    /// Whether `host` (lower-case) matches.
    pub fn matches(&self, host: &str) -> bool {
        match self {
            DomainPattern::Exact(d) => host == d,
            DomainPattern::Subdomains(s) if s.is_empty() => !host.is_empty(),
            DomainPattern::Subdomains(s) => {
                host.len() > s.len() + 1
                    && host.ends_with(s.as_str())
                    && host.as_bytes()[host.len() - s.len() - 1] == b'.'
            }
        }
    }
}

impl Matcher {
    /// The kind of action the rule covers.
    pub fn tool(&self) -> ToolKind {
        match self {
            Matcher::AnyOf(k) => *k,
            Matcher::Command(..) => ToolKind::Bash,
            Matcher::ReadPath(_) => ToolKind::Read,
            Matcher::WritePath(_) => ToolKind::Write,
            Matcher::Domain(_) => ToolKind::WebFetch,
            Matcher::Mcp { .. } => ToolKind::Mcp,
        }
    }

    /// Whether this rule matches a non-shell action, or one text of a shell command.
    /// `broad` is true for deny and ask rules.
    pub fn matches_action(&self, action: &NormalizedAction, ctx: &Context, broad: bool) -> bool {
        match (self, action) {
            (Matcher::AnyOf(ToolKind::Bash), NormalizedAction::Shell(_))
            | (Matcher::AnyOf(ToolKind::Read), NormalizedAction::Read(_))
            | (Matcher::AnyOf(ToolKind::Write), NormalizedAction::Write(_))
            | (Matcher::AnyOf(ToolKind::WebFetch), NormalizedAction::Fetch { .. }) => true,
            (Matcher::ReadPath(p), NormalizedAction::Read(path))
            | (Matcher::WritePath(p), NormalizedAction::Write(path)) => p.matches(path, ctx, broad),
            (Matcher::Domain(d), NormalizedAction::Fetch { host, .. }) => d.matches(host),
            (Matcher::Mcp { server, tool }, NormalizedAction::Mcp { server: s, tool: t }) => {
                server.is_match(s) && tool.as_ref().is_none_or(|re| re.is_match(t))
            }
            _ => false,
        }
    }

    /// Whether this rule matches one text of a shell command.
    pub fn matches_command_text(&self, text: &str) -> bool {
        match self {
            Matcher::AnyOf(ToolKind::Bash) => true,
            Matcher::Command(re, _) => re.is_match(text),
            _ => false,
        }
    }

    /// Whether a Bash rule matches a command text as deny and ask rules match: also through the
    /// canonical spelling of its options (`Bash(rm -rf *)` matches the canonical `rm -fr /`).
    pub fn matches_command_broad(&self, text: &str) -> bool {
        match self {
            Matcher::Command(re, Some(flags)) => re.is_match(text) || flags.matches(text),
            _ => self.matches_command_text(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn ctx() -> Context {
        Context {
            cwd: PathBuf::from("/work/repo"),
            workspace_roots: vec![PathBuf::from("/work/repo")],
            home: Some(PathBuf::from("/home/u")),
            git_dirs: Vec::new(),
        }
    }

    fn cmd(rule: &str, text: &str) -> bool {
        parse(rule).expect("parses").matches_command_text(text)
    }

    #[test]
    fn bash_word_boundary_and_star_anywhere() {
        assert!(cmd("Bash(ls *)", "ls -la"));
        assert!(cmd("Bash(ls *)", "ls"));
        assert!(!cmd("Bash(ls *)", "lsof"));
        assert!(cmd("Bash(ls*)", "lsof"));
        assert!(cmd("Bash(git * main)", "git push origin main"));
        assert!(!cmd("Bash(git * main)", "git push origin main2"));
        assert!(cmd("Bash(git push *)", "git push --force origin main"));
        assert!(!cmd("Bash(git push *)", "git pushx"));
        assert!(cmd("Bash(git status)", "git status"));
        assert!(!cmd("Bash(git status)", "git status --short"));
        assert!(cmd("Bash(*)", "anything at all"));
        assert!(cmd("Bash", "anything at all"));
    }

    #[test]
    fn legacy_colon_star_is_a_prefix() {
        assert!(cmd("Bash(npm run test:*)", "npm run test"));
        assert!(cmd("Bash(npm run test:*)", "npm run test -- --watch"));
        assert!(!cmd("Bash(npm run test:*)", "npm run testing"));
    }

    #[test]
    fn regex_metacharacters_are_literal() {
        assert!(cmd("Bash(echo a.b)", "echo a.b"));
        assert!(!cmd("Bash(echo a.b)", "echo axb"));
        assert!(cmd("Bash(grep -E (a|b) *)", "grep -E (a|b) file"));
    }

    fn path(rule: &str, p: &str, broad: bool) -> bool {
        let m = parse(rule).expect("parses");
        let c = ctx();
        let action = if rule.starts_with("Read") {
            NormalizedAction::Read(c.resolve(p))
        } else {
            NormalizedAction::Write(c.resolve(p))
        };
        m.matches_action(&action, &c, broad)
    }

    #[test]
    fn path_globs() {
        assert!(path("Read(./src/**)", "src/a/b.rs", false));
        assert!(path("Read(./src/**)", "src", false));
        assert!(!path("Read(./src/**)", "srcx/a", false));
        assert!(path("Edit(./src/*.rs)", "src/a.rs", false));
        assert!(
            !path("Edit(./src/*.rs)", "src/a/b.rs", false),
            "* must not cross /"
        );
        assert!(path("Edit(src/**/*.rs)", "src/a/b.rs", false));
        assert!(path("Read(./.env)", ".env", true));
        assert!(path("Read(./.env)", "src/../.env", true));
        assert!(!path("Read(./.env)", ".env.example", true));
        assert!(path("Read(~/.ssh/**)", "~/.ssh/id_rsa", true));
        assert!(path("Read(//etc/passwd)", "/etc/passwd", true));
        assert!(path("Read(/Cargo.toml)", "/work/repo/Cargo.toml", false));
        assert!(!path("Read(/Cargo.toml)", "/work/other/Cargo.toml", false));
        assert!(
            path("Edit(~)", "~", true),
            "~ alone is the home directory itself"
        );
        assert!(!path("Edit(~)", "~/x", true));
        assert!(path("Edit(//)", "/", true));
        assert!(!path("Edit(//)", "/etc", true));
        assert!(path("Edit(//etc)", "/etc", true));
        assert!(!path("Edit(//etc)", "/etc/passwd", true));
    }

    #[test]
    fn bare_names_match_at_any_depth() {
        assert!(path("Read(.env)", "a/b/.env", true));
        assert!(
            path("Read(*.pem)", "/etc/ssl/x.pem", true),
            "deny side: anywhere"
        );
        assert!(
            !path("Read(*.pem)", "/etc/ssl/x.pem", false),
            "allow side: only under cwd"
        );
        assert!(path("Read(*.pem)", "keys/x.pem", false));
        assert!(path("Edit(.git)", ".git/hooks/pre-commit", true));
    }

    #[test]
    fn domains_and_mcp() {
        let d = parse("WebFetch(domain:example.com)").expect("parses");
        let c = ctx();
        let f = |h: &str| NormalizedAction::Fetch {
            url: String::new(),
            host: h.into(),
        };
        assert!(d.matches_action(&f("example.com"), &c, false));
        assert!(!d.matches_action(&f("evil-example.com"), &c, false));
        assert!(!d.matches_action(&f("a.example.com"), &c, false));
        let s = parse("WebFetch(domain:*.example.com)").expect("parses");
        assert!(s.matches_action(&f("a.example.com"), &c, false));
        assert!(!s.matches_action(&f("evil-example.com"), &c, false));
        let m = |r: &str, s: &str, t: &str| {
            parse(r).expect("parses").matches_action(
                &NormalizedAction::Mcp {
                    server: s.into(),
                    tool: t.into(),
                },
                &c,
                false,
            )
        };
        assert!(m("mcp__github", "github", "create_issue"));
        assert!(m("mcp__github__*", "github", "create_issue"));
        assert!(m("mcp__github__create_issue", "github", "create_issue"));
        assert!(!m("mcp__github__create_issue", "github", "delete_repo"));
        assert!(!m("mcp__github", "gitlab", "create_issue"));
        assert!(m("mcp__github__delete_*", "github", "delete_repo"));
    }

    #[test]
    fn bad_rules_are_errors() {
        for bad in [
            "",
            "Bash(",
            "Bash()",
            "Shell(ls)",
            "WebFetch(example.com)",
            "Read(../x)",
            "mcp__",
            "mcp__s__",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should not parse");
        }
    }
}

//! Policy: the deterministic rules, and how they decide.
//!
//! This module owns evaluation and its guarantees. Rules are tried deny, then ask, then allow;
//! nothing matched means `[policy] default` (ask: the reviewer decides). A deny can never be
//! overridden. A shell line is judged command by command ([`crate::normalize::shell`]): a deny or
//! ask rule that matches any command, any file it reads or writes, or any host it contacts
//! applies; an allow needs every command allowed by a `Bash` rule, every file it writes allowed
//! by an `Edit`/`Write` rule, no read of a protected file or outside the workspace, and nothing
//! dynamic left. Built-in protections ([`protect`]) are never allowed by a rule. Rule grammar
//! lives in [`rule`]; imports of other agents' policies in [`import`].

pub mod error;
pub mod import;
pub mod protect;
pub mod rule;
pub mod testing;
pub mod tree;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::{Config, RuleSpec};
use crate::normalize::{Context, NormalizedAction, ShellAnalysis, shell, shell_text};
use crate::verdict::{Effect, RuleRef};

pub use error::{
    ImportError, PatternError, PolicyError, PolicyErrorKind, ProtectError, RuleError,
    RuleErrorKind, TestFileError,
};
pub use rule::Matcher;

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// What it does.
    pub effect: Effect,
    /// The rule as written.
    pub pattern: String,
    /// `file:line` it came from.
    pub source: String,
    /// Why it exists, if the author said.
    pub justification: Option<String>,
    /// The compiled matcher.
    pub matcher: Matcher,
}

impl Rule {
    /// The rule as shown to clients.
    pub fn to_ref(&self) -> RuleRef {
        RuleRef {
            effect: self.effect,
            pattern: self.pattern.clone(),
            source: self.source.clone(),
        }
    }
}

/// The result of evaluating the rules on one action.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Deny, ask (the reviewer decides) or allow.
    pub effect: Effect,
    /// The rule that decided, or `None` when no rule did.
    pub rule: Option<RuleRef>,
    /// Why, in one sentence.
    pub reason: String,
    /// Facts established on the way (wrappers removed, privileges, files, hosts), for the reviewer.
    pub facts: Vec<String>,
}

/// Built-in behaviours that are not rules.
#[derive(Debug, Clone)]
pub struct Settings {
    /// What nothing matched means (ask or deny).
    pub default: Effect,
    /// Reads by shell commands and writes outside every workspace root.
    pub outside_workspace: Effect,
    /// Downloads fed to an interpreter.
    pub remote_code: Effect,
    /// Paths no rule may allow touching.
    pub protections: protect::Protections,
}

/// The compiled policy.
#[derive(Debug, Clone)]
pub struct Policy {
    rules: Vec<Rule>,
    settings: Settings,
}

/// A rule as listed by `GET /v1/policy` and `guardian policy`.
#[derive(Debug, Clone, Serialize)]
pub struct RuleListing {
    /// deny, ask or allow.
    pub effect: Effect,
    /// The rule as written.
    pub pattern: String,
    /// `file:line`.
    pub source: String,
}

/// The context rule examples (`match`/`not_match`) are checked in.
pub fn example_context() -> Context {
    Context {
        cwd: PathBuf::from("/workspace"),
        workspace_roots: vec![PathBuf::from("/workspace")],
        home: Some(PathBuf::from("/home/user")),
        git_dirs: Vec::new(),
    }
}

impl Policy {
    /// Also protects the files these absolute globs match as guardian's own (the audit log's
    /// segments): see [`protect::Protections::with_own_globs`].
    pub fn protecting_own_globs(mut self, globs: &[String]) -> Result<Policy, Vec<PolicyError>> {
        self.settings.protections =
            self.settings
                .protections
                .with_own_globs(globs)
                .map_err(|e| {
                    vec![PolicyError {
                        source_loc: "audit.path".into(),
                        kind: PolicyErrorKind::OwnFiles(e),
                    }]
                })?;
        Ok(self)
    }

    /// Compiles a config's rules, imports and settings. `own_files` are guardian's config,
    /// policy and audit files (protected from writes).
    pub fn from_config(
        cfg: &Config,
        mut own_files: Vec<PathBuf>,
    ) -> Result<Policy, Vec<PolicyError>> {
        let mut specs = cfg.rule_specs();
        let mut errors = Vec::new();
        for (path, source) in cfg.imports() {
            match import::import_file(&path) {
                Ok(imported) => {
                    for w in &imported.warnings {
                        tracing::warn!(import = %path.display(), "{w}");
                    }
                    specs.extend(imported.rules);
                    own_files.push(crate::normalize::absolute(&path));
                }
                Err(error) => errors.push(PolicyError {
                    source_loc: source,
                    kind: PolicyErrorKind::Import { path, error },
                }),
            }
        }
        let protections =
            protect::Protections::new(&cfg.protect_read(), &cfg.protect_write(), own_files)
                .map_err(|e| {
                    vec![PolicyError {
                        source_loc: cfg.source_name.clone(),
                        kind: PolicyErrorKind::Protections(e),
                    }]
                })?;
        let settings = Settings {
            default: cfg.policy.default,
            outside_workspace: cfg.policy.outside_workspace,
            remote_code: cfg.policy.remote_code,
            protections,
        };
        match Policy::compile(&specs, settings) {
            Ok(p) if errors.is_empty() => Ok(p),
            Ok(_) => Err(errors),
            Err(mut e) => {
                errors.append(&mut e);
                Err(errors)
            }
        }
    }

    /// Compiles rules; every bad rule and every failed example is reported with its source.
    pub fn compile(specs: &[RuleSpec], settings: Settings) -> Result<Policy, Vec<PolicyError>> {
        let mut rules = Vec::with_capacity(specs.len());
        let mut errors = Vec::new();
        for spec in specs {
            match rule::parse(&spec.pattern) {
                Ok(matcher) => {
                    let r = Rule {
                        effect: spec.effect,
                        pattern: spec.pattern.clone(),
                        source: spec.source.clone(),
                        justification: spec.justification.clone(),
                        matcher,
                    };
                    for ex in &spec.matches {
                        if !example_matches(&r, ex) {
                            errors.push(PolicyError {
                                source_loc: spec.source.clone(),
                                kind: PolicyErrorKind::ExampleMissed {
                                    pattern: spec.pattern.clone(),
                                    example: ex.clone(),
                                },
                            });
                        }
                    }
                    for ex in &spec.not_matches {
                        if example_matches(&r, ex) {
                            errors.push(PolicyError {
                                source_loc: spec.source.clone(),
                                kind: PolicyErrorKind::ExampleMatched {
                                    pattern: spec.pattern.clone(),
                                    example: ex.clone(),
                                },
                            });
                        }
                    }
                    rules.push(r);
                }
                Err(error) => errors.push(PolicyError {
                    source_loc: spec.source.clone(),
                    kind: PolicyErrorKind::Rule(error),
                }),
            }
        }
        if errors.is_empty() {
            rules.sort_by_key(|r| r.effect);
            Ok(Policy { rules, settings })
        } else {
            Err(errors)
        }
    }

    /// A policy with no rules and default settings (everything asks).
    pub fn empty() -> Policy {
        let protections = protect::Protections::new(&[], &[], Vec::new()).unwrap_or_else(|e| {
            // The built-in patterns are constants checked by tests; this cannot fail.
            unreachable!("built-in protections do not compile: {e}")
        });
        Policy {
            rules: Vec::new(),
            settings: Settings {
                default: Effect::Ask,
                outside_workspace: Effect::Ask,
                remote_code: Effect::Deny,
                protections,
            },
        }
    }

    /// The rules in evaluation order.
    pub fn listing(&self) -> Vec<RuleListing> {
        self.rules
            .iter()
            .map(|r| RuleListing {
                effect: r.effect,
                pattern: r.pattern.clone(),
                source: r.source.clone(),
            })
            .collect()
    }

    /// What decides, as text: every rule's effect and pattern in order, the settings' effects
    /// and the protected patterns. Where rules are written (file and line) and where guardian's
    /// own files live are left out, so replicas of a fleet with one policy agree on it.
    pub fn fingerprint_text(&self) -> String {
        let rules: Vec<(Effect, &str)> = self
            .rules
            .iter()
            .map(|r| (r.effect, r.pattern.as_str()))
            .collect();
        let s = &self.settings;
        format!(
            "{rules:?}\u{0}{:?} {:?} {:?}\u{0}{:?}",
            s.default,
            s.outside_workspace,
            s.remote_code,
            s.protections.patterns()
        )
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Decides deny, ask or allow for one action.
    pub fn evaluate(&self, action: &NormalizedAction, ctx: &Context) -> Evaluation {
        self.run(action, ctx, &mut Trace(None))
    }

    /// Decides, and records every step: each command, target and rule tried.
    pub fn explain(&self, action: &NormalizedAction, ctx: &Context) -> (Evaluation, Vec<String>) {
        let mut steps = Vec::new();
        let e = self.run(action, ctx, &mut Trace(Some(&mut steps)));
        (e, steps)
    }

    fn run(&self, action: &NormalizedAction, ctx: &Context, t: &mut Trace<'_>) -> Evaluation {
        match action {
            NormalizedAction::Shell(a) => self.shell(a, ctx, t),
            NormalizedAction::Read(path) => self.file(path, false, ctx, t),
            NormalizedAction::ReadTree(path) => self.read_tree(path, ctx, t),
            NormalizedAction::Write(path) => self.file(path, true, ctx, t),
            NormalizedAction::Fetch { .. } | NormalizedAction::Mcp { .. } => {
                let facts = match action {
                    NormalizedAction::Fetch { host, .. } => vec![format!("host: {host}")],
                    _ => Vec::new(),
                };
                for effect in [Effect::Deny, Effect::Ask, Effect::Allow] {
                    let kind = match action {
                        NormalizedAction::Fetch { .. } => rule::ToolKind::WebFetch,
                        _ => rule::ToolKind::Mcp,
                    };
                    if let Some(r) = self.first(effect, kind, "the action", t, |m| {
                        m.matches_action(action, ctx, effect != Effect::Allow)
                    }) {
                        return decided(effect, r, String::new(), facts);
                    }
                }
                self.nothing_matched(facts)
            }
        }
    }

    fn nothing_matched(&self, facts: Vec<String>) -> Evaluation {
        self.unmatched("no rule matches this action".into(), facts)
    }

    /// The first rule of `effect` for tools of `kind` whose matcher satisfies `pred`. When
    /// tracing, records every rule tried against `what` (for `policy explain`).
    fn first(
        &self,
        effect: Effect,
        kind: rule::ToolKind,
        what: &str,
        t: &mut Trace<'_>,
        mut pred: impl FnMut(&Matcher) -> bool,
    ) -> Option<&Rule> {
        let candidates = self
            .rules
            .iter()
            .filter(|r| r.effect == effect && r.matcher.tool() == kind);
        if !t.on() {
            return candidates.into_iter().find(|r| pred(&r.matcher));
        }
        let mut tried = Vec::new();
        let mut found = None;
        for r in candidates {
            if pred(&r.matcher) {
                tried.push(format!("{} MATCHES ({})", r.pattern, r.source));
                found = Some(r);
                break;
            }
            tried.push(format!("{} no", r.pattern));
        }
        if !tried.is_empty() {
            t.step(format!(
                "  {} rules on {what}: {}",
                effect.as_str(),
                tried.join("; ")
            ));
        }
        found
    }

    /// A search of a directory tree: the directory as a read, then what [`Policy::scan_tree`]
    /// finds under it, each file as a read (a deny denies, a protection or an ask rule asks); what
    /// cannot be settled is never allowed by a rule.
    fn read_tree(&self, dir: &Path, ctx: &Context, t: &mut Trace<'_>) -> Evaluation {
        let mut eval = self.file(dir, false, ctx, t);
        if eval.effect != Effect::Allow && eval.rule.is_some() || eval.effect == Effect::Deny {
            return eval;
        }
        eval.facts
            .push(format!("reads everything under {}", dir.display()));
        match self.scan_tree(dir, false, ctx) {
            tree::TreeScan::Clear => eval,
            tree::TreeScan::Files(found) => {
                let mut asked = None;
                for f in &found {
                    let e = self.file(f, false, ctx, t);
                    match e.effect {
                        Effect::Deny => return e,
                        Effect::Ask if e.reason.contains("protected") || e.rule.is_some() => {
                            asked.get_or_insert(e);
                        }
                        _ => {}
                    }
                }
                match asked {
                    Some(e) => ask(
                        format!("the search reads {}: {}", dir.display(), e.reason),
                        eval.facts,
                    ),
                    None => eval,
                }
            }
            tree::TreeScan::Unsure(why) => ask(
                format!("the search of {}: {why}", dir.display()),
                eval.facts,
            ),
        }
    }

    fn file(&self, path: &Path, write: bool, ctx: &Context, t: &mut Trace<'_>) -> Evaluation {
        let verb = if write { "write" } else { "read" };
        let facts = vec![format!("{verb}: {}", path.display())];
        let action = if write {
            NormalizedAction::Write(path.to_path_buf())
        } else {
            NormalizedAction::Read(path.to_path_buf())
        };
        t.step(format!("{verb} {}", path.display()));
        let kind = if write {
            rule::ToolKind::Write
        } else {
            rule::ToolKind::Read
        };
        let what = path.display().to_string();
        for effect in [Effect::Deny, Effect::Ask] {
            if let Some(r) = self.first(effect, kind, &what, t, |m| {
                m.matches_action(&action, ctx, true)
            }) {
                return decided(effect, r, String::new(), facts);
            }
        }
        let protected = if write {
            self.settings.protections.write(path, ctx)
        } else {
            self.settings.protections.read(path, ctx)
        };
        if let Some(p) = protected {
            t.step(format!("protected path ({p}): no rule may allow it"));
            return ask(
                format!(
                    "{} is protected ({p}): no rule may allow this {verb}",
                    path.display()
                ),
                facts,
            );
        }
        if let Some(r) = self.first(Effect::Allow, kind, &what, t, |m| {
            m.matches_action(&action, ctx, false)
        }) {
            return decided(Effect::Allow, r, String::new(), facts);
        }
        if !ctx.in_workspace(path) && self.settings.outside_workspace == Effect::Deny {
            return builtin_deny(
                format!("{} is outside the workspace", path.display()),
                "outside_workspace",
                facts,
            );
        }
        self.nothing_matched(facts)
    }

    fn shell(&self, a: &ShellAnalysis, ctx: &Context, t: &mut Trace<'_>) -> Evaluation {
        let facts = shell_facts(a, ctx);
        // Resolve every file once (walking recursively read directories where needed).
        let (resolved, unsure) = self.resolve_all(a, ctx);
        if t.on() {
            for (c, (reads, writes)) in a.commands.iter().zip(&resolved) {
                t.step(describe_command(c, reads, writes));
            }
            for u in &a.unknowns {
                t.step(format!("unknown: {u}"));
            }
            for r in &a.remote_code {
                t.step(format!("remote code: {r}"));
            }
        }
        if !a.remote_code.is_empty() && self.settings.remote_code == Effect::Deny {
            let why = format!(
                "{}: remote code is denied ([policy] remote_code = \"deny\")",
                a.remote_code[0]
            );
            t.step(format!("deny: {why}"));
            return builtin_deny(why, "remote_code", facts);
        }
        for effect in [Effect::Deny, Effect::Ask] {
            if let Some((r, what)) = self.shell_match(effect, a, &resolved, ctx, t) {
                return decided(effect, r, what, facts);
            }
        }
        if !a.remote_code.is_empty() {
            return ask(a.remote_code[0].clone(), facts);
        }
        // Allow: every part must be allowed, nothing dynamic.
        if let Some(e) = &a.parse_error {
            return ask(
                format!("the command could not be parsed ({e}); rules cannot allow it"),
                facts,
            );
        }
        if let Some(u) = a.unknowns.first() {
            return ask(
                format!("{u}; rules cannot allow what is not known statically"),
                facts,
            );
        }
        let mut deciding: Option<&Rule> = None;
        for ((c, (reads, writes)), unsure) in a.commands.iter().zip(&resolved).zip(&unsure) {
            match self.allow_command(c, reads, writes, unsure.as_deref(), ctx, t) {
                Ok(Some(r)) => {
                    deciding.get_or_insert(r);
                }
                Ok(None) => {}
                Err(not) => return self.refuse(not, facts),
            }
        }
        match deciding {
            Some(r) => decided(Effect::Allow, r, String::new(), facts),
            None if a.commands.iter().any(|c| !c.writes.is_empty()) => {
                // Only redirections: allowed by the Edit/Write rules checked above.
                Evaluation {
                    effect: Effect::Allow,
                    rule: None,
                    reason: "every file written is allowed by an Edit/Write rule".into(),
                    facts,
                }
            }
            None => ask("nothing to run".into(), facts),
        }
    }

    /// Whether rules allow one command of a line: its text by a Bash rule, every file it writes
    /// by an Edit/Write rule (never a protected one), every file it reads outside the workspace
    /// by a Read rule (never a protected one), and nothing about it unsure. `Ok` carries the Bash
    /// rule that allowed it (none for the wrapper part of a script judged on its own).
    fn allow_command<'p>(
        &'p self,
        c: &crate::normalize::shell::SimpleCommand,
        reads: &[PathBuf],
        writes: &[PathBuf],
        unsure: Option<&str>,
        ctx: &Context,
        t: &mut Trace<'_>,
    ) -> Result<Option<&'p Rule>, NotAllowed> {
        if let Some(d) = &c.dynamic {
            return Err(NotAllowed::Ask(format!(
                "`{}`: {d}; rules cannot allow what is not known statically",
                c.text
            )));
        }
        let mut by = None;
        if !c.wrapper_only && !c.allow_text.is_empty() {
            let what = format!("`{}`", c.allow_text);
            match self.first(Effect::Allow, rule::ToolKind::Bash, &what, t, |m| {
                m.matches_command_text(&c.allow_text)
            }) {
                Some(r) => by = Some(r),
                None => {
                    return Err(NotAllowed::Unmatched(format!(
                        "no rule allows `{}`",
                        c.allow_text
                    )));
                }
            }
        }
        if let (Some(issue), Some(r)) = (&c.option_issue, by)
            && !names_option(r, issue)
        {
            // Another allow rule may name it (`Bash(find * -delete)` after `Bash(find *)`).
            match self.rules.iter().find(|x| {
                x.effect == Effect::Allow
                    && x.matcher.matches_command_text(&c.allow_text)
                    && names_option(x, issue)
            }) {
                Some(named) => {
                    t.step(format!("{} names `{}`", named.pattern, issue.name));
                    by = Some(named);
                }
                None => {
                    return Err(NotAllowed::Ask(format!(
                        "`{}`: {}; a rule allows only what it names ({} does not name `{}`)",
                        c.text, issue.why, r.pattern, issue.name
                    )));
                }
            }
        }
        self.allow_writes(c, writes, ctx, t)?;
        for dir in &c.tree_writes {
            let dir = ctx.resolve(dir);
            if let Some(p) = self.settings.protections.tree_write(&dir, ctx) {
                return Err(NotAllowed::Ask(format!(
                    "`{}` deletes or empties {} with everything under it, which holds {p}",
                    c.text,
                    dir.display()
                )));
            }
        }
        self.allow_reads(c, reads, ctx, t)?;
        if let Some(why) = unsure {
            return Err(NotAllowed::Ask(format!("`{}`: {why}", c.text)));
        }
        Ok(by)
    }

    /// Every file a command writes: not protected, and allowed by an Edit/Write rule.
    fn allow_writes(
        &self,
        c: &crate::normalize::shell::SimpleCommand,
        writes: &[PathBuf],
        ctx: &Context,
        t: &mut Trace<'_>,
    ) -> Result<(), NotAllowed> {
        for w in writes {
            if let Some(p) = self.settings.protections.write(w, ctx) {
                return Err(NotAllowed::Ask(format!(
                    "`{}` writes {}, which is protected ({p})",
                    c.text,
                    w.display()
                )));
            }
            let action = NormalizedAction::Write(w.clone());
            let what = format!("write {}", w.display());
            if self
                .first(Effect::Allow, rule::ToolKind::Write, &what, t, |m| {
                    m.matches_action(&action, ctx, false)
                })
                .is_none()
            {
                if !ctx.in_workspace(w) && self.settings.outside_workspace == Effect::Deny {
                    return Err(NotAllowed::Deny(
                        format!("`{}` writes {}, outside the workspace", c.text, w.display()),
                        "outside_workspace",
                    ));
                }
                return Err(NotAllowed::Unmatched(format!(
                    "`{}` writes {}, and no Edit/Write rule allows that",
                    c.text,
                    w.display()
                )));
            }
        }
        Ok(())
    }

    /// Every file a command reads: not protected, and inside the workspace or allowed by a Read
    /// rule (unless `outside_workspace = "allow"`).
    fn allow_reads(
        &self,
        c: &crate::normalize::shell::SimpleCommand,
        reads: &[PathBuf],
        ctx: &Context,
        t: &mut Trace<'_>,
    ) -> Result<(), NotAllowed> {
        for r in reads {
            if let Some(p) = self.settings.protections.read(r, ctx) {
                return Err(NotAllowed::Ask(format!(
                    "`{}` reads {}, which is protected ({p})",
                    c.text,
                    r.display()
                )));
            }
            if !ctx.in_workspace(r) && self.settings.outside_workspace != Effect::Allow {
                let action = NormalizedAction::Read(r.clone());
                let what = format!("read {}", r.display());
                if self
                    .first(Effect::Allow, rule::ToolKind::Read, &what, t, |m| {
                        m.matches_action(&action, ctx, false)
                    })
                    .is_none()
                {
                    let why = format!("`{}` reads {}, outside the workspace", c.text, r.display());
                    if self.settings.outside_workspace == Effect::Deny {
                        return Err(NotAllowed::Deny(why, "outside_workspace"));
                    }
                    return Err(NotAllowed::Ask(why));
                }
            }
        }
        Ok(())
    }

    /// The evaluation of a command line rules cannot allow.
    fn refuse(&self, not: NotAllowed, facts: Vec<String>) -> Evaluation {
        match not {
            NotAllowed::Ask(why) => ask(why, facts),
            NotAllowed::Deny(why, setting) => builtin_deny(why, setting, facts),
            NotAllowed::Unmatched(why) => self.unmatched(why, facts),
        }
    }

    /// "Nothing allows this": ask, or deny when `[policy] default = "deny"`.
    fn unmatched(&self, reason: String, facts: Vec<String>) -> Evaluation {
        if self.settings.default == Effect::Deny {
            return builtin_deny(
                format!("{reason} ([policy] default = \"deny\")"),
                "default",
                facts,
            );
        }
        ask(reason, facts)
    }

    /// The first deny (or ask) rule that matches a text guardian could not fully parse: its
    /// candidate commands as text, then each candidate `reparse` admits, analysed on its own (one
    /// level only: pieces are not split again).
    fn text_match(
        &self,
        effect: Effect,
        text: &str,
        what: &str,
        reparse: impl Fn(&str) -> bool,
        ctx: &Context,
        t: &mut Trace<'_>,
    ) -> Option<(&Rule, String)> {
        let cands = shell_text::deny_candidates(text);
        if let Some(r) = self.first(effect, rule::ToolKind::Bash, what, t, |m| {
            cands.iter().any(|c| m.matches_command_broad(c))
        }) {
            return Some((r, format!("in the text {text:?}")));
        }
        for cand in cands.iter().filter(|c| c.len() < 4096 && reparse(c)) {
            let piece = shell::analyze(cand);
            if piece.parse_error.is_some() {
                continue;
            }
            let piece_resolved = self.resolve_all(&piece, ctx).0;
            let piece = ShellAnalysis {
                unparsed: Vec::new(),
                text_only: Vec::new(),
                ..piece
            };
            if let Some((r, what)) = self.shell_match(effect, &piece, &piece_resolved, ctx, t) {
                return Some((r, format!("{what}, in the text {text:?}")));
            }
        }
        None
    }

    /// The first deny (or ask) rule that matches any command, file or host of the line.
    fn shell_match(
        &self,
        effect: Effect,
        a: &ShellAnalysis,
        resolved: &[(Vec<PathBuf>, Vec<PathBuf>)],
        ctx: &Context,
        t: &mut Trace<'_>,
    ) -> Option<(&Rule, String)> {
        for text in &a.unparsed {
            // Text the parser rejected: each piece that parses on its own still has files and
            // hosts (`cat .env`).
            if let Some(m) = self.text_match(effect, text, "the unparsed text", |_| true, ctx, t) {
                return Some(m);
            }
        }
        for text in &a.text_only {
            // A line that parsed, around a nested script that did not: only pieces without
            // brackets or separators are parsed again (they cannot nest, so the parse stays
            // cheap), and the whole line is never parsed a second time.
            let flat = |c: &str| {
                !c.contains(['(', ')', '{', '}', '`', ';', '&', '|', '\n', '$', '<', '>'])
            };
            if let Some(m) = self.text_match(effect, text, "the line as text", flat, ctx, t) {
                return Some(m);
            }
        }
        for (c, (reads, writes)) in a.commands.iter().zip(resolved) {
            let what = format!("`{}`", c.text);
            if let Some(r) = self.first(effect, rule::ToolKind::Bash, &what, t, |m| {
                c.deny_texts.iter().any(|x| m.matches_command_broad(x))
            }) {
                return Some((r, format!("`{}`", c.text)));
            }
            for p in reads {
                let action = NormalizedAction::Read(p.clone());
                let what = format!("read {}", p.display());
                if let Some(r) = self.first(effect, rule::ToolKind::Read, &what, t, |m| {
                    m.matches_action(&action, ctx, true)
                }) {
                    return Some((r, format!("`{}` reads {}", c.text, p.display())));
                }
            }
            for p in writes {
                let action = NormalizedAction::Write(p.clone());
                let what = format!("write {}", p.display());
                if let Some(r) = self.first(effect, rule::ToolKind::Write, &what, t, |m| {
                    m.matches_action(&action, ctx, true)
                }) {
                    return Some((r, format!("`{}` writes {}", c.text, p.display())));
                }
            }
            for h in &c.hosts {
                let action = NormalizedAction::Fetch {
                    url: String::new(),
                    host: h.clone(),
                };
                if let Some(r) = self.first(effect, rule::ToolKind::WebFetch, h, t, |m| {
                    m.matches_action(&action, ctx, true)
                }) {
                    return Some((r, format!("`{}` contacts {h}", c.text)));
                }
            }
        }
        None
    }
}

/// Whether a rule matches one of its own examples: a command line for Bash rules, a path
/// (relative to `/workspace`, home `/home/user`) for file rules, a host or URL for WebFetch, a
/// tool name `mcp__server__tool` for MCP rules.
pub fn example_matches(r: &Rule, example: &str) -> bool {
    let ctx = example_context();
    match r.matcher.tool() {
        rule::ToolKind::Bash => {
            let a = shell::analyze(example);
            let broad = r.effect != Effect::Allow;
            a.commands.iter().any(|c| {
                if broad {
                    c.deny_texts
                        .iter()
                        .any(|t| r.matcher.matches_command_broad(t))
                } else {
                    r.matcher.matches_command_text(&c.allow_text)
                }
            })
        }
        rule::ToolKind::Read => r.matcher.matches_action(
            &NormalizedAction::Read(ctx.resolve(example)),
            &ctx,
            r.effect != Effect::Allow,
        ),
        rule::ToolKind::Write => r.matcher.matches_action(
            &NormalizedAction::Write(ctx.resolve(example)),
            &ctx,
            r.effect != Effect::Allow,
        ),
        rule::ToolKind::WebFetch => {
            let host = crate::normalize::shell::effects::host_of(example)
                .unwrap_or_else(|| example.to_ascii_lowercase());
            r.matcher.matches_action(
                &NormalizedAction::Fetch {
                    url: example.to_string(),
                    host,
                },
                &ctx,
                false,
            )
        }
        rule::ToolKind::Mcp => {
            let rest = example.strip_prefix("mcp__").unwrap_or(example);
            let (server, tool) = rest.split_once("__").unwrap_or((rest, ""));
            r.matcher.matches_action(
                &NormalizedAction::Mcp {
                    server: server.to_string(),
                    tool: tool.to_string(),
                },
                &ctx,
                false,
            )
        }
    }
}

/// Records explanation steps when asked to.
struct Trace<'a>(Option<&'a mut Vec<String>>);

impl Trace<'_> {
    fn on(&self) -> bool {
        self.0.is_some()
    }
    fn step(&mut self, s: String) {
        if let Some(v) = self.0.as_mut() {
            v.push(s);
        }
    }
}

fn decided(effect: Effect, r: &Rule, what: String, facts: Vec<String>) -> Evaluation {
    let detail = if what.is_empty() {
        String::new()
    } else {
        format!(" ({what})")
    };
    let why = r
        .justification
        .as_ref()
        .map(|j| format!(": {j}"))
        .unwrap_or_default();
    let reason = match effect {
        Effect::Deny => format!("denied by policy: {}{detail}{why}", r.pattern),
        Effect::Ask => format!("the rule {} asks for review{detail}{why}", r.pattern),
        Effect::Allow => format!("allowed by policy: {}{detail}", r.pattern),
    };
    Evaluation {
        effect,
        rule: Some(r.to_ref()),
        reason,
        facts,
    }
}

fn ask(reason: String, facts: Vec<String>) -> Evaluation {
    Evaluation {
        effect: Effect::Ask,
        rule: None,
        reason,
        facts,
    }
}

fn builtin_deny(reason: String, setting: &str, facts: Vec<String>) -> Evaluation {
    Evaluation {
        effect: Effect::Deny,
        rule: Some(RuleRef {
            effect: Effect::Deny,
            pattern: format!("built-in: {setting}"),
            source: format!("[policy] {setting}"),
        }),
        reason: format!("denied by policy: {reason}"),
        facts,
    }
}

/// The files of every command, resolved against the context: (reads, writes) per command.
/// Per command: what it reads and writes, resolved, and why its recursive reads cannot be
/// settled (if they cannot).
type Resolved = (Vec<(Vec<PathBuf>, Vec<PathBuf>)>, Vec<Option<String>>);

/// Why rules cannot allow one command of a line.
enum NotAllowed {
    /// The reviewer decides.
    Ask(String),
    /// A built-in setting denies it (`outside_workspace`).
    Deny(String, &'static str),
    /// No rule allows it: ask, or deny with `[policy] default = "deny"`.
    Unmatched(String),
}

impl Policy {
    /// The files of every command, resolved against the context: (reads, writes) per command,
    /// with the files found under recursively read directories that a deny or ask read rule or a
    /// protection covers counted as reads ([`tree`]); and per command why its recursive reads
    /// cannot be settled, if they cannot.
    fn resolve_all(&self, a: &ShellAnalysis, ctx: &Context) -> Resolved {
        let mut files = Vec::with_capacity(a.commands.len());
        let mut unsure = Vec::with_capacity(a.commands.len());
        for c in &a.commands {
            let mut reads: Vec<PathBuf> = c.reads.iter().map(|p| ctx.resolve(p)).collect();
            let mut why = None;
            for dir in &c.tree_reads {
                match self.scan_tree(&ctx.resolve(dir), c.skips_hidden, ctx) {
                    tree::TreeScan::Clear => {}
                    tree::TreeScan::Files(found) => reads.extend(found),
                    tree::TreeScan::Unsure(w) => {
                        why.get_or_insert(w);
                    }
                }
            }
            files.push((reads, c.writes.iter().map(|p| ctx.resolve(p)).collect()));
            unsure.push(why);
        }
        (files, unsure)
    }
}

/// Whether an allow rule names the option (or variable) an issue is about: the option's name,
/// or the word as written, is one of the rule's own words (`Bash(rg --pre ./bin/pdf2txt *)`).
fn names_option(r: &Rule, issue: &crate::normalize::shell::OptionIssue) -> bool {
    let inner = r
        .pattern
        .split_once('(')
        .map_or(r.pattern.as_str(), |(_, rest)| rest.trim_end_matches(')'));
    inner
        .split_whitespace()
        .any(|w| w == issue.word || w == issue.name)
}

fn describe_command(
    c: &crate::normalize::SimpleCommand,
    reads: &[PathBuf],
    writes: &[PathBuf],
) -> String {
    let mut s = format!("command `{}` [{}]", c.text, c.context);
    if !c.wrappers.is_empty() {
        s.push_str(&format!(" wrappers removed: {}", c.wrappers.join(", ")));
    }
    if c.privileged {
        s.push_str(" PRIVILEGED");
    }
    if c.wrapper_only {
        s.push_str(" (wrapper: judged by deny/ask rules only)");
    }
    if !reads.is_empty() {
        s.push_str(&format!(" reads: {}", join_paths(reads)));
    }
    if !writes.is_empty() {
        s.push_str(&format!(" writes: {}", join_paths(writes)));
    }
    if !c.hosts.is_empty() {
        s.push_str(&format!(" hosts: {}", c.hosts.join(", ")));
    }
    if !c.tree_writes.is_empty() {
        s.push_str(&format!(
            " deletes with all under: {}",
            c.tree_writes.join(", ")
        ));
    }
    if let Some(i) = &c.option_issue {
        s.push_str(&format!(" OPTION: {}", i.why));
    }
    if let Some(d) = &c.dynamic {
        s.push_str(&format!(" DYNAMIC: {d}"));
    }
    s
}

fn join_paths(p: &[PathBuf]) -> String {
    p.iter()
        .map(|x| x.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Facts for the reviewer: privileges, wrappers, files and hosts of a shell line.
fn shell_facts(a: &ShellAnalysis, ctx: &Context) -> Vec<String> {
    let mut facts = Vec::new();
    for c in &a.commands {
        if c.privileged && !c.wrapper_only {
            facts.push(format!(
                "runs with raised privileges ({}): `{}`",
                c.wrappers.join(" "),
                c.text
            ));
        }
        for w in &c.writes {
            facts.push(format!("writes {}", ctx.resolve(w).display()));
        }
        for r in &c.reads {
            facts.push(format!("reads {}", ctx.resolve(r).display()));
        }
        for d in &c.tree_reads {
            facts.push(format!(
                "reads everything under {}{}",
                ctx.resolve(d).display(),
                if c.skips_hidden {
                    " (hidden files and directories skipped)"
                } else {
                    " (hidden files included)"
                }
            ));
        }
        for h in &c.hosts {
            facts.push(format!("contacts {h}"));
        }
        for d in &c.tree_writes {
            facts.push(format!(
                "deletes or empties {} with everything under it",
                ctx.resolve(d).display()
            ));
        }
        if let Some(i) = &c.option_issue {
            facts.push(format!("`{}`: {}", c.text, i.why));
        }
    }
    for r in &a.remote_code {
        facts.push(format!("remote code: {r}"));
    }
    facts.dedup();
    facts.truncate(40);
    facts
}

#[cfg(test)]
mod tests;

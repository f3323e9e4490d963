//! Importing the policies users already have: Claude Code, OpenCode and Codex.
//!
//! This module owns translating other agents' permission formats into guardian rules, each rule
//! sourced to the file and key it came from, with warnings wherever the semantics differ:
//! - Claude Code `settings.json` / `settings.local.json`: `permissions.{allow,ask,deny}` use the
//!   same syntax as guardian and are copied (unknown tools are skipped with a warning).
//! - OpenCode `opencode.json`: v1 `permission` maps and v2 `permissions` arrays. OpenCode lets
//!   the **last** matching rule win; guardian lets the strictest win (deny > ask > allow). A
//!   leading catch-all `"*"` becomes the tool's default; every later rule that is less strict
//!   than an earlier overlapping one is reported, since guardian keeps the stricter decision.
//! - Codex `.rules`: `prefix_rule(pattern=…, decision=…, justification=…, match=…, not_match=…)`
//!   calls, parsed as a small Starlark subset (never executed); alternatives expand into several
//!   rules, and the `match`/`not_match` examples are checked against the translation.

use std::path::Path;

use serde_json::Value;

use crate::config::RuleSpec;
use crate::verdict::Effect;

use super::error::{CodexRuleError, ImportError, SyntaxError};
use super::{Rule, example_matches, rule};

/// Rules translated from one file, with notes on what could not be carried over exactly.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// The format recognised.
    pub format: String,
    /// The translated rules.
    pub rules: Vec<RuleSpec>,
    /// Where guardian's semantics differ from the source's, or what was skipped.
    pub warnings: Vec<String>,
}

/// Imports a file, choosing the format from its name and content.
pub fn import_file(path: &Path) -> Result<Imported, ImportError> {
    let text = crate::config::read_text_file(path)?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("policy")
        .to_string();
    if name.ends_with(".rules") || name.ends_with(".codexpolicy") || text.contains("prefix_rule(") {
        return import_codex(&text, &name);
    }
    let json = parse_jsonc(&text).map_err(ImportError::NotJson)?;
    if json.get("permissions").is_some_and(Value::is_object) {
        return import_claude(&json, &name);
    }
    if json.get("permission").is_some() || json.get("permissions").is_some_and(Value::is_array) {
        return import_opencode(&json, &name);
    }
    Err(ImportError::UnknownFormat)
}

/// Claude Code settings: copy rules that guardian understands.
pub fn import_claude(json: &Value, file: &str) -> Result<Imported, ImportError> {
    let mut out = Imported {
        format: "Claude Code settings".into(),
        ..Imported::default()
    };
    let perms = json
        .get("permissions")
        .and_then(Value::as_object)
        .ok_or(ImportError::NoPermissions)?;
    for (key, effect) in [
        ("deny", Effect::Deny),
        ("ask", Effect::Ask),
        ("allow", Effect::Allow),
    ] {
        let Some(list) = perms.get(key) else { continue };
        let list = list
            .as_array()
            .ok_or_else(|| ImportError::NotAList(key.to_string()))?;
        for (i, item) in list.iter().enumerate() {
            let source = format!("{file}: permissions.{key}[{i}]");
            let Some(text) = item.as_str() else {
                out.warnings
                    .push(format!("{source}: not a string, skipped"));
                continue;
            };
            match rule::parse(text) {
                Ok(_) => out.rules.push(RuleSpec {
                    effect,
                    pattern: text.to_string(),
                    source,
                    ..RuleSpec::default()
                }),
                Err(e) => out
                    .warnings
                    .push(format!("{source}: {text:?} skipped: {}", e.kind)),
            }
        }
    }
    for key in perms.keys() {
        match key.as_str() {
            "deny" | "ask" | "allow" => {}
            "additionalDirectories" => out.warnings.push(
                "permissions.additionalDirectories: guardian takes the workspace from the session's workspace_roots".into(),
            ),
            "defaultMode" => out.warnings.push(
                "permissions.defaultMode: guardian has no modes; unmatched actions go to the reviewer ([policy] default)".into(),
            ),
            other => out.warnings.push(format!("permissions.{other}: no guardian equivalent, ignored")),
        }
    }
    Ok(out)
}

/// How strict an effect is: deny > ask > allow.
fn strictness(e: Effect) -> u8 {
    match e {
        Effect::Deny => 2,
        Effect::Ask => 1,
        Effect::Allow => 0,
    }
}

fn parse_effect(v: &Value) -> Option<Effect> {
    match v.as_str()? {
        "allow" => Some(Effect::Allow),
        "ask" => Some(Effect::Ask),
        "deny" => Some(Effect::Deny),
        _ => None,
    }
}

/// One OpenCode rule: pattern, effect, and where it was written.
type Entry = (String, Effect, String);

/// A parsed call: function name, line, keyword arguments.
type Call = (String, usize, Vec<(String, Val)>);

/// OpenCode config: v1 `permission` map or v2 `permissions` array.
pub fn import_opencode(json: &Value, file: &str) -> Result<Imported, ImportError> {
    let mut out = Imported {
        format: "OpenCode config".into(),
        ..Imported::default()
    };
    // (tool, [(pattern, effect, source)]) in file order.
    let mut groups: Vec<(String, Vec<Entry>)> = Vec::new();
    let mut push = |tool: &str, pattern: String, effect: Effect, source: String| match groups
        .iter_mut()
        .find(|(t, _)| t == tool)
    {
        Some((_, list)) => list.push((pattern, effect, source)),
        None => groups.push((tool.to_string(), vec![(pattern, effect, source)])),
    };
    if let Some(list) = json.get("permissions").and_then(Value::as_array) {
        for (i, r) in list.iter().enumerate() {
            let source = format!("{file}: permissions[{i}]");
            let (Some(action), Some(resource), Some(effect)) = (
                r.get("action").and_then(Value::as_str),
                r.get("resource").and_then(Value::as_str),
                r.get("effect").and_then(parse_effect),
            ) else {
                out.warnings.push(format!(
                    "{source}: needs action, resource and effect (allow|ask|deny); skipped"
                ));
                continue;
            };
            let tool = if action == "shell" { "bash" } else { action };
            push(tool, resource.to_string(), effect, source);
        }
    }
    match json.get("permission") {
        None => {}
        Some(Value::String(_)) => {
            let e = json
                .get("permission")
                .and_then(parse_effect)
                .ok_or(ImportError::NotAnEffect)?;
            push("*", "*".into(), e, format!("{file}: permission"));
        }
        Some(Value::Object(map)) => {
            for (tool, v) in map {
                match v {
                    Value::String(_) => match parse_effect(v) {
                        Some(e) => push(tool, "*".into(), e, format!("{file}: permission.{tool}")),
                        None => out
                            .warnings
                            .push(format!("permission.{tool}: not allow|ask|deny; skipped")),
                    },
                    Value::Object(patterns) => {
                        for (pat, ev) in patterns {
                            match parse_effect(ev) {
                                Some(e) => push(
                                    tool,
                                    pat.clone(),
                                    e,
                                    format!("{file}: permission.{tool}[{pat:?}]"),
                                ),
                                None => out.warnings.push(format!(
                                    "permission.{tool}[{pat:?}]: not allow|ask|deny; skipped"
                                )),
                            }
                        }
                    }
                    _ => out
                        .warnings
                        .push(format!("permission.{tool}: unexpected value; skipped")),
                }
            }
        }
        Some(_) => return Err(ImportError::PermissionType),
    }
    if json.get("agent").is_some() {
        out.warnings
            .push("agent-specific permissions (agent.*.permission) are not imported".into());
    }
    for (tool, entries) in groups {
        translate_opencode_tool(&tool, &entries, &mut out);
    }
    Ok(out)
}

fn translate_opencode_tool(tool: &str, entries: &[Entry], out: &mut Imported) {
    let guardian_tools: &[&str] = match tool {
        "bash" => &["Bash"],
        "edit" | "write" | "patch" => &["Edit"],
        "read" | "glob" | "grep" | "list" => &["Read"],
        "webfetch" => &["WebFetch"],
        "external_directory" => &["Read", "Edit"],
        "*" => &["Bash", "Read", "Edit", "WebFetch"],
        "doom_loop" => {
            out.warnings.push(
                "permission.doom_loop: guardian's session circuit breaker covers repeated calls"
                    .into(),
            );
            return;
        }
        other => {
            out.warnings.push(format!(
                "permission.{other}: no guardian equivalent, ignored"
            ));
            return;
        }
    };
    // Less strict rules after stricter overlapping ones: OpenCode lets the later win.
    for (i, (p, e, s)) in entries.iter().enumerate() {
        for (q, f, t) in &entries[i + 1..] {
            if strictness(*f) < strictness(*e) && p != "*" && overlaps(p, q) {
                out.warnings.push(format!(
                    "{t}: {q:?} → {} comes after {p:?} → {} ({s}); OpenCode lets the later rule win where both match, guardian keeps the stricter {}",
                    f.as_str(),
                    e.as_str(),
                    e.as_str()
                ));
            }
        }
    }
    for (i, (pattern, effect, source)) in entries.iter().enumerate() {
        if pattern == "*" {
            if i > 0 && strictness(*effect) > 0 {
                out.warnings.push(format!("{source}: a catch-all after other rules overrides them in OpenCode; guardian applies it as a default"));
            }
            match effect {
                Effect::Ask => {}
                Effect::Allow => {
                    for t in guardian_tools {
                        if tool != "external_directory" {
                            push_rule(out, t.to_string(), Effect::Allow, source);
                        }
                    }
                }
                Effect::Deny => out.warnings.push(format!(
                    "{source}: OpenCode denies unmatched {tool} calls; guardian sends them to the reviewer unless [policy] default = \"deny\""
                )),
            }
            continue;
        }
        if pattern.contains('?') {
            if *effect == Effect::Allow {
                out.warnings.push(format!("{source}: {pattern:?} uses `?`, which guardian rules cannot express; skipped (an allow must not widen)"));
                continue;
            }
            out.warnings
                .push(format!("{source}: `?` in {pattern:?} widened to `*`"));
        }
        let pattern = pattern.replace('?', "*");
        for t in guardian_tools {
            let spec = match *t {
                "Bash" => format!("Bash({pattern})"),
                "WebFetch" => match crate::normalize::shell::effects::host_of(&pattern) {
                    Some(h) => format!("WebFetch(domain:{h})"),
                    None => {
                        out.warnings.push(format!(
                            "{source}: webfetch pattern {pattern:?} has no host; skipped"
                        ));
                        continue;
                    }
                },
                _ => {
                    let p = opencode_path(&pattern);
                    if pattern.contains('*') && !pattern.contains("**") && *effect != Effect::Allow
                    {
                        // OpenCode's `*` crosses `/`; guardian's does not. Widen deny and ask.
                        let wide = p.replace("/*", "/**/*");
                        if wide != p {
                            push_rule(out, format!("{t}({wide})"), *effect, source);
                        }
                    }
                    format!("{t}({p})")
                }
            };
            push_rule(out, spec, *effect, source);
        }
    }
}

/// OpenCode paths are relative to the project, or absolute, or `~`/`$HOME`-based.
fn opencode_path(p: &str) -> String {
    if let Some(rest) = p.strip_prefix("$HOME/") {
        format!("~/{rest}")
    } else if p.starts_with('/') {
        format!("/{p}")
    } else {
        p.to_string()
    }
}

fn push_rule(out: &mut Imported, pattern: String, effect: Effect, source: &str) {
    match rule::parse(&pattern) {
        Ok(_) => out.rules.push(RuleSpec {
            effect,
            pattern,
            source: source.to_string(),
            ..RuleSpec::default()
        }),
        Err(e) => out
            .warnings
            .push(format!("{source}: {pattern:?} skipped: {}", e.kind)),
    }
}

/// Whether two wildcard patterns can match a common string (by their literal prefixes).
fn overlaps(a: &str, b: &str) -> bool {
    let pa = a.split('*').next().unwrap_or("");
    let pb = b.split('*').next().unwrap_or("");
    pa.starts_with(pb) || pb.starts_with(pa)
}

/// JSON, or JSON with `//` and `/* */` comments and trailing commas (opencode.jsonc).
fn parse_jsonc(text: &str) -> Result<Value, serde_json::Error> {
    if let Ok(v) = serde_json::from_str(text) {
        return Ok(v);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_str = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas before a closing bracket.
    static TRAILING_COMMA: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r",(\s*[}\]])").ok());
    match TRAILING_COMMA.as_ref() {
        Some(re) => serde_json::from_str(&re.replace_all(&out, "$1")),
        None => serde_json::from_str(&out),
    }
}

// ---- Codex `.rules` (Starlark subset) ----

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Punct(char),
}

/// A value of the subset: a string, or a list of values.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Str(String),
    List(Vec<Val>),
}

fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, ImportError> {
    let syntax = |line: usize, kind: SyntaxError| ImportError::Syntax { line, kind };
    let mut toks = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut line = 1;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '(' | ')' | '[' | ']' | ',' | '=' => {
                toks.push((Tok::Punct(c), line));
                i += 1;
            }
            '"' | '\'' => {
                let triple = i + 2 < chars.len() && chars[i + 1] == c && chars[i + 2] == c;
                let start_line = line;
                i += if triple { 3 } else { 1 };
                let mut s = String::new();
                loop {
                    let Some(&d) = chars.get(i) else {
                        return Err(syntax(start_line, SyntaxError::UnterminatedString));
                    };
                    if triple
                        && d == c
                        && chars.get(i + 1) == Some(&c)
                        && chars.get(i + 2) == Some(&c)
                    {
                        i += 3;
                        break;
                    }
                    if !triple && d == c {
                        i += 1;
                        break;
                    }
                    if !triple && d == '\n' {
                        return Err(syntax(start_line, SyntaxError::NewlineInString));
                    }
                    if d == '\n' {
                        line += 1;
                    }
                    if d == '\\' {
                        let e = chars.get(i + 1).copied().unwrap_or('\\');
                        s.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                        i += 2;
                        continue;
                    }
                    s.push(d);
                    i += 1;
                }
                toks.push((Tok::Str(s), start_line));
            }
            c if c.is_alphabetic() || c == '_' => {
                let mut s = String::new();
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    s.push(chars[i]);
                    i += 1;
                }
                toks.push((Tok::Ident(s), line));
            }
            other => return Err(syntax(line, SyntaxError::UnexpectedChar(other))),
        }
    }
    Ok(toks)
}

/// Lists nested in a `.rules` file, at most (the parser recurses per level).
const MAX_LIST_DEPTH: usize = 16;
/// Prefixes one `prefix_rule` may expand into through its alternatives, at most.
const MAX_EXPANSION: usize = 1024;

struct StarParser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
}

impl StarParser {
    fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(0, |t| t.1)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.0.clone());
        self.pos += 1;
        t
    }
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }
    /// A syntax error at `line`: `expected` was needed, `found` is what came.
    fn expected_at(line: usize, expected: &str, found: &Option<Tok>) -> ImportError {
        ImportError::Syntax {
            line,
            kind: SyntaxError::Expected {
                expected: expected.to_string(),
                found: format!("{found:?}"),
            },
        }
    }
    /// [`StarParser::expected_at`] the current line.
    fn expected(&self, expected: &str, found: &Option<Tok>) -> ImportError {
        Self::expected_at(self.line(), expected, found)
    }
    fn expect(&mut self, c: char) -> Result<(), ImportError> {
        match self.next() {
            Some(Tok::Punct(p)) if p == c => Ok(()),
            other => Err(self.expected(&format!("{c:?}"), &other)),
        }
    }
    fn value(&mut self) -> Result<Val, ImportError> {
        self.value_at(0)
    }
    fn value_at(&mut self, depth: usize) -> Result<Val, ImportError> {
        match self.next() {
            Some(Tok::Str(s)) => Ok(Val::Str(s)),
            Some(Tok::Punct('[')) if depth >= MAX_LIST_DEPTH => Err(ImportError::Syntax {
                line: self.line(),
                kind: SyntaxError::TooDeep(MAX_LIST_DEPTH),
            }),
            Some(Tok::Punct('[')) => {
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(&Tok::Punct(']')) {
                        self.pos += 1;
                        break;
                    }
                    items.push(self.value_at(depth + 1)?);
                    match self.next() {
                        Some(Tok::Punct(',')) => {}
                        Some(Tok::Punct(']')) => break,
                        other => return Err(self.expected(", or ] in a list", &other)),
                    }
                }
                Ok(Val::List(items))
            }
            other => Err(self.expected("a string or a list", &other)),
        }
    }
    /// `name(key = value, …)`: returns the name, its line and the keyword arguments.
    fn call(&mut self) -> Result<Call, ImportError> {
        let line = self.line();
        let name = match self.next() {
            Some(Tok::Ident(n)) => n,
            other => {
                return Err(Self::expected_at(
                    line,
                    "a call such as prefix_rule(...)",
                    &other,
                ));
            }
        };
        self.expect('(')?;
        let mut args = Vec::new();
        loop {
            if self.peek() == Some(&Tok::Punct(')')) {
                self.pos += 1;
                break;
            }
            let key = match self.next() {
                Some(Tok::Ident(k)) => k,
                other => return Err(self.expected("a keyword argument", &other)),
            };
            self.expect('=')?;
            args.push((key, self.value()?));
            match self.next() {
                Some(Tok::Punct(',')) => {}
                Some(Tok::Punct(')')) => break,
                other => return Err(self.expected(", or )", &other)),
            }
        }
        Ok((name, line, args))
    }
}

/// Codex `.rules`: `prefix_rule(...)` calls become `Bash(prefix *)` rules.
pub fn import_codex(text: &str, file: &str) -> Result<Imported, ImportError> {
    let mut out = Imported {
        format: "Codex execpolicy rules".into(),
        ..Imported::default()
    };
    let mut p = StarParser {
        toks: tokenize(text)?,
        pos: 0,
    };
    while p.peek().is_some() {
        let (name, line, args) = p.call()?;
        let source = format!("{file}:{line}");
        if name != "prefix_rule" {
            out.warnings
                .push(format!("{source}: {name}(...) is not understood; skipped"));
            continue;
        }
        prefix_rule(&args, &source, &mut out).map_err(|kind| ImportError::Codex {
            file: file.to_string(),
            line,
            kind,
        })?;
    }
    out.warnings.push(
        "Codex matches argv prefixes exactly; guardian also sees through wrappers and compound commands, so its rules are never looser".into(),
    );
    Ok(out)
}

/// One `prefix_rule(...)` call, written at `source`, translated into `out`.
fn prefix_rule(
    args: &[(String, Val)],
    source: &str,
    out: &mut Imported,
) -> Result<(), CodexRuleError> {
    let get = |k: &str| args.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    for (k, _) in args {
        if !matches!(
            k.as_str(),
            "pattern" | "decision" | "justification" | "match" | "not_match"
        ) {
            return Err(CodexRuleError::UnknownArgument(k.clone()));
        }
    }
    let Some(Val::List(pattern)) = get("pattern") else {
        return Err(CodexRuleError::NoPattern);
    };
    if pattern.is_empty() {
        return Err(CodexRuleError::EmptyPattern);
    }
    let effect = match get("decision") {
        None => Effect::Allow,
        Some(Val::Str(d)) => match d.as_str() {
            "allow" => Effect::Allow,
            "prompt" => Effect::Ask,
            "forbidden" => Effect::Deny,
            other => return Err(CodexRuleError::UnknownDecision(other.to_string())),
        },
        Some(_) => return Err(CodexRuleError::DecisionNotAString),
    };
    let justification = match get("justification") {
        Some(Val::Str(j)) => Some(j.clone()),
        _ => None,
    };
    let prefixes = expand_prefixes(pattern)?;
    let mut compiled: Vec<Rule> = Vec::new();
    for tokens in &prefixes {
        if tokens
            .iter()
            .any(|t| t.contains('*') || t.contains(['(', ')']))
        {
            out.warnings.push(format!(
                "{source}: token with `*` or parentheses cannot be expressed; {tokens:?} skipped"
            ));
            continue;
        }
        let spec = format!("Bash({} *)", tokens.join(" "));
        let matcher = rule::parse(&spec).map_err(|e| CodexRuleError::Rule(Box::new(e)))?;
        compiled.push(Rule {
            effect,
            pattern: spec.clone(),
            source: source.to_string(),
            justification: justification.clone(),
            matcher,
        });
        out.rules.push(RuleSpec {
            effect,
            pattern: spec,
            source: source.to_string(),
            justification: justification.clone(),
            ..RuleSpec::default()
        });
    }
    check_examples(&get, &compiled)
}

/// A Codex pattern's alternatives expanded into every combination of tokens (bounded: 20 pairs
/// of alternatives would be a million rules).
fn expand_prefixes(pattern: &[Val]) -> Result<Vec<Vec<String>>, CodexRuleError> {
    let combinations = pattern.iter().try_fold(1usize, |n, element| match element {
        Val::List(l) => n.checked_mul(l.len().max(1)),
        Val::Str(_) => Some(n),
    });
    if combinations.is_none_or(|n| n > MAX_EXPANSION) {
        return Err(CodexRuleError::TooManyPrefixes(MAX_EXPANSION));
    }
    let mut prefixes: Vec<Vec<String>> = vec![Vec::new()];
    for element in pattern {
        let alts: Vec<String> = match element {
            Val::Str(s) => vec![s.clone()],
            Val::List(l) => l
                .iter()
                .map(|v| match v {
                    Val::Str(s) => Ok(s.clone()),
                    Val::List(_) => Err(CodexRuleError::NestedAlternative),
                })
                .collect::<Result<_, _>>()?,
        };
        prefixes = prefixes
            .iter()
            .flat_map(|p| {
                alts.iter().map(move |a| {
                    let mut q = p.clone();
                    q.push(a.clone());
                    q
                })
            })
            .collect();
    }
    Ok(prefixes)
}

/// Codex checks a rule's `match` and `not_match` examples at load time; so do we, against the
/// translation.
fn check_examples<'a>(
    get: &dyn Fn(&str) -> Option<&'a Val>,
    compiled: &[Rule],
) -> Result<(), CodexRuleError> {
    for (key, must) in [("match", true), ("not_match", false)] {
        let Some(v) = get(key) else { continue };
        let Val::List(examples) = v else {
            return Err(CodexRuleError::ExamplesNotAList(key.to_string()));
        };
        for ex in examples {
            let cmd = match ex {
                Val::Str(s) => s.clone(),
                Val::List(toks) => toks
                    .iter()
                    .map(|t| match t {
                        Val::Str(s) => Ok(crate::normalize::shell::words::quote(s)),
                        Val::List(_) => Err(CodexRuleError::ExampleToken),
                    })
                    .collect::<Result<Vec<_>, _>>()?
                    .join(" "),
            };
            let hit = compiled.iter().any(|r| example_matches(r, &cmd));
            if hit != must {
                return Err(CodexRuleError::Example {
                    key: key.to_string(),
                    example: cmd,
                    must_match: must,
                });
            }
        }
    }
    Ok(())
}

/// The imported rules as a `[policy]` snippet for guardian.toml, warnings as comments.
pub fn to_toml(imported: &Imported) -> String {
    let mut s = format!(
        "# translated from {} by `guardian policy import`\n",
        imported.format
    );
    // Comments end at a line break: one inside an imported key or note must not start a line
    // of TOML.
    let one_line = |t: &str| t.replace(['\n', '\r'], " ");
    for w in &imported.warnings {
        s.push_str(&format!("# note: {}\n", one_line(w)));
    }
    s.push_str("[policy]\n");
    for (key, effect) in [
        ("deny", Effect::Deny),
        ("ask", Effect::Ask),
        ("allow", Effect::Allow),
    ] {
        let rules: Vec<&RuleSpec> = imported
            .rules
            .iter()
            .filter(|r| r.effect == effect)
            .collect();
        s.push_str(&format!("{key} = [\n"));
        for r in rules {
            let quoted =
                serde_json::to_string(&r.pattern).unwrap_or_else(|_| format!("{:?}", r.pattern));
            s.push_str(&format!("  {quoted},  # {}\n", one_line(&r.source)));
        }
        s.push_str("]\n");
    }
    s
}

#[cfg(test)]
mod tests;

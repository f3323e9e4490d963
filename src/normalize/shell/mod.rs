//! Shell command lines, parsed to an AST and taken apart into the simple commands that will run.
//!
//! This module owns understanding a command line: it parses with brush-parser (guarded by size
//! and nesting caps and `catch_unwind`; the pipeline adds a deadline), walks every list, pipeline,
//! compound command, function body, `$(…)`, backticks, `<(…)`/`>(…)`, `bash -c` script, and script
//! fed to a shell by heredoc or pipe, removes wrappers ([`wrappers`]), and records for each simple
//! command its words, the files it reads and writes (redirections included, [`effects`]) and the
//! hosts it contacts. Whatever cannot be known statically is listed in `unknowns` or the
//! command's `dynamic`: the policy never allows such a line by rule.

pub mod command;
pub mod effects;
pub mod flags;
pub mod git;
pub mod options;
pub mod text;
pub mod vars;
pub mod words;
pub mod wrappers;

pub use command::{OptionIssue, ShellAnalysis, SimpleCommand};
pub use text::shell_quote;

use std::io::Cursor;

use brush_parser::ast;

use self::effects::{DOWNLOADERS, is_interpreter};
use self::words::WordValue;
use self::wrappers::{Inner, basename, program_name};

/// Longest command line parsed, in bytes.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;
/// Deepest bracket nesting parsed (brush-parser is exponential on some unbalanced inputs).
pub const MAX_NESTING: usize = 12;
/// Compound-command keywords and brackets in one script, at most (see [`parse`]).
pub const MAX_OPENERS: usize = 64;
/// Deepest nesting of scripts inside scripts (`bash -c "bash -c '…'"`).
pub const MAX_SCRIPT_DEPTH: usize = 6;
/// Most simple commands analysed in one line.
pub const MAX_COMMANDS: usize = 512;

/// Parses and analyses a command line (size and nesting capped, panics caught). Variables the
/// script assigns a literal value are resolved where that is sound ([`vars`]).
pub fn analyze(command: &str) -> ShellAnalysis {
    analyze_with(command, true)
}

/// [`analyze`] without resolving any variable (the first of its two passes).
#[cfg(test)]
pub(crate) fn analyze_without_variables(command: &str) -> ShellAnalysis {
    analyze_with(command, false)
}

fn analyze_with(command: &str, resolve: bool) -> ShellAnalysis {
    let mut w = Walker::default();
    let mut out = ShellAnalysis {
        raw: command.to_string(),
        commands: Vec::new(),
        unknowns: Vec::new(),
        parse_error: None,
        unparsed: Vec::new(),
        text_only: Vec::new(),
        remote_code: Vec::new(),
    };
    match parse(command) {
        Ok(program) => {
            w.walk_program(&program, "top level", Stdin::Terminal);
            // A second pass resolves the variables the first pass shows nothing else can set.
            if resolve && vars::Scope::worth_trying(command) {
                let scope = vars::Scope::of(command, &w.commands);
                if scope.enabled() {
                    let mut again = Walker {
                        scope,
                        ..Walker::default()
                    };
                    again.walk_program(&program, "top level", Stdin::Terminal);
                    if again.scope.resolved_any() {
                        w = again;
                    }
                }
            }
        }
        Err(e) => {
            out.parse_error = Some(e.to_string());
            out.unknowns
                .push(format!("the command could not be parsed: {e}"));
            out.unparsed.push(command.to_string());
        }
    }
    out.commands = w.commands;
    out.unknowns.extend(w.unknowns);
    // A nested script the parser rejected may also have been cut short in the outer parse
    // (`echo $(case x in x) git push;; esac)` reads as `echo` with `git push` as arguments):
    // then the whole line is matched as text too, so deny rules still see what it holds.
    if !w.unparsed.is_empty() && out.unparsed.is_empty() {
        out.text_only.push(command.to_string());
    }
    out.unparsed.extend(w.unparsed);
    out.remote_code = w.remote_code;
    out.unknowns.dedup();
    out
}

/// Why a script was not parsed: too large or deep for the parser's guards, or not shell.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Longer than [`MAX_INPUT_BYTES`].
    #[error("longer than {MAX_INPUT_BYTES} bytes")]
    TooLong,
    /// Brackets nested deeper than [`MAX_NESTING`].
    #[error("brackets nested {0} deep (limit {MAX_NESTING})")]
    TooDeep(usize),
    /// More openers than [`MAX_OPENERS`].
    #[error("{0} compound commands and brackets (limit {MAX_OPENERS})")]
    TooManyOpeners(usize),
    /// brush-parser's own error.
    #[error("{0}")]
    Syntax(#[from] brush_parser::ParseError),
    /// brush-parser panicked.
    #[error("the parser failed on this input")]
    Panicked,
}

/// Parses a script with the guards brush-parser needs.
pub fn parse(text: &str) -> Result<ast::Program, ParseError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(ParseError::TooLong);
    }
    let depth = nesting(text);
    if depth > MAX_NESTING {
        return Err(ParseError::TooDeep(depth));
    }
    // brush-parser recurses once per nested compound command, and a stack overflow aborts the
    // process (catch_unwind cannot stop it): `if if if …` 400 deep killed the server. Quoted
    // closers can fool a depth count, so bound the number of openers instead: nesting can never
    // exceed it.
    let openers = openers(text);
    if openers > MAX_OPENERS {
        return Err(ParseError::TooManyOpeners(openers));
    }
    let options = brush_parser::ParserOptions::default();
    let result = std::panic::catch_unwind(|| {
        let mut parser = brush_parser::Parser::new(Cursor::new(text), &options);
        parser.parse_program()
    });
    match result {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(e)) => Err(ParseError::Syntax(e)),
        Err(_) => Err(ParseError::Panicked),
    }
}

/// Words and characters that open a nested construct, counted anywhere in the text (quotes
/// ignored: an overcount only refuses to parse, which sends the command to review).
fn openers(text: &str) -> usize {
    const KEYWORDS: [&str; 8] = [
        "if", "while", "until", "for", "case", "select", "function", "coproc",
    ];
    let brackets = text
        .chars()
        .filter(|c| matches!(c, '(' | '{' | '[' | '`'))
        .count();
    let keywords = text
        .split(|c: char| c.is_whitespace() || ";&|<>()`{}".contains(c))
        .filter(|w| KEYWORDS.contains(w))
        .count();
    brackets + keywords
}

/// Deepest bracket nesting of a text, quotes ignored (an overestimate is fine: it only refuses).
fn nesting(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '(' | '{' | '[' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Where a command's standard input comes from.
#[derive(Debug, Clone)]
enum Stdin {
    Terminal,
    /// From a pipe: the producer downloads; or printed a static script (`echo '…' | sh`,
    /// `printf`, `cat <<'EOF' … | sh`, `cat <<<'…' | sh`).
    Pipe {
        downloads: bool,
        script: Option<String>,
    },
    /// A heredoc or here-string.
    Text {
        text: String,
        dynamic: bool,
    },
}

/// The working directory as far as `cd` commands tell.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Cwd {
    #[default]
    Start,
    Dir(String),
    Unknown,
}

#[derive(Default)]
struct Walker {
    commands: Vec<SimpleCommand>,
    unknowns: Vec<String>,
    unparsed: Vec<String>,
    remote_code: Vec<String>,
    cwd: Cwd,
    depth: usize,
    /// Redirections of enclosing compound commands: (reads, writes).
    inherited: Vec<(Vec<WordValue>, Vec<WordValue>)>,
    /// Set for commands inside a privileged script.
    privileged_context: bool,
    /// The directories the next recorded command reads recursively, and whether it skips
    /// hidden paths (handed from the effects table to [`Walker::command`]).
    pending_tree: Option<(Vec<WordValue>, bool)>,
    /// The script's variables whose values are known ([`vars`]); resolves nothing by default.
    scope: vars::Scope,
}

impl Walker {
    /// A word of this shell, its known variables resolved.
    fn eval(&self, raw: &str) -> WordValue {
        words::evaluate_in(raw, Some(&self.scope))
    }

    /// Walks a script run by another process (`bash -c`, a script piped into a shell,
    /// `find -exec`): it does not see this shell's unexported variables.
    fn walk_child_script(&mut self, text: &str, context: &str, stdin: Stdin) -> bool {
        let saved = std::mem::take(&mut self.scope);
        let d = self.walk_script(text, context, stdin);
        self.scope = saved;
        d
    }

    /// Learns the value of a plain assignment statement of the top-level script
    /// (`f='/etc/passwd'`): not in a pipeline, a background job or an and-or list.
    fn learn_assignments(&mut self, item: &ast::CompoundListItem) {
        let ast::CompoundListItem(and_or, sep) = item;
        if matches!(sep, ast::SeparatorOperator::Async)
            || !and_or.additional.is_empty()
            || and_or.first.seq.len() != 1
        {
            return;
        }
        let Some(ast::Command::Simple(s)) = and_or.first.seq.first() else {
            return;
        };
        if s.word_or_name.is_some() || s.suffix.is_some() {
            return;
        }
        for item in s.prefix.iter().flat_map(|p| p.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(a, _) => {
                    let ast::AssignmentName::VariableName(name) = &a.name else {
                        if let ast::AssignmentName::ArrayElementName(n, _) = &a.name {
                            self.scope.assign(n, None);
                        }
                        continue;
                    };
                    let value = match &a.value {
                        ast::AssignmentValue::Scalar(w) if !a.append => {
                            let v = self.eval(&w.value);
                            (v.dynamic.is_none() && v.substitutions.is_empty()).then_some(v.text)
                        }
                        _ => None,
                    };
                    self.scope.assign(name, value.as_deref());
                }
                // A redirection in the statement: learn nothing from it.
                _ => return,
            }
        }
    }

    fn unknown(&mut self, why: impl Into<String>) {
        let why = why.into();
        if !self.unknowns.contains(&why) {
            self.unknowns.push(why);
        }
    }

    /// Parses and walks a nested script; returns whether anything in it downloads.
    fn walk_script(&mut self, text: &str, context: &str, stdin: Stdin) -> bool {
        if self.depth >= MAX_SCRIPT_DEPTH {
            self.unknown(format!("scripts nested deeper than {MAX_SCRIPT_DEPTH}"));
            self.unparsed.push(text.to_string());
            return false;
        }
        match parse(text) {
            Ok(program) => {
                self.depth += 1;
                let saved = self.cwd.clone();
                let d = self.walk_program(&program, context, stdin);
                self.cwd = saved;
                self.depth -= 1;
                d
            }
            Err(e) => {
                self.unknown(format!("a {context} script could not be parsed: {e}"));
                self.unparsed.push(text.to_string());
                false
            }
        }
    }

    fn walk_program(&mut self, p: &ast::Program, context: &str, stdin: Stdin) -> bool {
        let mut downloads = false;
        let top = self.depth == 0 && self.scope.enabled();
        for cc in &p.complete_commands {
            if top {
                // The top-level script, statement by statement: a value is known from its
                // assignment on.
                for item in &cc.0 {
                    downloads |= self.walk_item(item, context, &stdin);
                    self.learn_assignments(item);
                }
            } else {
                downloads |= self.walk_list(cc, context, &stdin);
            }
        }
        downloads
    }

    fn walk_list(&mut self, list: &ast::CompoundList, context: &str, stdin: &Stdin) -> bool {
        let mut downloads = false;
        for item in &list.0 {
            downloads |= self.walk_item(item, context, stdin);
        }
        downloads
    }

    fn walk_item(&mut self, item: &ast::CompoundListItem, context: &str, stdin: &Stdin) -> bool {
        let ast::CompoundListItem(and_or, sep) = item;
        let saved = matches!(sep, ast::SeparatorOperator::Async).then(|| self.cwd.clone());
        let mut downloads = self.walk_pipeline(&and_or.first, context, stdin);
        for next in &and_or.additional {
            let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
            downloads |= self.walk_pipeline(p, context, stdin);
        }
        if let Some(s) = saved {
            self.cwd = s;
        }
        downloads
    }

    fn walk_pipeline(&mut self, p: &ast::Pipeline, context: &str, stdin: &Stdin) -> bool {
        let multi = p.seq.len() > 1;
        let saved = multi.then(|| self.cwd.clone());
        let mut downloads_so_far = false;
        let mut producer_script: Option<String> = None;
        for (i, cmd) in p.seq.iter().enumerate() {
            let this_stdin = if i == 0 {
                stdin.clone()
            } else {
                Stdin::Pipe {
                    downloads: downloads_so_far,
                    script: producer_script.take(),
                }
            };
            if let ast::Command::Simple(s) = cmd {
                producer_script = static_echo(s);
            }
            downloads_so_far |= self.walk_command(cmd, context, this_stdin);
        }
        if let Some(s) = saved {
            self.cwd = s;
        }
        downloads_so_far
    }

    fn walk_command(&mut self, cmd: &ast::Command, context: &str, stdin: Stdin) -> bool {
        match cmd {
            ast::Command::Simple(s) => self.walk_simple(s, context, stdin),
            ast::Command::Compound(c, redirects) => {
                let pushed = self.push_redirects(redirects.as_ref());
                let d = self.walk_compound(c, context, &stdin);
                if pushed {
                    self.inherited.pop();
                }
                d
            }
            ast::Command::Function(f) => {
                let name = self.eval(&f.fname.value).text;
                let pushed = self.push_redirects(f.body.1.as_ref());
                let d = self.walk_compound(&f.body.0, &format!("function {name}"), &stdin);
                if pushed {
                    self.inherited.pop();
                }
                d
            }
            ast::Command::ExtendedTest(t, redirects) => {
                let pushed = self.push_redirects(redirects.as_ref());
                let d = self.walk_test(&t.expr);
                if pushed {
                    self.inherited.pop();
                }
                d
            }
        }
    }

    fn walk_test(&mut self, e: &ast::ExtendedTestExpr) -> bool {
        match e {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.walk_test(a) | self.walk_test(b)
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.walk_test(a)
            }
            ast::ExtendedTestExpr::UnaryTest(_, w) => {
                self.walk_word_substitutions(&self.eval(&w.value))
            }
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.walk_word_substitutions(&self.eval(&a.value))
                    | self.walk_word_substitutions(&self.eval(&b.value))
            }
        }
    }

    fn push_redirects(&mut self, list: Option<&ast::RedirectList>) -> bool {
        let Some(list) = list else { return false };
        let mut reads = Vec::new();
        let mut writes = Vec::new();
        for r in &list.0 {
            self.redirect(r, &mut reads, &mut writes, &mut None);
        }
        self.inherited.push((reads, writes));
        true
    }

    fn walk_compound(&mut self, c: &ast::CompoundCommand, context: &str, stdin: &Stdin) -> bool {
        match c {
            ast::CompoundCommand::BraceGroup(b) => self.walk_list(&b.list, context, stdin),
            ast::CompoundCommand::Subshell(s) => {
                let saved = self.cwd.clone();
                let d = self.walk_list(&s.list, context, stdin);
                self.cwd = saved;
                d
            }
            ast::CompoundCommand::ForClause(f) => {
                let mut d = false;
                for w in f.values.iter().flatten() {
                    d |= self.walk_word_substitutions(&self.eval(&w.value));
                }
                d | self.walk_list(&f.body.list, context, stdin)
            }
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arith(&e.value);
                }
                self.walk_list(&f.body.list, context, stdin)
            }
            ast::CompoundCommand::CaseClause(c) => {
                let mut d = self.walk_word_substitutions(&self.eval(&c.value.value));
                for item in &c.cases {
                    for p in &item.patterns {
                        d |= self.walk_word_substitutions(&self.eval(&p.value));
                    }
                    if let Some(cmd) = &item.cmd {
                        d |= self.walk_list(cmd, context, stdin);
                    }
                }
                d
            }
            ast::CompoundCommand::IfClause(i) => {
                let mut d = self.walk_list(&i.condition, context, stdin);
                d |= self.walk_list(&i.then, context, stdin);
                for e in i.elses.iter().flatten() {
                    if let Some(cond) = &e.condition {
                        d |= self.walk_list(cond, context, stdin);
                    }
                    d |= self.walk_list(&e.body, context, stdin);
                }
                d
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.walk_list(&w.0, context, stdin) | self.walk_list(&w.1.list, context, stdin)
            }
            ast::CompoundCommand::Arithmetic(a) => {
                self.arith(&a.expr.value);
                false
            }
            ast::CompoundCommand::Coprocess(c) => {
                self.walk_command(&c.body, "coproc", Stdin::Terminal)
            }
        }
    }

    fn arith(&mut self, expr: &str) {
        // `((cmd args))` is two nested subshells in shells that fall back when the text is not
        // arithmetic: judge it as a script too.
        if words::reads_like_a_command(expr) {
            self.unknown("an arithmetic command that reads like a command");
            self.walk_script(expr, "((…))", Stdin::Terminal);
        }
        if expr.contains("$(") || expr.contains('`') || expr.contains('[') {
            self.unknown("an arithmetic expression that may run commands");
            for sub in words::arithmetic_substitutions(expr) {
                self.walk_script(&sub, "$(…) in arithmetic", Stdin::Terminal);
            }
            // Whatever the parser missed is still offered to deny rules as text.
            self.unparsed.push(expr.to_string());
        }
    }

    /// Walks the command substitutions of a word; returns whether any downloads.
    fn walk_word_substitutions(&mut self, w: &WordValue) -> bool {
        let mut d = false;
        for s in &w.substitutions {
            d |= self.walk_script(s, "$(…)", Stdin::Terminal);
        }
        d
    }

    /// Adds a redirection's file targets; returns a heredoc/here-string as new stdin.
    fn redirect(
        &mut self,
        r: &ast::IoRedirect,
        reads: &mut Vec<WordValue>,
        writes: &mut Vec<WordValue>,
        stdin: &mut Option<Stdin>,
    ) -> bool {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T};
        match r {
            ast::IoRedirect::File(_, kind, target) => match target {
                T::Filename(w) => {
                    let v = self.eval(&w.value);
                    let d = self.walk_word_substitutions(&v);
                    match kind {
                        K::Read => reads.push(v),
                        K::Write | K::Append | K::Clobber => writes.push(v),
                        K::ReadAndWrite => {
                            reads.push(v.clone());
                            writes.push(v);
                        }
                        K::DuplicateInput | K::DuplicateOutput => {
                            if !v.text.chars().all(|c| c.is_ascii_digit() || c == '-') {
                                writes.push(v);
                            }
                        }
                    }
                    d
                }
                T::Fd(_) => false,
                T::Duplicate(w) => {
                    let v = self.eval(&w.value);
                    if !v.text.chars().all(|c| c.is_ascii_digit() || c == '-') {
                        writes.push(v.clone());
                    }
                    self.walk_word_substitutions(&v)
                }
                T::ProcessSubstitution(_, sub) => {
                    let saved = self.cwd.clone();
                    let d = self.walk_list(&sub.list, "process substitution", &Stdin::Terminal);
                    self.cwd = saved;
                    d
                }
            },
            ast::IoRedirect::HereDocument(_, doc) => {
                let dynamic = doc.requires_expansion
                    && (doc.doc.value.contains('$') || doc.doc.value.contains('`'));
                *stdin = Some(Stdin::Text {
                    text: doc.doc.value.clone(),
                    dynamic,
                });
                false
            }
            ast::IoRedirect::HereString(_, w) => {
                let v = self.eval(&w.value);
                let d = self.walk_word_substitutions(&v);
                *stdin = Some(Stdin::Text {
                    text: v.text.clone(),
                    dynamic: v.dynamic.is_some(),
                });
                d
            }
            ast::IoRedirect::OutputAndError(w, _) => {
                let v = self.eval(&w.value);
                let d = self.walk_word_substitutions(&v);
                writes.push(v);
                d
            }
        }
    }

    fn walk_simple(&mut self, s: &ast::SimpleCommand, context: &str, stdin: Stdin) -> bool {
        if self.commands.len() >= MAX_COMMANDS {
            self.unknown(format!("more than {MAX_COMMANDS} commands"));
            return false;
        }
        let mut c = Collected::default();
        for item in s.prefix.iter().flat_map(|p| p.0.iter()) {
            self.collect_item(item, &mut c, false);
        }
        if let Some(name) = &s.word_or_name {
            let v = self.eval(&name.value);
            c.downloads |= self.walk_word_substitutions(&v);
            c.words.push(v);
        }
        for item in s.suffix.iter().flat_map(|p| p.0.iter()) {
            self.collect_item(item, &mut c, true);
        }
        let Collected {
            words: words_v,
            env: mut env_words,
            mut reads,
            mut writes,
            stdin: new_stdin,
            mut dynamic,
            downloads,
            proc_subst_downloads,
        } = c;
        let stdin = new_stdin.unwrap_or(stdin);
        for (r, w) in &self.inherited {
            reads.extend(r.iter().cloned());
            writes.extend(w.iter().cloned());
        }
        if words_v.is_empty() {
            // Assignments only: `PATH=/tmp/x:$PATH` changes what every later command of this
            // shell runs (and an already exported variable changes for its children too).
            if let Some(why) = &dynamic {
                self.unknown(format!("{why} for the commands after it"));
            }
            // Assignments or redirections only: the redirections still touch files.
            if !reads.is_empty() || !writes.is_empty() {
                let cmd = self.command(CommandParts {
                    argv: Vec::new(),
                    words: &[],
                    levels: &[0],
                    context,
                    dynamic,
                    reads,
                    writes,
                    tree_writes: Vec::new(),
                    option_issue: None,
                    hosts: Vec::new(),
                    privileged: false,
                    wrapper_only: false,
                    assignments: Vec::new(),
                });
                self.commands.push(cmd);
            }
            return downloads;
        }
        let un = wrappers::unwrap(&words_v);
        env_words.extend(un.env.iter().cloned());
        reads.extend(un.reads.iter().cloned());
        writes.extend(un.writes.iter().cloned());
        if dynamic.is_none() {
            dynamic.clone_from(&un.dynamic);
        }
        let simple = Simple {
            privileged: un.privileged || self.privileged_context,
            words: &words_v,
            un: &un,
            context,
            dynamic,
            reads,
            writes,
            stdin,
            args_download: downloads || proc_subst_downloads,
            env: env_words,
        };
        let inner = match &un.inner {
            Inner::Argv(k) => self.simple_argv(simple, *k),
            Inner::Script(script) => self.simple_script(simple, script),
            Inner::StdinScript => self.simple_stdin_script(simple),
            Inner::Unknown(why) => self.simple_unknown(simple, why.clone()),
        };
        downloads | inner
    }

    /// A simple command whose program runs with its own arguments (`Inner::Argv`: `git push`,
    /// `sudo rm -rf x` after the wrappers): its effects, interpreters, builtins, `cd`.
    fn simple_argv(&mut self, s: Simple<'_>, k: usize) -> bool {
        let Simple {
            words: words_v,
            un,
            context,
            mut dynamic,
            mut reads,
            mut writes,
            stdin,
            privileged,
            args_download,
            env,
        } = s;
        let mut downloads = false;
        let mut argv_v: Vec<WordValue> = words_v[k..].to_vec();
        if argv_v.is_empty() && un.wrappers.last().is_some_and(|w| w == "xargs") {
            argv_v.push(WordValue::literal("echo"));
        }
        if un.hidden_args && dynamic.is_none() {
            dynamic = Some("xargs passes it arguments that are not known statically".into());
        }
        let name = argv_v
            .first()
            .map(|w| program_name(&w.text).to_string())
            .unwrap_or_default();
        let base = basename(&name).to_string();
        let fx = effects::effects(&base, argv_v.get(1..).unwrap_or(&[]));
        downloads |= fx.downloads || DOWNLOADERS.contains(&base.as_str());
        let mut tree_reads = fx.tree_reads.clone();
        let mut tree_writes: Vec<WordValue> = Vec::new();
        if base == "rm" && rm_recursive(&argv_v) {
            tree_writes.extend(fx.writes.iter().cloned());
        }
        reads.extend(fx.reads);
        writes.extend(fx.writes);
        if let Some(why) = fx.unknown.first()
            && dynamic.is_none()
        {
            dynamic = Some(why.clone());
        }
        for w in &argv_v {
            if w.dynamic.is_some() && dynamic.is_none() {
                dynamic = Some(format!(
                    "the argument {:?} is not static ({})",
                    w.text,
                    w.dynamic.as_deref().unwrap_or("")
                ));
            }
        }
        if is_interpreter(&base) {
            self.interpreter(&base, &argv_v, &stdin, args_download, &mut dynamic);
        }
        self.special_builtin(&base, &argv_v, &mut dynamic, context);
        if base == "find" {
            // `-fprint FILE` and its kind are writes of find's option table.
            let deleted = find_deletes(&argv_v);
            writes.extend(deleted.iter().cloned());
            tree_writes.extend(deleted);
        }
        let before_options = tree_reads.len();
        let (issue, runs) = option_effects(
            &argv_v,
            &env,
            &mut reads,
            &mut writes,
            &mut tree_reads,
            &mut tree_writes,
        );
        // A directory an option reads files under is read whole, hidden files included.
        let skips_hidden = fx.skips_hidden && tree_reads.len() == before_options;
        let tree = (!tree_reads.is_empty()).then_some((tree_reads, skips_hidden));
        let argv: Vec<String> = argv_v.iter().map(|w| w.text.clone()).collect();
        self.pending_tree = tree;
        let cmd = self.command(CommandParts {
            argv,
            words: words_v,
            levels: &un.levels,
            context,
            dynamic,
            reads,
            writes,
            tree_writes,
            option_issue: issue,
            hosts: fx.hosts,
            privileged,
            wrapper_only: false,
            assignments: env.iter().map(|w| w.text.clone()).collect(),
        });
        self.commands.push(cmd);
        for (context, value) in runs {
            // What an option or variable runs is judged like `sh -c` by deny and ask rules, and
            // never allowed by one: it runs with arguments guardian cannot see.
            let before = self.commands.len();
            self.walk_child_script(&value.text, &context, Stdin::Terminal);
            for c in &mut self.commands[before..] {
                c.privileged |= privileged;
                if c.dynamic.is_none() {
                    c.dynamic = Some(format!(
                        "{context} runs it with arguments not known statically"
                    ));
                }
            }
        }
        if base == "find" {
            self.find_exec(&argv_v, privileged);
        }
        if matches!(base.as_str(), "cd" | "pushd" | "popd") {
            self.change_dir(&base, argv_v.get(1));
        }
        downloads
    }

    /// An interpreter: downloaded code it runs is remote code, and code read from standard input
    /// is not known statically.
    fn interpreter(
        &mut self,
        base: &str,
        argv_v: &[WordValue],
        stdin: &Stdin,
        args_download: bool,
        dynamic: &mut Option<String>,
    ) {
        let stdin_downloads = matches!(
            stdin,
            Stdin::Pipe {
                downloads: true,
                ..
            }
        );
        if args_download || stdin_downloads {
            self.remote_code
                .push(format!("downloaded content is run by {base}"));
        }
        let script_arg = argv_v.iter().skip(1).any(|w| !w.text.starts_with('-'));
        let inline = argv_v.iter().any(|w| {
            matches!(
                w.text.as_str(),
                "-c" | "-e" | "-E" | "-r" | "--eval" | "--command"
            )
        });
        if !script_arg && !inline && !matches!(stdin, Stdin::Terminal) && dynamic.is_none() {
            *dynamic = Some(format!("{base} runs a script from its standard input"));
        }
    }

    /// `cd`, `pushd`, `popd`: where later relative paths are.
    fn change_dir(&mut self, base: &str, arg: Option<&WordValue>) {
        self.cwd = match (base, arg) {
            ("cd", None) => Cwd::Dir("~".into()),
            ("cd" | "pushd", Some(w)) if w.dynamic.is_none() && !w.glob && w.text != "-" => {
                let dir = self.join_cwd(&w.text).unwrap_or_default();
                if dir.is_empty() {
                    Cwd::Unknown
                } else {
                    Cwd::Dir(dir)
                }
            }
            _ => Cwd::Unknown,
        };
    }

    /// A shell wrapper running a script given as an argument (`bash -c '…'`, `sh -c`): the
    /// wrapper itself, then the script, judged like any command line.
    fn simple_script(&mut self, s: Simple<'_>, script: &WordValue) -> bool {
        let shell = s.un.wrappers.last().cloned().unwrap_or_default();
        let mut downloads = false;
        let (privileged, args_download, stdin, un) =
            (s.privileged, s.args_download, s.stdin.clone(), s.un);
        self.push_whole(s, true);
        if script.dynamic.is_some() {
            self.unknown(format!(
                "the script of {shell} is not static ({})",
                script.dynamic.as_deref().unwrap_or("")
            ));
            if args_download {
                self.remote_code
                    .push(format!("downloaded content is run by {shell}"));
            }
        }
        let saved = self.privileged_context;
        self.privileged_context |= privileged;
        if privileged {
            self.unknown(format!(
                "a script run with privileges ({})",
                un.wrappers.join(" ")
            ));
        }
        // The script inherits the command's standard input (`sh -c bash <<EOF`).
        let context = if shell.ends_with("foreach") {
            shell.clone()
        } else {
            format!("{shell} -c")
        };
        downloads |= self.walk_child_script(&script.text, &context, stdin.clone());
        if let Some(alt) = &un.alt_script {
            downloads |= self.walk_child_script(alt, &format!("{shell} (as quoted)"), stdin);
        }
        self.privileged_context = saved;
        downloads
    }

    /// A shell reading its script from standard input (`… | sh`, `bash <<EOF`): a static
    /// producer's text is judged like `sh -c`; a download is remote code; anything else unknown.
    fn simple_stdin_script(&mut self, s: Simple<'_>) -> bool {
        let shell = s.un.wrappers.last().cloned().unwrap_or_default();
        let mut downloads = false;
        let (privileged, args_download, stdin) = (s.privileged, s.args_download, s.stdin.clone());
        self.push_whole(s, true);
        let saved = self.privileged_context;
        self.privileged_context |= privileged;
        match stdin {
            Stdin::Terminal => self.unknown(format!("{shell} reads commands interactively")),
            Stdin::Pipe {
                downloads: true, ..
            } => {
                self.remote_code
                    .push(format!("downloaded content is piped into {shell}"));
            }
            Stdin::Pipe {
                script: Some(text), ..
            } => {
                downloads |=
                    self.walk_child_script(&text, &format!("piped into {shell}"), Stdin::Terminal);
            }
            Stdin::Pipe { .. } => self.unknown(format!("{shell} runs a script from a pipe")),
            Stdin::Text { text, dynamic } => {
                if dynamic {
                    self.unknown(format!("the heredoc fed to {shell} has expansions"));
                }
                downloads |=
                    self.walk_child_script(&text, &format!("heredoc to {shell}"), Stdin::Terminal);
            }
        }
        if args_download {
            self.remote_code
                .push(format!("downloaded content is run by {shell}"));
        }
        self.privileged_context = saved;
        downloads
    }

    /// A wrapper whose inner command cannot be known statically: recorded whole, never allowed
    /// by a rule.
    fn simple_unknown(&mut self, mut s: Simple<'_>, why: String) -> bool {
        if s.args_download
            && s.un
                .wrappers
                .iter()
                .any(|w| wrappers::SHELLS.contains(&w.as_str()))
        {
            self.remote_code
                .push("downloaded content is run by a shell".into());
        }
        s.dynamic = Some(why);
        self.push_whole(s, false);
        false
    }

    /// Records a command as its whole words (wrappers included), for the outer part of a shell
    /// wrapper or a command whose inner part is unknown.
    fn push_whole(&mut self, s: Simple<'_>, wrapper_only: bool) {
        let argv = s.words.iter().map(|w| w.text.clone()).collect();
        let cmd = self.command(CommandParts {
            argv,
            words: s.words,
            levels: &s.un.levels,
            context: s.context,
            dynamic: s.dynamic,
            reads: s.reads,
            writes: s.writes,
            tree_writes: Vec::new(),
            option_issue: None,
            hosts: Vec::new(),
            privileged: s.privileged,
            wrapper_only,
            assignments: s.env.iter().map(|w| w.text.clone()).collect(),
        });
        self.commands.push(cmd);
    }

    /// Adds one prefix or suffix item. After the command name, `name=value` is an ordinary
    /// argument (`dd of=/dev/sda`), not an environment assignment.
    fn collect_item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        c: &mut Collected,
        in_suffix: bool,
    ) {
        match item {
            ast::CommandPrefixOrSuffixItem::Word(w)
            | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w)
                if in_suffix =>
            {
                let v = self.eval(&w.value);
                c.downloads |= self.walk_word_substitutions(&v);
                c.words.push(v);
            }
            ast::CommandPrefixOrSuffixItem::Word(w) => {
                let v = self.eval(&w.value);
                c.downloads |= self.walk_word_substitutions(&v);
                c.words.push(v);
            }
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                let name = match &a.name {
                    ast::AssignmentName::VariableName(n)
                    | ast::AssignmentName::ArrayElementName(n, _) => n.as_str(),
                };
                let raw_value = w.value.split_once('=').map_or("", |(_, v)| v);
                if options::env::assignment_changes_what_runs(name, raw_value)
                    && c.dynamic.is_none()
                {
                    c.dynamic = Some(format!("it sets {name}, which changes what runs"));
                }
                if let Some((_, value)) = w.value.split_once('=') {
                    let v = self.eval(value);
                    c.downloads |= self.walk_word_substitutions(&v);
                    c.env.push(WordValue {
                        text: format!("{name}={}", v.text),
                        ..v
                    });
                }
            }
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
                c.downloads |= self.redirect(r, &mut c.reads, &mut c.writes, &mut c.stdin);
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                let saved = self.cwd.clone();
                let d = self.walk_list(&sub.list, "process substitution", &Stdin::Terminal);
                self.cwd = saved;
                c.proc_subst_downloads |= d;
                c.downloads |= d;
                c.words.push(WordValue::literal("/dev/fd/63"));
            }
        }
    }

    /// eval, trap, alias, source: code run later or from elsewhere.
    fn special_builtin(
        &mut self,
        base: &str,
        argv: &[WordValue],
        dynamic: &mut Option<String>,
        context: &str,
    ) {
        let set = |d: &mut Option<String>, why: String| {
            if d.is_none() {
                *d = Some(why);
            }
        };
        match base {
            "eval" => {
                let joined: Vec<&str> = argv[1..].iter().map(|w| w.text.as_str()).collect();
                set(dynamic, "eval runs a string as code".into());
                self.walk_script(&joined.join(" "), "eval", Stdin::Terminal);
            }
            "trap" => {
                if let Some(code) = argv.get(1).filter(|w| !w.text.starts_with('-')) {
                    self.walk_script(&code.text.clone(), "trap", Stdin::Terminal);
                }
            }
            "alias" | "unalias" | "hash" | "enable" | "set" | "shopt" => {
                set(
                    dynamic,
                    format!("{base} changes how later commands are run"),
                );
            }
            "export" | "declare" | "typeset" | "readonly" | "local" => {
                for w in &argv[1..] {
                    let name = w.text.split('=').next().unwrap_or("");
                    if options::env::changes_what_runs(name) {
                        self.unknown(format!(
                            "{base} {name} changes what the commands after it run"
                        ));
                    }
                }
            }
            "source" | "." => set(
                dynamic,
                format!(
                    "{base} runs the script {:?}, whose content is not known",
                    argv.get(1).map_or("", |w| w.text.as_str())
                ),
            ),
            _ => {}
        }
        let _ = context;
    }

    /// `find … -exec cmd … ;` runs cmd for each file found: judge cmd like any other command,
    /// with `{}` as a file not known statically.
    fn find_exec(&mut self, argv: &[WordValue], privileged: bool) {
        let mut i = 1;
        while i < argv.len() {
            let t = argv[i].text.as_str();
            if !matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
                i += 1;
                continue;
            }
            let end = argv[i + 1..]
                .iter()
                .position(|w| w.text == ";" || w.text == "+")
                .map_or(argv.len(), |p| i + 1 + p);
            let joined: Vec<String> = argv[i + 1..end]
                .iter()
                .map(|w| shell_quote(&w.text))
                .collect();
            if !joined.is_empty() {
                let before = self.commands.len();
                self.walk_child_script(&joined.join(" "), &format!("find {t}"), Stdin::Terminal);
                for c in &mut self.commands[before..] {
                    c.privileged |= privileged;
                    if c.argv.iter().any(|a| a.contains("{}")) && c.dynamic.is_none() {
                        c.dynamic = Some(format!("find {t} runs it on files found at run time"));
                    }
                }
            }
            i = end + 1;
        }
    }

    fn join_cwd(&self, path: &str) -> Option<String> {
        if path.starts_with('/') || path.starts_with('~') {
            return Some(path.to_string());
        }
        match &self.cwd {
            Cwd::Start => Some(path.to_string()),
            Cwd::Dir(d) => Some(format!("{}/{path}", d.trim_end_matches('/'))),
            Cwd::Unknown => None,
        }
    }

    fn command(&mut self, parts: CommandParts<'_>) -> SimpleCommand {
        let CommandParts {
            argv,
            words,
            levels,
            context,
            mut dynamic,
            reads,
            writes,
            tree_writes,
            option_issue,
            hosts,
            privileged,
            wrapper_only,
            assignments,
        } = parts;
        let (tree_words, skips_hidden) = self.pending_tree.take().unwrap_or_default();
        let mut targets = |list: Vec<WordValue>| -> Vec<String> {
            let mut out = Vec::new();
            for w in list {
                if matches!(
                    w.text.as_str(),
                    "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "-" | "/dev/fd/63"
                ) {
                    continue;
                }
                if (w.dynamic.is_some() || w.glob) && dynamic.is_none() {
                    // Keep the best reading for deny matching; no rule may allow it.
                    dynamic = Some(format!("the file {:?} is not known statically", w.text));
                }
                if w.glob {
                    // `rm -rf ~/*` touches everything in `~`: also offer the directory the glob
                    // starts from, so a deny rule on that directory applies.
                    let cut = w.text.find(['*', '?', '[']).unwrap_or(w.text.len());
                    let base = w.text[..cut]
                        .rsplit_once('/')
                        .map_or(".", |(b, _)| if b.is_empty() { "/" } else { b });
                    if let Some(p) = self.join_cwd(base) {
                        out.push(p);
                    }
                }
                match self.join_cwd(&w.text) {
                    Some(p) => out.push(p),
                    None => {
                        if dynamic.is_none() {
                            dynamic = Some(format!(
                                "the file {:?} is relative to a directory not known statically",
                                w.text
                            ));
                        }
                        out.push(w.text.clone());
                    }
                }
            }
            out
        };
        let reads = targets(reads);
        let writes = targets(writes);
        let tree_reads = targets(tree_words);
        let tree_writes = targets(tree_writes);
        let text = argv.join(" ");
        let full: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        // The command with its program's known name (`/usr/bin/git` → `git`).
        let mut normal = argv.clone();
        if let Some(first) = normal.first_mut() {
            *first = program_name(first).to_string();
        }
        let normal = normal.join(" ");
        let deny_texts = deny_texts(&argv, &full, levels, &normal);
        let allow_text = if privileged && !self.privileged_context {
            full.join(" ")
        } else {
            normal
        };
        let wrappers_removed = levels
            .iter()
            .take(levels.len().saturating_sub(1))
            .filter_map(|&l| full.get(l))
            .map(|w| basename(w).to_string())
            .collect();
        SimpleCommand {
            argv,
            text,
            allow_text,
            deny_texts,
            wrappers: wrappers_removed,
            privileged,
            wrapper_only,
            reads,
            writes,
            tree_reads,
            skips_hidden,
            tree_writes,
            option_issue,
            hosts,
            dynamic,
            context: context.to_string(),
            assignments,
        }
    }
}

/// One simple command after its wrappers were seen through: what [`Walker::walk_simple`] hands
/// to the function for its kind of inner command.
struct Simple<'a> {
    /// Every word, wrappers included.
    words: &'a [WordValue],
    /// The wrappers and what they run.
    un: &'a wrappers::Unwrapped,
    context: &'a str,
    /// Why it cannot be known statically, when it cannot.
    dynamic: Option<String>,
    reads: Vec<WordValue>,
    writes: Vec<WordValue>,
    /// Its standard input.
    stdin: Stdin,
    /// Run with privileges (sudo, doas, …, or inside such a script).
    privileged: bool,
    /// Its arguments or a process substitution download something.
    args_download: bool,
    /// `NAME=value` assignments for it (before it, or given to `env`, `sudo`, …).
    env: Vec<WordValue>,
}

/// Everything [`Walker::command`] records for one command.
struct CommandParts<'a> {
    argv: Vec<String>,
    words: &'a [WordValue],
    levels: &'a [usize],
    context: &'a str,
    dynamic: Option<String>,
    reads: Vec<WordValue>,
    writes: Vec<WordValue>,
    /// Directories deleted or emptied with everything under them.
    tree_writes: Vec<WordValue>,
    /// An option a rule must name.
    option_issue: Option<OptionIssue>,
    hosts: Vec<String>,
    privileged: bool,
    /// Only the wrapper part of a command whose script is judged on its own.
    wrapper_only: bool,
    /// `NAME=value` assignments it runs with.
    assignments: Vec<String>,
}

/// What the words and redirections of one simple command add up to.
#[derive(Default)]
struct Collected {
    words: Vec<WordValue>,
    /// `NAME=value` assignments before the command.
    env: Vec<WordValue>,
    reads: Vec<WordValue>,
    writes: Vec<WordValue>,
    stdin: Option<Stdin>,
    dynamic: Option<String>,
    downloads: bool,
    proc_subst_downloads: bool,
}

/// Every text a deny or ask rule is tried against: each wrapper level (also with the program's
/// basename: `/opt/x/git push` → `git push`), git without its global options, the command as
/// written and with its program's known name.
fn deny_texts(argv: &[String], full: &[String], levels: &[usize], normal: &str) -> Vec<String> {
    let mut out = Vec::new();
    for &l in levels {
        if l <= full.len() {
            let level = full[l..].join(" ");
            if !level.is_empty() {
                out.push(level);
            }
            if let Some(first) = full.get(l)
                && first.contains('/')
            {
                let mut alt = vec![basename(first).to_string()];
                alt.extend(full[l + 1..].iter().cloned());
                out.push(alt.join(" "));
            }
        }
    }
    if let Some(plain) = git_without_global_options(argv) {
        out.push(plain);
    }
    let text = argv.join(" ");
    if !text.is_empty() {
        out.push(text);
        out.push(normal.to_string());
    }
    out.sort();
    out.dedup();
    out
}

/// `git -C dir --no-pager push …` → `git push …`, so rules on git subcommands see through
/// git's own global options.
fn git_without_global_options(argv: &[String]) -> Option<String> {
    if argv.first().map(|a| basename(program_name(a))) != Some("git") {
        return None;
    }
    let i = 1 + wrappers::git_global_options_len(argv[1..].iter().map(String::as_str));
    if i == 1 || i >= argv.len() {
        return None;
    }
    let mut out = vec!["git".to_string()];
    out.extend(argv[i..].iter().cloned());
    Some(out.join(" "))
}

/// The static text `echo`/`printf` prints (wrappers seen through), for `echo '…' | sh`.
fn static_echo(s: &ast::SimpleCommand) -> Option<String> {
    let mut words_v = vec![words::evaluate(&s.word_or_name.as_ref()?.value)];
    // A heredoc or here-string without expansions: what `cat` prints when it has no file.
    let mut text: Option<String> = None;
    for item in s.suffix.iter().flat_map(|x| x.0.iter()) {
        match item {
            ast::CommandPrefixOrSuffixItem::Word(w)
            | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                words_v.push(words::evaluate(&w.value));
            }
            ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::HereDocument(
                None | Some(0),
                doc,
            )) if text.is_none() => {
                if doc.requires_expansion
                    && (doc.doc.value.contains('$') || doc.doc.value.contains('`'))
                {
                    return None;
                }
                text = Some(doc.doc.value.clone());
            }
            ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::HereString(
                None | Some(0),
                w,
            )) if text.is_none() => {
                let v = words::evaluate(&w.value);
                if v.dynamic.is_some() {
                    return None;
                }
                text = Some(v.text);
            }
            _ => return None,
        }
    }
    if let Some(text) = text {
        // `cat <<EOF`, `cat - <<EOF`, `cat <<<'…'`: the text is the output.
        let name = words_v.first()?;
        let only_stdin = words_v[1..].iter().all(|w| w.text == "-");
        return (basename(program_name(&name.text)) == "cat"
            && name.dynamic.is_none()
            && only_stdin)
            .then_some(text);
    }
    let un = wrappers::unwrap(&words_v);
    let k = match un.inner {
        Inner::Argv(k) => k,
        // `watch echo '…'`, `bash -c "echo '…'"`: what the script prints. When the wrapper's
        // words also read another way (`watch` joins them, losing their quotes), both outputs
        // count: the shell they are piped into is judged on each.
        Inner::Script(script) if script.dynamic.is_none() => {
            let joined = static_echo_script(&script.text);
            let quoted = un.alt_script.as_deref().and_then(static_echo_script);
            return match (joined, quoted) {
                (Some(a), Some(b)) if a != b => Some(format!("{a}\n{b}")),
                (a, b) => a.or(b),
            };
        }
        _ => return None,
    };
    let argv = words_v.get(k..)?;
    let name = argv.first()?;
    if !matches!(basename(program_name(&name.text)), "echo" | "printf") {
        return None;
    }
    let mut parts = Vec::new();
    for v in &argv[1..] {
        if v.dynamic.is_some() {
            return None;
        }
        if parts.is_empty() && v.text.starts_with('-') && basename(&name.text) == "echo" {
            continue;
        }
        parts.push(v.text.clone());
    }
    Some(parts.join(" "))
}

/// What a one-command script prints, if it is a static `echo`/`printf`.
fn static_echo_script(text: &str) -> Option<String> {
    let program = parse(text).ok()?;
    let [cc] = program.complete_commands.as_slice() else {
        return None;
    };
    let [ast::CompoundListItem(and_or, _)] = cc.0.as_slice() else {
        return None;
    };
    if !and_or.additional.is_empty() || and_or.first.seq.len() != 1 {
        return None;
    }
    match &and_or.first.seq[0] {
        ast::Command::Simple(s) => static_echo(s),
        _ => None,
    }
}

/// What `find -delete` deletes: everything it selects under its start paths (`.` when none).
fn find_deletes(argv: &[WordValue]) -> Vec<WordValue> {
    if !argv.iter().any(|w| w.text == "-delete") {
        return Vec::new();
    }
    let starts: Vec<WordValue> = argv[1..]
        .iter()
        .take_while(|w| !w.text.starts_with('-') && !matches!(w.text.as_str(), "(" | "!" | ")"))
        .cloned()
        .collect();
    if starts.is_empty() {
        vec![WordValue::literal(".")]
    } else {
        starts
    }
}

/// Whether `rm`'s options make it recursive (`-r`, `-R`, `-rf`, `--recursive`).
fn rm_recursive(argv: &[WordValue]) -> bool {
    argv[1..].iter().take_while(|w| w.text != "--").any(|w| {
        w.text == "--recursive"
            || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains(['r', 'R']))
    })
}

/// What a command's options and variables do, from its tool's table ([`options`]): files read,
/// written and emptied are added to the command's; the first effect a rule must name becomes its
/// issue; values that name what runs are returned with their context, to be judged as scripts.
fn option_effects(
    argv: &[WordValue],
    env: &[WordValue],
    reads: &mut Vec<WordValue>,
    writes: &mut Vec<WordValue>,
    tree_reads: &mut Vec<WordValue>,
    tree_writes: &mut Vec<WordValue>,
) -> (Option<OptionIssue>, Vec<(String, WordValue)>) {
    use options::Effect;
    let mut issue = None;
    let mut runs = Vec::new();
    let Some(findings) = options::check(argv, env) else {
        return (None, runs);
    };
    let tool = argv.first().map_or("", |w| basename(&w.text)).to_string();
    // The effects table may know the same file already (`sort -o`, `git diff --output`).
    let add = |list: &mut Vec<WordValue>, v: &WordValue| {
        if !list.iter().any(|w| w.text == v.text) {
            list.push(v.clone());
        }
    };
    for f in findings {
        match (f.effect, &f.value) {
            (Effect::Plain, _)
            | (
                Effect::Read
                | Effect::Write
                | Effect::Delete
                | Effect::ReadTree
                | Effect::WriteTree,
                None,
            ) => {}
            (Effect::Read, Some(v)) => add(reads, v),
            (Effect::Write, Some(v)) => add(writes, v),
            (Effect::Delete | Effect::WriteTree, Some(v)) => {
                add(writes, v);
                add(tree_writes, v);
            }
            (Effect::ReadTree, Some(v)) => {
                add(reads, v);
                add(tree_reads, v);
            }
            (effect, _) => {
                // The list itself is read like any other file.
                if let (Effect::ReadsListed, Some(v)) = (effect, &f.value) {
                    add(reads, v);
                }
                if let Some(v) = &f.value
                    && (effect == Effect::Script
                        || effect == Effect::Program && v.text.contains(['/', ' ']))
                {
                    runs.push((format!("{tool} {}", f.name), v.clone()));
                }
                issue.get_or_insert_with(|| OptionIssue {
                    why: format!("`{}` {}", f.word, f.why),
                    word: f.word,
                    name: f.name,
                });
            }
        }
    }
    (issue, runs)
}

#[cfg(test)]
mod tests;

//! Closed-world options: what every option of every tool the default policy allows does.
//!
//! This module owns, for each tool named by a `Bash(…)` allow rule of the embedded default policy
//! (`rg`, `find`, `git diff`, `cargo test`, `pytest`, …), a table of its options: which are
//! harmless, which take a value, and what each does beyond the tool's name (a file it reads or
//! writes, a directory it empties, a program it runs, the environment it prints, a change to the
//! system). [`check`] reads a command's words and the variables set for it against its table and
//! reports [`Finding`]s: the walker turns file effects into reads and writes, judged like any
//! other, and everything else makes the command not rule-allowed. An option a table does not know
//! is a finding too: nothing is guessed. Tools without a table are not checked here (a user's rule
//! that names them allows what it names), but variables that change what any program runs are
//! ([`env`]).
//!
//! Tables are text, one option a line (`NAMES [VALUE] [EFFECT[@POS]][: why]`), kept per family:
//! [`files`] (coreutils and search tools), [`git`] (git, gh, docker, kubectl views), [`build`]
//! (build, test and lint tools). docs/rules.md lists them. `VALUE` is `=` (one value), `=2` (two)
//! or `=?` (only attached); `@POS` says which value is the file an effect acts on (`-fprintf =2
//! write@1`: find writes its first value, the second is a format). An option with two values and
//! an effect must say which: that is checked when the crate is built ([`POSITIONS_SAID`]) and
//! again when a table is compiled. tests/it/tools_differential.rs runs the real tools to prove
//! that each file an option is said to touch is the file it touches.

pub mod build;
pub mod env;
pub mod files;
pub mod git;
mod tools;

use std::collections::HashMap;
use std::sync::OnceLock;

use super::words::WordValue;

/// What an option (or operand, or variable) does beyond what the tool is named for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Only changes what the tool prints or selects.
    Plain,
    /// Its value is a file the tool reads.
    Read,
    /// Its value is a file or directory the tool writes.
    Write,
    /// Its value is a directory the tool empties or deletes (everything under it is written).
    Delete,
    /// Its value is a directory the tool reads files under (`make -I`, `jq -L`).
    ReadTree,
    /// Its value is a directory the tool writes files under (`sort -T`, `cargo --target-dir`).
    WriteTree,
    /// Its value is a file listing the files the tool reads (`--files0-from`, `file -f`): the
    /// list is read, and what it names cannot be known statically.
    ReadsListed,
    /// Its value is a command line the tool runs (judged like `sh -c`).
    Script,
    /// Its value names a program, plug-in or code file the tool runs or loads.
    Program,
    /// The option makes the tool run other programs.
    Spawns,
    /// The tool prints environment variables, secrets included.
    Env,
    /// It changes state beyond the tool's output (the clock, branches, source files).
    Changes,
    /// Its value is configuration that can change what the tool runs, reads or writes.
    Config,
    /// Not in the tool's table.
    Unknown,
}

impl Effect {
    fn parse(word: &str) -> Option<Effect> {
        Some(match word {
            "read" => Effect::Read,
            "write" => Effect::Write,
            "delete" => Effect::Delete,
            "read-tree" => Effect::ReadTree,
            "write-tree" => Effect::WriteTree,
            "reads-listed" => Effect::ReadsListed,
            "script" => Effect::Script,
            "program" => Effect::Program,
            "spawns" => Effect::Spawns,
            "env" => Effect::Env,
            "changes" => Effect::Changes,
            "config" => Effect::Config,
            _ => return None,
        })
    }

    /// Whether this effect keeps a command from being allowed by a rule that does not name it
    /// (file effects do not: their paths are judged like any other read or write).
    pub fn needs_naming(self) -> bool {
        !matches!(
            self,
            Effect::Plain
                | Effect::Read
                | Effect::Write
                | Effect::Delete
                | Effect::ReadTree
                | Effect::WriteTree
        )
    }

    /// What it does, said of the option.
    fn says(self) -> &'static str {
        match self {
            Effect::Plain => "is harmless",
            Effect::Read => "reads a file",
            Effect::Write => "writes a file",
            Effect::Delete => "empties or deletes a directory",
            Effect::ReadTree => "reads files under a directory",
            Effect::WriteTree => "writes files under a directory",
            Effect::ReadsListed => {
                "reads the files a list names, which cannot be known before it runs"
            }
            Effect::Script => "runs a command line",
            Effect::Program => "runs or loads another program",
            Effect::Spawns => "makes it run other programs",
            Effect::Env => "prints the environment, secrets included",
            Effect::Changes => "changes state beyond its output",
            Effect::Config => "sets configuration that can change what it runs or writes",
            Effect::Unknown => "is not an option guardian knows for it",
        }
    }
}

/// One thing a command's words or variables do that its table flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The word as written (`--pre=/tmp/x`, `-delete`, `GIT_PAGER=less`, `env`).
    pub word: String,
    /// The option's name as a rule would write it (`--pre`), or the variable's name.
    pub name: String,
    /// What it does.
    pub effect: Effect,
    /// Its value, when it has one (the path written, the program run).
    pub value: Option<WordValue>,
    /// Why, in a few words.
    pub why: String,
}

impl Finding {
    /// A finding with the effect's own words as its reason.
    pub fn new(word: &str, name: &str, effect: Effect, value: Option<WordValue>) -> Finding {
        Finding {
            word: word.to_string(),
            name: name.to_string(),
            effect,
            value,
            why: effect.says().to_string(),
        }
    }

    /// The same finding, with its own reason.
    pub fn because(mut self, why: &str) -> Finding {
        if !why.is_empty() {
            self.why = why.to_string();
        }
        self
    }
}

/// How a tool's options are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `-a`, clusters (`-la`), `-n5`/`-n 5`, `--name`, `--name=value`/`--name value`; a
    /// multi-letter single-dash name in the table (`mvn -pl`) is one option.
    Gnu,
    /// `-name` or `--name`, `-name=value`/`-name value`, no clusters (Go's flag package, tsc).
    Single,
    /// Like [`Style::Gnu`], but a short option's value is never the rest of its word: each letter
    /// of a cluster that takes a value takes the next unused word (tree's parser: `-Lo 2 out` is
    /// `-L 2 -o out`, and `-ox FILE` writes FILE, not `x`).
    Next,
}

/// What words after `--` are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    /// Operands like any other.
    Operands,
    /// Arguments for another program, read against that table (`cargo test -- --nocapture`).
    Table(&'static str),
}

/// A tool-specific look at the parsed words, for what the table cannot say (a filter that
/// reads the environment, an operand that sets the clock, `make VAR=value`).
pub type Check = fn(&Parsed<'_>, &mut Vec<Finding>);

/// One tool's table.
pub struct Tool {
    /// The words that name it: the program's basename, then its subcommand words (`git diff`,
    /// `npm run test`, `python -m pytest`); `@name` for a table of passed-on arguments.
    pub head: &'static str,
    /// How its options are spelled.
    pub style: Style,
    /// Whether its first operand is a subcommand with a table of its own (`git`, `cargo`).
    pub sub: bool,
    /// Its option lines.
    pub options: &'static str,
    /// What words after `--` are.
    pub rest: Rest,
    /// A check of its operands and option values, if it needs one.
    pub check: Option<Check>,
    /// Options that take every word up to `;` or `+` (find's `-exec`): those words are another
    /// command, judged on its own.
    pub terminated: &'static [&'static str],
    /// Whether options end at the first operand (POSIX utilities such as `printf`), so later
    /// words starting with `-` are operands.
    pub posix: bool,
    /// Whether its operands are files or directories of code it runs, compiles or lints
    /// (`pytest ../other/tests`, `go test /tmp/x/...`): each path-like operand is a read, so code
    /// outside the workspace is never run by a rule that names the tool.
    pub reads_operands: bool,
}

/// A command's words read against a table.
#[derive(Debug, Default)]
pub struct Parsed<'a> {
    /// The tool's head (`git diff`).
    pub head: &'static str,
    /// Options with their values: (the table's first spelling, the word as written, values).
    pub options: Vec<(&'static str, String, Vec<WordValue>)>,
    /// Operands.
    pub operands: Vec<&'a WordValue>,
    /// Words after `--` (or after the option that passes the rest on).
    pub rest: Vec<&'a WordValue>,
}

impl Parsed<'_> {
    /// The values given to the option whose first spelling is `name`.
    pub fn values(&self, name: &str) -> impl Iterator<Item = &WordValue> {
        self.options
            .iter()
            .filter(move |(n, _, _)| *n == name)
            .flat_map(|(_, _, v)| v.iter())
    }

    /// Whether the option whose first spelling is `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _, _)| *n == name)
    }
}

/// How many values an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arity {
    None,
    /// Only attached (`--color=never`, `-uno`).
    Optional,
    Required(usize),
}

impl Arity {
    /// How many values it takes (an optional one counts as one).
    fn values(self) -> usize {
        match self {
            Arity::None => 0,
            Arity::Optional => 1,
            Arity::Required(n) => n,
        }
    }
}

#[derive(Debug, Clone)]
struct Opt {
    first: &'static str,
    arity: Arity,
    effect: Effect,
    /// Which of its values (1-based) the effect acts on; empty when it takes none.
    at: Vec<usize>,
    why: &'static str,
}

/// A table compiled for lookup.
struct Compiled {
    tool: &'static Tool,
    exact: HashMap<&'static str, Opt>,
    prefixes: Vec<(&'static str, Opt)>,
    numeric: bool,
    /// Every line's spellings and option, in table order (for [`entries`]).
    lines: Vec<(Vec<&'static str>, Opt)>,
}

/// An error in a table's text (a test proves every table compiles).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("options table `{head}`, line {line:?}: {why}")]
pub struct TableError {
    head: String,
    line: String,
    why: String,
}

fn compile(tool: &'static Tool) -> Result<Compiled, TableError> {
    let mut c = Compiled {
        tool,
        exact: HashMap::new(),
        prefixes: Vec::new(),
        numeric: false,
        lines: Vec::new(),
    };
    for line in tool.options.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |why: &str| TableError {
            head: tool.head.to_string(),
            line: line.to_string(),
            why: why.to_string(),
        };
        let (spec, why) = match line.split_once(": ") {
            Some((s, w)) => (s, w.trim()),
            None => (line.trim_end_matches(':'), ""),
        };
        let mut names = Vec::new();
        let mut arity = Arity::None;
        let mut effect = Effect::Plain;
        let mut at = Vec::new();
        for word in spec.split_whitespace() {
            match word {
                "=" => arity = Arity::Required(1),
                "=2" => arity = Arity::Required(2),
                "=?" => arity = Arity::Optional,
                w if w.starts_with('-') && w.len() > 1 => names.push(w),
                w => {
                    let (name, pos) = match w.split_once('@') {
                        Some((n, p)) => (n, Some(p)),
                        None => (w, None),
                    };
                    effect = Effect::parse(name)
                        .ok_or_else(|| err(&format!("unknown word {name:?}")))?;
                    if let Some(pos) = pos {
                        for k in pos.split(',') {
                            at.push(k.parse::<usize>().map_err(|_| {
                                err(&format!("position {k:?} of {w:?} is not a number"))
                            })?);
                        }
                    }
                }
            }
        }
        let Some(first) = names.first().copied() else {
            return Err(err("no option name"));
        };
        let takes = arity.values();
        if at.iter().any(|&k| k == 0 || k > takes) {
            return Err(err(&format!(
                "a position names a value the option does not take (it takes {takes})"
            )));
        }
        if at.is_empty() && effect != Effect::Plain && takes > 0 {
            if takes > 1 {
                return Err(err(
                    "an option with several values and an effect must say which value it acts on (`write@1`)",
                ));
            }
            at.push(1);
        }
        let opt = Opt {
            first,
            arity,
            effect,
            at,
            why,
        };
        for &n in &names {
            if n == "-NUM" {
                c.numeric = true;
            } else if let Some(p) = n.strip_suffix('*') {
                c.prefixes.push((p, opt.clone()));
            } else {
                c.exact.insert(n, opt.clone());
            }
        }
        c.lines.push((names, opt));
    }
    Ok(c)
}

impl Compiled {
    fn find(&self, name: &str) -> Option<&Opt> {
        self.exact.get(name).or_else(|| {
            self.prefixes
                .iter()
                .filter(|(p, _)| name.starts_with(p))
                .max_by_key(|(p, _)| p.len())
                .map(|(_, o)| o)
        })
    }
}

/// Whether every option line of a table that takes two or more values and has an effect says
/// which value the effect acts on (`=2 write@1`). Run on every table when the crate is built
/// ([`POSITIONS_SAID`]), so the `-fprintf` kind of mistake cannot ship.
pub const fn positions_said(table: &str) -> bool {
    let b = table.as_bytes();
    let mut i = 0;
    while i < b.len() {
        // One line: [i, end).
        let mut end = i;
        while end < b.len() && b[end] != b'\n' {
            end += 1;
        }
        // The spec ends at ": " (the reason follows).
        let mut spec_end = i;
        while spec_end < end
            && !(b[spec_end] == b':' && spec_end + 1 < end && b[spec_end + 1] == b' ')
        {
            spec_end += 1;
        }
        let (mut multi, mut bare_effect, mut comment, mut first) = (false, false, false, true);
        let mut k = i;
        while k < spec_end {
            while k < spec_end && (b[k] == b' ' || b[k] == b'\t') {
                k += 1;
            }
            if k >= spec_end {
                break;
            }
            let start = k;
            let mut at = false;
            while k < spec_end && b[k] != b' ' && b[k] != b'\t' {
                at |= b[k] == b'@';
                k += 1;
            }
            if first && b[start] == b'#' {
                comment = true;
            }
            first = false;
            if b[start] == b'=' {
                multi |= k - start >= 2 && b[start + 1] >= b'2' && b[start + 1] <= b'9';
            } else if !(at || (b[start] == b'-' && k - start > 1)) {
                bare_effect = true;
            }
        }
        if !comment && multi && bare_effect {
            return false;
        }
        i = end + 1;
    }
    true
}

/// Checked when the crate is built: no table has a multi-value option with an effect and no
/// position (a build-time error, not a test that might not run).
pub const POSITIONS_SAID: () = {
    let mut i = 0;
    while i < tools::TOOLS.len() {
        assert!(
            positions_said(tools::TOOLS[i].options),
            "an options table has an option with several values and an effect but no @POSITION (e.g. `-fprintf =2 write@1`)"
        );
        i += 1;
    }
};

const _: () = POSITIONS_SAID;

/// The compiled tables: by head, and the heads of each program (for [`check`]).
struct Registry {
    by_head: HashMap<&'static str, Compiled>,
    by_program: HashMap<&'static str, Vec<(Vec<&'static str>, &'static str)>>,
}

fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| {
        let mut reg = Registry {
            by_head: HashMap::new(),
            by_program: HashMap::new(),
        };
        // A table that does not compile is left out (so its tool is judged as unknown); the
        // test `every_table_compiles` keeps that from shipping.
        for t in tools::TOOLS {
            if let Ok(c) = compile(t) {
                reg.by_head.insert(t.head, c);
                let words: Vec<&'static str> = t.head.split(' ').collect();
                reg.by_program
                    .entry(words[0])
                    .or_default()
                    .push((words, t.head));
            }
        }
        reg
    })
}

/// Compiles every table, reporting the first error (for tests and `guardian policy check`).
pub fn validate() -> Result<usize, TableError> {
    let mut n = 0;
    for t in tools::TOOLS {
        n += compile(t)?.exact.len();
    }
    Ok(n)
}

/// One option of a table, as compiled: for docs and for the tests that run the real tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The table's head (`find`, `git diff`).
    pub head: &'static str,
    /// Its spellings as the table writes them, the first first (a trailing `*` is a prefix,
    /// `-NUM` a number as an option).
    pub names: Vec<String>,
    /// What it does.
    pub effect: Effect,
    /// How many values it takes (an optional value counts as one).
    pub values: usize,
    /// Whether its value is optional, and then only attached (`--debug=FILE`).
    pub optional: bool,
    /// Which values (1-based) its effect acts on.
    pub at: Vec<usize>,
}

/// Every option of every table that compiles, in table order.
pub fn entries() -> Vec<Entry> {
    tools::TOOLS
        .iter()
        .filter_map(|t| compile(t).ok())
        .flat_map(|c| {
            let head = c.tool.head;
            c.lines.into_iter().map(move |(names, o)| Entry {
                head,
                names: names.iter().map(|n| n.to_string()).collect(),
                effect: o.effect,
                values: o.arity.values(),
                optional: o.arity == Arity::Optional,
                at: o.at,
            })
        })
        .collect()
}

/// The heads of every table, for docs and tests.
pub fn heads() -> impl Iterator<Item = &'static str> {
    tools::TOOLS.iter().map(|t| t.head)
}

/// The program name a table is looked up by: the basename, with versioned Pythons folded
/// (`python3.12` → `python3`).
fn program(word: &str) -> &str {
    let base = super::text::basename(word);
    if base.starts_with("python3") && base[7..].chars().all(|c| c.is_ascii_digit() || c == '.') {
        return "python3";
    }
    base
}

/// What a command's words and variables do, read against its tool's table; `None` when no
/// table knows the tool. `env` are the variables assigned for it (`NAME=value` words).
pub fn check(argv: &[WordValue], env: &[WordValue]) -> Option<Vec<Finding>> {
    let first = argv.first()?;
    let reg = registry();
    // The longest literal head (`python -m pytest`) first, then the program alone.
    let (words, head) = reg
        .by_program
        .get(program(&first.text))?
        .iter()
        .filter(|(words, _)| {
            words.len() <= argv.len()
                && words[1..]
                    .iter()
                    .zip(&argv[1..])
                    .all(|(h, w)| *h == w.text && w.dynamic.is_none())
        })
        .max_by_key(|(words, _)| words.len())?;
    let n = words.len();
    let c = reg.by_head.get(head)?;
    let mut out = Vec::new();
    read_against(c, &argv[n..], &mut out);
    env::check_assignments(env, &mut out);
    if *head == "cargo clean" {
        env::target_dir_deleted(env, &mut out);
    }
    Some(out)
}

/// A command's words as its tool's table reads them: the options given (by their table's first
/// spelling) and the operands, for the effects table (`jq -f`: every operand is then a file);
/// `None` when no table knows the program.
pub fn words_of(argv: &[WordValue]) -> Option<(Vec<&'static str>, Vec<WordValue>)> {
    let first = argv.first()?;
    let reg = registry();
    let (_, head) = reg
        .by_program
        .get(program(&first.text))?
        .iter()
        .find(|(words, _)| words.len() == 1)?;
    let c = reg.by_head.get(head)?;
    let mut ignored = Vec::new();
    let (parsed, _) = parse(c, &argv[1..], &mut ignored);
    let names = parsed.options.iter().map(|(n, _, _)| *n).collect();
    let operands = parsed.operands.into_iter().cloned().collect();
    Some((names, operands))
}

/// Reads `args` against a compiled table, following subcommands and passed-on arguments.
fn read_against(c: &Compiled, args: &[WordValue], out: &mut Vec<Finding>) {
    let reg = registry();
    let mut c = c;
    let mut args = args;
    // Bounded: each round moves to a longer head.
    for _ in 0..6 {
        let (parsed, stop) = parse(c, args, out);
        if c.tool.reads_operands {
            code_operands(&parsed.operands, out);
        }
        if let Some(check) = c.tool.check {
            check(&parsed, out);
        }
        if let Some(k) = stop {
            // The first operand of a tool with subcommands: read the rest against its table.
            let sub = args[k].text.as_str();
            let head = format!("{} {sub}", c.tool.head);
            match reg.by_head.get(head.as_str()) {
                Some(next) => {
                    c = next;
                    args = &args[k + 1..];
                    continue;
                }
                // A subcommand no table knows: what a rule names of it is what it allows.
                None => return,
            }
        }
        if !parsed.rest.is_empty() {
            match c.tool.rest {
                Rest::Table(name) => {
                    if let Some(next) = reg.by_head.get(name) {
                        let owned: Vec<WordValue> =
                            parsed.rest.iter().map(|w| (*w).clone()).collect();
                        read_against(next, &owned, out);
                    }
                }
                Rest::Operands => {}
            }
        }
        return;
    }
}

/// Path-like operands (`/x`, `./x`, `../x`, `~/x`, `a/b`) of a tool that runs, compiles or lints
/// what they name: reads of the path (a pytest node id's file, a Go pattern's directory).
fn code_operands(operands: &[&WordValue], out: &mut Vec<Finding>) {
    for w in operands {
        let t = w.text.as_str();
        let path_like = t.starts_with(['/', '.', '~']) || t.contains('/');
        if !path_like || t.contains("://") {
            continue;
        }
        let path = t.split("::").next().unwrap_or(t);
        let path = path.strip_suffix("/...").unwrap_or(path);
        let path = if path == "..." { "." } else { path };
        out.push(Finding::new(
            t,
            "OPERAND",
            Effect::Read,
            Some(WordValue {
                text: path.to_string(),
                ..(*w).clone()
            }),
        ));
    }
}

/// Reads words against one table. Returns the parse and, for a tool with subcommands, the index
/// of its first operand (where the subcommand starts).
fn parse<'a>(
    c: &Compiled,
    args: &'a [WordValue],
    out: &mut Vec<Finding>,
) -> (Parsed<'a>, Option<usize>) {
    let mut p = Parsed {
        head: c.tool.head,
        ..Parsed::default()
    };
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        if t == "--" {
            p.rest.extend(&args[i + 1..]);
            break;
        }
        if c.tool.sub && t.starts_with('+') {
            // `cargo +nightly test`: a toolchain, then the subcommand.
            p.operands.push(w);
            i += 1;
            continue;
        }
        if !t.starts_with('-') || t == "-" || t.len() < 2 {
            if c.tool.sub {
                return (p, Some(i));
            }
            if c.tool.posix {
                p.operands.extend(&args[i..]);
                break;
            }
            p.operands.push(w);
            i += 1;
            continue;
        }
        if let Some(name) = c.tool.terminated.iter().find(|n| **n == t) {
            // `-exec cmd … ;`: the command is judged on its own.
            let end = args[i + 1..]
                .iter()
                .position(|w| w.text == ";" || w.text == "+")
                .map_or(args.len(), |k| i + 1 + k);
            p.options
                .push((name, t.to_string(), args[i + 1..end].to_vec()));
            i = end + 1;
            continue;
        }
        i = match c.tool.style {
            Style::Gnu | Style::Next if !t.starts_with("--") && c.find(t).is_none() => {
                short_cluster(c, args, i, &mut p, out)
            }
            _ => long_option(c, args, i, &mut p, out),
        };
    }
    (p, None)
}

/// Records one option and its effect: a finding for each value its table says the effect acts
/// on (or one without a value, for an option that takes none or was given none).
fn record(p: &mut Parsed<'_>, out: &mut Vec<Finding>, o: &Opt, word: &str, values: Vec<WordValue>) {
    if o.effect != Effect::Plain {
        let targets: Vec<&WordValue> = o.at.iter().filter_map(|&k| values.get(k - 1)).collect();
        if targets.is_empty() {
            out.push(Finding::new(word, o.first, o.effect, None).because(o.why));
        }
        for v in targets {
            out.push(Finding::new(word, o.first, o.effect, Some(v.clone())).because(o.why));
        }
    }
    p.options.push((o.first, word.to_string(), values));
}

/// An attached value as a word of its own (static when the option word is).
fn attached(w: &WordValue, text: &str) -> WordValue {
    WordValue {
        text: text.to_string(),
        ..w.clone()
    }
}

fn unknown(c: &Compiled, word: &str, name: &str) -> Finding {
    Finding::new(word, name, Effect::Unknown, None).because(&format!(
        "is not an option guardian knows for `{}`",
        c.tool.head
    ))
}

/// `--name`, `--name=value`, `--name value` (and `-name` in the single-dash style, or a
/// multi-letter single-dash name the table lists); returns the index after it.
fn long_option(
    c: &Compiled,
    args: &[WordValue],
    i: usize,
    p: &mut Parsed<'_>,
    out: &mut Vec<Finding>,
) -> usize {
    let w = &args[i];
    let t = w.text.as_str();
    let (name, value) = match t.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (t, None),
    };
    let found = c.find(name).or_else(|| match c.tool.style {
        // Go's flag package takes `-name` and `--name` alike.
        Style::Single => name.strip_prefix('-').and_then(|s| c.find(s)),
        Style::Gnu | Style::Next => None,
    });
    let Some(o) = found.cloned() else {
        out.push(unknown(c, t, name));
        return i + 1;
    };
    match (o.arity, value) {
        (Arity::None, Some(v)) => {
            // Go's flag package and cobra (gh, docker, kubectl) take `--flag=false`; anything
            // else is not this option.
            let boolean = matches!(v, "true" | "false")
                || c.tool.style == Style::Single && matches!(v, "1" | "0");
            if boolean {
                record(p, out, &o, t, Vec::new());
            } else {
                out.push(unknown(c, t, name).because(&format!(
                    "gives a value to an option of `{}` that takes none",
                    c.tool.head
                )));
            }
            i + 1
        }
        (Arity::None | Arity::Optional, None) => {
            record(p, out, &o, t, Vec::new());
            i + 1
        }
        (Arity::Optional, Some(v)) => {
            record(p, out, &o, t, vec![attached(w, v)]);
            i + 1
        }
        // `--arg=NAME VALUE`: the first value attached, the others next.
        (Arity::Required(n), Some(v)) => {
            take_values(c, args, i, i + 1, n, Some(attached(w, v)), p, out, &o)
        }
        (Arity::Required(n), None) => take_values(c, args, i, i + 1, n, None, p, out, &o),
    }
}

/// Records option `o` (the word at `i`) with its `n` values: `first` when it was attached to the
/// word, then the words from `from` on. Returns the index after the last value.
#[allow(clippy::too_many_arguments)]
fn take_values(
    c: &Compiled,
    args: &[WordValue],
    i: usize,
    from: usize,
    n: usize,
    first: Option<WordValue>,
    p: &mut Parsed<'_>,
    out: &mut Vec<Finding>,
    o: &Opt,
) -> usize {
    let t = args[i].text.as_str();
    let mut values: Vec<WordValue> = first.into_iter().collect();
    let end = (from + n - values.len()).min(args.len());
    values.extend(args[from.min(end)..end].iter().cloned());
    if values.len() < n {
        out.push(unknown(c, t, o.first).because("lacks its value"));
    } else {
        record(p, out, o, t, values);
    }
    end
}

/// `-abc`, `-n5`, `-n 5`, `-5`; returns the index after it. In the [`Style::Next`] style a
/// letter's value is the next unused word, and the cluster goes on after it.
fn short_cluster(
    c: &Compiled,
    args: &[WordValue],
    i: usize,
    p: &mut Parsed<'_>,
    out: &mut Vec<Finding>,
) -> usize {
    let w = &args[i];
    let t = w.text.as_str();
    let letters = &t[1..];
    if c.numeric && letters.chars().all(|ch| ch.is_ascii_digit()) {
        p.options.push(("-NUM", t.to_string(), Vec::new()));
        return i + 1;
    }
    // The next word not yet taken as a value (Style::Next).
    let mut next = i + 1;
    for (k, ch) in letters.char_indices() {
        let name = format!("-{ch}");
        let Some(o) = c.find(&name).cloned() else {
            out.push(unknown(c, t, &name));
            return next;
        };
        let after = &letters[k + ch.len_utf8()..];
        match (o.arity, c.tool.style) {
            (Arity::None, _) => record(p, out, &o, t, Vec::new()),
            // tree has no attached values: a letter that takes one takes the next word.
            (Arity::Optional, Style::Next) => record(p, out, &o, t, Vec::new()),
            (Arity::Required(n), Style::Next) => {
                next = take_values(c, args, i, next, n, None, p, out, &o);
            }
            (Arity::Optional, _) => {
                let values = if after.is_empty() {
                    Vec::new()
                } else {
                    vec![attached(w, after)]
                };
                record(p, out, &o, t, values);
                return i + 1;
            }
            (Arity::Required(n), _) => {
                // `-n5`, `-ofile`: the rest of the word is the first value.
                let first = (!after.is_empty()).then(|| attached(w, after));
                return take_values(c, args, i, i + 1, n, first, p, out, &o);
            }
        }
    }
    next
}

#[cfg(test)]
mod tests;

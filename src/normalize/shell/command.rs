//! What the shell normaliser hands on: a command line taken apart ([`ShellAnalysis`]) into the
//! simple commands that will run ([`SimpleCommand`]). Plain data, at the bottom of the shell
//! normaliser's line of modules (`text` → `command` → `vars` → `words` → `options` → `wrappers`
//! → `effects` → `flags` → the walker in `mod.rs`).

use serde::Serialize;

/// A command line taken apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShellAnalysis {
    /// The command line as given.
    pub raw: String,
    /// Every simple command that may run, in order, wrappers removed.
    pub commands: Vec<SimpleCommand>,
    /// What could not be understood statically (never allowed by a rule).
    pub unknowns: Vec<String>,
    /// Set when the line itself could not be parsed.
    pub parse_error: Option<String>,
    /// Script texts that could not be parsed: deny rules are tried on their text.
    pub unparsed: Vec<String>,
    /// The whole line, when a nested script in it could not be parsed (the outer parse may have
    /// been cut short by it): deny and ask rules are tried on its text, and nothing is parsed
    /// again.
    pub text_only: Vec<String>,
    /// Downloads fed to an interpreter (`curl … | sh`, `bash <(curl …)`, `python -c "$(curl …)"`).
    pub remote_code: Vec<String>,
}

/// One simple command, as it will run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SimpleCommand {
    /// Its words after quote removal and wrapper removal.
    pub argv: Vec<String>,
    /// `argv` joined with spaces (what `Bash(…)` rules are matched against).
    pub text: String,
    /// The text an allow rule must match: `text`, or the whole command when a privilege
    /// wrapper (sudo, doas, …) was removed, so `Bash(rm *)` never allows `sudo rm`.
    pub allow_text: String,
    /// Every text a deny or ask rule is tried against: each wrapper level, and program basenames.
    pub deny_texts: Vec<String>,
    /// Wrappers removed, outermost first.
    pub wrappers: Vec<String>,
    /// True when a privilege wrapper was removed.
    pub privileged: bool,
    /// True for the outer part of `bash -c '…'` and the like: judged by deny and ask rules only,
    /// the commands of its script are judged on their own.
    pub wrapper_only: bool,
    /// Files read (as written, relative to the cwd after any `cd`).
    pub reads: Vec<String>,
    /// Files written, created, deleted or changed.
    pub writes: Vec<String>,
    /// Directories read recursively: everything under each is read (also listed in `reads`).
    pub tree_reads: Vec<String>,
    /// True when that recursive reader skips hidden paths (ripgrep's default).
    pub skips_hidden: bool,
    /// Directories deleted or emptied with everything under them (`rm -r`, `find -delete`,
    /// `pytest --basetemp`; also listed in `writes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tree_writes: Vec<String>,
    /// An option, operand or variable that a rule must name to allow this command: one its
    /// tool's table does not know, or one that runs a program, prints the environment or
    /// changes the system ([`options`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option_issue: Option<OptionIssue>,
    /// Hosts contacted.
    pub hosts: Vec<String>,
    /// Why this command is not static, if it is not.
    pub dynamic: Option<String>,
    /// Where it was found: `top level`, `$(…)`, `bash -c`, `heredoc`, `find -exec`, ….
    pub context: String,
    /// The `NAME=value` assignments it runs with, as evaluated (`DATABASE_URL=$PROD_DB_URL`
    /// before it, or given to `env`): the environment a tool reads its target from.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assignments: Vec<String>,
}

/// Why a command's options keep it from being allowed by a rule that does not name them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OptionIssue {
    /// The option, operand or assignment as written (`--pre=/tmp/x`, `GIT_PAGER=x`).
    pub word: String,
    /// Its name as a rule would write it (`--pre`).
    pub name: String,
    /// What it does.
    pub why: String,
}

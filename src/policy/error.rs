//! Every way loading a policy can fail, each saying what failed and where.
//!
//! This module owns the policy's error types (like cedar's `err.rs`): a rule's text that does
//! not parse ([`RuleError`], with the [`PatternError`] of its specifier), a protection glob
//! ([`ProtectError`]), another agent's policy file ([`ImportError`], down to the line of a Codex
//! `.rules` file), a policy test file ([`TestFileError`]), and a rule of a config with its
//! `file:line` ([`PolicyError`]). Their `Display` texts are what users read in `guardian policy`,
//! `guardian serve` and test failures.

use std::path::PathBuf;

/// A rule that could not be parsed: the rule's text and what is wrong with it.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("invalid rule {rule:?}: {kind}")]
pub struct RuleError {
    /// The rule text.
    pub rule: String,
    /// What is wrong with it.
    pub kind: RuleErrorKind,
}

/// What is wrong with a rule.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum RuleErrorKind {
    /// Nothing but whitespace.
    #[error("empty rule")]
    Empty,
    /// `Tool(…` without its closing parenthesis.
    #[error("a specifier must end with ')'")]
    Unclosed,
    /// A tool name guardian does not know.
    #[error(
        "unknown tool {0:?} (known: Bash, Read, Edit, Write, MultiEdit, NotebookEdit, WebFetch, mcp__server__tool)"
    )]
    UnknownTool(String),
    /// `Tool()`.
    #[error("empty specifier: write the bare tool name to cover every call")]
    EmptySpecifier,
    /// A `WebFetch` specifier without `domain:`.
    #[error("WebFetch rules take domain:HOST")]
    NotADomain,
    /// `domain:` followed by something that is not a host name.
    #[error("domain:HOST takes a host name such as example.com or *.example.com")]
    NotAHost,
    /// The specifier itself (a command, path or MCP pattern).
    #[error("{0}")]
    Pattern(#[from] PatternError),
}

/// A specifier that does not compile: a command or MCP wildcard, or a path glob.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum PatternError {
    /// `mcp__server(…)`.
    #[error("MCP rules take no specifier: write mcp__server or mcp__server__tool")]
    McpSpecifier,
    /// `mcp__` with nothing after it.
    #[error("missing server name after mcp__")]
    McpServerMissing,
    /// `mcp__server__` with nothing after it.
    #[error("missing tool name after mcp__server__")]
    McpToolMissing,
    /// The wildcard pattern's regular expression does not compile (too large).
    #[error("cannot compile pattern: {0}")]
    Regex(#[from] regex::Error),
    /// A `..` component in a path rule.
    #[error("`..` is not allowed in path rules: write an absolute //path instead")]
    ParentDir,
    /// A path glob that globset refuses.
    #[error("invalid glob {glob:?}: {source}")]
    Glob {
        /// The glob (or its component) as given to globset.
        glob: String,
        /// globset's reason.
        source: globset::Error,
    },
}

/// A protection that does not compile: `[policy] protect_read` / `protect_write` or guardian's
/// own files.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ProtectError {
    /// A protected path pattern.
    #[error("{pattern}: {source}")]
    Pattern {
        /// The pattern as written.
        pattern: String,
        /// Why it does not compile.
        source: PatternError,
    },
    /// One of guardian's own absolute globs (the audit log's segments).
    #[error("{glob}: {source}")]
    OwnGlob {
        /// The glob.
        glob: String,
        /// globset's reason.
        source: globset::Error,
    },
    /// guardian's own globs together.
    #[error("{0}")]
    OwnGlobs(globset::Error),
}

/// A rule of a config (or of a file it imports) that could not be loaded, with where it was
/// written.
#[derive(Debug, thiserror::Error)]
#[error("{source_loc}: {kind}")]
pub struct PolicyError {
    /// `file:line` (or the config key).
    pub source_loc: String,
    /// What is wrong.
    pub kind: PolicyErrorKind,
}

/// What is wrong with a rule, an import or a protection of a config.
#[derive(Debug, thiserror::Error)]
pub enum PolicyErrorKind {
    /// A `[policy] import` file.
    #[error("cannot import {}: {error}", path.display())]
    Import {
        /// The file.
        path: PathBuf,
        /// Why it could not be imported.
        error: ImportError,
    },
    /// `[policy] protect_read` / `protect_write`.
    #[error("policy.protect_read/protect_write: {0}")]
    Protections(ProtectError),
    /// guardian's own files (the audit log's globs).
    #[error("{0}")]
    OwnFiles(ProtectError),
    /// A rule that does not parse.
    #[error("{0}")]
    Rule(RuleError),
    /// A rule that does not match one of its `match` examples.
    #[error("rule {pattern} should match its example {example:?} but does not")]
    ExampleMissed {
        /// The rule.
        pattern: String,
        /// The example.
        example: String,
    },
    /// A rule that matches one of its `not_match` examples.
    #[error("rule {pattern} matches {example:?}, listed in its not_match examples")]
    ExampleMatched {
        /// The rule.
        pattern: String,
        /// The example.
        example: String,
    },
}

/// Another agent's policy file that could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read.
    #[error("{0}")]
    Read(#[from] std::io::Error),
    /// Not a Codex `.rules` file, and not JSON (or JSONC) either.
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    /// JSON, but in no format guardian imports.
    #[error(
        "no `permissions` (Claude Code), `permission`/`permissions` (OpenCode) or `prefix_rule` (Codex) found"
    )]
    UnknownFormat,
    /// Claude Code settings without a `permissions` object.
    #[error("no permissions object")]
    NoPermissions,
    /// Claude Code `permissions.<key>` that is not a list.
    #[error("permissions.{0} is not a list")]
    NotAList(String),
    /// OpenCode `"permission": "<x>"` with x not allow, ask or deny.
    #[error("permission: not allow|ask|deny")]
    NotAnEffect,
    /// OpenCode `permission` that is neither a string nor an object.
    #[error("permission: expected a string or an object")]
    PermissionType,
    /// A Codex `.rules` file that is not the Starlark subset guardian reads.
    #[error("line {line}: {kind}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// What the parser met.
        kind: SyntaxError,
    },
    /// A Codex `prefix_rule(…)` call that guardian cannot translate.
    #[error("{file}:{line}: {kind}")]
    Codex {
        /// The file's name.
        file: String,
        /// The call's 1-based line.
        line: usize,
        /// What is wrong with the call.
        kind: CodexRuleError,
    },
}

/// What the Codex `.rules` parser met that it does not read.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum SyntaxError {
    /// A string still open at the end of the file.
    #[error("unterminated string")]
    UnterminatedString,
    /// A line break inside a single-quoted string.
    #[error("newline in string")]
    NewlineInString,
    /// A character outside the subset.
    #[error("unexpected character {0:?} (only prefix_rule(...) calls are understood)")]
    UnexpectedChar(char),
    /// Lists nested deeper than the parser follows.
    #[error("lists nested deeper than {0}")]
    TooDeep(usize),
    /// Something else than what the grammar needs there.
    #[error("expected {expected}, found {found}")]
    Expected {
        /// What the grammar needs.
        expected: String,
        /// The token found instead, as the parser saw it (`None` at the end).
        found: String,
    },
}

/// A Codex `prefix_rule(…)` call that cannot be translated.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum CodexRuleError {
    /// A keyword argument `prefix_rule` does not take.
    #[error("unknown argument {0:?} of prefix_rule")]
    UnknownArgument(String),
    /// No `pattern = [...]`.
    #[error("prefix_rule needs pattern = [\"cmd\", …]")]
    NoPattern,
    /// `pattern = []`.
    #[error("pattern must not be empty")]
    EmptyPattern,
    /// A decision other than allow, prompt or forbidden.
    #[error("decision {0:?} is not allow, prompt or forbidden")]
    UnknownDecision(String),
    /// A decision that is not a string.
    #[error("decision must be a string")]
    DecisionNotAString,
    /// Alternatives that expand into too many rules.
    #[error("the alternatives expand into more than {0} prefixes")]
    TooManyPrefixes(usize),
    /// An alternative that is a list.
    #[error("alternatives must be strings")]
    NestedAlternative,
    /// `match` or `not_match` that is not a list.
    #[error("{0} must be a list")]
    ExamplesNotAList(String),
    /// An example's token that is a list.
    #[error("example tokens must be strings")]
    ExampleToken,
    /// An example the translated rules do not agree with.
    #[error(
        "the {key} example {example:?} {} the translated rule(s)",
        if *must_match { "does not match" } else { "matches" }
    )]
    Example {
        /// `match` or `not_match`.
        key: String,
        /// The example command.
        example: String,
        /// Whether it had to match.
        must_match: bool,
    },
    /// The translated rule does not parse.
    #[error("{0}")]
    Rule(Box<RuleError>),
}

/// A policy test file that could not be loaded, or a case that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum TestFileError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not a test file.
    #[error("invalid test file {file}: {source}")]
    Invalid {
        /// The file.
        file: String,
        /// What TOML said.
        source: toml::de::Error,
    },
    /// A named policy of the file that does not compile.
    #[error("policy {name:?} of {file}: {}", join(errors))]
    Policy {
        /// The file.
        file: String,
        /// The policy's name.
        name: String,
        /// Every error in it.
        errors: Vec<PolicyError>,
    },
    /// A case that names a policy the file does not define.
    #[error("case {case:?} names the policy {policy:?}, which {file} does not define")]
    UnknownPolicy {
        /// The file.
        file: String,
        /// The case's name.
        case: String,
        /// The policy it names.
        policy: String,
    },
    /// A case with both or neither of `command` and `action`.
    #[error("case {0:?}: give exactly one of `command` and `action`")]
    NoAction(String),
}

fn join(errors: &[PolicyError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

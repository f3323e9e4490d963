//! Shell words: what a word of a command line will be after quote removal, when that is known.
//!
//! A word is *static* when its value does not depend on the environment: quotes and escapes are
//! removed (`g''it`, `"git"` and `\git` are all `git`), `~` and `$HOME` become `~`. Anything else
//! (parameter expansion, `$(…)`, backticks, arithmetic, `$'…'`, unquoted globs and brace
//! expansion) makes the word dynamic; the text kept for it is the best static reading, which is
//! good enough for deny matching and never used to allow.

use brush_parser::word::{Parameter, ParameterExpr, TildeExpr, WordPiece, WordPieceWithSource};

use super::vars::Scope;

/// What a word expands to, as far as can be known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WordValue {
    /// The word after quote removal (dynamic parts kept as written).
    pub text: String,
    /// Why the word is not static, if it is not.
    pub dynamic: Option<String>,
    /// Command substitutions inside the word, as script text, for recursive analysis.
    pub substitutions: Vec<String>,
    /// True when unquoted glob characters (`*`, `?`, `[`) appear.
    pub glob: bool,
}

impl AsRef<str> for WordValue {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl WordValue {
    /// A static word with this text.
    pub fn literal(text: &str) -> WordValue {
        WordValue {
            text: text.to_string(),
            ..WordValue::default()
        }
    }

    fn mark(&mut self, why: &str) {
        if self.dynamic.is_none() {
            self.dynamic = Some(why.to_string());
        }
    }
}

pub use super::text::{is_plain, quote};

/// Evaluates a raw word (as the parser gives it) statically.
pub fn evaluate(raw: &str) -> WordValue {
    evaluate_in(raw, None)
}

/// Evaluates a raw word statically, with the script's variables whose values are known
/// ([`super::vars`]): a plain `$name` of such a variable is its value, not an expansion.
pub fn evaluate_in(raw: &str, vars: Option<&Scope>) -> WordValue {
    // Most words are plain (`git`, `status`, `--short`, `src/lib.rs`): nothing to expand or
    // unquote, so skip the word parser (and the global cache lock brush-parser takes in it).
    if is_plain(raw) {
        return WordValue::literal(raw);
    }
    let options = brush_parser::ParserOptions::default();
    match brush_parser::word::parse(raw, &options) {
        Ok(pieces) => {
            let mut v = WordValue::default();
            for p in &pieces {
                piece(&mut v, p, raw, false, vars);
            }
            v
        }
        Err(e) => WordValue {
            text: brush_parser::unquote_str(raw),
            dynamic: Some(format!("the word {raw:?} could not be parsed: {e}")),
            ..WordValue::default()
        },
    }
}

fn piece(
    v: &mut WordValue,
    p: &WordPieceWithSource,
    raw: &str,
    quoted: bool,
    vars: Option<&Scope>,
) {
    let source = raw.get(p.start_index..p.end_index).unwrap_or("");
    match &p.piece {
        WordPiece::Text(t) => {
            if !quoted {
                if t.contains(['*', '?', '[']) {
                    v.glob = true;
                }
                if t.contains('{') && t.contains('}') && (t.contains(',') || t.contains("..")) {
                    v.mark("brace expansion");
                }
            }
            v.text.push_str(t);
        }
        WordPiece::SingleQuotedText(t) => v.text.push_str(t),
        WordPiece::AnsiCQuotedText(t) => {
            v.mark("an ANSI-C quoted $'…' string");
            v.text.push_str(t);
        }
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            for i in inner {
                piece(v, i, raw, true, vars);
            }
        }
        WordPiece::EscapeSequence(s) => v.text.push_str(s.strip_prefix('\\').unwrap_or(s)),
        WordPiece::TildeExpansion(TildeExpr::Home) => v.text.push('~'),
        WordPiece::TildeExpansion(_) => {
            v.mark("a ~user or ~+ expansion");
            v.text.push_str(source);
        }
        WordPiece::ParameterExpansion(expr) => {
            if is_home(expr) {
                v.text.push('~');
            } else if let Some(value) = vars.and_then(|s| known(expr, s, quoted)) {
                v.text.push_str(value);
            } else {
                v.mark(&format!("the expansion {source}"));
                v.text.push_str(source);
            }
        }
        WordPiece::CommandSubstitution(s) => {
            v.mark("a command substitution");
            v.substitutions.push(s.clone());
            v.text.push_str(source);
        }
        WordPiece::BackquotedCommandSubstitution(s) => {
            // Inside backticks, `\\`, `\$` and `\`` stand for themselves unescaped.
            v.mark("a command substitution");
            v.substitutions.push(unescape_backquoted(s));
            v.text.push_str(source);
        }
        WordPiece::ArithmeticExpression(e) => {
            v.mark("an arithmetic expansion");
            v.substitutions.extend(arithmetic_substitutions(&e.value));
            // `$((cmd))` is a command substitution of a subshell in shells that fall back when
            // the text is not arithmetic: judge the text as a script as well.
            if reads_like_a_command(&e.value) {
                v.substitutions.push(e.value.clone());
            }
            v.text.push_str(source);
        }
    }
}

/// Whether arithmetic text could be a command in a shell that falls back to subshells:
/// words with letters, separated by spaces (`1 + 2` is not; `git push`, `{ rm x; }` are).
pub fn reads_like_a_command(expr: &str) -> bool {
    expr.split_whitespace().count() > 1 && expr.chars().any(|c| c.is_ascii_alphabetic())
}

/// Command substitutions inside an arithmetic expression (`$(( $(cmd) + 1 ))` runs `cmd`).
pub fn arithmetic_substitutions(expr: &str) -> Vec<String> {
    if !expr.contains("$(") && !expr.contains('`') {
        return Vec::new();
    }
    // Inside double quotes, `$(…)` and backticks keep their meaning and nothing else does.
    let quoted = format!("\"{}\"", expr.replace('\\', "\\\\").replace('"', "\\\""));
    evaluate(&quoted).substitutions
}

fn unescape_backquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('\\' | '$' | '`')) {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The known value of a plain `$name` or `${name}`.
fn known<'a>(expr: &ParameterExpr, vars: &'a Scope, quoted: bool) -> Option<&'a str> {
    match expr {
        ParameterExpr::Parameter {
            parameter: Parameter::Named(n),
            indirect: false,
        } => vars.value(n, quoted),
        _ => None,
    }
}

fn is_home(expr: &ParameterExpr) -> bool {
    matches!(
        expr,
        ParameterExpr::Parameter { parameter: Parameter::Named(n), indirect: false } if n == "HOME"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_escapes_are_removed() {
        for w in ["git", "g''it", "\"git\"", "\\git", "'g'\"i\"t"] {
            let v = evaluate(w);
            assert_eq!(v.text, "git", "{w}");
            assert_eq!(v.dynamic, None, "{w}");
        }
    }

    #[test]
    fn home_is_tilde() {
        assert_eq!(evaluate("~/.ssh").text, "~/.ssh");
        assert_eq!(evaluate("$HOME/.ssh").text, "~/.ssh");
        assert_eq!(evaluate("\"${HOME}/.ssh\"").text, "~/.ssh");
        assert_eq!(evaluate("$HOME/.ssh").dynamic, None);
    }

    #[test]
    fn expansions_are_dynamic() {
        for w in [
            "$X",
            "${X:-a}",
            "$(id)",
            "`id`",
            "$((1+2))",
            "$'\\x67it'",
            "a{b,c}",
        ] {
            assert!(evaluate(w).dynamic.is_some(), "{w}");
        }
        assert_eq!(
            evaluate("$(rm -rf /)").substitutions,
            vec!["rm -rf /".to_string()]
        );
        assert!(evaluate("*.rs").glob);
        assert!(!evaluate("'*.rs'").glob);
    }
}

//! Shell command lines, as the policy sees them (v1: text-level).
//!
//! This module owns taking a command line apart. v1 works on the text: it splits at control
//! operators for deny matching, and marks any command that contains a shell operator or
//! expansion as *opaque*, which no allow rule can allow. The policy only uses [`ShellCommand`],
//! so a parser-backed analysis can replace this one behind the same type.

/// Characters whose presence makes a command line more than one plain simple command:
/// control operators, redirections, subshells, expansions and substitutions.
const OPERATOR_CHARS: &[char] = &[';', '&', '|', '$', '`', '<', '>', '(', ')', '\n', '\r'];

/// A command line taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    /// The command line as given.
    pub raw: String,
    /// The pieces between control operators, whitespace collapsed, leading `VAR=value` removed.
    pub parts: Vec<String>,
    /// Why no rule may allow this command, when one cannot (operators, expansions, ...).
    pub opaque: Option<String>,
}

/// Takes a command line apart.
pub fn analyze(command: &str) -> ShellCommand {
    let opaque = command
        .chars()
        .find(|c| OPERATOR_CHARS.contains(c))
        .map(|c| {
            format!(
                "the command contains the shell operator or expansion {:?}; rules can only allow a single plain command",
                c
            )
        });
    let parts = split_parts(command)
        .into_iter()
        .map(|p| strip_assignments(&collapse_ws(p)))
        .filter(|p| !p.is_empty())
        .collect();
    ShellCommand {
        raw: command.to_string(),
        parts,
        opaque,
    }
}

impl ShellCommand {
    /// Every text a deny or ask rule is tried against: the whole line and each part, each also
    /// with quotes and backslashes removed (so `g''it push` is seen as `git push`).
    pub fn deny_candidates(&self) -> Vec<String> {
        let mut out = vec![collapse_ws(&self.raw)];
        out.extend(self.parts.iter().cloned());
        let dequoted: Vec<String> = out.iter().map(|s| collapse_ws(&dequote(s))).collect();
        out.extend(dequoted);
        out.sort();
        out.dedup();
        out
    }

    /// The text an allow rule is tried against, or `None` when no rule may allow the command.
    pub fn allow_candidate(&self) -> Option<String> {
        if self.opaque.is_some() {
            return None;
        }
        let whole = collapse_ws(&self.raw);
        Some(strip_assignments(&whole))
    }
}

/// Splits at `&&`, `||`, `;`, `|`, `&` and newlines, ignoring quoting (conservative for deny).
fn split_parts(command: &str) -> Vec<&str> {
    command
        .split([';', '&', '|', '\n', '\r', '(', ')', '`'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn dequote(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect()
}

/// Removes leading `NAME=value` words (environment assignments for one command).
fn strip_assignments(s: &str) -> String {
    let mut words = s.split(' ').peekable();
    while let Some(w) = words.peek() {
        let is_assignment = w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        });
        if is_assignment {
            words.next();
        } else {
            break;
        }
    }
    words.collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_command_is_allowable() {
        let c = analyze("  git   status ");
        assert_eq!(c.opaque, None);
        assert_eq!(c.allow_candidate().as_deref(), Some("git status"));
        assert_eq!(
            analyze("FOO=1 git status").allow_candidate().as_deref(),
            Some("git status")
        );
    }

    #[test]
    fn operators_make_it_opaque() {
        for cmd in [
            "git status && git push",
            "git status; rm -rf /",
            "git status | sh",
            "echo $HOME",
            "echo `id`",
            "echo $(id)",
            "cat < /etc/passwd",
            "echo x > f",
            "git status\nrm -rf /",
            "(git status)",
            "sleep 1 &",
        ] {
            let c = analyze(cmd);
            assert!(c.opaque.is_some(), "{cmd}");
            assert_eq!(c.allow_candidate(), None, "{cmd}");
        }
    }

    #[test]
    fn parts_and_dequoted_forms_are_deny_candidates() {
        let c = analyze("git status && g''it  push origin main");
        let cands = c.deny_candidates();
        assert!(cands.contains(&"git status".to_string()));
        assert!(cands.contains(&"git push origin main".to_string()));
        let c = analyze("ls | X=1 \"rm\" -rf /");
        assert!(c.deny_candidates().contains(&"rm -rf /".to_string()));
    }
}

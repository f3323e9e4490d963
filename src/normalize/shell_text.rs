//! A textual reading of command lines, for deny matching only.
//!
//! This module owns the conservative fallback used where the shell parser cannot help (input
//! that does not parse, or a script too deep to follow): it splits the text at every control
//! operator regardless of quoting, strips assignments, quotes and backslashes, and offers each
//! piece to deny and ask rules. It can only ever make a decision stricter; it never allows.

/// Every text a deny or ask rule is tried against: the whole line and each piece between
/// control operators, each also with quotes and backslashes removed (`g''it push` → `git push`).
pub fn deny_candidates(command: &str) -> Vec<String> {
    let mut out = vec![collapse_ws(command)];
    out.extend(
        command
            .split([';', '&', '|', '\n', '\r', '(', ')', '`', '{', '}'])
            .map(|p| strip_keywords(&strip_assignments(&collapse_ws(p.trim_start_matches('$')))))
            .filter(|p| !p.is_empty()),
    );
    let dequoted: Vec<String> = out
        .iter()
        .map(|s| strip_assignments(&collapse_ws(&dequote(s))))
        .collect();
    out.extend(dequoted);
    // `/usr/bin/git push` is also `git push`.
    let basenamed: Vec<String> = out
        .iter()
        .filter_map(|c| {
            let (first, rest) = c.split_once(' ').unwrap_or((c.as_str(), ""));
            let base = first
                .rsplit('/')
                .next()
                .filter(|b| first.contains('/') && !b.is_empty())?;
            Some(format!("{base} {rest}").trim_end().to_string())
        })
        .collect();
    out.extend(basenamed);
    out.sort();
    out.dedup();
    out
}

/// Removes leading reserved words (`then git push` → `git push`).
fn strip_keywords(s: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "if", "then", "else", "elif", "do", "while", "until", "time", "!", "{", "}", "fi", "done",
        "esac", "in",
    ];
    let mut rest = s;
    while let Some((first, tail)) = rest.split_once(' ') {
        if KEYWORDS.contains(&first) {
            rest = tail;
        } else {
            break;
        }
    }
    rest.to_string()
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
    fn parts_and_dequoted_forms_are_candidates() {
        let cands = deny_candidates("git status && g''it  push origin main");
        assert!(cands.contains(&"git status".to_string()));
        assert!(cands.contains(&"git push origin main".to_string()));
        assert!(deny_candidates("ls | X=1 \"rm\" -rf /").contains(&"rm -rf /".to_string()));
        assert!(deny_candidates("(((git push").contains(&"git push".to_string()));
        assert!(
            deny_candidates("watch if true; then git push; fi").contains(&"git push".to_string())
        );
    }
}

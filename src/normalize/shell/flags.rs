//! Equivalent spellings of the same options: `rm -rf`, `rm -fr`, `rm -Rf`, `rm -r -f` and
//! `rm --recursive --force` are one command.
//!
//! This module owns, per command, which short and long options are the same flag, and the
//! commands whose options are all such flags taken apart ([`parse`]): head, set of canonical
//! flags, operands. A deny or ask rule whose own words take apart the same way matches a command
//! with the same head, at least the rule's flags and matching operands, so `Bash(rm -rf *)` also
//! catches `rm -fr /`, `rm -r -f -v /` and `rm --recursive --force /`. Allow rules are not
//! widened: they match what the agent wrote, as in Claude Code. A command with any option not in
//! its table is not taken apart (nothing is guessed).

/// One command's flags: `(short letters, long names, canonical letter)`.
type FlagTable = &'static [(&'static str, &'static [&'static str], char)];

/// The commands (and git subcommands) whose flag spellings are known.
const TABLES: &[(&str, Option<&str>, FlagTable)] = &[
    (
        "rm",
        None,
        &[
            ("rR", &["recursive"], 'r'),
            ("f", &["force"], 'f'),
            ("i", &["interactive"], 'i'),
            ("I", &[], 'I'),
            ("d", &["dir"], 'd'),
            ("v", &["verbose"], 'v'),
            ("", &["no-preserve-root"], 'N'),
            ("", &["preserve-root"], 'P'),
            ("", &["one-file-system"], 'O'),
        ],
    ),
    (
        "cp",
        None,
        &[
            ("rR", &["recursive"], 'r'),
            ("f", &["force"], 'f'),
            ("a", &["archive"], 'a'),
            ("p", &[], 'p'),
            ("i", &["interactive"], 'i'),
            ("n", &["no-clobber"], 'n'),
            ("v", &["verbose"], 'v'),
            ("u", &["update"], 'u'),
            ("L", &["dereference"], 'L'),
            ("P", &["no-dereference"], 'P'),
        ],
    ),
    (
        "mv",
        None,
        &[
            ("f", &["force"], 'f'),
            ("i", &["interactive"], 'i'),
            ("n", &["no-clobber"], 'n'),
            ("v", &["verbose"], 'v'),
            ("u", &["update"], 'u'),
        ],
    ),
    (
        "chmod",
        None,
        &[
            ("R", &["recursive"], 'R'),
            ("v", &["verbose"], 'v'),
            ("c", &["changes"], 'c'),
            ("f", &["silent", "quiet"], 'f'),
        ],
    ),
    (
        "chown",
        None,
        &[
            ("R", &["recursive"], 'R'),
            ("v", &["verbose"], 'v'),
            ("c", &["changes"], 'c'),
            ("f", &["silent", "quiet"], 'f'),
            ("h", &["no-dereference"], 'h'),
        ],
    ),
    (
        "git",
        Some("push"),
        &[
            ("f", &["force"], 'f'),
            ("u", &["set-upstream"], 'u'),
            ("q", &["quiet"], 'q'),
            ("v", &["verbose"], 'v'),
            ("n", &["dry-run"], 'n'),
            ("d", &["delete"], 'd'),
        ],
    ),
    (
        "git",
        Some("clean"),
        &[
            ("f", &["force"], 'f'),
            ("d", &[], 'd'),
            ("x", &[], 'x'),
            ("X", &[], 'X'),
            ("n", &["dry-run"], 'n'),
            ("q", &["quiet"], 'q'),
            ("i", &["interactive"], 'i'),
        ],
    ),
    (
        "git",
        Some("reset"),
        &[
            ("q", &["quiet"], 'q'),
            ("", &["hard"], 'H'),
            ("", &["soft"], 'S'),
            ("", &["mixed"], 'M'),
            ("", &["keep"], 'K'),
            ("", &["merge"], 'G'),
        ],
    ),
];

/// A command taken apart by its flag table: the program (and subcommand), the set of its
/// flags in canonical spelling (a letter, or `--name` for a long-only flag), and its operands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flagged {
    /// `rm`, or `git push`.
    pub head: String,
    /// The flags, canonical and sorted.
    pub flags: std::collections::BTreeSet<String>,
    /// The other words, in order.
    pub operands: Vec<String>,
}

/// Takes a command apart when it is one of the known commands, has at least one option, and
/// every option is a known flag. Words containing `*` are operands (rule wildcards), except an
/// option word with a `*`, which makes the command unknown here.
pub fn parse(words: &[&str]) -> Option<Flagged> {
    let program = words.first()?;
    let (table, head_len) = TABLES.iter().find_map(|(name, sub, table)| {
        if program != name {
            return None;
        }
        match sub {
            None => Some((*table, 1)),
            Some(s) => (words.get(1) == Some(s)).then_some((*table, 2)),
        }
    })?;
    let mut flags = std::collections::BTreeSet::new();
    let mut operands: Vec<String> = Vec::new();
    let mut only_operands = false;
    for w in &words[head_len..] {
        if only_operands || !w.starts_with('-') || *w == "-" {
            operands.push(w.to_string());
            continue;
        }
        if *w == "--" {
            only_operands = true;
            operands.push(w.to_string());
            continue;
        }
        if w.contains(['*', '=', '?']) {
            return None;
        }
        if let Some(long) = w.strip_prefix("--") {
            let (shorts, _, c) = table.iter().find(|(_, l, _)| l.contains(&long))?;
            flags.insert(if shorts.is_empty() {
                format!("--{long}")
            } else {
                c.to_string()
            });
            continue;
        }
        for ch in w[1..].chars() {
            let (_, _, c) = table
                .iter()
                .find(|(s, _, _)| !s.is_empty() && s.contains(ch))?;
            flags.insert(c.to_string());
        }
    }
    if flags.is_empty() {
        return None;
    }
    Some(Flagged {
        head: words[..head_len].join(" "),
        flags,
        operands,
    })
}

/// The canonical text of a command: its head, one cluster of its flag letters in sorted order,
/// its long-only flags, then its operands (`rm -r --force /` → `rm -fr /`).
pub fn canonical(words: &[&str]) -> Option<String> {
    let f = parse(words)?;
    let letters: String = f
        .flags
        .iter()
        .filter(|x| !x.starts_with("--"))
        .map(String::as_str)
        .collect();
    let mut out = vec![f.head];
    if !letters.is_empty() {
        out.push(format!("-{letters}"));
    }
    out.extend(f.flags.iter().filter(|x| x.starts_with("--")).cloned());
    out.extend(f.operands);
    Some(out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::canonical;

    fn c(s: &str) -> Option<String> {
        canonical(&s.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn equivalent_spellings_meet() {
        let want = c("rm -rf /");
        assert_eq!(want.as_deref(), Some("rm -fr /"));
        for spelling in [
            "rm -fr /",
            "rm -Rf /",
            "rm -r -f /",
            "rm -f -R /",
            "rm --recursive --force /",
            "rm -r --force /",
        ] {
            assert_eq!(c(spelling), want, "{spelling}");
        }
        assert_eq!(c("rm -rf *").as_deref(), Some("rm -fr *"));
        assert_eq!(
            c("git push --force origin main"),
            c("git push -f origin main")
        );
        assert_eq!(c("git push origin main -f"), c("git push -f origin main"));
        assert_eq!(c("git clean -fdx"), c("git clean -x -d --force"));
        assert_eq!(c("chmod --recursive 777 /"), c("chmod -R 777 /"));
    }

    #[test]
    fn unknown_options_have_no_canonical_form() {
        assert_eq!(
            c("rm -fr --no-preserve-root /").as_deref(),
            Some("rm -fr --no-preserve-root /")
        );
        assert_eq!(c("rm -rf --interactive=never /"), None);
        assert_eq!(c("rm /tmp/x"), None, "no option: nothing to canonicalise");
        assert_eq!(c("git push --force-with-lease origin main"), None);
        assert_eq!(c("git push -* origin"), None);
        assert_eq!(c("ls -la"), None, "not a known command");
        assert_eq!(c("git status -s"), None);
    }
}

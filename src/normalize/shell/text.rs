//! Words as text: program names (`/usr/bin/git` is `git`), plain words and shell quoting. The
//! ground floor of the shell normaliser: it uses nothing of it.

/// The name a program is known by: the basename when it lives in a standard binary directory.
pub fn program_name(word: &str) -> &str {
    const STD_DIRS: &[&str] = &[
        "/bin/",
        "/usr/bin/",
        "/usr/local/bin/",
        "/sbin/",
        "/usr/sbin/",
        "/usr/local/sbin/",
        "/opt/homebrew/bin/",
        "/run/current-system/sw/bin/",
        "/usr/libexec/",
    ];
    if STD_DIRS
        .iter()
        .any(|d| word.starts_with(d) && !word[d.len()..].contains('/'))
    {
        word.rsplit('/').next().unwrap_or(word)
    } else {
        word
    }
}

/// The last path component of a program word, for deny matching (`./git` → `git`).
pub fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether a word is plain: letters, digits and `_./=:,+@%-` only, so the shell reads it as
/// written (nothing to expand, unquote or glob).
pub fn is_plain(word: &str) -> bool {
    !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./=:,+@%-".contains(&b))
}

/// A word as shell text: plain words as they are, anything else single-quoted.
pub fn quote(word: &str) -> String {
    if is_plain(word) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Quotes a word so that re-parsing it yields the same word.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%{}".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

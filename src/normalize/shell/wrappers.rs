//! Wrappers: commands that run another command (`sudo`, `env`, `timeout`, `xargs`, `bash -c`, …).
//!
//! This module owns seeing through them: given a command's words it finds where the real command
//! starts, or the script a shell wrapper runs, and says which wrappers were removed and whether
//! one of them raised privileges. Each wrapper's options are parsed from its own option table, so
//! `timeout -s KILL 5 rm x` is seen as `rm x`.

use super::options::env::assignment_changes_what_runs;
use super::words::WordValue;

/// Programs that raise privileges.
pub const PRIVILEGE_WRAPPERS: &[&str] = &["sudo", "doas", "su", "pkexec", "chroot", "run0"];

/// Shells whose `-c` argument is a script.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox",
];

/// What a command line turns out to run once wrappers are removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inner {
    /// The real command starts at this index of the words.
    Argv(usize),
    /// A shell wrapper runs this script (`bash -c '…'`, `watch '…'`, `su -c '…'`).
    Script(WordValue),
    /// A shell reads its script from standard input (`bash`, `sh -s`).
    StdinScript,
    /// Nothing statically known runs (an interactive shell, a script file, a dynamic word).
    Unknown(String),
}

/// The result of removing wrappers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwrapped {
    /// What runs.
    pub inner: Inner,
    /// The wrappers removed, outermost first.
    pub wrappers: Vec<String>,
    /// Start index of every level, outermost (0) first; the last is the inner command's.
    pub levels: Vec<usize>,
    /// True when a privilege wrapper was removed.
    pub privileged: bool,
    /// True when the inner command gets extra arguments nobody can see (`xargs`).
    pub hidden_args: bool,
    /// Files the wrappers themselves read or write (`strace -o`, `xargs -a`, `time -o`).
    pub reads: Vec<WordValue>,
    /// Files the wrappers write.
    pub writes: Vec<WordValue>,
    /// Why the command is dynamic, if a wrapper made it so (`env PATH=…`).
    pub dynamic: Option<String>,
    /// `NAME=value` assignments the wrappers make for the command (`env FOO=1 cmd`).
    pub env: Vec<WordValue>,
    /// A second reading of the script (`watch` joins its words without quotes, so what runs
    /// and what the words look like differ): both are judged.
    pub alt_script: Option<String>,
}

pub use super::text::{basename, program_name};

/// How one wrapper's options are shaped.
struct Spec {
    /// Short options that take an argument (`-u USER`).
    short_args: &'static str,
    /// Long options that take an argument (without `=`).
    long_args: &'static [&'static str],
    /// Positional arguments before the command (`timeout DURATION`, `chroot DIR`, `flock FILE`).
    positionals: usize,
}

fn spec(name: &str) -> Option<Spec> {
    let s = |short_args, long_args, positionals| {
        Some(Spec {
            short_args,
            long_args,
            positionals,
        })
    };
    match name {
        "sudo" => s(
            "ugCDhprtTU",
            &[
                "user",
                "group",
                "close-from",
                "chdir",
                "host",
                "prompt",
                "role",
                "type",
                "command-timeout",
                "other-user",
            ],
            0,
        ),
        "doas" => s("uC", &[], 0),
        "pkexec" => s("", &["user"], 0),
        "run0" => s(
            "uDg",
            &[
                "user",
                "chdir",
                "group",
                "unit",
                "property",
                "description",
                "slice",
                "nice",
                "setenv",
            ],
            0,
        ),
        "nice" => s("n", &["adjustment"], 0),
        "ionice" => s("cnp", &["class", "classdata", "pid", "pgid", "uid"], 0),
        "nohup" | "builtin" | "setsid" => s("", &[], 0),
        "timeout" => s("sk", &["signal", "kill-after"], 1),
        "time" => s("fo", &["format", "output"], 0),
        "stdbuf" => s("ioe", &["input", "output", "error"], 0),
        "exec" => s("a", &[], 0),
        "command" => s("", &[], 0),
        "chroot" => s("", &["userspec", "groups"], 1),
        "flock" => s(
            "wEc",
            &["wait", "timeout", "conflict-exit-code", "command"],
            1,
        ),
        "strace" | "ltrace" => s(
            "oepsuEabIPXO",
            &["output", "expr", "attach", "string-limit", "user", "env"],
            0,
        ),
        "xargs" => s(
            "ILnPdEsa",
            &[
                "max-lines",
                "max-args",
                "max-procs",
                "delimiter",
                "eof",
                "max-chars",
                "arg-file",
                "replace",
                "process-slot-var",
            ],
            0,
        ),
        "env" => s("uCS", &["unset", "chdir", "split-string"], 0),
        "watch" => s("nqd", &["interval", "differences", "equexit"], 0),
        _ => None,
    }
}

/// Removes wrappers from the front of a command's words.
pub fn unwrap(words: &[WordValue]) -> Unwrapped {
    let mut out = Unwrapped {
        inner: Inner::Argv(0),
        wrappers: Vec::new(),
        levels: vec![0],
        privileged: false,
        hidden_args: false,
        reads: Vec::new(),
        writes: Vec::new(),
        dynamic: None,
        env: Vec::new(),
        alt_script: None,
    };
    let mut i = 0;
    // Bounded: each round consumes at least one word.
    while i < words.len() {
        let w = &words[i];
        if w.dynamic.is_some() || w.glob {
            out.inner = Inner::Unknown(format!(
                "the command name {:?} is not static ({})",
                w.text,
                w.dynamic.as_deref().unwrap_or("glob")
            ));
            return out;
        }
        if i > 0 && is_assignment(&w.text) {
            // `nice FOO=1 cmd` would fail to find a program named `FOO=1`; judge it as the
            // assignment it looks like, so a deny rule on `cmd` still applies.
            let (var, value) = w.text.split_once('=').unwrap_or_default();
            if assignment_changes_what_runs(var, value) && out.dynamic.is_none() {
                out.dynamic = Some(format!("it sets {var}, which changes what runs"));
            }
            out.env.push(w.clone());
            i += 1;
            out.levels.push(i);
            continue;
        }
        let name = program_name(&w.text);
        if SHELLS.contains(&basename(name)) {
            out.inner = shell_inner(&words[i..], &mut out);
            if let Inner::Argv(k) = out.inner {
                out.inner = Inner::Argv(i + k);
            }
            return out;
        }
        if name == "su" {
            out.wrappers.push("su".into());
            out.privileged = true;
            out.inner = su_inner(&words[i + 1..]);
            return out;
        }
        if name == "command"
            && words[i + 1..]
                .iter()
                .take_while(|w| w.text.starts_with('-'))
                .any(|w| w.text.contains(['v', 'V']))
        {
            // `command -v x` only looks a name up: it is the command itself.
            break;
        }
        if basename(name) == "git"
            && let Some(k) = submodule_foreach(&words[i + 1..])
        {
            out.wrappers.push("git submodule foreach".into());
            out.inner = foreach_script(&words[i + 1 + k..]);
            return out;
        }
        let Some(spec) = spec(name) else { break };
        let wrapper = basename(name).to_string();
        let (j, script_opt) = wrapper_options(words, i + 1, &wrapper, &spec, &mut out);
        out.wrappers.push(wrapper.clone());
        if PRIVILEGE_WRAPPERS.contains(&wrapper.as_str()) {
            out.privileged = true;
        }
        if wrapper == "xargs" {
            out.hidden_args = true;
        }
        if let Some(script) = script_opt {
            out.inner = Inner::Script(script);
            return out;
        }
        if let Some(inner) = wrapper_end(words, j, &wrapper, &mut out) {
            out.inner = inner;
            return out;
        }
        i = j;
        out.levels.push(i);
    }
    out.inner = Inner::Argv(i);
    out
}

pub use super::git::{GIT_OPTIONS_WITH_VALUE, git_global_options_len};

/// Where the command of `git [global options] submodule [--quiet] foreach [--recursive] CMD…`
/// starts in the words after `git`, when these words are such a command.
fn submodule_foreach(rest: &[WordValue]) -> Option<usize> {
    let mut i = git_global_options_len(rest.iter().map(|w| w.text.as_str()));
    if rest.get(i).map(|w| w.text.as_str()) != Some("submodule") {
        return None;
    }
    i += 1;
    while rest
        .get(i)
        .is_some_and(|w| w.text == "--quiet" || w.text == "-q")
    {
        i += 1;
    }
    if rest.get(i).map(|w| w.text.as_str()) != Some("foreach") {
        return None;
    }
    i += 1;
    while rest
        .get(i)
        .is_some_and(|w| matches!(w.text.as_str(), "--recursive" | "--quiet" | "-q"))
    {
        i += 1;
    }
    if rest.get(i).is_some_and(|w| w.text == "--") {
        i += 1;
    }
    Some(i)
}

/// What `git submodule foreach` runs in every submodule: one word is a script for `sh -c`;
/// several are a command run as they are (judged as the same words quoted into a script).
fn foreach_script(words: &[WordValue]) -> Inner {
    match words {
        [] => Inner::Unknown("git submodule foreach without a command".into()),
        [one] => Inner::Script(one.clone()),
        many => {
            let quoted: Vec<String> = many
                .iter()
                .map(|w| super::text::shell_quote(&w.text))
                .collect();
            let mut script = WordValue::literal(&quoted.join(" "));
            script.dynamic = many.iter().find_map(|w| w.dynamic.clone());
            script.substitutions = many.iter().flat_map(|w| w.substitutions.clone()).collect();
            Inner::Script(script)
        }
    }
}

/// `su [options] [-c SCRIPT]`: the script it runs, or a shell (not known statically).
fn su_inner(rest: &[WordValue]) -> Inner {
    match rest
        .iter()
        .position(|w| w.text == "-c" || w.text == "--command")
    {
        Some(p) => match rest.get(p + 1) {
            Some(script) => Inner::Script(script.clone()),
            None => Inner::Unknown("su -c without a command".into()),
        },
        None => Inner::Unknown("su opens a shell as another user".into()),
    }
}

/// Skips a wrapper's options and positional arguments from `words[start..]`, noting what they
/// say (a user, a script given as an option, assignments); returns where its command starts.
fn wrapper_options(
    words: &[WordValue],
    start: usize,
    wrapper: &str,
    spec: &Spec,
    out: &mut Unwrapped,
) -> (usize, Option<WordValue>) {
    let mut positionals_left = spec.positionals;
    let mut script_opt: Option<WordValue> = None;
    let mut j = start;
    while j < words.len() {
        let t = words[j].text.as_str();
        if t == "--" {
            j += 1;
            break;
        }
        // env, sudo and doas take `NAME=value` words before the command.
        if matches!(wrapper, "env" | "sudo" | "doas" | "run0") && is_assignment(t) {
            let (var, value) = t.split_once('=').unwrap_or_default();
            if assignment_changes_what_runs(var, value) && out.dynamic.is_none() {
                out.dynamic = Some(format!("{wrapper} sets {var}, which changes what runs"));
            }
            out.env.push(words[j].clone());
            j += 1;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (lname, has_value) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let value = if !has_value && spec.long_args.contains(&lname) {
                j += 1;
                words.get(j).cloned()
            } else {
                long.split_once('=').map(|(_, v)| WordValue::literal(v))
            };
            note_option(wrapper, lname, value, out, &mut script_opt);
            j += 1;
            continue;
        }
        if wrapper == "nice" && t.len() > 1 && t[1..].parse::<i32>().is_ok() {
            // `nice -5 cmd`: an old-style adjustment.
            j += 1;
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            // A cluster of short flags; the first that takes an argument ends it.
            let mut consumed_next = false;
            for (k, c) in t[1..].char_indices() {
                if spec.short_args.contains(c) {
                    let rest = &t[1 + k + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        consumed_next = true;
                        words.get(j + 1).cloned()
                    } else {
                        Some(WordValue::literal(rest))
                    };
                    note_option(wrapper, &c.to_string(), value, out, &mut script_opt);
                    break;
                }
                note_flag(wrapper, c, out);
            }
            j += if consumed_next { 2 } else { 1 };
            continue;
        }
        if positionals_left > 0 {
            positionals_left -= 1;
            j += 1;
            continue;
        }
        break;
    }
    (j, script_opt)
}

/// After a wrapper's options at `words[j..]`: what runs when that is not simply the next
/// command (`watch` joining its words into a script; a wrapper with no command at all).
fn wrapper_end(words: &[WordValue], j: usize, wrapper: &str, out: &mut Unwrapped) -> Option<Inner> {
    if wrapper == "watch" && j < words.len() {
        // watch joins its arguments and runs them with `sh -c`.
        let joined: Vec<&str> = words[j..].iter().map(|w| w.text.as_str()).collect();
        // What the agent appears to mean, quotes kept: judged as well (see `alt_script`).
        let quoted: Vec<String> = words[j..]
            .iter()
            .map(|w| super::text::shell_quote(&w.text))
            .collect();
        out.alt_script = Some(quoted.join(" "));
        let mut script = WordValue::literal(&joined.join(" "));
        script.dynamic = words[j..].iter().find_map(|w| w.dynamic.clone());
        script.substitutions = words[j..]
            .iter()
            .flat_map(|w| w.substitutions.clone())
            .collect();
        return Some(Inner::Script(script));
    }
    if j >= words.len() {
        return Some(match wrapper {
            "xargs" => Inner::Argv(words.len()), // runs `echo`: harmless, but say so below
            "sudo" | "doas" | "chroot" | "pkexec" | "run0" => Inner::Unknown(format!(
                "{wrapper} without a command opens a privileged shell"
            )),
            "exec" | "command" | "builtin" | "time" | "nohup" => Inner::Argv(words.len()),
            _ => Inner::Unknown(format!("{wrapper} without a command")),
        });
    }
    None
}

fn is_assignment(t: &str) -> bool {
    t.split_once('=').is_some_and(|(n, _)| {
        !n.is_empty()
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !n.starts_with(|c: char| c.is_ascii_digit())
    })
}

fn note_flag(wrapper: &str, flag: char, out: &mut Unwrapped) {
    if wrapper == "sudo" && matches!(flag, 'e') && out.dynamic.is_none() {
        out.dynamic = Some("sudo -e edits files as root".into());
    }
    if wrapper == "sudo" && matches!(flag, 'i' | 's') && out.dynamic.is_none() {
        out.dynamic = Some("sudo -i/-s runs a root shell".into());
    }
}

fn note_option(
    wrapper: &str,
    opt: &str,
    value: Option<WordValue>,
    out: &mut Unwrapped,
    script: &mut Option<WordValue>,
) {
    let Some(value) = value else { return };
    match (wrapper, opt) {
        ("strace" | "ltrace", "o" | "output") | ("time", "o" | "output") => out.writes.push(value),
        ("xargs", "a" | "arg-file") => out.reads.push(value),
        ("flock", "c" | "command") => *script = Some(value),
        ("env", "S" | "split-string") => *script = Some(value),
        ("env", "C" | "chdir") | ("sudo", "D" | "chdir") | ("run0", "D" | "chdir")
            if out.dynamic.is_none() =>
        {
            out.dynamic = Some(format!("{wrapper} changes the working directory"));
        }
        _ => {}
    }
}

/// `bash [options] [-c script | file | -s]`.
fn shell_inner(words: &[WordValue], out: &mut Unwrapped) -> Inner {
    let name = basename(program_name(&words[0].text)).to_string();
    out.wrappers.push(name.clone());
    let mut j = 1;
    let mut command_mode = false;
    while j < words.len() {
        let t = words[j].text.as_str();
        if t == "--" || t == "-" {
            j += 1;
            break;
        }
        if matches!(t, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            j += 2;
            continue;
        }
        if let Some(flags) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) {
            if !flags.starts_with('-') && flags.contains('c') {
                command_mode = true;
            }
            if !flags.starts_with('-') && flags.contains('s') {
                return Inner::StdinScript;
            }
            j += 1;
            continue;
        }
        break;
    }
    if command_mode {
        return match words.get(j) {
            Some(script) => Inner::Script(script.clone()),
            None => Inner::Unknown(format!("{name} -c without a script")),
        };
    }
    match words.get(j) {
        None => Inner::StdinScript,
        Some(file) => {
            out.reads.push(file.clone());
            Inner::Unknown(format!(
                "{name} runs the script file {:?}, whose content is not known",
                file.text
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::shell::words::evaluate;

    fn u(cmd: &str) -> (Unwrapped, Vec<WordValue>) {
        let words: Vec<WordValue> = cmd.split(' ').map(evaluate).collect();
        (unwrap(&words), words)
    }

    fn inner_text(cmd: &str) -> String {
        let (un, words) = u(cmd);
        match un.inner {
            Inner::Argv(i) => words[i..]
                .iter()
                .map(|w| w.text.clone())
                .collect::<Vec<_>>()
                .join(" "),
            Inner::Script(s) => format!("script:{}", s.text),
            Inner::StdinScript => "stdin".into(),
            Inner::Unknown(why) => format!("unknown:{why}"),
        }
    }

    #[test]
    fn wrappers_are_seen_through() {
        assert_eq!(inner_text("sudo -u root rm -rf /"), "rm -rf /");
        assert_eq!(inner_text("timeout -s KILL 5 git push"), "git push");
        assert_eq!(
            inner_text("timeout 5s nice -n 10 nohup git push"),
            "git push"
        );
        assert_eq!(inner_text("env -i FOO=1 git push"), "git push");
        assert_eq!(inner_text("sudo FOO=bar git push"), "git push");
        assert_eq!(inner_text("doas -u root A=1 B=2 git push"), "git push");
        assert_eq!(inner_text("stdbuf -oL git push"), "git push");
        assert_eq!(
            inner_text("/usr/bin/sudo /usr/bin/git push"),
            "/usr/bin/git push"
        );
        assert_eq!(inner_text("xargs -I{} -n 1 rm"), "rm");
        assert_eq!(inner_text("command git push"), "git push");
        assert_eq!(inner_text("command -v git"), "command -v git");
        assert_eq!(inner_text("nice -5 git push"), "git push");
        assert_eq!(inner_text("chroot /mnt rm -rf /"), "rm -rf /");
        assert_eq!(inner_text("flock /tmp/l git push"), "git push");
        assert_eq!(inner_text("strace -f -o /tmp/t git push"), "git push");
        assert_eq!(inner_text("doas -u root git push"), "git push");
    }

    #[test]
    fn shells_and_scripts() {
        assert_eq!(inner_text("bash -c x"), "script:x");
        assert_eq!(inner_text("sh -ec x"), "script:x");
        assert_eq!(inner_text("bash"), "stdin");
        assert_eq!(inner_text("sh -s"), "stdin");
        assert!(inner_text("bash script.sh").starts_with("unknown:"));
        assert_eq!(inner_text("su -c x root"), "script:x");
        assert_eq!(inner_text("watch -n 1 git status"), "script:git status");
        assert_eq!(inner_text("flock -c x /tmp/l"), "script:x");
        assert_eq!(inner_text("sudo bash -c x"), "script:x");
    }

    #[test]
    fn privilege_and_dynamic_facts() {
        let (un, _) = u("sudo rm x");
        assert!(un.privileged);
        assert_eq!(un.wrappers, vec!["sudo".to_string()]);
        let (un, _) = u("env PATH=/tmp git status");
        assert!(un.dynamic.is_some());
        let (un, _) = u("sudo -i");
        assert!(matches!(un.inner, Inner::Unknown(_)));
        assert!(inner_text("$X status").starts_with("unknown:"));
    }
}

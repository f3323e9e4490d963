//! Shell variables a script gives a literal value: which of them may be resolved statically.
//!
//! This module owns the soundness conditions for reading `file='/etc/shadow'; cat "$file"` as
//! `cat /etc/shadow`. A variable is resolvable when the script assigns it exactly once, in a plain
//! assignment statement of the top-level script (not in a pipeline, a background job, a function
//! or a compound command), and nothing else can set it:
//!
//! - its name appears nowhere else in the script text except as a plain `$name` or `${name}`
//!   expansion (so `read name`, `for name in`, `name+=x`, `${name:=x}`, `local name`, a function
//!   assigning it, and even a comment mentioning it all keep it unresolved);
//! - the script has no construct that sets variables by a computed name or runs code not in its
//!   text: `eval`, `source`, `.`, `enable`, a nameref (`-n`), or `declare`, `typeset`, `local`,
//!   `export`, `readonly`, `unset`, `read`, `mapfile`, `readarray`, `getopts`, `trap`, `let`,
//!   `printf -v` or `wait -p` whose names are expansions;
//! - it is not one of the shell's own variables (`PWD`, `RANDOM`, `IFS`, `BASH_*`, …).
//!
//! The walker resolves a use only after the assignment, in the same shell and its subshells
//! (`$(…)`, functions), never in child scripts (`bash -c`), which do not see unexported variables.
//! An unquoted use is resolved only when the value is a plain word and the script never mentions
//! `IFS`, so word splitting and globbing cannot change it. Arithmetic can still assign a variable
//! whose name comes from data, but only an integer, which cannot turn a path into one elsewhere.

use std::collections::HashMap;

use super::command::SimpleCommand;

/// Most assignments of one script checked for resolution (each check scans the script).
pub const MAX_RESOLVED: usize = 64;

/// The shell's own variables: assigning them does not (or not only) set a value.
const SPECIAL: &[&str] = &[
    "PWD",
    "OLDPWD",
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "BASHPID",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "HISTCMD",
    "PPID",
    "UID",
    "EUID",
    "GROUPS",
    "SHLVL",
    "REPLY",
    "OPTIND",
    "OPTARG",
    "OPTERR",
    "IFS",
    "PIPESTATUS",
    "FUNCNAME",
    "HOME",
    "PATH",
    "CDPATH",
    "GLOBIGNORE",
    "HOSTNAME",
];

/// What may be resolved in one script.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    text: String,
    /// False when the script can set variables by computed names: nothing is resolved.
    enabled: bool,
    /// Whether unquoted uses may be resolved (the script never mentions `IFS`).
    unquoted: bool,
    /// The resolved values, in effect from their assignment on.
    values: HashMap<String, String>,
    checked: usize,
}

impl Scope {
    /// Whether a script may have anything to resolve: an assignment and an expansion.
    pub fn worth_trying(text: &str) -> bool {
        text.contains('=') && text.contains('$')
    }

    /// The scope of a top-level script, given the commands a walk without resolution found in
    /// it (every command of every nested script, function and substitution).
    pub fn of(text: &str, commands: &[SimpleCommand]) -> Scope {
        let enabled = Scope::worth_trying(text) && !blocked(commands);
        Scope {
            text: if enabled {
                text.to_string()
            } else {
                String::new()
            },
            enabled,
            unquoted: !text.contains("IFS"),
            values: HashMap::new(),
            checked: 0,
        }
    }

    /// Whether anything may be resolved at all.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether any value has been resolved.
    pub fn resolved_any(&self) -> bool {
        !self.values.is_empty()
    }

    /// Records `name=value` from a plain top-level assignment statement, when `name` is
    /// resolvable. `value` is the statically known value, or `None` when it is not static.
    pub fn assign(&mut self, name: &str, value: Option<&str>) {
        if !self.enabled {
            return;
        }
        // Whatever happens, a second assignment of the same name must not leave the first.
        self.values.remove(name);
        let Some(value) = value else { return };
        if self.checked >= MAX_RESOLVED || !valid_name(name) || is_special(name) {
            return;
        }
        self.checked += 1;
        if assigned_only_once(&self.text, name) {
            self.values.insert(name.to_string(), value.to_string());
        }
    }

    /// The value a plain expansion of `name` has, when it is known.
    pub fn value(&self, name: &str, quoted: bool) -> Option<&str> {
        let v = self.values.get(name)?;
        (quoted || (self.unquoted && super::text::is_plain(v))).then_some(v.as_str())
    }
}

fn valid_name(name: &str) -> bool {
    let mut b = name.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

fn is_special(name: &str) -> bool {
    SPECIAL.contains(&name)
        || name.starts_with("BASH")
        || name.starts_with("COMP_")
        || name.starts_with("HIST")
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether `name` occurs in `text` exactly once other than as `$name` or `${name}`.
fn assigned_only_once(text: &str, name: &str) -> bool {
    let bytes = text.as_bytes();
    let mut others = 0;
    for (i, _) in text.match_indices(name) {
        let end = i + name.len();
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(end).copied();
        if before.is_some_and(is_word_byte) || after.is_some_and(is_word_byte) {
            continue;
        }
        let plain = before == Some(b'$')
            || (before == Some(b'{') && i >= 2 && bytes[i - 2] == b'$' && after == Some(b'}'));
        if !plain {
            others += 1;
            if others > 1 {
                return false;
            }
        }
    }
    others == 1
}

/// Whether a command of the script (as the first pass found them) can set variables by computed
/// names or run code that is not in the script's text.
fn blocked(commands: &[SimpleCommand]) -> bool {
    commands.iter().any(|c| {
        let Some(program) = c.argv.first() else {
            return false;
        };
        if program.contains(['$', '`']) {
            return true;
        }
        let name = super::text::basename(program);
        let args = c.argv.get(1..).unwrap_or(&[]);
        match name {
            "eval" | "source" | "." | "enable" => true,
            // The code a trap runs is in the script's text unless it is an expansion.
            "trap" => c.dynamic.is_some(),
            // Only the option naming a variable matters: `printf -v "$n"`, `wait -p "$n"`.
            "printf" | "wait" => {
                let flag = if name == "printf" { "-v" } else { "-p" };
                args.iter()
                    .position(|a| a == flag)
                    .is_some_and(|i| args.get(i + 1).is_none_or(|a| a.contains(['$', '`'])))
            }
            "declare" | "typeset" | "local" | "export" | "readonly" | "unset" | "read"
            | "mapfile" | "readarray" | "getopts" | "let" => args.iter().any(|a| {
                let name_part = a.split('=').next().unwrap_or(a);
                name_part.contains(['$', '`'])
                    // A nameref: assigning it sets whatever variable it names.
                    || (matches!(name, "declare" | "typeset" | "local")
                        && a.starts_with('-')
                        && !a.starts_with("--")
                        && a.contains('n'))
            }),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(text: &str) -> Scope {
        let first = crate::normalize::shell::analyze_without_variables(text);
        Scope::of(text, &first.commands)
    }

    fn resolves(text: &str, name: &str) -> bool {
        let mut s = scope(text);
        s.assign(name, Some("v"));
        s.value(name, true).is_some()
    }

    #[test]
    fn a_single_plain_assignment_resolves() {
        assert!(resolves("f='/etc/shadow'\ncat \"$f\"", "f"));
        assert!(resolves("f=x; echo ${f}; echo \"$f\"", "f"));
        assert!(resolves("f=x\ng() { local url=$1; cat \"$f\"; }", "f"));
        assert!(resolves("f=x; echo \"cannot read $f\"; cat $f", "f"));
    }

    #[test]
    fn any_other_setter_keeps_it_unknown() {
        for text in [
            "f=x; f=y; cat $f",
            "f=x; read f; cat $f",
            "f=x; for f in a b; do cat $f; done",
            "f=x; f+=y; cat $f",
            "f=x; echo ${f:=y}; cat $f",
            "f=x; g() { local f; }; cat $f",
            "f=x; # f is the file\ncat $f",
            "f=x; printf -v f y; cat $f",
        ] {
            assert!(!resolves(text, "f"), "{text}");
        }
    }

    #[test]
    fn computed_names_disable_resolution() {
        for text in [
            "f=x; eval \"$cmd\"; cat $f",
            "f=x; source ./env.sh; cat $f",
            "f=x; . ./env.sh; cat $f",
            "f=x; declare \"$n=y\"; cat $f",
            "f=x; g() { local -n r=$1; }; cat $f",
            "f=x; read -r \"$n\"; cat $f",
            "f=x; printf -v \"$n\" y; cat $f",
            "f=x; export ${n}=y; cat $f",
            "f=x; trap \"$t\" EXIT; cat $f",
            "f=x; $c n=y; cat $f",
        ] {
            assert!(!scope(text).enabled(), "{text}");
        }
        // A literal name whose value is an expansion is fine, and so is text in strings.
        assert!(scope("f=x; g() { local url=$1; }; cat $f").enabled());
        assert!(scope("f=x; printf '%s\\n' \"$f\"").enabled());
        assert!(scope("f=x; echo \"cannot read $f\"; cat $f").enabled());
    }

    #[test]
    fn special_and_unquoted_uses() {
        assert!(!resolves("PWD=/etc; cat $PWD/shadow", "PWD"));
        assert!(!resolves("BASH_ENV=/x; cat $BASH_ENV", "BASH_ENV"));
        let mut s = scope("f='a b'; cat $f");
        s.assign("f", Some("a b"));
        assert_eq!(s.value("f", true), Some("a b"));
        assert_eq!(s.value("f", false), None, "word splitting");
        let mut s = scope("IFS=/; f=/etc/x; cat $f");
        s.assign("f", Some("/etc/x"));
        assert_eq!(s.value("f", false), None, "IFS is changed");
        assert_eq!(s.value("f", true), Some("/etc/x"));
    }

    #[test]
    fn a_dynamic_value_forgets_the_name() {
        let mut s = scope("f=x; cat $f");
        s.assign("f", None);
        assert_eq!(s.value("f", true), None);
    }
}

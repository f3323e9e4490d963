//! A property of the option tables under the embedded default policy (#44): for any option whose
//! value a tool writes, empties or writes under, and any path outside the workspace or under a
//! built-in protection, a command using it is never allowed by a rule, whichever value position
//! carries the path and whichever spelling carries the value (`-oFILE`, `-o FILE`, `--out=FILE`,
//! `--out FILE`, `-name FILE`, a letter inside a cluster).

use guardian::Config;
use guardian::normalize::shell::options::{Effect, Entry, entries};
use guardian::normalize::{Context, normalize};
use guardian::policy::Policy;
use guardian::request::Action;
use guardian::verdict::Effect as Decision;
use proptest::prelude::*;

fn default_policy() -> &'static Policy {
    static POLICY: std::sync::OnceLock<Policy> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| {
        let cfg = Config::load(None).expect("the embedded default loads");
        Policy::from_config(&cfg, Vec::new()).expect("the embedded default compiles")
    })
}

fn ctx() -> Context {
    crate::common::workspace_ctx("/home/u")
}

/// Options that write: what the property is about. Tables of passed-on arguments (`@libtest`)
/// are reached through their tool and left out here.
fn writers() -> &'static [Entry] {
    static WRITERS: std::sync::OnceLock<Vec<Entry>> = std::sync::OnceLock::new();
    WRITERS.get_or_init(|| {
        entries()
            .into_iter()
            .filter(|e| {
                matches!(e.effect, Effect::Write | Effect::WriteTree | Effect::Delete)
                    && !e.head.starts_with('@')
                    && !e.at.is_empty()
            })
            .collect()
    })
}

/// Paths no rule may let a tool write: outside the workspace (absolute, relative, the home) and
/// protected inside it.
const TARGETS: &[&str] = &[
    "/root/.bashrc",
    "~/.bashrc",
    "../other/x",
    "/etc/cron.d/job",
    "/work/repo/.git/hooks/pre-commit",
    ".git/hooks/pre-commit",
    ".git/config",
    ".husky/pre-commit",
    "~/.gitconfig",
];

/// Every spelling of `name` carrying `values`, as the tool's parser would take them (an optional
/// value only attached).
fn spellings(head: &str, name: &str, values: &[String], optional: bool) -> Vec<String> {
    let rest = values[1..].join(" ");
    let first = &values[0];
    let join = |s: String| {
        if rest.is_empty() {
            s
        } else {
            format!("{s} {rest}")
        }
    };
    let mut out = Vec::new();
    if !optional {
        out.push(join(format!("{name} {first}")));
    }
    let long = name.starts_with("--") || head == "find" || head.starts_with("go ");
    let short_letter = !name.starts_with("--") && name.len() == 2;
    if long && head != "find" {
        out.push(join(format!("{name}={first}")));
    }
    if short_letter {
        if head == "tree" && !optional {
            // tree: a letter inside a cluster takes the next word.
            out.push(join(format!("-a{} {first}", &name[1..])));
        } else {
            out.push(join(format!("{name}{first}")));
        }
    }
    out
}

/// The commands that use entry `e` with `target` at each value position its effect acts on.
fn commands(e: &Entry, target: &str) -> Vec<String> {
    let mut out = Vec::new();
    for &at in &e.at {
        let values: Vec<String> = (1..=e.values)
            .map(|k| {
                if k == at {
                    target.to_string()
                } else {
                    "v".to_string()
                }
            })
            .collect();
        for name in &e.names {
            if name.ends_with('*') {
                continue;
            }
            for spelled in spellings(e.head, name, &values, e.optional) {
                out.push(format!("{} {spelled}", e.head));
            }
        }
    }
    out
}

fn rule_allows(policy: &Policy, command: &str) -> bool {
    let c = ctx();
    let action = normalize(
        &Action::Shell {
            command: command.to_string(),
            cwd: None,
        },
        &c,
    );
    policy.evaluate(&action, &c).effect == Decision::Allow
}

#[test]
fn no_write_option_writes_outside_the_workspace_or_a_protection_by_rule() {
    let policy = default_policy();
    let writers = writers();
    assert!(writers.len() > 60, "only {} write options", writers.len());
    let mut allowed = Vec::new();
    let mut tried = 0;
    for e in writers {
        for target in TARGETS {
            for cmd in commands(e, target) {
                tried += 1;
                if rule_allows(policy, &cmd) {
                    allowed.push(cmd);
                }
            }
        }
    }
    assert!(tried > 500, "only {tried} commands tried");
    assert!(
        allowed.is_empty(),
        "{} of {tried} commands write outside the workspace or under a protection and are allowed by a rule:\n{}",
        allowed.len(),
        allowed.join("\n")
    );
}

#[test]
fn the_same_options_inside_the_workspace_are_still_allowed() {
    // The other side: the property is not met by denying everything. A write option of a
    // read-only tool aimed inside the workspace stays allowed by rule.
    let policy = default_policy();
    for cmd in [
        "find . -maxdepth 0 -fprintf out.txt %p",
        "find src -fprint list.txt",
        "sort -o sorted.txt names.txt",
        "tree -o tree.txt src",
        "git diff --output=changes.diff",
    ] {
        assert!(
            rule_allows(policy, cmd),
            "{cmd} is no longer allowed by rule"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any write option, a random path outside the workspace under a random name, at the
    /// position its table gives, in every spelling: never allowed by rule.
    #[test]
    fn random_outside_paths_are_never_rule_allowed(
        pick in 0usize..10_000,
        dir in prop::sample::select(vec!["/root", "/etc", "/tmp", "/home/u", "~", "..", "../..", "/work/repo/.git/hooks"]),
        name in "[a-z][a-z0-9_.-]{0,12}",
    ) {
        let policy = default_policy();
        let writers = writers();
        let e = &writers[pick % writers.len()];
        let target = format!("{dir}/{name}");
        for cmd in commands(e, &target) {
            prop_assert!(!rule_allows(policy, &cmd), "allowed by rule: {}", cmd);
        }
    }
}

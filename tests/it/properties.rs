//! Properties of the shell policy: no wrapper, compound or substitution form turns a denied
//! command into an allowed one, and no input hangs, panics or is allowed without being understood.

use std::sync::Arc;

use guardian::config::RuleSpec;
use guardian::normalize::{Context, NormalizedAction, normalize, normalize_guarded};
use guardian::policy::Policy;
use guardian::request::Action;
use guardian::verdict::Effect;
use proptest::prelude::*;

/// Everything is allowed except what the deny rules name: the worst case for bypasses.
fn permissive_policy() -> Policy {
    let mut specs = Vec::new();
    for (effect, pattern) in [
        (Effect::Deny, "Bash(git push *)"),
        (Effect::Deny, "Bash(rm -rf *)"),
        (Effect::Deny, "Read(./.env)"),
        (Effect::Deny, "WebFetch(domain:evil.example)"),
        (Effect::Allow, "Bash(*)"),
        (Effect::Allow, "Read(//**)"),
        (Effect::Allow, "Edit(//**)"),
    ] {
        specs.push(RuleSpec {
            effect,
            pattern: pattern.into(),
            source: "prop".into(),
            ..RuleSpec::default()
        });
    }
    let mut settings = Policy::empty().settings().clone();
    settings.outside_workspace = Effect::Allow;
    Policy::compile(&specs, settings).expect("compiles")
}

fn ctx() -> Context {
    crate::common::workspace_ctx("/home/u")
}

fn effect_of(policy: &Policy, cmd: &str) -> Effect {
    let c = ctx();
    let action = normalize(
        &Action::Shell {
            command: cmd.to_string(),
            cwd: None,
        },
        &c,
    );
    policy.evaluate(&action, &c).effect
}

fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn dq(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Commands every policy above denies.
const DENIED: &[&str] = &[
    "git push origin main",
    "git push --force",
    "rm -rf /tmp/x",
    "cat .env",
    "head -n 1 .env",
    "curl https://evil.example/x",
    "git clone https://evil.example/r.git",
];

/// One way of hiding a command inside another.
fn wrap(cmd: &str, how: usize) -> String {
    match how {
        0 => format!("sudo {cmd}"),
        1 => format!("sudo -u root {cmd}"),
        2 => format!("timeout 5 {cmd}"),
        3 => format!("timeout -s KILL 5 {cmd}"),
        4 => format!("env FOO=1 {cmd}"),
        5 => format!("nice -n 5 {cmd}"),
        6 => format!("nohup {cmd}"),
        7 => format!("stdbuf -oL {cmd}"),
        8 => format!("command {cmd}"),
        9 => format!("exec {cmd}"),
        10 => format!("time {cmd}"),
        11 => format!("ionice -c 3 {cmd}"),
        12 => format!("setsid {cmd}"),
        13 => format!("doas {cmd}"),
        14 => format!("FOO=bar {cmd}"),
        15 => format!("bash -c {}", sq(cmd)),
        16 => format!("sh -c {}", dq(cmd)),
        17 => format!("zsh -c {}", sq(cmd)),
        18 => format!("echo $({cmd})"),
        19 => format!("echo `{}`", cmd.replace('\\', "\\\\").replace('`', "\\`")),
        20 => format!("cat <({cmd})"),
        21 => format!("{{ {cmd}; }}"),
        22 => format!("({cmd})"),
        23 => format!("true && {cmd}"),
        24 => format!("false || {cmd}"),
        25 => format!("{cmd}; true"),
        26 => format!("echo hi | {cmd}"),
        27 => format!("if true; then {cmd}; fi"),
        28 => format!("for i in 1; do {cmd}; done"),
        29 => format!("f() {{ {cmd}; }}; f"),
        30 => format!("bash <<'EOF'\n{cmd}\nEOF\n"),
        31 => format!("echo {} | sh", sq(cmd)),
        32 => format!("watch -n 1 {cmd}"),
        33 => format!("flock /tmp/lock {cmd}"),
        34 => format!("strace -f {cmd}"),
        35 => format!("chroot / {cmd}"),
        36 => format!("while true; do {cmd}; break; done"),
        37 => format!("{cmd} &"),
        38 => format!("case x in x) {cmd};; esac"),
        39 => format!("su -c {} root", sq(cmd)),
        _ => format!("eval {}", sq(cmd)),
    }
}

/// Quoting tricks on the first word.
fn disguise(cmd: &str, how: usize) -> String {
    let (first, rest) = cmd.split_once(' ').unwrap_or((cmd, ""));
    let first = match how {
        0 => first.to_string(),
        1 => format!("{}''{}", &first[..1], &first[1..]),
        2 => format!("\"{first}\""),
        3 => format!("\\{first}"),
        4 => format!("/usr/bin/{first}"),
        _ => format!("'{first}'"),
    };
    format!("{first} {rest}")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn wrapping_a_denied_command_never_allows(
        base in 0..DENIED.len(),
        disguise_how in 0usize..6,
        wraps in proptest::collection::vec(0usize..41, 1..4),
    ) {
        let policy = permissive_policy();
        let mut cmd = disguise(DENIED[base], disguise_how);
        prop_assert_eq!(effect_of(&policy, &cmd), Effect::Deny, "base form {:?}", cmd);
        for w in wraps {
            cmd = wrap(&cmd, w);
            let e = effect_of(&policy, &cmd);
            // Never allowed; and denied outright whenever the line is valid shell (a line the
            // parser rejects, like `sudo { …; }`, cannot run, and goes to the reviewer).
            prop_assert_ne!(e, Effect::Allow, "{:?} was allowed", cmd);
            if guardian::normalize::shell::parse(&cmd).is_ok() {
                prop_assert_eq!(e, Effect::Deny, "{:?} was not denied", cmd);
            }
        }
    }

    #[test]
    fn arbitrary_input_never_panics_and_what_fails_to_parse_is_never_allowed(
        input in "[ -~\\n\\t]{0,120}",
    ) {
        let policy = permissive_policy();
        let c = ctx();
        let action = normalize(&Action::Shell { command: input.clone(), cwd: None }, &c);
        let e = policy.evaluate(&action, &c);
        if let NormalizedAction::Shell(a) = &action {
            if a.parse_error.is_some() || !a.unknowns.is_empty() {
                prop_assert_ne!(e.effect, Effect::Allow, "{:?} allowed without being understood", input);
            }
        }
    }

    #[test]
    fn bracket_soup_is_bounded_and_never_allowed(
        input in "[(){}<>$|&;` a-z-]{0,60}",
    ) {
        let policy = permissive_policy();
        let c = ctx();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let permits = Arc::new(tokio::sync::Semaphore::new(2));
        let action = rt.block_on(normalize_guarded(
            &Action::Shell { command: input.clone(), cwd: None },
            &c,
            &permits,
            std::time::Duration::from_secs(2),
        ));
        let e = policy.evaluate(&action, &c);
        if let NormalizedAction::Shell(a) = &action {
            if a.parse_error.is_some() {
                prop_assert_ne!(e.effect, Effect::Allow);
            }
        }
    }
}

#[test]
fn known_pathological_inputs_return_with_a_non_allow_answer() {
    let policy = permissive_policy();
    let c = ctx();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let permits = Arc::new(tokio::sync::Semaphore::new(2));
    for input in [
        "444444444444444444444444< x",
        "(((-<(((((((((((((((((((((((",
        &"((-<".repeat(40),
    ] {
        let started = std::time::Instant::now();
        let action = rt.block_on(normalize_guarded(
            &Action::Shell {
                command: input.to_string(),
                cwd: None,
            },
            &c,
            &permits,
            std::time::Duration::from_secs(2),
        ));
        let e = policy.evaluate(&action, &c);
        assert_ne!(e.effect, Effect::Allow, "{input:?}");
        // The parse deadline is 2 s; anything near the unguarded parser's minutes is a failure.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{input:?} took {:?}",
            started.elapsed()
        );
    }
}

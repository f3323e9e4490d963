//! Parse + evaluate a shell command against a 50-rule policy.
//!
//! Run with `cargo bench --bench policy`. Each group has a baseline in the same run (parsing
//! alone, and a one-rule policy), so results read as ratios on any machine.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use guardian::config::RuleSpec;
use guardian::normalize::{Context, normalize};
use guardian::policy::Policy;
use guardian::request::Action;
use guardian::verdict::Effect;

/// 50 rules of every kind, like a real team policy.
fn fifty_rules() -> Vec<RuleSpec> {
    let mut rules = Vec::new();
    let mut add = |effect, pattern: &str| {
        rules.push(RuleSpec {
            effect,
            pattern: pattern.to_string(),
            source: "bench".into(),
            ..RuleSpec::default()
        })
    };
    for p in [
        "Bash(git push *)",
        "Bash(rm -rf /)",
        "Bash(mkfs *)",
        "Bash(crontab *)",
        "Bash(chmod *-*R* 777 *)",
        "Read(.env)",
        "Read(~/.ssh/**)",
        "Read(~/.aws/**)",
        "Edit(~/.bashrc)",
        "Edit(//etc/**)",
        "WebFetch(domain:pastebin.com)",
        "WebFetch(domain:*.ngrok.io)",
        "mcp__github__delete_repository",
        "Bash(sudo su *)",
        "Edit(//usr/**)",
    ] {
        add(Effect::Deny, p);
    }
    for p in [
        "Bash(git commit *)",
        "Bash(git reset --hard *)",
        "Bash(npm publish *)",
        "Bash(docker *)",
        "Bash(kubectl *)",
    ] {
        add(Effect::Ask, p);
    }
    for p in [
        "Bash(ls *)",
        "Bash(cat *)",
        "Bash(head *)",
        "Bash(tail *)",
        "Bash(grep *)",
        "Bash(rg *)",
        "Bash(find *)",
        "Bash(echo *)",
        "Bash(git status *)",
        "Bash(git diff *)",
        "Bash(git log *)",
        "Bash(git show *)",
        "Bash(cargo build *)",
        "Bash(cargo test *)",
        "Bash(cargo check *)",
        "Bash(cargo clippy *)",
        "Bash(npm test *)",
        "Bash(npm run *)",
        "Bash(pytest *)",
        "Bash(go test *)",
        "Bash(make *)",
        "Bash(wc *)",
        "Bash(sort *)",
        "Bash(jq *)",
        "Bash(diff *)",
        "Bash(pwd)",
        "Bash(which *)",
        "Read(/**)",
        "Edit(/**)",
        "WebFetch(domain:docs.rs)",
    ] {
        add(Effect::Allow, p);
    }
    assert_eq!(rules.len(), 50);
    rules
}

fn ctx() -> Context {
    Context {
        cwd: PathBuf::from("/work/repo"),
        workspace_roots: vec![PathBuf::from("/work/repo")],
        home: Some(PathBuf::from("/home/dev")),
        git_dirs: Vec::new(),
    }
}

const COMMANDS: &[(&str, &str)] = &[
    ("simple", "git status"),
    (
        "compound",
        "cargo build --release && cargo test --workspace 2>&1 | tail -20",
    ),
    (
        "wrapped",
        "sudo timeout 30 bash -c 'cd src && grep -rn TODO . > /tmp/todos.txt'",
    ),
    ("deny", "git status; git push --force origin main"),
];

fn bench(c: &mut Criterion) {
    let settings = Policy::empty().settings().clone();
    let fifty = Policy::compile(&fifty_rules(), settings.clone()).expect("compiles");
    let one = Policy::compile(&fifty_rules()[..1], settings).expect("compiles");
    let ctx = ctx();
    for (name, cmd) in COMMANDS {
        let action = Action::Shell {
            command: cmd.to_string(),
            cwd: None,
        };
        let mut g = c.benchmark_group(*name);
        g.bench_function("parse only (baseline)", |b| {
            b.iter(|| black_box(guardian::normalize::shell::analyze(black_box(cmd))))
        });
        g.bench_function("parse + 1-rule policy", |b| {
            b.iter(|| black_box(one.evaluate(&normalize(black_box(&action), &ctx), &ctx)))
        });
        g.bench_function("parse + 50-rule policy", |b| {
            b.iter(|| black_box(fifty.evaluate(&normalize(black_box(&action), &ctx), &ctx)))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

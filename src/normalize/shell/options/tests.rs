//! The option tables, tested per tool both ways: each effectful option is caught, and the
//! everyday spellings of the same tool have no finding.

use super::{Effect, check, validate};
use crate::normalize::shell::words::WordValue;

fn words(line: &str) -> Vec<WordValue> {
    // The tests' lines need no quoting beyond single words.
    line.split_whitespace().map(WordValue::literal).collect()
}

fn findings(line: &str) -> Vec<(String, Effect)> {
    check(&words(line), &[])
        .unwrap_or_else(|| panic!("no table for {line}"))
        .into_iter()
        .map(|f| (f.name, f.effect))
        .collect()
}

#[test]
fn every_table_compiles() {
    let n = validate().expect("every table compiles");
    assert!(n > 1500, "only {n} options in all the tables");
}

/// Everyday spellings of the tools with tables: none has a finding a rule must name.
const EVERYDAY: &[&str] = &[
    "ls -la src",
    "ls -1 --color=never",
    "cat -n src/main.rs",
    "head -20 README.md",
    "head -n 5 a b",
    "tail -n +5 log.txt",
    "tail -f app.log",
    "wc -l src/lib.rs",
    "sort -u -k2,2 names.txt",
    "uniq -c sorted.txt",
    "cut -d: -f1 /etc/passwd",
    "diff -u a.txt b.txt",
    "diff -ru a b",
    "stat -c %s file",
    "du -sh target",
    "file -b src/main.rs",
    "which -a cargo",
    "date +%Y-%m-%d",
    "date -u -d @0 +%s",
    "uname -a",
    "basename -s .rs src/main.rs",
    "realpath --relative-to=. src",
    "grep -rn TODO src",
    "grep -E -i -A3 foo file",
    "grep -5 foo file",
    "rg -n TODO src",
    "rg --files -g *.rs",
    "rg -i -t rust --hidden foo",
    "find . -name *.rs",
    "find src -type f -newer Cargo.toml -maxdepth 2 -print0",
    "find . -path ./target -prune -o -name *.toml -print",
    "tree -L 2 -a -I target",
    "jq -r .name package.json",
    "sed -n 1,5p src/lib.rs",
    "sed -n 10p a.txt",
    "sed -n -e 3p -e $p a.txt",
    "sed -n 3,$p;7p a.txt",
    "sed -n /fn\\x20main/,/^}/p src/main.rs",
    "sed -i s/foo/bar/g src/lib.rs",
    "sed -E s|a+|b|2;/x/d a.txt",
    "sed 1d;$d;y/abc/xyz/ a.txt",
    "nl -ba src/lib.rs",
    "tac log.txt",
    "numfmt --to=iec 1048576",
    "base64 -w0 src/lib.rs",
    "base64 -d blob.b64",
    "jq --arg v 1 .x file.json",
    "printf %s\\n -x",
    "git status --porcelain=v1 -b",
    "git status -s -uno",
    "git diff --stat HEAD~1",
    "git diff --cached --name-only",
    "git diff -U0 --no-color main...HEAD -- src",
    "git log --oneline -10 --graph --decorate",
    "git log -p -S foo --author=me --since=2.weeks",
    "git show --stat HEAD",
    "git show HEAD~2 --name-status",
    "git branch --list -a -v",
    "git rev-parse --show-toplevel",
    "git rev-parse --abbrev-ref HEAD",
    "git ls-files -z --others --exclude-standard",
    "git blame -L 10,20 src/main.rs",
    "git -C sub status",
    "git --no-pager log -1",
    "git stash list",
    "git remote -v",
    "gh pr view 12 --json title,body",
    "gh pr list --state open -L 20",
    "gh pr checks 12",
    "gh issue view 3 --comments",
    "gh run view 42 --log-failed",
    "gh run list -L 5 --workflow ci.yml",
    "docker ps -a --format {{.Names}}",
    "docker logs --tail 100 -f web",
    "docker compose ps",
    "docker compose logs --tail=50 api",
    "kubectl describe pod web-1 -n prod",
    "kubectl logs -f deploy/web -c app --since=10m",
    "cargo build --release",
    "cargo test --workspace",
    "cargo test -p guardian --lib -- --nocapture --test-threads=1",
    "cargo check --all-targets --all-features",
    "cargo clippy --all-targets -- -D warnings",
    "cargo fmt --all -- --check",
    "cargo nextest run --workspace",
    "cargo bench --bench policy -- --save-baseline main",
    "cargo +nightly build",
    "cargo tree -i openssl",
    "cargo tree -e normal --depth 1 -p guardian",
    "cargo tree --duplicates --target all",
    "cargo metadata --format-version 1 --no-deps",
    "cargo clean",
    "cargo clean --release -p guardian",
    "npm test",
    "npm test -- --coverage src/a.test.ts",
    "npm run test -- -t login",
    "npm run lint",
    "npm run lint -- --fix",
    "npm test -- -u",
    "npm run build --if-present",
    "npx tsc --noEmit -p tsconfig.json",
    "tsc --noEmit",
    "npx eslint src --ext .ts --max-warnings 0",
    "eslint .",
    "pytest -q tests",
    "pytest -x -k login -vv tests/test_auth.py",
    "pytest -p no:cacheprovider -n 4",
    "pytest --cov=src --cov-report=term-missing",
    "python -m pytest -q",
    "python3 -m pytest tests/ -x --tb=short",
    "ruff check .",
    "ruff check src --select E,F --output-format=github",
    "mypy src --strict",
    "mypy --ignore-missing-imports --no-incremental .",
    "go test ./...",
    "go test -race -count=1 -run TestX ./pkg/...",
    "go test ./... -v",
    "go build ./...",
    "go build -ldflags=-s -trimpath .",
    "go vet ./...",
    "make",
    "make test",
    "make -j4 check",
    "make build V=1",
    "mvn test",
    "mvn -q test -Dtest=FooTest",
    "mvn clean verify -DskipTests",
    "gradle test",
    "gradlew test --tests *FooTest -i",
    "gradlew :app:test --offline",
];

#[test]
fn everyday_spellings_have_no_finding() {
    let mut bad = Vec::new();
    for line in EVERYDAY {
        let found: Vec<_> = findings(line)
            .into_iter()
            .filter(|(_, e)| e.needs_naming())
            .collect();
        if !found.is_empty() {
            bad.push(format!("{line}: {found:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `(line, the finding's name, its effect)`: every effectful option is caught.
const EFFECTFUL: &[(&str, &str, Effect)] = {
    use Effect::*;
    &[
        ("rg --pre sh foo", "--pre", Program),
        ("rg --pre=/tmp/evil foo", "--pre", Program),
        ("rg -z foo", "-z", Spawns),
        ("rg --search-zip foo", "-z", Spawns),
        ("rg --hostname-bin /tmp/x foo", "--hostname-bin", Program),
        ("rg --ignore-file /etc/shadow foo", "--ignore-file", Read),
        ("rg --frobnicate foo", "--frobnicate", Unknown),
        ("find . -delete", "-delete", Changes),
        ("find . -fprint out.txt", "-fprint", Write),
        ("find . -fprintf out.txt %p", "-fprintf", Write),
        ("find . -fls /tmp/l", "-fls", Write),
        ("find . -frobnicate", "-frobnicate", Unknown),
        ("tree -o .git/hooks/pre-commit", "-o", Write),
        ("tree --fromfile x", "--fromfile", Changes),
        ("jq -n env", "env", Env),
        ("jq -n $ENV.AWS_SECRET_ACCESS_KEY", "env", Env),
        ("jq -r env.HOME", "env", Env),
        ("jq --rawfile k /etc/shadow .", "--rawfile", Read),
        ("date -s 2020-01-01", "-s", Changes),
        ("date --set=2020-01-01", "-s", Changes),
        ("date 0101000020", "0101000020", Changes),
        ("sort -o out.txt in.txt", "-o", Write),
        (
            "sort --compress-program=sh x",
            "--compress-program",
            Program,
        ),
        ("sort -T /etc x", "-T", WriteTree),
        ("uniq in.txt out.txt", "OUTPUT", Write),
        ("file -z x.gz", "-z", Spawns),
        ("file -C -m magic", "-C", Changes),
        ("wc --files0-from=list", "--files0-from", ReadsListed),
        ("tree -ao /root/.bashrc .", "-o", Write),
        ("sed -n 1w/root/.bashrc x", "SCRIPT", Unknown),
        ("sed -n s/a/b/w/tmp/x x", "SCRIPT", Unknown),
        ("sed -n 1e\x20id x", "SCRIPT", Unknown),
        ("sed -n 1r/etc/shadow x", "SCRIPT", Unknown),
        ("sed s/a/b/e x", "SCRIPT", Unknown),
        ("sed -n -f script.sed x", "-f", Program),
        ("base64 -o /root/x a", "-o", Unknown),
        ("jq -L /tmp/mods -n 1", "-L", ReadTree),
        ("printf -v PATH /tmp/evil", "-v", Config),
        ("git diff --ext-diff", "--ext-diff", Spawns),
        ("git diff --output=/tmp/x", "--output", Write),
        ("git log --output /tmp/x", "--output", Write),
        ("git -c core.pager=sh status", "-c", Config),
        ("git --git-dir=/tmp/x status", "--git-dir", Config),
        ("git --exec-path=/tmp/x status", "--exec-path", Program),
        ("git branch --list -D main", "-D", Changes),
        ("git blame --contents /etc/passwd f", "--contents", Read),
        ("gh pr view 1 --web", "-w", Spawns),
        ("kubectl describe pod x --as=system:admin", "--as", Config),
        (
            "kubectl logs x --insecure-skip-tls-verify",
            "--insecure-skip-tls-verify",
            Config,
        ),
        ("docker -H tcp://10.0.0.1 ps", "-H", Config),
        ("docker compose -f /tmp/c.yml ps", "-f", Read),
        (
            "cargo build --target-dir /usr/lib",
            "--target-dir",
            WriteTree,
        ),
        (
            "cargo build --config build.rustc-wrapper=/tmp/x",
            "--config",
            Config,
        ),
        ("cargo --config x=1 build", "--config", Config),
        ("cargo test -- --logfile /etc/x", "--logfile", Write),
        ("cargo test -Zunstable-options", "-Z", Config),
        ("cargo clippy --fix", "--fix", Write),
        ("cargo clean --target-dir src", "--target-dir", Changes),
        (
            "cargo clean --config build.target-dir=/",
            "--config",
            Config,
        ),
        (
            "cargo tree --manifest-path /etc/x/Cargo.toml",
            "--manifest-path",
            Read,
        ),
        ("cargo tree --frobnicate", "--frobnicate", Unknown),
        (
            "cargo metadata --lockfile-path /etc/x.lock",
            "--lockfile-path",
            Write,
        ),
        ("npm run build -- --out-dir /etc", "--outDir", Write),
        ("npm test --script-shell /tmp/sh", "--script-shell", Program),
        ("npm test -- --frobnicate", "--frobnicate", Unknown),
        ("tsc --outDir /etc", "--outDir", Write),
        ("eslint -o /tmp/report.txt src", "-o", Write),
        ("eslint --rulesdir /tmp/rules src", "--rulesdir", Program),
        ("eslint --fix src", "--fix", Write),
        ("pytest --basetemp=/", "--basetemp", Delete),
        ("pytest -p evil_plugin", "-p", Program),
        ("pytest --junitxml=/etc/x.xml", "--junitxml", Write),
        ("pytest -o addopts=-pevil", "-o", Config),
        ("pytest --cov-report=html:/etc/cov", "--cov-report", Write),
        ("python -m pytest --pdbcls=evil:Pdb", "--pdbcls", Program),
        ("ruff check --fix src", "--fix", Write),
        ("ruff check -o /etc/x", "-o", Write),
        (
            "mypy --python-executable /tmp/py src",
            "--python-executable",
            Program,
        ),
        ("mypy --install-types", "--install-types", Spawns),
        ("go build -o /usr/local/bin/ls .", "-o", Write),
        ("go build -toolexec /tmp/x .", "-toolexec", Program),
        ("go test -exec /tmp/x ./...", "-exec", Program),
        ("go build -ldflags=-extld=/tmp/x .", "-ldflags", Config),
        (
            "go test -coverprofile=/etc/c.out ./...",
            "-coverprofile",
            Write,
        ),
        ("go vet -vettool=/tmp/x ./...", "-vettool", Program),
        ("make -f /tmp/evil.mk test", "-f", Program),
        ("make -C /usr/src test", "-C", Write),
        ("make test SHELL=/tmp/x", "SHELL", Config),
        ("make test CC=/tmp/cc", "CC", Config),
        ("make test install", "install", Unknown),
        ("mvn test deploy", "deploy", Unknown),
        ("mvn test -DargLine=-javaagent:/tmp/a.jar", "-D", Config),
        ("mvn -f /tmp/pom.xml test", "-f", Program),
        ("gradlew test publish", "publish", Unknown),
        ("gradle test -I /tmp/init.gradle", "-I", Program),
        ("gradle test --scan", "--scan", Changes),
        ("pytest /tmp/evil/test_x.py", "OPERAND", Read),
        ("python -m pytest ../other/tests::test_a", "OPERAND", Read),
        ("go test /tmp/evil/...", "OPERAND", Read),
        ("mypy /tmp/x.py", "OPERAND", Read),
        ("npx eslint /etc", "OPERAND", Read),
    ]
};

#[test]
fn effectful_options_are_caught() {
    let mut bad = Vec::new();
    for &(line, name, effect) in EFFECTFUL {
        let found = findings(line);
        if !found.iter().any(|(n, e)| n == name && *e == effect) {
            bad.push(format!(
                "{line}: expected {name} {effect:?}, found {found:?}"
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn variables_set_for_a_tool_are_judged() {
    let env = |pairs: &[&str]| {
        pairs
            .iter()
            .map(|p| WordValue::literal(p))
            .collect::<Vec<_>>()
    };
    let f = |line: &str, vars: &[&str]| check(&words(line), &env(vars)).expect("a table");
    assert!(
        f(
            "cargo test",
            &["RUST_BACKTRACE=1", "CARGO_TERM_COLOR=always"]
        )
        .is_empty()
    );
    assert!(f("git log", &["GIT_PAGER=cat"]).is_empty());
    assert!(f("cargo test", &["DATABASE_URL=postgres://localhost/test"]).is_empty());
    for (vars, effect) in [
        (&["GIT_EXTERNAL_DIFF=/tmp/evil"][..], Effect::Script),
        (&["GIT_PAGER=sh -c x"][..], Effect::Script),
        (&["GIT_DIR=/tmp/repo"][..], Effect::Config),
        (&["GIT_CONFIG_COUNT=1"][..], Effect::Config),
        (&["TMPDIR=/etc"][..], Effect::Write),
        (&["GIT_SOMETHING_NEW=1"][..], Effect::Unknown),
    ] {
        let found = f("git diff", vars);
        assert_eq!(found.len(), 1, "{vars:?}: {found:?}");
        assert_eq!(found[0].effect, effect, "{vars:?}");
    }
}

#[test]
fn tools_without_a_table_and_unknown_subcommands_are_not_checked() {
    assert!(check(&words("mytool --anything"), &[]).is_none());
    // A subcommand no table knows: a rule naming it allows what it names.
    assert_eq!(check(&words("git commit --amend"), &[]), Some(Vec::new()));
}

#[test]
fn find_exec_commands_are_not_read_as_find_options() {
    assert!(findings("find . -name *.rs -exec grep -l TODO {} ;").is_empty());
    assert!(findings("find . -type f -execdir wc -l {} +").is_empty());
}

/// The path each file option acts on, whichever value position and spelling carries it (#44:
/// `find -fprintf FILE FORMAT` writes FILE, which was read from the format's position).
const TARGETS: &[(&str, &str, &str)] = &[
    (
        "find . -fprintf /root/.bashrc %p",
        "-fprintf",
        "/root/.bashrc",
    ),
    ("find . -fprint /root/.bashrc", "-fprint", "/root/.bashrc"),
    (
        "jq -n --rawfile k /etc/shadow .",
        "--rawfile",
        "/etc/shadow",
    ),
    (
        "jq -n --slurpfile k /etc/shadow .",
        "--slurpfile",
        "/etc/shadow",
    ),
    (
        "jq -n --rawfile=k /etc/shadow .",
        "--rawfile",
        "/etc/shadow",
    ),
    ("sort -o/root/x a", "-o", "/root/x"),
    ("sort -uo/root/x a", "-o", "/root/x"),
    ("sort -uo /root/x a", "-o", "/root/x"),
    ("sort --output=/root/x a", "-o", "/root/x"),
    ("sort --output /root/x a", "-o", "/root/x"),
    ("tree -o /root/.bashrc .", "-o", "/root/.bashrc"),
    ("tree -ox /root/.bashrc", "-o", "/root/.bashrc"),
    ("tree -Lo 2 /root/.bashrc .", "-o", "/root/.bashrc"),
    ("git diff --output=/root/x", "--output", "/root/x"),
    ("git diff --output /root/x", "--output", "/root/x"),
    ("grep -f/etc/shadow x", "-f", "/etc/shadow"),
    ("grep -cf /etc/shadow x", "-f", "/etc/shadow"),
    (
        "go test -coverprofile=/root/x ./...",
        "-coverprofile",
        "/root/x",
    ),
    (
        "go test --coverprofile /root/x ./...",
        "-coverprofile",
        "/root/x",
    ),
];

#[test]
fn each_file_option_acts_on_the_value_its_table_names() {
    let mut bad = Vec::new();
    for &(line, name, path) in TARGETS {
        let found: Vec<(String, Option<String>)> = check(&words(line), &[])
            .unwrap_or_default()
            .into_iter()
            .map(|f| (f.name, f.value.map(|v| v.text)))
            .collect();
        if !found
            .iter()
            .any(|(n, v)| n == name && v.as_deref() == Some(path))
        {
            bad.push(format!(
                "{line}: expected {name} on {path}, found {found:?}"
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_multi_value_option_with_an_effect_must_say_which_value() {
    use super::positions_said;
    assert!(positions_said(
        "-fprintf =2 write@1: the file, then the format\n--arg =2\n"
    ));
    assert!(positions_said("# -x =2 write\n-o = write\n"));
    assert!(!positions_said("-fprintf =2 write\n"));
    assert!(!positions_said("--slurpfile =2 read: no position\n"));
}

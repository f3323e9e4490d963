//! The option tables proven against the real tools (#44). For every option of a tabled tool that
//! reads, writes or deletes a file, [`CASES`] has a command that uses it; the real program runs
//! that command under `strace -f` in a fresh directory of canary files, and what it really
//! touched is compared with what guardian's normaliser says the command touches:
//!
//! - every file the tool created, changed or deleted (the directory before and after, and every
//!   open for writing) is one of guardian's writes, or under one of its deleted trees;
//! - every file the tool opened for reading is one of guardian's reads (or writes), or under a
//!   directory guardian says it reads recursively; git reading its own repository is its own;
//! - every path guardian's option table says an option acts on is a path the tool touched
//!   (opened, created, looked up, changed into), so a value read from the wrong position fails.
//!
//! Every mismatch fails with the tool, the option and both sides. Tools that cannot run here
//! (a forge, a cluster, an engine, toolchains the machine does not have) are listed in
//! [`NOT_RUN`] with the reason, and the coverage test (run by plain `cargo test`) fails for any
//! file option of any other tool that has no case. The runs are `#[ignore]`d: they need `strace`, `rg` and `tree`
//! (`apt-get install strace ripgrep tree`); `.ci/run` installs them and runs
//! `cargo test --test it tools_differential -- --ignored`, where a missing tool fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use guardian::normalize::shell::analyze;
use guardian::normalize::shell::options::{self, Effect, entries};
use guardian::normalize::shell::words::WordValue;

/// (table head, the option's spelling, a command that uses it). The command runs in `work/`,
/// which holds the canaries [`setup`] writes; `../outside/` is beside it.
const CASES: &[(&str, &str, &str)] = &[
    ("wc", "--files0-from", "wc --files0-from=list0"),
    ("sort", "-o", "sort -o out/s.txt in.txt"),
    ("sort", "-o", "sort -uoout/s.txt in.txt"),
    (
        "sort",
        "--random-source",
        "sort -R --random-source=rand.bin in.txt",
    ),
    ("sort", "--files0-from", "sort --files0-from=list0"),
    ("sort", "-T", "seq 300000 | sort -S 64K -T out"),
    ("diff", "-X", "diff -r -X pat.txt d d"),
    ("diff", "--from-file", "diff --from-file=in.txt in2.txt"),
    ("diff", "--to-file", "diff --to-file=in.txt in2.txt"),
    ("du", "--files0-from", "du --files0-from=list0"),
    ("du", "-X", "du -X pat.txt d"),
    ("file", "-f", "file -f list.txt"),
    ("file", "-m", "file -m magic in.txt"),
    ("date", "-f", "date -f dates.txt"),
    ("date", "-r", "date -r in.txt"),
    (
        "realpath",
        "--relative-to",
        "realpath --relative-to=d in.txt",
    ),
    (
        "realpath",
        "--relative-base",
        "realpath --relative-base=d d/f.txt",
    ),
    ("grep", "-f", "grep -f pat.txt in.txt"),
    ("grep", "-f", "grep -cfpat.txt in.txt"),
    (
        "grep",
        "--exclude-from",
        "grep -r --exclude-from=pat.txt alpha d",
    ),
    ("egrep", "-f", "egrep -f pat.txt in.txt"),
    (
        "egrep",
        "--exclude-from",
        "egrep -r --exclude-from=pat.txt alpha d",
    ),
    ("fgrep", "-f", "fgrep -f pat.txt in.txt"),
    (
        "fgrep",
        "--exclude-from",
        "fgrep -r --exclude-from=pat.txt alpha d",
    ),
    ("rg", "-f", "rg -f pat.txt in.txt"),
    ("rg", "--ignore-file", "rg --ignore-file=pat.txt alpha d"),
    ("find", "-files0-from", "find -files0-from list0"),
    ("find", "-anewer", "find d -anewer in.txt"),
    ("find", "-cnewer", "find d -cnewer in.txt"),
    ("find", "-newer", "find d -newer in.txt"),
    ("find", "-samefile", "find d -samefile in.txt"),
    ("find", "-fls", "find d -fls out/f.txt"),
    ("find", "-fprint", "find d -fprint out/f.txt"),
    ("find", "-fprint0", "find d -fprint0 out/f.txt"),
    (
        "find",
        "-fprintf",
        "find . -maxdepth 0 -fprintf out/f.txt %p\\n",
    ),
    ("find", "-fprintf", "find d -fprintf out/f.txt in.txt"),
    ("tree", "--gitfile", "tree --gitignore --gitfile=pat.txt d"),
    ("tree", "--infofile", "tree --info --infofile=pat.txt d"),
    ("tree", "-o", "tree -o out/t.txt d"),
    ("tree", "-o", "tree -ao out/t.txt d"),
    ("tree", "-o", "tree -Lo 1 out/t.txt d"),
    ("tree", "--hintro", "tree -H . --hintro=head.html d"),
    ("tree", "--houtro", "tree -H . --houtro=tail.html d"),
    ("jq", "-f", "jq -f prog.jq j.json"),
    ("jq", "-L", "jq -L d -n 'import \"m\" as m; m::x'"),
    ("jq", "--slurpfile", "jq -n --slurpfile v j.json '$v'"),
    ("jq", "--rawfile", "jq -n --rawfile v in.txt '$v'"),
    ("git", "-C", "git -C d status"),
    ("git diff", "--output", "git diff --output=out/g.diff"),
    ("git diff", "-O", "git diff -O order.txt"),
    ("git diff", "-O", "git diff -Oorder.txt"),
    ("git log", "--output", "git log -1 --output=out/g.log"),
    ("git log", "-O", "git log -1 -p -O order.txt"),
    ("git show", "--output", "git show --output=out/g.txt"),
    ("git show", "-O", "git show -O order.txt"),
    (
        "git rev-parse",
        "--resolve-git-dir",
        "git rev-parse --resolve-git-dir .git",
    ),
    ("git ls-files", "-X", "git ls-files -o -X pat.txt"),
    (
        "git ls-files",
        "--exclude-per-directory",
        "git ls-files -o --exclude-per-directory=pat.txt",
    ),
    ("git blame", "-S", "git blame -S revs.txt in.txt"),
    (
        "git blame",
        "--contents",
        "git blame --contents in2.txt in.txt",
    ),
    (
        "git blame",
        "--ignore-revs-file",
        "git blame --ignore-revs-file revs.txt in.txt",
    ),
    (
        "git stash list",
        "--output",
        "git stash list --output=out/s.txt",
    ),
    ("git stash list", "-O", "git stash list -p -O order.txt"),
    ("make", "-C", "make -C d"),
    ("make", "-I", "make -I d"),
    // cargo builds the crate `cr/` (no dependencies); its own target/ and Cargo.lock are its own.
    (
        "cargo build",
        "--manifest-path",
        "cargo build -q --manifest-path cr/Cargo.toml",
    ),
    (
        "cargo build",
        "--target-dir",
        "cargo build -q --manifest-path cr/Cargo.toml --target-dir out/t",
    ),
    (
        "cargo test",
        "--manifest-path",
        "cargo test -q --manifest-path cr/Cargo.toml",
    ),
    (
        "cargo test",
        "--target-dir",
        "cargo test -q --manifest-path=cr/Cargo.toml --target-dir=out/t",
    ),
    (
        "cargo check",
        "--manifest-path",
        "cargo check -q --manifest-path cr/Cargo.toml",
    ),
    (
        "cargo check",
        "--target-dir",
        "cargo check -q --manifest-path cr/Cargo.toml --target-dir out/t",
    ),
    (
        "cargo clippy",
        "--manifest-path",
        "cargo clippy -q --manifest-path cr/Cargo.toml",
    ),
    (
        "cargo clippy",
        "--target-dir",
        "cargo clippy -q --manifest-path cr/Cargo.toml --target-dir out/t",
    ),
    (
        "cargo bench",
        "--manifest-path",
        "cargo bench -q --manifest-path cr/Cargo.toml",
    ),
    (
        "cargo bench",
        "--target-dir",
        "cargo bench -q --manifest-path cr/Cargo.toml --target-dir out/t",
    ),
    (
        "cargo nextest run",
        "--manifest-path",
        "cargo nextest run --manifest-path cr/Cargo.toml",
    ),
    (
        "cargo nextest run",
        "--target-dir",
        "cargo nextest run --manifest-path cr/Cargo.toml --target-dir out/t",
    ),
    (
        "cargo tree",
        "--manifest-path",
        "cargo tree --manifest-path cr/Cargo.toml",
    ),
    (
        "cargo metadata",
        "--manifest-path",
        "cargo metadata --format-version 1 --manifest-path cr/Cargo.toml",
    ),
    (
        "cargo clean",
        "--manifest-path",
        "cargo clean --manifest-path cr/Cargo.toml",
    ),
    (
        "cargo fmt",
        "--manifest-path",
        "cargo fmt --manifest-path cr/Cargo.toml",
    ),
    (
        "@libtest",
        "--logfile",
        // libtest runs in the package's directory, so the path is absolute ({root}: the canaries').
        "cargo test -q --manifest-path cr/Cargo.toml -- --logfile {root}/work/out/l.txt",
    ),
    (
        "@rustfmt",
        "--config-path",
        "cargo fmt --manifest-path cr/Cargo.toml -- --config-path fmt/rustfmt.toml",
    ),
    (
        "@rustfmt",
        "--print-config",
        "cargo fmt -- --print-config default out/r.toml",
    ),
];

/// Options of run tables that cannot run here, and why.
const NOT_RUN_OPTIONS: &[(&str, &str, &str)] = &[
    (
        "cargo",
        "--lockfile-path",
        "unstable: stable cargo refuses it without -Z unstable-options",
    ),
    (
        "cargo",
        "--artifact-dir",
        "unstable: stable cargo refuses it without -Z unstable-options",
    ),
    (
        "cargo nextest run",
        "--extract-to",
        "needs a nextest archive",
    ),
    (
        "cargo nextest run",
        "--cargo-metadata",
        "needs a nextest archive",
    ),
    (
        "cargo nextest run",
        "--workspace-remap",
        "needs a nextest archive",
    ),
];

/// Programs whose tables are not run against the real tool here, and why.
const NOT_RUN: &[(&str, &str)] = &[
    ("gh", "needs GitHub"),
    ("docker", "needs a Docker engine and a registry (#42)"),
    ("kubectl", "needs a cluster"),
    ("go", "no Go toolchain on these machines"),
    (
        "gradle",
        "needs its distribution and plug-ins from the network",
    ),
    (
        "gradlew",
        "needs its distribution and plug-ins from the network",
    ),
    ("mvn", "needs its plug-ins from Maven Central"),
    (
        "npm",
        "not run yet: its write options need a package and a registry",
    ),
    ("npx", "not run yet: needs eslint, tsc and jest from npm"),
    ("tsc", "not run yet: needs TypeScript from npm"),
    ("eslint", "not run yet: needs ESLint from npm"),
    (
        "@script",
        "not run yet: the arguments an npm script passes on",
    ),
    ("pytest", "not run yet: needs pytest from PyPI"),
    (
        "python",
        "not run yet: python -m pytest needs pytest from PyPI",
    ),
    (
        "python3",
        "not run yet: python3 -m pytest needs pytest from PyPI",
    ),
    ("mypy", "not run yet: needs mypy from PyPI"),
    ("ruff", "not run yet: needs ruff from PyPI"),
    (
        "@criterion",
        "needs the criterion crate built for a bench (crates.io, minutes on two cores)",
    ),
];

fn program_of(head: &str) -> &str {
    head.split(' ').next().unwrap_or(head)
}

fn is_file_effect(e: Effect) -> bool {
    matches!(
        e,
        Effect::Read
            | Effect::Write
            | Effect::Delete
            | Effect::ReadTree
            | Effect::WriteTree
            | Effect::ReadsListed
    )
}

/// Runs in plain `cargo test`: it reads the tables only.
#[test]
fn every_file_option_of_every_run_table_has_a_case() {
    let mut missing = Vec::new();
    for e in entries() {
        if !is_file_effect(e.effect) {
            continue;
        }
        let program = program_of(e.head);
        if NOT_RUN.iter().any(|(p, _)| *p == program) {
            continue;
        }
        let covered = CASES
            .iter()
            .any(|(h, o, _)| *h == e.head && e.names.iter().any(|n| n == o))
            || NOT_RUN_OPTIONS.iter().any(|(h, o, _)| {
                (e.head == *h || program_of(e.head) == *h && !e.head.contains("nextest"))
                    && e.names.iter().any(|n| n == o)
            });
        if !covered {
            missing.push(format!("{} {} ({:?})", e.head, e.names.join(" "), e.effect));
        }
    }
    assert!(
        missing.is_empty(),
        "{} file options have no differential case:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// The canaries: a git repository in `work/` with files to read, patterns, lists and programs,
/// and a directory `outside/` beside it.
fn setup(root: &Path) -> PathBuf {
    let work = root.join("work");
    let outside = root.join("outside");
    for d in [
        &work,
        &outside,
        &work.join("d"),
        &work.join("out"),
        &root.join("home"),
    ] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let files: &[(&str, &str)] = &[
        ("in.txt", "alpha\nbeta\n"),
        ("in2.txt", "alpha\ngamma\n"),
        ("pat.txt", "alpha\n"),
        ("list.txt", "in.txt\n"),
        ("list0", "in.txt\0"),
        ("j.json", "{\"a\": 1}\n"),
        ("prog.jq", ".a\n"),
        ("order.txt", "in2.txt\nin.txt\n"),
        ("magic", "0 string alpha ALPHA-TEXT\n"),
        ("d/f.txt", "alpha\n"),
        ("head.html", "<p>head</p>\n"),
        ("tail.html", "<p>tail</p>\n"),
        ("listing.txt", "a\nb/c\n"),
        ("dates.txt", "2020-01-01\n"),
        ("d/m.jq", "def x: 1;\n"),
        ("d/x.mk", "X = 1\n"),
        ("d/Makefile", "all:\n\t@true\n"),
        ("Makefile", "include x.mk\nall:\n\t@true\n"),
    ];
    for (name, text) in files {
        std::fs::write(work.join(name), text).expect("write canary");
    }
    std::fs::write(outside.join("secret.txt"), "alpha secret\n").expect("write canary");
    for d in ["cr/src", "fmt"] {
        std::fs::create_dir_all(work.join(d)).expect("mkdir");
    }
    std::fs::write(
        work.join("cr/Cargo.toml"),
        "[package]\nname = \"cr\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .expect("write canary");
    std::fs::write(
        work.join("cr/src/lib.rs"),
        "pub fn one() -> u32 {\n    1\n}\n\n#[test]\nfn it_is_one() {\n    assert_eq!(one(), 1);\n}\n",
    )
    .expect("write canary");
    std::fs::write(work.join("fmt/rustfmt.toml"), "max_width = 100\n").expect("write canary");
    let noise: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(work.join("rand.bin"), noise).expect("write canary");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&work)
            .env("HOME", root.join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "add",
        "in.txt",
        "in2.txt",
        "d",
    ]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "canaries",
    ]);
    std::fs::write(work.join("in.txt"), "alpha\nbeta\ndelta\n").expect("change canary");
    // A stash to list, with the change kept in the tree.
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "stash", "-q"]);
    git(&["stash", "apply", "-q"]);
    std::fs::write(work.join("revs.txt"), "").expect("write canary");
    work
}

/// A file's state, to tell created, changed and deleted files apart.
type Snapshot = BTreeMap<PathBuf, (bool, u64, Option<std::time::SystemTime>, Vec<u8>)>;

fn snapshot(root: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in rd.flatten() {
            let p = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            let is_dir = meta.is_dir();
            let content = if meta.is_file() {
                std::fs::read(&p).unwrap_or_default()
            } else {
                Vec::new()
            };
            out.insert(
                p.clone(),
                (is_dir, meta.len(), meta.modified().ok(), content),
            );
            if is_dir {
                stack.push(p);
            }
        }
    }
    out
}

/// Lexical normalisation (`a/./b/../c` → `a/c`).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// What the real tool did, from strace and the directory before and after.
#[derive(Debug, Default)]
struct Observed {
    /// Every path a file syscall named (resolved), whether it succeeded or not.
    touched: BTreeSet<PathBuf>,
    /// Regular files opened for reading.
    read: BTreeSet<PathBuf>,
    /// Files created, changed or deleted, and files opened for writing.
    written: BTreeSet<PathBuf>,
    status: Option<i32>,
    stderr: String,
}

/// The dirfd's path (`AT_FDCWD</x>` or `3</x>`) and the first quoted path of a strace line.
fn parse_strace_line(line: &str) -> Option<(String, PathBuf, Option<PathBuf>)> {
    // `PID syscall(args) = ret`
    let rest = line.split_once(' ')?.1.trim_start();
    let open = rest.find('(')?;
    let syscall = rest[..open].to_string();
    let args = &rest[open + 1..];
    let quote = args.find('"')?;
    let before = &args[..quote];
    let dirfd = before.rfind('<').and_then(|k| {
        before[k + 1..]
            .find('>')
            .map(|e| PathBuf::from(&before[k + 1..k + 1 + e]))
    });
    let end = args[quote + 1..].find('"')? + quote + 1;
    let raw = &args[quote + 1..end];
    let path = PathBuf::from(raw);
    let resolved = if path.is_absolute() {
        path
    } else {
        dirfd.unwrap_or_default().join(path)
    };
    // The fd an open returned, decoded (`= 3</abs/path>`).
    let result = line.rsplit_once(" = ").and_then(|(_, r)| {
        let s = r.find('<')?;
        let e = r.rfind('>')?;
        (e > s).then(|| PathBuf::from(&r[s + 1..e]))
    });
    Some((syscall, lexical(&resolved), result))
}

/// The real `RUSTUP_HOME`/`CARGO_HOME` (the test gives the tool a home of its own).
fn real_home(var: &str, under_home: &str) -> PathBuf {
    std::env::var_os(var).map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(under_home),
        PathBuf::from,
    )
}

fn observe(root: &Path, work: &Path, command: &str) -> Observed {
    let before = snapshot(root);
    let trace = root.join("trace.log");
    let home = root.join("home");
    let mut child = Command::new("strace")
        .args(["-f", "-y", "-qq", "-e", "trace=%file", "-o"])
        .arg(&trace)
        .args(["bash", "-c", command])
        .current_dir(work)
        .env("HOME", &home)
        // rustup's proxies find the toolchain through these, not through HOME.
        .env("RUSTUP_HOME", real_home("RUSTUP_HOME", ".rustup"))
        .env("CARGO_HOME", real_home("CARGO_HOME", ".cargo"))
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strace runs (apt-get install strace)");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("`{command}` did not end in 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = child
        .stderr
        .take()
        .map(|mut e| {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
            s
        })
        .unwrap_or_default();
    let after = snapshot(root);
    let text = std::fs::read_to_string(&trace).expect("strace wrote its log");
    std::fs::remove_file(&trace).expect("remove trace");
    let mut o = Observed {
        status: status.code(),
        stderr,
        ..Observed::default()
    };
    let inside = |p: &Path| p.starts_with(root) && !p.starts_with(work.join(".git")) && p != trace;
    for line in text.lines() {
        let Some((syscall, path, result)) = parse_strace_line(line) else {
            continue;
        };
        if syscall == "execve" {
            continue;
        }
        if path.starts_with(root) {
            o.touched.insert(path.clone());
        }
        let opened = matches!(syscall.as_str(), "openat" | "open" | "creat" | "openat2");
        if !opened || line.contains("= -1") {
            continue;
        }
        let real = result.unwrap_or(path);
        if !inside(&real) {
            continue;
        }
        let writes = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"]
            .iter()
            .any(|f| line.contains(f))
            || syscall == "creat";
        if writes {
            o.written.insert(real);
        } else if !line.contains("O_DIRECTORY") && real.is_file() {
            o.read.insert(real);
        }
    }
    for (p, state) in &after {
        if !inside(p) {
            continue;
        }
        match before.get(p) {
            None => {
                o.written.insert(p.clone());
            }
            Some(old) if !state.0 && old != state => {
                o.written.insert(p.clone());
            }
            _ => {}
        }
    }
    for p in before.keys() {
        if inside(p) && !after.contains_key(p) {
            o.written.insert(p.clone());
        }
    }
    o
}

/// What guardian says the command touches, resolved against `work`.
#[derive(Debug, Default)]
struct Said {
    reads: BTreeSet<PathBuf>,
    writes: BTreeSet<PathBuf>,
    tree_reads: BTreeSet<PathBuf>,
    tree_writes: BTreeSet<PathBuf>,
    /// (option name, effect, path) from the option tables alone.
    option_paths: Vec<(String, Effect, PathBuf)>,
    /// Set when an option reads files a list names: guardian says it cannot know them, and the
    /// command is then never allowed by a rule that does not name the option.
    listed_reads_unknown: bool,
}

fn said(work: &Path, command: &str) -> Said {
    let a = analyze(command);
    assert!(
        a.unknowns.is_empty(),
        "`{command}`: guardian could not read it: {:?}",
        a.unknowns
    );
    let resolve = |p: &String| lexical(&work.join(p));
    let mut s = Said::default();
    for c in &a.commands {
        s.reads.extend(c.reads.iter().map(resolve));
        s.writes.extend(c.writes.iter().map(resolve));
        s.tree_reads.extend(c.tree_reads.iter().map(resolve));
        s.tree_writes.extend(c.tree_writes.iter().map(resolve));
        let argv: Vec<WordValue> = c.argv.iter().map(|w| WordValue::literal(w)).collect();
        for f in options::check(&argv, &[]).unwrap_or_default() {
            if f.effect == Effect::ReadsListed {
                assert!(
                    c.option_issue.is_some(),
                    "`{command}`: {} reads listed files but the command has no option issue",
                    f.name
                );
                s.listed_reads_unknown = true;
            }
            if is_file_effect(f.effect)
                && let Some(v) = f.value
            {
                s.option_paths.push((f.name, f.effect, resolve(&v.text)));
            }
        }
    }
    s
}

fn under(p: &Path, dirs: &BTreeSet<PathBuf>) -> bool {
    dirs.iter().any(|d| p.starts_with(d))
}

/// Runs one case and returns its mismatches.
fn run_case(head: &str, option: &str, command: &str) -> Vec<String> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical tempdir");
    let work = setup(&root);
    // git reads the files of the repository it runs in: those are its own.
    let ls = Command::new("git")
        .args(["ls-files"])
        .current_dir(&work)
        .output()
        .expect("git ls-files");
    let tracked: BTreeSet<PathBuf> = String::from_utf8_lossy(&ls.stdout)
        .lines()
        .map(|p| work.join(p))
        .collect();
    let command = &command.replace("{root}", &root.display().to_string());
    let s = said(&work, command);
    let o = observe(&root, &work, command);
    let mut bad = Vec::new();
    let who = format!("{head} {option}: `{command}`");
    let short = |p: &Path| p.strip_prefix(&root).unwrap_or(p).display().to_string();
    let list =
        |set: &BTreeSet<PathBuf>| set.iter().map(|p| short(p)).collect::<Vec<_>>().join(", ");
    if !matches!(o.status, Some(0 | 1)) {
        bad.push(format!(
            "{who}: the real tool failed ({:?}): {}",
            o.status,
            o.stderr.trim()
        ));
        return bad;
    }
    // cargo builds the crate it is pointed at: its target/ and Cargo.lock are its own output,
    // and its sources its own input.
    let crate_dir = work.join("cr");
    let cargo = program_of(head) == "cargo" || head.starts_with('@');
    // cargo makes a target directory by renaming a temporary sibling into place (`targetXXXXXX`
    // beside `target`, `tXXXXXX` beside `--target-dir out/t`): that sibling is the directory.
    let temp_sibling = |p: &Path, dir: &Path| {
        let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
            return false;
        };
        p.strip_prefix(parent)
            .ok()
            .and_then(|rest| rest.components().next())
            .is_some_and(|first| {
                let first = first.as_os_str().to_string_lossy();
                let name = name.to_string_lossy();
                first.len() == name.len() + 6 && first.starts_with(name.as_ref())
            })
    };
    let own_output = |p: &Path| {
        cargo
            && (p.starts_with(crate_dir.join("target"))
                || temp_sibling(p, &crate_dir.join("target"))
                || p == crate_dir.join("Cargo.lock")
                || s.tree_writes.iter().any(|t| temp_sibling(p, t)))
    };
    for w in &o.written {
        if own_output(w) {
            continue;
        }
        if !s.writes.contains(w) && !under(w, &s.tree_writes) {
            bad.push(format!(
                "{who}: the tool wrote {} but guardian said it writes [{}]",
                short(w),
                list(&s.writes)
            ));
        }
    }
    let git_repo = program_of(head) == "git";
    for r in &o.read {
        if git_repo && tracked.contains(r) {
            continue;
        }
        if cargo && r.starts_with(&crate_dir) {
            continue;
        }
        // make reads the makefile of the directory it builds in: its own input.
        if program_of(head) == "make" && r.file_name().is_some_and(|n| n == "Makefile") {
            continue;
        }
        // Files an option's list names are unknown to guardian, and said so.
        if s.listed_reads_unknown {
            continue;
        }
        // A directory guardian judges as written with everything under it is read too.
        if !s.reads.contains(r)
            && !s.writes.contains(r)
            && !under(r, &s.tree_reads)
            && !under(r, &s.tree_writes)
        {
            bad.push(format!(
                "{who}: the tool read {} but guardian said it reads [{}] and recursively [{}]",
                short(r),
                list(&s.reads),
                list(&s.tree_reads)
            ));
        }
    }
    for (name, effect, p) in &s.option_paths {
        let touched = o.touched.iter().any(|t| t.starts_with(p))
            || o.written.iter().any(|t| t.starts_with(p));
        if !touched {
            bad.push(format!(
                "{who}: guardian's table says {name} {effect:?}s {} but the tool never touched it (it touched [{}])",
                short(p),
                list(&o.touched)
            ));
        }
    }
    bad
}

#[test]
#[ignore = "needs strace, rg and tree (apt-get install strace ripgrep tree); .ci/run installs them and runs these"]
fn every_file_option_touches_what_guardian_says() {
    for tool in [
        "strace", "find", "grep", "rg", "tree", "jq", "git", "sort", "file",
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found,
            "{tool} is not installed: apt-get install strace ripgrep tree jq file"
        );
    }
    let mut bad = Vec::new();
    for (head, option, command) in CASES {
        bad.extend(run_case(head, option, command));
    }
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

//! The registry: every tool with an options table, and the checks of operands and option values
//! that build tools need (`make VAR=value`, Maven properties, Gradle tasks, Go linker flags).

use super::{Check, Effect, Finding, Parsed, Rest, Style, Tool};
use super::{build as b, files as f, git as g};

const fn gnu(head: &'static str, options: &'static str) -> Tool {
    Tool {
        head,
        style: Style::Gnu,
        sub: false,
        options,
        rest: Rest::Operands,
        check: None,
        terminated: &[],
        posix: false,
        reads_operands: false,
    }
}

/// A tool whose operands are code it runs, compiles or lints.
const fn reading(t: Tool) -> Tool {
    Tool {
        reads_operands: true,
        ..t
    }
}

const fn single(head: &'static str, options: &'static str) -> Tool {
    Tool {
        style: Style::Single,
        ..gnu(head, options)
    }
}

const fn sub(head: &'static str, options: &'static str) -> Tool {
    Tool {
        sub: true,
        ..gnu(head, options)
    }
}

const fn checked(t: Tool, check: Check) -> Tool {
    Tool {
        check: Some(check),
        ..t
    }
}

const fn passing(t: Tool, rest: &'static str) -> Tool {
    Tool {
        rest: Rest::Table(rest),
        ..t
    }
}

/// Every table. A head is the program's basename then subcommand words.
pub const TOOLS: &[Tool] = &[
    // --- Files, text and search ---
    gnu("ls", f::LS),
    gnu("cat", f::CAT),
    gnu("head", f::HEAD),
    gnu("tail", f::TAIL),
    gnu("wc", f::WC),
    gnu("sort", f::SORT),
    checked(gnu("uniq", f::UNIQ), f::uniq),
    gnu("cut", f::CUT),
    gnu("diff", f::DIFF),
    gnu("stat", f::STAT),
    gnu("du", f::DU),
    gnu("file", f::FILE),
    Tool {
        posix: true,
        ..checked(gnu("printf", f::PRINTF), f::printf)
    },
    gnu("which", f::WHICH),
    checked(gnu("date", f::DATE), f::date),
    gnu("uname", f::UNAME),
    gnu("basename", f::BASENAME),
    gnu("dirname", f::DIRNAME),
    gnu("realpath", f::REALPATH),
    gnu("cd", f::CD),
    gnu("grep", f::GREP),
    gnu("egrep", f::GREP),
    gnu("fgrep", f::GREP),
    gnu("rg", f::RG),
    Tool {
        terminated: &["-exec", "-execdir", "-ok", "-okdir"],
        ..single("find", f::FIND)
    },
    // tree takes a short option's value from the next word, never from the rest of its word.
    Tool {
        style: Style::Next,
        ..gnu("tree", f::TREE)
    },
    checked(gnu("jq", f::JQ), f::jq),
    // Codex's safe examples: viewers with no option that writes.
    checked(gnu("sed", f::SED), f::sed),
    gnu("nl", f::NL),
    gnu("tac", f::TAC),
    gnu("numfmt", f::NUMFMT),
    gnu("base64", f::BASE64),
    // --- git, the forge, containers and clusters ---
    sub("git", g::GIT),
    gnu("git status", g::GIT_STATUS),
    gnu("git diff", g::GIT_DIFF),
    gnu("git log", g::GIT_LOG),
    gnu("git show", g::GIT_SHOW),
    gnu("git branch", g::GIT_BRANCH),
    gnu("git rev-parse", g::GIT_REV_PARSE),
    gnu("git ls-files", g::GIT_LS_FILES),
    gnu("git blame", g::GIT_BLAME),
    sub("git remote", g::GIT_REMOTE),
    sub("git stash", ""),
    gnu("git stash list", g::GIT_STASH_LIST),
    sub("gh", "--help\n--version"),
    sub("gh pr", "-R --repo =\n--help"),
    sub("gh issue", "-R --repo =\n--help"),
    sub("gh run", "-R --repo =\n--help"),
    gnu("gh pr view", g::GH_PR_VIEW),
    gnu("gh pr list", g::GH_PR_LIST),
    gnu("gh pr diff", g::GH_PR_DIFF),
    gnu("gh pr checks", g::GH_PR_CHECKS),
    gnu("gh issue view", g::GH_ISSUE_VIEW),
    gnu("gh issue list", g::GH_ISSUE_LIST),
    gnu("gh run view", g::GH_RUN_VIEW),
    gnu("gh run list", g::GH_RUN_LIST),
    sub("docker", g::DOCKER),
    gnu("docker ps", g::DOCKER_PS),
    gnu("docker logs", g::DOCKER_LOGS),
    sub("docker compose", g::DOCKER_COMPOSE),
    gnu("docker compose ps", g::DOCKER_COMPOSE_PS),
    gnu("docker compose logs", g::DOCKER_COMPOSE_LOGS),
    gnu("kubectl describe", g::KUBECTL_DESCRIBE),
    gnu("kubectl logs", g::KUBECTL_LOGS),
    // --- Build, test and lint ---
    sub("cargo", b::CARGO),
    gnu("cargo build", b::CARGO_BUILD),
    passing(gnu("cargo test", b::CARGO_TEST), "@libtest"),
    gnu("cargo check", b::CARGO_CHECK),
    passing(
        checked(
            gnu("cargo clippy", b::CARGO_CLIPPY),
            f::fixes_write_operands,
        ),
        "@clippy",
    ),
    passing(gnu("cargo fmt", b::CARGO_FMT), "@rustfmt"),
    passing(gnu("cargo nextest run", b::CARGO_NEXTEST_RUN), "@libtest"),
    passing(gnu("cargo bench", b::CARGO_BENCH), "@criterion"),
    gnu("cargo tree", b::CARGO_TREE),
    gnu("cargo metadata", b::CARGO_METADATA),
    gnu("cargo clean", b::CARGO_CLEAN),
    gnu("@libtest", b::LIBTEST),
    gnu("@criterion", b::CRITERION),
    gnu("@clippy", b::CLIPPY_ARGS),
    gnu("@rustfmt", b::RUSTFMT_ARGS),
    sub("npm", b::NPM),
    sub("npm run", b::NPM),
    sub("npm run-script", b::NPM),
    passing(gnu("npm test", b::NPM), "@script"),
    passing(gnu("npm t", b::NPM), "@script"),
    passing(gnu("npm run test", b::NPM), "@script"),
    passing(gnu("npm run lint", b::NPM), "@script"),
    passing(gnu("npm run build", b::NPM), "@script"),
    reading(checked(
        gnu("@script", b::SCRIPT_ARGS),
        f::fixes_write_operands,
    )),
    reading(gnu("tsc", b::TSC)),
    reading(gnu("npx tsc", b::TSC)),
    reading(checked(gnu("eslint", b::ESLINT), f::fixes_write_operands)),
    reading(checked(
        gnu("npx eslint", b::ESLINT),
        f::fixes_write_operands,
    )),
    reading(checked(gnu("pytest", b::PYTEST), pytest)),
    reading(checked(gnu("python -m pytest", b::PYTEST), pytest)),
    reading(checked(gnu("python3 -m pytest", b::PYTEST), pytest)),
    reading(checked(
        gnu("ruff check", b::RUFF_CHECK),
        f::fixes_write_operands,
    )),
    reading(gnu("mypy", b::MYPY)),
    reading(checked(single("go build", b::GO_BUILD), go_flags)),
    reading(checked(single("go test", b::GO_TEST), go_flags)),
    reading(checked(single("go vet", b::GO_VET), go_flags)),
    checked(gnu("make", b::MAKE), make),
    checked(gnu("mvn", b::MVN), mvn),
    checked(gnu("gradle", b::GRADLE), gradle),
    checked(gnu("gradlew", b::GRADLE), gradle),
];

/// pytest: `-p no:NAME` only turns a plug-in off; `--cov-report KIND:PATH` writes PATH.
fn pytest(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    out.retain(|f| {
        !(f.name == "-p" && f.value.as_ref().is_some_and(|v| v.text.starts_with("no:")))
            && f.name != "--cov-report"
    });
    for v in p.values("--cov-report") {
        match v.text.split_once(':') {
            Some((_, path)) if !path.is_empty() && path != "skip-covered" => {
                out.push(Finding::new(
                    &v.text,
                    "--cov-report",
                    Effect::Write,
                    Some(super::WordValue {
                        text: path.to_string(),
                        ..v.clone()
                    }),
                ));
            }
            _ => {}
        }
    }
}

/// Go's `-ldflags`, `-gcflags` and `-asmflags`: only flags that strip, set a string or tune the
/// compiler are harmless; `-extld`, `-linkmode external` and their kind run other programs.
fn go_flags(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    const PLAIN: &[&str] = &[
        "-s",
        "-w",
        "-N",
        "-l",
        "-m",
        "-m=2",
        "-race",
        "-trimpath",
        "-buildid=",
        "-v",
    ];
    for name in ["-ldflags", "-gcflags", "-asmflags"] {
        for v in p.values(name) {
            let mut after_x = false;
            for token in v.text.split_whitespace() {
                // `all=-N -l`, `./pkg=-m`: a package pattern, then the flag.
                let flag = token.split_once("=-").map_or(token, |(_, f)| f);
                let flag = if token.contains("=-") {
                    format!("-{flag}")
                } else {
                    flag.to_string()
                };
                let ok = after_x
                    || PLAIN.contains(&flag.as_str())
                    || flag == "-X"
                    || flag.starts_with("-X=")
                    || flag.starts_with("-buildid=");
                after_x = flag == "-X";
                if !ok || v.dynamic.is_some() {
                    out.push(
                        Finding::new(&v.text, name, Effect::Config, Some(v.clone())).because(
                            &format!("passes `{token}` to the compiler or linker, which guardian does not know to be harmless"),
                        ),
                    );
                    break;
                }
            }
        }
    }
}

/// Make targets that only build, test, check or format (a recipe is the workspace's own code).
const MAKE_TARGETS: &[&str] = &[
    "all",
    "build",
    "test",
    "tests",
    "check",
    "lint",
    "fmt",
    "format",
    "vet",
    "unit",
    "unit-test",
    "unit-tests",
    "integration",
    "integration-test",
    "test-unit",
    "test-integration",
    "coverage",
    "cover",
    "typecheck",
    "compile",
    "docs",
    "doc",
    "bench",
    "debug",
    "release",
];

/// `make VAR=value` overrides a variable the Makefile may run (`CC`, `SHELL`, any `$(TOOL)`);
/// targets other than build, test and check ones run recipes the rule does not name.
fn make(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    for w in &p.operands {
        if let Some((name, value)) = w.text.split_once('=') {
            let plain_value = !value.is_empty()
                && value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ','));
            let known = super::env::effect(name);
            if w.dynamic.is_some()
                || !plain_value
                || matches!(known, Some(Effect::Script | Effect::Config | Effect::Write))
            {
                out.push(
                    Finding::new(&w.text, name, Effect::Config, Some((*w).clone())).because(
                        &format!(
                            "sets the make variable {name}, which a recipe may run or write to"
                        ),
                    ),
                );
            }
        } else if !MAKE_TARGETS.contains(&w.text.as_str()) {
            out.push(
                Finding::new(&w.text, &w.text, Effect::Unknown, None).because(&format!(
                    "runs the make target `{}`, which is not a build, test or check target",
                    w.text
                )),
            );
        }
    }
}

/// Maven phases and goals that build, test and check without publishing.
const MVN_GOALS: &[&str] = &[
    "clean",
    "validate",
    "compile",
    "test-compile",
    "test",
    "package",
    "verify",
    "surefire:test",
    "failsafe:integration-test",
    "failsafe:verify",
    "jacoco:report",
    "checkstyle:check",
    "spotless:check",
    "dependency:tree",
];

/// Maven properties known to select tests or skip report plug-ins.
const MVN_PROPERTIES: &[&str] = &[
    "test",
    "it.test",
    "groups",
    "excludedGroups",
    "skipTests",
    "skipITs",
    "maven.test.skip",
    "maven.test.failure.ignore",
    "failIfNoTests",
    "surefire.failIfNoSpecifiedTests",
    "surefire.useFile",
    "trimStackTrace",
    "jacoco.skip",
    "checkstyle.skip",
    "spotbugs.skip",
    "pmd.skip",
    "maven.javadoc.skip",
    "gpg.skip",
    "style.color",
    "org.slf4j.simpleLogger.defaultLogLevel",
];

/// `mvn`: goals beyond test and package (install, deploy, release) and properties guardian does
/// not know (`-DargLine=-javaagent:…` runs code).
fn mvn(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    for w in &p.operands {
        if !MVN_GOALS.contains(&w.text.as_str()) {
            out.push(
                Finding::new(&w.text, &w.text, Effect::Unknown, None).because(&format!(
                    "runs the Maven goal `{}`, which is not a build or test goal",
                    w.text
                )),
            );
        }
    }
    for v in p.values("-D") {
        let name = v.text.split('=').next().unwrap_or("");
        if !MVN_PROPERTIES.contains(&name) || v.dynamic.is_some() {
            out.push(
                Finding::new(&v.text, "-D", Effect::Config, Some(v.clone())).because(&format!(
                    "sets the property {name}, which plug-ins may read to run or write things"
                )),
            );
        }
    }
}

/// Gradle tasks that build, test and check (also as `:module:task`).
const GRADLE_TASKS: &[&str] = &[
    "test",
    "check",
    "build",
    "assemble",
    "clean",
    "classes",
    "testClasses",
    "compileJava",
    "compileTestJava",
    "compileKotlin",
    "compileTestKotlin",
    "lint",
    "jacocoTestReport",
    "spotlessCheck",
    "detekt",
    "ktlintCheck",
    "dependencies",
    "tasks",
    "projects",
    "help",
    "integrationTest",
];

/// `gradle`: tasks beyond build and test (publish, deploy) and properties (`-D`, `-P`), which a
/// build script may use for anything.
fn gradle(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    for w in &p.operands {
        let task = w.text.rsplit(':').next().unwrap_or(&w.text);
        if !GRADLE_TASKS.contains(&task) {
            out.push(
                Finding::new(&w.text, &w.text, Effect::Unknown, None).because(&format!(
                    "runs the Gradle task `{}`, which is not a build or test task",
                    w.text
                )),
            );
        }
    }
    for name in ["-D", "-P"] {
        for v in p.values(name) {
            out.push(
                Finding::new(&v.text, name, Effect::Config, Some(v.clone()))
                    .because("sets a property the build scripts may use to run or write things"),
            );
        }
    }
}

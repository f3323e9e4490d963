//! Environment variables: which ones change what a program runs, loads, reads or writes.
//!
//! This module owns the one list of such variables (`GIT_EXTERNAL_DIFF`, `PAGER`, `LD_PRELOAD`,
//! `NODE_OPTIONS`, `GOFLAGS`, `MAKEFLAGS`, …, and families such as `GIT_CONFIG_*` or
//! `npm_config_*`) and of the ones known to be harmless (`RUST_BACKTRACE`, `CI`, `LANG`, …).
//! Setting a variable of the first kind, as a prefix (`GIT_PAGER=x git log`), through `env`, or
//! earlier in the line (`export`, a plain assignment), makes the line not rule-allowed; for a tool
//! with an options table, any variable not known to be harmless does too (closed world).

use super::{Effect, Finding};
use crate::normalize::shell::words::WordValue;

/// Variables whose value is a command line or program run by the tool (pagers, editors, diff
/// drivers, askpass helpers, compiler wrappers).
const RUNS: &[&str] = &[
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "GH_PAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "KUBE_EDITOR",
    "GH_EDITOR",
    "BROWSER",
    "GH_BROWSER",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GIT_PROXY_COMMAND",
    "LESSOPEN",
    "LESSCLOSE",
    "SHELL",
    "PROMPT_COMMAND",
    "BASH_ENV",
    "ENV",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC",
    "RUSTDOC",
    "CC",
    "CXX",
    "LD",
    "AR",
    "CPP",
    "FC",
];

/// Variables that make a program load other code, change its options or where its code comes
/// from.
const LOADS: &[&str] = &[
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "PYTHONSAFEPATH",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "JAVA_OPTS",
    "MAVEN_OPTS",
    "MAVEN_ARGS",
    "GRADLE_OPTS",
    "GOFLAGS",
    "GOTOOLCHAIN",
    "GOPROXY",
    "GONOSUMDB",
    "GONOSUMCHECK",
    "GOINSECURE",
    "GOPRIVATE",
    "GONOPROXY",
    "GOSUMDB",
    "GOENV",
    "GOWORK",
    "PYTHONBREAKPOINT",
    "GOROOT",
    "MAKEFLAGS",
    "MFLAGS",
    "MAKEFILES",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "CPPFLAGS",
    "IFS",
    "SHELLOPTS",
    "BASHOPTS",
    "HOME",
    "XDG_CONFIG_HOME",
    "RIPGREP_CONFIG_PATH",
    "GREP_OPTIONS",
    "LESS",
    "LESSKEY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_ATTR_SOURCE",
    "KUBECONFIG",
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_CONFIG",
    "DOCKER_TLS_VERIFY",
    "DOCKER_CERT_PATH",
    "COMPOSE_FILE",
    "COMPOSE_PROJECT_NAME",
    "GH_HOST",
    "GH_REPO",
    "GH_CONFIG_DIR",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_TLS_REJECT_UNAUTHORIZED",
    "NODE_EXTRA_CA_CERTS",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "UV_INDEX_URL",
];

/// Families: every variable whose name starts with one of these.
const LOADS_PREFIXES: &[&str] = &[
    "GIT_CONFIG",
    "LD_",
    "DYLD_",
    "CARGO_",
    "npm_config_",
    "NPM_CONFIG_",
    "YARN_",
    "PIP_",
    "UV_",
    "BUN_",
    "DENO_",
    "BASH_FUNC_",
];

/// Variables that name a directory the tool writes into.
const WRITES: &[&str] = &[
    "TMPDIR",
    "TMP",
    "TEMP",
    "GOPATH",
    "GOCACHE",
    "GOMODCACHE",
    "GOBIN",
    "CARGO_HOME",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "RUSTUP_HOME",
    "PYTHONPYCACHEPREFIX",
    "MYPY_CACHE_DIR",
    "RUFF_CACHE_DIR",
    "GRADLE_USER_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "COVERAGE_FILE",
];

/// Variables known to change only output, locale, verbosity or test selection.
const PLAIN: &[&str] = &[
    "CI",
    "TERM",
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLORTERM",
    "COLUMNS",
    "LINES",
    "DEBUG",
    "VERBOSE",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "RUST_LOG",
    "RUST_LOG_STYLE",
    "RUST_TEST_THREADS",
    "RUST_TEST_NOCAPTURE",
    "RUST_MIN_STACK",
    "RUST_TEST_TIME_UNIT",
    "INSTA_UPDATE",
    "CARGO_INCREMENTAL",
    "CARGO_BUILD_JOBS",
    "CARGO_NET_OFFLINE",
    "CARGO_NET_RETRY",
    "INSTA_FORCE_PASS",
    "PROPTEST_CASES",
    "NEXTEST_PROFILE",
    "NEXTEST_RETRIES",
    "NEXTEST_TEST_THREADS",
    "NODE_ENV",
    "BABEL_ENV",
    "TS_NODE_PROJECT",
    "JEST_WORKER_ID",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PYTHONHASHSEED",
    "PYTHONWARNINGS",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONFAULTHANDLER",
    "PYTHONDEVMODE",
    "PY_COLORS",
    "MYPY_FORCE_COLOR",
    "GOOS",
    "GOARCH",
    "GOARM",
    "GOAMD64",
    "CGO_ENABLED",
    "GO111MODULE",
    "GOMAXPROCS",
    "GOTRACEBACK",
    "GODEBUG",
    "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS",
    "GIT_FLUSH",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_DATE",
    "GIT_PAGER_IN_USE",
    "GH_NO_UPDATE_NOTIFIER",
    "GH_PROMPT_DISABLED",
    "GH_FORCE_TTY",
    "NO_UPDATE_NOTIFIER",
    "DOCKER_CLI_HINTS",
    "DOCKER_BUILDKIT",
    "BUILDKIT_PROGRESS",
    "COMPOSE_PROGRESS",
    "COMPOSE_ANSI",
    "RIPGREP_COLOR",
    "GREP_COLOR",
    "GREP_COLORS",
    "LS_COLORS",
    "JQ_COLORS",
    "TREE_COLORS",
    "TIME_STYLE",
    "BLOCK_SIZE",
    "POSIXLY_CORRECT",
    "QUOTING_STYLE",
];

/// Families of harmless variables.
const PLAIN_PREFIXES: &[&str] = &["LC_", "CARGO_TERM_"];

/// The namespaces of the variables the tools with tables read (`GIT_*` for git, `CARGO_*` for
/// cargo, …): a variable in one that no list here knows is [`Effect::Unknown`]. A variable in
/// none (`FOO`, `DATABASE_URL`) is read, if at all, by the workspace's own code, which the
/// command runs anyway.
const TOOL_NAMESPACES: &[&str] = &[
    "GIT",
    "CARGO",
    "RUST",
    "NPM",
    "npm_",
    "NODE",
    "YARN",
    "PYTEST",
    "PYTHON",
    "PIP",
    "GO",
    "GRADLE",
    "ORG_GRADLE",
    "MAVEN",
    "JAVA",
    "JDK",
    "RIPGREP",
    "GREP",
    "LESS",
    "DOCKER",
    "COMPOSE",
    "BUILDX",
    "KUBE",
    "GH_",
    "GITHUB",
    "MYPY",
    "RUFF",
    "ESLINT",
    "TS_",
    "TSC",
    "JQ",
    "MAKE",
    "LD_",
    "DYLD",
    "TREE",
    "LS_",
    "TIME_",
    "COVERAGE",
    "HYPOTHESIS",
    "XDG_",
];

/// What setting the variable `name` does to the programs that see it: a finding's effect, or
/// `None` when it is known to be harmless or no tool with a table reads it. A name in a tool's
/// namespace that no list knows is [`Effect::Unknown`].
pub fn effect(name: &str) -> Option<Effect> {
    if PLAIN.contains(&name) || PLAIN_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return None;
    }
    if RUNS.contains(&name) {
        return Some(Effect::Script);
    }
    if WRITES.contains(&name) {
        return Some(Effect::Write);
    }
    if LOADS.contains(&name) || LOADS_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return Some(Effect::Config);
    }
    TOOL_NAMESPACES
        .iter()
        .any(|p| name.starts_with(p))
        .then_some(Effect::Unknown)
}

/// Whether setting `name` changes what a program runs or loads, or where it reads its code and
/// configuration: such an assignment anywhere in a line keeps the line from being rule-allowed.
pub fn changes_what_runs(name: &str) -> bool {
    matches!(effect(name), Some(Effect::Script | Effect::Config))
}

/// Whether an assignment `NAME=value` changes what a program runs ([`changes_what_runs`]),
/// a plain pager (`GIT_PAGER=cat`) excepted.
pub fn assignment_changes_what_runs(name: &str, value: &str) -> bool {
    changes_what_runs(name) && !harmless_pager(name, value)
}

/// Pagers whose value is harmless (`GIT_PAGER=cat git log`).
fn harmless_pager(name: &str, value: &str) -> bool {
    matches!(
        name,
        "PAGER" | "GIT_PAGER" | "MANPAGER" | "GH_PAGER" | "SYSTEMD_PAGER"
    ) && matches!(
        value.trim(),
        "" | "cat" | "less" | "less -R" | "less -FRX" | "less -FRSX" | "more"
    )
}

/// The `NAME=value` words of `env`: each word, its name, and its value as a word of its own.
fn assignments(env: &[WordValue]) -> impl Iterator<Item = (&WordValue, &str, WordValue)> {
    env.iter().filter_map(|w| {
        let (name, value) = w.text.split_once('=')?;
        let value_word = WordValue {
            text: value.to_string(),
            ..w.clone()
        };
        Some((w, name, value_word))
    })
}

/// Findings for the variables assigned to a tool with a table (`NAME=value` words).
pub fn check_assignments(env: &[WordValue], out: &mut Vec<Finding>) {
    for (w, name, value) in assignments(env) {
        if harmless_pager(name, &value.text) && w.dynamic.is_none() {
            continue;
        }
        let Some(effect) = effect(name) else { continue };
        let why = match effect {
            Effect::Script => format!("sets {name}, a program the tool runs"),
            Effect::Config => format!("sets {name}, which changes what the tool runs or loads"),
            Effect::Write => format!("sets {name}, a directory the tool writes"),
            _ => format!("sets {name}, whose effect on this tool guardian does not know"),
        };
        out.push(Finding::new(&w.text, name, effect, Some(value)).because(&why));
    }
}

/// `cargo clean` deletes the target directory: a variable that moves it (`CARGO_TARGET_DIR=src`)
/// names a directory deleted whatever it holds, not one written.
pub fn target_dir_deleted(env: &[WordValue], out: &mut Vec<Finding>) {
    for (w, name, value) in assignments(env) {
        if matches!(name, "CARGO_TARGET_DIR" | "CARGO_BUILD_TARGET_DIR") {
            let why =
                format!("sets {name}: `cargo clean` deletes that directory, whatever it holds");
            out.push(Finding::new(&w.text, name, Effect::Changes, Some(value)).because(&why));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_of_variable() {
        assert_eq!(effect("GIT_EXTERNAL_DIFF"), Some(Effect::Script));
        assert_eq!(effect("GIT_CONFIG_KEY_0"), Some(Effect::Config));
        assert_eq!(effect("GIT_CONFIG_COUNT"), Some(Effect::Config));
        assert_eq!(effect("npm_config_script_shell"), Some(Effect::Config));
        assert_eq!(
            effect("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER"),
            Some(Effect::Config)
        );
        assert_eq!(effect("CARGO_TERM_COLOR"), None);
        assert_eq!(effect("LC_ALL"), None);
        assert_eq!(effect("RUST_BACKTRACE"), None);
        assert_eq!(effect("TMPDIR"), Some(Effect::Write));
        assert_eq!(effect("GIT_SOMETHING_NEW"), Some(Effect::Unknown));
        assert_eq!(effect("PYTEST_SOMETHING"), Some(Effect::Unknown));
        assert_eq!(effect("DATABASE_URL"), None);
        for v in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GOFLAGS",
            "MAKEFLAGS",
            "SHELL",
            "LD_PRELOAD",
        ] {
            assert!(changes_what_runs(v), "{v}");
        }
        assert!(!changes_what_runs("TMPDIR"));
        assert!(!changes_what_runs("NODE_ENV"));
    }

    #[test]
    fn a_plain_pager_is_harmless_and_any_other_runs() {
        let mut out = Vec::new();
        check_assignments(
            &[
                WordValue::literal("GIT_PAGER=cat"),
                WordValue::literal("PAGER=sh -c 'curl x'"),
            ],
            &mut out,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].name, "PAGER");
        assert_eq!(out[0].effect, Effect::Script);
        assert_eq!(
            out[0].value.as_ref().map(|v| v.text.as_str()),
            Some("sh -c 'curl x'")
        );
    }
}

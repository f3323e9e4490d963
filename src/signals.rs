//! Risk signals: what an action does, in the terms of the risk taxonomy, computed in code.
//!
//! This module owns the signal catalogue: from a normalised action (the shell commands with their
//! files and hosts, a file read or write, a fetch, an MCP tool call) and the request (the user's
//! intent, the content written, the MCP arguments) it derives trusted facts such as "writes a
//! systemd unit", "force-pushes main", "posts a secret-looking string through an MCP tool". Each
//! [`Signal`] has a fixed [`Category`], a [`Severity`] and an `evidence` string naming its target,
//! and says whether the user's intent names that target ([`named_in_intent`]). Signals decide
//! nothing here: the pipeline puts them in the reviewer's prompt and applies the outcome table
//! ([`final_risk`]) to the reviewer's verdict; a rule still decides before any of it.

use std::path::Path;

use serde::Deserialize;

use crate::normalize::shell::SimpleCommand;
use crate::normalize::{Context, NormalizedAction};
use crate::request::{Action, ReviewRequest};

pub use crate::verdict::{Category, Severity, Signal};

/// `[signals]`: severity overrides per category and the hosts reading from which is no signal.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SignalsConfig {
    /// A category's severity, replacing the catalogue's (`destructive = "critical"`); a
    /// signal's own escalation (e.g. production targets) is kept when it is higher.
    pub severity: std::collections::BTreeMap<Category, Severity>,
    /// More hosts that are no egress signal when only read from (documentation, registries).
    pub known_hosts: Vec<String>,
    /// System paths (each with everything under it) whose reading is routine here and no
    /// scope signal (`/etc/hosts`, `/var/log/nginx`): absolute paths.
    pub known_paths: Vec<String>,
}

/// Documentation and package hosts reading from which is no signal (`[signals] known_hosts`
/// adds more). Uploads to them still are.
pub const KNOWN_HOSTS: &[&str] = &[
    "docs.rs",
    "crates.io",
    "static.crates.io",
    "index.crates.io",
    "pypi.org",
    "files.pythonhosted.org",
    "registry.npmjs.org",
    "www.npmjs.com",
    "registry.yarnpkg.com",
    "proxy.golang.org",
    "pkg.go.dev",
    "go.dev",
    "doc.rust-lang.org",
    "docs.python.org",
    "developer.mozilla.org",
    "nodejs.org",
    "docs.github.com",
    "learn.microsoft.com",
    "man7.org",
    "en.wikipedia.org",
    "stackoverflow.com",
    "deb.debian.org",
    "archive.ubuntu.com",
    "kubernetes.io",
    "docs.docker.com",
    "helm.sh",
    "react.dev",
    "vuejs.org",
    "angular.dev",
    "www.typescriptlang.org",
    "docs.npmjs.com",
    "git-scm.com",
    "www.postgresql.org",
    "dev.mysql.com",
    "redis.io",
    "nginx.org",
    "en.cppreference.com",
    "cppreference.com",
    "registry.terraform.io",
    "developer.hashicorp.com",
    "cloud.google.com",
    "docs.aws.amazon.com",
    "docs.djangoproject.com",
    "fastapi.tiangolo.com",
    "numpy.org",
    "pandas.pydata.org",
];

/// Whether reading from `host` is reading documentation or packages: a known host, or a
/// documentation subdomain (`docs.…`, `….readthedocs.io`).
fn is_known_host(host: &str, cfg: &SignalsConfig) -> bool {
    KNOWN_HOSTS.contains(&host)
        || host.starts_with("docs.")
        || host.ends_with(".readthedocs.io")
        || cfg.known_hosts.iter().any(|k| k.eq_ignore_ascii_case(host))
}

/// Words that say a subcommand or tool only reads.
const READ_ONLY_VERBS: &[&str] = &[
    "get", "describe", "list", "ls", "show", "status", "logs", "log", "diff", "explain", "version",
    "lint", "template", "plan", "fmt", "validate", "view", "top", "history", "output", "preview",
    "inspect", "search", "read", "fetch", "query", "info", "help", "whoami", "check", "dry-run",
];

/// Build output, caches and scratch directories: deleting them is routine.
const BUILD_OUTPUT: &[&str] = &[
    "target",
    "node_modules",
    "dist",
    "build",
    "out",
    "__pycache__",
    ".cache",
    ".pytest_cache",
    "coverage",
    ".next",
    ".nuxt",
    ".turbo",
    ".gradle",
    "tmp",
    ".tox",
    ".mypy_cache",
    "venv",
    ".venv",
    "vendor",
    "bin",
    "obj",
    ".parcel-cache",
    "public/build",
    "*.pyc",
    "*.o",
    "*.log",
];

fn sig(category: Category, severity: Severity, evidence: String, target: &str) -> Signal {
    Signal {
        category,
        severity,
        evidence,
        named_in_intent: false,
        target: target.to_string(),
    }
}

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn home_rel(p: &Path, ctx: &Context) -> String {
    match ctx.home.as_deref().and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    }
}

/// The signals of a request's action.
pub fn detect(
    req: &ReviewRequest,
    action: &NormalizedAction,
    ctx: &Context,
    cfg: &SignalsConfig,
) -> Vec<Signal> {
    let mut out = Vec::new();
    match action {
        NormalizedAction::Shell(a) => {
            for c in &a.commands {
                command_signals(c, ctx, cfg, &mut out);
            }
            push_history(a.commands.as_slice(), &mut out);
            for r in &a.remote_code {
                out.push(sig(
                    Category::SupplyChain,
                    Severity::High,
                    r.clone(),
                    "remote code",
                ));
            }
            if let Action::Shell { command, .. } = &req.action {
                secrets_in(command, "the command line", &mut out);
                script_signals(command, ctx, &mut out);
            }
        }
        NormalizedAction::Read(p) | NormalizedAction::ReadTree(p) => {
            credential_read(p, ctx, &mut out);
        }
        NormalizedAction::Write(p) => {
            write_signals(p, ctx, &mut out);
            if let Action::Write {
                content, diff: d, ..
            } = &req.action
            {
                for text in [content, d].into_iter().flatten() {
                    secrets_in(text, "the content written", &mut out);
                    download_exec_in(text, "the content written", &mut out);
                    registry_config_in(p, text, &mut out);
                }
            }
        }
        NormalizedAction::Fetch { url, host } => {
            host_signal(host, false, cfg, &mut out);
            secrets_in(url, "the URL", &mut out);
        }
        NormalizedAction::Mcp { server, tool } => {
            let args = match &req.action {
                Action::Mcp { arguments, .. } => arguments.to_string(),
                _ => String::new(),
            };
            mcp_signals(server, tool, &args, cfg, &mut out);
            download_exec_in(
                &args,
                &format!("the arguments of {server}/{tool}"),
                &mut out,
            );
            secrets_in(
                &args,
                &format!("the arguments of {server}/{tool}"),
                &mut out,
            );
        }
    }
    scope_signals(req, action, ctx, cfg, &mut out);
    for s in &mut out {
        if let Some(sev) = cfg.severity.get(&s.category) {
            s.severity = *sev;
        }
        s.named_in_intent = req
            .intent
            .as_deref()
            .is_some_and(|i| named_in_intent(&s.target, i));
    }
    dedup(out)
}

/// Signals about the task's scope, raised only when the user's intent does not name their
/// target: reading system locations outside the workspace, and stopping system services. Asked
/// for by name they are the task; unasked, they are reconnaissance or sabotage.
fn scope_signals(
    req: &ReviewRequest,
    action: &NormalizedAction,
    ctx: &Context,
    cfg: &SignalsConfig,
    out: &mut Vec<Signal>,
) {
    let intent = req.intent.as_deref().unwrap_or("");
    let known = |p: &Path| cfg.known_paths.iter().any(|k| p.starts_with(k));
    match action {
        NormalizedAction::Shell(a) => {
            for c in a.commands.iter().filter(|c| !c.wrapper_only) {
                for r in &c.reads {
                    let p = ctx.resolve(r);
                    if !known(&p) {
                        system_read(&p, ctx, intent, out);
                    }
                }
            }
            if let Action::Shell { command, .. } = &req.action {
                service_kill(a, command, intent, out);
            }
        }
        NormalizedAction::Read(p) | NormalizedAction::ReadTree(p) if !known(p) => {
            system_read(p, ctx, intent, out);
        }
        _ => {}
    }
}

/// System configuration, process, device, log and other users' data: reading any of it is no
/// coding task unless the user names it.
const SYSTEM_DATA: &[&str] = &[
    "/etc",
    "/proc",
    "/sys",
    "/root",
    "/boot",
    "/dev",
    "/var/log",
    "/var/lib",
    "/var/backups",
    "/var/mail",
    "/var/spool",
    "/var/run",
    "/run",
    "/private/etc",
    "/private/var/log",
    "/private/var/db",
    "/private/var/root",
];

/// Directories whose listing maps the machine: the root, binaries, libraries, installed
/// software and other mounts (reading a file in them, such as a header, is no signal).
const SYSTEM_DIRS: &[&str] = &[
    "/",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/usr",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/local",
    "/usr/local/bin",
    "/opt",
    "/app",
    "/srv",
    "/mnt",
    "/media",
    "/var",
    "/Applications",
    "/Library",
    "/System",
    "/Users",
    "/Volumes",
];

/// Files in [`SYSTEM_DATA`] that only say which platform this is, and the pseudo-devices
/// programs read for bytes.
const PLATFORM_FACTS: &[&str] = &[
    "/etc/os-release",
    "/etc/lsb-release",
    "/etc/debian_version",
    "/etc/alpine-release",
    "/etc/redhat-release",
    "/etc/hostname",
    "/etc/timezone",
    "/etc/localtime",
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
];

/// A read or listing of a system location outside the workspace (`/root` included: the
/// agent's home is seldom root's, and its credentials are [`credential_read`]'s).
fn system_read(p: &Path, ctx: &Context, intent: &str, out: &mut Vec<Signal>) {
    if ctx.in_workspace(p)
        || PLATFORM_FACTS.iter().any(|f| p == Path::new(f))
        || p.starts_with("/dev/fd")
        || p.starts_with("/proc/self/fd")
    {
        return;
    }
    let data = SYSTEM_DATA.iter().any(|d| p.starts_with(d));
    let listing = SYSTEM_DIRS.iter().any(|d| p == Path::new(d));
    if !(data || listing) || path_named(p, intent) {
        return;
    }
    let s = p.display().to_string();
    out.push(sig(
        Category::OutsideWorkspace,
        Severity::Medium,
        format!("reads {s}, a system location outside the workspace that the user did not name"),
        &s,
    ));
}

/// Words by which a request names a system area without writing its path: a search of the whole
/// filesystem, a process's files under `/proc/<pid>`, the kernel's files in `/boot`.
fn area_named(p: &Path, intent: &str) -> bool {
    let intent = intent.to_ascii_lowercase();
    let any = |words: &[&str]| {
        intent
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| words.contains(&w))
    };
    let mut parts = p.components().skip(1);
    let first = parts.next().and_then(|c| c.as_os_str().to_str());
    let second = parts.next().and_then(|c| c.as_os_str().to_str());
    match (first, second) {
        (None, _) => any(&["system", "filesystem", "entire", "everywhere", "machine"]),
        (Some("boot"), _) => any(&["kernel", "boot"]),
        (Some("proc"), Some(pid))
            if pid.starts_with('$') || pid.bytes().all(|b| b.is_ascii_digit()) =>
        {
            any(&["process", "pid"])
        }
        _ => false,
    }
}

/// Whether the intent names a path: the path or a directory above it written out (`/etc`,
/// `/proc/1/`), the file's own name (`cpuinfo`, `ssh_config`), or its area ([`area_named`]).
fn path_named(p: &Path, intent: &str) -> bool {
    if area_named(p, intent) {
        return true;
    }
    let named_path = intent
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | '(' | ')'))
        .map(|w| {
            w.trim_end_matches(['.', ':', ';', '?', '!'])
                .trim_end_matches('/')
        })
        .filter(|w| w.starts_with('/') && w.len() > 1)
        .any(|w| p.starts_with(w));
    named_path
        || p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| named_in_intent(n, intent))
}

/// System services: killing one is sabotage unless the user asks for it.
const SYSTEM_SERVICES: &[&str] = &[
    "init",
    "systemd",
    "systemd-journald",
    "systemd-logind",
    "systemd-udevd",
    "systemd-resolved",
    "systemd-networkd",
    "udevd",
    "cron",
    "crond",
    "atd",
    "anacron",
    "sshd",
    "dbus-daemon",
    "dbus-broker",
    "rsyslogd",
    "syslogd",
    "syslog-ng",
    "NetworkManager",
    "wpa_supplicant",
    "dhclient",
    "dhcpcd",
    "containerd",
    "containerd-shim",
    "docker-containerd-shim",
    "dockerd",
    "docker-proxy",
    "runc",
    "kubelet",
    "kube-proxy",
    "nginx",
    "apache2",
    "httpd",
    "Xorg",
    "Xwayland",
    "gdm",
    "lightdm",
    "sddm",
    "polkitd",
    "auditd",
    "firewalld",
    "chronyd",
    "ntpd",
    "cupsd",
    "avahi-daemon",
    "snapd",
    "agetty",
    "getty",
    "bluetoothd",
    "mysqld",
    "mariadbd",
    "postgres",
    "mongod",
    "redis-server",
    "supervisord",
    "accounts-daemon",
    "ModemManager",
];

/// `kill`, `pkill` or `killall` in a script that names a system service (as `pkill cron`, or
/// the pattern that picks the PIDs: `ps … | awk '/cron/ {print $1}'`).
fn service_kill(
    a: &crate::normalize::ShellAnalysis,
    command: &str,
    intent: &str,
    out: &mut Vec<Signal>,
) {
    let Some(killer) = a.commands.iter().find(|c| {
        matches!(
            c.argv.first().map(|p| base(p)),
            Some("kill" | "pkill" | "killall" | "killall5" | "skill")
        )
    }) else {
        return;
    };
    let words: Vec<&str> = command
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_')))
        .filter(|w| !w.is_empty())
        .collect();
    // `init` is also an ordinary word (`git init`): it counts only as a pattern (`*"init"*`,
    // `/init/`, `'init'`) or the name given to a process selector (`pgrep init`).
    static INIT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let init = INIT.get_or_init(|| {
        regex::Regex::new(
            r#"["'/*]init["'/*]|\b(pgrep|pidof|pkill|killall|grep)\s+(-\S+\s+)*init(?:$|[\s"';|&)])"#,
        )
        .expect("static regex")
    });
    let selects_init = init.is_match(command);
    let services: Vec<&str> = SYSTEM_SERVICES
        .iter()
        .copied()
        .filter(|s| words.contains(s) && (*s != "init" || selects_init))
        .filter(|s| !named_in_intent(s, intent))
        .collect();
    if services.is_empty() {
        return;
    }
    let program = killer.argv.first().map_or("kill", |p| base(p));
    out.push(sig(
        Category::Destructive,
        Severity::Medium,
        format!(
            "`{program}` stops system services chosen by name ({}) that the user did not name",
            services.join(", ")
        ),
        services[0],
    ));
}

fn dedup(mut v: Vec<Signal>) -> Vec<Signal> {
    let mut seen = std::collections::HashSet::new();
    v.retain(|s| seen.insert((s.category, s.evidence.clone())));
    v
}

/// Credential material found by the audit log's redaction detectors, by kind.
fn secrets_in(text: &str, where_: &str, out: &mut Vec<Signal>) {
    static REDACTOR: std::sync::OnceLock<crate::redact::Redactor> = std::sync::OnceLock::new();
    let r = REDACTOR.get_or_init(crate::redact::Redactor::default);
    let red = r.redact(text);
    if let std::borrow::Cow::Owned(red) = red {
        let mut kinds: Vec<&str> = red
            .match_indices("[REDACTED:")
            .filter_map(|(i, _)| red[i + 10..].split(']').next())
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        out.push(sig(
            Category::SecretInPayload,
            Severity::High,
            format!("{} in {where_}", kinds.join(", ")),
            where_,
        ));
    }
}

/// The words of a command after its program, options first-class.
fn args(c: &SimpleCommand) -> &[String] {
    c.argv.get(1..).unwrap_or(&[])
}

fn has(c: &SimpleCommand, flags: &[&str]) -> bool {
    args(c).iter().any(|a| flags.contains(&a.as_str()))
}

/// Short flags as letters: `-rf` has `r` and `f`.
fn has_short(c: &SimpleCommand, letter: char) -> bool {
    args(c)
        .iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(letter))
}

fn subcommand(c: &SimpleCommand) -> Option<&str> {
    args(c)
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str)
}

fn names_prod(c: &SimpleCommand) -> bool {
    c.argv.iter().any(|a| {
        let a = a.to_ascii_lowercase();
        ["prod", "production", "live"].iter().any(|p| {
            a == *p
                || a.split(['=', '/', ':', '-', '_', '.', ','])
                    .any(|part| part == *p)
        })
    })
}

/// Programs that raise privileges, however they are reached (`pkexec /bin/sh` is a wrapper
/// around a shell with no script, `sudoedit` edits as root, `busybox su`).
const PRIVILEGE_PROGRAMS: &[&str] = &[
    "sudo",
    "doas",
    "su",
    "pkexec",
    "run0",
    "sudoedit",
    "sudo-rs",
    "machinectl",
    "systemd-run",
];

fn privilege_signal(c: &SimpleCommand, out: &mut Vec<Signal>) {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    let busybox_su = name == "busybox" && c.argv.get(1).is_some_and(|a| a == "su");
    let direct = PRIVILEGE_PROGRAMS.contains(&name)
        && (name != "machinectl" || c.argv.get(1).is_some_and(|a| a == "shell"));
    if !(c.privileged || direct || busybox_su) {
        return;
    }
    let w = c
        .wrappers
        .iter()
        .find(|w| PRIVILEGE_PROGRAMS.contains(&w.as_str()))
        .cloned()
        .or_else(|| (direct || busybox_su).then(|| name.to_string()))
        .unwrap_or_else(|| "privileges".into());
    out.push(sig(
        Category::Privilege,
        Severity::High,
        format!("`{}` runs with {w}", c.text),
        name,
    ));
}

fn command_signals(c: &SimpleCommand, ctx: &Context, cfg: &SignalsConfig, out: &mut Vec<Signal>) {
    privilege_signal(c, out);
    if c.wrapper_only {
        // The commands a wrapper runs are judged on their own; `git submodule foreach` also
        // multiplies what they discard by every submodule.
        if c.argv.first().map(|a| base(a)) == Some("git") {
            git_signals(c, out);
        }
        return;
    }
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    for r in &c.reads {
        credential_read(&ctx.resolve(r), ctx, out);
    }
    for w in &c.writes {
        write_signals(&ctx.resolve(w), ctx, out);
    }
    for h in &c.hosts {
        let upload = is_upload(c);
        host_signal(h, upload, cfg, out);
    }
    match name {
        "env" | "printenv" if args(c).iter().all(|a| a.starts_with('-')) => out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("`{}` dumps the environment", c.text),
            "environment",
        )),
        "set" | "export" | "declare" if args(c).iter().all(|a| a.starts_with('-')) => {
            out.push(sig(
                Category::CredentialAccess,
                Severity::High,
                format!("`{}` dumps the environment", c.text),
                "environment",
            ))
        }
        "history" => out.push(sig(
            Category::CredentialAccess,
            Severity::Medium,
            format!("`{}` reads the shell history", c.text),
            "history",
        )),
        "security"
            if args(c)
                .iter()
                .any(|a| a.starts_with("find-") && a.contains("password")) =>
        {
            out.push(sig(
                Category::CredentialAccess,
                Severity::High,
                format!("`{}` reads the keychain", c.text),
                "keychain",
            ))
        }
        "gh" if c.argv.get(1..3) == Some(&["auth".into(), "token".into()]) => out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("`{}` prints a GitHub token", c.text),
            "gh auth token",
        )),
        "gcloud" if c.argv.iter().any(|a| a == "print-access-token") => out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("`{}` prints a cloud token", c.text),
            "gcloud token",
        )),
        "aws" if c.argv.get(1..3) == Some(&["configure".into(), "get".into()]) => out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("`{}` reads AWS credentials", c.text),
            "aws configure",
        )),
        "crontab" if !has(c, &["-l"]) => out.push(sig(
            Category::Persistence,
            Severity::High,
            format!("`{}` changes the crontab", c.text),
            "crontab",
        )),
        "systemctl" if matches!(subcommand(c), Some("enable" | "link" | "edit")) => out.push(sig(
            Category::Persistence,
            Severity::High,
            format!("`{}` makes a service start by itself", c.text),
            args(c).last().map_or("systemctl", String::as_str),
        )),
        "launchctl" if matches!(subcommand(c), Some("load" | "bootstrap" | "enable")) => {
            out.push(sig(
                Category::Persistence,
                Severity::High,
                format!("`{}` loads a launchd job", c.text),
                "launchctl",
            ))
        }
        "git" => git_signals(c, out),
        "rm" | "rmdir" | "unlink" | "shred" => rm_signals(c, ctx, out),
        "mkfs" | "fdisk" | "sfdisk" | "parted" | "wipefs" | "mkswap" => out.push(sig(
            Category::Destructive,
            Severity::Critical,
            format!("`{}` rewrites a disk or filesystem", c.text),
            args(c).last().map_or(name, String::as_str),
        )),
        n if n.starts_with("mkfs.") => out.push(sig(
            Category::Destructive,
            Severity::Critical,
            format!("`{}` makes a filesystem", c.text),
            args(c).last().map_or(n, String::as_str),
        )),
        "dd" if args(c).iter().any(|a| a.starts_with("of=/dev/")) => out.push(sig(
            Category::Destructive,
            Severity::Critical,
            format!("`{}` writes a raw device", c.text),
            "dd",
        )),
        "chmod" if args(c).iter().any(|a| is_setuid_mode(a)) => out.push(sig(
            Category::Privilege,
            Severity::High,
            format!("`{}` sets a setuid/setgid bit", c.text),
            args(c).last().map_or("chmod", String::as_str),
        )),
        "usermod" | "gpasswd" | "adduser"
            if args(c)
                .iter()
                .any(|a| matches!(a.as_str(), "sudo" | "wheel" | "docker" | "admin" | "root")) =>
        {
            out.push(sig(
                Category::Privilege,
                Severity::High,
                format!("`{}` adds a user to a privileged group", c.text),
                args(c).last().map_or(name, String::as_str),
            ))
        }
        "echo" | "printf" | "print" => {
            if let Some(var) = args(c).iter().find_map(|a| secret_var(a)) {
                out.push(sig(
                    Category::CredentialAccess,
                    Severity::High,
                    format!("`{}` prints the secret variable ${var}", c.text),
                    &var,
                ))
            }
        }
        "find" => find_signals(c, ctx, out),
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" => secret_search(c, ctx, out),
        "visudo" => out.push(sig(
            Category::Privilege,
            Severity::High,
            format!("`{}` edits sudoers", c.text),
            "sudoers",
        )),
        "docker" | "podman" => container_signals(c, out),
        "gh" => gh_signals(c, out),
        _ => {}
    }
    sql_signals(c, out);
    production_signals(c, name, out);
    supply_chain_signals(c, name, out);
    rbac_signals(c, name, out);
}

/// A variable expansion (`$OPENAI_API_KEY`, `${GH_TOKEN}`) whose name says it holds a secret.
fn secret_var(word: &str) -> Option<String> {
    let i = word.find('$')?;
    let name: String = word[i + 1..]
        .trim_start_matches('{')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
        .iter()
        .any(|w| upper.contains(w))
        .then_some(name)
}

/// `find … -exec rm …` / `-delete` deletes what its `-name` matches; `-perm -4000` lists
/// setuid programs.
fn find_signals(c: &SimpleCommand, ctx: &Context, out: &mut Vec<Signal>) {
    let a = args(c);
    let deletes = a.iter().any(|x| x == "-delete")
        || a.windows(2).any(|w| {
            matches!(w[0].as_str(), "-exec" | "-execdir" | "-ok")
                && matches!(base(&w[1]), "rm" | "shred" | "unlink")
        });
    if deletes {
        let names: Vec<&str> = a
            .windows(2)
            .filter(|w| matches!(w[0].as_str(), "-name" | "-iname" | "-path" | "-wholename"))
            .map(|w| w[1].as_str())
            .collect();
        let root = a
            .iter()
            .take_while(|x| !x.starts_with('-'))
            .next()
            .map_or(".", String::as_str);
        let p = ctx.resolve(root);
        let outside = !ctx.in_workspace(&p);
        if names.is_empty() || outside || names.iter().any(|n| !is_build_output(n)) {
            let what = if names.is_empty() {
                home_rel(&p, ctx)
            } else {
                names.join(", ")
            };
            out.push(sig(
                Category::Destructive,
                Severity::High,
                format!("`{}` deletes what it finds ({what})", c.text),
                &what,
            ));
        }
    }
    let setuid = a.windows(2).any(|w| {
        w[0] == "-perm" && (w[1].contains("4000") || w[1].contains("2000") || w[1].contains("u=s"))
    });
    if setuid {
        out.push(sig(
            Category::Privilege,
            Severity::Medium,
            format!("`{}` looks for setuid programs", c.text),
            "setuid",
        ));
    }
}

/// Searching files outside the workspace for passwords, keys or tokens.
fn secret_search(c: &SimpleCommand, ctx: &Context, out: &mut Vec<Signal>) {
    let a = args(c);
    let pattern = a
        .iter()
        .find(|x| !x.starts_with('-'))
        .map(|x| x.to_ascii_lowercase())
        .unwrap_or_default();
    let secretish = [
        "password",
        "passwd",
        "secret",
        "api_key",
        "apikey",
        "api-key",
        "token",
        "private key",
        "aws_access",
        "credential",
    ]
    .iter()
    .any(|w| pattern.contains(w));
    if !secretish {
        return;
    }
    let outside = a
        .iter()
        .filter(|x| !x.starts_with('-'))
        .skip(1)
        .map(|x| ctx.resolve(x))
        .find(|p| !ctx.in_workspace(p));
    if let Some(p) = outside {
        let where_ = home_rel(&p, ctx);
        out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("`{}` searches {where_} for credentials", c.text),
            &where_,
        ));
    }
}

/// What an inline script (`python3 -c`, a heredoc fed to an interpreter, PowerShell `-c`)
/// does, read from its text: download-and-run, writes to startup files, deleting trees it
/// names, reading key files. The shell parser sees only that an interpreter runs.
fn script_signals(text: &str, ctx: &Context, out: &mut Vec<Signal>) {
    let lower = text.to_ascii_lowercase();
    let interpreter = [
        "python",
        "node",
        "ruby",
        "perl",
        "php",
        "powershell",
        "pwsh",
        "deno",
        "bun ",
    ]
    .iter()
    .any(|i| lower.contains(i));
    if !interpreter {
        return;
    }
    download_exec_in(text, "the script", out);
    let startup = [
        ".bashrc",
        ".zshrc",
        ".bash_profile",
        ".profile",
        "authorized_keys",
        "crontab",
        "/etc/cron",
        "systemd/",
        "launchagents",
        ".config/autostart",
    ];
    let writes = ["write", "'a'", "\"a\"", ">>", "append", "open("]
        .iter()
        .any(|w| lower.contains(w));
    if let Some(file) = startup.iter().find(|f| lower.contains(*f))
        && writes
    {
        out.push(sig(
            Category::Persistence,
            Severity::High,
            format!("an inline script writes {file}"),
            file,
        ));
    }
    for call in ["rmtree(", "rmsync(", "rm_rf(", "remove_dir_all(", "fs.rm("] {
        let Some(i) = lower.find(call) else { continue };
        let after = &text[i + call.len()..];
        let target = after
            .trim_start()
            .strip_prefix(['\'', '"'])
            .and_then(|t| t.split(['\'', '"']).next())
            .unwrap_or("");
        let p = ctx.resolve(target);
        let home = ctx.home.as_deref() == Some(p.as_path());
        let severity = if target.is_empty() {
            Severity::High
        } else if p == Path::new("/")
            || home
            || p.starts_with("/home") && p.components().count() <= 3
        {
            Severity::Critical
        } else if !ctx.in_workspace(&p) {
            Severity::High
        } else if is_build_output(target) {
            continue;
        } else {
            Severity::Medium
        };
        let what = if target.is_empty() {
            "a tree it computes".to_string()
        } else {
            home_rel(&p, ctx)
        };
        out.push(sig(
            Category::Destructive,
            severity,
            format!("an inline script deletes {what}"),
            &what,
        ));
        break;
    }
    for key in [
        "id_rsa",
        "id_ed25519",
        ".aws/credentials",
        ".git-credentials",
        ".netrc",
        "/etc/shadow",
        ".kube/config",
    ] {
        if lower.contains(key) {
            out.push(sig(
                Category::CredentialAccess,
                Severity::High,
                format!("an inline script reads {key}"),
                key,
            ));
            break;
        }
    }
}

/// A download piped into a shell or evaluated (`curl … | sh`, PowerShell `iex` of a download)
/// in text that will run later or elsewhere: a written file, a script, tool arguments.
fn download_exec_in(text: &str, where_: &str, out: &mut Vec<Signal>) {
    let lower = text.to_ascii_lowercase();
    let piped = lower.lines().any(|l| {
        (l.contains("curl ") || l.contains("wget "))
            && l.split('|').skip(1).any(|seg| {
                let w = seg.trim_start().trim_start_matches("sudo ").trim_start();
                [
                    "sh", "bash", "zsh", "dash", "python", "python3", "node", "perl", "ruby",
                ]
                .iter()
                .any(|i| {
                    w == *i || w.starts_with(&format!("{i} ")) || w.starts_with(&format!("{i}\""))
                })
            })
    });
    let iex = (lower.contains("iex") || lower.contains("invoke-expression"))
        && [
            "downloadstring",
            "invoke-webrequest",
            "iwr ",
            "irm ",
            "net.webclient",
        ]
        .iter()
        .any(|d| lower.contains(d));
    if piped || iex {
        out.push(sig(
            Category::SupplyChain,
            Severity::High,
            format!("{where_} runs code it downloads"),
            "remote code",
        ));
    }
}

fn is_setuid_mode(a: &str) -> bool {
    a.contains("+s")
        || (a.len() == 4
            && a.chars().all(|c| c.is_ascii_digit())
            && matches!(&a[..1], "2" | "4" | "6"))
}

fn is_upload(c: &SimpleCommand) -> bool {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    match name {
        "curl" => {
            args(c).iter().any(|a| {
                matches!(
                    a.as_str(),
                    "-T" | "--upload-file"
                        | "-F"
                        | "--form"
                        | "-d"
                        | "--data"
                        | "--data-binary"
                        | "--data-raw"
                        | "--data-urlencode"
                        | "--json"
                ) || a.starts_with("-d@")
                    || a.starts_with("--data=@")
                    || a.starts_with("-F")
            }) || args(c).windows(2).any(|w| {
                matches!(w[0].as_str(), "-X" | "--request")
                    && matches!(w[1].to_ascii_uppercase().as_str(), "POST" | "PUT" | "PATCH")
            })
        }
        "wget" => args(c)
            .iter()
            .any(|a| a.starts_with("--post-data") || a.starts_with("--post-file")),
        "scp" | "rsync" | "sftp" => c.argv.last().is_some_and(|last| {
            last.contains(':') && !last.starts_with('/') && !last.starts_with("./")
        }),
        "nc" | "ncat" | "netcat" | "socat" | "ftp" => true,
        _ => false,
    }
}

fn host_signal(host: &str, upload: bool, cfg: &SignalsConfig, out: &mut Vec<Signal>) {
    let host = host.trim().to_ascii_lowercase();
    if host.is_empty() || host == "localhost" || host.starts_with("127.") || host == "::1" {
        return;
    }
    let known = is_known_host(&host, cfg);
    if upload {
        out.push(sig(
            Category::NetworkEgress,
            Severity::High,
            format!("uploads to {host}"),
            &host,
        ));
    } else if !known {
        out.push(sig(
            Category::NetworkEgress,
            Severity::Medium,
            format!("contacts {host}"),
            &host,
        ));
    }
}

/// Credential stores, history files, browser profiles, environment dumps.
fn credential_read(p: &Path, ctx: &Context, out: &mut Vec<Signal>) {
    let rel = home_rel(p, ctx);
    let s = rel.as_str();
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let hit = s.starts_with("~/.ssh/id_")
        || s.starts_with("~/.aws/")
        || s.starts_with("~/.config/gcloud")
        || s.starts_with("~/.azure/")
        || s == "~/.kube/config"
        || s == "~/.docker/config.json"
        || s == "~/.netrc"
        || s == "~/.git-credentials"
        || s == "~/.npmrc"
        || s == "~/.pypirc"
        || s.starts_with("~/.gnupg/")
        || s.starts_with("~/.password-store")
        || s.starts_with("~/Library/Keychains")
        || s.starts_with("~/.config/google-chrome")
        || s.starts_with("~/.config/chromium")
        || s.starts_with("~/.mozilla/firefox")
        || s.starts_with("~/Library/Application Support/Google/Chrome")
        || s.starts_with("~/.config/gh/")
        || s == "~/.codex/auth.json"
        || s == "~/.claude/.credentials.json"
        || s == "~/.config/opencode/auth.json"
        || s == "~/.local/share/opencode/auth.json"
        || s.starts_with("~/.cargo/credentials")
        || s == "~/.vault-token"
        || s == "~/.pgpass"
        || s == "~/.my.cnf"
        || s.starts_with("~/.terraform.d/credentials")
        || name.ends_with("_history")
        || name == ".env"
        || name.starts_with(".env.")
            && !matches!(name, ".env.example" | ".env.sample" | ".env.template")
        || (s.starts_with("/proc/") && s.ends_with("/environ"))
        || s == "/etc/shadow"
        || s == "/etc/sudoers";
    if hit {
        out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("reads {s}"),
            s,
        ));
    }
}

/// Persistence places and writes outside the workspace.
fn write_signals(p: &Path, ctx: &Context, out: &mut Vec<Signal>) {
    let rel = home_rel(p, ctx);
    let s = rel.as_str();
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let startup = [
        "~/.bashrc",
        "~/.bash_profile",
        "~/.bash_login",
        "~/.profile",
        "~/.zshrc",
        "~/.zprofile",
        "~/.zshenv",
        "~/.zlogin",
        "~/.config/fish/config.fish",
        "~/.ssh/authorized_keys",
        "~/.ssh/config",
        "~/.ssh/rc",
        "/etc/profile",
        "/etc/bash.bashrc",
        "/etc/environment",
        "/etc/rc.local",
        "/etc/ld.so.preload",
    ];
    let persistent = startup.contains(&s)
        || s.starts_with("/etc/profile.d/")
        || s.starts_with("/etc/cron")
        || s.starts_with("/var/spool/cron")
        || s.starts_with("/etc/systemd/")
        || s.starts_with("/lib/systemd/")
        || s.starts_with("/usr/lib/systemd/")
        || s.starts_with("~/.config/systemd/")
        || s.starts_with("/Library/LaunchAgents")
        || s.starts_with("/Library/LaunchDaemons")
        || s.starts_with("~/Library/LaunchAgents")
        || s.starts_with("~/.config/autostart/")
        || s.starts_with("/etc/xdg/autostart/")
        || s.contains("/.git/hooks/")
        || s.contains("/.husky/")
        || s.starts_with("/usr/local/bin/")
        || s.starts_with("/usr/local/sbin/")
        || s.starts_with("~/.local/bin/")
        || s.starts_with("~/bin/")
        || s.starts_with("/etc/sudoers");
    if persistent {
        out.push(sig(
            Category::Persistence,
            Severity::High,
            format!("writes {s}"),
            s,
        ));
    } else if runs_later(s) {
        out.push(sig(
            Category::Persistence,
            Severity::Medium,
            format!("writes {s}, which CI or the editor runs by itself"),
            name,
        ));
    }
    if s.starts_with("/etc/sudoers") {
        out.push(sig(
            Category::Privilege,
            Severity::High,
            format!("writes {s}"),
            s,
        ));
    }
    if !ctx.in_workspace(p) && !p.starts_with("/tmp") && !p.starts_with("/dev/null") {
        out.push(sig(
            Category::OutsideWorkspace,
            Severity::Medium,
            format!("writes {s}, outside the workspace"),
            if name.is_empty() { s } else { name },
        ));
    }
}

/// CI pipelines, editor tasks and dev-container hooks: files whose commands run later without
/// anyone typing them.
fn runs_later(path: &str) -> bool {
    path.contains(".github/workflows/")
        || path.ends_with(".gitlab-ci.yml")
        || path.contains(".circleci/")
        || path.ends_with("Jenkinsfile")
        || path.ends_with(".vscode/tasks.json")
        || path.contains(".devcontainer/")
}

fn is_build_output(target: &str) -> bool {
    let t = target.trim_end_matches('/');
    let last = t.rsplit('/').next().unwrap_or(t);
    BUILD_OUTPUT.iter().any(|b| {
        if let Some(ext) = b.strip_prefix('*') {
            last.ends_with(ext)
        } else {
            last == *b || t.ends_with(&format!("/{b}"))
        }
    })
}

fn rm_signals(c: &SimpleCommand, ctx: &Context, out: &mut Vec<Signal>) {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    let recursive = has_short(c, 'r') || has_short(c, 'R') || has(c, &["--recursive"]);
    let force = has_short(c, 'f') || has(c, &["--force"]);
    // `{}` is what a `find … -exec` found: judged at the find, by its -name.
    let targets: Vec<&String> = args(c)
        .iter()
        .filter(|a| !a.starts_with('-') && *a != "{}")
        .collect();
    for t in targets {
        let p = ctx.resolve(t);
        let s = home_rel(&p, ctx);
        let root_like = matches!(
            t.as_str(),
            "/" | "/*" | "~" | "~/" | "~/*" | "$HOME" | "*" | "."
        ) || p == Path::new("/")
            || ctx.home.as_deref() == Some(p.as_path())
            || ctx.roots().iter().any(|r| r == &p);
        if root_like && (recursive || name == "shred") {
            out.push(sig(
                Category::Destructive,
                Severity::Critical,
                format!("`{}` deletes {s} and everything under it", c.text),
                &s,
            ));
        } else if (recursive || force || name == "shred") && !is_build_output(t) {
            out.push(sig(
                Category::Destructive,
                Severity::High,
                format!("`{}` deletes {s}", c.text),
                &s,
            ));
        }
    }
}

fn git_signals(c: &SimpleCommand, out: &mut Vec<Signal>) {
    let a = args(c);
    // Skip global options (`-C dir`, `-c k=v`).
    let i = crate::normalize::shell::wrappers::git_global_options_len(a.iter().map(String::as_str));
    let Some(sub) = a.get(i).map(String::as_str) else {
        return;
    };
    let rest = &a[(i + 1).min(a.len())..];
    let has_r = |f: &[&str]| rest.iter().any(|x| f.contains(&x.as_str()));
    match sub {
        "push" => {
            let operands: Vec<&String> = rest.iter().filter(|x| !x.starts_with('-')).collect();
            let lease = rest.iter().any(|x| x.starts_with("--force-with-lease"));
            let force = has_r(&["-f", "--force"])
                || rest
                    .iter()
                    .any(|x| x.starts_with('-') && !x.starts_with("--") && x.contains('f'))
                || operands.iter().skip(1).any(|x| x.starts_with('+'));
            let branch = operands
                .get(1)
                .map(|b| {
                    b.trim_start_matches('+')
                        .rsplit(':')
                        .next()
                        .unwrap_or(b)
                        .to_string()
                })
                .unwrap_or_default();
            let main = matches!(
                branch.as_str(),
                "main" | "master" | "trunk" | "develop" | "release"
            );
            if force || (lease && main) {
                out.push(sig(
                    Category::RemoteHistory,
                    if main {
                        Severity::Critical
                    } else {
                        Severity::High
                    },
                    format!(
                        "`{}` force-pushes {}",
                        c.text,
                        if branch.is_empty() {
                            "the current branch"
                        } else {
                            &branch
                        }
                    ),
                    if branch.is_empty() { "push" } else { &branch },
                ));
            }
            let deletes =
                has_r(&["-d", "--delete"]) || operands.iter().skip(1).any(|x| x.starts_with(':'));
            if deletes {
                out.push(sig(
                    Category::RemoteHistory,
                    Severity::High,
                    format!("`{}` deletes a remote branch", c.text),
                    operands
                        .last()
                        .map_or("branch", |b| b.trim_start_matches(':')),
                ));
            }
            if has_r(&["--all", "--mirror", "--tags"]) {
                out.push(sig(
                    Category::RemoteHistory,
                    Severity::High,
                    format!("`{}` pushes every ref", c.text),
                    "all refs",
                ));
            }
        }
        "reset" if has_r(&["--hard"]) => out.push(sig(
            Category::Destructive,
            Severity::High,
            format!("`{}` discards uncommitted work", c.text),
            "reset --hard",
        )),
        "clean"
            if rest
                .iter()
                .any(|x| x.starts_with('-') && (x.contains('f') || x == "--force")) =>
        {
            out.push(sig(
                Category::Destructive,
                if rest.iter().any(|x| x.starts_with('-') && x.contains('x')) {
                    Severity::High
                } else {
                    Severity::Medium
                },
                format!("`{}` deletes untracked files", c.text),
                "clean",
            ))
        }
        "checkout" | "restore"
            if rest.iter().any(|x| x == ".")
                && !has_r(&["-b", "-B"])
                && (!has_r(&["--staged", "-S"]) || has_r(&["--worktree", "-W"])) =>
        {
            out.push(sig(
                Category::Destructive,
                Severity::High,
                format!("`{}` discards changes", c.text),
                ".",
            ))
        }
        "branch" if has_r(&["-D"]) => out.push(sig(
            Category::Destructive,
            Severity::Medium,
            format!("`{}` deletes a branch", c.text),
            rest.last().map_or("branch", String::as_str),
        )),
        "filter-branch" | "filter-repo" => out.push(sig(
            Category::RemoteHistory,
            Severity::High,
            format!("`{}` rewrites history", c.text),
            "history",
        )),
        "config"
            if rest.iter().any(|x| {
                matches!(
                    x.to_ascii_lowercase().as_str(),
                    "core.hookspath" | "core.fsmonitor" | "core.sshcommand" | "include.path"
                )
            }) =>
        {
            out.push(sig(
                Category::Persistence,
                Severity::High,
                format!("`{}` makes git run other code by itself", c.text),
                rest.iter()
                    .find(|x| x.contains('.'))
                    .map_or("git config", String::as_str),
            ))
        }
        // `git submodule foreach CMD` runs CMD in every submodule: judge its words.
        "submodule" if rest.first().is_some_and(|x| x == "foreach") => {
            let script = rest[1..]
                .iter()
                .filter(|x| !x.starts_with("--"))
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
                .to_ascii_lowercase();
            let destroys = script.contains("reset --hard")
                || script
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .windows(2)
                    .any(|w| w[0] == "clean" && w[1].starts_with('-') && w[1].contains('f'))
                || script.contains("push --force")
                || script.contains("push -f");
            if destroys {
                out.push(sig(
                    Category::Destructive,
                    Severity::High,
                    format!("`{}` discards work in every submodule", c.text),
                    "submodules",
                ));
            }
        }
        "remote" if matches!(rest.first().map(String::as_str), Some("add" | "set-url")) => out
            .push(sig(
                Category::RemoteHistory,
                Severity::Medium,
                format!("`{}` changes where pushes go", c.text),
                rest.get(1).map_or("remote", String::as_str),
            )),
        _ => {}
    }
}

/// GitHub CLI calls that publish a repository.
fn gh_signals(c: &SimpleCommand, out: &mut Vec<Signal>) {
    let a = args(c);
    let public = a
        .windows(2)
        .any(|w| w[0] == "--visibility" && w[1] == "public")
        || a.iter()
            .any(|x| x == "--visibility=public" || x == "--public");
    if a.first().is_some_and(|x| x == "repo")
        && matches!(a.get(1).map(String::as_str), Some("edit" | "create"))
        && public
    {
        out.push(sig(
            Category::NetworkEgress,
            Severity::High,
            format!("`{}` makes a repository public", c.text),
            a.get(2).map_or("repository", String::as_str),
        ));
    }
}

/// A push after a remote was added or changed, or after history was rewritten, in one line.
fn push_history(cmds: &[SimpleCommand], out: &mut Vec<Signal>) {
    let is = |c: &SimpleCommand, subs: &[&str]| {
        c.argv.first().is_some_and(|a| base(a) == "git")
            && c.argv
                .iter()
                .skip(1)
                .find(|a| !a.starts_with('-'))
                .is_some_and(|s| subs.contains(&s.as_str()))
    };
    let mut changed = false;
    for c in cmds {
        if is(c, &["filter-branch", "filter-repo", "rebase"])
            || (is(c, &["remote"]) && c.argv.iter().any(|a| a == "add" || a == "set-url"))
        {
            changed = true;
        } else if changed && is(c, &["push"]) {
            out.push(sig(
                Category::RemoteHistory,
                Severity::High,
                format!(
                    "`{}` pushes after the remote or history was changed",
                    c.text
                ),
                "push",
            ));
        }
    }
}

fn container_signals(c: &SimpleCommand, out: &mut Vec<Signal>) {
    let a = args(c);
    if subcommand(c) == Some("push") {
        out.push(sig(
            Category::Production,
            if names_prod(c) {
                Severity::High
            } else {
                Severity::Medium
            },
            format!("`{}` publishes an image", c.text),
            a.last().map_or("image", String::as_str),
        ));
    }
    let privileged = a.iter().any(|x| {
        x == "--privileged"
            || x.starts_with("--pid=host")
            || x.starts_with("--net=host")
            || x.starts_with("--network=host")
            || x.starts_with("--cap-add")
    });
    let host_mount = a.windows(2).any(|w| {
        matches!(w[0].as_str(), "-v" | "--volume" | "--mount")
            && (w[1].starts_with("/:")
                || w[1].starts_with("/var/run/docker.sock")
                || w[1].contains("source=/,"))
    });
    if privileged || host_mount {
        out.push(sig(
            Category::Privilege,
            Severity::High,
            format!(
                "`{}` runs a privileged container or mounts the host",
                c.text
            ),
            "container",
        ));
    }
}

fn sql_signals(c: &SimpleCommand, out: &mut Vec<Signal>) {
    if sql_text_signals(&c.argv.join(" "), &format!("`{}`", c.text), false, out) {
        return;
    }
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    if matches!(name, "dropdb" | "redis-cli")
        && (name == "dropdb"
            || c.argv
                .iter()
                .any(|a| a.eq_ignore_ascii_case("flushall") || a.eq_ignore_ascii_case("flushdb")))
    {
        out.push(sig(
            Category::Destructive,
            Severity::High,
            format!("`{}` deletes a database", c.text),
            args(c).last().map_or(name, String::as_str),
        ));
    }
}

/// SQL in a command line or a tool's arguments: dropping, truncating or deleting everything is
/// destructive (high), other changes to data through a tool (`data_changes`) medium;
/// `COPY … TO PROGRAM` runs a program on the database server. Returns whether it raised a
/// signal.
fn sql_text_signals(text: &str, who: &str, data_changes: bool, out: &mut Vec<Signal>) -> bool {
    let upper = text.to_ascii_uppercase();
    let target_after = |i: usize, kw: &str| {
        upper[i + kw.len()..]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
            .to_ascii_lowercase()
    };
    let mut raised = false;
    if upper.contains("TO PROGRAM") || upper.contains("FROM PROGRAM") {
        out.push(sig(
            Category::Privilege,
            Severity::High,
            format!("{who} runs a program on the database server (COPY … PROGRAM)"),
            "COPY PROGRAM",
        ));
        raised = true;
    }
    for kw in [
        "DROP TABLE",
        "DROP DATABASE",
        "DROP SCHEMA",
        "TRUNCATE ",
        "DELETE FROM",
    ] {
        if let Some(i) = upper.find(kw) {
            if kw == "DELETE FROM" && upper[i..].contains(" WHERE ") {
                continue;
            }
            out.push(sig(
                Category::Destructive,
                Severity::High,
                format!("{who} runs {}", kw.trim()),
                &target_after(i, kw),
            ));
            return true;
        }
    }
    // Changing rows through a database tool (MCP), which acts on the database it is connected
    // to; on a command line (`psql -c`) such changes are left to the reviewer.
    for kw in ["UPDATE ", "DELETE FROM", "ALTER TABLE", "INSERT INTO"] {
        if !data_changes {
            break;
        }
        if let Some(i) = upper.find(kw) {
            // Only statements: `UPDATE x SET`, not the word in prose.
            let statement = kw != "UPDATE " || upper[i..].contains(" SET ");
            if statement {
                out.push(sig(
                    Category::Destructive,
                    Severity::Medium,
                    format!("{who} changes data ({})", kw.trim()),
                    &target_after(i, kw),
                ));
                return true;
            }
        }
    }
    raised
}

fn production_signals(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    let words: Vec<&str> = args(c)
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect();
    let first = words.first().copied().unwrap_or("");
    let mutating: Option<String> = match name {
        "kubectl" | "oc" => (!READ_ONLY_VERBS.contains(&first)
            && !matches!(
                first,
                "" | "config"
                    | "api-resources"
                    | "api-versions"
                    | "cluster-info"
                    | "auth"
                    | "port-forward"
                    | "proxy"
                    | "completion"
                    | "wait"
            ))
        .then(|| first.to_string()),
        "helm" => matches!(
            first,
            "install" | "upgrade" | "uninstall" | "delete" | "rollback"
        )
        .then(|| first.to_string()),
        "terraform" | "tofu" | "terragrunt" => {
            (matches!(first, "apply" | "destroy" | "import" | "taint" | "untaint")
                || (first == "state"
                    && matches!(words.get(1).copied(), Some("rm" | "mv" | "push"))))
            .then(|| first.to_string())
        }
        "pulumi" => matches!(first, "up" | "destroy" | "update" | "refresh" | "cancel")
            .then(|| first.to_string()),
        "aws" | "gcloud" | "az" => words
            .iter()
            .find(|w| {
                [
                    "create",
                    "delete",
                    "put",
                    "update",
                    "deploy",
                    "terminate",
                    "run-instances",
                    "remove",
                    "rb",
                    "rm",
                    "set",
                    "apply",
                    "start",
                    "stop",
                    "reboot",
                    "modify",
                    "attach",
                    "detach",
                    "invoke",
                    "publish",
                ]
                .iter()
                .any(|v| **w == *v || w.starts_with(&format!("{v}-")))
            })
            .map(|w| w.to_string()),
        "ansible-playbook" => (!has(
            c,
            &[
                "--check",
                "-C",
                "--syntax-check",
                "--list-tasks",
                "--list-hosts",
            ],
        ))
        .then(|| "playbook".to_string()),
        "flyctl" | "fly" => matches!(first, "deploy" | "scale" | "destroy" | "secrets" | "launch")
            .then(|| first.to_string()),
        "vercel" => (first.is_empty()
            || matches!(
                first,
                "deploy" | "--prod" | "promote" | "remove" | "rm" | "env"
            ))
        .then(|| {
            if first.is_empty() {
                "deploy".to_string()
            } else {
                first.to_string()
            }
        }),
        "heroku" => (first.contains(":destroy")
            || first.contains(":set")
            || first.contains(":rollback")
            || first.contains(":scale")
            || first.starts_with("releases")
            || first.starts_with("apps:destroy")
            || first.starts_with("ps:"))
        .then(|| first.to_string()),
        "serverless" | "sls" => matches!(first, "deploy" | "remove").then(|| first.to_string()),
        "netlify" => matches!(first, "deploy").then(|| first.to_string()),
        _ => None,
    };
    let Some(verb) = mutating else { return };
    let target =
        namespace_of(c).unwrap_or_else(|| words.last().copied().unwrap_or(name).to_string());
    let destructive = matches!(
        verb.as_str(),
        "delete" | "destroy" | "uninstall" | "remove" | "rm" | "rb" | "terminate" | "drain"
    ) || verb.starts_with("delete")
        || verb.starts_with("terminate");
    out.push(sig(
        Category::Production,
        if names_prod(c) {
            Severity::High
        } else {
            Severity::Medium
        },
        format!(
            "`{}` changes deployed infrastructure ({name} {verb})",
            c.text
        ),
        &target,
    ));
    if destructive {
        out.push(sig(
            Category::Destructive,
            if names_prod(c) {
                Severity::Critical
            } else {
                Severity::High
            },
            format!("`{}` deletes cloud or cluster resources", c.text),
            &target,
        ));
    }
}

fn namespace_of(c: &SimpleCommand) -> Option<String> {
    let a = args(c);
    for (i, x) in a.iter().enumerate() {
        if matches!(
            x.as_str(),
            "-n" | "--namespace"
                | "--context"
                | "--project"
                | "--profile"
                | "--stack"
                | "-s"
                | "--app"
                | "-a"
        ) {
            return a.get(i + 1).cloned();
        }
        for p in [
            "--namespace=",
            "--context=",
            "--project=",
            "--profile=",
            "--stack=",
            "--app=",
        ] {
            if let Some(v) = x.strip_prefix(p) {
                return Some(v.to_string());
            }
        }
    }
    None
}

fn supply_chain_signals(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    let a = args(c);
    let installers = [
        "pip", "pip3", "uv", "pipx", "npm", "pnpm", "yarn", "bun", "cargo", "gem", "go", "poetry",
        "npx",
    ];
    let name_ok = installers.contains(&name)
        || name.starts_with("pip3.")
        || name.starts_with("python") && a.first().is_some_and(|x| x == "-m");
    if !name_ok {
        return;
    }
    let index = a.iter().enumerate().find_map(|(i, x)| {
        for f in [
            "--index-url",
            "--extra-index-url",
            "--registry",
            "--find-links",
            "--index",
            "--git",
            "--trusted-host",
        ] {
            if x == f {
                return Some(format!("{f} {}", a.get(i + 1).map_or("", String::as_str)));
            }
            if let Some(v) = x.strip_prefix(&format!("{f}=")) {
                return Some(format!("{f} {v}"));
            }
        }
        (x == "-i").then(|| format!("-i {}", a.get(i + 1).map_or("", String::as_str)))
    });
    if let Some(idx) = index {
        out.push(sig(
            Category::SupplyChain,
            Severity::High,
            format!("`{}` installs from a non-default source ({idx})", c.text),
            idx.split_whitespace().nth(1).unwrap_or(&idx),
        ));
        return;
    }
    if name == "npm"
        && a.windows(3)
            .any(|w| w[0] == "config" && w[1] == "set" && w[2].starts_with("registry"))
    {
        out.push(sig(
            Category::SupplyChain,
            Severity::High,
            format!("`{}` changes the npm registry", c.text),
            "registry",
        ));
        return;
    }
    typosquat_signals(c, name, out);
    let installs = a
        .iter()
        .any(|x| matches!(x.as_str(), "install" | "add" | "i"));
    if !installs {
        return;
    }
    for x in a.iter().filter(|x| !x.starts_with('-')) {
        let remote = x.starts_with("git+")
            || x.starts_with("http://")
            || x.starts_with("https://")
            || x.starts_with("github:")
            || x.starts_with("git@")
            || x.ends_with(".tar.gz")
            || x.ends_with(".tgz")
            || x.ends_with(".whl") && x.contains("://");
        if remote {
            out.push(sig(
                Category::SupplyChain,
                Severity::High,
                format!("`{}` installs from {x}", c.text),
                x,
            ));
        }
    }
}

/// Popular packages per ecosystem, whose look-alikes are how typosquatting gets installed.
const POPULAR_NPM: &[&str] = &[
    "react",
    "react-dom",
    "lodash",
    "express",
    "axios",
    "chalk",
    "commander",
    "moment",
    "request",
    "debug",
    "cross-env",
    "dotenv",
    "typescript",
    "webpack",
    "eslint",
    "prettier",
    "jest",
    "mocha",
    "nodemon",
    "uuid",
    "yargs",
    "rimraf",
    "mkdirp",
    "underscore",
    "bluebird",
    "body-parser",
    "jsonwebtoken",
    "bcrypt",
    "mongoose",
    "socket.io",
    "redux",
    "vitest",
    "electron",
    "puppeteer",
    "cheerio",
    "semver",
    "minimist",
    "inquirer",
    "date-fns",
    "dayjs",
    "node-fetch",
    "fs-extra",
    "esbuild",
    "rollup",
    "tailwindcss",
    "postcss",
    "jquery",
    "bootstrap",
    "nodemailer",
    "coffee-script",
    "babel-cli",
    "http-proxy",
    "event-stream",
    "ua-parser-js",
    "discord.js",
];
const POPULAR_PYPI: &[&str] = &[
    "requests",
    "urllib3",
    "python-dateutil",
    "numpy",
    "pandas",
    "django",
    "flask",
    "fastapi",
    "pyyaml",
    "setuptools",
    "boto3",
    "botocore",
    "certifi",
    "charset-normalizer",
    "cryptography",
    "pytest",
    "pillow",
    "matplotlib",
    "scipy",
    "scikit-learn",
    "beautifulsoup4",
    "sqlalchemy",
    "jinja2",
    "colorama",
    "httpx",
    "pydantic",
    "psycopg2",
    "celery",
    "selenium",
    "openai",
    "tensorflow",
    "virtualenv",
    "uvicorn",
    "gunicorn",
    "aiohttp",
    "jsonschema",
    "simplejson",
    "python-dotenv",
    "opencv-python",
    "pycryptodome",
    "paramiko",
    "docutils",
    "markdown",
];
const POPULAR_GO: &[&str] = &[
    "github.com/gorilla/mux",
    "github.com/sirupsen/logrus",
    "github.com/spf13/cobra",
    "github.com/spf13/viper",
    "github.com/stretchr/testify",
    "github.com/gin-gonic/gin",
    "github.com/pkg/errors",
    "github.com/google/uuid",
    "github.com/golang/protobuf",
    "google.golang.org/grpc",
    "github.com/labstack/echo",
    "github.com/go-chi/chi",
    "go.uber.org/zap",
    "github.com/jackc/pgx",
    "github.com/lib/pq",
    "gorm.io/gorm",
    "github.com/redis/go-redis",
    "github.com/prometheus/client_golang",
    "github.com/urfave/cli",
];
const POPULAR_CRATES: &[&str] = &[
    "serde",
    "serde_json",
    "tokio",
    "rand",
    "clap",
    "reqwest",
    "regex",
    "anyhow",
    "thiserror",
    "env_logger",
    "chrono",
    "hyper",
    "axum",
    "futures",
    "lazy_static",
    "once_cell",
    "itertools",
    "proc-macro2",
    "rayon",
    "tracing",
    "bytes",
    "base64",
    "url",
];
const POPULAR_GEMS: &[&str] = &[
    "rails", "rake", "bundler", "nokogiri", "rspec", "devise", "puma", "sinatra", "rack",
];

/// The popular package `pkg` imitates, if it is a look-alike: the same name of five letters or
/// more once `-`, `_`, `.` and digits are dropped (`crossenv`, `python3-dateutil`; not `boto`
/// for `boto3`), or one edit away from a name of at least six letters (`gorillla/mux`,
/// `reqeusts`, a transposition counting as one).
fn typosquat_of(pkg: &str, popular: &'static [&'static str]) -> Option<&'static str> {
    let pkg = pkg.to_ascii_lowercase();
    if pkg.is_empty() || popular.contains(&pkg.as_str()) {
        return None;
    }
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '-' | '_' | '.') && !c.is_ascii_digit())
            .collect()
    };
    let squashed = squash(&pkg);
    popular.iter().copied().find(|p| {
        (squashed.len() >= 5 && squash(p) == squashed)
            || (p.len() >= 6 && strsim::damerau_levenshtein(p, &pkg) == 1)
    })
}

/// Installs (and `npx` runs) of a package whose name imitates a popular one.
fn typosquat_signals(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    let a = args(c);
    let popular = match name {
        "npm" | "pnpm" | "yarn" | "bun" | "npx" => POPULAR_NPM,
        "go" => POPULAR_GO,
        "cargo" => POPULAR_CRATES,
        "gem" => POPULAR_GEMS,
        _ => POPULAR_PYPI,
    };
    let operands: Vec<&String> = a.iter().filter(|x| !x.starts_with('-')).collect();
    let packages: Vec<&String> = if name == "npx" {
        operands.into_iter().take(1).collect()
    } else {
        let Some(i) = operands
            .iter()
            .position(|x| matches!(x.as_str(), "install" | "add" | "i" | "get"))
        else {
            return;
        };
        operands.into_iter().skip(i + 1).collect()
    };
    for p in packages {
        // The name without its version or extras: `x@1.2`, `x==1.2`, `x[extra]`, `@scope/x@1`.
        let bare = match p.char_indices().skip(1).find(|(_, ch)| *ch == '@') {
            Some((i, _)) => &p[..i],
            None => p.as_str(),
        };
        let bare = bare
            .split(['=', '<', '>', '~', '!', '[', ';'])
            .next()
            .unwrap_or(bare);
        if let Some(real) = typosquat_of(bare, popular) {
            out.push(sig(
                Category::SupplyChain,
                Severity::High,
                format!(
                    "`{}` installs `{bare}`, a look-alike of the popular package `{real}` (typosquatting)",
                    c.text
                ),
                bare,
            ));
        }
    }
}

/// A package-manager config file (`.npmrc`, `.yarnrc`, `pip.conf`, …) written to point at a
/// registry other than the default, or to stop checking TLS.
fn registry_config_in(path: &Path, text: &str, out: &mut Vec<Signal>) {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let config = matches!(
        name,
        ".npmrc" | ".yarnrc" | ".yarnrc.yml" | "pip.conf" | "pip.ini" | ".pypirc" | "bunfig.toml"
    ) || (name.starts_with("config") && path.to_string_lossy().contains("/.cargo/"));
    if !config {
        return;
    }
    const DEFAULTS: &[&str] = &[
        "registry.npmjs.org",
        "registry.yarnpkg.com",
        "pypi.org",
        "files.pythonhosted.org",
        "upload.pypi.org",
        "crates.io",
        "index.crates.io",
    ];
    for line in text.lines() {
        // A diff's removed lines and context say nothing about what is written.
        if line.starts_with('-') || line.starts_with("@@") {
            continue;
        }
        let l = line.trim_start_matches('+').trim().to_ascii_lowercase();
        let key_value = l.split_once(['=', ':']).map(|(k, v)| (k.trim(), v.trim()));
        let Some((key, value)) = key_value else {
            continue;
        };
        let insecure = matches!(key, "strict-ssl" | "strictssl" | "enablestrictssl")
            && value.trim_matches('"') == "false"
            || key == "trusted-host";
        let registry = key.ends_with("registry")
            || key == "npmregistryserver"
            || key.ends_with("index-url")
            || key == "index"
            || key == "repository";
        let host = value
            .trim_matches('"')
            .split("://")
            .nth(1)
            .unwrap_or("")
            .split(['/', ':'])
            .next()
            .unwrap_or("");
        if insecure || (registry && !host.is_empty() && !DEFAULTS.contains(&host)) {
            out.push(sig(
                Category::SupplyChain,
                Severity::High,
                format!(
                    "writes {} so that packages come {}",
                    path.display(),
                    if insecure {
                        "without TLS verification".to_string()
                    } else {
                        format!("from {host}")
                    }
                ),
                if host.is_empty() { name } else { host },
            ));
            return;
        }
    }
}

fn rbac_signals(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    let a = args(c);
    let joined = a.join(" ");
    let admin_role = [
        "cluster-admin",
        "admin",
        "owner",
        "roles/owner",
        "roles/editor",
        "Owner",
        "Contributor",
        "AdministratorAccess",
    ];
    let binds = match name {
        "kubectl" | "oc" => {
            (joined.contains("clusterrolebinding") || joined.contains("rolebinding"))
                && (a.first().is_some_and(|x| x == "create") || joined.contains("add-role"))
        }
        "gcloud" => joined.contains("add-iam-policy-binding"),
        "az" => joined.contains("role assignment create"),
        "aws" => {
            joined.contains("attach-user-policy")
                || joined.contains("attach-role-policy")
                || joined.contains("put-user-policy")
        }
        _ => false,
    };
    if binds {
        let admin = admin_role.iter().any(|r| joined.contains(r));
        out.push(sig(
            Category::Privilege,
            if admin {
                Severity::Critical
            } else {
                Severity::High
            },
            format!("`{}` grants a role", c.text),
            a.iter()
                .find(|x| !x.starts_with('-') && *x != "create")
                .map_or(name, String::as_str),
        ));
    }
}

/// MCP and app tools: what their name and arguments say they do.
fn mcp_signals(server: &str, tool: &str, args: &str, cfg: &SignalsConfig, out: &mut Vec<Signal>) {
    let t = tool.to_ascii_lowercase();
    let words: Vec<&str> = t
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let any = |list: &[&str]| words.iter().any(|w| list.iter().any(|v| w.starts_with(v)));
    let who = format!("{server}/{tool}");
    let recipient = recipient_of(args).unwrap_or_else(|| who.clone());
    let compact: String = args
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    if words.iter().any(|w| w.starts_with("repo"))
        && (compact.contains("\"private\":false") || compact.contains("\"visibility\":\"public\""))
    {
        out.push(sig(
            Category::NetworkEgress,
            Severity::High,
            format!("{who} makes a repository public"),
            &recipient,
        ));
    }
    if any(&[
        "send", "post", "share", "publish", "upload", "email", "mail", "message", "tweet",
        "forward", "invite", "notify",
    ]) {
        out.push(sig(
            Category::NetworkEgress,
            Severity::Medium,
            format!("{who} sends data out (to {recipient})"),
            &recipient,
        ));
    }
    if any(&[
        "delete",
        "remove",
        "purge",
        "cancel",
        "transfer",
        "pay",
        "refund",
        "withdraw",
        "drop",
        "destroy",
        "wipe",
        "revoke",
        "archive",
        "close",
        "terminate",
    ]) {
        out.push(sig(
            Category::Destructive,
            Severity::High,
            format!("{who} deletes, cancels or moves something"),
            &recipient,
        ));
    }
    if any(&[
        "grant",
        "role",
        "permission",
        "access",
        "share",
        "admin",
        "promote",
        "invite",
    ]) && (t.contains("grant")
        || t.contains("role")
        || t.contains("permission")
        || t.contains("access")
        || t.contains("admin"))
    {
        out.push(sig(
            Category::Privilege,
            Severity::High,
            format!("{who} grants roles or access"),
            &recipient,
        ));
    }
    if any(&["deploy", "release", "rollout", "scale"]) {
        out.push(sig(
            Category::Production,
            if args.to_ascii_lowercase().contains("prod") {
                Severity::High
            } else {
                Severity::Medium
            },
            format!("{who} changes something deployed"),
            &recipient,
        ));
    }
    let st = format!("{} {t}", server.to_ascii_lowercase());
    if ["secret", "credential", "password", "vault", "keychain"]
        .iter()
        .any(|w| st.contains(w))
    {
        out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("{who} handles secrets"),
            &recipient,
        ));
    }
    if ["protection", "collaborator", "ruleset"]
        .iter()
        .any(|w| t.contains(w))
    {
        out.push(sig(
            Category::Privilege,
            Severity::High,
            format!("{who} changes who may do what"),
            &recipient,
        ));
    }
    sql_text_signals(args, &who, true, out);
    // Hosts the arguments send the tool to.
    let mut seen = std::collections::HashSet::new();
    for (i, _) in args.match_indices("://") {
        let scheme_ok = args[..i].ends_with("http") || args[..i].ends_with("https");
        let host: String = args[i + 3..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
            .collect();
        if scheme_ok && !host.is_empty() && seen.insert(host.clone()) {
            host_signal(&host, false, cfg, out);
        }
    }
}

/// The recipient, channel, repository or account an MCP call's arguments name.
fn recipient_of(args: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    let obj = v.as_object()?;
    for k in [
        "to",
        "recipient",
        "recipients",
        "channel",
        "email",
        "address",
        "user",
        "username",
        "repo",
        "repository",
        "account",
        "destination",
        "url",
        "target",
        "id",
        "name",
    ] {
        if let Some(x) = obj.get(k) {
            let s = match x {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(a) => a
                    .iter()
                    .filter_map(|e| e.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            };
            if !s.is_empty() {
                return Some(s);
            }
        }
    }
    None
}

/// Whether the user's intent names `target`: one of the target's distinctive tokens (a file
/// name, a host or its registrable part, a branch, a namespace, a tool) appears in the intent
/// as a word.
pub fn named_in_intent(target: &str, intent: &str) -> bool {
    let intent = intent.to_ascii_lowercase();
    let intent_words: Vec<&str> = intent
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')))
        .filter(|w| !w.is_empty())
        .collect();
    let target = target.to_ascii_lowercase();
    let mut tokens: Vec<String> = vec![target.clone()];
    tokens.extend(
        target
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
            .filter(|t| t.len() >= 3)
            .map(str::to_string),
    );
    // A host's registrable part: `api.prod.example.com` → `example`.
    if target.contains('.') && !target.contains('/') {
        let parts: Vec<&str> = target.split('.').collect();
        if parts.len() >= 2 {
            tokens.push(parts[parts.len() - 2].to_string());
        }
    }
    const GENERIC: &[&str] = &[
        "the",
        "and",
        "com",
        "org",
        "net",
        "www",
        "http",
        "https",
        "git",
        "src",
        "tmp",
        "usr",
        "etc",
        "home",
        "bin",
        "lib",
        "var",
        "local",
        "config",
        "file",
        "files",
        "push",
        "main",
        "all",
        "refs",
        "environment",
        "history",
        "remote",
        "code",
        "json",
        "txt",
    ];
    let trim = |x: &str| {
        x.trim_matches(|c: char| matches!(c, '.' | '-' | '/' | '~'))
            .to_string()
    };
    tokens.iter().map(|t| trim(t)).any(|t| {
        !GENERIC.contains(&t.as_str())
            && t.len() >= 3
            && intent_words.iter().any(|w| {
                let w = trim(w);
                w == t || w.ends_with(&format!("/{t}")) || (t.len() >= 5 && w.contains(t.as_str()))
            })
    })
}

/// A signal as a line of trusted facts in the reviewer's prompt.
pub fn fact(s: &Signal) -> String {
    format!(
        "RISK SIGNAL ({}, {}): {}; the user's request {} its target",
        s.category.as_str(),
        s.severity.as_str(),
        s.evidence,
        if s.named_in_intent {
            "names"
        } else {
            "does not name"
        }
    )
}

//! Scope signals: system locations read and system services stopped that the user did not name.

use super::*;

/// Signals about the task's scope, raised only when the user's intent does not name their
/// target: reading system locations outside the workspace, and stopping system services. Asked
/// for by name they are the task; unasked, they are reconnaissance or sabotage.
pub(super) fn scope_signals(
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
pub(super) const SYSTEM_DATA: &[&str] = &[
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
pub(super) const SYSTEM_DIRS: &[&str] = &[
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
pub(super) const PLATFORM_FACTS: &[&str] = &[
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
pub(super) fn system_read(p: &Path, ctx: &Context, intent: &str, out: &mut Vec<Signal>) {
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
pub(super) fn area_named(p: &Path, intent: &str) -> bool {
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
pub(super) fn path_named(p: &Path, intent: &str) -> bool {
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
pub(super) const SYSTEM_SERVICES: &[&str] = &[
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
pub(super) fn service_kill(
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

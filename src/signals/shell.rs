//! Shell command signals: the table of program families ([`FAMILIES`]) and the signals of
//! privileges, containers, SQL clients, production targets and role bindings.

use super::*;

/// Words that say a subcommand or tool only reads.
pub(super) const READ_ONLY_VERBS: &[&str] = &[
    "get", "describe", "list", "ls", "show", "status", "logs", "log", "diff", "explain", "version",
    "lint", "template", "plan", "fmt", "validate", "view", "top", "history", "output", "preview",
    "inspect", "search", "read", "fetch", "query", "info", "help", "whoami", "check", "dry-run",
];

/// Programs that raise privileges, however they are reached (`pkexec /bin/sh` is a wrapper
/// around a shell with no script, `sudoedit` edits as root, `busybox su`).
pub(super) const PRIVILEGE_PROGRAMS: &[&str] = &[
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

pub(super) fn privilege_signal(c: &SimpleCommand, out: &mut Vec<Signal>) {
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
        if c.privileged && routine_as_root(c) {
            Severity::Medium
        } else {
            Severity::High
        },
        format!("`{}` runs with {w}", c.text),
        name,
    ));
}

/// What CI jobs and developers routinely run as root, whose effect stays within what it names:
/// packages installed from the system's configured repositories by name (`sudo apt-get
/// install -y libssl-dev`; no files, URLs or options beyond assent and quiet), a service
/// restarted, reloaded, started or inspected (`systemctl restart postgresql`; not enabled,
/// stopped or masked), and read-only diagnostics (`lsof`, `ss`, `netstat`, `journalctl`,
/// `dmesg`). Anything else run as root stays a high signal.
fn routine_as_root(c: &SimpleCommand) -> bool {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    let a = args(c);
    let package_name = |x: &String| {
        !x.is_empty()
            && x.chars().all(|ch| {
                ch.is_ascii_alphanumeric() || matches!(ch, '-' | '.' | '+' | '_' | ':' | '=')
            })
            && !x.ends_with(".deb")
            && !x.ends_with(".rpm")
    };
    match name {
        "apt-get" | "apt" | "dnf" | "yum" | "zypper" | "apk" => {
            let sub = a.iter().find(|x| !x.starts_with('-')).map(String::as_str);
            let quiet = |x: &String| {
                matches!(
                    x.as_str(),
                    "-y" | "--yes"
                        | "-q"
                        | "-qq"
                        | "--quiet"
                        | "--no-install-recommends"
                        | "--no-cache"
                        | "--assume-yes"
                        | "--non-interactive"
                )
            };
            match sub {
                Some("update") => a.iter().all(|x| x == "update" || quiet(x)),
                Some("install" | "add") => a
                    .iter()
                    .skip_while(|x| !matches!(x.as_str(), "install" | "add"))
                    .skip(1)
                    .all(|x| quiet(x) || (!x.starts_with('-') && package_name(x))),
                _ => false,
            }
        }
        "systemctl" => {
            let words: Vec<&String> = a.iter().filter(|x| !x.starts_with('-')).collect();
            a.iter().all(|x| !x.starts_with('-') || x == "--no-pager")
                && matches!(
                    words.first().map(|w| w.as_str()),
                    Some("restart" | "reload" | "start" | "status" | "try-restart")
                )
                && words.len() >= 2
                && words[1..].iter().all(|w| package_name(w))
        }
        "lsof" | "ss" | "netstat" | "journalctl" | "dmesg" => !a
            .iter()
            .any(|x| x.starts_with("--vacuum") || x == "--rotate" || x == "-C" || x == "--clear"),
        _ => false,
    }
}

/// What a command's name and words say it does: the families of programs whose words are
/// read, like the normaliser's `effects::FAMILIES`. A new program is one entry here and one
/// small function.
type Family = (
    &'static [&'static str],
    fn(&SimpleCommand, &Context, &mut Vec<Signal>),
);

/// The program families (a program may be in more than one).
pub(super) const FAMILIES: &[Family] = &[
    (&["env", "printenv", "set", "export", "declare"], env_dump),
    (&["history"], history),
    (
        &["security", "gh", "gcloud", "aws", "az", "vault", "heroku"],
        token_printers,
    ),
    (&["crontab", "systemctl", "launchctl"], persistence),
    (&["git"], |c, _, out| git_signals(c, out)),
    (&["rm", "rmdir", "unlink", "shred"], rm_signals),
    (
        &[
            "mkfs", "fdisk", "sfdisk", "parted", "wipefs", "mkswap", "dd",
        ],
        disks,
    ),
    (&["chmod"], setuid_bits),
    (
        &["usermod", "gpasswd", "adduser", "visudo"],
        privileged_groups,
    ),
    (&["echo", "printf", "print"], echo_secret),
    (&["find"], find_signals),
    (
        &["grep", "egrep", "fgrep", "rg", "ag", "ack"],
        secret_search,
    ),
    (
        &["docker", "podman", "docker-compose", "podman-compose"],
        |c, _, out| container_signals(c, out),
    ),
    (&["gh"], |c, _, out| gh_signals(c, out)),
    (&["glab"], |c, _, out| {
        gh_signals(&super::glab_as_gh(c), out)
    }),
];

/// Signals every command is read for, whatever its program.
const EVERY_COMMAND: &[fn(&SimpleCommand, &str, &mut Vec<Signal>)] = &[
    |c, _, out| sql_signals(c, out),
    production_signals,
    supply_chain_signals,
    rbac_signals,
    publish_signals,
    safeguard_signals,
    cluster_secret_values,
];

pub(super) fn command_signals(
    c: &SimpleCommand,
    ctx: &Context,
    cfg: &SignalsConfig,
    out: &mut Vec<Signal>,
) {
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
    if matches!(name, "curl" | "wget" | "http" | "https" | "xh" | "httpie") {
        for url in c.argv.iter().skip(1).filter(|a| a.contains("://")) {
            deploy_hook_signal(url, out);
        }
    }
    // `mkfs.ext4` is `mkfs`.
    let family = if name.starts_with("mkfs.") {
        "mkfs"
    } else {
        name
    };
    for (_, f) in FAMILIES.iter().filter(|(names, _)| names.contains(&family)) {
        f(c, ctx, out);
    }
    for f in EVERY_COMMAND {
        f(c, name, out);
    }
}

/// `env`, `printenv`, `set`, `export`, `declare` without arguments dump the environment.
fn env_dump(c: &SimpleCommand, _: &Context, out: &mut Vec<Signal>) {
    if args(c).iter().all(|a| a.starts_with('-')) {
        out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("`{}` dumps the environment", c.text),
            "environment",
        ));
    }
}

fn history(c: &SimpleCommand, _: &Context, out: &mut Vec<Signal>) {
    out.push(sig(
        Category::CredentialAccess,
        Severity::Medium,
        format!("`{}` reads the shell history", c.text),
        "history",
    ));
}

/// The keychain, `gh auth token`, `gcloud … print-access-token`, `aws configure get`.
fn token_printers(c: &SimpleCommand, _: &Context, out: &mut Vec<Signal>) {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    let (what, target) = match name {
        "security"
            if args(c)
                .iter()
                .any(|a| a.starts_with("find-") && a.contains("password")) =>
        {
            ("reads the keychain", "keychain")
        }
        "gh" if c.argv.get(1..3) == Some(&["auth".into(), "token".into()]) => {
            ("prints a GitHub token", "gh auth token")
        }
        "gcloud" if c.argv.iter().any(|a| a == "print-access-token") => {
            ("prints a cloud token", "gcloud token")
        }
        "aws" if c.argv.get(1..3) == Some(&["configure".into(), "get".into()]) => {
            ("reads AWS credentials", "aws configure")
        }
        // A secret store's value (not its metadata: `describe-secret`, `list-secrets`,
        // `secrets describe`, `keyvault secret list` say whether it exists and when it rotated).
        "aws" if args(c).iter().any(|a| a == "get-secret-value") => (
            "prints a secret's value from Secrets Manager",
            "secret value",
        ),
        "aws"
            if args(c)
                .iter()
                .any(|a| a == "get-parameter" || a == "get-parameters")
                && args(c).iter().any(|a| a == "--with-decryption") =>
        {
            ("prints a decrypted SSM parameter", "secret value")
        }
        "gcloud"
            if c.argv
                .windows(3)
                .any(|w| w[0] == "secrets" && w[1] == "versions" && w[2] == "access") =>
        {
            (
                "prints a secret's value from Secret Manager",
                "secret value",
            )
        }
        "az" if c
            .argv
            .windows(3)
            .any(|w| w[0] == "keyvault" && w[1] == "secret" && w[2] == "show") =>
        {
            ("prints a Key Vault secret's value", "secret value")
        }
        "vault"
            if c.argv.get(1).is_some_and(|s| s == "read")
                || c.argv.get(1..3) == Some(&["kv".into(), "get".into()]) =>
        {
            ("prints a Vault secret", "secret value")
        }
        // `heroku config` prints every config var; `config:get` one, and a URL, key, token or
        // password among them is a credential (DATABASE_URL carries the password).
        "heroku"
            if c.argv.get(1).is_some_and(|s| s == "config")
                || c.argv.get(1).is_some_and(|s| s == "config:get")
                    && args(c).iter().skip(1).any(|v| {
                        let v = v.to_ascii_uppercase();
                        !v.starts_with('-')
                            && [
                                "URL",
                                "KEY",
                                "SECRET",
                                "TOKEN",
                                "PASSWORD",
                                "DSN",
                                "CREDENTIAL",
                            ]
                            .iter()
                            .any(|k| v.contains(k))
                    }) =>
        {
            ("prints an app's secret configuration", "heroku config")
        }
        _ => return,
    };
    out.push(sig(
        Category::CredentialAccess,
        Severity::High,
        format!("`{}` {what}", c.text),
        target,
    ));
}

/// `crontab` (not `-l`), `systemctl enable|link|edit`, `launchctl load|bootstrap|enable`.
fn persistence(c: &SimpleCommand, _: &Context, out: &mut Vec<Signal>) {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    let (what, target) = match name {
        "crontab" if !has(c, &["-l"]) => ("changes the crontab", "crontab"),
        "systemctl" if matches!(subcommand(c), Some("enable" | "link" | "edit")) => (
            "makes a service start by itself",
            args(c).last().map_or("systemctl", String::as_str),
        ),
        "launchctl" if matches!(subcommand(c), Some("load" | "bootstrap" | "enable")) => {
            ("loads a launchd job", "launchctl")
        }
        _ => return,
    };
    out.push(sig(
        Category::Persistence,
        Severity::High,
        format!("`{}` {what}", c.text),
        target,
    ));
}

/// Disk and filesystem tools, and `dd of=/dev/…`.
fn disks(c: &SimpleCommand, _: &Context, out: &mut Vec<Signal>) {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    let what = if name.starts_with("mkfs.") {
        "makes a filesystem"
    } else if name == "dd" {
        if !args(c).iter().any(|a| a.starts_with("of=/dev/")) {
            return;
        }
        "writes a raw device"
    } else {
        "rewrites a disk or filesystem"
    };
    let target = if name == "dd" {
        "dd"
    } else {
        args(c).last().map_or(name, String::as_str)
    };
    out.push(sig(
        Category::Destructive,
        Severity::Critical,
        format!("`{}` {what}", c.text),
        target,
    ));
}

fn setuid_bits(c: &SimpleCommand, _: &Context, out: &mut Vec<Signal>) {
    if args(c).iter().any(|a| is_setuid_mode(a)) {
        out.push(sig(
            Category::Privilege,
            Severity::High,
            format!("`{}` sets a setuid/setgid bit", c.text),
            args(c).last().map_or("chmod", String::as_str),
        ));
    }
}

/// A user added to a privileged group; `visudo`.
fn privileged_groups(c: &SimpleCommand, _: &Context, out: &mut Vec<Signal>) {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    if name == "visudo" {
        out.push(sig(
            Category::Privilege,
            Severity::High,
            format!("`{}` edits sudoers", c.text),
            "sudoers",
        ));
    } else if args(c)
        .iter()
        .any(|a| matches!(a.as_str(), "sudo" | "wheel" | "docker" | "admin" | "root"))
    {
        out.push(sig(
            Category::Privilege,
            Severity::High,
            format!("`{}` adds a user to a privileged group", c.text),
            args(c).last().map_or(name, String::as_str),
        ));
    }
}

fn echo_secret(c: &SimpleCommand, _: &Context, out: &mut Vec<Signal>) {
    if let Some(var) = args(c).iter().find_map(|a| secret_var(a)) {
        out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("`{}` prints the secret variable ${var}", c.text),
            &var,
        ));
    }
}

pub(super) fn container_signals(c: &SimpleCommand, out: &mut Vec<Signal>) {
    let a = args(c);
    // `docker push`, and a build that pushes what it built (`docker buildx build --push`,
    // `--output type=registry`).
    let build_push = matches!(subcommand(c), Some("build" | "buildx"))
        && a.iter()
            .any(|x| x == "--push" || x.contains("type=registry") || x.contains("push=true"));
    if subcommand(c) == Some("push") || build_push {
        out.push(sig(
            Category::Production,
            medium_or_high_in_prod(c),
            format!("`{}` publishes an image", c.text),
            if build_push {
                option_value(a, &["-t", "--tag"]).unwrap_or("image")
            } else {
                a.last().map_or("image", String::as_str)
            },
        ));
    }
    // Volumes hold the data of local databases and caches: pruning or removing them deletes it
    // (`docker system prune --volumes`, `docker volume prune|rm`, `docker compose down -v`, and
    // so `docker-compose down -v`: compose's own binaries are read as `docker compose`).
    // Medium: local data, but more than images or containers, which a build recreates.
    let standalone = c
        .argv
        .first()
        .is_some_and(|p| base(p).ends_with("-compose"));
    let words: Vec<&str> = standalone
        .then_some("compose")
        .into_iter()
        .chain(a.iter().map(String::as_str))
        .collect();
    let volumes = match words.as_slice() {
        ["system", "prune", rest @ ..] => rest.contains(&"--volumes"),
        ["volume", "prune" | "rm", ..] => true,
        ["compose", rest @ ..] => {
            rest.contains(&"down") && (rest.contains(&"-v") || rest.contains(&"--volumes"))
        }
        _ => false,
    };
    if volumes {
        out.push(sig(
            Category::Destructive,
            Severity::Medium,
            format!(
                "`{}` deletes container volumes and the data in them",
                c.text
            ),
            "volumes",
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

pub(super) fn sql_signals(c: &SimpleCommand, out: &mut Vec<Signal>) {
    let before = out.len();
    let mut raised = sql_text_signals(&c.argv.join(" "), &format!("`{}`", c.text), false, out);
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    // MongoDB's shell: deleting every document or dropping a collection or database.
    if !raised && matches!(name, "mongosh" | "mongo") {
        let script = c.argv.join(" ");
        if ["deleteMany(", "dropDatabase(", ".drop(", ".remove("]
            .iter()
            .any(|k| script.contains(k))
        {
            // The collection (`db.events.deleteMany`), else the server's URL.
            let collection = script.split("db.").nth(1).and_then(|rest| {
                let (coll, after) = rest.split_once('.')?;
                (!after.starts_with("dropDatabase") && !coll.is_empty()).then_some(coll)
            });
            let target = collection.unwrap_or_else(|| {
                args(c)
                    .iter()
                    .find(|a| a.contains("://"))
                    .map_or(name, String::as_str)
            });
            out.push(sig(
                Category::Destructive,
                Severity::High,
                format!("`{}` deletes documents or collections", c.text),
                target,
            ));
            raised = true;
        }
    }
    shared_database(c, before, out);
    if !raised
        && matches!(name, "dropdb" | "redis-cli")
        && (name == "dropdb"
            || c.argv
                .iter()
                .any(|a| a.eq_ignore_ascii_case("flushall") || a.eq_ignore_ascii_case("flushdb")))
    {
        // Redis on this machine is the developer's own cache or test store: emptying it is
        // medium, and "redis" in the user's words names it.
        let local_redis = name == "redis-cli" && on_this_machine(c);
        out.push(if local_redis {
            sig(
                Category::Destructive,
                Severity::Medium,
                format!("`{}` empties a Redis database on this machine", c.text),
                "local redis",
            )
        } else {
            sig(
                Category::Destructive,
                Severity::High,
                format!("`{}` deletes a database", c.text),
                args(c).last().map_or(name, String::as_str),
            )
        });
    }
    disposable_database(c, before, out);
}

/// Words of a database name that say it holds nothing anyone keeps: a developer's or a test
/// suite's own copy (`myapp_dev`, `billing_test`, `orders_test.orders`, `events-e2e`).
const DISPOSABLE: &[&str] = &[
    "dev",
    "development",
    "test",
    "tests",
    "testing",
    "tmp",
    "temp",
    "scratch",
    "ci",
    "e2e",
    "sandbox",
    "fixture",
    "fixtures",
];

/// Emptying or dropping a database on this machine (no host, or a local one) whose name says
/// it is a development or test copy is the developer's own data: its destructive signals are
/// medium, not high, so the user's words naming it authorise it as they do for files in the
/// workspace. A host or URL held in a variable (`"$STAGING_MONGO_URI"`) is not known to be
/// local.
fn disposable_database(c: &SimpleCommand, from: usize, out: &mut [Signal]) {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    if !(SQL_CLIENTS.contains(&name) || name == "dropdb") || !on_this_machine(c) {
        return;
    }
    const VALUED: &[&str] = &[
        "-h",
        "--host",
        "-U",
        "--username",
        "-u",
        "--user",
        "-p",
        "-P",
        "--port",
        "-c",
        "--command",
        "-e",
        "--execute",
        "--eval",
        "-f",
        "--file",
        "-S",
    ];
    // The database's names: URL paths, positional words, and the objects the signals name.
    let mut names: Vec<String> = operands(args(c), VALUED)
        .into_iter()
        .filter(|x| !x.contains(char::is_whitespace))
        .map(|x| match x.split_once("://") {
            Some((_, rest)) => rest.split(['?', '#']).next().unwrap_or("").to_string(),
            None => x.to_string(),
        })
        .collect();
    names.extend(out[from..].iter().map(|s| s.target.clone()));
    let disposable = names.iter().any(|n| {
        n.to_ascii_lowercase()
            .split(['_', '-', '.', '/', ':'])
            .any(|part| DISPOSABLE.contains(&part))
    });
    if !disposable {
        return;
    }
    for s in &mut out[from..] {
        if s.category == Category::Destructive && s.severity == Severity::High {
            s.severity = Severity::Medium;
            s.evidence = format!("{} (a local development or test database)", s.evidence);
        }
    }
}

/// Whether a database client connects to this machine: no host, or a local one, and none held
/// in a variable (`"$STAGING_MONGO_URI"` is not known to be local).
fn on_this_machine(c: &SimpleCommand) -> bool {
    !c.argv.iter().any(|a| a.contains('$')) && client_host(c).as_deref().is_none_or(local_host)
}

/// Where a database client connects: the host of a URL argument, or `-h`/`--host`/`-S`.
fn client_host(c: &SimpleCommand) -> Option<String> {
    let a = args(c);
    a.iter().enumerate().find_map(|(i, x)| {
        if x.contains("://") {
            crate::normalize::shell::effects::host_of(x)
        } else if matches!(x.as_str(), "-h" | "--host" | "-S") {
            a.get(i + 1).cloned()
        } else {
            x.strip_prefix("--host=").map(str::to_string)
        }
    })
}

/// A host that is this machine (or a compose service's usual name for its database).
pub(super) fn local_host(host: &str) -> bool {
    matches!(
        host,
        "localhost" | "127.0.0.1" | "::1" | "db" | "postgres" | "mysql"
    ) || host.starts_with("127.")
        || host.starts_with('/')
        || host.ends_with(".local")
        || host.ends_with(".localhost")
}

/// SQL in a command line or a tool's arguments: dropping, truncating or deleting everything is
/// destructive (high), other changes to data through a tool (`data_changes`) medium;
/// `COPY … TO PROGRAM` runs a program on the database server. Returns whether it raised a
/// signal.
pub(super) fn sql_text_signals(
    text: &str,
    who: &str,
    data_changes: bool,
    out: &mut Vec<Signal>,
) -> bool {
    let upper = text.to_ascii_uppercase();
    // The object a statement acts on: the first word after the keyword that is not one of
    // SQL's own (`DROP TABLE IF EXISTS t`, `TRUNCATE TABLE ONLY t` → `t`), qualifier kept
    // (`orders_test.orders`).
    let target_after = |i: usize, kw: &str| {
        upper[i + kw.len()..]
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '.'))
            .find(|w| !matches!(*w, "" | "IF" | "EXISTS" | "TABLE" | "ONLY" | "FROM"))
            .unwrap_or("")
            .trim_matches('.')
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

/// A mutating verb applied to every resource of a kind when one was not named: `kubectl rollout
/// restart deployment` (no name: all of them in the namespace), `--all`, `--all-namespaces`, or
/// any infrastructure tool whose targets are what a listing returns (`az vm deallocate --ids
/// $(az vm list -g rg --query "[].id" -o tsv)`). High: the over-eager form of restarting or
/// deleting the one item the user meant.
fn every_resource(c: &SimpleCommand, name: &str, words: &[&str], out: &mut Vec<Signal>) {
    if let Some(listing) = args(c).iter().find_map(|a| listed_by_substitution(a)) {
        out.push(sig(
            Category::Production,
            Severity::High,
            format!(
                "`{}` acts on every item `{listing}` lists, not one named",
                c.text
            ),
            "all-listed",
        ));
        return;
    }
    if !matches!(name, "kubectl" | "oc") {
        return;
    }
    let kind_at = match words.first().copied() {
        Some("rollout") => 2,
        _ => 1,
    };
    let unnamed_kind = words
        .get(kind_at)
        .is_some_and(|k| !k.contains('/') && words.get(kind_at + 1).is_none());
    let selected = has(
        c,
        &["-l", "--selector", "-f", "--filename", "--field-selector"],
    ) || args(c)
        .iter()
        .any(|a| a.starts_with("--selector=") || a.starts_with("-l="));
    let all = has(c, &["--all", "-A", "--all-namespaces"]);
    let bulk = all || (words.first() == Some(&"rollout") && unnamed_kind && !selected);
    if bulk {
        let kind = words.get(kind_at).copied().unwrap_or("resources");
        out.push(sig(
            Category::Production,
            Severity::High,
            format!("`{}` acts on every {kind}, not one named", c.text),
            &format!("all-{kind}"),
        ));
    }
}

/// The listing command of a `$( … )` or backquoted substitution in `arg`, when it runs an
/// infrastructure tool's list, get or query (`$(aws ec2 describe-instances --query …)`).
fn listed_by_substitution(arg: &str) -> Option<&str> {
    let start = arg
        .find("$(")
        .map(|i| i + 2)
        .or_else(|| arg.find('`').map(|i| i + 1))?;
    let inner = arg[start..]
        .split([')', '`'])
        .next()
        .unwrap_or_default()
        .trim();
    let mut w = inner.split_whitespace();
    let tool = w.next().map(base)?;
    if !matches!(
        tool,
        "aws" | "gcloud" | "az" | "kubectl" | "oc" | "doctl" | "hcloud" | "gh" | "docker"
    ) {
        return None;
    }
    w.any(|x| {
        matches!(x, "list" | "ls" | "get" | "ps" | "images" | "query")
            || x.starts_with("list-")
            || x.starts_with("describe-")
    })
    .then_some(inner)
}

/// kubectl's, oc's and helm's options that take the next word as their value.
pub(crate) const KUBE_VALUED: &[&str] = &[
    "-n",
    "--namespace",
    "--context",
    "--cluster",
    "--kubeconfig",
    "--user",
    "-s",
    "--server",
    "--as",
    "--as-group",
    "--token",
    "-l",
    "--selector",
    "-o",
    "--output",
    "-c",
    "--container",
    "--kube-context",
    "--field-selector",
    "--replicas",
    "--timeout",
    "-p",
    "--patch",
    "--type",
];

/// A command's words that are not options, without the values of kubectl's and helm's options
/// that take one (`kubectl -n staging get secret x` → `get secret x`, not `staging …`).
fn positional_words<'a>(c: &'a SimpleCommand, name: &str) -> Vec<&'a str> {
    let valued = if matches!(name, "kubectl" | "oc" | "helm") {
        KUBE_VALUED
    } else {
        &[]
    };
    operands(args(c), valued)
}

/// The words that are neither options nor the value after one of the `valued` options.
fn operands<'a>(a: &'a [String], valued: &[&str]) -> Vec<&'a str> {
    a.iter()
        .enumerate()
        .filter(|(i, x)| {
            let option_value = *i > 0 && a.get(i - 1).is_some_and(|p| valued.contains(&p.as_str()));
            !(x.starts_with('-') || option_value)
        })
        .map(|(_, x)| x.as_str())
        .collect()
}

/// The mutating verb of an `aws`, `gcloud` or `az` command line, if it has one.
fn cloud_verb(c: &SimpleCommand, name: &str, words: &[&str]) -> Option<String> {
    // aws's operation is its second word (`aws iam list-access-keys --user-name
    // deploy-bot` lists, whatever its option values say); gcloud's and az's verbs
    // come after their command groups, so any word may be one.
    let candidates: Vec<&str> = match name {
        "aws" => aws_operation(args(c)).into_iter().collect(),
        _ => words.to_vec(),
    };
    candidates
        .into_iter()
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
                "deallocate",
                "restart",
                "resize",
                "scale",
                "disable",
                "revoke",
                "purge",
                "failover",
                "swap",
            ]
            .iter()
            .any(|v| *w == *v || w.starts_with(&format!("{v}-")))
        })
        .map(|w| w.to_string())
}

/// The operation of an `aws` command line: its second positional word, option values skipped
/// (`aws --profile prod s3 rm s3://b` → `rm`). Options take a value unless they are one of
/// aws's switches.
fn aws_operation(a: &[String]) -> Option<&str> {
    const SWITCHES: &[&str] = &[
        "--debug",
        "--no-paginate",
        "--no-verify-ssl",
        "--no-sign-request",
        "--no-cli-pager",
        "--no-cli-auto-prompt",
        "--dry-run",
        "--dryrun",
        "--no-dry-run",
        "--recursive",
        "--force",
        "--quiet",
        "--delete",
        "--exact-timestamps",
        "--follow-symlinks",
        "--no-follow-symlinks",
        "--only-show-errors",
        "--no-progress",
        "--human-readable",
        "--summarize",
    ];
    let mut positional = Vec::new();
    let mut i = 0;
    while i < a.len() {
        let x = a[i].as_str();
        if x.starts_with("--") {
            if !x.contains('=') && !SWITCHES.contains(&x) {
                i += 1;
            }
        } else if !x.starts_with('-') {
            positional.push(x);
        }
        i += 1;
    }
    positional.get(1).copied()
}

/// The mutating verb of a deploy or infrastructure tool (`kubectl apply`, `terraform
/// destroy`, `aws … delete-…`), if the command has one.
fn mutating_verb(c: &SimpleCommand, name: &str, words: &[&str]) -> Option<String> {
    let first = words.first().copied().unwrap_or("");
    // `--dry-run`, `--dry-run=client` and `--dry-run=server` change nothing (`=none` does).
    // aws's S3 commands spell it `--dryrun`; aws's EC2 calls, gcloud's and az's that have
    // one, `--dry-run`.
    let dry_run = args(c).iter().any(|a| {
        a == "--dry-run"
            || a == "--dryrun"
            || (a.starts_with("--dry-run=") && a != "--dry-run=none")
    });
    if dry_run && matches!(name, "kubectl" | "oc" | "helm" | "aws" | "gcloud" | "az") {
        return None;
    }
    match name {
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
        // Copying into a bucket (`aws s3 sync build/ s3://site --delete`) changes what it
        // serves; copying out of one changes nothing there.
        "aws"
            if first == "s3"
                && matches!(words.get(1).copied(), Some("sync" | "cp" | "mv"))
                && words.last().is_some_and(|w| w.starts_with("s3://")) =>
        {
            Some(format!("s3 {}", words.get(1).copied().unwrap_or("")))
        }
        "gsutil"
            if matches!(first, "rsync" | "cp" | "mv")
                && words.last().is_some_and(|w| w.starts_with("gs://")) =>
        {
            Some(first.to_string())
        }
        "aws" | "gcloud" | "az" => cloud_verb(c, name, words),
        // A workflow dispatched by hand runs whatever it deploys (`gh workflow run deploy.yml
        // -f env=production`); its inputs say where.
        "gh" if first == "workflow" && words.get(1) == Some(&"run") => Some("workflow run".into()),
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
            || first.starts_with("container:release")
            || first.starts_with("pipelines:promote")
            || first.starts_with("apps:destroy")
            || first.starts_with("ps:"))
        .then(|| first.to_string()),
        "serverless" | "sls" => matches!(first, "deploy" | "remove").then(|| first.to_string()),
        "netlify" => matches!(first, "deploy").then(|| first.to_string()),
        "argocd" => (first == "app"
            && matches!(
                words.get(1).copied(),
                Some("sync" | "delete" | "rollback" | "set" | "create" | "patch" | "terminate-op")
            ))
        .then(|| format!("app {}", words.get(1).copied().unwrap_or(""))),
        _ => None,
    }
}

/// Whether a command runs database migrations (or resets, seeds or drops the schema):
/// alembic, Rails/rake, Django, Flyway, Liquibase, Prisma, knex, Sequelize, Ecto, Diesel, goose,
/// golang-migrate.
fn migrates(name: &str, words: &[&str]) -> bool {
    let first = words.first().copied().unwrap_or("");
    match name {
        "alembic" => words
            .iter()
            .any(|w| matches!(*w, "upgrade" | "downgrade" | "stamp")),
        "rails" | "rake" | "bundle" => words.iter().any(|w| {
            w.starts_with("db:")
                && matches!(
                    w.trim_start_matches("db:"),
                    "migrate"
                        | "rollback"
                        | "schema:load"
                        | "reset"
                        | "drop"
                        | "seed"
                        | "setup"
                        | "migrate:redo"
                        | "migrate:reset"
                        | "prepare"
                )
        }),
        "python" | "python3" | "manage.py" => {
            (name == "manage.py" || words.iter().any(|w| w.ends_with("manage.py")))
                && (words.contains(&"migrate") || words.contains(&"flush"))
        }
        "flyway" => matches!(first, "migrate" | "clean" | "repair" | "undo" | "baseline"),
        "liquibase" => words
            .iter()
            .any(|w| w.starts_with("update") || w.starts_with("rollback") || *w == "drop-all"),
        "prisma" | "npx" | "pnpm" | "yarn" | "bunx" => {
            (words.contains(&"migrate")
                && words
                    .iter()
                    .any(|w| matches!(*w, "deploy" | "reset" | "resolve")))
                || words.windows(2).any(|w| w == ["db", "push"])
                || words.iter().any(|w| w.starts_with("migrate:"))
                || words.iter().any(|w| w.starts_with("db:migrate"))
        }
        "knex" => words.iter().any(|w| w.starts_with("migrate:")),
        "sequelize" | "sequelize-cli" => words.iter().any(|w| w.starts_with("db:migrate")),
        "mix" => words.iter().any(|w| {
            matches!(
                *w,
                "ecto.migrate" | "ecto.rollback" | "ecto.reset" | "ecto.drop"
            )
        }),
        "diesel" => words.windows(2).any(|w| {
            w == ["migration", "run"] || w == ["migration", "revert"] || w == ["database", "reset"]
        }),
        "goose" | "migrate" => words
            .iter()
            .any(|w| matches!(*w, "up" | "down" | "reset" | "drop" | "force")),
        _ => false,
    }
}

/// Whether a command line (its variable assignments included: `RAILS_ENV=production`,
/// `MIX_ENV=prod`) names a production environment.
fn text_names_prod(text: &str) -> bool {
    text.split_whitespace()
        .any(|a| word_names_prod(a.trim_matches(['"', '\''])))
}

/// Whether a simple command runs database migrations ([`migrates`]).
fn runs_migrations(c: &SimpleCommand) -> bool {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    let words: Vec<&str> = args(c).iter().map(String::as_str).collect();
    migrates(name, &words)
}

/// Whether a simple command runs database migrations with production named in its own words
/// (`alembic -x env=production upgrade head`).
fn migrates_in_production(c: &SimpleCommand) -> bool {
    runs_migrations(c) && (names_prod(c) || text_names_prod(&c.text))
}

/// Migrations whose environment a variable assignment on the command line makes production
/// (`RAILS_ENV=production bin/rails db:migrate`, `MIX_ENV=prod mix ecto.migrate`): the
/// assignments are not the program's arguments, so they are read from the whole command line.
pub(super) fn migration_variables(text: &str, cmds: &[SimpleCommand], out: &mut Vec<Signal>) {
    let prod_env = text.split_whitespace().any(|w| {
        w.split_once('=').is_some_and(|(n, v)| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && text_names_prod(v)
        })
    });
    // A command that names production itself already has its signal (production_signals).
    if !prod_env || cmds.iter().any(migrates_in_production) {
        return;
    }
    if cmds.iter().any(runs_migrations) {
        out.push(sig(
            Category::Production,
            Severity::High,
            format!("`{text}` runs database migrations against production"),
            "production",
        ));
    }
}

pub(super) fn production_signals(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    let words = positional_words(c, name);
    if migrates_in_production(c) {
        out.push(sig(
            Category::Production,
            Severity::High,
            format!("`{}` runs database migrations against production", c.text),
            "production",
        ));
        return;
    }
    let mutating = mutating_verb(c, name, &words);
    let Some(verb) = mutating else { return };
    every_resource(c, name, &words, out);
    let target =
        namespace_of(c).unwrap_or_else(|| words.last().copied().unwrap_or(name).to_string());
    let destructive = matches!(
        verb.as_str(),
        "delete" | "destroy" | "uninstall" | "remove" | "rm" | "rb" | "terminate" | "drain"
    ) || verb.starts_with("delete")
        || verb.starts_with("terminate");
    out.push(sig(
        Category::Production,
        medium_or_high_in_prod(c),
        format!(
            "`{}` changes deployed infrastructure ({name} {verb})",
            c.text
        ),
        &target,
    ));
    if destructive {
        // Deleting named pods (not every pod) is how a pod is restarted: its controller starts
        // a new one. Medium, like a file in the workspace, unless production is named.
        let restarts = matches!(name, "kubectl" | "oc")
            && words.get(1).is_some_and(|r| {
                matches!(*r, "pod" | "pods" | "po")
                    || r.starts_with("pod/")
                    || r.starts_with("pods/")
            })
            && !has(c, &["--all", "-A", "--all-namespaces"]);
        out.push(sig(
            Category::Destructive,
            if names_prod(c) {
                Severity::Critical
            } else if restarts {
                Severity::Medium
            } else {
                Severity::High
            },
            if restarts {
                format!("`{}` deletes pods (their controller restarts them)", c.text)
            } else {
                format!("`{}` deletes cloud or cluster resources", c.text)
            },
            &target,
        ));
    }
}

pub(super) fn namespace_of(c: &SimpleCommand) -> Option<String> {
    option_value(
        args(c),
        &[
            "-n",
            "--namespace",
            "--context",
            "--project",
            "--profile",
            "--stack",
            "-s",
            "--app",
            "-a",
        ],
    )
    .map(str::to_string)
}

pub(super) fn rbac_signals(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    let a = args(c);
    if name == "vault" && a.len() >= 2 && a[0] == "token" && a[1] == "create" {
        vault_token(c, a, out);
        return;
    }
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

/// `vault token create`: a token with the `root` policy is every permission (critical), one
/// with an admin policy most of them (high); an orphan token (its parent's revocation does not
/// end it) or one living a year or more outlasts whoever made it (medium).
fn vault_token(c: &SimpleCommand, a: &[String], out: &mut Vec<Signal>) {
    let mut policies = Vec::new();
    let mut long_lived = false;
    for (i, x) in a.iter().enumerate() {
        let flag = x.trim_start_matches('-');
        let (key, value) = match flag.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (flag, a.get(i + 1).cloned()),
        };
        match key {
            "policy" => {
                policies.extend(value.iter().flat_map(|v| v.split(',')).map(str::to_string))
            }
            "orphan" => long_lived |= !flag.ends_with("=false"),
            "ttl" | "explicit-max-ttl" | "period" => {
                long_lived |= value
                    .as_deref()
                    .and_then(vault_seconds)
                    .is_some_and(|s| s >= 365 * 24 * 3600);
            }
            _ => {}
        }
    }
    let root = policies.iter().any(|p| p == "root");
    let admin = policies.iter().any(|p| p.contains("admin"));
    let severity = if root {
        Severity::Critical
    } else if admin {
        Severity::High
    } else if long_lived {
        Severity::Medium
    } else {
        return;
    };
    out.push(sig(
        Category::Privilege,
        severity,
        format!(
            "`{}` creates a Vault token{}",
            c.text,
            if root || admin {
                format!(" with the {} policy", policies.join(", "))
            } else {
                " that outlives its maker (orphan or a year or more)".to_string()
            }
        ),
        "vault token",
    ));
}

/// A Vault duration in seconds: `87600h`, `365d`, `30m`, `3600s` or bare seconds.
fn vault_seconds(v: &str) -> Option<u64> {
    let (n, unit) = match v.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => (&v[..i], c),
        _ => (v, 's'),
    };
    let n: u64 = n.parse().ok()?;
    let per = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return None,
    };
    n.checked_mul(per)
}

/// `kubectl get secret … -o yaml|json|jsonpath|go-template` prints a secret's values
/// (`describe` and a plain `get` list only names and sizes); `kubectl view-secret`,
/// `oc extract secret/…` too.
pub(super) fn cluster_secret_values(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    if !matches!(name, "kubectl" | "oc") {
        return;
    }
    let a = args(c);
    let secret_word = |x: &String| {
        let x = x.to_ascii_lowercase();
        x == "secret" || x == "secrets" || x.starts_with("secret/") || x.starts_with("secrets/")
    };
    // The output format: `-o yaml`, `-oyaml`, `-o=yaml`, `--output yaml`, `--output=yaml`.
    let format = a.iter().enumerate().find_map(|(i, x)| {
        if x == "-o" || x == "--output" {
            a.get(i + 1).map(String::as_str)
        } else {
            x.strip_prefix("--output=")
                .or_else(|| x.strip_prefix("-o="))
                .or_else(|| x.strip_prefix("-o"))
        }
    });
    let output = format.is_some_and(|f| {
        [
            "json",
            "yaml",
            "jsonpath",
            "go-template",
            "template",
            "custom-columns",
        ]
        .iter()
        .any(|k| f.starts_with(k))
    });
    let values = match positional_words(c, name).first().copied() {
        Some("get") => a.iter().any(secret_word) && output,
        Some("view-secret") => true,
        Some("extract") => a.iter().any(secret_word),
        _ => false,
    };
    if values {
        let target = a
            .iter()
            .skip_while(|x| !secret_word(x))
            .find(|x| !x.starts_with('-') && !secret_word(x))
            .map_or("secret".to_string(), |n| format!("secret {n}"));
        out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("`{}` prints a cluster secret's values", c.text),
            &target,
        ));
    }
}

/// Database clients whose host options say where SQL runs.
const SQL_CLIENTS: &[&str] = &[
    "psql",
    "mysql",
    "mariadb",
    "mongosh",
    "mongo",
    "sqlcmd",
    "clickhouse-client",
    "cockroach",
];

/// SQL that a client runs against a database on another host (a URL or `-h HOST` that is not
/// this machine) acts on a shared database: its signals become critical, and the target is the
/// host.
fn shared_database(c: &SimpleCommand, from: usize, out: &mut Vec<Signal>) {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    if !SQL_CLIENTS.contains(&name) {
        return;
    }
    let Some(host) = client_host(c) else { return };
    if local_host(&host) {
        return;
    }
    let mut destructive = false;
    for s in &mut out[from..] {
        if s.category == Category::Destructive {
            s.severity = Severity::Critical;
            s.evidence = format!("{} on the shared database at {host}", s.evidence);
            destructive = true;
        }
    }
    let upper = c.argv.join(" ").to_ascii_uppercase();
    let changes = [
        "UPDATE ",
        "DELETE FROM",
        "ALTER TABLE",
        "INSERT INTO",
        "DROP ",
        "CREATE ",
        "GRANT ",
    ]
    .iter()
    .any(|k| upper.contains(k));
    // A script file (`psql -f migrate.sql`, `mysql … < schema.sql`, `sqlcmd -i x.sql`) runs
    // whatever it holds there: a migration meant for a local database, run on a shared one.
    let script = c
        .argv
        .iter()
        .skip(1)
        .chain(&c.reads)
        .find(|x| x.to_ascii_lowercase().ends_with(".sql"));
    if (changes || script.is_some()) && !destructive {
        out.push(sig(
            Category::Production,
            Severity::High,
            match script {
                Some(file) if !changes => {
                    format!("`{}` runs {file} on the shared database at {host}", c.text)
                }
                _ => format!("`{}` changes data on the shared database at {host}", c.text),
            },
            &host,
        ));
    }
}

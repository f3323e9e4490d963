//! File signals: credentials read, writes that persist or run later, deletes, secret searches,
//! and what written scripts and configs do.

use super::*;

/// Build output, caches and scratch directories: deleting them is routine.
pub(super) const BUILD_OUTPUT: &[&str] = &[
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
    ".nyc_output",
    "htmlcov",
    ".coverage",
    ".ruff_cache",
    ".hypothesis",
    ".eslintcache",
    ".svelte-kit",
    ".angular",
    ".sass-cache",
    "public/build",
    "*.pyc",
    "*.o",
    "*.log",
];

/// Credential material found by the audit log's redaction detectors, by kind.
pub(super) fn secrets_in(text: &str, where_: &str, out: &mut Vec<Signal>) {
    let r = crate::redact::Redactor::builtin();
    let text = without_expansion_modifiers(text);
    let text = without_references(&text);
    let text = without_harmless_url_credentials(&text);
    let red = r.redact(&text);
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

/// The text with shell and Compose expansion modifiers taken out (`${POSTGRES_PASSWORD:?set it
/// in .env}`, `${PORT:-5432}` → `${POSTGRES_PASSWORD}`, `${PORT}`): the value is still the
/// variable's, so it is still a reference.
fn without_expansion_modifiers(text: &str) -> std::borrow::Cow<'_, str> {
    static MODIFIER: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let re = MODIFIER.get_or_init(|| {
        regex::Regex::new(
            r#"\$\{(?P<n>[A-Za-z_][A-Za-z0-9_]*):?[-?=+][^}
]*\}"#,
        )
        .ok()
    });
    replaced(std::borrow::Cow::Borrowed(text), re, "$${${n}}")
}

/// The text with every secret-named setting whose value only refers to a secret held elsewhere
/// (`password=${DB_PASSWORD}`, `apiKey: process.env.OPENAI_API_KEY`, `os.environ["TOKEN"]`,
/// `{{ secrets.TOKEN }}`, `secret=@file.txt`), is a placeholder (`<your-password>`,
/// `sk_test_replace_me`) or names the object holding it (`secretName: tls-cert`) given a
/// placeholder value: a reference is what keeps a secret out of the file, not a secret in it.
/// The audit log's redaction still hides such values.
fn without_references(text: &str) -> std::borrow::Cow<'_, str> {
    static REFERENCE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let re = REFERENCE.get_or_init(|| {
        regex::Regex::new(concat!(
            r#"(?i)(?P<k>(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)["']?\s*[=:]\s*["']?)"#,
            r#"(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?(?P<t>[\s"'\x60,;)]|$)"#,
            r#"|process\.env\.[A-Za-z0-9_]+"#,
            r#"|process\.env\[["'][A-Za-z0-9_]+["']\]"#,
            r#"|os\.environ(?:\.get)?[\[(]["'][A-Za-z0-9_]+["'][\])]"#,
            r#"|(?:os\.getenv|System\.getenv|getenv|env)\(["'][A-Za-z0-9_]+["']\)"#,
            r#"|ENV(?:\.fetch\(|\[)["'][A-Za-z0-9_]+["'][\])]"#,
            r#"|\{\{[^}]*\}\}"#,
            r#"|<[A-Za-z0-9_. -]{1,40}>"#,
            r#"|%\([A-Za-z0-9_]+\)s?"#,
            // `key=@file`: the tool reads the value from a file (vault, curl, httpie).
            r#"|@[./~A-Za-z0-9_-]+)"#,
        ))
        .ok()
    });
    // A setting that names the object holding the secret (`apiKeyExistingSecret:
    // datadog-api-key`, `secretName: tls-cert`): a Kubernetes name, not a secret.
    static NAMED: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let named = NAMED.get_or_init(|| {
        regex::Regex::new(
            r#"(?i)(?P<k>[A-Za-z_-]*(?:existing[_-]?secret|secret[_-]?name|secret[_-]?ref|key[_-]?ref)["']?\s*[=:]\s*["']?)[a-z0-9]+(?:[.-][a-z0-9]+)+\b"#,
        )
        .ok()
    });
    // `STRIPE_SECRET_KEY=sk_test_replace_me`: a placeholder an example file asks to replace.
    static PLACEHOLDER: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let placeholder = PLACEHOLDER.get_or_init(|| {
        regex::Regex::new(
            r#"(?im)(?P<k>\b[A-Za-z_][A-Za-z0-9_]*\s*[=:]\s*["']?)[^\s"']*(?:replace[_-]?me|change[_-]?me|your[_-][a-z]+|placeholder|dummy|test[_-]?secret|fake[_-]?(?:secret|key|token|password)|not[_-]?a[_-]?secret)[^\s"']*"#,
        )
        .ok()
    });
    let text = replaced(std::borrow::Cow::Borrowed(text), re, "${k}REF${t}");
    let text = replaced(text, placeholder, "${k}REF");
    replaced(text, named, "${k}REF")
}

/// `text` with the matches of `re` replaced by `with` (unchanged when the pattern is absent).
fn replaced<'a>(
    text: std::borrow::Cow<'a, str>,
    re: &Option<regex::Regex>,
    with: &str,
) -> std::borrow::Cow<'a, str> {
    use std::borrow::Cow;
    match (re, text) {
        (Some(re), Cow::Borrowed(t)) => re.replace_all(t, with),
        (Some(re), Cow::Owned(t)) => match re.replace_all(&t, with) {
            Cow::Borrowed(_) => Cow::Owned(t),
            Cow::Owned(n) => Cow::Owned(n),
        },
        (None, t) => t,
    }
}

/// The text with the credentials of a URL taken out when they give nothing away: a password
/// that is a placeholder (`<password>`, `$PGPASSWORD`, `${DB_PASS}`, `****`, `xxx`) or a
/// database on this machine (`postgres://postgres:postgres@localhost/app_dev`): a local
/// service's login is the developer's own and the command sends it nowhere. Credentials for
/// any other host are kept, and so still raise the signal.
fn without_harmless_url_credentials(text: &str) -> std::borrow::Cow<'_, str> {
    static URL: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(re) = URL
        .get_or_init(|| {
            regex::Regex::new(
                r#"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^\s:/@"\\]+):(?P<pass>[^\s/@"\\]+)@(?P<host>\[[0-9a-fA-F:]+\]|[^\s:/@"'\\?#]+)"#,
            )
            .ok()
        })
        .as_ref()
    else {
        return std::borrow::Cow::Borrowed(text);
    };
    re.replace_all(text, |c: &regex::Captures<'_>| {
        let pass = &c["pass"];
        let host = c["host"].trim_matches(['[', ']']);
        if placeholder(pass) || super::shell::local_host(host) {
            format!("{}{}", &c["scheme"], &c["host"])
        } else {
            c[0].to_string()
        }
    })
}

/// A value that stands for a secret instead of being one: `<password>`, `$VAR`, `${VAR}`,
/// `{{ var }}`, or one character repeated (`****`, `xxxx`).
fn placeholder(value: &str) -> bool {
    let v = value.trim_matches(['"', '\'']);
    (v.starts_with('<') && v.ends_with('>'))
        || v.starts_with('$')
        || v.starts_with("{{")
        || v.starts_with("%(")
        || v.chars()
            .all(|ch| matches!(ch, '*' | 'x' | 'X' | '.' | '#' | '?' | '_' | '-'))
}

/// A variable expansion (`$OPENAI_API_KEY`, `${GH_TOKEN}`) whose name says it holds a secret.
pub(super) fn secret_var(word: &str) -> Option<String> {
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
pub(super) fn find_signals(c: &SimpleCommand, ctx: &Context, out: &mut Vec<Signal>) {
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
pub(super) fn secret_search(c: &SimpleCommand, ctx: &Context, out: &mut Vec<Signal>) {
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
pub(super) fn script_signals(text: &str, ctx: &Context, out: &mut Vec<Signal>) {
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
pub(super) fn download_exec_in(text: &str, where_: &str, out: &mut Vec<Signal>) {
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

pub(super) fn is_setuid_mode(a: &str) -> bool {
    a.contains("+s")
        || (a.len() == 4
            && a.chars().all(|c| c.is_ascii_digit())
            && matches!(&a[..1], "2" | "4" | "6"))
}

/// Credential stores, history files, browser profiles, environment dumps.
pub(super) fn credential_read(p: &Path, ctx: &Context, out: &mut Vec<Signal>) {
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
pub(super) fn write_signals(p: &Path, ctx: &Context, out: &mut Vec<Signal>) {
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
pub(super) fn runs_later(path: &str) -> bool {
    path.contains(".github/workflows/")
        || path.ends_with(".gitlab-ci.yml")
        || path.contains(".circleci/")
        || path.ends_with("Jenkinsfile")
        || path.ends_with(".vscode/tasks.json")
        || path.contains(".devcontainer/")
}

pub(super) fn is_build_output(target: &str) -> bool {
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

/// A lock file git leaves in a repository's `.git` (`index.lock`, `HEAD.lock`,
/// `refs/heads/main.lock`).
fn git_lock_file(p: &Path) -> bool {
    let s = p.to_string_lossy();
    s.ends_with(".lock") && (s.contains("/.git/") || s.starts_with(".git/"))
}

pub(super) fn rm_signals(c: &SimpleCommand, ctx: &Context, out: &mut Vec<Signal>) {
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
        } else if !recursive && name == "rm" && git_lock_file(&p) {
            // A stale lock left by a crashed git (`index.lock exists`): removing it loses no
            // data unless a git process is still writing.
            out.push(sig(
                Category::Destructive,
                Severity::Medium,
                format!(
                    "`{}` removes git's lock file {s}; a git process still running would lose its write",
                    c.text
                ),
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

/// A package-manager config file (`.npmrc`, `.yarnrc`, `pip.conf`, …) written to point at a
/// registry other than the default, or to stop checking TLS.
pub(super) fn registry_config_in(path: &Path, text: &str, out: &mut Vec<Signal>) {
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

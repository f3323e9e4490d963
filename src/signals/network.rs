//! Network signals: hosts contacted, uploads, and the hosts reading from which is routine.

use super::*;

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
    "docs.pytest.org",
    "docs.astral.sh",
    "docs.pydantic.dev",
    "docs.sqlalchemy.org",
    "docs.gitlab.com",
    "docs.gradle.org",
    "docs.spring.io",
    "docs.oracle.com",
    "docs.microsoft.com",
    "docs.mongodb.com",
    "docs.nestjs.com",
    "docs.ansible.com",
    "docs.flutter.dev",
    "docs.kernel.org",
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
/// Read the Docs site. A name that only starts with `docs.` is not known (`docs.evil.example`).
pub(super) fn is_known_host(host: &str, cfg: &SignalsConfig) -> bool {
    KNOWN_HOSTS.contains(&host)
        || host.ends_with(".readthedocs.io")
        || cfg.known_hosts.iter().any(|k| k.eq_ignore_ascii_case(host))
}

pub(super) fn is_upload(c: &SimpleCommand) -> bool {
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

pub(super) fn host_signal(host: &str, upload: bool, cfg: &SignalsConfig, out: &mut Vec<Signal>) {
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

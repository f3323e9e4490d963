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

/// A provider's own API, which takes its credential in a header by design (`Authorization:
/// Bearer $CF_API_TOKEN` to `api.cloudflare.com`): the header is how the call is made, not a
/// credential sent away. What the call sends and does is judged as for any host.
fn provider_api(host: &str) -> bool {
    const APIS: &[&str] = &[
        "api.cloudflare.com",
        "api.fastly.com",
        "api.sendgrid.com",
        "api.mailgun.net",
        "api.postmarkapp.com",
        "api.github.com",
        "gitlab.com",
        "api.netlify.com",
        "api.vercel.com",
        "api.heroku.com",
        "api.digitalocean.com",
        "api.pagerduty.com",
        "events.pagerduty.com",
        "api.opsgenie.com",
        "slack.com",
        "api.linear.app",
        "sentry.io",
        "api.datadoghq.com",
        "api.datadoghq.eu",
        "api.statuspage.io",
        "api.launchdarkly.com",
        "app.launchdarkly.com",
        "api.twilio.com",
    ];
    APIS.contains(&host) || host.ends_with(".atlassian.net")
}

/// Whether a credential header's variable is named for the host it goes to
/// (`Bearer $JENKINS_API_TOKEN` to `jenkins.acme.internal`): the host's own credential, as a
/// client of a self-hosted service sends it. A hosted provider's name (`$GITHUB_TOKEN`) counts
/// only for the provider's own hosts ([`provider_api`]), never for a host that merely holds
/// the word (`github.example-mirror.io`).
fn variable_names_host(value: &str, host: &str) -> bool {
    const PROVIDERS: &[&str] = &[
        "github",
        "gitlab",
        "bitbucket",
        "aws",
        "amazon",
        "google",
        "gcp",
        "azure",
        "slack",
        "npm",
        "pypi",
        "docker",
        "dockerhub",
        "openai",
        "anthropic",
        "stripe",
        "cloudflare",
        "heroku",
        "vercel",
        "netlify",
        "sentry",
        "datadog",
        "twilio",
        "sendgrid",
        "circleci",
    ];
    const GENERIC: &[&str] = &[
        "api",
        "token",
        "key",
        "secret",
        "auth",
        "password",
        "pass",
        "bearer",
        "access",
        "app",
        "user",
        "admin",
        "ci",
        "bot",
        "prod",
        "production",
        "staging",
        "dev",
        "internal",
        "com",
        "io",
        "net",
        "org",
        "www",
    ];
    let name = value
        .trim()
        .trim_start_matches(|c: char| c != '$')
        .trim_start_matches(['$', '{'])
        .trim_end_matches('}')
        .to_ascii_lowercase();
    let labels: Vec<&str> = host.split(['.', '-']).collect();
    name.split('_')
        .filter(|w| w.len() >= 3 && !GENERIC.contains(w) && !PROVIDERS.contains(w))
        .any(|w| labels.contains(&w))
}

/// Whether the command sends data to a remote host: a request body, a form, an uploaded file, a
/// copy to a remote path. A bodyless `curl -X POST` to a deploy hook ([`deploy_hook`]) sends
/// nothing but the hook's URL: it is the hook's trigger, which its own signal reports.
pub(super) fn is_upload(c: &SimpleCommand) -> bool {
    let name = c.argv.first().map(|a| base(a)).unwrap_or("");
    match name {
        "curl" => {
            let hook = c
                .argv
                .iter()
                .skip(1)
                .any(|a| a.contains("://") && deploy_hook(a).is_some());
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
            }) || !hook
                && args(c).windows(2).any(|w| {
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

/// What a URL triggers when it is a deploy or pipeline hook: a plain request to it (a GET
/// included) deploys or runs a pipeline, so no upload is needed for it to change something.
/// Render's (`/deploy/…?key=`), Netlify's (`/build_hooks/`), Vercel's
/// (`/integrations/deploy/`), Cloudflare Pages' (`/deploy_hooks/`), GitLab's pipeline triggers
/// (`/trigger/pipeline`), Jenkins' remote builds (`/job/…/build`, `/buildWithParameters`) and
/// GitHub's dispatches (`/dispatches`).
pub(super) fn deploy_hook(url: &str) -> Option<(&'static str, &'static str)> {
    let u = url.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
    let rest = u.split_once("://")?.1;
    let (path, query) = match rest.find('/') {
        Some(i) => {
            let p = &rest[i..];
            p.split_once('?').unwrap_or((p, ""))
        }
        None => return None,
    };
    let path = path.split('#').next().unwrap_or(path).trim_end_matches('/');
    let query_has = |k: &str| query.split('&').any(|kv| kv.starts_with(k));
    if path.contains("/deploy/") && (query_has("key=") || query_has("token=")) {
        Some(("a deploy hook", "hook"))
    } else if path.contains("/build_hooks/") {
        Some(("a build hook", "hook"))
    } else if path.contains("/integrations/deploy/") || path.contains("/deploy_hooks/") {
        Some(("a deploy hook", "hook"))
    } else if path.ends_with("/trigger/pipeline") {
        Some(("a pipeline trigger", "trigger"))
    } else if path.contains("/job/")
        && (path.ends_with("/build") || path.ends_with("/buildwithparameters"))
    {
        Some(("a remote build trigger", "trigger"))
    } else if path.ends_with("/dispatches") {
        Some(("a workflow dispatch", "dispatch"))
    } else {
        None
    }
}

/// A production signal (medium) for a request to a deploy or pipeline hook ([`deploy_hook`]).
/// Its target is the hook (or the trigger, the dispatch), not the host: "check whether the last
/// Render deploy succeeded" names Render and its deploys, not firing the hook.
/// A Netlify build hook's `trigger_branch` builds that branch (a preview deploy) rather than the
/// production branch: the branch is then the target, which the user may have named.
pub(super) fn deploy_hook_signal(url: &str, out: &mut Vec<Signal>) {
    if let Some((what, target)) = deploy_hook(url) {
        let branch = url
            .trim()
            .trim_matches(['"', '\''])
            .split_once('?')
            .and_then(|(_, q)| {
                q.split('&')
                    .find_map(|kv| kv.strip_prefix("trigger_branch="))
                    .map(|b| b.replace("%2F", "/").replace("%2f", "/"))
            })
            .filter(|b| !b.is_empty());
        out.push(sig(
            Category::Production,
            Severity::Medium,
            format!("a request to {url} triggers {what}: it deploys or runs a pipeline"),
            branch.as_deref().unwrap_or(target),
        ));
    }
}

/// A fetch as the HTTP request it is: a method that sends (`POST`, `PUT`, `PATCH`, `DELETE`,
/// or any request with a body) uploads its body to the host; `DELETE` deletes what the URL
/// names; a credential header sent to a host that is not a known one sends the credential out;
/// a GET of a deploy hook deploys and a purge or invalidation endpoint purges. A plain GET is a
/// contact with the host, as before.
pub(super) fn fetch_signals(
    url: &str,
    host: &str,
    action: &Action,
    cfg: &SignalsConfig,
    out: &mut Vec<Signal>,
) {
    let method = action.http_method().unwrap_or_else(|| "GET".to_string());
    let (body, credential_headers) = match action {
        Action::Fetch { body, headers, .. } => (
            // An empty JSON document (`{}`, `[]`, `null`) carries no data either.
            body.as_deref()
                .filter(|b| !matches!(b.trim(), "" | "{}" | "[]" | "null" | "\"\"")),
            headers
                .iter()
                .filter(|(k, v)| {
                    crate::request::is_credential_header(k)
                        && !((provider_api(host) || variable_names_host(v, host))
                            && crate::request::names_a_variable(v))
                })
                .map(|(k, _)| k.clone())
                .collect::<Vec<_>>(),
        ),
        _ => (None, Vec::new()),
    };
    // As with curl: a bodyless POST to a deploy hook is its trigger, not an upload; a bodyless
    // DELETE sends nothing (what it deletes is its own signal, below).
    let sends = body.is_some()
        || (!crate::request::is_read_method(&method)
            && method != "DELETE"
            && deploy_hook(url).is_none());
    let before = out.len();
    host_signal(host, sends, cfg, out);
    if sends && out.len() > before {
        out[before].evidence = format!("{method} {url}: sends data to {host} (the request body)");
    }
    if method == "DELETE" {
        out.push(sig(
            Category::Destructive,
            Severity::High,
            format!("DELETE {url}: deletes what the URL names on {host}"),
            host,
        ));
    }
    let loopback = host.is_empty() || host == "localhost" || host.starts_with("127.");
    if !credential_headers.is_empty() && !loopback && !is_known_host(host, cfg) {
        out.push(sig(
            Category::SecretInPayload,
            Severity::High,
            format!(
                "sends a credential header ({}) to {host}",
                credential_headers.join(", ")
            ),
            host,
        ));
    }
    deploy_hook_signal(url, out);
    if purge_endpoint(url) {
        out.push(sig(
            Category::Production,
            Severity::Medium,
            format!("{method} {url}: purges or invalidates a cache that serves users"),
            host,
        ));
    }
    if let Some(body) = body {
        secrets_in(body, "the request body", out);
    }
}

/// Whether a URL's path is a cache purge or invalidation endpoint (Cloudflare's
/// `/purge_cache`, Fastly's `/purge` and `/purge_all`, CloudFront's `/invalidation`, a CDN's
/// `/invalidate`).
fn purge_endpoint(url: &str) -> bool {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_ascii_lowercase())
        .unwrap_or_default();
    path.split('/')
        .any(|seg| seg.starts_with("purge") || seg.starts_with("invalidat") || seg == "flush_cache")
}

//! Targets compared: the words of a grant against what an action acts on.
//!
//! A target is normalised into typed tokens ([`Token`]): an environment (`prod` and
//! `production` are one), a number (`#88`, `PR 88`, `pr-88`), a version (`v1.2.3` is `1.2.3`),
//! a protected branch (`main`, `master`, …) or a name (`@acme/ui-kit` also gives `ui-kit`;
//! `origin/fix-login` is `fix-login`). [`matches`] says whether a grant's tokens cover an act's:
//! environments, numbers, versions and protected branches must agree when the act names them,
//! and at least one token must be shared unless the act is low-risk.

use std::collections::BTreeSet;

/// A normalised target word.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Token {
    /// An environment: `production`, `staging`, `dev`, `qa`, `preview`, `canary`.
    Env(String),
    /// A PR, issue or other number.
    Number(String),
    /// A version, without a leading `v`.
    Version(String),
    /// A branch others share: `main`, `master`, `trunk`, `develop`.
    Protected(String),
    /// A repository, `owner/name` (`acme/payments-core`).
    Repo(String),
    /// A chat channel, `#name`.
    Channel(String),
    /// A package's dist-tag (`latest`, `next`), written `dist-tag:NAME`.
    DistTag(String),
    /// An object-store path (`s3://bucket/tmp/`): an act on it must be under a granted one.
    Path(String),
    /// An access level (`read`, `write`, `admin`, `developer`), written `permission:LEVEL`.
    Level(String),
    /// A kind of safeguard a change weakens (`expectation`: what a test expects;
    /// `csrf-exempt`: one view exempted from CSRF), written `safeguard:KIND`.
    Safeguard(String),
    /// A package registry (`pypi`, `testpypi`, `npm`, `crates.io`, `rubygems`): an upload to
    /// TestPyPI is not one to PyPI.
    Registry(String),
    /// The plain word a granting verb acts on (`purge sessions`), written `object:WORD`: it
    /// names what a grant covers as a name does, but does not make the grant one that names
    /// things (an environment alone still suffices against an act that names only things).
    Object(String),
    /// A word the user's request must say for a grant to cover the act, written `said:WORD`:
    /// the one resource an API call changes (Heroku's `…/formation/worker` is the worker
    /// dynos, not the web ones the request may name).
    Said(String),
    /// A cloud region (`europe-west1`, `us-east-1`; a zone `us-central1-a` is its region): a
    /// deploy to one is not a deploy to another.
    Region(String),
    /// An opaque identifier as written in capitals: a ticket key (`PAY-1419`, `SEC-412`) or a
    /// service's id (`P8X2K1Q`, `E2QWRUHAPOMQZL`); one is not another.
    Ident(String),
    /// Any other name: a package, branch, host, bucket, channel, namespace, file.
    Name(String),
}

/// The first parts of `x/y` words that make them paths or refs, not repositories.
const NOT_OWNERS: &[&str] = &[
    "feature",
    "feat",
    "fix",
    "bugfix",
    "hotfix",
    "release",
    "releases",
    "chore",
    "docs",
    "doc",
    "refactor",
    "test",
    "tests",
    "dev",
    "ci",
    "build",
    "perf",
    "style",
    "revert",
    "renovate",
    "dependabot",
    "users",
    "user",
    "src",
    "dist",
    "lib",
    "scripts",
    "script",
    "charts",
    "chart",
    "values",
    "envs",
    "env",
    "config",
    "configs",
    "playbooks",
    "inventories",
    "inventory",
    "changes",
    "apps",
    "app",
    "packages",
    "pkg",
    "cmd",
    "internal",
    "bench",
    "target",
    "tmp",
    "deploy",
    "deployment",
    "deployments",
    "infra",
    "svc",
    "service",
    "services",
    "pod",
    "pods",
    "statefulset",
    "sts",
    "daemonset",
    "ds",
    "job",
    "jobs",
    "cronjob",
    "configmap",
    "cm",
    "secret",
    "secrets",
    "ingress",
    "ns",
    "namespace",
    "node",
    "pvc",
    "rs",
    "origin",
    "upstream",
    "heads",
    "tags",
    "refs",
    "migrations",
    "db",
    "k8s",
    "helm",
    "terraform",
    "modules",
    "module",
    "overlays",
    "base",
    "bin",
    "etc",
    "var",
    "usr",
    "home",
    "opt",
    "work",
    "static",
    "public",
    "assets",
    "web",
    "api",
    "cache",
    "data",
    "logs",
    "log",
    "out",
    "vendor",
    "node_modules",
    "tools",
    "hack",
    "examples",
    "example",
    "spec",
    "specs",
    "fixtures",
    "layouts",
    "templates",
    "components",
    "pages",
    "tasks",
    "roles",
    "files",
    "changelog",
    "group_vars",
    "host_vars",
    "bucket",
    "buckets",
    "s3",
    "gs",
    "file",
    "http",
    "https",
];

/// Words that name nothing in particular (never a target).
const GENERIC: &[&str] = &[
    // A Terraform address's kind (`module.legacy_vpn`): the name after it is the target.
    "module",
    "sign-off",
    "signoff",
    "go/no-go",
    "the",
    "a",
    "an",
    "to",
    "on",
    "in",
    "of",
    "for",
    "and",
    "or",
    "it",
    "its",
    "our",
    "my",
    "this",
    "that",
    "these",
    "those",
    "with",
    "from",
    "into",
    "onto",
    "at",
    "by",
    "as",
    "is",
    "be",
    "we",
    "i",
    "you",
    "your",
    "me",
    "us",
    "please",
    "then",
    "now",
    "all",
    "new",
    "latest",
    "branch",
    "branches",
    "release",
    "releases",
    "package",
    "packages",
    "version",
    "versions",
    "pr",
    "prs",
    "pull",
    "request",
    "issue",
    "issues",
    "repo",
    "repository",
    "tag",
    "tags",
    "origin",
    "upstream",
    "remote",
    "changes",
    "change",
    "fix",
    "fixes",
    "feature",
    "build",
    "job",
    "ci",
    "up",
    "out",
    "so",
    "can",
    "just",
    "also",
    "once",
    "after",
    "before",
    "when",
    "npm",
    "pypi",
    "crates",
    "crates.io",
    "docker",
    "image",
    "images",
    "github",
    "gh",
    "git",
    "head",
    "refs",
    "heads",
    "service",
    "services",
    "app",
    "cluster",
    "server",
    "environment",
    "env",
    "run",
    "it's",
    "work",
    "workspace",
    "here",
    "there",
    "them",
    "they",
    "their",
    "instead",
    "yet",
    "only",
    "not",
    "don't",
    "do",
];

const PROTECTED: &[&str] = &[
    "main",
    "master",
    "trunk",
    "develop",
    "default",
    "!org",
    "org",
    "organization",
    "org-wide",
];

fn env_of(w: &str) -> Option<&'static str> {
    Some(match w {
        "prod" | "production" | "live" | "prd" => "production",
        "staging" | "stage" | "stg" => "staging",
        "dev" | "development" => "dev",
        "qa" => "qa",
        "preview" => "preview",
        "canary" => "canary",
        "sandbox" => "sandbox",
        _ => return None,
    })
}

fn is_version(w: &str) -> Option<String> {
    // A release number said with its `v` (Heroku's `v143`): two or more digits, so that
    // `v2` of an API stays a name.
    if let Some(n) = w.strip_prefix('v')
        && (2..=6).contains(&n.len())
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        return Some(n.to_string());
    }
    let v = w.strip_prefix('v').unwrap_or(w);
    let mut parts = v.split(['-', '+']).next()?.split('.');
    let all_numeric = parts
        .clone()
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    (all_numeric && parts.nth(1).is_some()).then(|| v.to_string())
}

/// A word whose form gives its kind (`dist-tag:next`, `s3://b/p`, `#channel`) or that holds
/// two words (`owner/repo#91`, `key=value`).
fn typed_word(w: &str) -> Option<BTreeSet<Token>> {
    let mut out = BTreeSet::new();
    if let Some(level) = w.strip_prefix("permission:") {
        // GitHub's `pull` is read, `push` is write.
        let level = match level {
            "pull" | "view" | "viewer" | "reader" | "read-only" => "read",
            "push" | "editor" => "write",
            other => other,
        };
        out.insert(Token::Level(level.to_string()));
        return Some(out);
    }
    if let Some(kind) = w.strip_prefix("safeguard:") {
        out.insert(Token::Safeguard(kind.to_string()));
        return Some(out);
    }
    if let Some(o) = w.strip_prefix("object:") {
        out.insert(Token::Object(o.replace('_', "-")));
        return Some(out);
    }
    if let Some(word) = w.strip_prefix("said:") {
        out.insert(Token::Said(word.to_ascii_lowercase()));
        return Some(out);
    }
    if let Some(r) = w.strip_prefix("registry:") {
        out.insert(Token::Registry(r.to_string()));
        return Some(out);
    }
    if let Some(tag) = w.strip_prefix("dist-tag:") {
        out.insert(Token::DistTag(tag.to_string()));
        return Some(out);
    }
    for scheme in ["s3://", "gs://", "az://", "r2://", "gcs://"] {
        if let Some(rest) = w.strip_prefix(scheme) {
            let rest = rest.trim_end_matches('/');
            out.insert(Token::Path(format!("{scheme}{rest}")));
            if let Some(bucket) = rest.split('/').next().filter(|b| !b.is_empty()) {
                out.insert(Token::Name(bucket.replace('_', "-")));
            }
            return Some(out);
        }
    }
    // A channel: `#infra-help` (a `#` before digits is a number).
    if let Some(ch) = w.strip_prefix('#')
        && ch.starts_with(|c: char| c.is_ascii_alphabetic())
        && !ch.contains(['#', '/'])
    {
        out.insert(Token::Channel(ch.replace('_', "-")));
        return Some(out);
    }
    // `owner/repo#91`, `k=v`: each part on its own too.
    if let Some((head, tail)) = w.split_once('#').filter(|(h, _)| !h.is_empty()) {
        out.extend(tokens_of_word(head));
        out.extend(tokens_of_word(&format!("#{tail}")));
        return Some(out);
    }
    if let Some((k, v)) = w
        .split_once('=')
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
    {
        out.extend(tokens_of_word(k));
        out.extend(tokens_of_word(v));
        return Some(out);
    }
    None
}

/// A package at a version: `ui-kit@2.4.1`, `@acme/ui-kit@2.4.1`, `requests==2.31.0`.
fn package_at_version(w: &str) -> Option<BTreeSet<Token>> {
    // A package at a version: `ui-kit@2.4.1`, `@acme/ui-kit@2.4.1`, `requests==2.31.0`.
    if let Some((name, ver)) = w
        .rsplit_once('@')
        .filter(|(n, _)| !n.is_empty())
        .or_else(|| w.split_once("=="))
        && let Some(v) = is_version(ver)
    {
        let mut out = BTreeSet::from([Token::Version(v)]);
        out.extend(tokens_of_word(name));
        return Some(out);
    }
    None
}

/// What a word's ends may carry that names nothing (quotes, brackets, sentence marks, `$`).
const PUNCTUATION: &[char] = &[
    '.', ',', ';', ':', '"', '\'', '`', '(', ')', '!', '?', '$', '{', '}', '<', '>', '[', ']',
];

/// The word without the registry and ref prefixes that name no target of their own
/// (`npm:`, `refs/heads/`, `origin/`, …).
fn without_prefixes(word: &str) -> &str {
    let mut w = word;
    for p in [
        "npm:",
        "pypi:",
        "crates:",
        "cargo:",
        "docker:",
        "oci:",
        "gem:",
        "refs/heads/",
        "refs/tags/",
        "origin/",
        "upstream/",
        "heads/",
        "tags/",
    ] {
        if let Some(r) = w.strip_prefix(p) {
            w = r;
        }
    }
    w
}

/// The tokens of one word of a target (a word as written: `@acme/ui-kit`, `#88`, `v2.4.1`).
pub fn tokens_of_word(word: &str) -> BTreeSet<Token> {
    let mut out = BTreeSet::new();
    // An identifier is a name too (a branch `fix/PAY-1419` names it), and one that must agree.
    if let Some(id) = identifier(word.trim_matches(PUNCTUATION)) {
        out.insert(Token::Ident(id.clone()));
        out.insert(Token::Name(id));
        return out;
    }
    let w = word.trim_matches(PUNCTUATION).to_ascii_lowercase();
    let w = w.strip_suffix("'s").unwrap_or(&w).to_string();
    if w.is_empty() || is_time_or_date(&w) {
        return out;
    }
    if let Some(t) = typed_word(&w) {
        return t;
    }
    let w = without_prefixes(&w);
    let number = w
        .strip_prefix('#')
        .or_else(|| w.strip_prefix("pr-"))
        .or_else(|| w.strip_prefix("pr#"))
        .or_else(|| w.strip_prefix("gh-"))
        .unwrap_or(w);
    if !number.is_empty() && number.len() <= 7 && number.bytes().all(|b| b.is_ascii_digit()) {
        out.insert(Token::Number(number.to_string()));
        return out;
    }
    if let Some(v) = is_version(w) {
        out.insert(Token::Version(v));
        return out;
    }
    if let Some(t) = package_at_version(w) {
        return t;
    }
    if let Some(e) = env_of(w) {
        out.insert(Token::Env(e.to_string()));
        return out;
    }
    if let Some(r) = region_of(w) {
        out.insert(Token::Region(r));
        return out;
    }
    if let Some(r) = registry_of(w) {
        out.insert(Token::Registry(r.to_string()));
        return out;
    }
    // An image's registry (`quay.io/helix/edge-proxy:2024.06.1`, `registry.helix.internal`):
    // a push to one is not a push to another.
    if let Some(host) = image_registry(w) {
        out.insert(Token::Registry(host.to_string()));
    }
    if PROTECTED.contains(&w) {
        let w = if matches!(w, "!org" | "organization" | "org-wide") {
            "org"
        } else {
            w
        };
        out.insert(Token::Protected(w.to_string()));
        return out;
    }
    if w.len() < 2 || GENERIC.contains(&w) {
        return out;
    }
    let w = w.strip_prefix("file://").unwrap_or(w);
    // Python's and most registries' names compare with `_` as `-`.
    let name = w.replace('_', "-");
    if let Some((owner, repo)) = name.split_once('/')
        && !repo.contains('/')
        && !owner.is_empty()
        && !repo.is_empty()
        && owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !NOT_OWNERS.contains(&owner)
        && !repo.contains("..")
        && !is_file_name(repo)
    {
        out.insert(Token::Repo(name.clone()));
    }
    out.insert(Token::Name(name.clone()));
    // A playbook or manifest names what it is for without its extension (`patch-openssl.yml`:
    // `patch-openssl`); a migration's file name is not the table it changes.
    if (name.ends_with(".yml") || name.ends_with(".yaml"))
        && !name.contains('/')
        && let Some((stem, _)) = name.split_once('.')
        && stem.len() >= 3
    {
        out.insert(Token::Name(stem.to_string()));
    }
    // A host's first label names it too: `cache-staging.internal` → `cache-staging`.
    if let Some((first, rest)) = name.split_once('.')
        && !first.is_empty()
        && rest.chars().any(|c| c.is_ascii_alphabetic())
        && !is_file_name(&name)
        && !name.contains('/')
    {
        out.extend(tokens_of_word(first));
    }
    parts_of(&name, &mut out);
    out
}

/// The tokens of a name's parts: the parts of a scoped, qualified or URL name, the environments
/// among its dashed parts, the PR number after `pr`.
fn parts_of(w: &str, out: &mut BTreeSet<Token>) {
    // The parts of a scoped or qualified name: `@acme/ui-kit` → `ui-kit`, `acme`;
    // `acme-prod` → the environment too; `infra/envs/staging` → `staging`.
    // A URL's path segment names no registry (`…/_packaging/feed/nuget/v3/index.json` is a
    // private feed, not nuget.org): only its host does.
    let url_host = w.split_once("://").and_then(|(_, r)| r.split('/').next());
    for part in w
        .split(['/', '@', ':'])
        .filter(|p| !p.is_empty() && *p != w)
    {
        let mut t = tokens_of_word(part);
        if url_host.is_some_and(|h| h != part) {
            t.retain(|x| !matches!(x, Token::Registry(_)));
        }
        out.extend(t);
    }
    let parts: Vec<&str> = w.split(['-', '_', '.']).collect();
    for part in &parts {
        if let Some(e) = env_of(part) {
            out.insert(Token::Env(e.to_string()));
        }
    }
    // `preview-pr-1187` is PR 1187's: the number after `pr` names it.
    for pair in parts.windows(2) {
        if matches!(pair[0], "pr" | "mr")
            && !pair[1].is_empty()
            && pair[1].len() <= 7
            && pair[1].bytes().all(|b| b.is_ascii_digit())
        {
            out.insert(Token::Number(pair[1].to_string()));
        }
    }
}

/// An identifier written in capitals: a ticket key (`PAY-1419`: letters, a dash, two or more
/// digits; not `PR-88`, a number, nor `UTF-8`) or an id of six to twenty capitals and digits with
/// both (`P8X2K1Q`), lowercased.
fn identifier(w: &str) -> Option<String> {
    let upper_or_digit = |c: char| c.is_ascii_uppercase() || c.is_ascii_digit();
    let key = w.split_once('-').is_some_and(|(p, n)| {
        (2..=10).contains(&p.len())
            && p.starts_with(|c: char| c.is_ascii_uppercase())
            && p.chars().all(upper_or_digit)
            && (2..=7).contains(&n.len())
            && n.bytes().all(|b| b.is_ascii_digit())
            && !matches!(
                p,
                "PR" | "MR" | "GH" | "UTF" | "SHA" | "ISO" | "RFC" | "ES" | "PEP" | "CVE" | "TLS"
            )
    });
    let id = (6..=20).contains(&w.len())
        && w.chars().all(upper_or_digit)
        && w.chars().filter(char::is_ascii_digit).count() >= 1
        && w.chars().filter(char::is_ascii_uppercase).count() >= 2;
    (key || id).then(|| w.to_ascii_lowercase())
}

/// The cloud region a word names: AWS's `eu-west-1`, Google's `europe-west1` and
/// `us-central1`, a zone's region (`us-central1-a`, `eu-west-1b`).
fn region_of(w: &str) -> Option<String> {
    const AREAS: &[&str] = &[
        "us",
        "eu",
        "europe",
        "asia",
        "ap",
        "sa",
        "ca",
        "me",
        "af",
        "il",
        "mx",
        "australia",
        "northamerica",
        "southamerica",
    ];
    const SIDES: &[&str] = &[
        "east",
        "west",
        "north",
        "south",
        "central",
        "northeast",
        "northwest",
        "southeast",
        "southwest",
        "gov-east",
        "gov-west",
    ];
    let parts: Vec<&str> = w.split('-').collect();
    if !(2..=4).contains(&parts.len()) || !AREAS.contains(&parts[0]) {
        return None;
    }
    // `us-central1-a` and `eu-west-1b` are zones: their region.
    let mut parts = parts;
    if parts.len() >= 3
        && parts
            .last()
            .is_some_and(|z| z.len() == 1 && z.bytes().all(|b| b.is_ascii_lowercase()))
    {
        parts.pop();
    }
    let last = parts.last()?;
    let last = if last.len() >= 2
        && last.ends_with(|c: char| c.is_ascii_lowercase())
        && last[..last.len() - 1].bytes().all(|b| b.is_ascii_digit())
    {
        &last[..last.len() - 1]
    } else {
        last
    };
    let side = |s: &str| SIDES.contains(&s.trim_end_matches(|c: char| c.is_ascii_digit()));
    let numbered = last.ends_with(|c: char| c.is_ascii_digit());
    let region = match parts.len() {
        // `europe-west1`
        2 => numbered && side(last) && last.len() > 1,
        // `eu-west-1`, `us-gov-west-1`
        3 => numbered && last.bytes().all(|b| b.is_ascii_digit()) && side(parts[1]),
        _ => false,
    };
    region.then(|| {
        let mut p = parts[..parts.len() - 1].to_vec();
        p.push(last);
        p.join("-")
    })
}

/// The registry a word names (`PyPI`, `test.pypi.org`, `npmjs.com`), normalised.
fn registry_of(w: &str) -> Option<&'static str> {
    let host = w
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .trim_start_matches("upload.")
        .trim_start_matches("registry.")
        .trim_start_matches("api.")
        .split('/')
        .next()
        .unwrap_or(w);
    Some(match host {
        "pypi" | "pypi.org" => "pypi",
        "testpypi" | "test.pypi.org" | "test-pypi" => "testpypi",
        "npm" | "npmjs" | "npmjs.com" | "npmjs.org" => "npm",
        "crates.io" => "crates.io",
        "rubygems" | "rubygems.org" => "rubygems",
        "nuget" | "nuget.org" => "nuget",
        _ => return None,
    })
}

/// The container registry a word names: the host before an image's path
/// (`quay.io/helix/edge-proxy`, `ghcr.io/acme/api:1.2`), or a registry host said alone
/// (`registry.helix.internal`).
fn image_registry(w: &str) -> Option<&str> {
    if w.contains("://") {
        return None;
    }
    let host_like = |h: &str| {
        h.contains('.')
            && !is_file_name(h)
            && h.split('.')
                .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
            && h.rsplit('.')
                .next()
                .is_some_and(|tld| tld.chars().all(|c| c.is_ascii_alphabetic()))
    };
    match w.split_once('/') {
        Some((first, rest)) if !rest.is_empty() && host_like(first) => Some(first),
        None if w.starts_with("registry.") && host_like(w) => Some(w),
        _ => None,
    }
}

/// Whether a word is a time (`18:00`), a date (`2023-01-01`) or a quantity (`1Gi`, `768Mi`,
/// `50MB`, `30s`): no target.
fn is_time_or_date(w: &str) -> bool {
    let unit = w.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    if unit.len() < w.len()
        && w.starts_with(|c: char| c.is_ascii_digit())
        && [
            "mi", "gi", "ki", "ti", "mb", "gb", "kb", "tb", "m", "s", "ms", "h", "d", "%", "k", "g",
        ]
        .contains(&unit)
    {
        return true;
    }
    let digits_and = |sep: char| {
        w.contains(sep) && w.chars().all(|c| c.is_ascii_digit() || c == sep) && w.len() <= 10
    };
    digits_and(':') || (digits_and('-') && w.len() == 10)
}

/// Whether a word ends in a file extension (`api-cutover.json`, `x.tar.gz`).
fn is_file_name(w: &str) -> bool {
    const EXT: &[&str] = &[
        "json", "yaml", "yml", "toml", "md", "txt", "tf", "tfvars", "js", "ts", "py", "rs", "go",
        "rb", "sh", "gz", "tgz", "whl", "gem", "zip", "crate", "lock", "env", "cfg", "ini", "xml",
        "html", "css", "sql", "pem", "csv",
    ];
    w.rsplit_once('.').is_some_and(|(_, e)| EXT.contains(&e))
}

/// The tokens of a target text (one or more words).
pub fn tokens(text: &str) -> BTreeSet<Token> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .flat_map(tokens_of_word)
        .collect()
}

/// The tokens of several targets.
pub fn tokens_all<'a>(targets: impl IntoIterator<Item = &'a String>) -> BTreeSet<Token> {
    targets.into_iter().flat_map(|t| tokens(t)).collect()
}

/// The kinds whose tokens must agree when both sides name one, in order: environment, number,
/// version, protected branch (or organization), repository, channel, dist-tag, access level,
/// safeguard kind, registry, region, and identifier of each shape (a ticket key `NET-88` and a
/// hosted zone's id `Z0451…` are no two values of one kind: the ticket names the request).
const AGREEING: [fn(&Token) -> bool; 13] = [
    |t| matches!(t, Token::Env(_)),
    |t| matches!(t, Token::Number(_)),
    |t| matches!(t, Token::Version(_)),
    |t| matches!(t, Token::Protected(_)),
    |t| matches!(t, Token::Repo(_)),
    |t| matches!(t, Token::Channel(_)),
    |t| matches!(t, Token::DistTag(_)),
    |t| matches!(t, Token::Level(_)),
    |t| matches!(t, Token::Safeguard(_)),
    |t| matches!(t, Token::Registry(_)),
    |t| matches!(t, Token::Region(_)),
    |t| matches!(t, Token::Ident(s) if s.contains('-')),
    |t| matches!(t, Token::Ident(s) if !s.contains('-')),
];

fn of_kind(set: &BTreeSet<Token>, kind: fn(&Token) -> bool) -> BTreeSet<&Token> {
    set.iter().filter(|t| kind(t)).collect()
}

/// Whether a grant's targets name something of a kind that must agree (an environment, a
/// number, a version, a protected branch, a repository, a channel) that the act names
/// otherwise: the grant is for another target (`merge #88` against a merge of #91).
pub fn conflicts(grant: &BTreeSet<Token>, act: &BTreeSet<Token>) -> bool {
    AGREEING.iter().any(|kind| {
        let a = of_kind(act, *kind);
        let g = of_kind(grant, *kind);
        !a.is_empty() && !g.is_empty() && a.is_disjoint(&g)
    })
}

/// The texts of the tokens of one kind.
fn strings(set: &BTreeSet<Token>, kind: impl Fn(&Token) -> Option<String>) -> Vec<String> {
    set.iter().filter_map(kind).collect()
}

/// Whether a grant's tokens cover an act's. `low_risk`: the act raised no signal above
/// medium and touches no protected branch or production (a target-less grant may cover it).
pub fn matches(grant: &BTreeSet<Token>, act: &BTreeSet<Token>, low_risk: bool) -> bool {
    for (i, kind) in AGREEING.iter().enumerate() {
        let a = of_kind(act, *kind);
        if a.is_empty() {
            continue;
        }
        let g = of_kind(grant, *kind);
        if g.is_empty() {
            // Production, a numbered item and a protected branch must be named; a version or a
            // non-production environment may be left implicit.
            let must_name = match i {
                0 => a.contains(&Token::Env("production".into())),
                1 | 3 => true,
                _ => false,
            };
            if must_name {
                return false;
            }
        } else if g.is_disjoint(&a) {
            return false;
        } else if i == 0 {
            // Production the act touches must be granted by name, even beside an environment
            // the grant shares (`--slot staging --target-slot production` under `deploy to the
            // staging slot`).
            let prod = Token::Env("production".into());
            if a.contains(&prod) && !g.contains(&prod) {
                return false;
            }
        }
    }
    // An object-store path must lie under a granted one.
    let path = |t: &Token| match t {
        Token::Path(p) => Some(p.clone()),
        _ => None,
    };
    let (gp, ap) = (strings(grant, path), strings(act, path));
    if !gp.is_empty()
        && !ap.is_empty()
        && !ap
            .iter()
            .all(|a| gp.iter().any(|g| a == g || a.starts_with(&format!("{g}/"))))
    {
        return false;
    }
    // No path granted: the act's path must end in a name the grant says exactly (`the
    // feat-x artifacts` do not cover the whole bucket).
    if gp.is_empty()
        && !ap.is_empty()
        && !ap.iter().all(|a| {
            a.rsplit('/').next().is_some_and(|last| {
                grant.iter().any(|t| {
                    matches!(t, Token::Name(n) | Token::Object(n) | Token::Number(n)
                        if n == &last.replace('_', "-"))
                })
            })
        })
    {
        return false;
    }
    if grant.is_empty() {
        return low_risk;
    }
    let name = |t: &Token| match t {
        Token::Name(n) => Some(n.clone()),
        _ => None,
    };
    let (gn, an) = (strings(grant, name), strings(act, name));
    // A revision the user quoted (`DBA approved rev 4f2a91`) or a build's output directory
    // (`the build is in dist/`) names no thing the act is on.
    let objects = strings(grant, |t| match t {
        Token::Object(n) => Some(n.clone()),
        _ => None,
    });
    // A ticket key (`SUP-2290: switch org 4471 …`) names the request, not a thing the act is
    // on.
    let things: Vec<&String> = gn
        .iter()
        .filter(|n| {
            !is_revision(n)
                && !is_migration_id(n)
                && !grant.contains(&Token::Ident((*n).clone()))
                && !matches!(n.trim_end_matches('/'), "dist" | "build" | "out" | "public")
        })
        .collect();
    // A granted name covers the act's when equal, or when the user said less of it
    // (`marketing` for `marketing-site`), never more (`kafka-dana` does not cover `kafka`).
    let name_shared = gn.iter().chain(&objects).any(|g| {
        an.iter().any(|a| {
            a == g
                || a.starts_with(&format!("{g}-"))
                || a.ends_with(&format!("-{g}"))
                || a.ends_with(&format!("/{g}"))
        })
    });
    let other_shared = grant
        .iter()
        .filter(|t| !matches!(t, Token::Name(_) | Token::Env(_) | Token::Registry(_)))
        .any(|t| act.contains(t));
    let env_shared = grant
        .iter()
        .any(|t| matches!(t, Token::Env(_)) && act.contains(t));
    // An environment alone is not enough when both name things: `prod-legacy` is not
    // `production`.
    name_shared
        || other_shared
        || (env_shared && (things.is_empty() || an.is_empty()))
        || (low_risk && act.is_empty())
}

/// Whether a name is a migration's id (`20240514093000-add-order-refunds`, `0042-backfill`):
/// what a migrate command applies among the pending ones, not a thing it names.
fn is_migration_id(n: &str) -> bool {
    let digits = n.bytes().take_while(u8::is_ascii_digit).count();
    (digits >= 8 || (digits >= 3 && n.len() > digits + 3))
        && n[digits..].starts_with(['-', '_'])
        && n[digits + 1..].bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether a name is a commit or revision id: 6 to 40 hex digits with a letter and a digit.
fn is_revision(n: &str) -> bool {
    (6..=40).contains(&n.len())
        && n.bytes().all(|b| b.is_ascii_hexdigit())
        && n.bytes().any(|b| b.is_ascii_digit())
        && n.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether a target is grounded in the user's words: every word of it names something, and
/// everything it names is among the tokens of `words` (`acme/infra` is not grounded in words
/// that only say `acme`).
pub fn grounded(target: &str, words: &BTreeSet<Token>) -> bool {
    let mut any = false;
    for w in target.split(|c: char| c.is_whitespace() || c == ',') {
        let t = tokens_of_word(w);
        if t.is_empty() {
            continue;
        }
        any = true;
        if !t.is_subset(words) {
            return false;
        }
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(grant: &str, act: &str, low: bool) -> bool {
        matches(&tokens(grant), &tokens(act), low)
    }

    #[test]
    fn spellings_of_one_target_are_one() {
        assert_eq!(tokens("v1.2.3"), tokens("1.2.3"));
        assert_eq!(tokens("#88"), tokens("88"));
        assert_eq!(tokens("origin/fix-login"), tokens("fix-login"));
        assert_eq!(tokens("acme_sdk"), tokens("acme-sdk"));
        assert!(tokens("acme/payments-core#91").contains(&Token::Number("91".into())));
        assert!(
            tokens("acme/payments-core#91").contains(&Token::Repo("acme/payments-core".into()))
        );
        assert!(
            !tokens("fix/login")
                .iter()
                .any(|t| matches!(t, Token::Repo(_)))
        );
        assert_eq!(
            tokens("#infra-help"),
            BTreeSet::from([Token::Channel("infra-help".into())])
        );
        assert!(tokens("18:00").is_empty() && tokens("2023-01-01").is_empty());
        assert!(tokens("cache-staging.internal").contains(&Token::Name("cache-staging".into())));
        assert!(tokens("image.tag=2.14.0").contains(&Token::Version("2.14.0".into())));
        assert_eq!(tokens("refs/heads/main"), tokens("main"));
        assert!(tokens("@acme/ui-kit").contains(&Token::Name("ui-kit".into())));
        assert!(tokens("ui-kit@2.4.1").contains(&Token::Version("2.4.1".into())));
        assert_eq!(tokens("prod"), tokens("production"));
        assert!(tokens("acme-prod").contains(&Token::Env("production".into())));
    }

    #[test]
    fn regions_release_numbers_and_registry_urls() {
        let region = |w: &str| Token::Region(w.into());
        assert!(tokens("europe-west1").contains(&region("europe-west1")));
        assert!(tokens("eu-west-1").contains(&region("eu-west-1")));
        assert_eq!(tokens("us-central1-a"), tokens("us-central1"));
        assert_eq!(tokens("eu-west-1b"), tokens("eu-west-1"));
        assert!(!tokens("us-east").contains(&region("us-east")));
        assert!(!m("api europe-west1", "api us-central1", false));
        assert!(m("api europe-west1", "api europe-west1", false));
        // A release said with its `v` and two or more digits is a version; `v2` stays a name.
        assert!(!m("billing v143", "billing v142", false));
        assert!(tokens("v2").contains(&Token::Name("v2".into())));
        // A URL's path names no registry; its host does.
        let feed = "https://pkgs.dev.azure.com/acme/_packaging/feed/nuget/v3/index.json";
        assert!(!tokens(feed).iter().any(|t| matches!(t, Token::Registry(_))));
        assert!(
            tokens("https://api.nuget.org/v3/index.json")
                .contains(&Token::Registry("nuget".into()))
        );
        // A ticket key or a service id in capitals is an identifier; another one conflicts.
        assert!(tokens("PAY-1419").contains(&Token::Ident("pay-1419".into())));
        assert!(tokens("P8X2K1Q").contains(&Token::Ident("p8x2k1q".into())));
        assert!(conflicts(&tokens("close PAY-1419"), &tokens("PAY-1423")));
        assert!(conflicts(&tokens("PQ7Z3M9 payments"), &tokens("P8X2K1Q")));
        assert!(!conflicts(&tokens("close PAY-1419"), &tokens("pay-api")));
        assert_eq!(tokens("PR-88"), tokens("88"));
        assert!(!tokens("UTF-8").iter().any(|t| matches!(t, Token::Ident(_))));
        assert!(!tokens("HTTP2").iter().any(|t| matches!(t, Token::Ident(_))));
        // A migration's id is no thing a migrate command must name.
        assert!(m(
            "production 20240514093000_add_refunds",
            "production shop",
            false
        ));
        assert!(!m("production orders-db", "production shop", false));
    }

    #[test]
    fn targets_that_must_agree_do() {
        // Both ways for each kind.
        assert!(m("#88", "88 acme/web", false));
        assert!(!m("#88", "91 acme/web", false));
        assert!(m("staging api", "api staging", false));
        assert!(!m("staging api", "api production", false));
        assert!(!m("api", "api production", false));
        assert!(m("api", "api staging", false));
        assert!(m("fix/login", "fix/login", false));
        assert!(!m("fix/login", "main", false));
        assert!(!m("ui-kit", "main ui-kit", false));
        assert!(m(
            "marketing production",
            "marketing-site production",
            false
        ));
        assert!(!m("kafka-dana dev", "kafka data-platform", false));
        assert!(!m("prod-legacy", "environments production", false));
        assert!(m("s3://b/tmp", "s3://b/tmp/x", false));
        assert!(!m("s3://b/tmp", "s3://b", false));
        assert!(!m("npm-token", "npm-token !org", false));
        assert!(!m("dist-tag:next 3.0.0", "3.0.0 dist-tag:latest", false));
        assert!(!m("jlee permission:read", "jlee permission:admin", false));
        assert!(m("jlee permission:read", "jlee permission:pull", false));
        assert!(m("main", "main", false));
        assert!(m("@acme/ui-kit 2.4.1", "ui-kit", false));
        assert!(!m("@acme/ui-kit 2.4.0", "ui-kit 2.4.1", false));
        assert!(!m("", "ui-kit", false));
        assert!(m("", "feature-x", true));
        assert!(!m("", "main", true));
        // An environment alone suffices when the grant's only other names are a revision id
        // or a build's output directory, not when it names a thing.
        assert!(m("4f2a91 production", "subscriptions production", false));
        assert!(m("dist/ production", "handbook production", false));
        assert!(!m("billing production", "subscriptions production", false));
        assert!(is_revision("4f2a91") && !is_revision("staging") && !is_revision("123456"));
        assert!(tokens("said:worker").contains(&Token::Said("worker".into())));
    }

    #[test]
    fn a_grant_is_grounded_only_in_words_that_name_it() {
        let w = tokens("Publish v2.4.1 of @acme/ui-kit to npm");
        assert!(grounded("2.4.1", &w));
        assert!(grounded("ui-kit", &w));
        assert!(grounded("@acme/ui-kit", &w));
        assert!(!grounded("acme/infra", &w));
        assert!(!grounded("production", &w));
        assert!(!grounded("the", &w));
    }
}

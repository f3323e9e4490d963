//! Writes judged by what they change beyond the file (#41): a file in the workspace is often an
//! effect outside it. CI runs it, GitOps deploys it, `terraform apply` grants it, a migration runs
//! on the database, hooks run on every developer's machine. This module reads a write's change
//! (a diff's added and removed lines, or a whole new file as added) and raises: web safeguards
//! weakened (CORS opened to any origin, CSRF off, secure cookies and redirects off); CI checks
//! removed; a test's expectation edited; new sources of code that runs (unpinned or look-alike
//! Actions, pre-commit hook repositories, dependencies one letter off a popular name);
//! environment overlays and Helm values, IaC access bindings, destructive migrations and deploys
//! put on a schedule. Each has a benign look-alike in tests/fixtures/signals.toml.

use super::*;

/// What a write adds and removes: a diff's `+` and `-` lines, or a whole file as added.
pub(super) struct Change<'a> {
    /// The lines added (without their `+`).
    pub added: Vec<&'a str>,
    /// The lines removed (without their `-`); none for a whole-file write.
    pub removed: Vec<&'a str>,
    /// Lines known to be in the file after the change: the diff's context lines, and every line
    /// of the new content when the write carries both.
    pub after: Vec<&'a str>,
}

impl<'a> Change<'a> {
    /// The change of a write: its diff when it has one, else its content.
    pub(super) fn of(content: Option<&'a str>, diff: Option<&'a str>) -> Change<'a> {
        match (diff, content) {
            (Some(d), _) => {
                let body = |sign: char, header: &str| -> Vec<&'a str> {
                    d.lines()
                        .filter(|l| l.starts_with(sign) && !l.starts_with(header))
                        .map(|l| &l[1..])
                        .collect()
                };
                let mut after: Vec<&'a str> =
                    d.lines().filter_map(|l| l.strip_prefix(' ')).collect();
                after.extend(content.into_iter().flat_map(str::lines));
                Change {
                    added: body('+', "+++"),
                    removed: body('-', "---"),
                    after,
                }
            }
            (None, Some(c)) => Change {
                added: c.lines().collect(),
                removed: Vec::new(),
                after: Vec::new(),
            },
            (None, None) => Change {
                added: Vec::new(),
                removed: Vec::new(),
                after: Vec::new(),
            },
        }
    }

    pub(super) fn added_text(&self) -> String {
        self.added.join("\n")
    }
}

/// Every signal of this module for a write of `path`.
pub(super) fn change_signals(path: &Path, change: &Change, out: &mut Vec<Signal>) {
    let p = path.to_string_lossy().to_ascii_lowercase();
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    web_safeguards(&p, change, out);
    ci_checks_removed(&p, change, out);
    test_expectation_changed(&p, &name, change, out);
    new_code_sources(&p, &name, change, out);
    environment_overlay(&p, out);
    access_bindings(&p, &name, change, out);
    destructive_migration(&p, &name, change, out);
    scheduled_deploy(&p, change, out);
    code_owners(&p, &name, change, out);
    branch_protection(&p, change, out);
    dependency_sources(&p, &name, change, out);
    lint_rules_dropped(&p, &name, change, out);
    open_to_internet(&p, &name, change, out);
    package_repositories(&p, &name, change, out);
    dns_records(&p, &name, change, out);
}

/// A DNS record in infrastructure code (`aws_route53_record`, `cloudflare_record`,
/// `google_dns_record_set`, …) pointed somewhere: where a name sends everyone, once applied.
/// Repointing a record that exists is high (its traffic moves); a new record is medium. The
/// target is the record's name, which the user's words may give.
fn dns_records(p: &str, name: &str, change: &Change, out: &mut Vec<Signal>) {
    const KINDS: &[&str] = &[
        "aws_route53_record",
        "cloudflare_record",
        "cloudflare_dns_record",
        "google_dns_record_set",
        "azurerm_dns_",
        "digitalocean_record",
        "dnsimple_record",
    ];
    if !name.ends_with(".tf") {
        return;
    }
    let file = change.after.iter().chain(&change.added);
    if !file.clone().any(|l| KINDS.iter().any(|k| l.contains(k))) {
        return;
    }
    let points = |l: &str| {
        let c = compact(l);
        ["records=", "value=", "content=", "rrdatas="]
            .iter()
            .any(|k| c.starts_with(k))
    };
    let Some(first) = change.added.iter().find(|l| points(l)) else {
        return;
    };
    let repointed = change.removed.iter().any(|l| points(l));
    // The record's name: the nearest `name = "…"` above the line pointed, in the file.
    let lines: Vec<&str> = if change.after.is_empty() {
        change.added.clone()
    } else {
        change.after.clone()
    };
    let record = lines
        .iter()
        .position(|l| l == first)
        .and_then(|at| {
            lines[..at].iter().rev().take(12).find_map(|l| {
                let c = compact(l);
                c.strip_prefix("name=")
                    .map(|v| v.trim_matches(['"', '\'']).to_string())
            })
        })
        .unwrap_or_else(|| "dns".to_string());
    push(
        out,
        Category::Production,
        if repointed {
            Severity::High
        } else {
            Severity::Medium
        },
        format!(
            "the change to {p} {} the DNS record {record}: where that name sends everyone, once applied",
            if repointed { "repoints" } else { "adds" }
        ),
        &format!("dns {record}"),
    );
}

/// Infrastructure code that opens a port to the whole internet: an ingress rule (a security
/// group's `ingress`, a rule of `type = "ingress"`, a GCP firewall's `source_ranges`, an Azure
/// rule's source prefix, a NetworkPolicy's `from`) added with `0.0.0.0/0`, `::/0`, `*` or
/// `Internet` as its source. High unless the ports are the web's (80, 443); an egress rule to
/// anywhere raises nothing.
fn open_to_internet(p: &str, name: &str, change: &Change, out: &mut Vec<Signal>) {
    let iac = name.ends_with(".tf")
        || name.ends_with(".yaml")
        || name.ends_with(".yml")
        || name.ends_with(".json")
        || name.ends_with(".bicep");
    if !iac {
        return;
    }
    // The direction of the rule each added line is in, as far as the added lines say.
    let mut ingress = false;
    let mut opened = false;
    let mut ports: Vec<String> = Vec::new();
    for l in &change.added {
        let c = compact(l);
        if c.contains("egress") {
            ingress = false;
        }
        if c.contains("ingress")
            || c.starts_with("source_ranges")
            || c.contains("sourceaddressprefix")
            || c.contains("source_address_prefix")
        {
            ingress = true;
        }
        let anywhere = c.contains("0.0.0.0/0")
            || c.contains("::/0")
            || ((c.contains("sourceaddressprefix") || c.contains("source_address_prefix"))
                && (c.contains("\"*\"") || c.contains("'*'") || c.contains("internet")));
        // A source widened inside a block the change leaves as it was (`cidr_blocks` edited in
        // an `ingress { … }` of the file): the block the file puts it in.
        if anywhere && !ingress {
            ingress = block_of(l, &change.after).is_some_and(|b| b == "ingress");
        }
        if ingress && anywhere {
            opened = true;
        }
        if ingress && (c.contains("port") || c.contains("ports")) {
            ports.extend(
                c.split(|ch: char| !ch.is_ascii_digit())
                    .filter(|d| !d.is_empty() && d.len() <= 5 && d != &"0")
                    .map(str::to_string),
            );
        }
    }
    if !opened {
        return;
    }
    ports.sort();
    ports.dedup();
    let web = !ports.is_empty() && ports.iter().all(|x| x == "80" || x == "443");
    push(
        out,
        Category::Privilege,
        if web {
            Severity::Medium
        } else {
            Severity::High
        },
        format!(
            "the change to {p} opens {} to the whole internet (an ingress from 0.0.0.0/0)",
            if ports.is_empty() {
                "a port".to_string()
            } else {
                format!("port {}", ports.join(", "))
            }
        ),
        format!("internet {}", ports.join(" ")).trim(),
    );
}

/// The direction (`ingress` or `egress`) of the block a line lies in, from the lines around it
/// in the file after the change: the nearest opening above it that names one.
fn block_of(line: &str, after: &[&str]) -> Option<&'static str> {
    let at = after.iter().position(|a| *a == line)?;
    after[at.saturating_sub(15)..at].iter().rev().find_map(|a| {
        let c = compact(a);
        if c.contains("egress") {
            Some("egress")
        } else if c.contains("ingress") {
            Some("ingress")
        } else {
            None
        }
    })
}

/// A package repository added to a build (Gradle's `maven { url … }`, a Maven `<repository>` or
/// `<mirror>`, sbt's `resolvers`, pip's `--extra-index-url` in requirements, Poetry's or uv's
/// sources, Composer's `repositories`, a NuGet source, a Gemfile `source`): dependencies may
/// now resolve from it. The registries every build uses by default raise nothing.
fn package_repositories(p: &str, name: &str, change: &Change, out: &mut Vec<Signal>) {
    // The file's text, for the manifests whose repositories live in a section of their own.
    let whole = if matches!(name, "pom.xml" | "pyproject.toml" | "composer.json") {
        change
            .added
            .iter()
            .chain(&change.after)
            .map(|l| l.to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        String::new()
    };
    let has = |s: &str| whole.contains(s);
    let kind = match name {
        "build.gradle" | "build.gradle.kts" | "settings.gradle" | "settings.gradle.kts" => {
            |l: &str| l.contains("maven") || l.contains("url") || l.contains("ivy")
        }
        "build.sbt" => |l: &str| l.contains("resolver") || l.contains(" at "),
        "gemfile" => |l: &str| l.trim_start().starts_with("source"),
        "nuget.config" => |l: &str| l.contains("<add"),
        _ if name.starts_with("requirements") && name.ends_with(".txt") => {
            |l: &str| l.contains("index-url") || l.trim_start().starts_with("-i ")
        }
        "pom.xml" if has("<repository>") || has("<mirror>") => |l: &str| l.contains("<url>"),
        "pyproject.toml"
            if has("tool.poetry.source") || has("tool.uv.index") || has("tool.pdm.source") =>
        {
            |l: &str| l.trim_start().starts_with("url")
        }
        "composer.json" if has("\"repositories\"") => |l: &str| l.contains("\"url\""),
        _ => return,
    };
    const DEFAULTS: &[&str] = &[
        "repo.maven.apache.org",
        "repo1.maven.org",
        "plugins.gradle.org",
        "maven.google.com",
        "dl.google.com",
        "rubygems.org",
        "pypi.org",
        "files.pythonhosted.org",
        "api.nuget.org",
        "packagist.org",
        "repo.packagist.org",
        "repo.scala-sbt.org",
    ];
    for l in &change.added {
        let lower = l.to_ascii_lowercase();
        if lower.trim_start().starts_with(['#', '/']) || !kind(&lower) {
            continue;
        }
        let Some(i) = lower.find("://") else {
            continue;
        };
        let host: String = lower[i + 3..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
            .collect();
        if host.is_empty() || DEFAULTS.contains(&host.as_str()) {
            continue;
        }
        push(
            out,
            Category::SupplyChain,
            Severity::High,
            format!(
                "the change to {p} adds the package repository {host}: the build's dependencies may now come from it"
            ),
            &host,
        );
        return;
    }
}

/// Linters or rules taken out of a linter's configuration: list entries removed from
/// `.golangci.yml`'s `enable:`, `.rubocop.yml`, `.pre-commit`-style lists, or codes removed from
/// ruff's `select`, with fewer put back than taken (a linter swapped for its successor, golint
/// for revive, drops nothing).
fn lint_rules_dropped(p: &str, name: &str, change: &Change, out: &mut Vec<Signal>) {
    let lint_config = name.starts_with(".golangci")
        || name == ".rubocop.yml"
        || name == "ruff.toml"
        || name == ".ruff.toml"
        || name == ".flake8"
        || name == ".pylintrc"
        || name == ".swiftlint.yml"
        || name == "detekt.yml"
        || name == ".stylelintrc.yml"
        || name == ".markdownlint.yaml"
        || name == "tslint.json";
    let ruff_section = name == "pyproject.toml"
        && change
            .after
            .iter()
            .chain(&change.removed)
            .any(|l| l.contains("[tool.ruff"));
    if !lint_config && !ruff_section {
        return;
    }
    // A YAML list entry (`- errcheck`), or the quoted codes of a `select` / `enable` list.
    let entries = |lines: &[&str]| -> Vec<String> {
        let mut out = Vec::new();
        for l in lines {
            let t = l.trim();
            if t.starts_with('#') {
                continue;
            }
            if let Some(item) = t.strip_prefix("- ") {
                out.push(item.trim().trim_matches(['"', '\'']).to_ascii_lowercase());
            } else if let Some((key, value)) = t.split_once('=')
                && ["select", "extend-select", "enable"].contains(&key.trim())
            {
                out.extend(
                    value
                        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                        .filter(|w| !w.is_empty())
                        .map(str::to_ascii_lowercase),
                );
            }
        }
        out
    };
    let removed = entries(&change.removed);
    let added = entries(&change.added);
    let dropped: Vec<&String> = removed.iter().filter(|r| !added.contains(r)).collect();
    if !dropped.is_empty() && added.len() < removed.len() {
        let names: Vec<&str> = dropped.iter().map(|d| d.as_str()).collect();
        push(
            out,
            Category::SafeguardBypass,
            Severity::Medium,
            format!(
                "the change to {p} takes linters or rules out of the check (`{}`)",
                names.join("`, `")
            ),
            "lint rules",
        );
    }
}

/// Branch protection weakened in infrastructure code (Terraform's `github_branch_protection`,
/// a ruleset): admins no longer bound, code-owner reviews off, fewer approvals required, force
/// pushes or deletions allowed.
fn branch_protection(p: &str, change: &Change, out: &mut Vec<Signal>) {
    let added = compact(&change.added_text());
    let removed = compact(&change.removed.join("\n"));
    let count = |text: &str| -> Option<u32> {
        let i = text.find("required_approving_review_count=")?;
        text[i + 32..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok()
    };
    let fewer = matches!((count(&removed), count(&added)), (Some(b), Some(a)) if a < b);
    const OFF: &[&str] = &[
        "enforce_admins=false",
        "require_code_owner_reviews=false",
        "allows_force_pushes=true",
        "allows_deletions=true",
        "required_linear_history=false",
        "require_signed_commits=false",
    ];
    let hit = OFF
        .iter()
        .find(|k| added.contains(*k))
        .copied()
        .or(fewer.then_some("required_approving_review_count lowered"));
    if let Some(hit) = hit {
        push(
            out,
            Category::SafeguardBypass,
            Severity::High,
            format!("the change to {p} weakens branch protection (`{hit}`)"),
            "branch protection",
        );
    }
}

/// A dependency pointed at a git repository or a URL instead of its registry (`tokio = { git =
/// \"https://github.com/…\" }`, `"x": "github:owner/x"`, `pkg @ git+https://…`): code from
/// outside the index the lockfile trusts.
fn dependency_sources(p: &str, name: &str, change: &Change, out: &mut Vec<Signal>) {
    let manifest = matches!(
        name,
        "cargo.toml" | "package.json" | "pyproject.toml" | "gemfile" | "go.mod"
    ) || (name.starts_with("requirements") && name.ends_with(".txt"));
    if !manifest {
        return;
    }
    let hit = change.added.iter().map(|l| l.trim()).find(|l| {
        let c = compact(l);
        c.contains("git=\"")
            || c.contains("git+")
            || c.contains(":\"github:")
            || c.contains(":\"git://")
            || c.contains("git:'")
            || c.contains("github:'")
            || (c.contains("@https://") && !c.starts_with('#'))
    });
    if let Some(line) = hit {
        push(
            out,
            Category::SupplyChain,
            Severity::High,
            format!("the change to {p} takes a dependency from a git repository or URL (`{line}`)"),
            "git dependency",
        );
    }
}

/// A CODEOWNERS change that takes an owner off a path it kept (a required reviewer removed);
/// a path added, or an owner added, removes none.
fn code_owners(p: &str, name: &str, change: &Change, out: &mut Vec<Signal>) {
    if name != "codeowners" {
        return;
    }
    let entry = |l: &str| -> Option<(String, Vec<String>)> {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            return None;
        }
        let mut parts = l.split_whitespace();
        let path = parts.next()?.to_string();
        Some((path, parts.map(str::to_string).collect()))
    };
    let after: Vec<(String, Vec<String>)> = change
        .added
        .iter()
        .chain(&change.after)
        .filter_map(|l| entry(l))
        .collect();
    let dropped = change
        .removed
        .iter()
        .filter_map(|l| entry(l))
        .find_map(|(path, owners)| {
            let now: Vec<&String> = after
                .iter()
                .filter(|(p2, _)| *p2 == path)
                .flat_map(|(_, o)| o)
                .collect();
            owners
                .into_iter()
                .find(|o| !now.contains(&o))
                .map(|o| (path, o))
        });
    if let Some((path, owner)) = dropped {
        push(
            out,
            Category::SafeguardBypass,
            Severity::Medium,
            format!("the change to {p} takes {owner} off {path} (a required reviewer removed)"),
            "code owners",
        );
    }
}

fn push(out: &mut Vec<Signal>, c: Category, s: Severity, evidence: String, target: &str) {
    out.push(sig(c, s, evidence, target));
}

/// The text lowercased with every space taken out, as the change's patterns are written.
pub(super) fn compact(s: &str) -> String {
    s.to_ascii_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// CORS opened to any origin, CSRF protection off, cookies or redirects made insecure, every
/// host allowed: written in code or config (compared without spaces, case-insensitively).
fn web_safeguards(p: &str, change: &Change, out: &mut Vec<Signal>) {
    let added = compact(&change.added_text());
    cors_opened(p, &added, out);
    csrf_off(p, change, &added, out);
    security_settings(p, change, &added, out);
}

/// CORS opened to any origin; high with credentials.
fn cors_opened(p: &str, added: &str, out: &mut Vec<Signal>) {
    const CORS_ANY: &[&str] = &[
        "allow_origins=[\"*\"]",
        "allow_origins=['*']",
        "access-control-allow-origin:*",
        "access-control-allow-origin\"*\"",
        "access-control-allow-origin','*'",
        "access-control-allow-origin\",\"*\"",
        "cors_allow_all_origins=true",
        "cors_origin_allow_all=true",
        "origin:'*'",
        "origin:\"*\"",
        "origin:true",
        "allowanyorigin()",
        "allowedorigins(\"*\")",
        "allowedoriginpatterns(\"*\")",
        "allowed_origins:[\"*\"]",
        "allowed_origins=[\"*\"]",
    ];
    // `origin: (origin, callback) => callback(null, true)`: every origin reflected.
    let reflected = added.contains("origin")
        && ["callback(null,true)", "cb(null,true)"]
            .iter()
            .any(|k| added.contains(k));
    let hit = CORS_ANY
        .iter()
        .find(|k| added.contains(*k))
        .copied()
        .or(reflected.then_some("every origin reflected"));
    if let Some(hit) = hit {
        let with_credentials = added.contains("credentials:true")
            || added.contains("allow_credentials=true")
            || added.contains("cors_allow_credentials=true")
            || added.contains("allowcredentials(true)")
            || added.contains("allow-credentials:true");
        push(
            out,
            Category::SafeguardBypass,
            if with_credentials {
                Severity::High
            } else {
                Severity::Medium
            },
            format!(
                "the content written to {p} opens CORS to any origin (`{hit}`){}",
                if with_credentials {
                    ", with credentials"
                } else {
                    ""
                }
            ),
            "cors",
        );
    }
}

/// CSRF protection switched off, or its middleware removed.
fn csrf_off(p: &str, change: &Change, added: &str, out: &mut Vec<Signal>) {
    const CSRF_OFF: &[&str] = &[
        "csrf().disable()",
        "csrf(abstracthttpconfigurer::disable)",
        "csrf(csrf->csrf.disable())",
        "wtf_csrf_enabled=false",
        "@csrf_exempt",
        "csrf:false",
        "csrf_protection=false",
        "protect_from_forgery=false",
        "skip_forgery_protection",
    ];
    let csrf_middleware_removed = change
        .removed
        .iter()
        .any(|l| l.contains("CsrfViewMiddleware") || l.contains("csurf("))
        && !change.added.iter().any(|l| {
            // A comment that names the middleware (`# CsrfViewMiddleware disabled`) keeps none.
            let code = !l.trim_start().starts_with(['#', '/', '*', '-']);
            code && (l.contains("CsrfViewMiddleware") || l.contains("csurf("))
        });
    // Laravel's VerifyCsrfToken: a wildcard in `$except` exempts every route (`'*'`,
    // `'api/*'` exempts a prefix, which the reviewer weighs).
    let laravel_wildcard = p.ends_with("verifycsrftoken.php")
        && change.added.iter().any(|l| {
            let t = l.trim().trim_end_matches(',');
            t == "'*'" || t == "\"*\"" || t == "'/*'"
        });
    if laravel_wildcard {
        push(
            out,
            Category::SafeguardBypass,
            Severity::High,
            format!("the change to {p} exempts every route from CSRF verification (`'*'`)"),
            "csrf",
        );
    } else if let Some(hit) = CSRF_OFF.iter().find(|k| added.contains(*k)) {
        push(
            out,
            Category::SafeguardBypass,
            Severity::High,
            format!("the content written to {p} switches CSRF protection off (`{hit}`)"),
            "csrf",
        );
    } else if csrf_middleware_removed {
        push(
            out,
            Category::SafeguardBypass,
            Severity::High,
            format!("the change to {p} removes the CSRF middleware"),
            "csrf",
        );
    }
}

/// Cookies, redirects and host checks made insecure; security headers removed.
fn security_settings(p: &str, change: &Change, added: &str, out: &mut Vec<Signal>) {
    const INSECURE: &[&str] = &[
        "session_cookie_secure=false",
        "csrf_cookie_secure=false",
        "secure_ssl_redirect=false",
        "secure_hsts_seconds=0",
        "allowed_hosts=['*']",
        "allowed_hosts=[\"*\"]",
        "httponly:false",
        "contentsecuritypolicy:false",
        "frameguard:false",
        "hsts:false",
        // nginx: `0` switches the request body limit off for everything the block serves.
        "client_max_body_size0;",
    ];
    if let Some(hit) = INSECURE.iter().find(|k| added.contains(*k)) {
        push(
            out,
            Category::SafeguardBypass,
            Severity::Medium,
            format!("the content written to {p} weakens a security setting (`{hit}`)"),
            "security settings",
        );
    }
    const HEADERS: &[&str] = &[
        "strict-transport-security",
        "content-security-policy",
        "x-frame-options",
        "x-content-type-options",
        "helmet(",
    ];
    let removed_header = change.removed.iter().find_map(|l| {
        let l = l.to_ascii_lowercase();
        HEADERS.iter().find(|h| l.contains(*h)).copied()
    });
    if let Some(h) = removed_header
        && !change
            .added
            .iter()
            .any(|l| l.to_ascii_lowercase().contains(h))
    {
        push(
            out,
            Category::SafeguardBypass,
            Severity::Medium,
            format!("the change to {p} removes a security header (`{h}`)"),
            "security headers",
        );
    }
}

/// Whether a path is a CI pipeline definition.
pub(crate) fn ci_file(p: &str) -> bool {
    p.contains(".github/workflows/")
        || p.ends_with(".gitlab-ci.yml")
        || p.contains(".circleci/")
        || p.ends_with("jenkinsfile")
        || p.ends_with("azure-pipelines.yml")
        || p.ends_with("bitbucket-pipelines.yml")
}

/// The check a CI line runs (`npm test`, `cargo clippy`, `pytest`), if it runs one.
fn check_in(line: &str) -> Option<&'static str> {
    const CHECKS: &[&str] = &[
        "test", "pytest", "jest", "vitest", "lint", "eslint", "ruff", "mypy", "clippy", "tsc",
        "rspec", "phpunit", "audit", "coverage", "codeql", "semgrep", "gitleaks", "trivy",
        "bandit", "flake8", "check",
    ];
    let l = line.trim().to_ascii_lowercase();
    let runs = l.starts_with("run:")
        || l.starts_with("- run:")
        || l.starts_with("- ")
        || l.starts_with("script:")
        || l.starts_with("uses:")
        || l.starts_with("- uses:");
    if !runs {
        return None;
    }
    CHECKS.iter().copied().find(|c| {
        l.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .any(|w| w == *c)
    })
}

/// A CI pipeline whose change removes a step or job that runs a check, with no step running
/// that check added back or left in the file (a matrix job removed while another job still runs
/// the tests removes no check).
fn ci_checks_removed(p: &str, change: &Change, out: &mut Vec<Signal>) {
    if !ci_file(p) {
        return;
    }
    let kept: Vec<&str> = change
        .added
        .iter()
        .chain(&change.after)
        .filter_map(|l| check_in(l))
        .collect();
    if let Some((line, check)) = change.removed.iter().find_map(|l| {
        check_in(l)
            .filter(|c| !kept.contains(c))
            .map(|c| (l.trim(), c))
    }) {
        push(
            out,
            Category::SafeguardBypass,
            Severity::High,
            format!("the change to {p} removes a CI check ({check}: `{line}`)"),
            "ci check",
        );
    }
}

/// Whether a line states what a test expects.
fn assertion(line: &str) -> bool {
    const ASSERTS: &[&str] = &[
        "assert",
        "expect(",
        "toequal(",
        "tobe(",
        "assertequal",
        "assert_eq!",
        "should",
        "self.assert",
        "t.equal(",
        "require.equal(",
    ];
    let l = line.to_ascii_lowercase();
    ASSERTS.iter().any(|a| l.contains(a))
}

/// A test file whose change rewrites an assertion: an expectation edited (often to match what
/// buggy code returns). Whether the user asked for the new behaviour is the reviewer's and the
/// mandate's question; the signal says that an expectation moved.
fn test_expectation_changed(p: &str, name: &str, change: &Change, out: &mut Vec<Signal>) {
    let test_file = name.contains("test")
        || name.contains("spec")
        || p.contains("/tests/")
        || p.contains("/test/")
        || p.contains("/__tests__/");
    if !test_file {
        return;
    }
    let removed: Vec<&str> = change
        .removed
        .iter()
        .map(|l| l.trim())
        .filter(|l| assertion(l) || table_case(l))
        .collect();
    let edited = change
        .added
        .iter()
        .map(|l| l.trim())
        .filter(|l| (assertion(l) || table_case(l)) && !removed.contains(l))
        .find(|a| {
            removed
                .iter()
                .any(|r| strsim::normalized_levenshtein(r, a) >= 0.6)
        });
    if let Some(line) = edited {
        push(
            out,
            Category::SafeguardBypass,
            Severity::Medium,
            format!("the change to {p} edits what a test expects (`{line}`)"),
            "test expectation",
        );
        return;
    }
    // A check taken out and put back nowhere: an assertion, or a row of a table-driven test
    // (`{name: "negative", in: "-5m", wantErr: true},`).
    let added: Vec<&str> = change.added.iter().map(|l| l.trim()).collect();
    let dropped = change.removed.iter().map(|l| l.trim()).find(|l| {
        (assertion(l) || table_case(l))
            && !added.contains(l)
            && !change.after.iter().any(|a| a.trim() == *l)
    });
    if let Some(line) = dropped {
        push(
            out,
            Category::SafeguardBypass,
            Severity::Medium,
            format!("the change to {p} removes what a test checks (`{line}`)"),
            "test expectation",
        );
    }
}

/// A row of a table-driven test: a struct or tuple literal naming what it expects.
fn table_case(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    // A positional row (`{"1h30m", 90 * time.minute},`, pytest's `("TX", 19.99, 1.25),`): an
    // input and what it gives.
    let positional = |open: char, close: &str| {
        l.starts_with(open) && l.ends_with(close) && l.matches(',').count() >= 2
    };
    positional('(', "),")
        || positional('[', "],")
        || (l.starts_with('{')
            && (positional('{', "},")
                || ["want", "expect", "err:", "error:"]
                    .iter()
                    .any(|w| l.contains(w))))
}

/// Actions and hook repositories people use, whose look-alikes are how a malicious one gets in.
const KNOWN_SOURCES: &[&str] = &[
    "actions/checkout",
    "actions/setup-node",
    "actions/setup-python",
    "actions/setup-go",
    "actions/setup-java",
    "actions/cache",
    "actions/upload-artifact",
    "actions/download-artifact",
    "actions/github-script",
    "docker/login-action",
    "docker/build-push-action",
    "docker/setup-buildx-action",
    "aws-actions/configure-aws-credentials",
    "google-github-actions/auth",
    "github/codeql-action",
    "codecov/codecov-action",
    "softprops/action-gh-release",
    "dtolnay/rust-toolchain",
    "swatinem/rust-cache",
    "pnpm/action-setup",
    "hashicorp/setup-terraform",
    "pre-commit/pre-commit-hooks",
    "psf/black",
    "psf/black-pre-commit-mirror",
    "pycqa/flake8",
    "pycqa/isort",
    "astral-sh/ruff-pre-commit",
    "pre-commit/mirrors-prettier",
    "pre-commit/mirrors-mypy",
    "pre-commit/mirrors-eslint",
    "asottile/pyupgrade",
    "gitleaks/gitleaks",
    "antonbabenko/pre-commit-terraform",
];

/// `owner/repo` of an Actions `uses:` or a pre-commit `repo:` line, and its ref.
fn source_of(line: &str) -> Option<(String, Option<String>)> {
    let l = line.trim().trim_start_matches("- ").trim();
    let value = l
        .strip_prefix("uses:")
        .or_else(|| l.strip_prefix("repo:"))?;
    // A YAML comment after the value (`@<sha> # v1.26.0`, how pinned Actions name their tag).
    let value = value.split(" #").next().unwrap_or(value);
    let rest = value.trim().trim_matches(['"', '\'']);
    if rest.starts_with("./") || rest.starts_with("docker://") || rest == "local" {
        return None;
    }
    let rest = rest
        .trim_start_matches("https://github.com/")
        .trim_start_matches("http://github.com/")
        .trim_end_matches(".git");
    let (repo, git_ref) = match rest.split_once('@') {
        Some((r, g)) => (r, Some(g.to_string())),
        None => (rest, None),
    };
    let mut parts = repo.split('/');
    let owner_repo = format!("{}/{}", parts.next()?, parts.next()?).to_ascii_lowercase();
    Some((owner_repo, git_ref))
}

/// Actions and pre-commit hooks added: one edit or two away from a known one (high), a
/// third-party Action not pinned to a commit SHA (medium), a hook repository new to the file
/// (medium: its code runs on every commit); and dependencies one letter off a popular package.
/// A submodule added from a host that is not a well-known forge (`url =
/// https://git.acme-specs-mirror.io/acme/api-specs.git`): code from there lands in the build.
/// A relative URL or one on GitHub, GitLab, Bitbucket or Codeberg is the reviewer's to weigh.
fn submodule_sources(p: &str, change: &Change, out: &mut Vec<Signal>) {
    const FORGES: &[&str] = &[
        "github.com",
        "gitlab.com",
        "bitbucket.org",
        "codeberg.org",
        "git.sr.ht",
    ];
    for line in &change.added {
        let Some((key, url)) = line.split_once('=') else {
            continue;
        };
        if key.trim() != "url" {
            continue;
        }
        let url = url.trim();
        let host = url
            .split_once("://")
            .map(|(_, rest)| rest)
            .or_else(|| url.split_once('@').map(|(_, rest)| rest))
            .and_then(|rest| rest.split(['/', ':']).next())
            .unwrap_or("");
        if host.is_empty() || FORGES.contains(&host) {
            continue;
        }
        push(
            out,
            Category::SupplyChain,
            Severity::High,
            format!(
                "the change to {p} adds a submodule from {host} ({url}): its code lands in the build"
            ),
            host,
        );
    }
}

fn new_code_sources(p: &str, name: &str, change: &Change, out: &mut Vec<Signal>) {
    if name == ".gitmodules" {
        submodule_sources(p, change, out);
    }
    let precommit = name == ".pre-commit-config.yaml" || name == ".pre-commit-config.yml";
    if ci_file(p) || precommit {
        let before: Vec<String> = change
            .removed
            .iter()
            .filter_map(|l| source_of(l).map(|(r, _)| r))
            .collect();
        for line in &change.added {
            let Some((repo, git_ref)) = source_of(line) else {
                continue;
            };
            if let Some(real) = KNOWN_SOURCES.iter().find(|k| {
                **k != repo && strsim::damerau_levenshtein(k, &repo) <= 2 && repo.len() >= 8
            }) {
                // A look-alike is never what the user meant: critical, whatever the words.
                push(
                    out,
                    Category::SupplyChain,
                    Severity::Critical,
                    format!(
                        "the change to {p} adds `{repo}`, a look-alike of `{real}`, whose code runs in CI or on every commit"
                    ),
                    &repo,
                );
                continue;
            }
            let first_party = repo.starts_with("actions/") || repo.starts_with("github/");
            let pinned = git_ref
                .as_deref()
                .is_some_and(|g| g.len() == 40 && g.chars().all(|c| c.is_ascii_hexdigit()));
            if precommit && !before.contains(&repo) && !KNOWN_SOURCES.contains(&repo.as_str()) {
                push(
                    out,
                    Category::SupplyChain,
                    Severity::Medium,
                    format!(
                        "the change to {p} adds the hook repository `{repo}`: its code runs on every commit"
                    ),
                    &repo,
                );
            } else if !precommit && !first_party && !pinned && !before.contains(&repo) {
                push(
                    out,
                    Category::SupplyChain,
                    Severity::Medium,
                    format!(
                        "the change to {p} adds the Action `{repo}` not pinned to a commit SHA"
                    ),
                    &repo,
                );
            }
        }
    }
    let popular: Option<&'static [&'static str]> = match name {
        "package.json" => Some(POPULAR_NPM),
        "requirements.txt" | "requirements-dev.txt" | "pyproject.toml" | "setup.cfg" => {
            Some(POPULAR_PYPI)
        }
        "cargo.toml" => Some(POPULAR_CRATES),
        "go.mod" => Some(POPULAR_GO),
        "gemfile" => Some(POPULAR_GEMS),
        _ => None,
    };
    let Some(popular) = popular else {
        return;
    };
    for line in &change.added {
        let word = line
            .trim()
            .trim_start_matches(['"', '\'', '-'])
            .split([
                '"', '\'', '=', '<', '>', '~', '!', '[', ';', ':', ' ', '^', '@',
            ])
            .find(|w| !w.is_empty())
            .unwrap_or("");
        let word = word.trim_start_matches("gem").trim();
        if let Some(real) = typosquat_of(word, popular) {
            push(
                out,
                Category::SupplyChain,
                Severity::Critical,
                format!(
                    "the change to {p} adds the dependency `{word}`, a look-alike of the popular package `{real}` (typosquatting)"
                ),
                word,
            );
        }
    }
}

/// The environment a deployment file configures, from its path (`overlays/production/`,
/// `environments/staging/`, `values-prod.yaml`, `prod.tfvars`).
fn environment_of(p: &str) -> Option<&'static str> {
    const ENVS: &[(&str, &str)] = &[
        ("production", "production"),
        ("prod", "production"),
        ("prd", "production"),
        ("staging", "staging"),
        ("stage", "staging"),
        ("stg", "staging"),
        ("preprod", "preprod"),
        ("qa", "qa"),
        ("uat", "uat"),
    ];
    let deploy_file = p.contains("/overlays/")
        || p.contains("/environments/")
        || p.contains("/envs/")
        || p.contains("/env/")
        || p.contains("/clusters/")
        || p.contains("/helm/")
        || p.contains("/charts/")
        || p.contains("/deploy/")
        || p.ends_with(".tfvars")
        || p.contains("values-")
        || p.contains("values.");
    // A settings file named for its environment (`config/flags/prod.json`,
    // `maintenance/prod.yaml`): what the live service reads.
    let stem = p
        .rsplit('/')
        .next()
        .and_then(|n| n.split('.').next())
        .unwrap_or("");
    let settings_file = ENVS.iter().any(|(k, _)| *k == stem)
        && [
            "/config/",
            "/flags/",
            "/feature-flags/",
            "/maintenance/",
            "/settings/",
            "/conf/",
        ]
        .iter()
        .any(|d| p.contains(d));
    if !deploy_file && !settings_file {
        return None;
    }
    p.split(['/', '-', '.', '_'])
        .find_map(|seg| ENVS.iter().find(|(k, _)| *k == seg).map(|(_, env)| *env))
}

/// A file that configures what runs in an environment (a GitOps overlay, Helm values, tfvars):
/// what it says is deployed by the next sync or apply. Its target is the environment, so a user
/// who named it authorises it and one who named another does not.
fn environment_overlay(p: &str, out: &mut Vec<Signal>) {
    if let Some(env) = environment_of(p) {
        push(
            out,
            Category::Production,
            if env == "production" {
                Severity::High
            } else {
                Severity::Medium
            },
            format!("{p} configures the {env} environment: its next sync or apply deploys it"),
            env,
        );
    }
}

/// Access granted in infrastructure code or Kubernetes RBAC: an IAM binding, member or policy,
/// a role assignment, a (Cluster)RoleBinding; admin, owner or `*` is high.
fn access_bindings(p: &str, name: &str, change: &Change, out: &mut Vec<Signal>) {
    let iac = name.ends_with(".tf")
        || name.ends_with(".yaml")
        || name.ends_with(".yml")
        || name.ends_with(".json")
        || name.ends_with(".bicep");
    if !iac {
        return;
    }
    let added = compact(&change.added_text());
    const GRANTS: &[&str] = &[
        "_iam_binding",
        "_iam_member",
        "_iam_policy",
        "role_assignment",
        "kind:clusterrolebinding",
        "kind:rolebinding",
        "aws_iam_role_policy",
        "aws_iam_group_policy",
        "aws_iam_user_policy",
        "resource\"aws_iam_policy\"",
        "aws_iam_policy_document",
        // A statement added to a policy document already in the file.
        "statement{",
        "\"statement\":",
        "actions=[",
        "statement=[",
    ];
    let Some(grant) = GRANTS.iter().find(|g| added.contains(*g)) else {
        return;
    };
    // Every action of a service (`s3:*`) on every resource.
    let service_wide = (added.contains(":*\"") || added.contains("actions=[\"*\"]"))
        && (added.contains("resources=[\"*\"]")
            || added.contains("\"resource\":\"*\"")
            || added.contains("resource=\"*\"")
            || added.contains("resource=[\"*\"]"));
    const WIDE: &[&str] = &[
        "roles/owner",
        "roles/editor",
        "cluster-admin",
        "administratoraccess",
        "\"action\":\"*\"",
        "actions=[\"*\"]",
        "action=\"*\"",
        "allusers",
        "allauthenticatedusers",
        "\"owner\"",
        "name:admin",
    ];
    let wide = WIDE
        .iter()
        .find(|w| added.contains(*w))
        .copied()
        .or(service_wide.then_some("every action on every resource"));
    push(
        out,
        Category::Privilege,
        if wide.is_some() {
            Severity::High
        } else {
            Severity::Medium
        },
        format!(
            "the change to {p} grants access (`{}`{})",
            grant.trim_start_matches('_'),
            wide.map(|w| format!(", {w}")).unwrap_or_default()
        ),
        &binding_target(change, wide.is_some()),
    );
}

/// What an access binding grants, as a target the mandate can match: its level
/// (`permission:read` when every verb or action only reads, `admin` when it is wide, else
/// `write`) and the names it binds (members, subjects, roles, resources, buckets).
fn binding_target(change: &Change, wide: bool) -> String {
    const KEYS: &[&str] = &[
        "name",
        "member",
        "subjects",
        "resource",
        "repository",
        "bucket",
        "role",
        "principal",
        "serviceaccount",
        "users",
        "groups",
    ];
    const VERBS: &[&str] = &["verbs", "actions", "role"];
    const NOT_NAMES: &[&str] = &[
        "kind",
        "name",
        "role",
        "roles",
        "rolebinding",
        "clusterrole",
        "group",
        "apigroup",
        "rbac",
        "authorization",
        "k8s",
        "resources",
        "resource",
        "arn",
        "aws",
        "google",
        "email",
        "serviceaccount",
        "member",
        "members",
        "subjects",
        "self",
        "location",
        "var",
        "repository",
        "bucket",
        "apigroups",
        "namespace",
    ];
    let mut names: Vec<String> = Vec::new();
    let mut verbs: Vec<String> = Vec::new();
    for l in &change.added {
        let Some((key, value)) = l.split_once([':', '=']) else {
            continue;
        };
        let key = compact(key)
            .trim_start_matches('-')
            .trim_matches('"')
            .to_string();
        let words = value
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*'))
            .filter(|w| w.len() >= 3 || *w == "*")
            .map(str::to_ascii_lowercase);
        if VERBS.iter().any(|k| key == *k) {
            verbs.extend(words.clone());
        }
        if KEYS.iter().any(|k| key.contains(k)) {
            names.extend(words.filter(|w| !NOT_NAMES.contains(&w.as_str()) && w != "*"));
        }
    }
    // `roles/storage.objectViewer`, `verbs: ["get", "list"]`, `s3:GetObject`: reads;
    // anything that creates, changes or deletes (or `*`) writes.
    const READS: &[&str] = &[
        "get", "list", "watch", "describe", "read", "viewer", "reader",
    ];
    const WRITES: &[&str] = &[
        "create",
        "update",
        "patch",
        "delete",
        "put",
        "post",
        "write",
        "writer",
        "editor",
        "admin",
        "owner",
        "push",
        "upload",
        "manage",
        "full",
        "escalate",
        "bind",
        "impersonate",
    ];
    let like = |v: &String, list: &[&str]| {
        list.iter()
            .any(|r| v == r || v.starts_with(r) || v.ends_with(r))
    };
    let level = if wide {
        "admin"
    } else if verbs.iter().any(|v| like(v, READS))
        && !verbs.iter().any(|v| v == "*" || like(v, WRITES))
    {
        "read"
    } else {
        "write"
    };
    names.sort();
    names.dedup();
    format!("access binding permission:{level} {}", names.join(" "))
}

/// A migration whose added statements drop or empty data: `DROP TABLE`, `DROP COLUMN`,
/// `TRUNCATE`, a `DELETE` (with or without `WHERE`), Alembic's and Rails' `drop_table`/`drop_column`/
/// `remove_column`. A migration that only adds raises nothing.
fn destructive_migration(p: &str, name: &str, change: &Change, out: &mut Vec<Signal>) {
    let migration = p.contains("/migrations/")
        || p.contains("/migrate/")
        || p.contains("/alembic/versions/")
        || p.contains("/db/changelog/")
        || name.ends_with(".sql");
    // A down migration runs only on a rollback.
    // Flyway's undo migrations are `U<version>__…`.
    let undo = name.starts_with('u')
        && name[1..].starts_with(|c: char| c.is_ascii_digit())
        && name.contains("__");
    if !migration || name.ends_with(".down.sql") || undo {
        return;
    }
    // Statements, not lines: `DELETE FROM users` and its `WHERE` may be on two lines.
    // Comment lines run nothing (`-- drop the old table` before the statement that does).
    let up: Vec<&str> = up_lines(&change.added)
        .into_iter()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect();
    let statements: Vec<String> = up
        .join("\n")
        .split(';')
        .map(|st| st.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|st| !st.is_empty())
        .collect();
    let destroys = |st: &str| {
        let u = st.to_ascii_uppercase();
        let c = compact(st);
        (u.contains("DROP TABLE") || u.contains("DROP COLUMN") || u.contains("TRUNCATE"))
            || (u.contains("DELETE FROM") && !u.contains("WHERE"))
            || c.contains("op.drop_table(")
            || c.contains("op.drop_column(")
            || c.contains("drop_table")
            || c.contains("remove_column")
            || c.contains("migrations.removefield(")
            || c.contains("migrations.deletemodel(")
    };
    // Rows deleted by a condition are gone for good too: the user's words must name them
    // (`purge the sessions that expired` grants a `DELETE FROM sessions WHERE …`).
    let deletes_rows = |st: &&String| st.to_ascii_uppercase().contains("DELETE FROM");
    let Some(hit) = statements
        .iter()
        .find(|st| destroys(st))
        .or_else(|| statements.iter().find(deletes_rows))
    else {
        return;
    };
    let line: String = hit.chars().take(160).collect();
    push(
        out,
        Category::Destructive,
        Severity::High,
        format!("the migration {p} destroys data when it runs (`{line}`)"),
        dropped_object(&line).as_deref().unwrap_or("migration"),
    );
}

/// The lines of a migration that run when it is applied: a down section's (dbmate's
/// `-- migrate:down`, goose's `-- +goose Down`, sql-migrate's `-- +migrate Down`, Alembic's
/// `def downgrade`, Rails' `def down`, knex's `exports.down`, TypeORM's `async down(`) run only on
/// a rollback, until an up section starts again.
fn up_lines<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let mut down = false;
    let mut out = Vec::new();
    for l in lines {
        let c = compact(l);
        if c.contains("migrate:down")
            || c.contains("+goosedown")
            || c.contains("+migratedown")
            || c.starts_with("defdowngrade(")
            || c == "defdown"
            || c.starts_with("exports.down")
            || c.contains("asyncdown(")
        {
            down = true;
        } else if c.contains("migrate:up")
            || c.contains("+gooseup")
            || c.contains("+migrateup")
            || c.starts_with("defupgrade(")
            || c == "defup"
            || c == "defchange"
            || c.starts_with("exports.up")
            || c.contains("asyncup(")
        {
            down = false;
        } else if !down {
            out.push(*l);
        }
    }
    out
}

/// The table or column a destructive statement names (`DROP TABLE IF EXISTS legacy_log` →
/// `legacy_log`, `DROP COLUMN total` → `total`, `op.drop_column('orders', …)` → `orders`), so
/// that a user who named it can authorise exactly that.
fn dropped_object(line: &str) -> Option<String> {
    let words: Vec<String> = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    const SKIP: &[&str] = &[
        "drop",
        "table",
        "column",
        "if",
        "exists",
        "truncate",
        "delete",
        "from",
        "alter",
        "op",
        "only",
        "cascade",
        "remove_column",
        "drop_table",
        "drop_column",
        "migrations",
        "removefield",
        "deletemodel",
        "def",
        "self",
    ];
    // `remove_column :customers, :fax_number`, `op.drop_column('orders', 'notes')`: the table
    // and the column.
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    if let Some(i) = lower
        .iter()
        .position(|w| w == "remove_column" || w == "drop_column" || w == "op.drop_column")
        && let (Some(t), Some(c)) = (words.get(i + 1), words.get(i + 2))
    {
        return Some(format!("{t} {c}"));
    }
    let start = words.iter().position(|w| {
        let l = w.to_ascii_lowercase();
        l == "drop" || l == "truncate" || l == "from" || l.contains("drop_") || l.contains("remove")
    })?;
    words[start..]
        .iter()
        .find(|w| !SKIP.contains(&w.to_ascii_lowercase().as_str()) && !w.contains("op."))
        .map(|w| w.trim_start_matches("op.").to_string())
}

/// A schedule added to a pipeline that deploys or publishes: the deploy then runs unattended,
/// on every tick.
fn scheduled_deploy(p: &str, change: &Change, out: &mut Vec<Signal>) {
    if !ci_file(p) {
        return;
    }
    let schedules = change.added.iter().any(|l| {
        let l = l.trim().to_ascii_lowercase();
        l.starts_with("schedule:") || l.starts_with("- cron:") || l.starts_with("cron:")
    });
    let text = change.added_text().to_ascii_lowercase();
    let deploys = [
        "deploy",
        "kubectl apply",
        "terraform apply",
        "helm upgrade",
        "publish",
        "release",
    ]
    .iter()
    .any(|w| text.contains(w))
        || p.contains("deploy")
        || p.contains("release");
    if schedules && deploys {
        // The environment it deploys, from the pipeline's name and what it adds: production
        // (or none named) is high, a non-production one only is medium.
        let haystack = format!("{p} {text}");
        let said: Vec<&str> = haystack
            .split(|c: char| !c.is_ascii_alphanumeric())
            .collect();
        let named = |words: &[&str]| words.iter().any(|w| said.contains(w));
        let env = if named(&["production", "prod", "prd", "live"]) {
            Some("production")
        } else if named(&["staging", "stage", "stg"]) {
            Some("staging")
        } else if named(&["dev", "development", "preview", "qa", "sandbox"]) {
            Some("dev")
        } else {
            None
        };
        push(
            out,
            Category::Production,
            if env.is_none_or(|e| e == "production") {
                Severity::High
            } else {
                Severity::Medium
            },
            format!(
                "the change to {p} runs a deploy or release on a schedule{}",
                env.map(|e| format!(" (to {e})")).unwrap_or_default()
            ),
            format!("schedule {}", env.unwrap_or("")).trim(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::dropped_object;

    #[test]
    fn a_destructive_statement_names_what_it_drops() {
        for (line, object) in [
            ("DROP TABLE IF EXISTS legacy_audit_log;", "legacy_audit_log"),
            (
                "ALTER TABLE orders DROP COLUMN legacy_total;",
                "legacy_total",
            ),
            ("TRUNCATE TABLE sessions;", "sessions"),
            ("DELETE FROM carts;", "carts"),
            ("    op.drop_table('legacy_audit_log')", "legacy_audit_log"),
            ("    remove_column :users, :nickname", "users nickname"),
            ("    op.drop_column('orders', 'notes')", "orders notes"),
        ] {
            assert_eq!(dropped_object(line).as_deref(), Some(object), "{line}");
        }
    }
}

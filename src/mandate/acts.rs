//! What an action does, in the mandate's terms, computed in code.
//!
//! Every simple command of a shell line, and every file write, fetch and MCP call, is looked up
//! in a table of programs and tools: `npm publish` publishes, `git push origin fix/login` pushes
//! `fix/login`, `gh pr merge 88` merges #88, `kubectl apply -n staging` deploys to staging, an
//! MCP `post_message` to `#ops` sends outside. Low-risk acts are listed too (a push, an install,
//! a comment), so that a grant can match the ordinary steps a request implies. Each [`Done`]
//! names the command it came from and its targets as the command writes them. What the table
//! does not know does no act here (the rest of the pipeline still judges it).

use super::Act;
use crate::normalize::shell::SimpleCommand;
use crate::normalize::{Context, NormalizedAction};
use crate::request::{Action, ReviewRequest};

/// One act an action does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// The act.
    pub act: Act,
    /// What it acts on, as written in the command (a package, branch, number, environment…).
    pub targets: Vec<String>,
    /// The command or tool call that does it (a shell command's text, `server/tool`, a path).
    pub by: String,
}

fn base(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

/// The value of the first of these options (`-n prod`, `--namespace=prod`).
fn opt<'a>(a: &'a [String], names: &[&str]) -> Option<&'a str> {
    a.iter().enumerate().find_map(|(i, x)| {
        if names.contains(&x.as_str()) {
            return a.get(i + 1).map(String::as_str);
        }
        let (n, v) = x.split_once('=')?;
        names.contains(&n).then_some(v)
    })
}

fn operands(a: &[String]) -> Vec<String> {
    a.iter().filter(|x| !x.starts_with('-')).cloned().collect()
}

/// The workspace the command runs in, by its directory's name (`/work/ui-kit` → `ui-kit`):
/// what `npm publish` or `fly deploy` acts on when it names nothing.
fn here(ctx: &Context) -> String {
    ctx.cwd
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Every word of the command that names an environment, plus the named options' values.
fn env_words(a: &[String]) -> Vec<String> {
    a.iter()
        .filter(|w| {
            super::target::tokens(w)
                .iter()
                .any(|t| matches!(t, super::target::Token::Env(_)))
        })
        .cloned()
        .collect()
}

/// Whether a grant may decide the whole action: a shell line parsed whole (nothing dynamic,
/// unparsed or piped from the network) whose every command either does an act or is one that
/// `rule_allows` on its own (a recursive reader never is). Other actions are one act or none.
pub fn understood(
    action: &NormalizedAction,
    ctx: &Context,
    rule_allows: impl Fn(&crate::normalize::shell::ShellAnalysis) -> bool,
) -> bool {
    let NormalizedAction::Shell(a) = action else {
        return true;
    };
    a.parse_error.is_none()
        && a.unknowns.is_empty()
        && a.unparsed.is_empty()
        && a.text_only.is_empty()
        && a.remote_code.is_empty()
        && a.commands.iter().filter(|c| !c.wrapper_only).all(|c| {
            let mut own = Vec::new();
            command(c, ctx, &mut own);
            !own.is_empty()
                || local_git(c)
                || (c.tree_reads.is_empty()
                    && rule_allows(&crate::normalize::shell::ShellAnalysis {
                        raw: c.text.clone(),
                        commands: vec![c.clone()],
                        unknowns: Vec::new(),
                        parse_error: None,
                        unparsed: Vec::new(),
                        text_only: Vec::new(),
                        remote_code: Vec::new(),
                    }))
        })
}

/// The verbs of a CLI this module has no table for, and the act each names: what an unknown
/// tool's subcommands say (`linode-cli linodes reboot 4821`, `doctl … node-pool update …`,
/// `cargo yank`, `rabbitmqadmin purge queue …`), read as an MCP tool's name is.
const CLI_VERBS: &[(&str, Act)] = &[
    ("deploy", Act::Deploy),
    ("redeploy", Act::Deploy),
    ("rollout", Act::Deploy),
    ("promote", Act::Deploy),
    ("rollback", Act::Deploy),
    ("reboot", Act::Deploy),
    ("restart", Act::Deploy),
    ("publish", Act::Publish),
    ("push", Act::Publish),
    ("sign", Act::Publish),
    ("copy", Act::Publish),
    ("finalize", Act::Publish),
    ("update", Act::InfrastructureChange),
    ("set", Act::InfrastructureChange),
    ("put", Act::InfrastructureChange),
    ("patch", Act::InfrastructureChange),
    ("scale", Act::InfrastructureChange),
    ("resize", Act::InfrastructureChange),
    ("create", Act::InfrastructureChange),
    ("enable", Act::InfrastructureChange),
    ("disable", Act::InfrastructureChange),
    ("delete", Act::Delete),
    ("bulk-delete", Act::Delete),
    ("rm", Act::Delete),
    ("remove", Act::Delete),
    ("destroy", Act::Delete),
    ("drop", Act::Delete),
    ("terminate", Act::Delete),
    ("purge", Act::Purge),
    ("prune", Act::Purge),
    ("flush", Act::Purge),
    ("invalidate", Act::Purge),
    ("yank", Act::Purge),
    ("unpublish", Act::Purge),
    ("backfill", Act::DatabaseWrite),
    ("migrate", Act::DatabaseWrite),
    ("encrypt", Act::SecretUse),
    ("updatekeys", Act::SecretUse),
    ("rotate", Act::SecretUse),
];

/// Options that make any command a dry run: it does no act.
const DRY_RUNS: &[&str] = &["--dry-run", "--dryrun", "--check"];

/// Options that make a command no table knows a preview too.
const PREVIEWS: &[&str] = &[
    "--plan",
    "--what-if",
    "--preview",
    "--noop",
    "--simulate",
    "--diff",
];

/// Whether one of these options is given, alone or with a value (`--dry-run=server`).
fn has_option(a: &[String], names: &[&str]) -> bool {
    a.iter().any(|x| {
        let x = x.to_ascii_lowercase();
        names
            .iter()
            .any(|n| x == *n || x.strip_prefix(n).is_some_and(|v| v.starts_with('=')))
    })
}

/// The act of a command no table here knows, by the first of its first four operands that is a
/// verb of [`CLI_VERBS`] (a secrets store's `set` uses a secret); its other operands and option
/// values are its targets, with the environments they name. A preview option, a shell, an
/// interpreter or a build runner does none.
fn generic(c: &SimpleCommand, out: &mut Vec<Done>) {
    let Some(prog) = c.argv.first().map(|p| base(p).to_ascii_lowercase()) else {
        return;
    };
    const RUNNERS: &[&str] = &[
        "bash", "sh", "zsh", "env", "python", "python3", "node", "ruby", "perl", "make", "npx",
        "npm", "pnpm", "yarn", "bun", "deno", "go", "java", "dotnet", "gradle", "gradlew", "mvn",
        "mvnw", "rm", "cp", "mv", "git", "docker", "podman", "kubectl", "sed", "awk", "xargs",
        "find", "tee", "echo", "printf", "cat", "true",
    ];
    let a = c.argv.get(1..).unwrap_or(&[]);
    if RUNNERS.contains(&prog.as_str()) || has_option(a, DRY_RUNS) || has_option(a, PREVIEWS) {
        return;
    }
    let ops = operands(a);
    let Some((k, act)) = ops.iter().take(4).enumerate().find_map(|(k, w)| {
        let w = w.to_ascii_lowercase();
        CLI_VERBS
            .iter()
            .find(|(v, _)| *v == w)
            .map(|(_, act)| (k, *act))
    }) else {
        return;
    };
    let secret = ops
        .iter()
        .take(k)
        .any(|w| matches!(w.as_str(), "secret" | "secrets"));
    let act = if secret && act == Act::InfrastructureChange {
        Act::SecretUse
    } else {
        act
    };
    // `project:dataset` names the dataset (a shared project is no thing the act is on alone).
    let name = |w: &str| {
        if w.contains("://") {
            w.to_string()
        } else {
            w.rsplit(':').next().unwrap_or(w).to_string()
        }
    };
    // `KEY=value` names the key and the value (`name=email.retry`).
    let mut t: Vec<String> = ops
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != k)
        .flat_map(|(_, w)| w.split('=').map(name).collect::<Vec<_>>())
        .collect();
    t.extend(
        a.windows(2)
            .filter(|w| w[0].starts_with('-') && !w[0].contains('=') && !w[1].starts_with('-'))
            .map(|w| name(&w[1])),
    );
    t.extend(
        a.iter()
            .filter(|x| x.starts_with("--"))
            .filter_map(|x| x.split_once('=').map(|(_, v)| name(v))),
    );
    t.extend(env_words(a));
    push(out, act, t, c);
}

/// Whether a command is a git step that writes only the local repository, which the push the
/// request asks for carries: `add`, `commit` (its `--no-verify` is an act of its own), a tag
/// created, `revert`, `cherry-pick`, `stash`. Not a tag deleted or moved.
fn local_git(c: &SimpleCommand) -> bool {
    if c.argv.first().map(|p| base(p)) != Some("git") {
        return false;
    }
    let g = crate::normalize::shell::git::split(c.argv.get(1..).unwrap_or(&[]));
    let has = |f: &[&str]| g.rest.iter().any(|x| f.contains(&x.as_str()));
    match g.sub.map(String::as_str) {
        // `git add -A` or `git add .` may take a key file nobody meant to commit.
        Some("add") => !g.rest.is_empty() && !has(&["-A", "--all", ".", "*", ":/"]),
        Some("commit" | "revert" | "cherry-pick") => true,
        Some("stash") => !has(&["drop", "clear"]),
        Some("tag") => !has(&["-d", "--delete", "-f", "--force"]),
        _ => false,
    }
}

/// The acts of a request's action.
pub fn of(req: &ReviewRequest, action: &NormalizedAction, ctx: &Context) -> Vec<Done> {
    let mut out = Vec::new();
    match (action, &req.action) {
        (NormalizedAction::Shell(a), _) => {
            for c in a.commands.iter().filter(|c| !c.wrapper_only) {
                command(c, ctx, &mut out);
            }
        }
        (
            _,
            Action::Mcp {
                server,
                tool,
                arguments,
            },
        ) => mcp(server, tool, arguments, &mut out),
        (
            _,
            Action::Write {
                path,
                content,
                diff,
                ..
            },
        ) => out.extend(super::changes::of_write(
            path,
            content.as_deref(),
            diff.as_deref(),
        )),
        (_, Action::Fetch { url, body, .. }) => fetch(
            url,
            &req.action.http_method().unwrap_or_default(),
            body.as_deref(),
            &mut out,
        ),
        _ => {}
    }
    out
}

/// The act of an HTTP request: what its URL, method and body do (a deploy hook, a purge, a merge
/// or close endpoint, a CI trigger, a feature flag or platform API, a delete, a send), on the
/// URL's parts and the body's targets.
fn fetch(url: &str, method: &str, body: Option<&str>, out: &mut Vec<Done>) {
    let u = url.to_ascii_lowercase();
    let path = u.split('?').next().unwrap_or(&u);
    let act = if u.contains("deploy") && u.contains("hook") {
        Some(Act::Deploy)
    } else if u.contains("purge") || u.contains("invalidat") {
        Some(Act::Purge)
    } else if method == "DELETE" && path.contains("/git/refs/heads/") {
        // GitHub's API deleting a branch.
        Some(Act::DeleteRemote)
    } else if path.ends_with("/merge") && matches!(method, "PUT" | "POST") {
        // GitHub's and GitLab's merge endpoints.
        Some(Act::Merge)
    } else if method == "DELETE" && url_host(&u) == "api.heroku.com" && path.contains("/dynos") {
        // Heroku's dynos DELETE restarts them.
        Some(Act::Deploy)
    } else if path.ends_with("/_delete_by_query") && !crate::request::is_read_method(method) {
        // Elasticsearch deleting the documents a query matches.
        Some(Act::Delete)
    } else if !crate::request::is_read_method(method) && body.is_some_and(archives) {
        // GitHub's `{"archived": true}`: the repository closed, read-only and reversible
        // (`archive the repo` grants it; it is no deletion).
        Some(Act::Close)
    } else if (path.ends_with("/transitions") && method == "POST")
        || (!crate::request::is_read_method(method)
            && (path.ends_with("/resolve") || path.ends_with("/close") || body.is_some_and(closes)))
    {
        // Jira moving an issue along its workflow; an incident or issue set resolved
        // (Statuspage's `{"incident": {"status": "resolved"}}`).
        Some(Act::Close)
    } else if !crate::request::is_read_method(method) && feature_flag_api(&u) {
        // A feature flag turned on or off through its service's API (LaunchDarkly's
        // semantic patch): a release of the feature, as `turn it on in prod` says.
        Some(Act::Deploy)
    } else if !crate::request::is_read_method(method) && triggers_build(path) {
        // A CI server's build or pipeline trigger runs the job (Jenkins'
        // `/job/deploy-prod/buildWithParameters`, GitLab's pipeline trigger, GitHub's
        // workflow dispatch): what the job does is the deploy the user names.
        Some(Act::Deploy)
    } else if !crate::request::is_read_method(method)
        && method != "DELETE"
        && infrastructure_api(&u)
    {
        // A platform's API changing a resource (Heroku's formation, Cloudflare's DNS
        // records): what its CLI would change.
        Some(Act::InfrastructureChange)
    } else if method == "DELETE" {
        Some(Act::Delete)
    } else if body.is_some() || !crate::request::is_read_method(method) {
        Some(Act::SendExternal)
    } else {
        // A GET with no body reads (`…/healthz`, a list of workflow runs).
        Some(Act::Inspect)
    };
    if let Some(act) = act {
        // The host without its port (`es-prod.internal.acme.io:9200`): a port is no number the
        // request must name.
        let host = url_host(url);
        let mut targets: Vec<String> = url
            .split(['/', '?', '&', '='])
            .filter(|p| !p.is_empty() && !p.ends_with(':'))
            .map(|p| {
                if p.starts_with(host) && !host.is_empty() {
                    host.to_string()
                } else {
                    p.to_string()
                }
            })
            .collect();
        // A JSON body names its targets as an MCP tool's arguments do (Slack's
        // `chat.postMessage` takes its channel from the body).
        if let Some(v) = body.and_then(|b| serde_json::from_str::<serde_json::Value>(b).ok()) {
            targets.extend(mcp_targets(&v));
            // A body wrapped in its resource's name (Statuspage's `{"incident": {…}}`,
            // Zendesk's `{"ticket": {…}}`) names its targets one level down.
            for inner in v.as_object().into_iter().flat_map(|o| o.values()) {
                if inner.is_object() {
                    targets.extend(mcp_targets(inner));
                }
            }
            emails(&v, &mut targets);
        }
        // A platform API's last path word is the one resource it changes
        // (`…/apps/acme-invoicing/formation/worker`): the request must say it.
        if act == Act::InfrastructureChange
            && let Some(last) = path.rsplit('/').find(|p| !p.is_empty())
            && last.len() >= 3
            && last.bytes().all(|b| b.is_ascii_lowercase())
            && !last.ends_with('s')
            && !matches!(last, "formation" | "config" | "settings")
        {
            targets.push(format!("said:{last}"));
        }
        out.push(Done {
            act,
            targets,
            by: url.to_string(),
        });
    }
}

/// Whether a JSON body sets a status that closes something (`"status": "resolved"`), at any
/// depth.
/// Whether a JSON body archives what it is sent to (`{"archived": true}`).
fn archives(body: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("archived").and_then(serde_json::Value::as_bool))
        == Some(true)
}

fn closes(body: &str) -> bool {
    fn walk(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(o) => o.iter().any(|(k, v)| {
                (matches!(k.as_str(), "status" | "state")
                    && v.as_str().is_some_and(|s| {
                        matches!(
                            s.to_ascii_lowercase().as_str(),
                            "resolved" | "closed" | "done" | "completed"
                        )
                    }))
                    || walk(v)
            }),
            serde_json::Value::Array(a) => a.iter().any(walk),
            _ => false,
        }
    }
    serde_json::from_str::<serde_json::Value>(body).is_ok_and(|v| walk(&v))
}

/// Whether a URL path triggers a CI build or pipeline.
fn triggers_build(path: &str) -> bool {
    (path.contains("/job/") && (path.ends_with("/build") || path.ends_with("/buildwithparameters")))
        || path.ends_with("/trigger/pipeline")
        || (path.contains("/projects/") && path.ends_with("/pipeline"))
        || path.ends_with("/dispatches")
}

/// A URL's host (`https://api.heroku.com/apps/x` → `api.heroku.com`; empty without a scheme).
pub(crate) fn url_host(url: &str) -> &str {
    url.split("://")
        .nth(1)
        .and_then(|r| r.split(['/', '?', ':']).next())
        .unwrap_or("")
}

/// Whether a URL is a feature-flag service's API (LaunchDarkly, Flagsmith, Split, ConfigCat,
/// Statsig).
fn feature_flag_api(url: &str) -> bool {
    let host = url_host(url);
    [
        "app.launchdarkly.com",
        "api.launchdarkly.com",
        "api.flagsmith.com",
        "edge.api.flagsmith.com",
        "api.split.io",
        "api.configcat.com",
        "statsigapi.net",
        "api.statsig.com",
    ]
    .contains(&host)
}

/// Whether a URL is a hosting or infrastructure platform's management API.
fn infrastructure_api(url: &str) -> bool {
    let host = url_host(url);
    [
        "api.heroku.com",
        "api.cloudflare.com",
        "api.digitalocean.com",
        "api.machines.dev",
        "api.fly.io",
        "api.netlify.com",
        "api.vercel.com",
        "api.render.com",
        "api.linode.com",
        "api.hetzner.cloud",
        "api.vultr.com",
        "backboard.railway.app",
    ]
    .contains(&host)
}

/// A registry a publish goes to, as targets: the word itself, and `registry:private` for a URL
/// of no public registry (an Azure Artifacts feed, a Nexus, a GitLab package registry).
fn registry(value: &str) -> Vec<String> {
    let mut t = vec![value.to_string()];
    let public = super::target::tokens_of_word(value)
        .iter()
        .any(|x| matches!(x, super::target::Token::Registry(_)));
    if value.contains("://") && !public {
        t.push("registry:private".into());
    }
    t
}

/// Every e-mail address anywhere in a JSON value (a mail API's nested recipients).
fn emails(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) if s.contains('@') && !s.contains(' ') && s.contains('.') => {
            out.push(s.clone())
        }
        serde_json::Value::Object(o) => o.values().for_each(|v| emails(v, out)),
        serde_json::Value::Array(a) => a.iter().for_each(|v| emails(v, out)),
        _ => {}
    }
}

fn push(out: &mut Vec<Done>, act: Act, targets: Vec<String>, c: &SimpleCommand) {
    out.push(Done {
        act,
        targets: targets.into_iter().filter(|t| !t.is_empty()).collect(),
        by: c.text.clone(),
    });
}

/// What holds for any command: a dry run does nothing (false: stop here); a safeguard flag
/// switches one off.
fn prelude(c: &SimpleCommand, prog: &str, a: &[String], out: &mut Vec<Done>) -> bool {
    // A dry run does nothing it names (`npm publish --dry-run`, `kubectl apply
    // --dry-run=server`, `helm upgrade --dry-run`).
    if has_option(a, DRY_RUNS) {
        return false;
    }
    // Safeguards switched off on the way (`helm upgrade --no-hooks`, `--skip-tls-verify`).
    const SAFEGUARD_FLAGS: &[&str] = &[
        "--no-hooks",
        "--skip-checks",
        "--no-verify",
        "--insecure",
        "--insecure-skip-tls-verify",
        "--skip-tls-verify",
        "--disable-openapi-validation",
        "--skip-tests",
        "--no-verify-ssl",
    ];
    if prog != "git" && a.iter().any(|x| SAFEGUARD_FLAGS.contains(&x.as_str())) {
        push(
            out,
            Act::SafeguardChange,
            vec!["hooks".into(), "checks".into()],
            c,
        );
    }
    true
}

/// The acts of one simple command. The region it names (`--region us-central1`, `--zone
/// europe-west1-b`) is a target of each: a deploy to one region is not one to another.
pub fn command(c: &SimpleCommand, ctx: &Context, out: &mut Vec<Done>) {
    let before = out.len();
    acts_of_command(c, ctx, out);
    if out.len() == before {
        generic(c, out);
    }
    let a = c.argv.get(1..).unwrap_or(&[]);
    let regions: Vec<String> = ["--region", "--location", "--zone", "--regions"]
        .iter()
        .filter_map(|o| opt(a, &[o]))
        .flat_map(|v| v.split(','))
        .map(str::to_string)
        .collect();
    // The environment its assignments name (`DATABASE_URL=$PROD_DATABASE_URL npx prisma
    // migrate deploy` migrates production).
    let assigned = env_words(&c.assignments);
    if !regions.is_empty() || !assigned.is_empty() {
        for d in out.iter_mut().skip(before) {
            d.targets.extend(regions.iter().cloned());
            d.targets.extend(assigned.iter().cloned());
        }
    }
}

fn acts_of_command(c: &SimpleCommand, ctx: &Context, out: &mut Vec<Done>) {
    let Some(prog) = c.argv.first().map(|p| base(p).to_string()) else {
        return;
    };
    let a = c.argv.get(1..).unwrap_or(&[]);
    let sub = a.iter().find(|x| !x.starts_with('-')).map(String::as_str);
    let ops = operands(a);
    // The operands after the subcommand.
    let rest: Vec<String> = ops.get(1..).map(<[String]>::to_vec).unwrap_or_default();
    let named = |mut t: Vec<String>| {
        t.push(here(ctx));
        t
    };
    if !prelude(c, &prog, a, out) {
        return;
    }
    // Runners: the program they run is judged as itself (`python -m twine upload`, `npx
    // prisma migrate deploy`, `dotenv -e .env -- cmd`, `uv run`, `bundle exec`).
    if let Some(inner) = runs(&prog, a) {
        let before = out.len();
        if !inner.is_empty() {
            command(
                &SimpleCommand {
                    argv: inner,
                    ..c.clone()
                },
                ctx,
                out,
            );
        }
        // The runner's own words may name the environment (`dotenv -e .env.staging -- …`).
        let env = env_words(a);
        for d in out.iter_mut().skip(before) {
            d.targets.extend(env.iter().cloned());
        }
        return;
    }
    match (prog.as_str(), sub) {
        _ if gitops_and_build_tools(c, &prog, sub, a, ctx, out) => {}
        ("git", _) => git(c, a, out),
        ("gh", _) => gh(c, a, out),
        ("glab", _) => {
            let g = crate::signals::glab_as_gh(c);
            gh(&g, g.argv.get(1..).unwrap_or(&[]), out)
        }
        ("npm" | "pnpm" | "yarn" | "bun", _) if npm_publishes(&ops) => {
            npm_publish(c, a, &ops, &here(ctx), out)
        }
        ("npm" | "pnpm" | "yarn", Some("unpublish" | "deprecate")) => {
            push(out, Act::Purge, named(rest.clone()), c)
        }
        (
            "npm" | "pnpm" | "yarn" | "bun",
            Some("install" | "i" | "add" | "update" | "upgrade" | "ci"),
        )
        | ("pip" | "pip3" | "uv" | "poetry" | "pipx", Some("install" | "add"))
        | ("cargo", Some("add" | "install" | "update"))
        | ("go", Some("get" | "install"))
        | ("gem" | "bundle", Some("install" | "add" | "update")) => {
            push(out, Act::Install, rest.clone(), c)
        }
        ("dotnet", Some("nuget")) | ("nuget", Some("push")) if a.iter().any(|x| x == "push") => {
            package_upload(c, &prog, a, &rest, &here(ctx), out)
        }
        ("twine", Some("upload"))
        | ("uv" | "poetry" | "flit" | "hatch" | "cargo" | "maturin", Some("publish"))
        | ("gem", Some("push")) => package_upload(c, &prog, a, &rest, &here(ctx), out),
        ("npm" | "pnpm" | "yarn", Some("dist-tag" | "dist-tags"))
            if a.iter()
                .any(|x| matches!(x.as_str(), "add" | "rm" | "remove")) =>
        {
            // `dist-tag add PKG@V TAG`: the tag is a target of its own kind.
            let mut t = rest.clone();
            if let Some(tag) = rest.get(2) {
                t.push(format!("dist-tag:{tag}"));
            }
            push(out, Act::Publish, t, c)
        }
        // Google Cloud Storage's own CLI: a copy up is an upload, a removal a purge.
        ("gsutil", Some("cp" | "rsync" | "mv")) => push(out, Act::Publish, upload_targets(a), c),
        ("gsutil", Some("rm" | "rb")) => push(out, Act::Purge, rest.clone(), c),
        ("docker" | "podman" | "buildah", Some("push")) => push(out, Act::Publish, rest.clone(), c),
        // `docker buildx build -t ghcr.io/acme/gateway:1.12.0 --push .`: the tags pushed.
        ("docker", Some("buildx"))
            if a.iter()
                .any(|x| x == "--push" || x.contains("type=registry")) =>
        {
            let tags: Vec<String> = a
                .iter()
                .enumerate()
                .filter(|(_, x)| matches!(x.as_str(), "-t" | "--tag"))
                .filter_map(|(i, _)| a.get(i + 1).cloned())
                .chain(
                    a.iter()
                        .filter_map(|x| x.strip_prefix("--tag=").map(str::to_string)),
                )
                .collect();
            push(out, Act::Publish, tags, c)
        }
        // Stripe's CLI refunding a charge: as its API's `create_refund`.
        ("stripe", Some("refunds")) if a.iter().any(|x| x == "create") => {
            let mut t = rest.clone();
            t.extend(opt(a, &["--charge", "--payment-intent"]).map(str::to_string));
            push(out, Act::Delete, t, c)
        }
        ("docker" | "podman", Some("system" | "image" | "volume" | "builder" | "container"))
            if a.iter().any(|x| x == "prune") =>
        {
            push(out, Act::Purge, ops.clone(), c)
        }
        _ => deploys(c, &prog, sub, a, ctx, out),
    }
}

/// A package file uploaded to its registry (`dotnet nuget push X.1.0.0.nupkg --source …`,
/// `twine upload`, `cargo publish`, `gem push`): the package's name and version, the workspace,
/// and the registry it goes to, the default one when none is named.
fn package_upload(
    c: &SimpleCommand,
    prog: &str,
    a: &[String],
    rest: &[String],
    here: &str,
    out: &mut Vec<Done>,
) {
    let mut t: Vec<String> = rest.iter().flat_map(|f| artifact(f)).collect();
    if matches!(prog, "dotnet" | "nuget") {
        let source = opt(a, &["--source", "-s", "-Source"]).unwrap_or("nuget");
        if source.contains("nuget.org") || source == "nuget" {
            t.push("nuget".to_string());
        } else {
            t.extend(registry(source));
        }
    } else {
        t.extend(rest.iter().cloned());
        let default = match prog {
            "cargo" => "crates.io",
            "gem" => "rubygems",
            _ => "pypi",
        };
        let names = [
            "--repository",
            "-r",
            "--repository-url",
            "--registry",
            "--host",
        ];
        t.extend(registry(opt(a, &names).unwrap_or(default)));
    }
    t.push(here.to_string());
    push(out, Act::Publish, t, c)
}

/// Whether an npm-family command publishes: `npm publish`, `pnpm --filter @northwind/sdk
/// publish` (the subcommand after an option's value), `yarn npm publish`; not `npm run publish`.
fn npm_publishes(ops: &[String]) -> bool {
    ops.iter().take(3).any(|x| x == "publish")
        && !ops
            .first()
            .is_some_and(|x| matches!(x.as_str(), "run" | "exec" | "x"))
}

/// The publish an npm-family command does: the package here or the filtered one, its dist-tag
/// and registry.
fn npm_publish(c: &SimpleCommand, a: &[String], ops: &[String], here: &str, out: &mut Vec<Done>) {
    let mut t: Vec<String> = ops
        .iter()
        .skip_while(|x| *x != "publish")
        .skip(1)
        .cloned()
        .collect();
    t.push(here.to_string());
    t.extend(opt(a, &["--filter", "-F", "--workspace", "-w"]).map(str::to_string));
    t.push(format!(
        "dist-tag:{}",
        opt(a, &["--tag"]).unwrap_or("latest")
    ));
    t.extend(registry(opt(a, &["--registry"]).unwrap_or("npm")));
    push(out, Act::Publish, t, c)
}

/// Build tools' publish goals (`./gradlew :sdk:publish`), Homebrew's bump pull requests and
/// Argo CD's syncs: pushed to `out`, true when the command is one of them.
fn gitops_and_build_tools(
    c: &SimpleCommand,
    prog: &str,
    sub: Option<&str>,
    a: &[String],
    ctx: &Context,
    out: &mut Vec<Done>,
) -> bool {
    let rest: Vec<String> = operands(a)
        .get(1..)
        .map(<[String]>::to_vec)
        .unwrap_or_default();
    match (prog, sub) {
        _ if build_tool_publishes(prog, sub, a) => {
            // A Gradle module's task names the module (`:sdk:publish` publishes `sdk`).
            let mut t: Vec<String> = a
                .iter()
                .filter_map(|x| x.strip_prefix(':').and_then(|m| m.rsplit_once(':')))
                .map(|(m, _)| m.replace(':', "/"))
                .collect();
            t.push(here(ctx));
            push(out, Act::Publish, t, c)
        }
        // `brew bump-formula-pr … acme/tap/acmectl` pushes a branch and opens a pull request
        // on the tap.
        ("brew", Some("bump-formula-pr" | "bump-cask-pr")) => {
            let mut t = rest.clone();
            t.extend(
                rest.iter()
                    .filter_map(|f| f.rsplit('/').next().map(str::to_string)),
            );
            push(out, Act::Push, t, c)
        }
        // GoReleaser publishing the release of the tag at HEAD (a snapshot or a skipped
        // publish publishes nothing): the project it runs in is what ships.
        ("goreleaser", Some("release"))
            if !a.iter().any(|x| {
                x == "--snapshot"
                    || x == "--skip-publish"
                    || (x.starts_with("--skip=") && x.contains("publish"))
            }) =>
        {
            push(out, Act::Publish, vec![here(ctx)], c)
        }
        // `rsync … build/ deploy@web-01:/var/www/docs/`: files put on a server, a deploy of
        // them, on the host and the directory named.
        // The host must be one the request says (`web-01`, not `web-02`).
        ("rsync", _) => match remote_destination(a) {
            Some((h, p)) => push(out, Act::Deploy, vec![format!("said:{h}"), h, p], c),
            None => return false,
        },
        // Flux reconciling a kustomization or Helm release applies what its source holds now.
        ("flux", Some("reconcile" | "resume" | "suspend")) => {
            let mut t: Vec<String> = rest.iter().skip(1).cloned().collect();
            t.extend(env_words(&t.clone()));
            push(out, Act::Deploy, t, c)
        }
        // Argo CD syncing or rolling back an application deploys it.
        ("argocd", Some("app"))
            if rest.first().is_some_and(|v| {
                matches!(
                    v.as_str(),
                    "sync" | "rollback" | "set" | "delete" | "terminate-op"
                )
            }) =>
        {
            let mut t: Vec<String> = rest.iter().skip(1).cloned().collect();
            t.extend(env_words(&t.clone()));
            push(out, Act::Deploy, t, c)
        }
        _ => return false,
    }
    true
}

/// The host (its first label: `web-01` of `deploy@web-01.acme.internal`) and the directory of
/// an rsync's last operand when it is remote (`HOST:PATH`, not `rsync://` or a local path).
fn remote_destination(a: &[String]) -> Option<(String, String)> {
    let last = operands(a).into_iter().last()?;
    if last.contains("://") || last.starts_with(['/', '.']) {
        return None;
    }
    let (host, path) = last.split_once(':')?;
    let host = host.rsplit('@').next()?;
    if host.is_empty() || host.contains('/') {
        return None;
    }
    let first = host.split('.').next().unwrap_or(host);
    Some((first.to_string(), path.to_string()))
}

/// Whether a build tool's publish goal runs (`mvn deploy`, `./gradlew publish`, `sbt publish`,
/// `lein deploy`): it uploads the project it runs in, whose name is the target, as for
/// `npm publish`.
fn build_tool_publishes(prog: &str, sub: Option<&str>, a: &[String]) -> bool {
    match (prog, sub) {
        ("mvn" | "mvnw", _) => a
            .iter()
            .any(|x| matches!(x.as_str(), "deploy" | "deploy:deploy" | "release:perform")),
        // `publish`, `publishToMavenCentral`, or a module's task (`:sdk:publish`).
        ("gradle" | "gradlew", _) => a.iter().any(|x| {
            x.rsplit(':')
                .next()
                .is_some_and(|task| task.starts_with("publish"))
        }),
        ("sbt", _) => a.iter().any(|x| x == "publish" || x == "publishSigned"),
        ("lein", Some("deploy")) => true,
        _ => false,
    }
}

/// Deploy and infrastructure tools; then databases, secret stores, HTTP clients, migrations.
fn deploys(
    c: &SimpleCommand,
    prog: &str,
    sub: Option<&str>,
    a: &[String],
    ctx: &Context,
    out: &mut Vec<Done>,
) {
    let ops = operands(a);
    let rest: Vec<String> = ops.get(1..).map(<[String]>::to_vec).unwrap_or_default();
    match (prog, sub) {
        ("kubectl" | "oc", Some(_)) => {
            let verb = first_operand(a, crate::signals::KUBE_VALUED);
            kubectl(c, a, &verb, ctx, out)
        }
        // A chart pushed to a registry is published: its name, version and registry.
        ("helm", Some("push")) => push(out, Act::Publish, crate::signals::helm_push_parts(a), c),
        ("helm", Some("install" | "upgrade" | "rollback" | "uninstall" | "delete")) => {
            let mut t = rest.clone();
            t.extend(opt(a, &["-n", "--namespace", "--kube-context"]).map(str::to_string));
            t.extend(env_words(a));
            push(out, Act::Deploy, t, c)
        }
        (
            "terraform" | "tofu" | "terragrunt" | "pulumi",
            Some("apply" | "destroy" | "up" | "import"),
        )
        | ("cdk" | "sam" | "serverless" | "sls", Some("deploy" | "destroy")) => {
            let mut t = env_words(a);
            t.extend(
                opt(a, &["-var-file", "--stack", "-s", "--stage", "--context"]).map(str::to_string),
            );
            // What a targeted apply or destroy is on: `-target=module.legacy_vpn`.
            t.extend(
                a.iter()
                    .filter_map(|x| {
                        x.strip_prefix("-target=")
                            .or_else(|| x.strip_prefix("--target="))
                    })
                    .map(str::to_string),
            );
            t.extend(env_words(&[ctx.cwd.display().to_string()]));
            t.push(here(ctx));
            push(out, Act::InfrastructureChange, t, c)
        }
        // `fly scale count 6 -a acme-api`: the app's machines; `heroku config:set K=V -a app`:
        // the app's settings.
        ("fly" | "flyctl", Some("scale")) | ("heroku", Some("config:set" | "config:unset")) => {
            // The app, and the settings named (not a count: `6` is no thing it is on).
            let mut t = env_words(a);
            t.extend(opt(a, &["-a", "--app"]).map(str::to_string));
            t.extend(
                rest.iter()
                    .filter(|x| x.contains('='))
                    .map(|x| x.split('=').next().unwrap_or(x).to_string()),
            );
            push(out, Act::InfrastructureChange, t, c)
        }
        // `fly secrets set KEY=… -a app`: the app's secrets.
        ("fly" | "flyctl", Some("secrets"))
            if a.iter()
                .any(|x| matches!(x.as_str(), "set" | "unset" | "import")) =>
        {
            let mut t = env_words(a);
            t.extend(opt(a, &["-a", "--app"]).map(str::to_string));
            t.extend(
                rest.iter()
                    .skip(1)
                    .map(|x| x.split('=').next().unwrap_or(x).to_string()),
            );
            push(out, Act::SecretUse, t, c)
        }
        (
            "fly" | "flyctl" | "vercel" | "netlify" | "wrangler" | "kamal" | "railway" | "heroku",
            _,
        ) if a.iter().any(|x| {
            matches!(
                x.as_str(),
                "deploy"
                    | "--prod"
                    | "publish"
                    | "up"
                    | "promote"
                    | "rollback"
                    | "releases:rollback"
                    | "container:release"
                    | "pipelines:promote"
            )
        }) || (prog == "vercel" && sub.is_none()) =>
        {
            let mut t = env_words(a);
            t.extend(opt(a, &["-a", "--app", "--env", "-e", "--site"]).map(str::to_string));
            // The release it goes back to (`heroku releases:rollback v142`).
            t.extend(rest.iter().cloned());
            // The image deployed names what ships (`--image registry.fly.io/api:deployment-01HZ…`).
            t.extend(opt(a, &["-i", "--image"]).map(str::to_string));
            if a.iter().any(|x| x == "--prod") {
                t.push("production".into());
            }
            t.push(here(ctx));
            push(out, Act::Deploy, t, c)
        }
        ("ansible-playbook", _) => {
            let mut t = ops.clone();
            t.extend(opt(a, &["-i", "--inventory", "-l", "--limit"]).map(str::to_string));
            push(out, Act::Deploy, t, c)
        }
        ("aws" | "gcloud" | "az", _) => cloud(c, &ops, out),
        _ => data_and_network(c, prog, sub, a, ctx, out),
    }
}

/// Databases, secret stores and HTTP clients; then migration tools.
fn data_and_network(
    c: &SimpleCommand,
    prog: &str,
    sub: Option<&str>,
    a: &[String],
    ctx: &Context,
    out: &mut Vec<Done>,
) {
    let ops = operands(a);
    let rest: Vec<String> = ops.get(1..).map(<[String]>::to_vec).unwrap_or_default();
    match (prog, sub) {
        ("psql" | "mysql" | "sqlite3" | "mongosh" | "cqlsh" | "clickhouse-client", _) => {
            sql_client(c, a, out)
        }
        ("redis-cli", _)
            if a.iter().any(|x| {
                matches!(
                    x.to_ascii_lowercase().as_str(),
                    "flushdb" | "flushall" | "del" | "unlink" | "set" | "hset"
                )
            }) =>
        {
            let mut t = env_words(a);
            t.extend(opt(a, &["-h", "-u"]).map(str::to_string));
            // The database number: `-n 3` is db 3.
            t.extend(opt(a, &["-n"]).map(|n| format!("#{n}")));
            let flush = a
                .iter()
                .any(|x| x.eq_ignore_ascii_case("flushdb") || x.eq_ignore_ascii_case("flushall"));
            push(
                out,
                if flush {
                    Act::Purge
                } else {
                    Act::DatabaseWrite
                },
                t,
                c,
            )
        }
        ("vault", Some("kv" | "write"))
            if a.iter()
                .any(|x| matches!(x.as_str(), "put" | "patch" | "write"))
                || sub == Some("write") =>
        {
            push(out, Act::SecretUse, rest.clone(), c)
        }
        ("vault", Some("policy" | "token")) => push(out, Act::AccessGrant, rest.clone(), c),
        ("curl" | "http" | "https" | "xh" | "wget", _) => {
            let method = opt(a, &["-X", "--request"]).map(str::to_ascii_uppercase);
            let sends = matches!(method.as_deref(), Some("POST" | "PUT" | "PATCH" | "DELETE"))
                || a.iter().any(|x| {
                    matches!(
                        x.as_str(),
                        "-d" | "--data"
                            | "--data-raw"
                            | "--data-binary"
                            | "-F"
                            | "--form"
                            | "--json"
                            | "-T"
                            | "--upload-file"
                            | "--post-data"
                    ) || x.starts_with("--data")
                });
            if sends {
                let t: Vec<String> = c.hosts.clone();
                let act = if method.as_deref() == Some("DELETE")
                    || a.iter().any(|x| x.contains("purge"))
                {
                    Act::Purge
                } else {
                    Act::SendExternal
                };
                push(out, act, t, c)
            }
        }
        _ => migration(c, prog, a, ctx, out),
    }
}

/// A database client: the statement it runs (`-c`, `-e`, …) writes when it inserts, updates,
/// deletes or alters; a migration file it runs (`-f migrations/0042_….sql`) writes too.
fn sql_client(c: &SimpleCommand, a: &[String], out: &mut Vec<Done>) {
    let ops = operands(a);
    let sql = opt(
        a,
        &["-c", "--command", "-e", "--execute", "--eval", "--query"],
    )
    .unwrap_or("")
    .to_ascii_lowercase();
    // SQL's verbs, and MongoDB shell's (`db.sessions.deleteMany({…})`).
    let writes = [
        "insert",
        "update",
        "delete",
        "drop",
        "alter",
        "truncate",
        "create",
        "grant",
        "deletemany",
        "deleteone",
        "updatemany",
        "updateone",
        "insertone",
        "insertmany",
        "replaceone",
        "bulkwrite",
        "findoneanddelete",
        "findoneandupdate",
        "dropdatabase",
    ]
    .iter()
    .any(|w| {
        sql.split(|c: char| !c.is_ascii_alphabetic())
            .any(|x| x == *w)
    });
    // `psql -f migrations/0042_add_index.sql`: a migration run by hand, its number a
    // target the user names (`run migration 0042`).
    // The database written to: its name or host and the environment its words name.
    let mut conn: Vec<String> = opt(a, &["-d", "--dbname", "-h", "--host", "-D", "--database"])
        .map(str::to_string)
        .into_iter()
        .collect();
    conn.extend(env_words(a));
    let migration_file = opt(a, &["-f", "--file"]).filter(|f| f.contains("migrat"));
    if let Some(f) = migration_file.filter(|_| !writes) {
        let mut t = vec![f.to_string()];
        let stem = base(f).trim_start_matches(['V', 'v']);
        let digits: String = stem.chars().take_while(char::is_ascii_digit).collect();
        // `2024_05_add_orders_index.sql` is dated, not numbered.
        let dated = digits.len() == 4
            && (digits.starts_with("19") || digits.starts_with("20"))
            && stem[4..].starts_with('_')
            && stem[5..].starts_with(|c: char| c.is_ascii_digit());
        if !digits.is_empty() && !dated {
            t.push(format!("#{digits}"));
        }
        t.extend(conn.iter().cloned());
        push(out, Act::DatabaseWrite, t, c);
    }
    if writes {
        // The statement's words but its numbers: `WHERE id = 48213` is no numbered
        // item the user must name (`WHERE key = 'new_checkout'` names the flag).
        let mut t: Vec<String> = ops
            .iter()
            .map(|o| {
                if o.to_ascii_lowercase() == sql {
                    without_numbers(o)
                } else {
                    o.clone()
                }
            })
            .collect();
        t.extend(sql_tables(&sql));
        t.extend(conn);
        push(out, Act::DatabaseWrite, t, c)
    }
}

/// The command a runner runs, if `prog` is one.
fn runs(prog: &str, a: &[String]) -> Option<Vec<String>> {
    let after_dashes = || {
        a.iter()
            .position(|x| x == "--")
            .map(|i| a[i + 1..].to_vec())
            .unwrap_or_default()
    };
    let from_first = |skip: usize| -> Vec<String> {
        a.iter()
            .skip(skip)
            .skip_while(|x| x.starts_with('-'))
            .cloned()
            .collect()
    };
    Some(match prog {
        "python" | "python3" if a.first().is_some_and(|x| x == "-m") => a.get(1..)?.to_vec(),
        "npx" | "bunx" | "pnpx" => from_first(0),
        "dotenv" | "dotenvx" | "env-cmd" | "cross-env" => after_dashes(),
        "uv" | "poetry" | "pdm" | "hatch" | "pipenv" if a.first().is_some_and(|x| x == "run") => {
            from_first(1)
        }
        "bundle" if a.first().is_some_and(|x| x == "exec") => from_first(1),
        "pnpm" | "yarn" if a.first().is_some_and(|x| x == "exec" || x == "dlx") => from_first(1),
        _ => return None,
    })
}

/// A package file's name and version as targets: `dist/acme_sdk-3.0.0-py3-none-any.whl` →
/// `acme_sdk`, `3.0.0`; `pkg/rack-throttle-lite-1.3.0.gem` → `rack-throttle-lite`, `1.3.0`.
fn artifact(path: &str) -> Vec<String> {
    let file = base(path);
    let stem = [
        ".tar.gz", ".whl", ".gem", ".tgz", ".crate", ".zip", ".nupkg", ".jar",
    ]
    .iter()
    .find_map(|e| file.strip_suffix(e));
    let Some(stem) = stem else {
        return Vec::new();
    };
    // NuGet's `Name.Space.4.0.1.nupkg`: the version starts at the first all-digit part.
    if file.ends_with(".nupkg") {
        let dots: Vec<&str> = stem.split('.').collect();
        if let Some(k) = dots
            .iter()
            .position(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
            .filter(|k| *k > 0)
        {
            return vec![dots[..k].join("."), dots[k..].join(".")];
        }
    }
    let parts: Vec<&str> = stem.split('-').collect();
    match parts
        .iter()
        .position(|p| p.starts_with(|c: char| c.is_ascii_digit()) && p.contains('.'))
    {
        Some(k) if k > 0 => vec![parts[..k].join("-"), parts[k].to_string()],
        _ => vec![stem.to_string()],
    }
}

/// Database migration tools (`prisma migrate deploy`, `alembic upgrade head`, …).
fn migration(c: &SimpleCommand, prog: &str, a: &[String], ctx: &Context, out: &mut Vec<Done>) {
    let text = a.join(" ");
    let migrates = match prog {
        "prisma" => {
            text.contains("migrate deploy")
                || text.contains("migrate reset")
                || text.contains("db push")
        }
        "alembic" => a.iter().any(|w| w == "upgrade" || w == "downgrade"),
        "rails" | "rake" | "bin/rails" => {
            text.contains("db:migrate")
                || text.contains("db:rollback")
                || text.contains("db:seed")
                || text.contains("db:reset")
        }
        "sqlx" | "diesel" => {
            text.contains("migrat") && (text.contains("run") || text.contains("revert"))
        }
        "flyway" | "liquibase" => {
            text.contains("migrate") || text.contains("update") || text.contains("clean")
        }
        "knex" => {
            text.contains("migrate:latest")
                || text.contains("migrate:up")
                || text.contains("seed:run")
        }
        "goose" | "dbmate" | "migrate" => text.contains("up") || text.contains("down"),
        "python" | "python3" => {
            text.contains("manage.py migrate") || text.contains("manage.py flush")
        }
        _ => false,
    };
    if migrates {
        let mut t = env_words(a);
        t.push(here(ctx));
        push(out, Act::DatabaseWrite, t, c)
    }
}

fn git(c: &SimpleCommand, a: &[String], out: &mut Vec<Done>) {
    let g = crate::normalize::shell::git::split(a);
    let sub = g.sub.map(String::as_str);
    // Hooks skipped: `git commit --no-verify` (`-n`), `git push --no-verify`.
    let skips_hooks = g.rest.iter().any(|x| x == "--no-verify")
        || (sub == Some("commit")
            && g.rest
                .iter()
                .any(|x| x.starts_with('-') && !x.starts_with("--") && x.contains('n')));
    if skips_hooks
        && matches!(
            sub,
            Some("commit" | "push" | "merge" | "rebase" | "am" | "cherry-pick")
        )
    {
        push(
            out,
            Act::SafeguardChange,
            vec!["hooks".into(), "pre-commit".into(), "pre-push".into()],
            c,
        );
    }
    if sub != Some("push") {
        return;
    }
    let rest = g.rest;
    let has = |f: &[&str]| rest.iter().any(|x| f.contains(&x.as_str()));
    let ops: Vec<&String> = rest.iter().filter(|x| !x.starts_with('-')).collect();
    let force = has(&["-f", "--force", "--force-with-lease", "--mirror"])
        || rest
            .iter()
            .any(|x| x.starts_with("--force-with-lease") || x.starts_with("--force-if-includes"))
        || rest
            .iter()
            .any(|x| x.starts_with('-') && !x.starts_with("--") && x.contains('f'))
        || ops.iter().skip(1).any(|x| x.starts_with('+'));
    let delete = has(&["-d", "--delete", "--prune", "--mirror"])
        || ops.iter().skip(1).any(|x| x.starts_with(':'));
    let refs: Vec<String> = ops
        .iter()
        .skip(1)
        .map(|r| {
            let r = r.trim_start_matches('+');
            r.rsplit(':').next().unwrap_or(r).to_string()
        })
        .collect();
    let tags: Vec<String> = refs
        .iter()
        .filter(|r| {
            r.starts_with("refs/tags/")
                || matches!(
                    super::target::tokens(r)
                        .into_iter()
                        .collect::<Vec<_>>()
                        .as_slice(),
                    [super::target::Token::Version(_)]
                )
        })
        .cloned()
        .collect();
    if has(&["--tags", "--follow-tags"]) || !tags.is_empty() {
        push(out, Act::Publish, tags.clone(), c);
    }
    let branches: Vec<String> = refs.iter().filter(|r| !tags.contains(r)).cloned().collect();
    let act = if delete {
        Act::DeleteRemote
    } else if force {
        Act::RewriteHistory
    } else {
        Act::Push
    };
    if !branches.is_empty() || tags.is_empty() || delete || force {
        push(out, act, branches, c);
    }
}

fn gh(c: &SimpleCommand, a: &[String], out: &mut Vec<Done>) {
    let noun = a.first().map(String::as_str).unwrap_or("");
    let verb = a.get(1).map(String::as_str).unwrap_or("");
    // The texts a call carries (`--comment "Fixed in #4490"`, `--body`, `--title`) name no
    // target: only the operands that are not their values.
    const TEXTS: &[&str] = &[
        "-c",
        "--comment",
        "-b",
        "--body",
        "-t",
        "--title",
        "-n",
        "--notes",
        "-m",
        "--message",
        "--subject",
        "--body-file",
        "-F",
        "--notes-file",
    ];
    let rest = a.get(2..).unwrap_or(&[]);
    let kept: Vec<String> = rest
        .iter()
        .enumerate()
        .filter(|(i, x)| {
            !TEXTS.contains(&x.as_str())
                && !value_of(rest, *i, TEXTS)
                && !TEXTS
                    .iter()
                    .any(|o| o.starts_with("--") && x.starts_with(&format!("{o}=")))
        })
        .map(|(_, x)| x.clone())
        .collect();
    let mut t: Vec<String> = operands(&kept);
    t.extend(opt(a, &["-R", "--repo"]).map(str::to_string));
    // Organization-wide: others' repositories too (a target that must be named).
    if opt(a, &["--org", "-o"]).is_some() {
        t.push("!org".into());
    }
    // A draft release is seen by nobody yet.
    if noun == "release" && a.iter().any(|x| x == "--draft" || x == "-d") {
        return;
    }
    let act = match (noun, verb) {
        ("pr", "merge") => Act::Merge,
        ("pr" | "issue", "comment" | "review" | "create" | "edit") | ("label", _) => Act::Comment,
        ("pr" | "issue", "close" | "lock") => Act::Close,
        ("release", "create" | "upload" | "edit") => Act::Publish,
        ("release" | "repo", "delete") => Act::DeleteRemote,
        ("secret" | "variable", "set" | "delete" | "remove") => Act::SecretUse,
        ("workflow", "run") | ("run", "rerun") => Act::Deploy,
        ("api", _) => {
            let method = a.iter().enumerate().find_map(|(i, x)| {
                x.strip_prefix("--method=").map(str::to_string).or_else(|| {
                    matches!(x.as_str(), "-X" | "--method")
                        .then(|| a.get(i + 1).cloned())
                        .flatten()
                })
            });
            let writes = method
                .as_deref()
                .is_some_and(|m| !m.eq_ignore_ascii_case("GET"))
                || a.iter().any(|x| {
                    matches!(
                        x.as_str(),
                        "-f" | "-F" | "--field" | "--raw-field" | "--input"
                    )
                });
            if !writes {
                push(out, Act::Inspect, Vec::new(), c);
                return;
            }
            let path = api_path(a).to_ascii_lowercase();
            t = path.split('/').map(str::to_string).collect();
            // `-f permission=push`: the access level.
            t.extend(a.iter().filter_map(|x| {
                x.strip_prefix("permission=")
                    .or_else(|| x.strip_prefix("role="))
                    .map(|l| format!("permission:{l}"))
            }));
            // `repos/OWNER/NAME/…` names a repository.
            if let [repos, owner, name, ..] = t.as_slice()
                && repos == "repos"
            {
                t.push(format!("{owner}/{name}"));
            }
            if path.contains("protection") || path.contains("rulesets") {
                Act::SafeguardChange
            } else if path.contains("collaborators")
                || path.contains("teams")
                || path.contains("permission")
                || path.contains("members")
            {
                Act::AccessGrant
            } else if path.contains("merge") {
                Act::Merge
            } else if path.contains("comments")
                || path.contains("labels")
                || path.contains("reviews")
            {
                Act::Comment
            } else if method
                .as_deref()
                .is_some_and(|m| m.eq_ignore_ascii_case("DELETE"))
            {
                Act::DeleteRemote
            } else {
                Act::SendExternal
            }
        }
        _ => return,
    };
    push(out, act, t, c)
}

/// The first operand, the values of `with_value` options skipped (`kubectl -n prod apply` →
/// `apply`).
fn first_operand(a: &[String], with_value: &[&str]) -> String {
    let mut i = 0;
    while let Some(x) = a.get(i) {
        if with_value.contains(&x.as_str()) {
            i += 2;
        } else if x.starts_with('-') {
            i += 1;
        } else {
            return x.clone();
        }
    }
    String::new()
}

/// The endpoint of `gh api` (its first operand after `api`, option values skipped).
fn api_path(a: &[String]) -> String {
    const WITH_VALUE: &[&str] = &[
        "-X",
        "--method",
        "-f",
        "-F",
        "--field",
        "--raw-field",
        "-H",
        "--header",
        "--input",
        "-q",
        "--jq",
        "-t",
        "--template",
        "--hostname",
        "-p",
        "--preview",
        "--cache",
    ];
    first_operand(a.get(1..).unwrap_or(&[]), WITH_VALUE)
}

fn kubectl(c: &SimpleCommand, a: &[String], verb: &str, ctx: &Context, out: &mut Vec<Done>) {
    let mut t: Vec<String> = operands(a).into_iter().skip(1).collect();
    t.extend(opt(a, &["-n", "--namespace", "--context", "--cluster"]).map(str::to_string));
    t.extend(opt(a, &["-f", "--filename"]).map(str::to_string));
    // A kustomization (`-k overlays/staging`) is the workspace's: the workspace and the path
    // name what is applied, and its last directory is the one overlay the request must say.
    if let Some(k) = opt(a, &["-k", "--kustomize"]) {
        t.push(k.to_string());
        t.push(here(ctx));
        if let Some(last) = k.rsplit('/').find(|s| !s.is_empty() && *s != ".") {
            t.push(format!("said:{last}"));
        }
    }
    let act = match verb {
        "create" if a.iter().any(|x| x == "secret") => Act::SecretUse,
        "create" if a.iter().any(|x| x.contains("rolebinding")) => Act::AccessGrant,
        "get" | "describe" | "logs" | "top" | "explain" | "api-resources" | "events" | "diff" => {
            Act::Inspect
        }
        // Argo Rollouts' plugin: `kubectl argo rollouts promote checkout-web` deploys.
        "argo"
            if a.iter().any(|x| {
                matches!(
                    x.as_str(),
                    "promote" | "undo" | "abort" | "retry" | "restart" | "set"
                )
            }) =>
        {
            Act::Deploy
        }
        // `delete namespace preview-pr-2207` deletes what it names, as the user's `delete` says;
        // deleting a pod restarts it.
        "delete"
            if !a
                .iter()
                .any(|x| matches!(x.as_str(), "pod" | "pods" | "po"))
                && !a.iter().any(|x| x.starts_with("pod/")) =>
        {
            Act::Delete
        }
        "apply" | "create" | "replace" | "patch" | "set" | "scale" | "rollout" | "delete"
        | "annotate" | "label" | "edit" | "autoscale" | "expose" | "run" | "drain" | "cordon"
        | "uncordon" | "taint" => Act::Deploy,
        _ => return,
    };
    if verb == "rollout" && a.iter().any(|x| matches!(x.as_str(), "status" | "history")) {
        push(out, Act::Inspect, t, c);
        return;
    }
    push(out, act, t, c)
}

fn cloud(c: &SimpleCommand, ops: &[String], out: &mut Vec<Done>) {
    let words: Vec<String> = ops.iter().take(4).map(|w| w.to_ascii_lowercase()).collect();
    let reads = |w: &str| {
        [
            "describe", "list", "get", "ls", "show", "wait", "read", "tail", "logs", "log", "view",
            "browse", "search", "lookup",
        ]
        .iter()
        .any(|r| w == *r || w.starts_with(&format!("{r}-")))
    };
    // The operation: the first word after the service and its groups that reads or writes.
    if words.iter().skip(1).any(|w| reads(w))
        && !words.iter().skip(1).any(|w| {
            [
                "put",
                "create",
                "delete",
                "update",
                "set",
                "add",
                "remove",
                "rm",
                "attach",
                "authorize",
            ]
            .iter()
            .any(|m| w == *m || w.starts_with(&format!("{m}-")))
        })
    {
        push(out, Act::Inspect, Vec::new(), c);
        return;
    }
    let has = |s: &str| words.iter().any(|w| w.contains(s));
    let act = if words
        .iter()
        .any(|w| matches!(w.as_str(), "rm" | "rb" | "delete" | "destroy"))
        || has("delete")
        || has("invalidation")
        || has("purge")
    {
        Act::Purge
    } else if has("iam") || has("policy-binding") || has("role-assignment") {
        Act::AccessGrant
    } else if has("secret") {
        Act::SecretUse
    } else if words.iter().any(|w| w == "s3" || w == "storage")
        && (has("cp") || has("sync") || has("upload"))
    {
        Act::Publish
    } else {
        Act::InfrastructureChange
    };
    let mut targets = if act == Act::Publish {
        upload_targets(c.argv.get(1..).unwrap_or(&[]))
    } else {
        ops.iter().skip(1).cloned().collect()
    };
    // A CDN invalidation is on the CDN the request names (`invalidate … on the CloudFront
    // distribution`); the distribution's id names nothing the user says.
    if act == Act::Purge && words.first().is_some_and(|w| w == "cloudfront") {
        targets.push("cloudfront".into());
    }
    push(out, act, targets, c)
}

/// Whether word `i` is the value of one of these options (`--comment TEXT`).
fn value_of(a: &[String], i: usize, options: &[&str]) -> bool {
    i.checked_sub(1)
        .and_then(|k| a.get(k))
        .is_some_and(|o| options.contains(&o.as_str()))
}

/// What an upload acts on: where it goes, not what it sends (`aws s3 sync ./build
/// s3://docs-site` is on `s3://docs-site`; `az storage blob upload-batch -s dist
/// --account-name acmestatic` on `acmestatic`).
fn upload_targets(a: &[String]) -> Vec<String> {
    const SOURCE: &[&str] = &[
        "-s",
        "--source",
        "--auth-mode",
        "--pattern",
        "--content-type",
        "--exclude",
        "--include",
        "--file",
        "-f",
    ];
    let words: Vec<String> = a
        .iter()
        .enumerate()
        .filter(|(i, x)| !x.starts_with('-') && !value_of(a, *i, SOURCE))
        .map(|(_, x)| x.clone())
        .skip(1)
        .collect();
    if words.iter().any(|w| w.contains("://")) {
        words.into_iter().filter(|w| w.contains("://")).collect()
    } else {
        words
    }
}

/// The targets of an MCP call: the values of its arguments that name things (an owner, a
/// repository, a number, a channel, a branch, an environment, …).
fn mcp_targets(args: &serde_json::Value) -> Vec<String> {
    let mut targets = Vec::new();
    if let Some(o) = args.as_object() {
        for (k, v) in o {
            let k = k.to_ascii_lowercase();
            let keyed = [
                "owner",
                "repo",
                "repository",
                "pull",
                "number",
                "issue",
                // GitLab's merge requests and issues: `merge_request_iid`, `issue_iid`.
                "iid",
                "channel",
                "to",
                "recipient",
                "branch",
                "tag",
                "name",
                "environment",
                "env",
                "package",
                "version",
                "database",
                "bucket",
                // Azure's blob container, and the prefix or pattern a batch acts under.
                "container",
                "prefix",
                "pattern",
                "label",
                "labels",
                "project",
                "service",
                "app",
                "team",
                "user",
                "username",
                "key",
                "id",
                "ref",
                "head",
                "base",
                "namespace",
                "site",
                "zone",
                // Datadog's monitor and the scope a mute is on (`env:staging`).
                "monitor",
                "scope",
                // Stripe's payment intent or charge a refund is of; the files, URLs, hosts or
                // prefixes a CDN purge names (Cloudflare's `{"files": […]}`).
                "intent",
                "charge",
                "files",
                "urls",
                "hosts",
                "prefixes",
                "permission",
                "role",
                "access",
            ]
            .iter()
            .any(|x| {
                k == *x
                    || k.starts_with(&format!("{x}_"))
                    || k.ends_with(&format!("_{x}"))
                    || (x.len() >= 4 && k.contains(x))
            });
            if !keyed {
                continue;
            }
            match v {
                // An access level is a target of its own kind.
                serde_json::Value::String(s)
                    if matches!(
                        k.as_str(),
                        "permission" | "role" | "access_level" | "access"
                    ) =>
                {
                    targets.push(format!("permission:{}", s.to_ascii_lowercase()))
                }
                // A channel is `#name` whether or not the call writes the `#`.
                serde_json::Value::String(s) if k.contains("channel") && !s.starts_with('#') => {
                    targets.push(format!("#{s}"))
                }
                // A monitor's scope (`env:staging,service:api`): the values it names, so the
                // environment is one and `env:staging` is no name shared with the request.
                serde_json::Value::String(s) if k == "scope" => targets.extend(
                    s.split(',')
                        .map(|x| x.rsplit(':').next().unwrap_or(x).trim().to_string())
                        .filter(|x| !x.is_empty()),
                ),
                serde_json::Value::String(s) if s.len() <= 200 => targets.push(s.clone()),
                serde_json::Value::Number(n) => targets.push(n.to_string()),
                serde_json::Value::Array(xs) => targets.extend(
                    xs.iter()
                        .filter_map(|x| {
                            x.as_str()
                                .map(str::to_string)
                                .or_else(|| x.as_number().map(|n| n.to_string()))
                        })
                        .take(16),
                ),
                _ => {}
            }
        }
    }
    targets
}

/// An MCP call's act, read from its tool's name, and its targets from its arguments.
/// The verbs of an infrastructure server's tools that change a resource.
const INFRA_VERBS: &[&str] = &[
    "update",
    "set",
    "put",
    "create",
    "modify",
    "scale",
    "configure",
    "patch",
    "apply",
    "restart",
    "attach",
    "enable",
    "disable",
    "start",
    "stop",
    "toggle",
    "tag",
];

/// A statement without its bare numbers (`WHERE id = 48213`).
fn without_numbers(sql: &str) -> String {
    sql.split_whitespace()
        .filter(|w| {
            !w.trim_matches(|c: char| !c.is_ascii_alphanumeric())
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tables a SQL statement names: the word after `from`, `update`, `into`, `table` or
/// `join` (`DELETE FROM sessions WHERE …` → `sessions`).
fn sql_tables(sql: &str) -> Vec<String> {
    let words: Vec<&str> = sql
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out: Vec<String> = Vec::new();
    // MongoDB's `db.sessions.deleteMany`: the collection.
    for w in &words {
        if let Some(rest) = w.strip_prefix("db.")
            && let Some((coll, _)) = rest.split_once('.')
            && !coll.is_empty()
            && !out.iter().any(|t| t == coll)
        {
            out.push(coll.to_string());
        }
    }
    for w in words.windows(2) {
        if matches!(w[0], "from" | "update" | "into" | "table" | "join")
            && !matches!(w[1], "if" | "only" | "exists")
            && !out.iter().any(|t| t == w[1])
        {
            out.push(w[1].to_string());
        }
    }
    out
}

/// Whether an MCP server manages cloud, cluster or edge infrastructure (by its name: `aws`,
/// `gcp`, `azure`, `kubernetes`, `cloudflare`, `terraform`, feature flags, …).
fn infrastructure_server(server: &str) -> bool {
    let s = server.to_ascii_lowercase();
    [
        "aws",
        "gcp",
        "gcloud",
        "google-cloud",
        "azure",
        "kubernetes",
        "k8s",
        "cloudflare",
        "terraform",
        "vercel",
        "netlify",
        "fly",
        "heroku",
        "digitalocean",
        "launchdarkly",
        "flags",
        "unleash",
    ]
    .iter()
    .any(|n| {
        s.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == *n)
            || s == *n
    })
}

/// Whether an MCP call's arguments set a closing state (`"status": "resolved"`).
fn closed_state(args: &serde_json::Value) -> bool {
    [
        "state",
        "status",
        "transition",
        "stateName",
        "state_name",
        "resolution",
        // GitLab's `update_issue` closes with `"state_event": "close"`.
        "state_event",
    ]
    .iter()
    .find_map(|k| args.get(*k))
    .and_then(serde_json::Value::as_str)
    .is_some_and(|s| {
        matches!(
            s.to_ascii_lowercase().as_str(),
            "closed"
                | "close"
                | "done"
                | "completed"
                | "resolved"
                | "canceled"
                | "cancelled"
                | "released"
                | "shipped"
        )
    })
}

/// The act an MCP tool's name says (`None`: a tool that does nothing the mandate names).
fn mcp_act(server: &str, words: &[&str], args: &serde_json::Value) -> Option<Act> {
    let any = |l: &[&str]| words.iter().any(|w| l.contains(w));
    let state_closed = closed_state(args);
    Some(if any(&["merge"]) {
        Act::Merge
    } else if any(&["refund", "refunds"]) {
        // Stripe's `create_refund` moves money back: the destructive signal's act, as
        // `refund the duplicate charge` says it.
        Act::Delete
    } else if any(&["incident", "incidents", "alert", "page"])
        && any(&["create", "trigger", "open", "send", "declare"])
    {
        // PagerDuty's `create_incident`, Opsgenie's `create_alert`: people are paged.
        Act::SendExternal
    } else if (any(&["publish", "release"]) && !any(&["get", "list"]))
        || (any(&["tag"]) && any(&["create", "push"]) && !infrastructure_server(server))
    {
        // GitLab's `create_tag` puts a tag others see, as `git push origin v1.2.0` does.
        Act::Publish
    } else if any(&[
        "deploy", "rollout", "redeploy", "rollback", "promote", "trigger", "dispatch",
    ]) {
        Act::Deploy
    } else if any(&[
        "protection",
        "ruleset",
        "mute",
        "snooze",
        "silence",
        "downtime",
    ]) && !any(&["unmute", "unsnooze"])
    {
        // Datadog's `mute_monitor`, a silence or downtime: alerts page nobody for a time.
        Act::SafeguardChange
    } else if any(&[
        "collaborator",
        "invite",
        "permission",
        "member",
        "grant",
        "role",
    ]) && !any(&["get", "list"])
    {
        Act::AccessGrant
    } else if any(&["secret"]) && any(&["set", "create", "update", "put"]) {
        Act::SecretUse
    } else if any(&[
        "purge",
        "invalidate",
        "flush",
        "prune",
        "deprecate",
        "unpublish",
    ]) {
        // A deprecated package version is withdrawn as `npm deprecate` withdraws it.
        Act::Purge
    } else if any(&["delete", "remove", "destroy", "drop"]) {
        Act::DeleteRemote
    } else if any(&["close", "resolve"]) || (any(&["update", "edit", "transition"]) && state_closed)
    {
        Act::Close
    } else if any(&["push"]) || (any(&["create", "update"]) && any(&["file", "files", "commit"])) {
        Act::Push
    } else if any(&["comment", "review", "label", "labels", "reply", "react"])
        || (any(&["create", "update", "edit"]) && any(&["issue", "pull", "pr"]))
    {
        Act::Comment
    } else if any(&[
        "post", "send", "message", "email", "mail", "chat", "notify", "publish",
    ]) {
        Act::SendExternal
    } else if any(&["execute", "query", "sql"]) {
        let sql = args.to_string().to_ascii_lowercase();
        if ["insert", "update", "delete", "drop", "alter", "truncate"]
            .iter()
            .any(|w| {
                sql.split(|c: char| !c.is_ascii_alphabetic())
                    .any(|x| x == *w)
            })
        {
            Act::DatabaseWrite
        } else {
            // A statement that writes nothing reads (`SELECT count(*) …`).
            Act::Inspect
        }
    } else if infrastructure_server(server) && any(INFRA_VERBS) {
        // A cloud or cluster resource changed through its API (`update_function_configuration`,
        // `scale_deployment`): what `aws …` or `kubectl …` would change.
        Act::InfrastructureChange
    } else {
        return None;
    })
}

fn mcp(server: &str, tool: &str, args: &serde_json::Value, out: &mut Vec<Done>) {
    let t = tool.to_ascii_lowercase();
    let words: Vec<&str> = t
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // Reading tools do nothing the mandate names (`search_messages`, `get_pull_request`).
    let first = words.first().copied().unwrap_or("");
    if matches!(
        first,
        "get" | "list" | "search" | "read" | "fetch" | "find" | "view" | "describe" | "lookup"
    ) {
        out.push(Done {
            act: Act::Inspect,
            targets: Vec::new(),
            by: format!("{server}/{tool}"),
        });
        return;
    }
    // A draft is seen by nobody yet.
    if args.get("draft").and_then(serde_json::Value::as_bool) == Some(true) {
        return;
    }
    let Some(act) = mcp_act(server, &words, args) else {
        return;
    };
    let mut targets = mcp_targets(args);
    // The tables a statement names (`execute_sql` of `DELETE FROM api_tokens …`).
    if act == Act::DatabaseWrite {
        for v in args.as_object().into_iter().flat_map(|o| o.values()) {
            if let Some(sql) = v.as_str() {
                targets.extend(sql_tables(&sql.to_ascii_lowercase()));
            }
        }
    }
    // Owner and repository together name the repository.
    if let (Some(owner), Some(repo)) = (
        args.get("owner").and_then(serde_json::Value::as_str),
        args.get("repo").and_then(serde_json::Value::as_str),
    ) {
        targets.push(format!("{owner}/{repo}"));
    }
    out.push(Done {
        act,
        targets,
        by: format!("{server}/{tool}"),
    });
}

//! git and GitHub CLI signals: history rewritten or pushed, protections changed, repositories made
//! public.

use super::*;

pub(super) fn git_signals(c: &SimpleCommand, out: &mut Vec<Signal>) {
    // git's words, read as the normaliser reads them (global options skipped).
    let g = crate::normalize::shell::git::split(args(c));
    let Some(sub) = g.sub.map(String::as_str) else {
        return;
    };
    let rest = g.rest;
    let has_r = |f: &[&str]| rest.iter().any(|x| f.contains(&x.as_str()));
    if sub == "add" {
        staged_secrets(c, rest, out);
    }
    match sub {
        "push" => push_signals(c, rest, out),
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
            // What it deletes is the target: untracked files, and ignored ones with `-x`.
            let ignored = rest.iter().any(|x| x.starts_with('-') && x.contains('x'));
            out.push(sig(
                Category::Destructive,
                if ignored {
                    Severity::High
                } else {
                    Severity::Medium
                },
                format!("`{}` deletes untracked files", c.text),
                if ignored {
                    "clean untracked ignored"
                } else {
                    "clean untracked"
                },
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
            config_signal(c, rest, has_r(&["--global", "--system"]), out)
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
pub(super) fn gh_signals(c: &SimpleCommand, out: &mut Vec<Signal>) {
    let a = args(c);
    shared_items(c, out);
    // Repository or environment secrets and variables: what CI and deploys run with.
    if matches!(a.first().map(String::as_str), Some("secret" | "variable"))
        && matches!(
            a.get(1).map(String::as_str),
            Some("set" | "delete" | "remove")
        )
    {
        out.push(sig(
            Category::Production,
            medium_or_high_in_prod(c),
            format!("`{}` changes the secrets or variables CI runs with", c.text),
            a.get(2).map_or("secret", String::as_str),
        ));
    }
    // `gh api` writing an organisation's settings or a repository's permissions: who and what
    // may act, changed for everyone.
    let method = gh_api_method(a);
    let writes = matches!(method.as_deref(), Some("PUT" | "PATCH" | "POST"))
        || has(c, &["-f", "-F", "--field", "--raw-field"]);
    let settings = a.iter().skip(1).any(|x| {
        let p = x.trim_start_matches('/');
        !x.starts_with('-')
            && (p.starts_with("orgs/") && !p.contains("/issues") || p.contains("/permissions"))
    });
    if a.first().is_some_and(|x| x == "api") && writes && settings {
        out.push(sig(
            Category::Privilege,
            Severity::High,
            format!(
                "`{}` changes organisation or repository permissions",
                c.text
            ),
            "permissions",
        ));
    }
    // `gh api -X DELETE …`: whatever the path names, deleted.
    if a.first().is_some_and(|x| x == "api") && method.as_deref() == Some("DELETE") {
        let path = a
            .iter()
            .skip(1)
            .find(|x| !x.starts_with('-') && x.contains('/'))
            .map_or("api", String::as_str);
        out.push(sig(
            Category::Destructive,
            Severity::High,
            format!("`{}` deletes through the GitHub API", c.text),
            path.rsplit('/').find(|p| !p.is_empty()).unwrap_or(path),
        ));
    }
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

/// The HTTP method a `gh api` call names (`-X M`, `-XM`, `--method M`, `--method=M`), upper-cased.
fn gh_api_method(a: &[String]) -> Option<String> {
    a.iter().enumerate().find_map(|(i, x)| {
        let inline = x
            .strip_prefix("--method=")
            .or_else(|| x.strip_prefix("-X").filter(|m| !m.is_empty()));
        match (x.as_str(), inline) {
            (_, Some(m)) => Some(m.to_ascii_uppercase()),
            ("-X" | "--method", None) => a.get(i + 1).map(|m| m.to_ascii_uppercase()),
            _ => None,
        }
    })
}

/// What others share, closed, cancelled or deleted through `gh` (issues, pull requests,
/// workflow runs, releases, repositories): medium for the item it names; high for a deletion,
/// or when `xargs` feeds it the items (every one a listing returned, none of them named).
fn shared_items(c: &SimpleCommand, out: &mut Vec<Signal>) {
    let a = args(c);
    let (Some(noun), Some(verb)) = (a.first(), a.get(1)) else {
        return;
    };
    let what = match (noun.as_str(), verb.as_str()) {
        ("issue", "close" | "delete" | "lock" | "transfer") => "an issue",
        ("pr", "close") => "a pull request",
        ("run", "cancel" | "delete") => "a workflow run",
        ("release", "delete") => "a release",
        ("repo", "delete" | "archive") => "a repository",
        ("workflow", "disable") => "a workflow",
        _ => return,
    };
    let bulk = c
        .wrappers
        .iter()
        .any(|w| w.split_whitespace().next().map(base) == Some("xargs"));
    let item = a
        .iter()
        .skip(2)
        .find(|x| !x.starts_with('-'))
        .map(String::as_str);
    // Deletion cannot be undone (a closed issue, a cancelled run, an archived repository can
    // be reopened, rerun, unarchived): high even for a named item.
    let severity = if bulk || verb == "delete" {
        Severity::High
    } else {
        Severity::Medium
    };
    let target = match item {
        Some(item) if !bulk => item,
        _ => verb.as_str(),
    };
    out.push(sig(
        Category::RemoteHistory,
        severity,
        format!(
            "`{}` {} {what}{}",
            c.text,
            match verb.as_str() {
                "close" => "closes",
                "cancel" => "cancels",
                "lock" => "locks",
                "transfer" => "transfers",
                "archive" => "archives",
                "disable" => "disables",
                _ => "deletes",
            },
            if bulk {
                " for every item a listing returned"
            } else {
                ""
            }
        ),
        target,
    ));
}

/// A push after a remote was added or changed, or after history was rewritten, in one line.
pub(super) fn push_history(cmds: &[SimpleCommand], out: &mut Vec<Signal>) {
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

/// A branch others build on: a force-push or deletion of it is irreversible for everyone.
fn shared_branch(b: &str) -> bool {
    matches!(
        b.trim_start_matches("refs/heads/"),
        "main" | "master" | "trunk" | "develop" | "release" | "production" | "prod"
    )
}

/// One refspec of `git push`: its destination (`refs/heads/` and `+` removed), whether it is
/// forced (`+src:dst`) and whether it deletes (`:dst`).
fn refspec(r: &str) -> (String, bool, bool) {
    let forced = r.starts_with('+');
    let r = r.trim_start_matches('+');
    let (src, dst) = match r.split_once(':') {
        Some((s, d)) => (s, d),
        None => (r, r),
    };
    let dst = dst.trim_start_matches("refs/heads/").to_string();
    (dst, forced, src.is_empty())
}

/// `git push`: forced pushes and deletions (critical for a branch others build on, in every
/// spelling: `-f origin HEAD:refs/heads/main`, `origin +main`, `origin :main`, `--delete origin
/// main`, `--mirror`, `--force --all`), remote branches deleted.
fn push_signals(c: &SimpleCommand, rest: &[String], out: &mut Vec<Signal>) {
    let has_r = |f: &[&str]| rest.iter().any(|x| f.contains(&x.as_str()));
    let operands: Vec<&String> = rest.iter().filter(|x| !x.starts_with('-')).collect();
    let lease = rest.iter().any(|x| x.starts_with("--force-with-lease"));
    let force_flag = has_r(&["-f", "--force"])
        || rest
            .iter()
            .any(|x| x.starts_with('-') && !x.starts_with("--") && x.contains('f'));
    let delete_flag = has_r(&["-d", "--delete"]);
    let specs: Vec<(String, bool, bool)> = operands.iter().skip(1).map(|r| refspec(r)).collect();
    let every = has_r(&["--all", "--mirror", "--branches"]);
    // What is force-pushed and what is deleted, branch by branch.
    let forced: Vec<&str> = specs
        .iter()
        .filter(|(_, plus, del)| (force_flag || lease || *plus) && !*del && !delete_flag)
        .map(|(d, _, _)| d.as_str())
        .collect();
    let deleted: Vec<&str> = specs
        .iter()
        .filter(|(_, _, del)| *del || delete_flag)
        .map(|(d, _, _)| d.as_str())
        .collect();
    let force_any = force_flag || specs.iter().any(|(_, plus, _)| *plus);
    if force_any || (lease && forced.iter().any(|b| shared_branch(b))) {
        let critical = forced.iter().any(|b| shared_branch(b)) || (force_flag && every);
        let branch = forced
            .iter()
            .find(|b| shared_branch(b))
            .or(forced.first())
            .copied()
            .unwrap_or("");
        out.push(sig(
            Category::RemoteHistory,
            if critical {
                Severity::Critical
            } else {
                Severity::High
            },
            format!(
                "`{}` force-pushes {}",
                c.text,
                if every {
                    "every branch"
                } else if branch.is_empty() {
                    "the current branch"
                } else {
                    branch
                }
            ),
            if branch.is_empty() { "push" } else { branch },
        ));
    }
    if !deleted.is_empty() {
        let shared = deleted.iter().find(|b| shared_branch(b));
        out.push(sig(
            Category::RemoteHistory,
            if shared.is_some() {
                Severity::Critical
            } else {
                Severity::High
            },
            format!("`{}` deletes a remote branch", c.text),
            shared.or(deleted.last()).copied().unwrap_or("branch"),
        ));
    }
    if has_r(&["--mirror"]) {
        // A mirror push force-updates and deletes every remote ref to match the local ones.
        out.push(sig(
            Category::RemoteHistory,
            Severity::Critical,
            format!("`{}` overwrites and deletes every remote ref", c.text),
            "all refs",
        ));
    } else if has_r(&["--all", "--tags", "--branches"]) {
        out.push(sig(
            Category::RemoteHistory,
            Severity::High,
            format!("`{}` pushes every ref", c.text),
            "all refs",
        ));
    }
}

/// Files whose names say they hold secrets (templates such as `.env.example` excepted).
fn secret_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let template = [".example", ".sample", ".template", ".dist", ".defaults"]
        .iter()
        .any(|t| name.ends_with(t));
    !template
        && (name == ".env"
            || name.starts_with(".env.")
            || name.ends_with(".pem")
            || name.ends_with(".key")
            || name.ends_with(".p12")
            || name.ends_with(".pfx")
            || name.ends_with(".keystore")
            || name.ends_with(".jks")
            || name.starts_with("id_rsa")
            || name.starts_with("id_ed25519")
            || name.starts_with("id_ecdsa")
            || name == ".npmrc"
            || name == ".pypirc"
            || name == ".netrc"
            || name == ".git-credentials"
            || name.starts_with("credentials")
            || name.starts_with("secrets.")
            || name.starts_with("service-account") && name.ends_with(".json")
            || name.ends_with(".tfstate")
            || name.ends_with(".tfvars") && !name.contains("example"))
}

/// `git add` of a secret file (`git add -f .env`, `git add id_rsa`): it leaves with the next
/// push.
fn staged_secrets(c: &SimpleCommand, rest: &[String], out: &mut Vec<Signal>) {
    for f in rest.iter().filter(|x| !x.starts_with('-')) {
        if secret_file(f) {
            out.push(sig(
                Category::SecretInPayload,
                Severity::High,
                format!("`{}` stages the secret file {f} for a commit", c.text),
                f,
            ));
        }
    }
}

/// `git config` of a key that makes git run code by itself (`core.hooksPath`,
/// `core.fsmonitor`, `core.sshCommand`, `include.path`).
fn config_signal(c: &SimpleCommand, rest: &[String], global: bool, out: &mut Vec<Signal>) {
    let key = rest.iter().position(|x| x.contains('.'));
    let value = key.and_then(|i| rest.get(i + 1)).map(String::as_str);
    // Hooks kept in the repository (`core.hooksPath .githooks`, what husky sets) are the
    // team's own, reviewed like its code: medium. A path elsewhere, or set for every
    // repository (`--global`, `--system`), is code from outside: high.
    let in_repo_hooks = key.is_some_and(|i| rest[i].eq_ignore_ascii_case("core.hookspath"))
        && value.is_some_and(|v| {
            !v.starts_with(['/', '~', '$']) && !v.split('/').any(|part| part == "..")
        })
        && !global;
    out.push(sig(
        Category::Persistence,
        if in_repo_hooks {
            Severity::Medium
        } else {
            Severity::High
        },
        format!("`{}` makes git run other code by itself", c.text),
        value
            .or(key.map(|i| rest[i].as_str()))
            .unwrap_or("git config"),
    ))
}

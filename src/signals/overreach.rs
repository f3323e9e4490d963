//! What over-eager agents do: publish what nobody asked to publish (packages, releases, images,
//! sites, merges), and switch safeguards off (skipped hooks, disabled TLS verification,
//! dismissed alerts, skipped tests, lowered thresholds, admin overrides). Each has a benign
//! look-alike that raises nothing (`--dry-run`, a draft release, `gh pr create`, a local
//! registry) in tests/fixtures/signals.toml.

use super::*;

/// Publications that can be taken back or stay among testers: medium, not high.
const TO_MAIN: &str = "pushes straight to the main branch, past review";
const TO_RELEASE: &str = "uploads assets to a published release";
const TO_TESTFLIGHT: &str = "uploads an app build to TestFlight";

/// A command that publishes beyond the workspace, and what it publishes.
fn publication(c: &SimpleCommand, name: &str) -> Option<(&'static str, String)> {
    let a = args(c);
    let sub = subcommand(c).unwrap_or("");
    let dry = has(c, &["--dry-run", "-n", "--draft", "--help", "-h"]);
    let words = |w: &[&str]| w.iter().all(|x| a.iter().any(|y| y == x));
    let found = match name {
        "npm" | "yarn" | "pnpm" | "bun" if sub == "publish" && !dry => {
            ("publishes a package", format!("{name} publish"))
        }
        // What is already published, changed for everyone who installs it: a version
        // withdrawn or deprecated, a dist-tag (`latest`) moved.
        "npm" | "yarn" | "pnpm" if sub == "unpublish" && !dry => (
            "withdraws a published package",
            positional_after(a, "unpublish")
                .unwrap_or("unpublish")
                .into(),
        ),
        "npm" | "yarn" | "pnpm" if sub == "deprecate" => (
            "deprecates a published package",
            positional_after(a, "deprecate")
                .unwrap_or("deprecate")
                .into(),
        ),
        "npm" | "yarn" | "pnpm"
            if sub == "dist-tag"
                && a.iter()
                    .any(|x| matches!(x.as_str(), "add" | "rm" | "remove")) =>
        {
            (
                "moves a published package's dist-tag",
                a.iter()
                    .rfind(|x| !x.starts_with('-'))
                    .map_or("dist-tag".into(), |t| format!("dist-tag {t}")),
            )
        }
        "cargo" if sub == "publish" && !dry => ("publishes a crate", "cargo publish".into()),
        // Its target is the index it goes to: PyPI unless a repository is named.
        "twine" if sub == "upload" => ("uploads a package to PyPI", twine_index(a).into()),
        "python" | "python3" if words(&["twine", "upload"]) => {
            ("uploads a package to PyPI", twine_index(a).into())
        }
        "poetry" | "flit" | "uv" | "hatch" | "pdm" if sub == "publish" && !dry => {
            ("publishes a package", format!("{name} publish"))
        }
        "gem" if sub == "push" => ("publishes a gem", "gem push".into()),
        // App stores: fastlane's upload actions (not `--skip_binary_upload` previews).
        "fastlane" | "bundle"
            if a.iter().any(|x| {
                matches!(
                    x.as_str(),
                    "deliver" | "pilot" | "supply" | "upload_to_app_store" | "upload_to_play_store"
                )
            }) && (name == "fastlane" || a.iter().any(|x| x == "fastlane")) =>
        {
            if a.iter().any(|x| x == "pilot") {
                // TestFlight: testers only, like a test index (medium, below).
                (TO_TESTFLIGHT, "testflight".into())
            } else {
                ("uploads an app build to a store", "app store".into())
            }
        }
        // Maven's `deploy` phase (and a release's `perform`) uploads the artifacts to the
        // distribution repository; Gradle's publishing tasks do the same.
        "mvn" | "mvnw" | "./mvnw"
            if a.iter()
                .any(|x| x == "deploy" || x == "release:perform" || x == "deploy:deploy") =>
        {
            (
                "uploads artifacts to a Maven repository",
                "maven deploy".into(),
            )
        }
        "gradle" | "gradlew" | "./gradlew"
            if a.iter().any(|x| {
                !x.starts_with('-')
                    && x.rsplit(':').next().is_some_and(|t| {
                        t.starts_with("publish")
                            && !t.contains("MavenLocal")
                            && !t.contains("Local")
                    })
            }) =>
        {
            ("publishes artifacts", "gradle publish".into())
        }
        // cargo-release only previews unless told to `--execute`.
        "cargo" if sub == "release" && has(c, &["--execute", "-x"]) => (
            "publishes a release (tag, push, crates.io)",
            "cargo release".into(),
        ),
        // Its target is the feed it goes to: nuget.org unless `--source` names another.
        "dotnet" if words(&["nuget", "push"]) => (
            "publishes a NuGet package",
            option_value(a, &["--source", "-s"])
                .unwrap_or("nuget.org")
                .to_string(),
        ),
        // Deploys and image pushes are `production` signals.
        "helm" if sub == "push" => (
            "pushes a chart to a registry",
            format!("helm push {}", helm_push_parts(a).join(" ")),
        ),
        "mkdocs" if sub == "gh-deploy" => ("deploys the documentation site", "docs deploy".into()),
        "ghp-import" if has(c, &["-p", "--push"]) => {
            ("deploys a GitHub Pages site", "pages deploy".into())
        }
        "gh" => return gh_publication(c),
        "glab" => return gh_publication(&super::glab_as_gh(c)),
        "git" => return git_publication(c),
        _ => return release_tool(c, name),
    };
    Some(found)
}

/// The index `twine upload` goes to: the repository it names, or PyPI.
fn twine_index(a: &[String]) -> &str {
    option_value(a, &["--repository-url", "--repository", "-r"]).unwrap_or("pypi upload")
}

/// What `helm push charts/ingest-0.14.2.tgz oci://registry.acme.io/charts` publishes: the
/// chart's name and version (from the package's file name) and the registry, so that the
/// user's words can name them.
pub(crate) fn helm_push_parts(a: &[String]) -> Vec<String> {
    let mut positional = a
        .iter()
        .skip_while(|x| *x != "push")
        .skip(1)
        .filter(|x| !x.starts_with('-'));
    let mut out = Vec::new();
    if let Some(package) = positional.next() {
        let file = package.rsplit('/').next().unwrap_or(package);
        let stem = file.trim_end_matches(".tgz");
        // `ingest-0.14.2`: the version starts after the last `-` followed by a digit.
        match stem
            .match_indices('-')
            .map(|(i, _)| i)
            .find(|i| stem[i + 1..].starts_with(|c: char| c.is_ascii_digit()))
        {
            Some(i) => {
                out.push(stem[..i].to_string());
                out.push(stem[i + 1..].to_string());
            }
            None => out.push(stem.to_string()),
        }
    }
    if let Some(registry) = positional.next() {
        out.push(registry.trim_start_matches("oci://").to_string());
    }
    out
}

/// The first word after `sub` that is not an option (`npm unpublish @acme/x@1.0.0 --force` →
/// `@acme/x@1.0.0`).
fn positional_after<'a>(a: &'a [String], sub: &str) -> Option<&'a str> {
    a.iter()
        .skip_while(|x| *x != sub)
        .skip(1)
        .find(|x| !x.starts_with('-'))
        .map(String::as_str)
}

/// Release tools, run directly or through `npx` (the package named by its first word):
/// `goreleaser release` (not `--snapshot` or with publishing skipped), `semantic-release`
/// (not `--dry-run`), `changeset publish`, `lerna publish`, `release-it` (not `--dry-run`).
fn release_tool(c: &SimpleCommand, name: &str) -> Option<(&'static str, String)> {
    let a = args(c);
    let (tool, rest): (&str, &[String]) = if name == "npx" {
        let i = a.iter().position(|x| !x.starts_with('-'))?;
        (a[i].as_str(), &a[i + 1..])
    } else {
        (name, a)
    };
    // `@changesets/cli@2`, `semantic-release@24`: the package without its version.
    let tool = tool
        .rsplit_once('@')
        .filter(|(p, _)| !p.is_empty())
        .map_or(tool, |(p, _)| p);
    let flag = |f: &[&str]| rest.iter().any(|x| f.contains(&x.as_str()));
    let sub = rest
        .iter()
        .find(|x| !x.starts_with('-'))
        .map(String::as_str);
    let dry = flag(&["--dry-run", "-d", "--help", "-h"]);
    match tool {
        "goreleaser"
            if sub == Some("release")
                && !flag(&["--snapshot"])
                && !rest
                    .iter()
                    .any(|x| x.starts_with("--skip") && x.contains("publish")) =>
        {
            Some(("publishes a release", "goreleaser release".into()))
        }
        "semantic-release" if !dry => Some(("publishes a release", "semantic-release".into())),
        "release-it" if !dry => Some(("publishes a release", "release-it".into())),
        "changeset" | "@changesets/cli" if sub == Some("publish") => {
            Some(("publishes packages", "changeset publish".into()))
        }
        "lerna" if sub == Some("publish") => Some(("publishes packages", "lerna publish".into())),
        _ => None,
    }
}

/// `gh release create` (not a draft), `gh pr merge`, a public gist, and `gh api` calls that
/// create releases or merge.
fn gh_publication(c: &SimpleCommand) -> Option<(&'static str, String)> {
    let a = args(c);
    let pair = (a.first().map(String::as_str), a.get(1).map(String::as_str));
    match pair {
        (Some("release"), Some("create")) if !has(c, &["--draft", "-d"]) => Some((
            "publishes a release",
            a.iter()
                .skip(2)
                .find(|x| !x.starts_with('-'))
                .map_or("release".into(), |t| format!("release {t}")),
        )),
        (Some("pr"), Some("merge")) => Some(("merges a pull request", "merge".into())),
        // Assets attached to a release that is already out: published, but reversible.
        (Some("release"), Some("upload")) => Some((
            TO_RELEASE,
            a.iter()
                .skip(2)
                .find(|x| !x.starts_with('-'))
                .map_or("release".into(), |t| format!("release {t}")),
        )),
        (Some("gist"), Some("create")) if has(c, &["--public", "-p"]) => {
            Some(("publishes a public gist", "public gist".into()))
        }
        (Some("api"), _) => {
            let text = a.join(" ").to_ascii_lowercase();
            let writes = has(c, &["-f", "-F", "--field", "--raw-field", "--input"])
                || text.contains("-x post")
                || text.contains("-x put")
                || text.contains("--method post")
                || text.contains("--method put");
            if writes && text.contains("/releases") && !text.contains("\"draft\":true") {
                Some(("publishes a release through the API", "release".into()))
            } else if writes && text.contains("/merge") {
                Some(("merges through the API", "merge".into()))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Tags pushed (`git push --tags`, `git push origin v1.2.3`) and pushes straight to a main
/// branch (not forced: those are `remote_history`).
fn git_publication(c: &SimpleCommand) -> Option<(&'static str, String)> {
    let g = crate::normalize::shell::git::split(args(c));
    let force = g.rest.iter().any(|x| {
        x.starts_with("--force") || x.starts_with('-') && !x.starts_with("--") && x.contains('f')
    });
    // A forced push is a `remote_history` signal.
    if g.sub.map(String::as_str) != Some("push")
        || force
        || g.rest.iter().any(|x| x == "--dry-run" || x == "-n")
    {
        return None;
    }
    let operands: Vec<&String> = g.rest.iter().filter(|x| !x.starts_with('-')).collect();
    if g.rest.iter().any(|x| x == "--tags" || x == "--follow-tags") {
        return Some(("pushes tags (releases)", "tags".into()));
    }
    for r in operands.iter().skip(1) {
        let dest = r.trim_start_matches('+').rsplit(':').next().unwrap_or(r);
        if dest.starts_with("refs/tags/") || is_version_tag(dest) {
            return Some(("pushes a release tag", format!("tag {dest}")));
        }
        let branch = dest.trim_start_matches("refs/heads/");
        if matches!(branch, "main" | "master") && !r.starts_with('+') && !r.starts_with(':') {
            return Some((TO_MAIN, branch.to_string()));
        }
    }
    None
}

/// `v1.2.3`, `1.2.0`, `v2.0.0-rc.1`.
fn is_version_tag(s: &str) -> bool {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts = s.split(['.', '-']);
    parts
        .next()
        .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && parts
            .next()
            .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// Publication by a shell command: high (irreversible, seen by others), medium for a push to
/// main (the reviewer weighs whether the user asked for it).
pub(super) fn publish_signals(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    if let Some((what, target)) = publication(c, name) {
        // The package index it goes to, when named: that is what the user must have asked for
        // (`-r testpypi` is not PyPI). A test index (TestPyPI) is a sandbox: medium.
        let index = option_value(
            args(c),
            &[
                "-r",
                "--repository",
                "--repository-url",
                "--registry",
                "--index",
                "--index-url",
                "--publish-url",
            ],
        );
        let test_index = index.is_some_and(|r| {
            let r = r.to_ascii_lowercase();
            r.contains("testpypi") || r.contains("test.pypi.org")
        });
        let severity = if [TO_MAIN, TO_RELEASE, TO_TESTFLIGHT].contains(&what) || test_index {
            Severity::Medium
        } else {
            Severity::High
        };
        let (what, target) = match index {
            Some(i) => (format!("{what} (to {i})"), i.to_string()),
            None => (what.to_string(), target),
        };
        out.push(sig(
            Category::Publish,
            severity,
            format!("`{}` {what}", c.text),
            &target,
        ));
    }
}

/// A check on what is downloaded or connected to switched off: TLS verification (npm's
/// `strict-ssl false`, pip's `--trusted-host`, `curl -k`), SSH host keys, PEP 668's guard.
fn verification_off(
    c: &SimpleCommand,
    name: &str,
    text: &str,
) -> Option<(&'static str, &'static str, Severity)> {
    let high = Severity::High;
    let found = match name {
        "npm" | "yarn" | "pnpm"
            if text.contains("strict-ssl false") || text.contains("strict-ssl=false") =>
        {
            (
                "switches TLS verification off for the registry",
                "tls verification",
                high,
            )
        }
        "pip" | "pip3" if has(c, &["--trusted-host"]) || text.contains("global.trusted-host") => (
            "trusts a host without TLS verification",
            "trusted-host",
            Severity::Medium,
        ),
        // PEP 668's guard against breaking the system's own Python packages.
        "pip" | "pip3" if has(c, &["--break-system-packages"]) => (
            "overrides the guard on the system's Python packages",
            "break-system-packages",
            Severity::Medium,
        ),
        // Host keys not checked: the SSH counterpart of TLS verification off.
        "ssh" | "scp" | "sftp" | "rsync"
            if text.contains("stricthostkeychecking=no")
                || text.contains("userknownhostsfile=/dev/null") =>
        {
            (
                "switches host key verification off",
                "host key checking",
                Severity::Medium,
            )
        }
        "curl" if has(c, &["-k", "--insecure"]) => (
            "switches TLS verification off",
            "insecure",
            Severity::Medium,
        ),
        _ => return None,
    };
    Some(found)
}

/// A safeguard switched off by a shell command: (what, target, severity).
fn bypass(c: &SimpleCommand, name: &str) -> Option<(&'static str, &'static str, Severity)> {
    let a = args(c);
    let text = c.argv.join(" ").to_ascii_lowercase();
    let high = Severity::High;
    if let Some(found) = verification_off(c, name, &text) {
        return Some(found);
    }
    let found = match name {
        "git" => {
            let g = crate::normalize::shell::git::split(a);
            let sub = g.sub.map_or("", String::as_str);
            let no_verify = g.rest.iter().any(|x| x == "--no-verify")
                || sub == "commit"
                    && g.rest
                        .iter()
                        .any(|x| x.starts_with('-') && !x.starts_with("--") && x.contains('n'));
            let hooks_off = text.contains("core.hookspath=/dev/null")
                || text.contains("core.hookspath /dev/null");
            let tls_off = text.contains("http.sslverify=false")
                || text.contains("http.sslverify false")
                || text.contains("http.sslverify=0");
            if no_verify
                && matches!(
                    sub,
                    "commit" | "push" | "merge" | "rebase" | "cherry-pick" | "am" | "revert"
                )
            {
                ("skips the git hooks (--no-verify)", "no-verify hooks", high)
            } else if hooks_off {
                ("switches the git hooks off", "hooks", high)
            } else if tls_off {
                (
                    "switches TLS verification off for git",
                    "tls verification",
                    high,
                )
            } else {
                return tool_bypass(c, name);
            }
        }
        "gh" if a.first().is_some_and(|x| x == "pr") && has(c, &["--admin"]) => (
            "merges with admin rights, past the branch protection",
            "admin merge",
            high,
        ),
        "gh" if a.first().is_some_and(|x| x == "api")
            && (text.contains("code-scanning/alerts")
                || text.contains("dependabot/alerts")
                || text.contains("secret-scanning/alerts"))
            && (text.contains("dismissed") || text.contains("resolved")) =>
        {
            ("dismisses security alerts", "dismiss alerts", high)
        }
        "gh" if a.first().is_some_and(|x| x == "api")
            && text.contains("/protection")
            && (text.contains("-x delete") || text.contains("--method delete")) =>
        {
            ("removes a branch protection", "branch protection", high)
        }
        "pre-commit" if a.first().is_some_and(|x| x == "uninstall") => {
            ("uninstalls the pre-commit hooks", "pre-commit hooks", high)
        }
        "mvn"
            if a.iter()
                .any(|x| x == "-DskipTests" || x.starts_with("-Dmaven.test.skip")) =>
        {
            ("skips the tests", "skip tests", Severity::Medium)
        }
        "gradle" | "gradlew"
            if a.windows(2).any(|w| {
                matches!(w[0].as_str(), "-x" | "--exclude-task")
                    && matches!(w[1].as_str(), "test" | "check")
            }) =>
        {
            ("skips the tests", "skip tests", Severity::Medium)
        }
        "pytest" | "python" | "python3" if a.iter().any(|x| x == "--cov-fail-under=0") => (
            "lowers the coverage threshold to 0",
            "coverage threshold",
            Severity::Medium,
        ),
        "terraform" if has(c, &["-lock=false"]) => (
            "applies without the state lock",
            "state lock",
            Severity::Medium,
        ),
        "kubectl"
            if a.first().is_some_and(|x| x == "delete")
                && a.iter()
                    .any(|x| x.starts_with("pdb") || x.starts_with("poddisruptionbudget")) =>
        {
            (
                "deletes a disruption budget",
                "disruption budget",
                Severity::Medium,
            )
        }
        _ => return tool_bypass(c, name),
    };
    Some(found)
}

/// Safeguards of other tools: an agent approving a pull request, packages installed without
/// signature checks, migrations with their checks off, snapshots overwritten, linters silenced
/// in place.
fn tool_bypass(c: &SimpleCommand, name: &str) -> Option<(&'static str, &'static str, Severity)> {
    let a = args(c);
    let text = c.argv.join(" ").to_ascii_lowercase();
    let high = Severity::High;
    let found = match name {
        "git"
            if text.contains("commit.gpgsign=false") || a.iter().any(|x| x == "--no-gpg-sign") =>
        {
            (
                "switches commit signing off",
                "commit signing",
                Severity::Medium,
            )
        }
        "gh" if a.first().is_some_and(|x| x == "pr")
            && a.get(1).is_some_and(|x| x == "review")
            && has(c, &["--approve", "-a"]) =>
        {
            (
                "approves a pull request (an agent's approval is not the review a protection asks for)",
                "approve",
                high,
            )
        }
        "apt" | "apt-get" | "aptitude"
            if has(
                c,
                &[
                    "--allow-unauthenticated",
                    "--allow-insecure-repositories",
                    "--force-yes",
                ],
            ) || text.contains("allowunauthenticated=true")
                || text.contains("allowinsecurerepositories=true") =>
        {
            (
                "installs packages whose signatures are not verified",
                "unauthenticated packages",
                high,
            )
        }
        "flyway"
            if text.contains("validateonmigrate=false")
                || text.contains("-outoforder=true")
                || text.contains("cleandisabled=false") =>
        {
            (
                "migrates with its checks off",
                "migration checks",
                Severity::Medium,
            )
        }
        // jest or vitest, run directly or through a package runner.
        "jest" | "vitest" | "npx" | "pnpm" | "yarn" | "bunx"
            if (matches!(name, "jest" | "vitest")
                || a.iter().any(|x| x == "jest" || x == "vitest"))
                && has(
                    c,
                    &["-u", "--updateSnapshot", "--update", "--update-snapshots"],
                ) =>
        {
            (
                "overwrites the test snapshots with the current output",
                "snapshot update",
                Severity::Medium,
            )
        }
        "sed" | "perl"
            if has(c, &["-i"]) || a.iter().any(|x| x.starts_with("-i") || x == "-pi") =>
        {
            let script = a.join(" ");
            if [
                "noqa",
                "eslint-disable",
                "type: ignore",
                "@ts-ignore",
                "@ts-nocheck",
                "nolint",
                "#[allow(",
                "pylint: disable",
            ]
            .iter()
            .any(|m| script.contains(m))
            {
                (
                    "silences the linter or type checker in place instead of fixing the code",
                    "lint",
                    Severity::Medium,
                )
            } else {
                return None;
            }
        }
        _ => return None,
    };
    Some(found)
}

/// Safeguards switched off by a shell command.
pub(super) fn safeguard_signals(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    if let Some((what, target, severity)) = bypass(c, name) {
        out.push(sig(
            Category::SafeguardBypass,
            severity,
            format!("`{}` {what}", c.text),
            target,
        ));
    }
    in_place_edits(c, name, out);
}

/// One command of a `sed` (or `perl -pe`) script.
#[derive(Debug, PartialEq)]
enum SedEdit<'a> {
    /// `s/PATTERN/REPLACEMENT/`, behind any address.
    Substitute {
        pattern: &'a str,
        replacement: &'a str,
    },
    /// `ADDRESS d`: the lines the address selects, deleted.
    Delete,
}

/// `sed -i` and `perl -pi` edits read as the lines they write. Each substitution's replacement
/// is checked as content written into that file (`vulnerability = "allow"` into deny.toml is
/// cargo-deny switched off, as it is in a whole-file write); in a CI file, a replacement that
/// comments out what it matched, or a deletion of the lines an address selects, switches a step
/// off (medium).
fn in_place_edits(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    let a = args(c);
    let short = |x: &String, letter: char| {
        x.starts_with('-') && !x.starts_with("--") && x[1..].contains(letter)
    };
    let in_place = match name {
        "sed" | "gsed" => a
            .iter()
            .any(|x| short(x, 'i') || x.starts_with("--in-place")),
        "perl" => a.iter().any(|x| short(x, 'i')),
        _ => false,
    };
    if !in_place || c.writes.is_empty() {
        return;
    }
    // The scripts: every `-e` value, else the first word that is not an option.
    let mut scripts: Vec<&str> = a
        .windows(2)
        .filter(|w| w[0] == "-e" || (short(&w[0], 'e') && w[0].ends_with('e')))
        .map(|w| w[1].as_str())
        .collect();
    if scripts.is_empty() {
        scripts.extend(
            a.iter()
                .find(|x| !x.starts_with('-') && !x.is_empty())
                .map(String::as_str),
        );
    }
    let edits: Vec<SedEdit> = scripts
        .iter()
        .flat_map(|s| s.split([';', '\n']))
        .filter_map(sed_edit)
        .collect();
    for file in &c.writes {
        let ci = super::files::runs_later(file);
        for edit in &edits {
            match edit {
                SedEdit::Substitute {
                    pattern,
                    replacement,
                } => {
                    content_safeguards(Path::new(file), &format!("+{replacement}"), true, out);
                    let comments_out = replacement.trim_start().starts_with('#')
                        && !pattern
                            .trim_start_matches('^')
                            .trim_start()
                            .starts_with('#');
                    if ci && comments_out {
                        out.push(sig(
                            Category::SafeguardBypass,
                            Severity::Medium,
                            format!("`{}` comments out lines of the CI file {file}", c.text),
                            file,
                        ));
                    }
                }
                SedEdit::Delete if ci => out.push(sig(
                    Category::SafeguardBypass,
                    Severity::Medium,
                    format!("`{}` deletes lines of the CI file {file}", c.text),
                    file,
                )),
                SedEdit::Delete => {}
            }
        }
    }
}

/// One sed command, its address skipped: a substitution (any delimiter, escapes kept) or an
/// addressed deletion. Anything else is `None`.
fn sed_edit(command: &str) -> Option<SedEdit<'_>> {
    let mut rest = command.trim();
    let mut addressed = false;
    loop {
        if let Some(after) = rest.strip_prefix('/') {
            let end = unescaped(after, '/')?;
            rest = &after[end + 1..];
            addressed = true;
        } else if rest.starts_with(|c: char| c.is_ascii_digit() || c == '$') {
            rest = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == '$');
            addressed = true;
        }
        match rest.strip_prefix(',') {
            Some(more) => rest = more,
            None => break,
        }
    }
    let rest = rest.trim_start().trim_start_matches('!').trim_start();
    if rest == "d" {
        return addressed.then_some(SedEdit::Delete);
    }
    let body = rest.strip_prefix('s')?;
    let delim = body
        .chars()
        .next()
        .filter(|c| !c.is_alphanumeric() && *c != '\\')?;
    let body = &body[delim.len_utf8()..];
    let end = unescaped(body, delim)?;
    let pattern = &body[..end];
    let after = &body[end + delim.len_utf8()..];
    let end = unescaped(after, delim).unwrap_or(after.len());
    Some(SedEdit::Substitute {
        pattern,
        replacement: &after[..end],
    })
}

/// The byte offset of the first `delim` in `text` that no backslash escapes.
fn unescaped(text: &str, delim: char) -> Option<usize> {
    let mut escaped = false;
    for (i, ch) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if ch == '\\' {
            escaped = true;
        } else if ch == delim {
            return Some(i);
        }
    }
    None
}

/// Variables set on a command line that switch safeguards off (`HUSKY=0`, `SKIP=…` for
/// pre-commit, `NODE_TLS_REJECT_UNAUTHORIZED=0`, `GIT_SSL_NO_VERIFY=1`, `GOSUMDB=off`, …).
pub(super) fn variable_safeguards(text: &str, out: &mut Vec<Signal>) {
    const OFF: &[(&str, &str, &str)] = &[
        ("HUSKY=0", "skips the git hooks (HUSKY=0)", "hooks"),
        ("SKIP=", "skips pre-commit hooks (SKIP=…)", "hooks"),
        (
            "PRE_COMMIT_ALLOW_NO_CONFIG=1",
            "runs without the pre-commit config",
            "hooks",
        ),
        (
            "NODE_TLS_REJECT_UNAUTHORIZED=0",
            "switches TLS verification off",
            "tls verification",
        ),
        (
            "GIT_SSL_NO_VERIFY=1",
            "switches TLS verification off",
            "tls verification",
        ),
        (
            "GIT_SSL_NO_VERIFY=true",
            "switches TLS verification off",
            "tls verification",
        ),
        (
            "PYTHONHTTPSVERIFY=0",
            "switches TLS verification off",
            "tls verification",
        ),
        (
            "NPM_CONFIG_STRICT_SSL=false",
            "switches TLS verification off",
            "tls verification",
        ),
        (
            "npm_config_strict_ssl=false",
            "switches TLS verification off",
            "tls verification",
        ),
        (
            "GOSUMDB=off",
            "switches the Go checksum database off",
            "checksum",
        ),
        ("GONOSUMCHECK=", "skips Go checksum checks", "checksum"),
        (
            "GOINSECURE=",
            "fetches Go modules without TLS",
            "tls verification",
        ),
    ];
    // `SKIP_TESTS=1`, `SKIP_ENV_VALIDATION=true`, `SKIP_PREFLIGHT_CHECK=true`: an app's own
    // switch for a check.
    for (i, _) in text.match_indices("SKIP_") {
        let at_word = i == 0
            || text[..i]
                .ends_with(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '('));
        let assignment: String = text[i..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, ';' | '&' | '|'))
            .collect();
        let on = assignment.split_once('=').is_some_and(|(name, v)| {
            name.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && matches!(
                    v.trim_matches(['"', '\'']).to_ascii_lowercase().as_str(),
                    "1" | "true" | "yes"
                )
        });
        if at_word && on {
            out.push(sig(
                Category::SafeguardBypass,
                Severity::Medium,
                format!("the command line switches a check off ({assignment})"),
                "skip",
            ));
            break;
        }
    }
    for (needle, what, target) in OFF {
        let found = text.match_indices(needle).any(|(i, _)| {
            i == 0
                || text[..i]
                    .ends_with(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '('))
        });
        if found {
            out.push(sig(
                Category::SafeguardBypass,
                Severity::High,
                format!("the command line {what}"),
                target,
            ));
        }
    }
}

/// Content written that switches safeguards off: TLS verification disabled in code, tests
/// skipped, coverage thresholds lowered, lints off for a whole file. With a diff only its added
/// lines count (and a threshold counts as lowered when an added number is below the removed one).
pub(super) fn content_safeguards(path: &Path, text: &str, diff: bool, out: &mut Vec<Signal>) {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let shown = home_less(path);
    let added: String = if diff {
        text.lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .map(|l| &l[1..])
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        text.to_string()
    };
    if let Some(line) = prints_ci_secret(&path.to_string_lossy(), &added) {
        out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("the content written to {shown} prints a CI secret into the job log: `{line}`"),
            "ci secret",
        ));
    }
    let mut push = |what: &str, target: &str, severity: Severity| {
        out.push(sig(
            Category::SafeguardBypass,
            severity,
            format!("the content written to {shown} {what}"),
            target,
        ));
    };
    if switches_tls_off(&added) {
        push(
            "switches TLS verification off",
            "tls verification",
            Severity::High,
        );
    }
    if let Some((what, target)) = test_skipped(path, name, text, diff, &added) {
        push(&what, &target, Severity::Medium);
    }
    let coverage_config = name.starts_with("jest.config")
        || name.starts_with("vitest.config")
        || name.starts_with(".nycrc")
        || name.starts_with(".c8rc")
        || matches!(
            name,
            ".coveragerc"
                | "setup.cfg"
                | "tox.ini"
                | "pyproject.toml"
                | "codecov.yml"
                | "package.json"
        );
    if let Some(to) = threshold_lowered(text, diff, &added, coverage_config) {
        // The new value is part of the target: a user who named it ("from 90 to 85")
        // authorises exactly that value.
        push(
            &format!("lowers a coverage or quality threshold (to {to})"),
            &format!("coverage threshold {to}"),
            Severity::Medium,
        );
    }
    const FILE_WIDE: &[&str] = &[
        "/* eslint-disable */",
        "// eslint-disable\n",
        "// @ts-nocheck",
        "# ruff: noqa\n",
        "# flake8: noqa",
        "# mypy: ignore-errors",
        "#![allow(warnings)]",
        "#![allow(clippy::all)]",
    ];
    let eslint_config = name.starts_with(".eslintrc") || name.starts_with("eslint.config");
    let rules_off = added.matches("\"off\"").count() + added.matches("'off'").count();
    if eslint_config && rules_off >= 2 {
        push(
            &format!("turns {rules_off} lint rules off"),
            "lint rules",
            Severity::Medium,
        );
    }
    let compact = super::changes::compact(&added);
    if let Some(what) = checks_switched_off(name, &added, &compact) {
        push(what, "checks off", Severity::Medium);
    }
    if let Some(what) = tests_excluded(name, &added, &compact) {
        push(what, "tests excluded", Severity::Medium);
    }
    if FILE_WIDE.iter().any(|t| format!("{added}\n").contains(t)) {
        push(
            "turns the checks off for the whole file",
            "lint",
            Severity::Medium,
        );
    }
}

/// Whether code or config written switches TLS verification off.
fn switches_tls_off(added: &str) -> bool {
    const TLS_OFF: &[&str] = &[
        "verify=False",
        "verify = False",
        "InsecureSkipVerify: true",
        "InsecureSkipVerify:true",
        "rejectUnauthorized: false",
        "rejectUnauthorized:false",
        "NODE_TLS_REJECT_UNAUTHORIZED",
        "_create_unverified_context",
        "CERT_NONE",
        "check_hostname = False",
        "danger_accept_invalid_certs(true)",
        "danger_accept_invalid_hostnames(true)",
        "sslVerify = false",
        "strict-ssl=false",
        "strict-ssl = false",
    ];
    TLS_OFF.iter().any(|t| added.contains(t)) || added.lines().any(verification_set_off)
}

/// Whether one line sets a verification off: a setting whose name says it verifies (`verify`,
/// `ssl_verify`, `verify_ssl`, `tls_verify`, `sslverify`) given false, 0, off, none or no
/// (`ssl: { verify: false }`, `verify_ssl = false`, `'verify' => false`); a verify mode of
/// `VERIFY_NONE`; an insecure skip of verification set on (`insecure_skip_verify = true`,
/// `insecure-skip-tls-verify: true`, `tls_skip_verify = true`). A comment line sets nothing.
fn verification_set_off(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with('#') || t.starts_with("//") || t.starts_with("--") || t.starts_with('*') {
        return false;
    }
    let c: String = line
        .to_ascii_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '`'))
        .collect();
    if c.contains("verify_none") {
        return true;
    }
    let set_to = |rest: &str, values: &[&str]| -> bool {
        let rest = rest
            .trim_start_matches(|ch: char| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-');
        let Some(value) = ["=>", ":=", ":", "="]
            .iter()
            .find_map(|sep| rest.strip_prefix(sep))
        else {
            return false;
        };
        values.iter().any(|v| {
            value.strip_prefix(v).is_some_and(|after| {
                !after.starts_with(|ch: char| ch.is_ascii_alphanumeric() || ch == '_')
            })
        })
    };
    let skips = [
        "insecure_skip_verify",
        "insecure-skip-tls-verify",
        "insecureskipverify",
        "tls_skip_verify",
        "skip_tls_verify",
        "skip-tls-verify",
        "skipsslverify",
        "ssl_no_verify",
    ];
    if skips.iter().any(|k| {
        c.match_indices(k)
            .any(|(i, _)| set_to(&c[i..], &["true", "1", "yes", "on"]))
    }) {
        return true;
    }
    c.match_indices("verify").any(|(i, _)| {
        // `verify_signature`, `verify_email`: other verifications than TLS are not this signal
        // unless the name is only about TLS or certificates.
        let key_start = c[..i]
            .rfind(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'))
            .map_or(0, |k| k + 1);
        let key_end = i + c[i..]
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'))
            .unwrap_or(c.len() - i);
        let key = &c[key_start..key_end];
        let tls_key = key == "verify"
            || ["ssl", "tls", "cert", "peer", "host"]
                .iter()
                .any(|w| key.contains(w));
        tls_key && set_to(&c[i..], &["false", "0", "off", "none", "no"])
    })
}

/// A checker's whole configuration switched off, or a failing step made to pass, in the content
/// written: mypy's `ignore_errors = True`, ruff's or flake8's `ignore = ["ALL"]`, a coverage
/// status made `informational`, a CI step's `continue-on-error: true`, a test or lint command
/// followed by `|| true` / `|| exit 0`, tests deselected in pytest's options, cargo-deny's
/// vulnerabilities allowed, security advisories allowlisted.
fn checks_switched_off(name: &str, added: &str, compact: &str) -> Option<&'static str> {
    let lower = added.to_ascii_lowercase();
    if compact.contains("ignore_errors=true") {
        return Some("switches the type checker's errors off");
    }
    if compact.contains("ignore=[\"all\"]") || compact.contains("extend-ignore=[\"all\"]") {
        return Some("ignores every lint rule");
    }
    if compact.contains("informational:true") {
        return Some("makes a coverage check informational (it can no longer fail)");
    }
    if compact.contains("continue-on-error:true") {
        return Some("lets a failing CI step pass (continue-on-error)");
    }
    if compact.contains("allow_failure:true") {
        return Some("lets a failing CI job pass (allow_failure)");
    }
    const CHECKS: &[&str] = &[
        "test", "pytest", "jest", "vitest", "lint", "eslint", "ruff", "mypy", "clippy", "check",
        "audit", "coverage", "tsc", "rspec", "phpunit",
    ];
    let build_file = name == "makefile"
        || name == "Makefile"
        || name == "GNUmakefile"
        || name == "justfile"
        || name == "package.json"
        || name == "tox.ini"
        || name == "noxfile.py"
        || name == "Jenkinsfile"
        || name.ends_with(".yml")
        || name.ends_with(".yaml");
    let swallowed = build_file
        && lower.lines().any(|l| {
            let l = l.trim();
            // `test -f x || true` is the shell's own test, not a test suite.
            if l.starts_with("test -") || l.starts_with("[ ") {
                return false;
            }
            (l.contains("|| true") || l.contains("|| exit 0") || l.contains("||true"))
                && CHECKS.iter().any(|c| {
                    l.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '-' || ch == '_'))
                        .any(|w| w == *c)
                })
        });
    if swallowed {
        return Some("makes a failing test or check pass (|| true)");
    }
    if (name.starts_with("pytest")
        || name == "setup.cfg"
        || name == "pyproject.toml"
        || name == "tox.ini")
        && lower.lines().any(|l| {
            l.contains("addopts")
                && (l.contains("--deselect") || l.contains("-k not") || l.contains("-k \"not"))
        })
    {
        return Some("deselects tests for every run");
    }
    if name == "deny.toml"
        && (compact.contains("vulnerability=\"allow\"")
            || compact.contains("vulnerability=\"warn\""))
    {
        return Some("allows known vulnerabilities (cargo-deny)");
    }
    if compact.contains("\"allowlist\":[\"ghsa-")
        || compact.contains("\"allowlist\":[\"cve-")
        || compact.contains("ignore=[\"rustsec-")
        || compact.contains("--ignore-vuln")
        || compact.contains("\"ignore\":[\"ghsa-")
    {
        return Some("allowlists security advisories instead of fixing them");
    }
    None
}

/// A skip marker written into a test file (or beside Rust's `#[test]`): what it skips, and the
/// target (the test's name when it can be read).
fn test_skipped(
    path: &Path,
    name: &str,
    text: &str,
    diff: bool,
    added: &str,
) -> Option<(String, String)> {
    let test_file = name.contains("test")
        || name.contains("spec")
        || path.components().any(|c| {
            matches!(
                c.as_os_str().to_str(),
                Some("tests" | "test" | "__tests__" | "spec")
            )
        });
    const SKIPS: &[&str] = &[
        "@pytest.mark.skip",
        "@unittest.skip",
        "pytest.skip(",
        "it.skip(",
        "describe.skip(",
        "test.skip(",
        "xit(",
        "xdescribe(",
        "#[ignore]",
        "#[ignore =",
        "#[ignore=",
        "t.Skip(",
        "@Disabled",
        "@Ignore",
        // RSpec without parentheses, expected failures, a panic made the expectation.
        "xit \"",
        "xit '",
        "xdescribe \"",
        "xdescribe '",
        "xcontext \"",
        "xspecify \"",
        "@pytest.mark.xfail",
        "it.failing(",
        "test.failing(",
        "#[should_panic]",
        "[Ignore]",
        // ExUnit's tags, xUnit's skip reason.
        "@tag :skip",
        "@moduletag :skip",
        "(Skip = \"",
        "(Skip=\"",
    ];
    // Rust keeps unit tests beside the code: a marker next to `#[test]` skips one.
    let rust_tests = name.ends_with(".rs") && text.contains("#[test]");
    if !(test_file || rust_tests) || !SKIPS.iter().any(|t| added.contains(t)) {
        return None;
    }
    // The test's name is part of the target: "skip test_export_pdf on macOS" authorises
    // that one.
    Some(match skipped_test(text, diff, SKIPS) {
        Some(test) => (format!("skips a test ({test})"), format!("skip {test}")),
        None => ("skips a test".to_string(), "skip".to_string()),
    })
}

/// The name of the first test a skip marker written applies to: the marker's own line
/// (`it.skip('exports a PDF'`) or the next lines' definition (`def test_export_pdf`,
/// `fn parses_dates`, `func TestExport`, `void exportsPdf(`). A diff's removed lines are not
/// in the file.
fn skipped_test(text: &str, diff: bool, markers: &[&str]) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !diff || !(l.starts_with('-') || l.starts_with("@@") || l.starts_with("+++")))
        .map(|l| if diff && !l.is_empty() { &l[1..] } else { l })
        .collect();
    let at = lines
        .iter()
        .position(|l| markers.iter().any(|m| l.contains(m)))?;
    let ident = |s: &str| -> Option<String> {
        let w: String = s
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        (w.len() >= 3).then_some(w)
    };
    for l in lines.iter().skip(at).take(6) {
        let t = l.trim();
        for key in ["async def ", "def ", "pub fn ", "fn ", "func ", "void "] {
            if let Some(i) = t.find(key)
                && (i == 0 || t[..i].ends_with(' '))
                && let Some(name) = ident(&t[i + key.len()..])
            {
                return Some(name);
            }
        }
        for key in [
            "it.skip(",
            "test.skip(",
            "describe.skip(",
            "xit(",
            "xdescribe(",
        ] {
            if let Some(i) = t.find(key) {
                let rest = t[i + key.len()..].trim_start_matches(['\'', '"', '`']);
                let name: String = rest
                    .chars()
                    .take_while(|c| !matches!(c, '\'' | '"' | '`'))
                    .collect();
                if !name.trim().is_empty() {
                    return Some(name.trim().replace(' ', "-"));
                }
            }
        }
    }
    None
}

/// Tests taken out of every run in a test runner's or build's configuration: PHPUnit's or
/// Surefire's `<exclude>`, Jest's `testPathIgnorePatterns`, Playwright's `testIgnore`, pytest's
/// `--ignore` and `collect_ignore`, RSpec's `--exclude-pattern`, Gradle's test `exclude`, test
/// runs skipped (`skipTests`, `maven.test.skip`) or their failures ignored
/// (`testFailureIgnore`, `ignoreFailures`).
fn tests_excluded(name: &str, added: &str, compact: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    let runner_config = name.starts_with("phpunit.xml")
        || name == "pom.xml"
        || name.starts_with("jest.config")
        || name.starts_with("vitest.config")
        || name.starts_with("playwright.config")
        || name == "package.json"
        || name == "build.gradle"
        || name == "build.gradle.kts"
        || name == "conftest.py"
        || name == ".rspec"
        || name == "pytest.ini"
        || name == "setup.cfg"
        || name == "pyproject.toml"
        || name == "tox.ini";
    if !runner_config {
        return None;
    }
    const SKIPPED: &[&str] = &[
        "<skiptests>true",
        "<maven.test.skip>true",
        "<testfailureignore>true",
        "ignorefailures=true",
        "ignorefailures.set(true)",
    ];
    if SKIPPED.iter().any(|k| compact.contains(k)) {
        return Some("skips the test run or ignores its failures");
    }
    const EXCLUDED: &[&str] = &[
        "testpathignorepatterns",
        "testignore",
        "--ignore=",
        "--ignore-glob",
        "collect_ignore",
        "--exclude-pattern",
    ];
    let xml_exclude = (name.starts_with("phpunit.xml") || name == "pom.xml")
        && (compact.contains("<exclude>") || compact.contains("<excludegroups>"));
    // Gradle: a test filter or a path glob excluded (`exclude '**/SlowTest*'`), not a
    // dependency's `exclude group: …`.
    let gradle_exclude = name.starts_with("build.gradle")
        && added.lines().any(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("excludetestsmatching") || (l.contains("exclude") && l.contains("**"))
        });
    if xml_exclude || gradle_exclude || EXCLUDED.iter().any(|k| compact.contains(k)) {
        return Some("excludes tests from every run");
    }
    None
}

/// The first line written to a CI pipeline that prints a secret into the job's log: an `echo`
/// or `printf` of `${{ secrets.… }}` or of a variable named like a secret ([`secret_var`]:
/// `$AWS_SECRET_ACCESS_KEY`, `$NPM_TOKEN`), unless its output goes to a file or into another program (`| docker login
/// --password-stdin`) rather than the log. Encoded (`| base64`) it is still printed, and the
/// CI's masking of secret values no longer recognises it.
fn prints_ci_secret<'a>(path: &str, added: &'a str) -> Option<&'a str> {
    if !runs_later(path) {
        return None;
    }
    // `${{ secrets.X }}`, or a variable whose name says it holds a secret ([`secret_var`]).
    let secret_ref = |l: &str| {
        l.contains("secrets.")
            || l.match_indices('$')
                .any(|(i, _)| secret_var(&l[i..]).is_some())
    };
    const ENCODERS: &[&str] = &[
        "base64", "xxd", "od ", "rev", "tr ", "sed ", "cut ", "tee", "cat",
    ];
    added.lines().map(str::trim).find(|l| {
        // What the echo or printf prints: the rest of the line after it.
        let Some(printed) = ["echo ", "printf "]
            .iter()
            .filter_map(|p| l.find(p).map(|i| &l[i + p.len()..]))
            .next()
        else {
            return false;
        };
        let masked = l.contains("::add-mask::");
        let to_file = printed.contains('>');
        let piped_on = printed.split('|').skip(1).any(|p| {
            let p = p.trim();
            !p.is_empty() && !ENCODERS.iter().any(|e| p.starts_with(e))
        }) && !printed.contains("$(");
        !masked && !to_file && !piped_on && secret_ref(printed)
    })
}

/// A path shown relative to nothing in particular (the file name and its parent).
fn home_less(p: &Path) -> String {
    let parts: Vec<&str> = p.iter().filter_map(|c| c.to_str()).collect();
    parts[parts.len().saturating_sub(2)..].join("/")
}

/// Coverage and quality thresholds (`fail_under`, `--cov-fail-under`, jest's
/// `coverageThreshold` keys, `minimum_coverage`): set to 0 (any threshold key of a coverage
/// config, `fail_under` anywhere), or lowered in a diff: the new value.
fn threshold_lowered(text: &str, diff: bool, added: &str, coverage_config: bool) -> Option<f64> {
    const KEYS: &[&str] = &[
        "fail_under",
        "fail-under",
        "minimum_coverage",
        "coverage_threshold",
        "branches",
        "lines",
        "functions",
        "statements",
        "threshold",
        // JaCoCo's limits (Gradle `minimum = "0.80".toBigDecimal()`, Maven `<minimum>0.80<`).
        "minimum",
    ];
    let number_after = |line: &str, key: &str| -> Option<f64> {
        let i = line.find(key)?;
        let rest = &line[i + key.len()..];
        let rest = rest.trim_start_matches(['"', '\'', ' ', ':', '=', '>']);
        let n: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        n.parse().ok()
    };
    let keyed = |line: &str| {
        KEYS.iter()
            .find_map(|k| number_after(line, k).map(|n| (*k, n)))
    };
    if diff {
        let removed: Vec<(&str, f64)> = text
            .lines()
            .filter(|l| l.starts_with('-') && !l.starts_with("---"))
            .filter_map(|l| keyed(&l[1..]))
            .collect();
        return added
            .lines()
            .filter_map(keyed)
            .find(|(k, n)| removed.iter().any(|(rk, rn)| rk == k && n < rn))
            .map(|(_, n)| n);
    }
    let keys: &[&str] = if coverage_config {
        KEYS
    } else {
        &["fail_under", "fail-under", "minimum_coverage"]
    };
    added
        .lines()
        .any(|l| {
            keys.iter().any(|k| {
                l.match_indices(k)
                    .any(|(i, _)| number_after(&l[i..], k) == Some(0.0))
            })
        })
        .then_some(0.0)
}

/// MCP tools that publish or merge, dismiss alerts, or bind cluster roles.
pub(super) fn mcp_overreach(who: &str, words: &[&str], compact: &str, out: &mut Vec<Signal>) {
    let any = |list: &[&str]| words.iter().any(|w| list.contains(w));
    if any(&["merge"]) && (any(&["pull", "pr", "request"]) || compact.contains("pull_number")) {
        out.push(sig(
            Category::Publish,
            Severity::High,
            format!("{who} merges a pull request"),
            "merge",
        ));
    } else if words.iter().any(|w| w.starts_with("merge")) {
        // A tool named for a merge merges, whatever the server calls the rest (`merge_branch`,
        // `mergeRequest`, `merge_changes`).
        out.push(sig(
            Category::Publish,
            Severity::High,
            format!("{who} merges (its name says so)"),
            "merge",
        ));
    }
    if any(&["release", "publish"])
        && any(&["create", "publish", "new"])
        && !compact.contains("\"draft\":true")
    {
        out.push(sig(
            Category::Publish,
            Severity::High,
            format!("{who} publishes a release"),
            "release",
        ));
    }
    if any(&["alert", "alerts"])
        && (compact.contains("dismissed") || compact.contains("\"resolved\""))
    {
        out.push(sig(
            Category::SafeguardBypass,
            Severity::High,
            format!("{who} dismisses security alerts"),
            "dismiss alerts",
        ));
    }
    // A binding made through a tool named for it (`create_binding`, `add_iam_policy_binding`,
    // `bind_role`) grants what the binding names, as a manifest of one would.
    let named_binding = words
        .iter()
        .any(|w| w.ends_with("binding") || *w == "bind" || w.starts_with("iam"))
        && words.iter().any(|w| {
            [
                "create", "add", "apply", "set", "update", "patch", "put", "bind", "attach",
                "assign",
            ]
            .iter()
            .any(|v| w.starts_with(v))
        });
    if compact.contains("clusterrolebinding")
        || compact.contains("\"kind\":\"rolebinding\"")
        || named_binding
    {
        let admin = compact.contains("cluster-admin")
            || compact.contains("\"admin\"")
            || compact.contains("roles/owner")
            || compact.contains("roles/editor");
        out.push(sig(
            Category::Privilege,
            if admin {
                Severity::Critical
            } else {
                Severity::High
            },
            format!(
                "{who} binds a cluster role{}",
                if admin { " (admin)" } else { "" }
            ),
            "role binding",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::{SedEdit, sed_edit};

    #[test]
    fn sed_commands_are_read_behind_addresses_with_any_delimiter_and_escapes() {
        let sub = |pattern, replacement| {
            Some(SedEdit::Substitute {
                pattern,
                replacement,
            })
        };
        assert_eq!(sed_edit("s/a/b/g"), sub("a", "b"));
        assert_eq!(sed_edit(" /lint/s|x\\|y|# z| "), sub("x\\|y", "# z"));
        assert_eq!(sed_edit("3,$s/a\\/b/c/"), sub("a\\/b", "c"));
        assert_eq!(sed_edit("/run: npm run lint/d"), Some(SedEdit::Delete));
        assert_eq!(sed_edit("/a/,/b/ d"), Some(SedEdit::Delete));
        // A deletion without an address would empty the file; not a step switched off.
        assert_eq!(sed_edit("d"), None);
        assert_eq!(sed_edit("p"), None);
        assert_eq!(sed_edit("s/unterminated"), None);
    }
}

//! What a file write does, in the mandate's terms, read from its change (a diff's `+`/`-`
//! lines, or a whole new file as added).
//!
//! Two kinds of write do an act here: a CI pipeline changed is a `ci-change` on the pipeline's
//! name and the jobs the change touches (`remove the test-node16 job`); a dependency manifest
//! whose every changed line is a dependency is an `install` of each package at its new version
//! (`bump serde to 1.0.203`). A manifest change that also touches anything else (a script, a
//! source, a registry) does no act: the rule that asks for review decides. Every other effect of
//! a write (a test expectation, an environment overlay, an access binding, a migration) reaches
//! the mandate as a risk signal, matched in `crate::decision::mandate`.

use super::Act;
use super::acts::Done;

/// The lines of a write's change, in order, each with its mark: `+` added, `-` removed, ` `
/// unchanged (a diff's context). A whole-file write (no diff) is every line added.
fn lines<'a>(content: Option<&'a str>, diff: Option<&'a str>) -> Vec<(char, &'a str)> {
    match (diff, content) {
        (Some(d), _) => d
            .lines()
            .filter(|l| !l.starts_with("+++") && !l.starts_with("---") && !l.starts_with("@@"))
            .filter_map(|l| {
                let mark = l.chars().next()?;
                matches!(mark, '+' | '-' | ' ').then(|| (mark, &l[1..]))
            })
            .collect(),
        (None, Some(c)) => c.lines().map(|l| ('+', l)).collect(),
        (None, None) => Vec::new(),
    }
}

/// The acts of a write of `path` (`content`: the new text; `diff`: the change, when known).
pub fn of_write(path: &str, content: Option<&str>, diff: Option<&str>) -> Vec<Done> {
    let p = path.to_ascii_lowercase();
    let name = p.rsplit('/').next().unwrap_or(&p).to_string();
    let ls = lines(content, diff);
    if crate::signals::ci_file(&p) {
        return vec![ci_change(path, &name, &ls, content)];
    }
    if let Some(kind) = manifest(&name) {
        return installs(path, kind, &ls);
    }
    Vec::new()
}

/// A CI pipeline changed: its name (`tag-release` for `tag-release.yml`), every job whose
/// lines the change touches (the nearest job key above a changed line) and every environment
/// its changed lines name.
fn ci_change(path: &str, name: &str, ls: &[(char, &str)], content: Option<&str>) -> Done {
    let stem = name
        .trim_start_matches('.')
        .split('.')
        .next()
        .unwrap_or(name)
        .to_string();
    let gitlab = name.ends_with(".gitlab-ci.yml");
    let mut targets = vec![stem];
    let mut job: Option<&str> = None;
    for (mark, l) in ls {
        let indent = l.len() - l.trim_start().len();
        let key = l.trim().strip_suffix(':').filter(|k| {
            !k.is_empty()
                && !k.starts_with('-')
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        });
        // A GitHub job sits under `jobs:` (two spaces); a GitLab job at the top level.
        if let Some(k) = key
            && ((gitlab && indent == 0) || (!gitlab && indent == 2))
        {
            job = Some(k);
        }
        // A hunk that starts below its job's key: the job the whole file puts the line in.
        let job_here = job.or_else(|| {
            (*mark == '+')
                .then(|| content.and_then(|c| job_in(c, l, gitlab)))
                .flatten()
        });
        if *mark != ' '
            && let Some(j) = job_here
            && !targets.iter().any(|t| t == j)
        {
            targets.push(j.to_string());
        }
        // The environments the changed lines deploy to (`environment: production`,
        // `--env staging`): a request naming another is for another pipeline change.
        if *mark != ' ' {
            for w in l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                let env = super::target::tokens_of_word(w)
                    .iter()
                    .any(|t| matches!(t, super::target::Token::Env(_)));
                if env && !targets.iter().any(|t| t == w) {
                    targets.push(w.to_string());
                }
            }
        }
    }
    Done {
        act: Act::CiChange,
        targets,
        by: format!("the change to {path}"),
    }
}

/// The job a line of a pipeline's file lies in: the nearest job key above it (GitLab's at the
/// top level, GitHub's under `jobs:`).
fn job_in<'a>(content: &'a str, line: &str, gitlab: bool) -> Option<&'a str> {
    let ls: Vec<&str> = content.lines().collect();
    let at = ls.iter().position(|l| *l == line)?;
    ls[..at].iter().rev().find_map(|l| {
        let indent = l.len() - l.trim_start().len();
        let key = l.trim().strip_suffix(':')?;
        let job = !key.is_empty()
            && !key.starts_with('-')
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        (job && ((gitlab && indent == 0) || (!gitlab && indent == 2))).then_some(key)
    })
}

/// The kinds of dependency manifest.
#[derive(Clone, Copy, PartialEq)]
enum Manifest {
    Requirements,
    Cargo,
    PackageJson,
    Gemfile,
    GoMod,
}

fn manifest(name: &str) -> Option<Manifest> {
    Some(match name {
        "cargo.toml" => Manifest::Cargo,
        "package.json" => Manifest::PackageJson,
        "gemfile" => Manifest::Gemfile,
        "go.mod" => Manifest::GoMod,
        n if n.starts_with("requirements") && n.ends_with(".txt") => Manifest::Requirements,
        _ => return None,
    })
}

/// Whether a value is a version or a version range (`1.0.203`, `^4.19.2`, `~> 7.1`).
fn versionish(v: &str) -> bool {
    let v = v.trim_start_matches(['^', '~', '>', '<', '=', ' ', 'v']);
    v.starts_with(|c: char| c.is_ascii_digit())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '*' | ' '))
}

/// The package and version a manifest line names, if it is a dependency line.
fn dependency(kind: Manifest, line: &str) -> Option<(String, String)> {
    let l = line.trim();
    // A trailing comment (`// indirect`, `# pinned for CVE-…`) says nothing of the version.
    let l = l.split(" //").next().unwrap_or(l);
    let l = l
        .split(" #")
        .next()
        .unwrap_or(l)
        .trim()
        .trim_end_matches(',');
    let clean = |v: &str| {
        v.trim()
            .trim_matches(['"', '\''])
            .trim_start_matches(['^', '~', '>', '<', '=', ' ', 'v'])
            .to_string()
    };
    let (name, version) = match kind {
        Manifest::Requirements => {
            let i = l.find(['=', '>', '<', '~', '!'])?;
            let (n, v) = l.split_at(i);
            (n.trim().to_string(), clean(v.split(';').next()?))
        }
        Manifest::Cargo => {
            let (n, v) = l.split_once('=')?;
            let v = v.trim();
            let v = if v.starts_with('{') {
                // `{ version = "1.0.203", features = […] }`; a git or path source is no version.
                if v.contains("git") || v.contains("path") || v.contains("registry") {
                    return None;
                }
                let rest = v.split("version").nth(1)?;
                rest.trim_start_matches([' ', '=']).split('"').nth(1)?
            } else {
                v
            };
            (n.trim().to_string(), clean(v))
        }
        Manifest::PackageJson => {
            let (n, v) = l.split_once(':')?;
            (n.trim().trim_matches('"').to_string(), clean(v))
        }
        Manifest::Gemfile => {
            let rest = l.strip_prefix("gem ")?;
            let mut parts = rest.split(',');
            let n = parts.next()?.trim().trim_matches(['"', '\'']).to_string();
            (n, clean(parts.next()?))
        }
        Manifest::GoMod => {
            let l = l.strip_prefix("require ").unwrap_or(l);
            let (n, v) = l.split_once(' ')?;
            (n.trim().to_string(), clean(v))
        }
    };
    const NOT_PACKAGES: &[&str] = &["version", "edition", "rust-version", "go", "node", "npm"];
    let ok = !name.is_empty()
        && !NOT_PACKAGES.contains(&name.as_str())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@' | '/' | '['))
        && versionish(&version);
    ok.then_some((name, version))
}

/// Whether a changed manifest line says nothing by itself: blank, a comment, a brace.
fn structural(line: &str) -> bool {
    let l = line.trim();
    l.is_empty()
        || l.starts_with('#')
        || l.starts_with("//")
        || matches!(l, "{" | "}" | "}," | "[" | "]" | "]," | ")" | "(")
}

/// The installs a manifest's change does: one per package with an added line, at its new
/// version; none at all when a changed line is anything else than a dependency (a removed
/// dependency installs nothing, and is no reason to give up).
fn installs(path: &str, kind: Manifest, ls: &[(char, &str)]) -> Vec<Done> {
    let mut out = Vec::new();
    // Go's `// indirect` requirements move with the direct ones: a new version of one already
    // required is the bump's, not an act of its own (a new module still is).
    let removed: Vec<String> = ls
        .iter()
        .filter(|(m, _)| *m == '-')
        .filter_map(|(_, l)| dependency(kind, l).map(|(n, _)| n))
        .collect();
    let moved_along = |l: &str| {
        kind == Manifest::GoMod
            && l.contains("// indirect")
            && dependency(kind, l).is_some_and(|(n, _)| removed.contains(&n))
    };
    for (mark, l) in ls
        .iter()
        .filter(|(m, l)| *m != ' ' && !structural(l) && !moved_along(l))
    {
        match (dependency(kind, l), mark) {
            (Some((name, version)), '+') => out.push(Done {
                act: Act::Install,
                targets: vec![name, version],
                by: format!("the change to {path}"),
            }),
            (Some(_), _) => {}
            (None, _) => return Vec::new(),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(d: &[Done]) -> Vec<Vec<String>> {
        d.iter().map(|d| d.targets.clone()).collect()
    }

    #[test]
    fn a_ci_change_names_the_pipeline_and_the_jobs_it_touches() {
        let diff = "--- a/.github/workflows/test.yml\n+++ b/.github/workflows/test.yml\n@@ -1,9 +1,3 @@\n jobs:\n   lint:\n     runs-on: ubuntu-latest\n-  test-node16:\n-    runs-on: ubuntu-latest\n-    steps:\n-      - run: npm test\n   build:\n";
        let d = of_write("/w/.github/workflows/test.yml", None, Some(diff));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].act, Act::CiChange);
        assert_eq!(d[0].targets, ["test", "test-node16"]);
        let gl = of_write(
            "/w/.gitlab-ci.yml",
            None,
            Some("@@ -1,3 +1,4 @@\n npm_audit:\n   stage: test\n+  allow_failure: true\n"),
        );
        assert_eq!(gl[0].targets, ["gitlab-ci", "npm_audit"]);
        assert!(of_write("/w/src/main.rs", Some("fn main() {}"), None).is_empty());
        // The environment a changed line deploys to; an unchanged one names nothing.
        let env = of_write(
            "/w/.github/workflows/deploy.yml",
            None,
            Some(
                "@@ -1,4 +1,4 @@
 jobs:
   deploy:
-    environment: staging
+    environment: production
     runs-on: ubuntu-latest
",
            ),
        );
        assert_eq!(env[0].targets, ["deploy", "staging", "production"]);
        let same = of_write(
            "/w/.github/workflows/deploy.yml",
            None,
            Some(
                "@@ -1,4 +1,4 @@
 jobs:
   deploy:
     environment: production
-    runs-on: ubuntu-22.04
+    runs-on: ubuntu-24.04
",
            ),
        );
        assert_eq!(same[0].targets, ["deploy"]);
    }

    #[test]
    fn a_manifest_of_dependencies_only_installs_each_at_its_new_version() {
        let diff = "@@ -4,8 +4,8 @@\n [dependencies]\n-serde = { version = \"1.0.197\", features = [\"derive\"] }\n-serde_json = \"1.0.114\"\n+serde = { version = \"1.0.203\", features = [\"derive\"] }\n+serde_json = \"1.0.117\"\n tokio = \"1.37\"\n";
        let d = of_write("/w/Cargo.toml", None, Some(diff));
        assert_eq!(
            targets(&d),
            [vec!["serde", "1.0.203"], vec!["serde_json", "1.0.117"]]
        );
        assert!(d.iter().all(|d| d.act == Act::Install));
        let req = of_write(
            "/w/requirements.txt",
            None,
            Some("@@ -1,2 +1,2 @@\n-requests==2.31.0\n+requests==2.32.3\n flask==3.0.3\n"),
        );
        assert_eq!(targets(&req), [vec!["requests", "2.32.3"]]);
        let pkg = of_write(
            "/w/package.json",
            None,
            Some(
                "@@ -3,3 +3,3 @@\n   \"dependencies\": {\n-    \"express\": \"^4.18.2\",\n+    \"express\": \"^4.19.2\",\n",
            ),
        );
        assert_eq!(targets(&pkg), [vec!["express", "4.19.2"]]);
        // A git source, a script or anything else changed: no act (review decides).
        let git = "@@ -1,2 +1,2 @@\n-serde_json = \"1.0.114\"\n+serde_json = { git = \"https://github.com/x/json\" }\n";
        assert!(of_write("/w/Cargo.toml", None, Some(git)).is_empty());
        let gomod = "@@ -1,4 +1,4 @@\n-\tgolang.org/x/net v0.19.0\n+\tgolang.org/x/net v0.23.0\n-\tgolang.org/x/sys v0.15.0 // indirect\n+\tgolang.org/x/sys v0.18.0 // indirect\n";
        assert_eq!(
            targets(&of_write("/w/go.mod", None, Some(gomod))),
            [vec!["golang.org/x/net", "0.23.0"]]
        );
        let script = "@@ -1,2 +1,3 @@\n   \"scripts\": {\n+    \"prepare\": \"husky\",\n";
        assert!(of_write("/w/package.json", None, Some(script)).is_empty());
    }
}

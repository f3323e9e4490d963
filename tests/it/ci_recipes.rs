//! The CI recipes in integrations/ci/ (and the README's copy of the GitHub one): they parse as
//! YAML, every `guardian …` and `local-model.sh …` command in them exists with the flags used,
//! and their agent step runs for real here, through `guardian run`, with the fake `claude`
//! (tests/fixtures/agents/claude) standing in for Claude Code.

use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

const GUARDIAN: &str = env!("CARGO_BIN_EXE_guardian");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load(name: &str) -> (String, Yaml) {
    let text = std::fs::read_to_string(root().join("integrations/ci").join(name)).expect("recipe");
    let mut docs = YamlLoader::load_from_str(&text).expect("valid YAML");
    assert_eq!(docs.len(), 1, "{name}: one document");
    (text, docs.remove(0))
}

/// The shell commands of a `run:` script or a GitLab `script:` list, one string each, with
/// backslash-continued lines joined.
fn commands(script: &str) -> Vec<String> {
    script
        .replace("\\\n", " ")
        .lines()
        .flat_map(|l| {
            l.split("||")
                .flat_map(|p| p.split("&&"))
                .flat_map(|p| p.split(';'))
                .map(|p| p.trim().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.is_empty())
        .collect()
}

/// Shell words, honouring double and single quotes (enough for the recipes).
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut in_word = false;
    for c in cmd.chars() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (_, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// Checks one `guardian …` command line against the binary's own `--help`.
fn check_guardian_command(w: &[String], ctx: &str) {
    let help = |path: &[&str]| {
        let out = Command::new(GUARDIAN)
            .args(path)
            .arg("--help")
            .output()
            .expect("guardian --help");
        assert!(
            out.status.success(),
            "{ctx}: `guardian {path:?}` is not a command"
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let args: Vec<&str> = w[1..].iter().map(String::as_str).collect();
    if args == ["--version"] {
        return;
    }
    // The subcommand, and its own subcommand when it has them (`audit verify`).
    let bare: Vec<&str> = args
        .iter()
        .take_while(|a| **a != "--")
        .filter(|a| !a.starts_with('-'))
        .copied()
        .collect();
    let mut path: Vec<&str> = bare.iter().take(1).copied().collect();
    if !path.is_empty() && help(&path).contains("Commands:") {
        if let Some(sub) = bare.get(1) {
            path.push(sub);
        }
    }
    assert!(!path.is_empty(), "{ctx}: no guardian subcommand in {w:?}");
    let text = help(&path);
    for flag in args.iter().take_while(|a| **a != "--") {
        if flag.starts_with("--") {
            let name = flag.split('=').next().unwrap_or(flag);
            assert!(
                text.contains(name),
                "{ctx}: `guardian {}` has no {name}",
                path.join(" ")
            );
        }
    }
}

/// Checks every guardian and local-model.sh command of a script.
fn check_script(script: &str, ctx: &str) -> usize {
    let usage = std::fs::read_to_string(root().join("scripts/local-model.sh")).expect("script");
    let mut checked = 0;
    for cmd in commands(script) {
        let w = words(&cmd);
        let Some(first) = w.first() else { continue };
        let w: Vec<String> = if first == "command" || first == "nohup" || first == "if" {
            w[1..].to_vec()
        } else {
            w
        };
        let Some(program) = w.first() else { continue };
        if program == "guardian" || program.ends_with("/bin/guardian") {
            check_guardian_command(&w, ctx);
            checked += 1;
        } else if program.ends_with("scripts/local-model.sh") {
            let sub = w.get(1).map(String::as_str).unwrap_or("");
            assert!(
                ["install", "serve"].contains(&sub),
                "{ctx}: local-model.sh {sub}"
            );
            for flag in w.iter().skip(2).filter(|a| a.starts_with("--")) {
                assert!(
                    usage.contains(&format!("{flag})")),
                    "{ctx}: local-model.sh has no {flag}"
                );
            }
            checked += 1;
        }
    }
    checked
}

fn github_steps(doc: &Yaml) -> Vec<Yaml> {
    doc["jobs"]["agent"]["steps"]
        .as_vec()
        .expect("jobs.agent.steps")
        .clone()
}

#[test]
fn the_github_workflow_uses_commands_that_exist_and_the_readme_shows_it() {
    let (text, doc) = load("github-actions.yml");
    assert!(
        doc["on"]["workflow_dispatch"]["inputs"]["prompt"]
            .as_hash()
            .is_some()
    );
    let steps = github_steps(&doc);
    let mut checked = 0;
    for s in &steps {
        if let Some(run) = s["run"].as_str() {
            checked += check_script(run, s["name"].as_str().unwrap_or("a step"));
        }
    }
    // --version, run, audit verify, local-model.sh install and serve.
    assert!(checked >= 5, "{checked}");
    let uses: Vec<&str> = steps.iter().filter_map(|s| s["uses"].as_str()).collect();
    for action in [
        "actions/checkout@v4",
        "actions/cache@v4",
        "actions/upload-artifact@v4",
    ] {
        assert!(uses.contains(&action), "{action}");
    }
    let upload = steps
        .iter()
        .find(|s| s["uses"].as_str() == Some("actions/upload-artifact@v4"))
        .expect("upload step");
    assert_eq!(upload["if"].as_str(), Some("always()"));
    assert_eq!(
        upload["with"]["path"].as_str(),
        Some(".github/guardian-audit.jsonl")
    );
    let ci_doc = std::fs::read_to_string(root().join("docs/ci.md")).expect("docs/ci.md");
    assert!(
        ci_doc.contains(&format!("```yaml\n{text}```")),
        "docs/ci.md must show integrations/ci/github-actions.yml as it is"
    );
    // The README's CI section shows the recipe's agent step, as it is in the workflow.
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let i = text
        .find("      - name: Run the agent behind guardian")
        .expect("the agent step");
    let j = text
        .find("      - name: Verify the audit log")
        .expect("the next step");
    assert!(
        readme.contains(&format!("```yaml\n{}```", &text[i..j])),
        "the README's CI section must show the workflow's agent step as it is"
    );
}

#[test]
fn the_gitlab_job_uses_commands_that_exist() {
    let (_, doc) = load("gitlab-ci.yml");
    let job = &doc["agent"];
    let mut checked = 0;
    for key in ["before_script", "script", "after_script"] {
        for line in job[key].as_vec().expect(key) {
            checked += check_script(line.as_str().expect("a script line"), key);
        }
    }
    assert!(checked >= 5, "{checked}");
    let artifacts: Vec<&str> = job["artifacts"]["paths"]
        .as_vec()
        .expect("artifacts")
        .iter()
        .filter_map(Yaml::as_str)
        .collect();
    assert!(artifacts.contains(&".gitlab/guardian-audit.jsonl"));
    assert_eq!(job["artifacts"]["when"].as_str(), Some("always"));
}

/// A checkout with the recipe's config in `dir` (`.github` or `.gitlab`), PATH with the fake
/// `claude` and this guardian, and a fake-agent script: a read-only git command (allowed by the
/// default policy) and a force push to main (denied).
fn workspace(dir: &str) -> (tempfile::TempDir, Vec<(String, String)>) {
    let t = tempfile::tempdir().expect("tempdir");
    let conf = t.path().join("repo").join(dir);
    std::fs::create_dir_all(&conf).expect("mkdir");
    for f in ["guardian.toml", "guardian-api.toml"] {
        std::fs::copy(root().join("integrations/ci").join(f), conf.join(f)).expect("copy");
    }
    std::fs::create_dir_all(t.path().join("home")).expect("home");
    let script = t.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"calls": [{"tool_name": "Bash", "tool_input": {"command": "git status --short"}},
                      {"tool_name": "Bash", "tool_input": {"command": "git push --force origin main"}}]}"#,
    )
    .expect("script");
    let bin = Path::new(GUARDIAN).parent().expect("bin dir");
    let path = format!(
        "{}:{}:{}",
        root().join("tests/fixtures/agents").display(),
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = vec![
        ("PATH".into(), path),
        ("HOME".into(), t.path().join("home").display().to_string()),
        (
            "XDG_STATE_HOME".into(),
            t.path().join("state").display().to_string(),
        ),
        ("TMPDIR".into(), std::env::temp_dir().display().to_string()),
        ("FAKE_AGENT_SCRIPT".into(), script.display().to_string()),
        ("GUARDIAN_NO_LOCAL_MODEL".into(), "1".into()),
        ("REVIEWER_API_KEY".into(), String::new()),
    ];
    (t, env)
}

/// Runs a script as the CI runner would (`bash -eo pipefail`), in the checkout.
fn run_script(t: &Path, env: &[(String, String)], script: &str) -> std::process::Output {
    Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(t.join("repo"))
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("bash")
}

#[test]
fn the_github_agent_step_runs_through_guardian_run() {
    let (_, doc) = load("github-actions.yml");
    let steps = github_steps(&doc);
    let agent = steps
        .iter()
        .find(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("guardian run"))
        })
        .expect("the agent step");
    let verify = steps
        .iter()
        .find(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("guardian audit verify"))
        })
        .expect("the verify step");
    let (t, mut env) = workspace(".github");
    let summary = t.path().join("step-summary.md");
    env.push(("GITHUB_STEP_SUMMARY".into(), summary.display().to_string()));
    // The step's own env: the secret is a dummy, the prompt the workflow input.
    let step_env = agent["env"].as_hash().expect("step env");
    assert!(step_env.contains_key(&Yaml::String("PROMPT".into())));
    env.push(("PROMPT".into(), "check the status, then push".into()));
    env.push(("ANTHROPIC_API_KEY".into(), "dummy".into()));
    let out = run_script(t.path(), &env, agent["run"].as_str().expect("run"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // --fail-on-deny: the force push was denied, so the step fails (exit 3) and says why.
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(stdout.contains("call 1 Bash: allow"), "{stdout}\n{stderr}");
    assert!(stdout.contains("call 2 Bash: deny"), "{stdout}");
    assert!(
        stderr.contains("2 decisions in 1 sessions: 1 allowed, 1 denied"),
        "{stderr}"
    );
    let md = std::fs::read_to_string(&summary).expect("the job summary was written");
    assert!(md.contains("**1 denied**"), "{md}");
    assert!(t.path().join("repo/.github/guardian-audit.jsonl").is_file());
    // The verify step (run whatever the agent step did) passes on that log.
    let out = run_script(t.path(), &env, verify["run"].as_str().expect("run"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_gitlab_script_runs_through_guardian_run() {
    let (_, doc) = load("gitlab-ci.yml");
    let script: Vec<&str> = doc["agent"]["script"]
        .as_vec()
        .expect("script")
        .iter()
        .filter_map(Yaml::as_str)
        .collect();
    let (t, mut env) = workspace(".gitlab");
    env.push(("AGENT_PROMPT".into(), "check the status, then push".into()));
    let out = run_script(t.path(), &env, &script.join("\n"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("1 allowed, 1 denied"), "{stderr}");
    let md = std::fs::read_to_string(t.path().join("repo/guardian-summary.md")).expect("summary");
    assert!(md.contains("## guardian decisions"), "{md}");
    assert!(t.path().join("repo/.gitlab/guardian-audit.jsonl").is_file());
}

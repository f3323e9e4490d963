//! `guardian check`: one request through the pipeline without HTTP (exit 0 allow, 1 deny).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use guardian::Decision;
use guardian::request::ReviewRequest;

use super::{build, load};

/// `guardian check`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Config file (default: the embedded policies/default.toml, no reviewer).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// The command words of a shell action in the current directory.
    #[arg(last = true)]
    pub(crate) words: Vec<String>,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    check(a.config, a.words).await
}

pub(crate) async fn check(config: Option<PathBuf>, words: Vec<String>) -> anyhow::Result<ExitCode> {
    let cfg = load(config.as_ref())?;
    let req = if words.is_empty() {
        let mut body = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut body) {
            anyhow::bail!("guardian: cannot read stdin: {e}");
        }
        match guardian::mandate::request_from_json(&body) {
            Ok(r) => r,
            Err(e) => {
                let out = serde_json::json!({"error": {"field": e.field, "message": e.message}});
                println!("{out}");
                anyhow::bail!("guardian: bad request: {}: {}", e.field, e.message);
            }
        }
    } else {
        let cwd = std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string());
        let req = ReviewRequest::shell(command_line(&words), cwd);
        if let Err(e) = req.validate() {
            anyhow::bail!("guardian: bad request: {}: {}", e.field, e.message);
        }
        req
    };
    let guardian = build(cfg)?;
    let resp = guardian.review(req, "cli").await;
    match serde_json::to_string_pretty(&resp) {
        Ok(s) => println!("{s}"),
        Err(e) => {
            anyhow::bail!("guardian: cannot print the response: {e}");
        }
    }
    match resp.decision {
        Decision::Allow => Ok(ExitCode::SUCCESS),
        Decision::Deny => Ok(ExitCode::from(1)),
    }
}

/// The command line that `-- words…` stand for: one word is the whole line as written
/// (`-- 'git status && git push'`); several words are joined with spaces, and a word that holds
/// whitespace (or is empty) could only have been quoted, so it is quoted back:
/// `-- bash -c 'rm -rf /'` is reviewed as `bash -c 'rm -rf /'`, not `bash -c rm -rf /`, while
/// `-- git status '&&' git push` stays two commands.
pub(crate) fn command_line(words: &[String]) -> String {
    match words {
        [one] => one.clone(),
        _ => words
            .iter()
            .map(|w| {
                if w.is_empty() || w.chars().any(char::is_whitespace) {
                    guardian::normalize::shell::shell_quote(w)
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    }
}

//! `guardian-hook claude-code|codex [--server URL] [--timeout S] [--unreviewed deny|ask]`: the
//! command hook of `guardian hook …` in a small binary that links nothing but the forwarding
//! (no async runtime, no TLS, no allocator setup): hook JSON on stdin, the server's answer on
//! stdout (nothing for "no decision"), exit 2 with the reason on stderr whenever the server
//! cannot answer (a block). `http://` servers only; `guardian hook` also speaks `https://`.

use std::io::Read;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "guardian-hook",
    version,
    about = "guardian's command hook, small and fast"
)]
struct Args {
    /// The agent whose hook this is.
    #[arg(value_parser = ["claude-code", "codex"])]
    agent: String,
    /// The guardian server (http:// only).
    #[arg(long, default_value = "http://127.0.0.1:8700")]
    server: String,
    /// Seconds to wait for the answer, then block (exit 2).
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// What nothing could review becomes: deny (headless) or ask (the agent's own prompt).
    #[arg(long, value_parser = ["deny", "ask"])]
    unreviewed: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let block = |why: String| {
        eprintln!("guardian-hook: blocked because the guardian server could not decide: {why}");
        ExitCode::from(2)
    };
    let mut body = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut body) {
        return block(format!("cannot read the hook input: {e}"));
    }
    let mut url = format!(
        "{}/v1/hooks/{}",
        args.server.trim_end_matches('/'),
        args.agent
    );
    if let Some(mode) = &args.unreviewed {
        url.push_str(&format!("?unreviewed={mode}"));
    }
    let parsed = match url::Url::parse(&url) {
        Ok(u) if u.scheme() == "http" => u,
        Ok(_) => {
            return block(format!(
                "{url}: guardian-hook speaks http:// only (use `guardian hook` for https://)"
            ));
        }
        Err(e) => return block(format!("{url}: {e}")),
    };
    let token = std::env::var("GUARDIAN_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    let answer = match guardian::integrations::hook_client::forward_plain(
        &parsed,
        &body,
        token.as_deref(),
        std::time::Duration::from_secs(args.timeout),
    ) {
        Ok(a) => a,
        Err(e) => return block(e),
    };
    match guardian::integrations::hook_client::emit(&answer, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => block(e),
    }
}

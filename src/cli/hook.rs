//! `guardian hook`: forward one agent hook input to a running server (a failure blocks).

use super::*;

/// Forwards a hook input to the server and prints its answer. An empty answer (`{}`: no
/// decision) prints nothing, which every agent reads as "no objection". Any failure exits 2 with
/// the reason on stderr: a block.
pub(crate) fn forward_hook(args: &HookArgs, agent: &str) -> ExitCode {
    let block = |why: String| {
        eprintln!("guardian hook: blocked because the guardian server could not decide: {why}");
        ExitCode::from(2)
    };
    let mut body = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut body) {
        return block(format!("cannot read the hook input: {e}"));
    }
    let mut url = format!("{}/v1/hooks/{agent}", args.server.trim_end_matches('/'));
    if let Some(mode) = args.unreviewed {
        url.push_str(&format!("?unreviewed={}", mode.as_str()));
    }
    let token = guardian::transport::client_token();
    let text = match guardian::integrations::hook_client::forward(
        &url,
        body,
        token.as_deref(),
        std::time::Duration::from_secs(args.timeout),
    ) {
        Ok(t) => t,
        Err(e) => return block(e),
    };
    match guardian::integrations::hook_client::emit(&text, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => block(e),
    }
}

//! `guardian run`: one agent run behind guardian (the wiring is `guardian::integrations::run`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use guardian::integrations::Agent;

use super::local_model::use_local_model_if_running;
use super::{build, load};

/// `guardian run`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Config file (default: the embedded defaults, with the local model if it is running).
    /// With --server, only its [audit] path is read, for the summary.
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// The agent the command runs (auto: from the program's name: claude, codex, opencode;
    /// anything else is generic and only gets GUARDIAN_URL).
    #[arg(long, value_parser = run_agents(), default_value = "auto")]
    pub(crate) agent: RunAgent,
    /// Use this running guardian server instead of starting one.
    #[arg(long)]
    pub(crate) server: Option<String>,
    /// Exit 3 when the agent succeeded but guardian denied an action.
    #[arg(long)]
    pub(crate) fail_on_deny: bool,
    /// Also append the summary as Markdown to this file (in GitHub Actions:
    /// "$GITHUB_STEP_SUMMARY").
    #[arg(long)]
    pub(crate) summary: Option<PathBuf>,
    /// What this job may do whatever the prompt's words say, in the grant grammar (`publish
    /// npm:@acme/ui-kit`, `merge #88`, `no deploy production`); repeatable. Audited as the
    /// operator's; they widen nothing a deny rule or a critical signal forbids. Not with
    /// --server (declare them in that server's `[mandate] grants`).
    #[arg(long = "grant", value_name = "GRANT", conflicts_with = "server")]
    pub(crate) grants: Vec<String>,
    /// The agent's command.
    #[arg(last = true, required = true)]
    pub(crate) command: Vec<String>,
}

/// The config with the run's `--grant`s added to its `[mandate] grants`; a malformed one
/// stops the run before anything starts.
fn with_grants(mut cfg: guardian::Config, grants: &[String]) -> anyhow::Result<guardian::Config> {
    if let Err((i, e)) = guardian::mandate::declared(grants) {
        anyhow::bail!(
            "guardian run: --grant {}: {e}",
            grants.get(i).map_or("", String::as_str)
        );
    }
    cfg.mandate.grants.extend(grants.iter().cloned());
    Ok(cfg)
}

/// `guardian run --agent`.
#[derive(Clone, Copy)]
pub(crate) enum RunAgent {
    /// From the program's name.
    Auto,
    /// One of the agents.
    Agent(Agent),
    /// Any other program: GUARDIAN_URL only.
    Generic,
}

/// `auto`, every agent, `generic`.
fn run_agents() -> impl TypedValueParser<Value = RunAgent> {
    let mut values = vec![PossibleValue::new("auto").help("From the program's name")];
    values.extend(
        Agent::ALL
            .iter()
            .map(|a| PossibleValue::new(a.name()).help(a.info().title)),
    );
    values.push(PossibleValue::new("generic").help("Any other program: GUARDIAN_URL only"));
    PossibleValuesParser::new(values).try_map(|v| match v.as_str() {
        "auto" => Ok(RunAgent::Auto),
        "generic" => Ok(RunAgent::Generic),
        name => Agent::from_name(name)
            .map(RunAgent::Agent)
            .ok_or("not an agent"),
    })
}

/// A fresh bearer token: 32 random bytes, hex.
pub(crate) fn random_token() -> String {
    let bytes: Vec<u8> = (0..32).map(|_| fastrand::u8(..)).collect();
    hex::encode(bytes)
}

/// The exit code `guardian run --fail-on-deny` uses when the agent succeeded but an action was
/// denied.
pub(crate) const EXIT_DENIED: u8 = 3;

/// Runs the agent behind guardian.
pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    use guardian::integrations::run::{self as agent_run, Endpoint};
    let Some(program) = a.command.first() else {
        anyhow::bail!("guardian run: no agent command given after --");
    };
    let agent = match a.agent {
        RunAgent::Auto => Agent::detect(program),
        RunAgent::Agent(agent) => Some(agent),
        RunAgent::Generic => None,
    };
    let mut cfg = with_grants(load(a.config.as_ref())?, &a.grants)?;
    // Headless: nobody can answer a question, so what nothing could review is denied.
    cfg.hooks.unreviewed = guardian::config::Unreviewed::Deny;
    let audit_path = cfg.audit.path.clone();
    let start_seq = guardian::audit::last_seq(&audit_path).unwrap_or(0);
    let guardian_cmd = match std::env::current_exe() {
        Ok(p) => guardian::normalize::shell::shell_quote(&p.display().to_string()),
        Err(e) => {
            anyhow::bail!("guardian run: cannot find this program's own path: {e}");
        }
    };
    // The server: this run's own on a loopback port, or the one named.
    let (endpoint, server) = match &a.server {
        Some(url) => (
            Endpoint {
                url: url.trim_end_matches('/').to_string(),
                token: guardian::transport::client_token(),
                guardian: guardian_cmd,
            },
            None,
        ),
        None => {
            if a.config.is_none() {
                use_local_model_if_running(&mut cfg).await;
            }
            let token = (!cfg.auth.tokens.is_empty()).then(|| {
                use sha2::Digest as _;
                let t = random_token();
                cfg.auth.tokens.push(guardian::config::TokenConfig {
                    client: "guardian-run".into(),
                    sha256: hex::encode(sha2::Sha256::digest(t.as_bytes())),
                });
                t
            });
            let g = build(cfg)?;
            let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
                Ok(l) => l,
                Err(e) => {
                    anyhow::bail!("guardian run: cannot listen on a loopback port: {e}");
                }
            };
            let url = match listener.local_addr() {
                Ok(addr) => format!("http://{addr}"),
                Err(e) => {
                    anyhow::bail!("guardian run: cannot listen on a loopback port: {e}");
                }
            };
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let task = tokio::spawn(guardian::server::serve_until(
                Arc::clone(&g),
                listener,
                async move {
                    let _ = stopped.await;
                },
            ));
            (
                Endpoint {
                    url,
                    token,
                    guardian: guardian_cmd,
                },
                Some((g, stop, task)),
            )
        }
    };
    let wired = match agent_run::wire(agent, &a.command, &endpoint) {
        Ok(w) => w,
        Err(e) => {
            anyhow::bail!("guardian run: {e}");
        }
    };
    eprintln!(
        "guardian run: {} ({}) with guardian at {}",
        program,
        agent.map_or("generic", Agent::name),
        endpoint.url
    );
    let bridge_task = start_bridge(
        wired.bridge.as_ref(),
        server.as_ref().map(|(g, _, _)| g),
        &endpoint.url,
    )?;
    let code = agent_run::run_agent(&wired).await;
    if let Some(t) = bridge_task {
        t.abort();
    }
    if let Some((_, stop, task)) = server {
        let _ = stop.send(());
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("guardian run: the server stopped with an error: {e}"),
            Err(e) => eprintln!("guardian run: the server task failed: {e}"),
        }
    }
    let code = match code {
        Ok(c) => c,
        Err(e) => {
            anyhow::bail!("guardian run: {e}");
        }
    };
    let denied = print_summary(&audit_path, start_seq, a.summary.as_ref());
    if a.fail_on_deny && denied > 0 && code == 0 {
        eprintln!(
            "guardian run: {denied} action(s) denied; exiting {EXIT_DENIED} (--fail-on-deny)"
        );
        return Ok(ExitCode::from(EXIT_DENIED));
    }
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// Prints the run's decision summary (and appends it as Markdown to `summary`); returns how
/// many actions were denied.
fn print_summary(audit_path: &std::path::Path, start_seq: u64, summary: Option<&PathBuf>) -> u64 {
    let filter = guardian::audit_report::Filter {
        after_seq: Some(start_seq),
        ..Default::default()
    };
    let mut denied = 0;
    match guardian::audit_report::summarize(audit_path, &filter) {
        Ok(s) => {
            denied = s.denied;
            eprint!("{}", s.to_text());
            if let Some(path) = summary {
                use std::io::Write as _;
                let written = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .and_then(|mut f| f.write_all(s.to_markdown().as_bytes()));
                if let Err(e) = written {
                    eprintln!(
                        "guardian run: cannot write the summary to {}: {e}",
                        path.display()
                    );
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "guardian run: no decisions were recorded in {}",
                audit_path.display()
            );
        }
        Err(e) => eprintln!(
            "guardian run: cannot read the audit log {} for the summary: {e}",
            audit_path.display()
        ),
    }
    denied
}

/// OpenCode: the bridge answers the permission requests of the server the agent starts (it
/// keeps polling until that server is up), deciding in-process (`local`) or through the
/// server at `url`.
fn start_bridge(
    opencode: Option<&String>,
    local: Option<&Arc<guardian::Guardian>>,
    url: &str,
) -> anyhow::Result<Option<tokio::task::JoinHandle<()>>> {
    let bridge = match (opencode, local) {
        (Some(oc), Some(g)) => {
            let decider: Arc<dyn guardian::integrations::mcp::Decider> = Arc::new(
                guardian::integrations::mcp::InProcess(Arc::clone(g), "opencode"),
            );
            Some((oc.clone(), decider))
        }
        (Some(oc), None) => {
            match guardian::integrations::mcp::Remote::new(url, std::time::Duration::from_secs(120))
            {
                Ok(r) => Some((
                    oc.clone(),
                    Arc::new(r) as Arc<dyn guardian::integrations::mcp::Decider>,
                )),
                Err(e) => {
                    anyhow::bail!("guardian run: {e}");
                }
            }
        }
        (None, _) => None,
    };
    Ok(match bridge {
        Some((oc, decider)) => {
            let project = std::env::current_dir()
                .ok()
                .map(|p| p.display().to_string());
            match guardian::integrations::opencode::Bridge::new(&oc, project, decider) {
                Ok(b) => {
                    let b = Arc::new(b.with_unreviewed(guardian::config::Unreviewed::Deny));
                    Some(tokio::spawn(b.run()))
                }
                Err(e) => {
                    anyhow::bail!("guardian run: {e}");
                }
            }
        }
        None => None,
    })
}

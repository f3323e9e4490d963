//! `guardian policy`: the effective rules, `explain`, `test`, `import`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use guardian::Config;
use guardian::request::ReviewRequest;

use super::check::command_line;
use super::load;

/// `guardian policy`'s arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Config file (default: the embedded policies/default.toml).
    #[arg(long, global = true)]
    pub(crate) config: Option<PathBuf>,
    #[command(subcommand)]
    pub(crate) command: Option<PolicyCommand>,
}

pub(crate) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.command {
        None => policy(a.config),
        Some(PolicyCommand::Explain {
            cwd,
            verbose,
            intent,
            grants,
            words,
        }) => explain(a.config, cwd, words, verbose, (intent, grants)),
        Some(PolicyCommand::Test { files }) => policy_test(a.config, files),
        Some(PolicyCommand::Import { file }) => import(file),
    }
}

#[derive(Subcommand)]
pub(crate) enum PolicyCommand {
    /// Show how a shell command is parsed and judged: commands, wrappers, files, hosts, rules tried.
    Explain {
        /// Working directory to judge the command in (default: the current directory).
        #[arg(long)]
        cwd: Option<String>,
        /// Also list every rule tried, one line per rule kind and target.
        #[arg(long, short)]
        verbose: bool,
        /// The user's request: show the mandate code compiles from it and its ruling on the
        /// command (the model's part of a `compile = "model"` mandate is not asked here).
        #[arg(long)]
        intent: Option<String>,
        /// An operator grant (`merge #88`), as with `guardian run --grant`; repeatable.
        #[arg(long = "grant", value_name = "GRANT")]
        grants: Vec<String>,
        /// The command words.
        #[arg(last = true, required = true)]
        words: Vec<String>,
    },
    /// Run policy test files (tables of actions and expected decisions); exit 1 on a mismatch.
    Test {
        /// Test files (TOML with [[case]] tables).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Translate another agent's policy file (Claude Code settings.json, opencode.json, Codex .rules).
    Import {
        /// The file to translate.
        file: PathBuf,
    },
}

pub(crate) fn policy(config: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let cfg = load(config.as_ref())?;
    let policy = compiled_from(&cfg)?;
    let chain = cfg.extends_chain();
    if config.is_none() {
        println!(
            "# policy: the embedded default policy ({})",
            cfg.source_name
        );
    } else if chain.is_empty() {
        println!(
            "# policy: {} only; it does not extend the default policy (add [policy] extends = \"default\" to keep the default rules)",
            cfg.source_name
        );
    } else {
        println!(
            "# policy: {}, extending {}",
            cfg.source_name,
            chain.join(" → ")
        );
    }
    println!("# built-in protections apply in every policy: they cannot be removed");
    println!("# evaluated deny -> ask -> allow; nothing matched -> ask (the reviewer decides)");
    for r in policy.listing() {
        println!("{:<5}  {:<40}  {}", r.effect.as_str(), r.pattern, r.source);
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn compiled(config: Option<&PathBuf>) -> anyhow::Result<guardian::policy::Policy> {
    compiled_from(&load(config)?)
}

/// A config's policy, or every error in it.
pub(crate) fn compiled_from(cfg: &Config) -> anyhow::Result<guardian::policy::Policy> {
    guardian::policy::Policy::from_config(cfg, Vec::new()).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| format!("guardian: {e}")).collect();
        anyhow::anyhow!(lines.join("\n"))
    })
}

/// What the action does in the mandate's terms, and, with an intent or grants, the mandate and
/// its ruling.
fn explain_mandate(
    cfg: &Config,
    policy: &guardian::policy::Policy,
    req: &ReviewRequest,
    action: &guardian::normalize::NormalizedAction,
    ctx: &guardian::normalize::Context,
    signals: &[guardian::signals::Signal],
    (intent, grants): &(Option<String>, Vec<String>),
) -> anyhow::Result<()> {
    use guardian::decision::mandate::{Ruling, authorize};
    use guardian::mandate::acts;
    let dones = acts::of(req, action, ctx);
    if !dones.is_empty() {
        println!("acts (the mandate's terms):");
        for d in &dones {
            println!("  - {} {:?} by `{}`", d.act.as_str(), d.targets, d.by);
        }
    }
    if intent.is_none() && grants.is_empty() && cfg.mandate.grants.is_empty() {
        return Ok(());
    }
    let all: Vec<String> = cfg.mandate.grants.iter().chain(grants).cloned().collect();
    let operator = guardian::mandate::declared(&all)
        .map_err(|(i, e)| anyhow::anyhow!("guardian: grant {}: {e}", i + 1))?;
    let user = intent
        .as_deref()
        .map(guardian::mandate::words::compile)
        .unwrap_or_default();
    let m = user.with(&operator);
    println!("mandate:");
    for g in &m.grants {
        println!(
            "  grant {} {:?} ({}: \"{}\")",
            g.act.as_str(),
            g.targets,
            source(g.source),
            g.words
        );
    }
    for p in &m.prohibitions {
        println!(
            "  prohibition {} {:?} ({}: \"{}\")",
            p.act.map_or("anything consequential", |a| a.as_str()),
            p.targets,
            source(p.source),
            p.words
        );
    }
    let understood = acts::understood(action, ctx, |one| {
        policy
            .evaluate(
                &guardian::normalize::NormalizedAction::Shell(one.clone()),
                ctx,
            )
            .effect
            == guardian::verdict::Effect::Allow
    });
    let written = match &req.action {
        guardian::request::Action::Write { path, .. } => Some(path.as_str()),
        _ => None,
    };
    match authorize(&m, &dones, signals, understood, &[], written) {
        Ruling::Prohibited {
            prohibition,
            act,
            by,
        } => println!(
            "ruling: prohibited: {} by `{by}` (\"{}\")",
            act.as_str(),
            prohibition.words
        ),
        Ruling::Elsewhere { grant, act, by } => println!(
            "ruling: elsewhere: {} by `{by}`, but the request names another target (\"{}\")",
            act.as_str(),
            grant.words
        ),
        Ruling::Granted { grants } => println!(
            "ruling: granted by {}",
            grants
                .iter()
                .map(|g| format!("\"{}\"", g.words))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Ruling::Partly { authorized, .. } => {
            println!(
                "ruling: partly: {} of the signals authorised",
                authorized.len()
            )
        }
        Ruling::Unmatched => println!(
            "ruling: none{}",
            if understood {
                ""
            } else {
                " (a command no rule allows on its own keeps a grant from deciding)"
            }
        ),
    }
    Ok(())
}

fn source(s: guardian::mandate::Source) -> &'static str {
    match s {
        guardian::mandate::Source::User => "user",
        guardian::mandate::Source::Operator => "operator",
    }
}

pub(crate) fn explain(
    config: Option<PathBuf>,
    cwd: Option<String>,
    words: Vec<String>,
    verbose: bool,
    mandate: (Option<String>, Vec<String>),
) -> anyhow::Result<ExitCode> {
    use guardian::normalize::{Context, normalize};
    let cfg = load(config.as_ref())?;
    let policy = compiled_from(&cfg)?;
    let cwd = cwd.or_else(|| {
        std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string())
    });
    let mut req = ReviewRequest::shell(command_line(&words), cwd);
    req.intent = mandate.0.clone();
    let server_cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let ctx = Context::of(&req, &server_cwd, home.as_deref());
    let action = normalize(&req.action, &ctx);
    let signals = guardian::signals::detect(&req, &action, &ctx, &cfg.signals);
    let (eval, steps) = policy.explain(&action, &ctx);
    if let guardian::normalize::NormalizedAction::Shell(a) = &action {
        println!("command line: {}", a.raw);
    }
    println!("cwd: {}", ctx.cwd.display());
    println!(
        "workspace: {}",
        ctx.roots()
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("steps:");
    for s in steps {
        // Rule-by-rule lines ("  deny rules on …: A no; B MATCHES") only with --verbose; else
        // just the rule that matched.
        match s.strip_prefix("  ") {
            Some(_) if verbose => println!("  {s}"),
            Some(line) => {
                if let Some(hit) = line.split("; ").find(|x| x.contains(" MATCHES ")) {
                    let kind = line.split(':').next().unwrap_or("");
                    let rule = hit.rsplit(": ").next().unwrap_or(hit);
                    println!("    {kind}: {rule}");
                }
            }
            None => println!("  {s}"),
        }
    }
    if let guardian::normalize::NormalizedAction::Shell(a) = &action {
        for c in &a.commands {
            for p in c.reads.iter().chain(&c.writes) {
                let path = ctx.resolve(p);
                if !ctx.in_workspace(&path) {
                    println!("outside the workspace: {} (`{}`)", path.display(), c.text);
                }
            }
        }
    }
    if !signals.is_empty() {
        println!("risk signals (facts for the reviewer; its allow is bounded by them):");
        for sig in &signals {
            println!(
                "  - {} ({}): {}",
                sig.category.as_str(),
                sig.severity.as_str(),
                sig.evidence
            );
        }
    }
    explain_mandate(&cfg, &policy, &req, &action, &ctx, &signals, &mandate)?;
    if !eval.facts.is_empty() {
        println!("facts for the reviewer:");
        for f in &eval.facts {
            println!("  - {f}");
        }
    }
    match &eval.rule {
        Some(r) => println!(
            "decision: {} by {} ({})",
            eval.effect.as_str(),
            r.pattern,
            r.source
        ),
        None => println!("decision: {} (no rule decided)", eval.effect.as_str()),
    }
    println!("reason: {}", eval.reason);
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn policy_test(
    config: Option<PathBuf>,
    files: Vec<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let policy = compiled(config.as_ref())?;
    let (mut passed, mut failed) = (0usize, 0usize);
    for f in files {
        let results = match guardian::policy::testing::run_file(&f, &policy) {
            Ok(r) => r,
            Err(e) => {
                anyhow::bail!("guardian: {e}");
            }
        };
        for r in results {
            if r.passed {
                passed += 1;
            } else {
                failed += 1;
                let got = match &r.got_rule {
                    Some(rule) => format!("{} by {rule}", r.got.as_str()),
                    None => r.got.as_str().to_string(),
                };
                println!(
                    "FAIL {}: {}: expected {}, got {got} ({})",
                    f.display(),
                    r.name,
                    r.expected,
                    r.reason
                );
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(1))
    }
}

pub(crate) fn import(file: PathBuf) -> anyhow::Result<ExitCode> {
    match guardian::policy::import::import_file(&file) {
        Ok(imported) => {
            print!("{}", guardian::policy::import::to_toml(&imported));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            anyhow::bail!("guardian: cannot import {}: {e}", file.display())
        }
    }
}

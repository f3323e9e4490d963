//! `guardian install`: guardian's hook snippet merged into an agent's settings.

use super::*;

/// How hooks should name this binary: `guardian` when that resolves on PATH to this very file,
/// else its absolute path.
pub(crate) fn guardian_command() -> String {
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok());
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("guardian"))
            .find(|p| p.is_file())
            .and_then(|p| p.canonicalize().ok())
    });
    match (me, on_path) {
        (Some(me), Some(found)) if me == found => "guardian".into(),
        (Some(me), _) => me.display().to_string(),
        (None, _) => "guardian".into(),
    }
}

pub(crate) fn install(
    opts: &guardian::integrations::install::Options,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    use guardian::integrations::install::{apply, plan};
    let plans = match plan(opts) {
        Ok(p) => p,
        Err(e) => {
            anyhow::bail!("guardian install: {e}");
        }
    };
    for plan in &plans {
        let path = plan.path.display();
        if plan.unchanged() {
            println!("{path}: guardian is already installed; nothing changed");
        } else {
            let verb = if dry_run { "would change" } else { "changed" };
            println!("{path}: {verb}:");
            for c in &plan.changes {
                println!("  - {c}");
            }
            if dry_run {
                println!("--- new {path} ---\n{}", plan.new.trim_end());
            } else {
                match apply(plan) {
                    Ok(Some(backup)) => {
                        println!("  (the old file is saved as {})", backup.display())
                    }
                    Ok(None) => {}
                    Err(e) => {
                        anyhow::bail!("guardian install: {e}");
                    }
                }
            }
        }
        for n in &plan.notes {
            println!("note: {n}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

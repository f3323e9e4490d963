//! Finding the local reviewer model (`scripts/local-model.sh serve`) when no config names one.

use guardian::Config;

/// The local reviewer's address (scripts/local-model.sh serve).
pub(crate) const LOCAL_MODEL_URL: &str = "http://127.0.0.1:8089/v1";

/// Unless `GUARDIAN_LOCAL_SCORING=logprobs`: scores with the shipped probe (`reviewer.scoring =
/// "probe"`) when the served model file is
/// the one it was trained on (the hash beside the file, written by `scripts/local-model.sh
/// install`, or the file's own), with its threshold ([`guardian::decision::local_probe`]);
/// otherwise keeps the one-token score and says why.
async fn use_probe_if_it_fits(cfg: &mut Config) {
    let probe = match guardian::reviewer::probe::Probe::embedded() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("guardian: the shipped probe is unusable ({e}); scoring one token");
            return;
        }
    };
    let timeout = std::time::Duration::from_millis(800);
    let Some(file) =
        guardian::reviewer::openai::served_model_file(&cfg.reviewer.base_url, timeout).await
    else {
        eprintln!(
            "guardian: the local server does not say which model file it runs; scoring one token"
        );
        return;
    };
    let sha = match guardian::reviewer::probe::model_file_sha256(&file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "guardian: cannot hash {} ({e}); scoring one token",
                file.display()
            );
            return;
        }
    };
    if probe.check_model(&sha).is_err() {
        eprintln!(
            "guardian: the shipped probe was trained on another model than {}; scoring one token",
            file.display()
        );
        return;
    }
    let t = guardian::decision::local_probe(&probe);
    score_with(cfg, guardian::config::Scoring::Probe, &t);
    cfg.reviewer.model_sha256 = Some(sha);
    eprintln!(
        "guardian: scoring with the probe {} on its hidden state (threshold {:.4})",
        probe.version, t.deny
    );
}

/// Scores the reviewer's decisions by `scoring` against thresholds `t`: the one place the
/// local model's four thresholds are written into the config.
fn score_with(
    cfg: &mut Config,
    scoring: guardian::config::Scoring,
    t: &guardian::decision::Thresholds,
) {
    cfg.reviewer.scoring = scoring;
    cfg.reviewer.deny_threshold = t.deny;
    cfg.reviewer.deny_threshold_no_signal = t.deny_no_signal;
    cfg.reviewer.authorization_threshold = t.authorization;
    cfg.reviewer.authorization_high_threshold = t.authorization_high;
    cfg.reviewer.authorization_weight = t.authorization_weight;
}

/// With the embedded defaults, use the local reviewer model when one is serving on loopback
/// (`scripts/local-model.sh serve`); otherwise keep `backend = "none"`.
pub(crate) async fn use_local_model_if_running(cfg: &mut Config) {
    if std::env::var_os("GUARDIAN_NO_LOCAL_MODEL").is_some() {
        return;
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let Ok(client) = reqwest::Client::builder()
        .timeout(std::time::Duration::from_millis(800))
        .build()
    else {
        return;
    };
    let model = async {
        let resp = client
            .get(format!("{LOCAL_MODEL_URL}/models"))
            .send()
            .await
            .ok()?;
        let body: serde_json::Value = resp.json().await.ok()?;
        body["data"][0]["id"].as_str().map(str::to_string)
    }
    .await;
    match model {
        Some(id) => {
            eprintln!("guardian: using the local reviewer model {id} at {LOCAL_MODEL_URL}");
            cfg.reviewer.backend = guardian::config::BackendKind::Openai;
            cfg.reviewer.base_url = LOCAL_MODEL_URL.to_string();
            cfg.reviewer.model = id;
            // Small local models on a few cores are slow; give them time rather than deny.
            cfg.reviewer.timeout_ms = cfg.reviewer.timeout_ms.max(90_000);
            // llama.cpp returns log-probabilities: decide by a score with the thresholds
            // chosen on the main split (evals/RESULTS.md), and warm the prompt prefix. Its
            // written verdicts cost seconds per denial: guardian writes the reasons.
            let t = guardian::decision::LOCAL_MODEL;
            score_with(cfg, guardian::config::Scoring::Logprobs, &t);
            cfg.reviewer.explain = guardian::config::Explain::Never;
            cfg.reviewer.warm_up = true;
            // The probe (trained on the main split and public shell and app-tool data) ranks
            // better and answers faster than the one-token score on every set measured
            // (evals/RESULTS.md); GUARDIAN_LOCAL_SCORING=logprobs keeps the one-token score.
            match std::env::var("GUARDIAN_LOCAL_SCORING").as_deref() {
                Ok("logprobs") => eprintln!(
                    "guardian: GUARDIAN_LOCAL_SCORING=logprobs: scoring one token (threshold {:.4})",
                    t.deny
                ),
                other => {
                    if let Ok(v) = other
                        && v != "probe"
                    {
                        eprintln!(
                            "guardian: GUARDIAN_LOCAL_SCORING={v:?} is neither \"probe\" nor \"logprobs\"; using the probe"
                        );
                    }
                    use_probe_if_it_fits(cfg).await;
                }
            }
        }
        None => eprintln!(
            "guardian: no reviewer configured and no local model at {LOCAL_MODEL_URL}: actions no rule allows are denied (see scripts/local-model.sh)"
        ),
    }
}

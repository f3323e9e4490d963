//! The compile: the user's request into a grounded mandate, once per request.
//!
//! Code reads verbs, negations and scope words ([`super::words`]); with `[mandate] compile =
//! "model"` the reviewer model adds what it reads under the schema ([`super::model`]). The two
//! are merged: every prohibition is kept (they win), a model grant is kept only when its target
//! is grounded in the request's words ([`super::target::grounded`]). A request that is empty or
//! over `max_request_chars`, or a model that times out or answers outside the schema, yields no
//! model part (and, for the request, no mandate at all): the rest of the pipeline decides, as
//! without a mandate. Failures are named in [`Compiled::failure`].

use std::time::{Duration, Instant};

use serde::Deserialize;

use super::{Mandate, model, target, words};
use crate::reviewer::{Reviewer, Usage};

/// How the request is compiled.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CompileMode {
    /// No mandate from the user's words (operator grants still apply).
    Off,
    /// Code alone: verbs, negations and scope words.
    #[default]
    Code,
    /// Code, and the reviewer model under the mandate schema.
    Model,
}

/// `[mandate]`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct MandateConfig {
    /// `off`, `code` (the default) or `model`.
    pub compile: CompileMode,
    /// Grants (and `no …` prohibitions) the operator declares for every session, in the grant
    /// grammar (`publish npm:@acme/ui-kit`).
    pub grants: Vec<String>,
    /// The model compile's deadline, in milliseconds.
    pub timeout_ms: u64,
    /// A longer request is not compiled (no mandate).
    pub max_request_chars: usize,
}

impl Default for MandateConfig {
    fn default() -> Self {
        MandateConfig {
            compile: CompileMode::Code,
            grants: Vec::new(),
            timeout_ms: 8_000,
            max_request_chars: 4_000,
        }
    }
}

/// A compile's result.
#[derive(Debug, Clone, Default)]
pub struct Compiled {
    /// The mandate (empty when none could be compiled).
    pub mandate: Mandate,
    /// Why there is no mandate, or no model part of it.
    pub failure: Option<String>,
    /// Tokens the model spent.
    pub usage: Usage,
}

/// The key of a request in the session store: a hash of its words.
pub fn request_key(request: &str) -> String {
    use sha2::Digest;
    hex::encode(&sha2::Sha256::digest(request.trim().as_bytes())[..12])
}

/// The model's mandate grounded in the request: grants whose targets are not all found in the
/// words are dropped, as is a grant naming no target for an act a target must be named for.
pub fn ground(m: Mandate, request: &str) -> (Mandate, usize) {
    let words = target::tokens(request);
    let before = m.grants.len();
    let grants: Vec<_> = m
        .grants
        .into_iter()
        .filter(|g| !g.targets.is_empty() && g.targets.iter().all(|t| target::grounded(t, &words)))
        .collect();
    let dropped = before - grants.len();
    (
        Mandate {
            grants,
            // A prohibition is kept even when vague, its targets too.
            prohibitions: m.prohibitions,
            ..m
        },
        dropped,
    )
}

/// Compiles a request (code, then the model when configured) with the deadline of
/// `cfg.timeout_ms`.
pub async fn compile(request: &str, cfg: &MandateConfig, reviewer: &dyn Reviewer) -> Compiled {
    let started = Instant::now();
    let r = request.trim();
    if cfg.compile == CompileMode::Off {
        return Compiled::default();
    }
    if r.is_empty() {
        return Compiled {
            failure: Some("the request is empty".into()),
            ..Compiled::default()
        };
    }
    if r.chars().count() > cfg.max_request_chars {
        return Compiled {
            failure: Some(format!(
                "the request is over {} characters",
                cfg.max_request_chars
            )),
            ..Compiled::default()
        };
    }
    let mut mandate = words::compile(r);
    let mut failure = None;
    let mut usage = Usage::default();
    if cfg.compile == CompileMode::Model {
        let prompt = model::prompt(r);
        let schema = model::schema();
        let call = reviewer.structured(&prompt, "mandate", &schema, model::MAX_TOKENS);
        match tokio::time::timeout(Duration::from_millis(cfg.timeout_ms), call).await {
            Err(_) => failure = Some(format!("model: timed out after {} ms", cfg.timeout_ms)),
            Ok(Err(e)) => failure = Some(format!("model: {e}")),
            Ok(Ok((value, spent))) => {
                usage = spent;
                match model::parse(&value, r) {
                    Err(e) => failure = Some(format!("model: invalid mandate: {e}")),
                    Ok(m) => {
                        let (m, dropped) = ground(m, r);
                        mandate = mandate.with(&m);
                        mandate.compiled_by = if dropped > 0 {
                            format!("code+model ({dropped} ungrounded grant(s) dropped)")
                        } else {
                            "code+model".into()
                        };
                    }
                }
            }
        }
        if let Some(f) = &failure {
            mandate.compiled_by = format!("code; {f}");
        }
    }
    mandate.compile_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Compiled {
        mandate,
        failure,
        usage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mandate::{Act, Grant, Source};

    #[test]
    fn ungrounded_model_grants_are_dropped_and_prohibitions_kept() {
        let g = |act, t: &str| Grant {
            act,
            targets: vec![t.to_string()],
            words: String::new(),
            source: Source::User,
        };
        let m = Mandate {
            grants: vec![
                g(Act::Publish, "@acme/ui-kit"),
                g(Act::Deploy, "acme/infra"),
                Grant {
                    targets: vec![],
                    ..g(Act::Merge, "")
                },
            ],
            prohibitions: vec![crate::mandate::Prohibition {
                act: Some(Act::Deploy),
                targets: vec!["friday".into()],
                words: String::new(),
                source: Source::User,
            }],
            ..Mandate::default()
        };
        let (m, dropped) = ground(
            m,
            "Release 2.4.1 of @acme/ui-kit; the deploy waits for friday",
        );
        assert_eq!(dropped, 2);
        assert_eq!(m.grants.len(), 1);
        assert_eq!(m.prohibitions.len(), 1);
    }

    #[tokio::test]
    async fn empty_overlong_and_failed_compiles_yield_no_model_part() {
        let cfg = MandateConfig {
            compile: CompileMode::Model,
            max_request_chars: 20,
            ..MandateConfig::default()
        };
        let none = crate::reviewer::NoReviewer;
        let c = compile("  ", &cfg, &none).await;
        assert!(c.mandate.is_empty() && c.failure.is_some());
        let c = compile("publish the ui-kit package now please", &cfg, &none).await;
        assert!(c.mandate.is_empty());
        assert!(c.failure.as_deref().is_some_and(|f| f.contains("over 20")));
        let c = compile("publish ui-kit", &cfg, &none).await;
        // The code part stands; the model's failure is named.
        assert!(c.mandate.grants.iter().any(|g| g.act == Act::Publish));
        assert!(c.mandate.compiled_by.starts_with("code; model:"));
    }
}

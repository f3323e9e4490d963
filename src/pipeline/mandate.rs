//! The pipeline's mandate stage: the session's compiled mandate fetched or compiled (once per
//! request, kept in the session store so a fleet shares it), the operator's grants added, and
//! the decision module's ruling turned into a judgment. The ruling itself is
//! `crate::decision::mandate`'s; the compile is `crate::mandate`'s.

use super::{Guardian, Judgment};
use crate::audit::MandateNote as Note;
use crate::decision::mandate::{Ruling, authorize};
use crate::mandate::acts::Done;
use crate::mandate::{Mandate, Source, compile};
use crate::metrics::KindLabels;
use crate::normalize::{Context, NormalizedAction};
use crate::request::ReviewRequest;
use crate::verdict::{DecidedBy, Decision, Effect, MandateRef, RiskLevel, RuleRef, Signal};

/// What the mandate stage knows of one review.
#[derive(Debug, Clone, Default)]
pub(super) struct MandateStage {
    /// The mandate (the user's and the operator's).
    pub mandate: Mandate,
    /// What the audit record keeps of it.
    pub note: Note,
    /// What the action does, in the mandate's terms.
    pub dones: Vec<Done>,
    /// Whether every command that does no act is allowed by a rule on its own.
    pub understood: bool,
    /// The file a write or read acts on.
    pub subject: Vec<String>,
}

fn count(g: &Guardian, family: &str, kind: &str) {
    let labels = KindLabels {
        kind: kind.to_string(),
    };
    match family {
        "compile" => g.metrics.mandate_compiles.get_or_create(&labels).inc(),
        _ => g.metrics.mandate_rulings.get_or_create(&labels).inc(),
    };
}

/// A denial the mandate makes.
struct Denial<'a> {
    ruling: &'static str,
    act: crate::mandate::Act,
    words: &'a str,
    source: Source,
    rationale: String,
    message: String,
}

impl Guardian {
    /// The judgment of grants that cover everything the action does: the operator's alone
    /// are a rule's (`rule.source: "mandate"`), any of the user's the reviewer stage's.
    fn mandate_allows(
        &self,
        stage: &mut MandateStage,
        grants: &[crate::mandate::Grant],
        signals: &[Signal],
        base: &Judgment,
    ) -> Judgment {
        count(self, "ruling", "granted");
        let operator = grants.iter().all(|g| g.source == Source::Operator);
        let r = MandateRef {
            ruling: "granted".into(),
            acts: grants.iter().map(|g| g.act.as_str().to_string()).collect(),
            words: grants.iter().map(|g| g.words.clone()).collect(),
            source: if operator { "operator" } else { "user" }.into(),
        };
        stage.note.ruling = Some(r.clone());
        let words: Vec<String> = r.words.iter().map(|w| format!("\"{w}\"")).collect();
        Judgment {
            decision: Decision::Allow,
            decided_by: if operator {
                DecidedBy::Rule
            } else {
                DecidedBy::Reviewer
            },
            rule: operator.then(|| RuleRef {
                effect: Effect::Allow,
                pattern: r.words.join("; "),
                source: "mandate".into(),
            }),
            risk_level: Some(crate::decision::final_risk(RiskLevel::Low, signals)),
            rationale: format!(
                "{} asks for what this does ({}): {}",
                if operator {
                    "the operator's mandate"
                } else {
                    "the user's request"
                },
                r.acts.join(", "),
                words.join("; ")
            ),
            message: format!(
                "allowed: the {}'s mandate covers it ({})",
                r.source,
                r.acts.join(", ")
            ),
            mandate: Some(r),
            ..base.clone()
        }
    }

    /// The judgment of a mandate's denial: the operator's is a rule's (`rule.source:
    /// "mandate"`), the user's the reviewer stage's; counted, and noted for the audit record.
    fn mandate_denies(
        &self,
        stage: &mut MandateStage,
        d: Denial<'_>,
        signals: &[Signal],
        base: &Judgment,
    ) -> Judgment {
        count(self, "ruling", d.ruling);
        let operator = d.source == Source::Operator;
        let r = MandateRef {
            ruling: d.ruling.into(),
            acts: vec![d.act.as_str().into()],
            words: vec![d.words.to_string()],
            source: if operator { "operator" } else { "user" }.into(),
        };
        stage.note.ruling = Some(r.clone());
        Judgment {
            decision: Decision::Deny,
            decided_by: if operator {
                DecidedBy::Rule
            } else {
                DecidedBy::Reviewer
            },
            rule: operator.then(|| RuleRef {
                effect: Effect::Deny,
                pattern: d.words.to_string(),
                source: "mandate".into(),
            }),
            risk_level: Some(crate::decision::final_risk(RiskLevel::Medium, signals)),
            rationale: d.rationale,
            message: d.message,
            mandate: Some(r),
            ..base.clone()
        }
    }

    /// What the action does in the mandate's terms, and whether the commands that do nothing
    /// the mandate names are each allowed by a rule (so that a grant may decide the whole line).
    /// `signals`: whether the action raised any (with no act and no signal the mandate has
    /// nothing to rule on). The per-command policy evaluations run only when a grant could
    /// decide: some act or signal, and a request or operator grants to read grants from.
    pub(super) fn acts_of(
        &self,
        req: &ReviewRequest,
        action: &NormalizedAction,
        ctx: &Context,
        signals: bool,
    ) -> (Vec<Done>, bool) {
        let dones = crate::mandate::acts::of(req, action, ctx);
        let grants_possible = (self.config.mandate.compile != compile::CompileMode::Off
            && req.intent.as_deref().is_some_and(|i| !i.trim().is_empty()))
            || !self.config.mandate.grants.is_empty()
            || req.session.as_ref().is_some_and(|s| !s.grants.is_empty());
        let understood = (signals || !dones.is_empty())
            && grants_possible
            && crate::mandate::acts::understood(action, ctx, |one| {
                self.policy
                    .evaluate(&NormalizedAction::Shell(one.clone()), ctx)
                    .effect
                    == Effect::Allow
            });
        (dones, understood)
    }

    /// Compiles the user's request into the session's mandate ahead of the first tool call
    /// (Claude Code's `UserPromptSubmit` hook): kept in the session store under the request's
    /// key, where the first review finds it. A request already compiled is not compiled again.
    /// Returns what the audit record of a review under it would note.
    pub async fn prepare_mandate(&self, session: &str, request: &str) -> Note {
        let req = ReviewRequest {
            action: crate::request::Action::Read {
                path: String::new(),
                cwd: None,
                recursive: false,
            },
            session: None,
            intent: Some(request.to_string()),
            transcript: Vec::new(),
            retry: None,
            strict: false,
            escalation: None,
        };
        self.mandate_for(&req, session).await.1
    }

    /// The session's mandate for this request: the operator's grants (config, session), and
    /// the user's request compiled once (kept in the session store, keyed on the request).
    pub(super) async fn mandate_for(&self, req: &ReviewRequest, session: &str) -> (Mandate, Note) {
        let mut note = Note::default();
        // Operator grants were validated (config at load, the session's with a 400).
        let mut operator =
            crate::mandate::declared(&self.config.mandate.grants).unwrap_or_default();
        if let Some(s) = &req.session {
            match crate::mandate::declared(&s.grants) {
                Ok(m) => operator = operator.with(&m),
                // The server answers these with a 400; a library caller's are no grants, and
                // nothing consequential is allowed by them (closed).
                Err((i, e)) => operator.prohibitions.push(crate::mandate::Prohibition {
                    act: None,
                    targets: Vec::new(),
                    words: format!("session.grants[{i}] is malformed: {e}"),
                    source: Source::Operator,
                }),
            }
        }
        let Some(intent) = req.intent.as_deref().filter(|i| !i.trim().is_empty()) else {
            note.grants = operator.grants.len();
            note.prohibitions = operator.prohibitions.len();
            return (operator, note);
        };
        note.request_key = compile::request_key(intent);
        let cached = if self.config.mandate.compile == compile::CompileMode::Off {
            Some(Mandate::default())
        } else {
            match self.sessions.mandate(session, &note.request_key).await {
                // A value guardian did not write is no mandate.
                Ok(text) => text.and_then(|t| serde_json::from_str(&t).ok()),
                Err(e) => {
                    self.store_failed(&e);
                    None
                }
            }
        };
        let user = match cached {
            Some(m) => {
                if self.config.mandate.compile != compile::CompileMode::Off {
                    note.cached = true;
                    count(self, "compile", "cached");
                }
                m
            }
            None => {
                let c =
                    compile::compile(intent, &self.config.mandate, self.reviewer.as_ref()).await;
                note.compile_ms = Some(c.mandate.compile_ms);
                note.failure = c.failure.clone();
                count(
                    self,
                    "compile",
                    if c.failure.is_some() {
                        "failed"
                    } else {
                        "compiled"
                    },
                );
                let kept = match serde_json::to_string(&c.mandate) {
                    Ok(text) => {
                        self.sessions
                            .keep_mandate(session, &note.request_key, text)
                            .await
                    }
                    Err(e) => Err(crate::session::StoreError::Unavailable(e.to_string())),
                };
                if let Err(e) = kept {
                    self.store_failed(&e);
                }
                c.mandate
            }
        };
        note.compiled_by = user.compiled_by.clone();
        let m = user.with(&operator);
        note.grants = m.grants.len();
        note.prohibitions = m.prohibitions.len();
        (m, note)
    }

    /// The mandate's ruling on the action, turned into a judgment when it decides: a
    /// prohibition denies (any effect but a deny rule's, which already decided), grants that
    /// cover everything allow (not in strict mode, not for an escalation). `Partly` returns the
    /// signals the reviewer must still weigh.
    pub(super) fn mandate_judgment(
        &self,
        req: &ReviewRequest,
        stage: &mut MandateStage,
        signals: &[Signal],
        base: &Judgment,
    ) -> (Option<Judgment>, Vec<Signal>) {
        let written = match &req.action {
            crate::request::Action::Write { path, .. } => Some(path.as_str()),
            _ => None,
        };
        let ruling = authorize(
            &stage.mandate,
            &stage.dones,
            signals,
            stage.understood,
            &stage.subject,
            written,
        );
        fn source_of(mut srcs: impl Iterator<Item = Source>) -> &'static str {
            if srcs.all(|s| s == Source::Operator) {
                "operator"
            } else {
                "user"
            }
        }
        match ruling {
            Ruling::Prohibited {
                prohibition,
                act,
                by,
            } => {
                let who = if prohibition.source == Source::Operator {
                    "the operator's mandate"
                } else {
                    "the user's request"
                };
                let rationale = format!(
                    "{who} forbids this: \"{}\" ({} by `{by}`)",
                    prohibition.words,
                    act.as_str()
                );
                let message = crate::texts::mandate_deny(&prohibition.words);
                let denial = Denial {
                    ruling: "prohibited",
                    act,
                    words: &prohibition.words,
                    source: prohibition.source,
                    rationale,
                    message,
                };
                (
                    Some(self.mandate_denies(stage, denial, signals, base)),
                    signals.to_vec(),
                )
            }
            Ruling::Elsewhere { grant, act, by } => {
                let rationale = format!(
                    "the request asks for {} on another target: \"{}\" (not `{by}`)",
                    act.as_str(),
                    grant.words
                );
                let message = crate::texts::mandate_elsewhere(&grant.words);
                let denial = Denial {
                    ruling: "elsewhere",
                    act,
                    words: &grant.words,
                    source: grant.source,
                    rationale,
                    message,
                };
                (
                    Some(self.mandate_denies(stage, denial, signals, base)),
                    signals.to_vec(),
                )
            }
            Ruling::Granted { grants } if !req.strict && !req.escalates() => (
                Some(self.mandate_allows(stage, &grants, signals, base)),
                signals.to_vec(),
            ),
            Ruling::Partly { authorized, grants } => {
                count(self, "ruling", "partly");
                let source = source_of(grants.iter().map(|g| g.source));
                stage.note.ruling = Some(MandateRef {
                    ruling: "partly".into(),
                    acts: grants.iter().map(|g| g.act.as_str().to_string()).collect(),
                    words: grants.iter().map(|g| g.words.clone()).collect(),
                    source: source.into(),
                });
                let rest = signals
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !authorized.contains(i))
                    .map(|(_, s)| s.clone())
                    .collect();
                (None, rest)
            }
            _ => (None, signals.to_vec()),
        }
    }
}

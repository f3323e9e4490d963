//! `guardian eval`: the whole pipeline over labeled cases, and how often it is right.
//!
//! This module owns the case format (JSONL: `{"id", "request", "expected", "category", "source",
//! "notes"}`), running cases through [`crate::pipeline::Guardian::review`] (rules, then the
//! reviewer; no shortcuts) with bounded concurrency, and the metrics: accuracy, precision /
//! recall / F1 for deny, false-allow and false-deny rates, who decided, reviewer errors and
//! timeouts, latency percentiles, tokens and cost, per category, and the misjudged cases.
//! Reports are rendered by [`report`].

pub mod agent_traces;
pub mod audit_cases;
pub mod error;
pub mod label;
pub mod report;
pub mod threshold;
pub mod traces;
pub mod train;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use error::Error;

use crate::pipeline::Guardian;
use crate::verdict::{DecidedBy, Decision};

/// One labeled case.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Case {
    /// Unique id.
    pub id: String,
    /// The `/v1/review` request.
    pub request: serde_json::Value,
    /// The right answer.
    pub expected: Decision,
    /// A category for the breakdown.
    #[serde(default)]
    pub category: String,
    /// Where the case comes from.
    #[serde(default)]
    pub source: String,
    /// Why it is labeled so.
    #[serde(default)]
    pub notes: String,
}

/// Loads cases from JSONL files; every bad line is an error naming file and line.
pub fn load_cases(files: &[impl AsRef<Path>]) -> Result<Vec<Case>, Error> {
    let mut out = Vec::new();
    for f in files {
        let f = f.as_ref();
        let text = std::fs::read_to_string(f).map_err(|source| Error::Read {
            path: f.to_path_buf(),
            source,
        })?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let case: Case = serde_json::from_str(line).map_err(|source| {
                // Say why when the case is merely unlabeled (`traces import` leaves labels null).
                match serde_json::from_str::<serde_json::Value>(line) {
                    Ok(v) if v.get("expected").is_some_and(serde_json::Value::is_null) => {
                        Error::Unlabeled {
                            path: f.to_path_buf(),
                            line: i + 1,
                            id: v.get("id").cloned().unwrap_or(serde_json::Value::Null),
                        }
                    }
                    _ => Error::Line {
                        path: f.to_path_buf(),
                        line: i + 1,
                        source,
                    },
                }
            })?;
            out.push(case);
        }
    }
    Ok(out)
}

/// What the pipeline did with one case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaseOutcome {
    /// The case id.
    pub id: String,
    /// Its category.
    pub category: String,
    /// The right answer.
    pub expected: Decision,
    /// guardian's answer.
    pub decision: Decision,
    /// Who decided.
    pub decided_by: DecidedBy,
    /// The reviewer failure kind, for fallback decisions.
    pub error: Option<String>,
    /// The answer's rationale.
    pub rationale: String,
    /// The reviewer's risk level, when the reviewer decided.
    #[serde(default)]
    pub risk_level: Option<crate::verdict::RiskLevel>,
    /// Milliseconds from request to answer.
    pub latency_ms: f64,
    /// Prompt tokens the reviewer used.
    pub prompt_tokens: u64,
    /// Completion tokens the reviewer used.
    pub completion_tokens: u64,
    /// The action's risk signals, `category:severity` (`+named` when the intent names the
    /// target).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<String>,
    /// Prompt tokens the backend served from its cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// P(deny), when the reviewer scored the case (`reviewer.scoring = "logprobs"` or `"probe"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// For a scored case: whether the outcome table denies it whatever the score.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub table_denies: bool,
    /// For a scored case with risk signals: P(yes) of the authorization question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization: Option<f64>,
    /// P(deny) of the decision token, when `score` weighs the authorization too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_score: Option<f64>,
    /// What the mandate said: `granted`, `prohibited` or `partly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mandate: Option<String>,
    /// Milliseconds this case spent compiling its request into a mandate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mandate_compile_ms: Option<u64>,
}

/// Runs every case through the pipeline, `concurrency` at a time, calling `progress` after each.
pub async fn run(
    g: &Arc<Guardian>,
    cases: &[Case],
    concurrency: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<CaseOutcome> {
    use futures::stream::{self, StreamExt};
    let total = cases.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<CaseOutcome> = stream::iter(cases.iter().cloned())
        .map(|case| {
            let g = Arc::clone(g);
            let done = &done;
            async move {
                let outcome = run_one(&g, case).await;
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(n, total);
                outcome
            }
        })
        .buffered(concurrency.max(1))
        .collect()
        .await;
    results
}

async fn run_one(g: &Arc<Guardian>, case: Case) -> CaseOutcome {
    let started = Instant::now();
    let base = |decision, decided_by, error: Option<String>, rationale: String| CaseOutcome {
        id: case.id.clone(),
        category: case.category.clone(),
        expected: case.expected,
        decision,
        decided_by,
        error,
        rationale,
        risk_level: None,
        latency_ms: 0.0,
        prompt_tokens: 0,
        completion_tokens: 0,
        signals: Vec::new(),
        cached_tokens: 0,
        score: None,
        authorization: None,
        decision_score: None,
        table_denies: false,
        mandate: None,
        mandate_compile_ms: None,
    };
    let body = serde_json::to_vec(&case.request).unwrap_or_default();
    let req = match crate::mandate::request_from_json(&body) {
        Ok(r) => r,
        // A case the API would refuse is a deny by fallback, as a client would see it.
        Err(e) => {
            return base(
                Decision::Deny,
                DecidedBy::Fallback,
                Some("bad_request".into()),
                format!("{}: {}", e.field, e.message),
            );
        }
    };
    let r = g.review_with_usage(req, "eval").await;
    let resp = r.response;
    let mut o = base(
        resp.decision,
        resp.decided_by,
        r.fallback.map(|k| k.as_str().to_string()),
        resp.rationale,
    );
    o.risk_level = resp.risk_level;
    o.latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    o.mandate = resp.mandate.map(|m| m.ruling);
    o.mandate_compile_ms = r.mandate_compile_ms;
    o.prompt_tokens = r.usage.prompt_tokens;
    o.completion_tokens = r.usage.completion_tokens;
    o.cached_tokens = r.usage.cached_tokens;
    if let Some(p) = r.sweep {
        o.score = Some(p.score);
        o.table_denies = p.table_denies;
        o.authorization = p.authorization;
        o.decision_score = p.decision_score;
    }
    o.signals = resp
        .signals
        .iter()
        .map(|s| {
            format!(
                "{}:{}{}",
                s.category.as_str(),
                s.severity.as_str(),
                if s.named_in_intent { "+named" } else { "" }
            )
        })
        .collect();
    o
}

/// Prices per million tokens, for the cost estimate.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Prices {
    /// Per million prompt tokens.
    pub prompt_per_million: f64,
    /// Per million completion tokens.
    pub completion_per_million: f64,
}

/// Counts and rates of one set of outcomes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Scores {
    /// Cases.
    pub cases: usize,
    /// Unsafe cases denied (true positives for deny).
    pub true_deny: usize,
    /// Safe cases allowed.
    pub true_allow: usize,
    /// Unsafe cases allowed: the number that matters most.
    pub false_allow: usize,
    /// Safe cases denied.
    pub false_deny: usize,
    /// (true_deny + true_allow) / cases.
    pub accuracy: f64,
    /// Of the denied, how many were unsafe.
    pub deny_precision: f64,
    /// Of the unsafe, how many were denied.
    pub deny_recall: f64,
    /// Harmonic mean of the two.
    pub deny_f1: f64,
    /// false_allow / unsafe cases.
    pub false_allow_rate: f64,
    /// false_deny / safe cases.
    pub false_deny_rate: f64,
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

impl Scores {
    /// The metrics of these outcomes.
    pub fn of<'a>(outcomes: impl IntoIterator<Item = &'a CaseOutcome>) -> Scores {
        let mut m = Scores::default();
        for o in outcomes {
            m.cases += 1;
            match (o.expected, o.decision) {
                (Decision::Deny, Decision::Deny) => m.true_deny += 1,
                (Decision::Allow, Decision::Allow) => m.true_allow += 1,
                (Decision::Deny, Decision::Allow) => m.false_allow += 1,
                (Decision::Allow, Decision::Deny) => m.false_deny += 1,
            }
        }
        m.accuracy = ratio(m.true_deny + m.true_allow, m.cases);
        m.deny_precision = ratio(m.true_deny, m.true_deny + m.false_deny);
        m.deny_recall = ratio(m.true_deny, m.true_deny + m.false_allow);
        m.deny_f1 = if m.deny_precision + m.deny_recall == 0.0 {
            0.0
        } else {
            2.0 * m.deny_precision * m.deny_recall / (m.deny_precision + m.deny_recall)
        };
        m.false_allow_rate = ratio(m.false_allow, m.true_deny + m.false_allow);
        m.false_deny_rate = ratio(m.false_deny, m.true_allow + m.false_deny);
        m
    }
}

/// A whole evaluation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// guardian's version.
    pub guardian_version: String,
    /// The reviewer prompt's version id.
    pub prompt_version: String,
    /// The reviewer backend and model.
    pub reviewer: String,
    /// The config evaluated.
    pub config: String,
    /// The case files.
    pub files: Vec<String>,
    /// Overall metrics.
    pub metrics: Scores,
    /// Share of cases decided by rule, reviewer, session, fallback.
    pub decided_by: BTreeMap<String, f64>,
    /// Reviewer failures by kind (timeouts included), among fallback decisions.
    pub errors: BTreeMap<String, usize>,
    /// Latency percentiles in milliseconds.
    pub latency_ms: BTreeMap<String, f64>,
    /// Latency percentiles of the cases the reviewer decided, in milliseconds.
    #[serde(default)]
    pub reviewed_latency_ms: BTreeMap<String, f64>,
    /// Token totals and averages per reviewed case.
    pub tokens: BTreeMap<String, f64>,
    /// Estimated cost with the given prices.
    pub cost: f64,
    /// Prices used.
    pub prices: Prices,
    /// Scores per category.
    pub categories: BTreeMap<String, Scores>,
    /// The mandate: decisions it settled (`granted`, `prohibited`) or helped (`partly`), the
    /// compile's latency percentiles (`compile_p50_ms`, `compile_max_ms`), and the reviewed
    /// cases' latency without the compile (`reviewed_p50_ms_without_compile`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mandate: BTreeMap<String, f64>,
    /// Paired cases (`…-a` and `…-b` ids of one pair): how many pairs, and how many are right on
    /// both sides.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pairs: BTreeMap<String, f64>,
    /// The threshold sweep of the scored cases (ROC, AUC, error rates per threshold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<threshold::Sweep>,
    /// Every outcome.
    pub outcomes: Vec<CaseOutcome>,
}

/// What the mandate did over a run (empty when it did nothing).
fn mandate_summary(outcomes: &[CaseOutcome]) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for ruling in ["granted", "prohibited", "partly"] {
        let n = outcomes
            .iter()
            .filter(|o| o.mandate.as_deref() == Some(ruling))
            .count();
        if n > 0 {
            m.insert(ruling.to_string(), n as f64);
        }
    }
    let mut compile: Vec<f64> = outcomes
        .iter()
        .filter_map(|o| o.mandate_compile_ms.map(|ms| ms as f64))
        .collect();
    if !compile.is_empty() {
        compile.sort_by(f64::total_cmp);
        m.insert("compiles".into(), compile.len() as f64);
        m.insert("compile_p50_ms".into(), percentile(&compile, 50.0));
        m.insert(
            "compile_max_ms".into(),
            compile.last().copied().unwrap_or(0.0),
        );
        let mut rest: Vec<f64> = outcomes
            .iter()
            .filter(|o| o.decided_by == DecidedBy::Reviewer)
            .map(|o| (o.latency_ms - o.mandate_compile_ms.unwrap_or(0) as f64).max(0.0))
            .collect();
        rest.sort_by(f64::total_cmp);
        m.insert(
            "reviewed_p50_ms_without_compile".into(),
            percentile(&rest, 50.0),
        );
    }
    m
}

/// Pairs of cases (ids ending in `-a` and `-b` with the same stem): how many, and how many
/// are right on both sides (empty when the run has none).
fn pair_summary(outcomes: &[CaseOutcome]) -> BTreeMap<String, f64> {
    let mut by_stem: BTreeMap<&str, (Option<bool>, Option<bool>)> = BTreeMap::new();
    for o in outcomes {
        let right = o.expected == o.decision;
        if let Some(stem) = o.id.strip_suffix("-a") {
            by_stem.entry(stem).or_default().0 = Some(right);
        } else if let Some(stem) = o.id.strip_suffix("-b") {
            by_stem.entry(stem).or_default().1 = Some(right);
        }
    }
    let whole: Vec<(bool, bool)> = by_stem.values().filter_map(|(a, b)| a.zip(*b)).collect();
    let mut m = BTreeMap::new();
    if !whole.is_empty() {
        m.insert("pairs".into(), whole.len() as f64);
        m.insert(
            "right_on_both_sides".into(),
            whole.iter().filter(|(a, b)| *a && *b).count() as f64,
        );
        m.insert(
            "same_decision_both_sides".into(),
            whole.iter().filter(|(a, b)| a != b).count() as f64,
        );
    }
    m
}

/// The value at percentile `p` (0–100) of sorted values (nearest rank).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Report {
    /// Builds the report of a run.
    pub fn new(
        outcomes: Vec<CaseOutcome>,
        files: Vec<String>,
        config: String,
        reviewer: String,
        prompt_version: String,
        prices: Prices,
    ) -> Report {
        let metrics = Scores::of(&outcomes);
        let n = outcomes.len().max(1) as f64;
        let mut decided_by = BTreeMap::new();
        for by in ["rule", "reviewer", "session", "fallback"] {
            let count = outcomes
                .iter()
                .filter(|o| o.decided_by.as_str() == by)
                .count();
            decided_by.insert(by.to_string(), count as f64 / n);
        }
        let mut errors = BTreeMap::new();
        for o in outcomes
            .iter()
            .filter(|o| o.decided_by == DecidedBy::Fallback)
        {
            if let Some(e) = &o.error {
                *errors.entry(e.clone()).or_insert(0) += 1;
            }
        }
        let mut lat: Vec<f64> = outcomes.iter().map(|o| o.latency_ms).collect();
        lat.sort_by(f64::total_cmp);
        let latency_ms = [("p50", 50.0), ("p95", 95.0), ("p99", 99.0)]
            .into_iter()
            .map(|(k, p)| (k.to_string(), percentile(&lat, p)))
            .collect();
        let mut rlat: Vec<f64> = outcomes
            .iter()
            .filter(|o| o.decided_by == DecidedBy::Reviewer)
            .map(|o| o.latency_ms)
            .collect();
        rlat.sort_by(f64::total_cmp);
        let reviewed_latency_ms = [("p50", 50.0), ("p95", 95.0), ("p99", 99.0)]
            .into_iter()
            .map(|(k, p)| (k.to_string(), percentile(&rlat, p)))
            .collect();
        let reviewed = outcomes.iter().filter(|o| o.prompt_tokens > 0).count();
        let prompt: u64 = outcomes.iter().map(|o| o.prompt_tokens).sum();
        let completion: u64 = outcomes.iter().map(|o| o.completion_tokens).sum();
        let cached: u64 = outcomes.iter().map(|o| o.cached_tokens).sum();
        let mut tokens = BTreeMap::new();
        tokens.insert("prompt_total".into(), prompt as f64);
        tokens.insert("completion_total".into(), completion as f64);
        tokens.insert("prompt_per_review".into(), ratio(prompt as usize, reviewed));
        tokens.insert(
            "completion_per_review".into(),
            ratio(completion as usize, reviewed),
        );
        tokens.insert("cached_per_review".into(), ratio(cached as usize, reviewed));
        let cost = prompt as f64 / 1e6 * prices.prompt_per_million
            + completion as f64 / 1e6 * prices.completion_per_million;
        let mut by_cat: BTreeMap<String, Vec<&CaseOutcome>> = BTreeMap::new();
        for o in &outcomes {
            by_cat.entry(o.category.clone()).or_default().push(o);
        }
        let categories = by_cat
            .into_iter()
            .map(|(k, v)| (k, Scores::of(v)))
            .collect();
        let mandate = mandate_summary(&outcomes);
        let pairs = pair_summary(&outcomes);
        Report {
            mandate,
            pairs,
            guardian_version: env!("CARGO_PKG_VERSION").into(),
            prompt_version,
            reviewer,
            config,
            files,
            metrics,
            decided_by,
            errors,
            latency_ms,
            reviewed_latency_ms,
            tokens,
            cost,
            prices,
            categories,
            thresholds: threshold::sweep(&outcomes),
            outcomes,
        }
    }

    /// The cases guardian got wrong.
    pub fn misjudged(&self) -> Vec<&CaseOutcome> {
        self.outcomes
            .iter()
            .filter(|o| o.expected != o.decision)
            .collect()
    }
}

/// How a run compares with a baseline report.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    /// Cases whose decision changed: (id, baseline decision, new decision, expected).
    pub flipped: Vec<(String, Decision, Decision, Decision)>,
    /// New minus baseline, per metric.
    pub deltas: BTreeMap<String, f64>,
    /// True when the false-allow rate rose: the run must fail.
    pub false_allow_rose: bool,
}

/// Compares a report with a baseline.
pub fn compare(new: &Report, baseline: &Report) -> Comparison {
    let base: BTreeMap<&str, &CaseOutcome> = baseline
        .outcomes
        .iter()
        .map(|o| (o.id.as_str(), o))
        .collect();
    let flipped = new
        .outcomes
        .iter()
        .filter_map(|o| {
            let b = base.get(o.id.as_str())?;
            (b.decision != o.decision).then(|| (o.id.clone(), b.decision, o.decision, o.expected))
        })
        .collect();
    let (n, b) = (&new.metrics, &baseline.metrics);
    let deltas = [
        ("accuracy", n.accuracy - b.accuracy),
        ("deny_precision", n.deny_precision - b.deny_precision),
        ("deny_recall", n.deny_recall - b.deny_recall),
        ("deny_f1", n.deny_f1 - b.deny_f1),
        ("false_allow_rate", n.false_allow_rate - b.false_allow_rate),
        ("false_deny_rate", n.false_deny_rate - b.false_deny_rate),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Comparison {
        flipped,
        deltas,
        false_allow_rose: n.false_allow_rate > b.false_allow_rate + 1e-12,
    }
}

#[cfg(test)]
mod tests;

//! Fitting the reviewer's probe (`guardian train`): labelled cases → the probe's texts → the
//! model's embeddings → a standardiser and an L2-regularised logistic regression, with a
//! stratified k-fold cross-validation that gives the AUC and the deny threshold for a target
//! false-allow rate.
//!
//! Everything here is deterministic: folds are assigned from the cases' ids (not a random
//! seed), the optimiser is full-batch accelerated gradient descent with a fixed step and a fixed
//! order of sums, so the same cases and embeddings give the same probe bit for bit. The embeddings
//! come from the reviewer backend ([`crate::reviewer::Reviewer::embed`]); a cache file keyed by
//! the text's and the model's hash lets a re-run skip the server.

// Indexed loops over features read like the formulas they compute.
#![allow(clippy::needless_range_loop)]

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::reviewer::probe::{ManifestEntry, Probe, Training, sigmoid};

/// A labelled example: its id, and whether it must be denied.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// The case id.
    pub id: String,
    /// Expected deny.
    pub deny: bool,
    /// The training file it came from (an index into the manifest).
    pub file: usize,
}

/// A fitted standardiser and logistic regression.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// Feature means.
    pub mean: Vec<f64>,
    /// Feature scales (standard deviations; 1 where a feature is constant).
    pub scale: Vec<f64>,
    /// Weights of the standardised features.
    pub weights: Vec<f64>,
    /// Intercept.
    pub bias: f64,
}

impl Fit {
    /// P(deny) of one feature vector.
    pub fn score(&self, x: &[f64]) -> f64 {
        let mut z = self.bias;
        for j in 0..x.len().min(self.weights.len()) {
            z += self.weights[j] * (x[j] - self.mean[j]) / self.scale[j];
        }
        sigmoid(z)
    }
}

/// Iterations of the optimiser (it also stops when the gradient is this small).
const MAX_ITERATIONS: usize = 3_000;
const GRADIENT_TOLERANCE: f64 = 1e-7;

/// Fits a standardiser and a logistic regression minimising
/// `C · Σ log-loss + ½‖w‖²` (scikit-learn's formulation; the intercept is not penalised).
pub fn fit(x: &[Vec<f64>], y: &[bool], c: f64) -> Fit {
    let n = x.len();
    let d = x.first().map_or(0, Vec::len);
    let mut mean = vec![0.0; d];
    for row in x {
        for j in 0..d {
            mean[j] += row[j];
        }
    }
    for m in &mut mean {
        *m /= n.max(1) as f64;
    }
    let mut scale = vec![0.0; d];
    for row in x {
        for j in 0..d {
            scale[j] += (row[j] - mean[j]).powi(2);
        }
    }
    for s in &mut scale {
        *s = (*s / n.max(1) as f64).sqrt();
        if *s < 1e-12 {
            *s = 1.0;
        }
    }
    let z: Vec<Vec<f64>> = x
        .iter()
        .map(|row| (0..d).map(|j| (row[j] - mean[j]) / scale[j]).collect())
        .collect();
    let (weights, bias) = logistic(&z, y, c);
    Fit {
        mean,
        scale,
        weights,
        bias,
    }
}

/// The largest eigenvalue of ZᵀZ / n, by power iteration from a fixed start.
fn top_eigenvalue(z: &[Vec<f64>], d: usize) -> f64 {
    let n = z.len().max(1) as f64;
    let mut v = vec![1.0 / (d.max(1) as f64).sqrt(); d];
    let mut lambda = 0.0;
    for _ in 0..50 {
        let zv: Vec<f64> = z.iter().map(|row| dot(row, &v)).collect();
        let mut w = vec![0.0; d];
        for (row, a) in z.iter().zip(&zv) {
            for j in 0..d {
                w[j] += a * row[j];
            }
        }
        let norm = dot(&w, &w).sqrt();
        if norm == 0.0 {
            return 0.0;
        }
        lambda = norm / n;
        v = w.into_iter().map(|x| x / norm).collect();
    }
    lambda
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len().min(b.len()) {
        s += a[i] * b[i];
    }
    s
}

/// Nesterov-accelerated gradient descent on the mean loss
/// `(1/n) Σ log(1 + e^{−yᵢ zᵢ}) + λ/2 ‖w‖²`, λ = 1/(C n), with step 1/L.
fn logistic(z: &[Vec<f64>], y: &[bool], c: f64) -> (Vec<f64>, f64) {
    let n = z.len();
    let d = z.first().map_or(0, Vec::len);
    if n == 0 {
        return (vec![0.0; d], 0.0);
    }
    let lambda = 1.0 / (c * n as f64);
    // The loss's curvature is at most ¼ of the data's (plus the intercept's column of ones).
    let lipschitz = 0.25 * (top_eigenvalue(z, d) + 1.0) + lambda;
    let step = 1.0 / lipschitz;
    let (mut w, mut b) = (vec![0.0; d], 0.0);
    let (mut w_prev, mut b_prev) = (w.clone(), b);
    let mut t = 1.0_f64;
    for _ in 0..MAX_ITERATIONS {
        let t_next = (1.0 + (1.0 + 4.0 * t * t).sqrt()) / 2.0;
        let momentum = (t - 1.0) / t_next;
        let look_w: Vec<f64> = (0..d)
            .map(|j| w[j] + momentum * (w[j] - w_prev[j]))
            .collect();
        let look_b = b + momentum * (b - b_prev);
        let mut grad_w: Vec<f64> = look_w.iter().map(|wj| lambda * wj).collect();
        let mut grad_b = 0.0;
        for (row, label) in z.iter().zip(y) {
            let target = if *label { 1.0 } else { 0.0 };
            let residual = (sigmoid(look_b + dot(row, &look_w)) - target) / n as f64;
            grad_b += residual;
            for j in 0..d {
                grad_w[j] += residual * row[j];
            }
        }
        let gnorm = (dot(&grad_w, &grad_w) + grad_b * grad_b).sqrt();
        w_prev = std::mem::take(&mut w);
        b_prev = b;
        w = (0..d).map(|j| look_w[j] - step * grad_w[j]).collect();
        b = look_b - step * grad_b;
        t = t_next;
        if gnorm < GRADIENT_TOLERANCE {
            break;
        }
    }
    (w, b)
}

/// The fold of each example: within each label, examples ordered by the sha256 of their id are
/// dealt round-robin, so every fold holds both labels in proportion, whatever the files' order.
pub fn folds(examples: &[Example], k: usize) -> Vec<usize> {
    folds_of_repeat(examples, k, 0)
}

/// [`folds`] for one repeat of the cross-validation: repeat 0 orders by the sha256 of the id,
/// repeat `r > 0` by the sha256 of `r:id`, so each repeat deals the cases differently.
pub fn folds_of_repeat(examples: &[Example], k: usize, repeat: usize) -> Vec<usize> {
    let mut out = vec![0; examples.len()];
    for label in [false, true] {
        let mut idx: Vec<(String, usize)> = examples
            .iter()
            .enumerate()
            .filter(|(_, e)| e.deny == label)
            .map(|(i, e)| {
                let key = if repeat == 0 {
                    Sha256::digest(e.id.as_bytes())
                } else {
                    Sha256::digest(format!("{repeat}:{}", e.id).as_bytes())
                };
                (hex::encode(key), i)
            })
            .collect();
        idx.sort();
        for (pos, (_, i)) in idx.into_iter().enumerate() {
            out[i] = pos % k.max(1);
        }
    }
    out
}

/// Out-of-fold scores: each example scored by a probe fitted on the other folds.
pub fn cross_validate(x: &[Vec<f64>], examples: &[Example], c: f64, k: usize) -> Vec<f64> {
    cross_validate_fold(x, examples, c, k, &folds(examples, k))
}

/// Out-of-fold scores for each of `repeats` assignments of folds ([`folds_of_repeat`]).
pub fn cross_validate_repeated(
    x: &[Vec<f64>],
    examples: &[Example],
    c: f64,
    k: usize,
    repeats: usize,
) -> Vec<Vec<f64>> {
    (0..repeats.max(1))
        .map(|r| cross_validate_fold(x, examples, c, k, &folds_of_repeat(examples, k, r)))
        .collect()
}

fn cross_validate_fold(
    x: &[Vec<f64>],
    examples: &[Example],
    c: f64,
    k: usize,
    fold: &[usize],
) -> Vec<f64> {
    let mut scores = vec![0.0; x.len()];
    for f in 0..k {
        let train: Vec<usize> = (0..x.len()).filter(|i| fold[*i] != f).collect();
        let tx: Vec<Vec<f64>> = train.iter().map(|i| x[*i].clone()).collect();
        let ty: Vec<bool> = train.iter().map(|i| examples[*i].deny).collect();
        let model = fit(&tx, &ty, c);
        for i in (0..x.len()).filter(|i| fold[*i] == f) {
            scores[i] = model.score(&x[i]);
        }
    }
    scores
}

/// ROC AUC: the probability that a random deny case scores above a random allow case (ties
/// count half). `None` without both labels.
pub fn auc(scores: &[f64], deny: &[bool]) -> Option<f64> {
    let pos: Vec<f64> = scores
        .iter()
        .zip(deny)
        .filter(|(_, d)| **d)
        .map(|(s, _)| *s)
        .collect();
    let neg: Vec<f64> = scores
        .iter()
        .zip(deny)
        .filter(|(_, d)| !**d)
        .map(|(s, _)| *s)
        .collect();
    if pos.is_empty() || neg.is_empty() {
        return None;
    }
    let mut wins = 0.0;
    for p in &pos {
        for q in &neg {
            wins += if p > q {
                1.0
            } else if p == q {
                0.5
            } else {
                0.0
            };
        }
    }
    Some(wins / (pos.len() * neg.len()) as f64)
}

/// The highest threshold (deny when score ≥ threshold) whose false-allow rate over these scores
/// is at most `target`, and the false-deny rate it costs.
pub fn threshold_for(scores: &[f64], deny: &[bool], target: f64) -> (f64, f64) {
    threshold_for_pipeline(scores, deny, &vec![None; scores.len()], target)
}

/// [`threshold_for`] in the pipeline: a case a rule decides keeps its decision (`fixed`: `Some(true)`
/// denied, `Some(false)` allowed), whatever its score; only the others move with the threshold.
/// The rates are over every case, as `guardian eval` counts them.
pub fn threshold_for_pipeline(
    scores: &[f64],
    deny: &[bool],
    fixed: &[Option<bool>],
    target: f64,
) -> (f64, f64) {
    let unsafe_total = deny.iter().filter(|d| **d).count();
    let safe_total = deny.len() - unsafe_total;
    let fixed_allows = (0..deny.len())
        .filter(|i| deny[*i] && fixed[*i] == Some(false))
        .count();
    let mut reviewed_unsafe: Vec<f64> = (0..deny.len())
        .filter(|i| deny[*i] && fixed[*i].is_none())
        .map(|i| scores[i])
        .collect();
    reviewed_unsafe.sort_by(f64::total_cmp);
    // The lowest `m` reviewed unsafe cases may be allowed besides the fixed allows.
    let budget = (target * unsafe_total as f64).floor() as usize;
    let m = budget.saturating_sub(fixed_allows);
    let threshold = reviewed_unsafe.get(m).copied().unwrap_or(1.0);
    let false_denies = (0..deny.len())
        .filter(|i| !deny[*i])
        .filter(|i| match fixed[*i] {
            Some(denied) => denied,
            None => scores[*i] >= threshold,
        })
        .count();
    (threshold, false_denies as f64 / safe_total.max(1) as f64)
}

/// The cases a rule decided in an eval report (id → denied).
pub fn rule_decided(report: &crate::eval::Report) -> HashMap<String, bool> {
    report
        .outcomes
        .iter()
        .filter(|o| o.decided_by == crate::verdict::DecidedBy::Rule)
        .map(|o| (o.id.clone(), o.decision == crate::verdict::Decision::Deny))
        .collect()
}

/// The embeddings cache: one JSON line per text, `{"key", "embedding"}`, keyed by the sha256 of
/// the model's hash and the text.
pub struct Cache {
    path: Option<std::path::PathBuf>,
    known: HashMap<String, Vec<f64>>,
}

impl Cache {
    /// Opens (or starts) a cache file; `None` caches nothing.
    pub fn open(path: Option<&Path>) -> std::io::Result<Cache> {
        let mut known = HashMap::new();
        if let Some(p) = path.filter(|p| p.exists()) {
            for line in std::fs::read_to_string(p)?.lines() {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                    continue;
                };
                let (Some(key), Some(e)) = (v["key"].as_str(), v["embedding"].as_array()) else {
                    continue;
                };
                let e: Option<Vec<f64>> = e.iter().map(serde_json::Value::as_f64).collect();
                if let Some(e) = e {
                    known.insert(key.to_string(), e);
                }
            }
        }
        Ok(Cache {
            path: path.map(Path::to_path_buf),
            known,
        })
    }

    /// The cache key of a text embedded by a model.
    pub fn key(model_sha256: &str, text: &str) -> String {
        hex::encode(Sha256::digest(
            format!("{model_sha256}\u{0}{text}").as_bytes(),
        ))
    }

    /// A cached embedding.
    pub fn get(&self, key: &str) -> Option<&Vec<f64>> {
        self.known.get(key)
    }

    /// Remembers an embedding (appended to the file at once).
    pub fn put(&mut self, key: String, embedding: Vec<f64>) -> std::io::Result<()> {
        if let Some(p) = &self.path {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)?;
            writeln!(
                f,
                "{}",
                serde_json::json!({"key": key, "embedding": embedding})
            )?;
        }
        self.known.insert(key, embedding);
        Ok(())
    }
}

/// Why training could not read or embed its cases.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// A training file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A file's cases did not load.
    #[error("{0}")]
    Cases(#[from] crate::eval::Error),
    /// A case is not a review request.
    #[error("case {id}: {message}")]
    Request {
        /// The case id.
        id: String,
        /// Why.
        message: String,
    },
    /// The server did not embed a case's text.
    #[error("case {id}: {source}")]
    Embed {
        /// The case id.
        id: String,
        /// The last attempt's failure.
        source: crate::reviewer::ReviewerError,
    },
    /// A case id that two case lines share (a file given twice, or copied cases): it would be
    /// counted twice and sit in two folds at once.
    #[error("case {id} appears twice ({first} and {second}): give each case file once")]
    Duplicate {
        /// The case id.
        id: String,
        /// The file of its first appearance.
        first: String,
        /// The file of its second.
        second: String,
    },
    /// A case's embedding has another dimension than the others.
    #[error("case {0}: the embedding's dimension changed")]
    Dimension(String),
    /// The cache file could not be written.
    #[error("the embeddings cache: {0}")]
    Cache(#[from] std::io::Error),
}

/// Labelled cases read and embedded: the features, the examples and the manifest of the files.
pub struct Embedded {
    /// One embedding per case.
    pub x: Vec<Vec<f64>>,
    /// The cases' labels and files.
    pub examples: Vec<Example>,
    /// The files read.
    pub manifest: Vec<ManifestEntry>,
}

/// A case's probe text in `text_format`; for `probe-text-v2` with the risk signals guardian
/// finds in it under the default `[signals]` settings (a home of `$HOME`, a server directory
/// of `/`), as the pipeline would.
fn probe_text(text_format: &str, req: &crate::request::ReviewRequest) -> String {
    let signals = if text_format == crate::reviewer::probe::TEXT_FORMAT_V2 {
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let ctx = crate::normalize::Context::of(req, std::path::Path::new("/"), home.as_deref());
        let action = crate::normalize::normalize(&req.action, &ctx);
        crate::signals::detect(req, &action, &ctx, &Default::default())
    } else {
        Vec::new()
    };
    crate::reviewer::probe::text_of(text_format, req, &signals)
}

/// Reads the case files and embeds every case's probe text in `text_format`
/// ([`crate::reviewer::probe::text_of`]) through `reviewer` (3 attempts each), reading and
/// filling `cache`; `progress(done, total)` is called after each case.
pub async fn embed_files(
    reviewer: &dyn crate::reviewer::Reviewer,
    files: &[std::path::PathBuf],
    text_format: &str,
    model_sha256: &str,
    cache: &mut Cache,
    progress: impl Fn(usize, usize),
) -> Result<Embedded, TrainError> {
    let mut manifest = Vec::new();
    let mut cases = Vec::new();
    for f in files {
        let bytes = std::fs::read(f).map_err(|source| TrainError::Read {
            path: f.display().to_string(),
            source,
        })?;
        let these = crate::eval::load_cases(std::slice::from_ref(f))?;
        manifest.push(ManifestEntry {
            file: f.display().to_string(),
            sha256: hex::encode(Sha256::digest(&bytes)),
            cases: these.len(),
            cv_auc: None,
        });
        let file = manifest.len() - 1;
        cases.extend(these.into_iter().map(|c| (file, c)));
    }
    let mut seen = std::collections::HashMap::new();
    for (file, case) in &cases {
        if let Some(first) = seen.insert(case.id.as_str(), *file) {
            return Err(TrainError::Duplicate {
                id: case.id.clone(),
                first: manifest[first].file.clone(),
                second: manifest[*file].file.clone(),
            });
        }
    }
    let mut x: Vec<Vec<f64>> = Vec::with_capacity(cases.len());
    let mut examples = Vec::with_capacity(cases.len());
    for (i, (file, case)) in cases.iter().enumerate() {
        let req = crate::request::ReviewRequest::from_json(case.request.to_string().as_bytes())
            .map_err(|e| TrainError::Request {
                id: case.id.clone(),
                message: e.to_string(),
            })?;
        let text = probe_text(text_format, &req);
        let key = Cache::key(model_sha256, &text);
        let v = match cache.get(&key) {
            Some(v) => v.clone(),
            None => {
                let mut last = crate::reviewer::ReviewerError::NotConfigured;
                let mut got = None;
                for _ in 0..3 {
                    match reviewer.embed(&text).await {
                        Ok(e) => {
                            got = Some(e.vector);
                            break;
                        }
                        Err(e) => last = e,
                    }
                }
                let v = got.ok_or_else(|| TrainError::Embed {
                    id: case.id.clone(),
                    source: last,
                })?;
                cache.put(key, v.clone())?;
                v
            }
        };
        if x.first().is_some_and(|f| f.len() != v.len()) {
            return Err(TrainError::Dimension(case.id.clone()));
        }
        x.push(v);
        examples.push(Example {
            id: case.id.clone(),
            deny: case.expected == crate::verdict::Decision::Deny,
            file: *file,
        });
        progress(i + 1, cases.len());
    }
    Ok(Embedded {
        x,
        examples,
        manifest,
    })
}

/// What `guardian train` was asked.
#[derive(Debug, Clone)]
pub struct TrainSpec {
    /// The probe's version id.
    pub version: String,
    /// The text format the embeddings were taken of ([`crate::reviewer::probe::TEXT_FORMATS`]).
    pub text_format: String,
    /// The model alias.
    pub model: String,
    /// The model file's sha256.
    pub model_sha256: String,
    /// Regularisation strength.
    pub c: f64,
    /// Folds.
    pub folds: usize,
    /// Repeats of the cross-validation, each with its own folds: the threshold is chosen on
    /// their scores pooled, which a single assignment of folds makes noisy when few unsafe
    /// cases reach the reviewer.
    pub repeats: usize,
    /// The false-allow rate the threshold is chosen for.
    pub target_false_allow: f64,
    /// The training files.
    pub manifest: Vec<ManifestEntry>,
    /// Cases a rule decides in the pipeline (a rules-only `guardian eval` report): id → denied.
    /// When given, the threshold is chosen with them as fixed points
    /// ([`threshold_for_pipeline`]), over the cases of `threshold_files` only.
    pub fixed: Option<HashMap<String, bool>>,
    /// With `fixed`: the manifest indexes of the files whose cases choose the threshold (the
    /// others are trained on, not calibrated on). Empty: every file.
    pub threshold_files: Vec<usize>,
}

/// Fits the probe on every example (with its cross-validated AUC and threshold).
pub fn train(x: &[Vec<f64>], examples: &[Example], spec: &TrainSpec) -> Probe {
    train_scored(x, examples, spec).0
}

/// [`train`], and every example's out-of-fold score of the first cross-validation run (the
/// folds of [`folds`]: what [`cross_validate`] gives, without fitting the folds again).
pub fn train_scored(x: &[Vec<f64>], examples: &[Example], spec: &TrainSpec) -> (Probe, Vec<f64>) {
    let deny: Vec<bool> = examples.iter().map(|e| e.deny).collect();
    let runs = cross_validate_repeated(x, examples, spec.c, spec.folds, spec.repeats);
    let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let cv_auc = mean(runs.iter().map(|s| auc(s, &deny).unwrap_or(0.5)).collect());
    // Every run's scores pooled: each case counts once per run.
    let chosen: Vec<usize> = (0..examples.len())
        .filter(|i| {
            spec.fixed.is_none()
                || spec.threshold_files.is_empty()
                || spec.threshold_files.contains(&examples[*i].file)
        })
        .collect();
    let s: Vec<f64> = runs
        .iter()
        .flat_map(|run| chosen.iter().map(move |i| run[*i]))
        .collect();
    let d: Vec<bool> = chosen
        .iter()
        .map(|i| deny[*i])
        .collect::<Vec<_>>()
        .repeat(runs.len());
    let f: Vec<Option<bool>> = chosen
        .iter()
        .map(|i| {
            let fixed = spec.fixed.as_ref()?;
            fixed.get(&examples[*i].id).copied()
        })
        .collect::<Vec<_>>()
        .repeat(runs.len());
    let (threshold, cv_false_deny) = threshold_for_pipeline(&s, &d, &f, spec.target_false_allow);
    let model = fit(x, &deny, spec.c);
    let mut manifest = spec.manifest.clone();
    for (i, m) in manifest.iter_mut().enumerate() {
        let per_run: Vec<f64> = runs
            .iter()
            .filter_map(|oof| {
                let (s, d): (Vec<f64>, Vec<bool>) = examples
                    .iter()
                    .zip(oof)
                    .filter(|(e, _)| e.file == i)
                    .map(|(e, s)| (*s, e.deny))
                    .unzip();
                auc(&s, &d)
            })
            .collect();
        m.cv_auc = (!per_run.is_empty()).then(|| mean(per_run));
    }
    let first = runs.first().cloned().unwrap_or_default();
    let probe = Probe {
        version: spec.version.clone(),
        text_format: spec.text_format.clone(),
        model: spec.model.clone(),
        model_sha256: spec.model_sha256.clone(),
        dim: model.weights.len(),
        mean: model.mean,
        scale: model.scale,
        weights: model.weights,
        bias: model.bias,
        threshold,
        // Fitted on eval runs of the trained probe, not here.
        no_signal_threshold: None,
        training: Training {
            c: spec.c,
            cases: examples.len(),
            deny_cases: deny.iter().filter(|d| **d).count(),
            folds: spec.folds,
            repeats: spec.repeats.max(1),
            cv_auc,
            target_false_allow: spec.target_false_allow,
            cv_false_deny,
            manifest,
        },
    };
    (probe, first)
}

/// How a probe does on labelled cases at a threshold (the probe alone: in the pipeline a rule
/// decides some of them first).
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOutcome {
    /// Cases.
    pub cases: usize,
    /// Share decided right.
    pub accuracy: f64,
    /// Deny cases allowed, over deny cases.
    pub false_allow_rate: f64,
    /// Allow cases denied, over allow cases.
    pub false_deny_rate: f64,
    /// ROC AUC, when both labels are present.
    pub auc: Option<f64>,
}

impl ProbeOutcome {
    /// The outcome of `scores` against `threshold` (deny at or above it).
    pub fn of(scores: &[f64], deny: &[bool], threshold: f64) -> ProbeOutcome {
        let n = scores.len().min(deny.len());
        let (mut right, mut fa, mut fd) = (0usize, 0usize, 0usize);
        for (s, d) in scores.iter().zip(deny) {
            match (*s >= threshold, *d) {
                (true, true) | (false, false) => right += 1,
                (false, true) => fa += 1,
                (true, false) => fd += 1,
            }
        }
        let denies = deny.iter().take(n).filter(|d| **d).count();
        let rate = |k: usize, of: usize| if of == 0 { 0.0 } else { k as f64 / of as f64 };
        ProbeOutcome {
            cases: n,
            accuracy: rate(right, n),
            false_allow_rate: rate(fa, denies),
            false_deny_rate: rate(fd, n - denies),
            auc: auc(&scores[..n], &deny[..n]),
        }
    }

    /// One cell of `guardian train --labels`'s table.
    pub fn cell(&self) -> String {
        let auc = self.auc.map_or("  –  ".into(), |a| format!("{a:.3}"));
        format!(
            "acc {:5.1}%  FA {:5.1}%  FD {:5.1}%  AUC {auc}",
            100.0 * self.accuracy,
            100.0 * self.false_allow_rate,
            100.0 * self.false_deny_rate
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two noisy clusters in 3 dimensions, the third feature constant.
    fn data() -> (Vec<Vec<f64>>, Vec<Example>) {
        let mut x = Vec::new();
        let mut ex = Vec::new();
        for i in 0..40 {
            let deny = i % 2 == 0;
            let noise = ((i * 37) % 11) as f64 / 11.0 - 0.5;
            let centre = if deny { 1.0 } else { -1.0 };
            x.push(vec![centre + noise, 0.3 * noise - centre * 0.2, 7.0]);
            ex.push(Example {
                id: format!("case-{i}"),
                deny,
                file: 0,
            });
        }
        (x, ex)
    }

    #[test]
    fn a_probe_outcome_counts_both_errors_at_its_threshold() {
        let o = ProbeOutcome::of(&[0.9, 0.2, 0.6, 0.1], &[true, true, false, false], 0.5);
        assert_eq!(o.cases, 4);
        assert!((o.accuracy - 0.5).abs() < 1e-12);
        assert!((o.false_allow_rate - 0.5).abs() < 1e-12);
        assert!((o.false_deny_rate - 0.5).abs() < 1e-12);
        assert_eq!(o.auc, Some(0.75));
        assert!(o.cell().contains("FA  50.0%"), "{}", o.cell());
    }

    #[test]
    fn a_fit_separates_what_is_separable_and_is_deterministic() {
        let (x, ex) = data();
        let y: Vec<bool> = ex.iter().map(|e| e.deny).collect();
        let a = fit(&x, &y, 1.0);
        let b = fit(&x, &y, 1.0);
        assert_eq!(a, b, "the same data gives the same fit, bit for bit");
        assert!(a.score(&[1.0, -0.2, 7.0]) > 0.8);
        assert!(a.score(&[-1.0, 0.2, 7.0]) < 0.2);
        // A constant feature is standardised with scale 1 and gets no weight.
        assert_eq!(a.scale[2], 1.0);
        assert!(a.weights[2].abs() < 1e-9);
        // Stronger regularisation shrinks the weights.
        let strong = fit(&x, &y, 0.001);
        assert!(dot(&strong.weights, &strong.weights) < dot(&a.weights, &a.weights));
    }

    #[test]
    fn the_fit_matches_the_optimum_of_its_loss() {
        // One feature, C large: the optimum's gradient vanishes.
        let x: Vec<Vec<f64>> = [-2.0, -1.0, 0.5, 1.0, -0.5, 2.0]
            .iter()
            .map(|v| vec![*v])
            .collect();
        let y = [false, false, false, true, true, true];
        let f = fit(&x, &y, 10.0);
        let n = x.len() as f64;
        let lambda = 1.0 / (10.0 * n);
        let (mut gw, mut gb) = (lambda * f.weights[0], 0.0);
        for (row, label) in x.iter().zip(y) {
            let z = (row[0] - f.mean[0]) / f.scale[0];
            let r = (sigmoid(f.bias + f.weights[0] * z) - f64::from(u8::from(label))) / n;
            gw += r * z;
            gb += r;
        }
        assert!(gw.abs() < 1e-6 && gb.abs() < 1e-6, "gradient {gw} {gb}");
    }

    #[test]
    fn folds_are_stratified_and_independent_of_order() {
        let (_, ex) = data();
        let f = folds(&ex, 5);
        for k in 0..5 {
            let deny = (0..ex.len()).filter(|i| f[*i] == k && ex[*i].deny).count();
            let allow = (0..ex.len()).filter(|i| f[*i] == k && !ex[*i].deny).count();
            assert_eq!((deny, allow), (4, 4), "fold {k}");
        }
        let mut reversed = ex.clone();
        reversed.reverse();
        let g = folds(&reversed, 5);
        for (i, e) in ex.iter().enumerate() {
            let j = reversed
                .iter()
                .position(|r| r.id == e.id)
                .expect("same ids");
            assert_eq!(f[i], g[j], "{}", e.id);
        }
    }

    #[test]
    fn auc_and_threshold_read_the_scores() {
        let scores = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2];
        let deny = [false, false, true, true, true, false];
        // deny scores 0.35, 0.8, 0.9 against 0.1, 0.4, 0.2: 8 of 9 pairs ordered.
        assert!((auc(&scores, &deny).expect("both") - 8.0 / 9.0).abs() < 1e-12);
        assert_eq!(auc(&[0.1], &[true]), None);
        // No false allow: the threshold is the lowest unsafe score; 0.4 is then denied.
        let (t, fd) = threshold_for(&scores, &deny, 0.0);
        assert_eq!(t, 0.35);
        assert!((fd - 1.0 / 3.0).abs() < 1e-12);
        // One in three allowed: the threshold moves up to 0.8, no false deny.
        let (t, fd) = threshold_for(&scores, &deny, 0.34);
        assert_eq!((t, fd), (0.8, 0.0));
    }

    #[test]
    fn rule_decided_cases_are_fixed_points_of_the_threshold() {
        // Unsafe: 0.9 reviewed, 0.2 reviewed, 0.1 denied by rule, 0.05 allowed by rule.
        // Safe: 0.5 reviewed, 0.3 denied by rule.
        let scores = [0.9, 0.2, 0.1, 0.05, 0.5, 0.3];
        let deny = [true, true, true, true, false, false];
        let fixed = [None, None, Some(true), Some(false), None, Some(true)];
        // 25% of 4 unsafe may be allowed: the rule's allow uses it up, so 0.2 must be denied.
        let (t, fd) = threshold_for_pipeline(&scores, &deny, &fixed, 0.25);
        assert_eq!(t, 0.2);
        assert!(
            (fd - 1.0).abs() < 1e-12,
            "0.5 is denied by score, 0.3 by rule"
        );
        // 50%: one more allow, the threshold moves to 0.9 and only the rule's deny is false.
        let (t, fd) = threshold_for_pipeline(&scores, &deny, &fixed, 0.5);
        assert_eq!((t, fd), (0.9, 0.5));
    }

    #[test]
    fn training_is_deterministic_and_cross_validated() {
        let (x, ex) = data();
        let spec = TrainSpec {
            version: "probe-test".into(),
            text_format: crate::reviewer::probe::TEXT_FORMAT.into(),
            model: "m".into(),
            model_sha256: "00".repeat(32),
            c: 0.1,
            folds: 5,
            repeats: 3,
            target_false_allow: 0.05,
            manifest: vec![],
            fixed: None,
            threshold_files: vec![],
        };
        let a = train(&x, &ex, &spec);
        let b = train(&x, &ex, &spec);
        assert_eq!(
            serde_json::to_string(&a).expect("json"),
            serde_json::to_string(&b).expect("json")
        );
        assert!(a.training.cv_auc > 0.95, "{}", a.training.cv_auc);
        assert_eq!((a.training.cases, a.training.deny_cases), (40, 20));
        assert_eq!(a.training.repeats, 3);
        // What it writes is a probe guardian reads.
        let back = Probe::parse(&serde_json::to_string(&a).expect("json")).expect("parses");
        assert_eq!(back.dim, 3);
        // One repeat is the single cross-validation of `folds`.
        let once = train(&x, &ex, &TrainSpec { repeats: 1, ..spec });
        let (t, _) = threshold_for(&cross_validate(&x, &ex, 0.1, 5), &once_deny(&ex), 0.05);
        assert_eq!(once.threshold, t);
    }

    fn once_deny(ex: &[Example]) -> Vec<bool> {
        ex.iter().map(|e| e.deny).collect()
    }

    #[test]
    fn each_repeat_deals_its_own_stratified_folds() {
        let (_, ex) = data();
        let first = folds_of_repeat(&ex, 5, 0);
        assert_eq!(first, folds(&ex, 5), "repeat 0 is the folds of one run");
        let second = folds_of_repeat(&ex, 5, 1);
        assert_ne!(first, second, "another repeat deals the cases differently");
        for f in 0..5 {
            let in_fold = |fs: &[usize], deny: bool| {
                (0..ex.len())
                    .filter(|i| fs[*i] == f && ex[*i].deny == deny)
                    .count()
            };
            assert_eq!(in_fold(&second, true), in_fold(&first, true));
            assert_eq!(in_fold(&second, false), in_fold(&first, false));
        }
    }
}

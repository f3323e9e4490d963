//! The probe: a linear classifier on the reviewer model's own hidden state
//! (`reviewer.scoring = "probe"`).
//!
//! This module owns the probe's file format (a standardiser and logistic-regression weights,
//! versioned like the prompts: `prompts/probe-v3.json`, with the sha256 of the model it was
//! trained on and the manifest of its training data), the short text whose embedding it reads
//! (the user's request, the action as one line of JSON, one question), and applying it: a dot
//! product giving P(deny). It never guesses: a missing or malformed embedding, a dimension that
//! differs from the probe's, or a non-finite value is an error, and the review fails closed.
//! Fitting a probe is `guardian train` ([`crate::eval::train`]).

use serde::{Deserialize, Serialize};

use crate::request::ReviewRequest;

/// The id of the first text format a probe's embeddings are taken of ([`text`]).
pub const TEXT_FORMAT: &str = "probe-text-v1";

/// The text format with guardian's findings ([`text_with_findings`]): what a probe trained by
/// `guardian train --text-format probe-text-v2` reads.
pub const TEXT_FORMAT_V2: &str = "probe-text-v2";

/// The text formats this guardian embeds; a probe trained on another is refused.
pub const TEXT_FORMATS: [&str; 2] = [TEXT_FORMAT, TEXT_FORMAT_V2];

/// The probe shipped with guardian, trained on the local model
/// (`scripts/local-model.sh`) by `guardian train` (evals/RESULTS.md).
pub const EMBEDDED: &str = include_str!("../../prompts/probe-v3.json");

/// Longest user request the probe text carries, in characters.
const MAX_REQUEST_CHARS: usize = 600;
/// Longest action JSON the probe text carries, in characters (the text must fit one batch).
const MAX_ACTION_CHARS: usize = 1_500;

/// What a probe was trained on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Training {
    /// The regularisation strength (scikit-learn's `C`: smaller is stronger).
    pub c: f64,
    /// Cases trained on, and how many of them are expected denials.
    pub cases: usize,
    /// Expected denials among them.
    pub deny_cases: usize,
    /// Folds of the cross-validation.
    pub folds: usize,
    /// How many times the cross-validation ran, each with its own assignment of folds (the
    /// threshold is chosen on the scores of every run pooled; files written before this key
    /// ran once).
    #[serde(default = "one_repeat")]
    pub repeats: usize,
    /// Cross-validated ROC AUC over every training case (the mean over the repeats).
    pub cv_auc: f64,
    /// The false-allow rate the threshold was chosen for (cross-validated scores).
    pub target_false_allow: f64,
    /// False-deny rate at that threshold, cross-validated.
    pub cv_false_deny: f64,
    /// The training files: path, sha256, cases.
    pub manifest: Vec<ManifestEntry>,
}

fn one_repeat() -> usize {
    1
}

/// One training file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// The file as given to `guardian train`.
    pub file: String,
    /// sha256 of its bytes.
    pub sha256: String,
    /// Cases read from it.
    pub cases: usize,
    /// Cross-validated ROC AUC over its cases (when it holds both labels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv_auc: Option<f64>,
}

/// A trained probe: P(deny) = σ(bias + Σ weightᵢ · (xᵢ − meanᵢ) / scaleᵢ).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The probe's version id, e.g. `probe-v1` (recorded as the review's prompt stage).
    pub version: String,
    /// The text format its embeddings are taken of ([`TEXT_FORMAT`]).
    pub text_format: String,
    /// The model (alias) whose hidden state it reads.
    pub model: String,
    /// sha256 of the model file (GGUF) it was trained on.
    pub model_sha256: String,
    /// The embedding's dimension.
    pub dim: usize,
    /// The standardiser's means.
    pub mean: Vec<f64>,
    /// The standardiser's scales (never 0).
    pub scale: Vec<f64>,
    /// The weights of the standardised features.
    pub weights: Vec<f64>,
    /// The intercept.
    pub bias: f64,
    /// The deny threshold chosen at training (cross-validated, for `target_false_allow`).
    pub threshold: f64,
    /// The deny threshold for an action guardian's code found no risk signal in, when one was
    /// fitted for this probe (`scripts/no-signal-threshold.py`); never below `threshold`. None
    /// ships: fitted on the main split and the fresh sets (0.36), it added a false allow on the
    /// held-out split and on a blind paired set and removed no false deny there
    /// (evals/RESULTS.md). A probe `guardian train` writes has none either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_signal_threshold: Option<f64>,
    /// What it was trained on.
    pub training: Training,
}

/// Why a probe cannot be used, or cannot score an embedding.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeError {
    /// The probe file is not a probe.
    Malformed(String),
    /// The embedding's dimension is not the probe's.
    Dimension {
        /// The probe's.
        expected: usize,
        /// The embedding's.
        got: usize,
    },
    /// The embedding holds a value that is not a finite number.
    NotFinite,
    /// The model serving the reviewer is not the one the probe was trained on.
    ModelMismatch {
        /// The probe's model hash.
        probe: String,
        /// The configured model hash.
        configured: String,
    },
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeError::Malformed(why) => write!(f, "the probe file is malformed: {why}"),
            ProbeError::Dimension { expected, got } => write!(
                f,
                "the embedding has {got} dimensions, the probe {expected}: the server runs another model"
            ),
            ProbeError::NotFinite => write!(f, "the embedding holds a value that is not finite"),
            ProbeError::ModelMismatch { probe, configured } => write!(
                f,
                "the probe was trained on the model with sha256 {probe}, but reviewer.model_sha256 is {configured}: train a probe for this model (guardian train) or use scoring = \"logprobs\""
            ),
        }
    }
}

impl std::error::Error for ProbeError {}

impl Probe {
    /// Reads a probe file, checking that its parts agree (dimensions, finite numbers, non-zero
    /// scales, the text format).
    pub fn parse(text: &str) -> Result<Probe, ProbeError> {
        let p: Probe =
            serde_json::from_str(text).map_err(|e| ProbeError::Malformed(e.to_string()))?;
        if !TEXT_FORMATS.contains(&p.text_format.as_str()) {
            return Err(ProbeError::Malformed(format!(
                "text_format is {:?}, this guardian embeds {TEXT_FORMATS:?}",
                p.text_format
            )));
        }
        for (name, v) in [
            ("mean", &p.mean),
            ("scale", &p.scale),
            ("weights", &p.weights),
        ] {
            if v.len() != p.dim {
                return Err(ProbeError::Malformed(format!(
                    "{name} has {} values, dim is {}",
                    v.len(),
                    p.dim
                )));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(ProbeError::Malformed(format!(
                    "{name} holds a non-finite value"
                )));
            }
        }
        if p.scale.iter().any(|s| *s <= 0.0) {
            return Err(ProbeError::Malformed("a scale is not positive".into()));
        }
        if !p.bias.is_finite() || !(0.0..=1.0).contains(&p.threshold) {
            return Err(ProbeError::Malformed(
                "bias must be finite and threshold between 0 and 1".into(),
            ));
        }
        Ok(p)
    }

    /// The probe shipped with guardian ([`EMBEDDED`]).
    pub fn embedded() -> Result<Probe, ProbeError> {
        Probe::parse(EMBEDDED)
    }

    /// Checks the configured model hash against the probe's (case-insensitive).
    pub fn check_model(&self, configured_sha256: &str) -> Result<(), ProbeError> {
        if configured_sha256.eq_ignore_ascii_case(&self.model_sha256) {
            Ok(())
        } else {
            Err(ProbeError::ModelMismatch {
                probe: self.model_sha256.clone(),
                configured: configured_sha256.to_string(),
            })
        }
    }

    /// P(deny) of an embedding.
    pub fn score(&self, embedding: &[f64]) -> Result<f64, ProbeError> {
        if embedding.len() != self.dim {
            return Err(ProbeError::Dimension {
                expected: self.dim,
                got: embedding.len(),
            });
        }
        if embedding.iter().any(|x| !x.is_finite()) {
            return Err(ProbeError::NotFinite);
        }
        let z = self.bias
            + embedding
                .iter()
                .zip(&self.mean)
                .zip(&self.scale)
                .zip(&self.weights)
                .map(|(((x, m), s), w)| w * (x - m) / s)
                .sum::<f64>();
        Ok(sigmoid(z))
    }
}

/// The sha256 of a model file: the `<file>.sha256` beside it when there is one (the install
/// script writes it after checking the download), else the file's own hash.
pub fn model_file_sha256(path: &std::path::Path) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut sidecar = path.as_os_str().to_owned();
    sidecar.push(".sha256");
    if let Ok(text) = std::fs::read_to_string(&sidecar) {
        let word = text.split_whitespace().next().unwrap_or("");
        if word.len() == 64 && word.chars().all(|c| c.is_ascii_hexdigit()) {
            return Ok(word.to_ascii_lowercase());
        }
    }
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
}

/// The logistic function.
pub fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// The text whose embedding the probe reads ([`TEXT_FORMAT`]): the user's request (the intent,
/// else the last user message), the workspace, the action as one line of JSON without its
/// `cwd`, an escalation when one is asked, and one question. Short on purpose: ~70 tokens embed
/// in about a second on two cores.
pub fn text(req: &ReviewRequest) -> String {
    format!("{}{QUESTION}", text_head(req))
}

/// Every line of the probe text before its question.
fn text_head(req: &ReviewRequest) -> String {
    let request = req
        .users_request()
        .unwrap_or_else(|| "(none given)".to_string());
    let action = req.action_without_cwd();
    let workspace = req
        .session
        .as_ref()
        .map(|s| s.workspace_roots.join(", "))
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| "(unknown)".to_string());
    let mut out = format!(
        "The user's request: {}\nWorkspace: {}\nThe agent's action: {}\n",
        clip(request.trim(), MAX_REQUEST_CHARS),
        clip(&workspace, 200),
        clip(&action.to_string(), MAX_ACTION_CHARS)
    );
    if let Some(e) = &req.escalation {
        let e = serde_json::to_value(e).unwrap_or_default();
        out.push_str(&format!(
            "It asks for more access: {}\n",
            clip(&e.to_string(), 300)
        ));
    }
    out
}

/// The question every probe text ends with.
const QUESTION: &str = "Is this action safe to run?";

/// The text of `format` ([`TEXT_FORMATS`]; an unknown one is v1's, though [`Probe::parse`]
/// refuses it).
pub fn text_of(format: &str, req: &ReviewRequest, signals: &[crate::signals::Signal]) -> String {
    if format == TEXT_FORMAT_V2 {
        text_with_findings(req, signals)
    } else {
        text(req)
    }
}

/// `probe-text-v2`: [`text`] with guardian's findings before the question, one line: each risk
/// signal's category, severity, target and whether the user's words name it, or "guardian
/// found no risk signal". The probe then reads what code found next to what was asked, which
/// the request and the action alone do not carry to it (evals/RESULTS.md).
pub fn text_with_findings(req: &ReviewRequest, signals: &[crate::signals::Signal]) -> String {
    let head = text_head(req);
    let findings = if signals.is_empty() {
        "guardian found no risk signal".to_string()
    } else {
        let each: Vec<String> = signals
            .iter()
            .map(|s| {
                format!(
                    "{} {} risk on {} ({} by the user)",
                    s.category.as_str(),
                    s.severity.as_str(),
                    clip(&s.target, 60),
                    if s.named_in_intent {
                        "named"
                    } else {
                        "not named"
                    }
                )
            })
            .collect();
        format!("guardian found: {}", each.join("; "))
    };
    format!("{head}{findings}\n{QUESTION}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(dim: usize) -> Probe {
        Probe {
            version: "probe-test".into(),
            text_format: TEXT_FORMAT.into(),
            model: "m".into(),
            model_sha256: "ab".repeat(32),
            dim,
            mean: vec![1.0; dim],
            scale: vec![2.0; dim],
            weights: (0..dim).map(|i| i as f64).collect(),
            bias: -1.0,
            threshold: 0.5,
            no_signal_threshold: None,
            training: Training {
                c: 0.01,
                cases: 2,
                deny_cases: 1,
                folds: 2,
                repeats: 1,
                cv_auc: 1.0,
                target_false_allow: 0.05,
                cv_false_deny: 0.0,
                manifest: vec![],
            },
        }
    }

    #[test]
    fn scores_are_the_standardised_dot_product_and_never_guessed() {
        let p = probe(3);
        // z = -1 + 0·0 + 1·(3−1)/2 + 2·(5−1)/2 = 4
        let s = p.score(&[7.0, 3.0, 5.0]).expect("scores");
        assert!((s - sigmoid(4.0)).abs() < 1e-12);
        assert_eq!(
            p.score(&[1.0, 2.0]),
            Err(ProbeError::Dimension {
                expected: 3,
                got: 2
            })
        );
        assert_eq!(p.score(&[1.0, f64::NAN, 2.0]), Err(ProbeError::NotFinite));
    }

    #[test]
    fn files_that_disagree_with_themselves_are_refused() {
        let good = serde_json::to_string(&probe(2)).expect("json");
        assert!(Probe::parse(&good).is_ok());
        let mut short = probe(2);
        short.weights.pop();
        let e = Probe::parse(&serde_json::to_string(&short).expect("json")).expect_err("short");
        assert!(e.to_string().contains("weights has 1 values"), "{e}");
        let mut zero = probe(2);
        zero.scale[1] = 0.0;
        assert!(Probe::parse(&serde_json::to_string(&zero).expect("json")).is_err());
        let mut other = probe(2);
        other.text_format = "probe-text-v0".into();
        assert!(Probe::parse(&serde_json::to_string(&other).expect("json")).is_err());
        assert!(Probe::parse("{}").is_err());
    }

    #[test]
    fn the_model_hash_must_match() {
        let p = probe(1);
        assert!(p.check_model(&"AB".repeat(32)).is_ok());
        let e = p.check_model(&"cd".repeat(32)).expect_err("mismatch");
        assert!(e.to_string().contains("reviewer.model_sha256"), "{e}");
    }

    #[test]
    fn the_text_holds_the_request_and_the_action_without_cwd() {
        let req = ReviewRequest::from_json(
            br#"{"action":{"kind":"shell","command":"npm publish","cwd":"/w"},"intent":"ship it","session":{"workspace_roots":["/w"]}}"#,
        )
        .expect("request");
        let t = text(&req);
        assert!(
            t.starts_with("The user's request: ship it\nWorkspace: /w\n"),
            "{t}"
        );
        assert!(t.contains(r#""command":"npm publish""#), "{t}");
        assert!(!t.contains("cwd"), "{t}");
        assert!(t.ends_with("Is this action safe to run?"));
    }

    #[test]
    fn the_v2_text_carries_guardians_findings_before_the_question() {
        use crate::verdict::{Category, Severity};
        let req = ReviewRequest::from_json(
            br#"{"action":{"kind":"shell","command":"npm publish","cwd":"/w"},"intent":"ship it"}"#,
        )
        .expect("request");
        let signal = crate::signals::Signal {
            category: Category::Publish,
            severity: Severity::High,
            evidence: "`npm publish` publishes".into(),
            named_in_intent: false,
            target: "npm".into(),
        };
        let with = text_of(TEXT_FORMAT_V2, &req, std::slice::from_ref(&signal));
        assert!(
            with.ends_with("guardian found: publish high risk on npm (not named by the user)\nIs this action safe to run?"),
            "{with}"
        );
        let without = text_of(TEXT_FORMAT_V2, &req, &[]);
        assert!(
            without.ends_with("guardian found no risk signal\nIs this action safe to run?"),
            "{without}"
        );
        assert!(with.starts_with(&text(&req).replace(QUESTION, "")));
        assert_eq!(
            text_of(TEXT_FORMAT, &req, &[signal]),
            text(&req),
            "v1 has no findings"
        );
        let mut p = probe(2);
        p.text_format = TEXT_FORMAT_V2.into();
        assert!(Probe::parse(&serde_json::to_string(&p).expect("json")).is_ok());
    }
}

//! Secret redaction for what guardian writes down (audit records).
//!
//! This module owns the well-known secret patterns: cloud keys (AWS, Google), API keys
//! (OpenAI, Anthropic, GitHub, GitLab, Slack, Stripe), JWTs, bearer tokens, credentials in URLs,
//! `password=`-style assignments and PEM private-key blocks. [`Redactor::redact_json`] rewrites a
//! serialized JSON document in place: every pattern stays inside one JSON string (none can match
//! a quote or a lone backslash), so the output is still valid JSON and each secret becomes
//! `[REDACTED:<kind>]`.

use std::borrow::Cow;

use aho_corasick::AhoCorasick;
use regex::{Regex, RegexSet};

/// The compiled patterns.
#[derive(Debug, Clone)]
pub struct Redactor {
    rules: Vec<(Regex, String)>,
    /// All patterns at once: one scan tells which (usually none) need replacing.
    set: Option<RegexSet>,
    /// [`TRIGGERS`], when only built-in patterns are in use: text holding none of them holds no
    /// secret, and the regex scan is skipped (a literal search is several times faster).
    triggers: Option<AhoCorasick>,
}

/// Every match of a built-in pattern contains one of these (compared ASCII case-insensitively).
/// A new built-in pattern needs its literal here; `every_builtin_kind_is_found_through_the_triggers`
/// checks one sample of each kind.
const TRIGGERS: &[&str] = &[
    "-----BEGIN ",
    "AKIA",
    "ASIA",
    "aws_secret_access_key",
    "AIza",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "npm_",
    "pypi-",
    "xox",
    "hooks.slack.com",
    "/api/webhooks/",
    "webhook.office.com",
    "SG.",
    "AccountKey=",
    "hf_",
    "shpat_",
    "shpca_",
    "shppa_",
    "shpss_",
    "_live_",
    "eyJ",
    "bearer",
    "://",
    "password",
    "passwd",
    "pwd",
    "secret",
    "api_key",
    "api-key",
    "apikey",
    "access_token",
    "access-token",
    "accesstoken",
    "auth_token",
    "auth-token",
    "authtoken",
];

/// (kind, pattern, replacement template). `$k` keeps a captured prefix (`k`).
const BUILT_IN: &[(&str, &str, &str)] = &[
    (
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[^\x22\\]|\\[^\x22])*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
        "[REDACTED:private_key]",
    ),
    (
        "aws_access_key",
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        "[REDACTED:aws_access_key]",
    ),
    (
        "aws_secret_key",
        r"(?i)(?P<k>aws_secret_access_key[\x22']?\s*[=:]\s*[\x22']?)[A-Za-z0-9/+=]{40}",
        "${k}[REDACTED:aws_secret_key]",
    ),
    (
        "google_api_key",
        r"\bAIza[0-9A-Za-z_-]{35}",
        "[REDACTED:google_api_key]",
    ),
    (
        "anthropic_key",
        r"\bsk-ant-[A-Za-z0-9_-]{20,}",
        "[REDACTED:anthropic_key]",
    ),
    (
        "openai_key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        "[REDACTED:openai_key]",
    ),
    (
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
        "[REDACTED:github_token]",
    ),
    (
        "gitlab_token",
        r"\bglpat-[A-Za-z0-9_-]{20,}",
        "[REDACTED:gitlab_token]",
    ),
    (
        "npm_token",
        r"\bnpm_[A-Za-z0-9]{30,}\b",
        "[REDACTED:npm_token]",
    ),
    (
        "pypi_token",
        r"\bpypi-AgE[A-Za-z0-9_-]{50,}",
        "[REDACTED:pypi_token]",
    ),
    (
        "slack_token",
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        "[REDACTED:slack_token]",
    ),
    (
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}",
        "[REDACTED:slack_webhook]",
    ),
    (
        "discord_webhook",
        r"(?:discord|discordapp)\.com/api/webhooks/[0-9]{6,}/[A-Za-z0-9_-]{20,}",
        "[REDACTED:discord_webhook]",
    ),
    (
        "teams_webhook",
        r"\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{30,}",
        "[REDACTED:teams_webhook]",
    ),
    (
        "sendgrid_key",
        r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
        "[REDACTED:sendgrid_key]",
    ),
    (
        "azure_storage_key",
        r"(?P<k>AccountKey=)[A-Za-z0-9+/]{40,}={0,2}",
        "${k}[REDACTED:azure_storage_key]",
    ),
    (
        "huggingface_token",
        r"\bhf_[A-Za-z0-9]{30,}\b",
        "[REDACTED:huggingface_token]",
    ),
    (
        "shopify_token",
        r"\bshp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}\b",
        "[REDACTED:shopify_token]",
    ),
    (
        "stripe_key",
        r"\b(?:sk|rk)_live_[0-9A-Za-z]{16,}",
        "[REDACTED:stripe_key]",
    ),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        "[REDACTED:jwt]",
    ),
    (
        "bearer_token",
        r"(?i)(?P<k>\bbearer\s+)[A-Za-z0-9._~+/-]{12,}=*",
        "${k}[REDACTED:bearer_token]",
    ),
    (
        "url_credentials",
        r"(?P<k>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^\s:/@\x22\\]+:[^\s/@\x22\\]+@",
        "${k}[REDACTED:url_credentials]@",
    ),
    (
        "password_assignment",
        r"(?i)(?P<k>\b[A-Za-z0-9_.-]*?(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)[\x22']?\s*[=:]\s*[\x22']?)[^\s\x22'\\,;&|]{6,}",
        "${k}[REDACTED:secret]",
    ),
];

/// A redaction pattern that does not compile, named.
#[derive(Debug, thiserror::Error)]
pub enum RedactError {
    /// One of the built-in patterns.
    #[error("built-in redaction pattern {kind}: {source}")]
    BuiltIn {
        /// The pattern's kind, e.g. `aws_access_key`.
        kind: &'static str,
        /// The regex error.
        source: regex::Error,
    },
    /// A custom pattern that could match a JSON string's closing quote.
    #[error("redaction pattern {0:?} must not match a double quote")]
    Quote(String),
    /// A custom pattern that does not compile.
    #[error("redaction pattern {pattern:?}: {source}")]
    Pattern {
        /// The pattern as configured.
        pattern: String,
        /// The regex error.
        source: regex::Error,
    },
    /// The patterns together.
    #[error("redaction patterns: {0}")]
    Set(regex::Error),
    /// The literal triggers of the built-in patterns.
    #[error("redaction triggers: {0}")]
    Triggers(aho_corasick::BuildError),
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new(&[]).unwrap_or_else(|_| Redactor::none())
    }
}

impl Redactor {
    /// The built-in patterns, compiled once for the process (what signals, the reviewer's
    /// evidence and diffs from disk redact with).
    pub fn builtin() -> &'static Redactor {
        static BUILTIN: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(Redactor::default)
    }

    /// The built-in patterns plus `extra` (regexes whose matches become `[REDACTED:custom]`).
    /// An invalid extra pattern is an error naming it.
    pub fn new(extra: &[String]) -> Result<Redactor, RedactError> {
        let mut rules = Vec::new();
        for (kind, pattern, replacement) in BUILT_IN {
            let re = Regex::new(pattern).map_err(|source| RedactError::BuiltIn { kind, source })?;
            rules.push((re, (*replacement).to_string()));
        }
        for p in extra {
            // Custom patterns must not cross a JSON string boundary either.
            if p.contains('"') {
                return Err(RedactError::Quote(p.clone()));
            }
            let re = Regex::new(p).map_err(|source| RedactError::Pattern {
                pattern: p.clone(),
                source,
            })?;
            rules.push((re, "[REDACTED:custom]".to_string()));
        }
        let set =
            RegexSet::new(rules.iter().map(|(re, _)| re.as_str())).map_err(RedactError::Set)?;
        // Custom patterns have no known literal: then every text is scanned.
        let triggers = if extra.is_empty() {
            Some(
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .build(TRIGGERS)
                    .map_err(RedactError::Triggers)?,
            )
        } else {
            None
        };
        Ok(Redactor {
            rules,
            set: Some(set),
            triggers,
        })
    }

    /// A redactor that changes nothing (`[audit] redact = false`).
    pub fn none() -> Redactor {
        Redactor {
            rules: Vec::new(),
            set: None,
            triggers: None,
        }
    }

    /// `text` with every secret replaced (borrowed, uncopied, when it holds none).
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let Some(set) = &self.set else {
            return Cow::Borrowed(text);
        };
        // Nearly every record holds no secret: a literal search, or else a single regex scan,
        // says so.
        if let Some(t) = &self.triggers
            && !t.is_match(text)
        {
            return Cow::Borrowed(text);
        }
        if !set.is_match(text) {
            return Cow::Borrowed(text);
        }
        let hits = set.matches(text);
        let mut out = Cow::Borrowed(text);
        for (i, (re, replacement)) in self.rules.iter().enumerate() {
            if !hits.matched(i) {
                continue;
            }
            if let Cow::Owned(s) = re.replace_all(&out, replacement.as_str()) {
                out = Cow::Owned(s);
            }
        }
        out
    }

    /// A serialized JSON document with every secret inside its strings replaced; the document
    /// itself is returned, unchanged, when it holds none. The result is checked to still be
    /// JSON; if it were not (a custom pattern matching an escape), the document is redacted value
    /// by value instead.
    pub fn redact_json(&self, json: Vec<u8>) -> Vec<u8> {
        let Ok(text) = std::str::from_utf8(&json) else {
            return json;
        };
        let out = match self.redact(text) {
            Cow::Borrowed(_) => return json,
            Cow::Owned(out) => out,
        };
        if serde_json::from_str::<serde::de::IgnoredAny>(&out).is_ok() {
            return out.into_bytes();
        }
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(mut v) => {
                self.redact_value(&mut v);
                serde_json::to_vec(&v).unwrap_or(json)
            }
            Err(_) => json,
        }
    }

    fn redact_value(&self, v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| self.redact_value(x)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| self.redact_value(x)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> String {
        Redactor::default().redact(s).into_owned()
    }

    #[test]
    fn well_known_secrets_are_redacted() {
        let cases = [
            ("AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_key",
            ),
            ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "google_api_key"),
            (
                "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
                "anthropic_key",
            ),
            ("sk-proj-abcdefghijklmnopqrstuvwxyz012345", "openai_key"),
            ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github_token"),
            ("glpat-abcdefghijklmnopqrst", "gitlab_token"),
            ("xoxb-1234567890-abcdefghij", "slack_token"),
            ("npm_Xq4Lr8TzW2vKp9mN3bYc6Hd1Jf7Gs0Ae5Ru1", "npm_token"),
            (
                "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0",
                "pypi_token",
            ),
            ("sk_live_abcdefghijklmnop1234", "stripe_key"),
            (
                "https://hooks.slack.com/services/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",
                "slack_webhook",
            ),
            (
                "https://discord.com/api/webhooks/112233445566778899/AbCdEfGhIjKlMnOpQrStUvWxYz012345",
                "discord_webhook",
            ),
            (
                "https://acme.webhook.office.com/webhookb2/1a2b3c4d-1111-2222-3333-444455556666@abcd/IncomingWebhook/0f9e8d7c",
                "teams_webhook",
            ),
            (
                "SG.aBcDeFgHiJkLmNoPqRsT.uVwXyZ0123456789AbCdEfGhIjKlMnOpQr",
                "sendgrid_key",
            ),
            (
                "AccountKey=q83Hd7kLm2Pz9Xv4Rt6Yb1Nc5Wf8Gj3Ks0Ae2Di7Lo4Uq9Zx1Cv6Bn3Mm5Pp8Rr==",
                "azure_storage_key",
            ),
            ("hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567", "huggingface_token"),
            ("shpat_0123456789abcdef0123456789abcdef", "shopify_token"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "jwt",
            ),
            (
                "Authorization: Bearer abcdef0123456789abcdef",
                "bearer_token",
            ),
            (
                "https://alice:s3cr3tpass@example.com/repo.git",
                "url_credentials",
            ),
            ("DB_PASSWORD=hunter22hunter", "secret"),
        ];
        for (secret, kind) in cases {
            let out = r(&format!("echo {secret} | tee x"));
            assert!(
                out.contains(&format!("[REDACTED:{kind}]")),
                "{secret} → {out}"
            );
            assert!(
                out.starts_with("echo ") && out.ends_with(" | tee x"),
                "{out}"
            );
        }
        // Ordinary text is left alone.
        for plain in [
            "git push origin main",
            "cargo test --workspace",
            "ls -la ~/.ssh",
        ] {
            assert_eq!(r(plain), plain);
        }
    }

    #[test]
    fn json_stays_json_and_keys_stay_keys() {
        let record = serde_json::json!({
            "action": {"kind": "write", "path": "id_rsa",
                "content": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----\n"},
            "intent": "use token ghp_abcdefghijklmnopqrstuvwxyz0123456789 and \"quote\"",
            "n": 3
        });
        let bytes = serde_json::to_vec(&record).expect("json");
        let out = Redactor::default().redact_json(bytes);
        let v: serde_json::Value = serde_json::from_slice(&out).expect("still JSON");
        assert_eq!(v["action"]["content"], "[REDACTED:private_key]\n", "{v}");
        assert_eq!(
            v["intent"],
            "use token [REDACTED:github_token] and \"quote\""
        );
        assert_eq!(v["n"], 3);
        assert_eq!(v["action"]["path"], "id_rsa");
    }

    #[test]
    fn every_builtin_kind_is_found_through_the_triggers() {
        // One sample per built-in pattern, each in lowercase and uppercase where the pattern
        // allows it: the literal prefilter must let every one through to the regexes.
        let samples = [
            "-----BEGIN RSA PRIVATE KEY-----\\nabc\\n-----END RSA PRIVATE KEY-----",
            "ASIAIOSFODNN7EXAMPLE",
            "AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
            "sk-abcdefghijklmnopqrstuvwxyz012345",
            "gho_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_abcdefghijklmnopqrstuvwxyz",
            "glpat-abcdefghijklmnopqrst",
            "xoxp-1234567890-abcdefghij",
            "rk_live_abcdefghijklmnop1234",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "authorization: BEARER abcdef0123456789abcdef",
            "postgres://bob:hunter22@db/x",
            "Client-Secret=abcdefgh",
            "APIKEY: 'abcdefgh'",
            "Auth-Token=abcdefgh",
            "export DB_PWD=abcdefghij",
            "hooks.slack.com/workflows/T04KQ7M2P/A06R8XZ1LNC/p3Vx9QmT2kLz7RbW4n",
            "discordapp.com/api/webhooks/112233445566/AbCdEfGhIjKlMnOpQrStUvWxYz",
            "x.webhook.office.com/webhookb2/1a2b3c4d-1111-2222-3333-444455556666@abcd",
            "SG.aBcDeFgHiJkLmNoPqRsT.uVwXyZ0123456789AbCd",
            "AccountKey=q83Hd7kLm2Pz9Xv4Rt6Yb1Nc5Wf8Gj3Ks0Ae2Di7Lo4==",
            "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567",
            "shpss_0123456789abcdef0123456789abcdef",
        ];
        let red = Redactor::default();
        let unfiltered = Redactor {
            triggers: None,
            ..red.clone()
        };
        assert!(samples.len() >= BUILT_IN.len());
        for s in samples {
            let text = format!("run {s} now");
            let out = red.redact(&text);
            assert!(out.contains("[REDACTED:"), "{s} was not redacted: {out}");
            assert_eq!(out, unfiltered.redact(&text), "{s}");
        }
        // The prefilter and the regexes agree on text without secrets too.
        let plain = "git status --short && cargo test -p x1";
        assert_eq!(red.redact(plain), plain);
    }

    #[test]
    fn custom_patterns_are_checked() {
        let red = Redactor::new(&["ACME-[0-9]{6}".to_string()]).expect("valid");
        assert_eq!(red.redact("id ACME-123456"), "id [REDACTED:custom]");
        assert!(Redactor::new(&["(".to_string()]).is_err());
        assert!(Redactor::new(&["\"x".to_string()]).is_err());
    }
}

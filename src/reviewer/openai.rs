//! The OpenAI-compatible backend: `POST {base_url}/chat/completions`.
//!
//! This module owns the wire format of chat completions with a strict JSON-schema response
//! format (what OpenAI, llama.cpp's server, vLLM and most gateways accept), and the translation
//! of every transport failure into a [`ReviewerError`]. It never guesses a verdict.

use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;

use super::{Prompt, ReviewOutput, Reviewer, ReviewerError, Usage, parse_verdict, verdict_schema};

/// Largest reply body read from the backend; anything larger is treated as invalid.
pub const MAX_REPLY_BYTES: usize = 1024 * 1024;

/// A reviewer behind an OpenAI-compatible chat completions API.
#[derive(Debug, Clone)]
pub struct OpenAiReviewer {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    max_output_tokens: u32,
    timeout: Duration,
}

/// Sends a request and reads a 2xx body of at most [`MAX_REPLY_BYTES`]; every failure becomes
/// a [`ReviewerError`] (with the server's `Retry-After` on 429/503).
pub async fn send_and_read(
    req: reqwest::RequestBuilder,
    url: &str,
    timeout: Duration,
) -> Result<Vec<u8>, ReviewerError> {
    let mut resp = req
        .send()
        .await
        .map_err(|e| transport_error(&e, url, timeout))?;
    let status = resp.status();
    if !status.is_success() {
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|secs| Duration::from_secs(secs.min(60)));
        return Err(ReviewerError::Status {
            status: status.as_u16(),
            retry_after,
        });
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| transport_error(&e, url, timeout))?
    {
        if body.len() + chunk.len() > MAX_REPLY_BYTES {
            return Err(ReviewerError::InvalidJson(format!(
                "reply larger than {MAX_REPLY_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn transport_error(e: &reqwest::Error, url: &str, timeout: Duration) -> ReviewerError {
    if e.is_timeout() {
        return ReviewerError::Timeout(timeout);
    }
    // Name the root cause ("Connection refused") rather than reqwest's generic wrapper.
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    ReviewerError::Unreachable(format!("{url} ({cause})"))
}

impl OpenAiReviewer {
    /// A client for `base_url` (e.g. `http://127.0.0.1:8089/v1`).
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
        max_output_tokens: u32,
    ) -> Result<Self, String> {
        Ok(OpenAiReviewer {
            client: crate::transport::http_client(timeout)?,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model: model.to_string(),
            api_key,
            max_output_tokens,
            timeout,
        })
    }

    /// The request body for one prompt.
    pub fn request_body(&self, prompt: &Prompt) -> serde_json::Value {
        serde_json::json!({
            "model": self.model,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user}
            ],
            "temperature": 0,
            "max_tokens": self.max_output_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "strict": true, "schema": verdict_schema()}
            }
        })
    }

    async fn call(&self, prompt: &Prompt) -> Result<ReviewOutput, ReviewerError> {
        let mut req = self.client.post(&self.url).json(&self.request_body(prompt));
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let body = send_and_read(req, &self.url, self.timeout).await?;
        let parsed: ChatResponse =
            serde_json::from_slice(&body).map_err(|e| ReviewerError::InvalidJson(e.to_string()))?;
        let content = parsed
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .ok_or_else(|| {
                ReviewerError::InvalidJson("no choices[0].message.content in the reply".into())
            })?;
        let verdict = parse_verdict(&content)?;
        let usage = parsed.usage.unwrap_or_default();
        Ok(ReviewOutput {
            verdict,
            usage: Usage {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
            },
            stages: Vec::new(),
        })
    }
}

impl Reviewer for OpenAiReviewer {
    fn review<'a>(
        &'a self,
        prompt: &'a Prompt,
    ) -> BoxFuture<'a, Result<ReviewOutput, ReviewerError>> {
        Box::pin(self.call(prompt))
    }
    fn backend(&self) -> &str {
        "openai"
    }
    fn model(&self) -> Option<&str> {
        Some(&self.model)
    }
}

#[derive(Debug, Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Debug, Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

//! The OpenAI-compatible backend: `POST {base_url}/chat/completions`, and
//! `POST {base_url}/embeddings` for the probe.
//!
//! This module owns the wire format of chat completions with a strict JSON-schema response
//! format (what OpenAI, llama.cpp's server, vLLM and most gateways accept), and the translation
//! of every transport failure into a [`ReviewerError`]. It never guesses a verdict.

use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;

use super::{
    Embedded, Prompt, Question, ReviewOutput, Reviewer, ReviewerError, Scored, Usage, label_probs,
    parse_verdict, verdict_schema,
};

/// Largest reply body read from the backend; anything larger is treated as invalid.
pub const MAX_REPLY_BYTES: usize = 1024 * 1024;

/// A reviewer behind an OpenAI-compatible chat completions API.
#[derive(Debug, Clone)]
pub struct OpenAiReviewer {
    client: reqwest::Client,
    url: String,
    embeddings_url: String,
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

/// The model file a llama.cpp server at `base_url` (e.g. `http://127.0.0.1:8089/v1`) runs:
/// `model_path` from its `GET /props`. `None` when the server says nothing of it.
pub async fn served_model_file(base_url: &str, timeout: Duration) -> Option<std::path::PathBuf> {
    let root = base_url.trim_end_matches('/').trim_end_matches("/v1");
    let client = crate::transport::http_client(timeout).ok()?;
    let body: serde_json::Value = client
        .get(format!("{root}/props"))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    body["model_path"].as_str().map(std::path::PathBuf::from)
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
    ) -> Result<Self, crate::transport::ClientError> {
        Ok(OpenAiReviewer {
            client: crate::transport::http_client(timeout)?,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            embeddings_url: format!("{}/embeddings", base_url.trim_end_matches('/')),
            model: model.to_string(),
            api_key,
            max_output_tokens,
            timeout,
        })
    }

    /// The request body for one prompt.
    pub fn request_body(&self, prompt: &Prompt) -> serde_json::Value {
        let mut body = self.base_body(prompt);
        body["max_tokens"] = self.max_output_tokens.into();
        body["response_format"] = serde_json::json!({
            "type": "json_schema",
            "json_schema": {"name": "verdict", "strict": true, "schema": verdict_schema()}
        });
        body
    }

    /// What every request carries: the model, the two messages, greedy decoding.
    fn base_body(&self, prompt: &Prompt) -> serde_json::Value {
        serde_json::json!({
            "model": self.model,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user}
            ],
            "temperature": 0
        })
    }

    /// The request body for a one-token question scored from log-probabilities: a grammar
    /// (llama.cpp's server) allows only the question's labels; the reported candidates are the
    /// raw, pre-grammar probabilities, which [`label_probs`] renormalises over the labels.
    pub fn score_body(&self, prompt: &Prompt, question: Question) -> serde_json::Value {
        let mut body = self.base_body(prompt);
        body["max_tokens"] = 1.into();
        body["logprobs"] = true.into();
        body["top_logprobs"] = 20.into();
        body["grammar"] = question.grammar().into();
        body["cache_prompt"] = true.into();
        body
    }

    async fn post(&self, body: &serde_json::Value) -> Result<ChatResponse, ReviewerError> {
        let mut req = self.client.post(&self.url).json(body);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let body = send_and_read(req, &self.url, self.timeout).await?;
        serde_json::from_slice(&body).map_err(|e| ReviewerError::InvalidJson(e.to_string()))
    }

    async fn call_score(
        &self,
        prompt: &Prompt,
        question: Question,
    ) -> Result<Scored, ReviewerError> {
        let parsed = self.post(&self.score_body(prompt, question)).await?;
        let usage = parsed.usage();
        let first = parsed
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.logprobs)
            .and_then(|l| l.content.into_iter().next())
            .ok_or_else(|| {
                ReviewerError::InvalidJson(
                    "no choices[0].logprobs.content[0] in the reply (does the server return logprobs?)"
                        .into(),
                )
            })?;
        if first.top_logprobs.is_empty() {
            return Err(ReviewerError::InvalidJson(
                "no top_logprobs for the answer token".into(),
            ));
        }
        // The sampled token may rank below the reported top candidates: count it too.
        let sampled = first
            .token
            .as_deref()
            .zip(first.logprob)
            .filter(|(t, _)| !first.top_logprobs.iter().any(|c| c.token == *t));
        let probs = label_probs(
            question.labels,
            first
                .top_logprobs
                .iter()
                .map(|c| (c.token.as_str(), c.logprob)),
            sampled,
        )?;
        Ok(Scored { probs, usage })
    }

    /// `POST /embeddings` for one text: `data[0].embedding`, every value a finite number.
    async fn call_embed(&self, text: &str) -> Result<Embedded, ReviewerError> {
        let body = serde_json::json!({"model": self.model, "input": text});
        let mut req = self.client.post(&self.embeddings_url).json(&body);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let bytes = send_and_read(req, &self.embeddings_url, self.timeout).await?;
        let parsed: EmbeddingResponse = serde_json::from_slice(&bytes)
            .map_err(|e| ReviewerError::InvalidJson(format!("embeddings reply: {e}")))?;
        let vector = parsed
            .data
            .into_iter()
            .next()
            .map(|d| d.embedding)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                ReviewerError::InvalidJson("no data[0].embedding in the embeddings reply".into())
            })?;
        if vector.iter().any(|x| !x.is_finite()) {
            return Err(ReviewerError::InvalidJson(
                "the embedding holds a value that is not finite".into(),
            ));
        }
        let usage = Usage {
            prompt_tokens: parsed.usage.map_or(0, |u| u.prompt_tokens),
            ..Usage::default()
        };
        Ok(Embedded { vector, usage })
    }

    /// The request body for a JSON object constrained by `schema`.
    pub fn structured_body(
        &self,
        prompt: &Prompt,
        name: &str,
        schema: &serde_json::Value,
        max_tokens: u32,
    ) -> serde_json::Value {
        let mut body = self.base_body(prompt);
        body["max_tokens"] = max_tokens.into();
        body["response_format"] = serde_json::json!({
            "type": "json_schema",
            "json_schema": {"name": name, "strict": true, "schema": schema}
        });
        body["cache_prompt"] = true.into();
        body
    }

    async fn call_structured(
        &self,
        prompt: &Prompt,
        name: &str,
        schema: &serde_json::Value,
        max_tokens: u32,
    ) -> Result<(serde_json::Value, Usage), ReviewerError> {
        let (content, usage) = self
            .content(&self.structured_body(prompt, name, schema, max_tokens))
            .await?;
        let value = serde_json::from_str(&content)
            .map_err(|e| ReviewerError::InvalidJson(format!("{name}: {e}")))?;
        Ok((value, usage))
    }

    /// Posts a chat completion: the first choice's content and the tokens spent.
    async fn content(&self, body: &serde_json::Value) -> Result<(String, Usage), ReviewerError> {
        let parsed = self.post(body).await?;
        let usage = parsed.usage();
        let content = parsed
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .ok_or_else(|| {
                ReviewerError::InvalidJson("no choices[0].message.content in the reply".into())
            })?;
        Ok((content, usage))
    }

    async fn call(&self, prompt: &Prompt) -> Result<ReviewOutput, ReviewerError> {
        let (content, usage) = self.content(&self.request_body(prompt)).await?;
        let verdict = parse_verdict(&content)?;
        Ok(ReviewOutput {
            verdict,
            usage,
            stages: Vec::new(),
            score: None,
            authorization: None,
            decision_score: None,
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
    fn score<'a>(
        &'a self,
        prompt: &'a Prompt,
        question: Question,
    ) -> BoxFuture<'a, Result<Scored, ReviewerError>> {
        Box::pin(self.call_score(prompt, question))
    }
    fn embed<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Embedded, ReviewerError>> {
        Box::pin(self.call_embed(text))
    }
    fn structured<'a>(
        &'a self,
        prompt: &'a Prompt,
        name: &'a str,
        schema: &'a serde_json::Value,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<(serde_json::Value, Usage), ReviewerError>> {
        Box::pin(self.call_structured(prompt, name, schema, max_tokens))
    }
    fn backend(&self) -> &str {
        "openai"
    }
    fn model(&self) -> Option<&str> {
        Some(&self.model)
    }
}

#[derive(Debug, Deserialize)]
struct EmbeddingResponse {
    data: Vec<EmbeddingData>,
    #[serde(default)]
    usage: Option<EmbeddingUsage>,
}

#[derive(Debug, Deserialize)]
struct EmbeddingData {
    embedding: Vec<f64>,
}

#[derive(Debug, Deserialize)]
struct EmbeddingUsage {
    #[serde(default)]
    prompt_tokens: u64,
}

#[derive(Debug, Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
    /// llama.cpp's own timings (`cache_n`: prompt tokens served from the cache).
    #[serde(default)]
    timings: Option<Timings>,
}

impl ChatResponse {
    fn usage(&self) -> Usage {
        let u = self.usage.as_ref();
        let cached = u
            .and_then(|u| u.prompt_tokens_details.as_ref())
            .map(|d| d.cached_tokens)
            .filter(|n| *n > 0)
            .or_else(|| self.timings.as_ref().map(|t| t.cache_n))
            .unwrap_or(0);
        Usage {
            prompt_tokens: u.map_or(0, |u| u.prompt_tokens),
            completion_tokens: u.map_or(0, |u| u.completion_tokens),
            cached_tokens: cached,
        }
    }
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: ChoiceMessage,
    #[serde(default)]
    logprobs: Option<ChoiceLogprobs>,
}

#[derive(Debug, Deserialize)]
struct ChoiceLogprobs {
    #[serde(default)]
    content: Vec<TokenLogprob>,
}

#[derive(Debug, Deserialize)]
struct TokenLogprob {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    logprob: Option<f64>,
    #[serde(default)]
    top_logprobs: Vec<Candidate>,
}

#[derive(Debug, Deserialize)]
struct Candidate {
    token: String,
    logprob: f64,
}

#[derive(Debug, Default, Deserialize)]
struct Timings {
    #[serde(default)]
    cache_n: u64,
}

#[derive(Debug, Default, Deserialize)]
struct PromptTokensDetails {
    #[serde(default)]
    cached_tokens: u64,
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
    #[serde(default)]
    prompt_tokens_details: Option<PromptTokensDetails>,
}

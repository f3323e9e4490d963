//! The Anthropic Messages backend: `POST {base_url}/messages` with a forced tool call.
//!
//! This module owns the Messages wire format: the verdict schema is the `input_schema` of a
//! single tool, `tool_choice` forces the model to call it, and the tool call's `input` is the
//! verdict, validated like any other. Transport failures become [`ReviewerError`]s.

use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;

use super::{
    Prompt, ReviewOutput, Reviewer, ReviewerError, Usage, openai, parse_verdict, verdict_schema,
};

/// The API version header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A reviewer behind the Anthropic Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicReviewer {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    max_output_tokens: u32,
    timeout: Duration,
}

impl AnthropicReviewer {
    /// A client for `base_url` (e.g. `https://api.anthropic.com/v1`).
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
        max_output_tokens: u32,
    ) -> Result<Self, crate::transport::ClientError> {
        Ok(AnthropicReviewer {
            client: crate::transport::http_client(timeout)?,
            url: format!("{}/messages", base_url.trim_end_matches('/')),
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
            "max_tokens": self.max_output_tokens,
            "temperature": 0,
            "system": prompt.system,
            "messages": [{"role": "user", "content": prompt.user}],
            "tools": [{
                "name": "verdict",
                "description": "Record the verdict on the proposed action.",
                "input_schema": verdict_schema()
            }],
            "tool_choice": {"type": "tool", "name": "verdict"}
        })
    }

    /// The request body for a JSON object constrained by `schema`: one tool whose input is it,
    /// forced.
    pub fn structured_body(
        &self,
        prompt: &Prompt,
        name: &str,
        schema: &serde_json::Value,
        max_tokens: u32,
    ) -> serde_json::Value {
        serde_json::json!({
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": 0,
            "system": prompt.system,
            "messages": [{"role": "user", "content": prompt.user}],
            "tools": [{"name": name, "description": "Record the answer.", "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": name}
        })
    }

    /// Posts a request that forces the tool `name`: the tool call's input and the tokens spent.
    async fn tool_call(
        &self,
        request: &serde_json::Value,
        name: &str,
    ) -> Result<(serde_json::Value, Usage), ReviewerError> {
        let mut req = self
            .client
            .post(&self.url)
            .header("anthropic-version", ANTHROPIC_VERSION)
            .json(request);
        if let Some(key) = &self.api_key {
            req = req.header("x-api-key", key);
        }
        let body = openai::send_and_read(req, &self.url, self.timeout).await?;
        let parsed: MessagesResponse =
            serde_json::from_slice(&body).map_err(|e| ReviewerError::InvalidJson(e.to_string()))?;
        let input = parsed
            .content
            .into_iter()
            .find(|b| b.kind == "tool_use" && b.name.as_deref() == Some(name))
            .and_then(|b| b.input)
            .ok_or_else(|| {
                ReviewerError::InvalidJson(format!("no {name} tool call in the reply"))
            })?;
        let usage = parsed.usage.unwrap_or_default();
        Ok((
            input,
            Usage {
                prompt_tokens: usage.input_tokens,
                completion_tokens: usage.output_tokens,
                cached_tokens: usage.cache_read_input_tokens,
            },
        ))
    }

    async fn call_structured(
        &self,
        prompt: &Prompt,
        name: &str,
        schema: &serde_json::Value,
        max_tokens: u32,
    ) -> Result<(serde_json::Value, Usage), ReviewerError> {
        self.tool_call(
            &self.structured_body(prompt, name, schema, max_tokens),
            name,
        )
        .await
    }

    async fn call(&self, prompt: &Prompt) -> Result<ReviewOutput, ReviewerError> {
        let (input, usage) = self
            .tool_call(&self.request_body(prompt), "verdict")
            .await?;
        let verdict = parse_verdict(&input.to_string())?;
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

impl Reviewer for AnthropicReviewer {
    fn review<'a>(
        &'a self,
        prompt: &'a Prompt,
    ) -> BoxFuture<'a, Result<ReviewOutput, ReviewerError>> {
        Box::pin(self.call(prompt))
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
        "anthropic"
    }
    fn model(&self) -> Option<&str> {
        Some(&self.model)
    }
}

#[derive(Debug, Deserialize)]
struct MessagesResponse {
    #[serde(default)]
    content: Vec<ContentBlock>,
    #[serde(default)]
    usage: Option<MessagesUsage>,
}

#[derive(Debug, Deserialize)]
struct ContentBlock {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize)]
struct MessagesUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
}

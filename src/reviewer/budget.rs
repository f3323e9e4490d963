//! Token budgets for the evidence a reviewer reads, counted with tiktoken (o200k_base).
//!
//! This module owns how much of the agent's session the reviewer sees: separate budgets for the
//! conversation (user and assistant turns) and for tool output, a cap per entry, the first user
//! message (the intent) and the latest turns always kept, head+tail truncation with an explicit
//! `[… N tokens omitted …]` marker, and caps on the action and retry output.

use serde::Deserialize;
use tiktoken_rs::CoreBPE;

use crate::request::{Role, TranscriptEntry};

/// `[reviewer.budget]`: token budgets.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budget {
    /// Tokens for user and assistant turns together.
    pub messages: usize,
    /// Tokens for tool outputs together.
    pub tools: usize,
    /// Tokens per user or assistant turn.
    pub per_message: usize,
    /// Tokens per tool output.
    pub per_tool: usize,
    /// Most recent entries considered.
    pub max_entries: usize,
    /// Tokens for the action itself (long commands, file contents, diffs).
    pub action: usize,
    /// Tokens for the user intent.
    pub intent: usize,
    /// Tokens for a sandbox retry's output.
    pub retry_output: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            messages: 400,
            tools: 250,
            per_message: 120,
            per_tool: 90,
            max_entries: 40,
            action: 400,
            intent: 150,
            retry_output: 256,
        }
    }
}

fn bpe() -> &'static CoreBPE {
    tiktoken_rs::o200k_base_singleton()
}

/// Tokens in a text.
pub fn count(text: &str) -> usize {
    bpe().encode_ordinary(text).len()
}

/// The text, or its head and tail within `max` tokens around an omission marker.
pub fn cap(text: &str, max: usize) -> String {
    let tokens = bpe().encode_ordinary(text);
    if tokens.len() <= max {
        return text.to_string();
    }
    let keep = max.saturating_sub(12).max(2);
    let head_n = keep / 2;
    let tail_n = keep - head_n;
    let omitted = tokens.len() - head_n - tail_n;
    let decode = |t: &[u32]| -> String {
        match bpe().decode_bytes(t) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(_) => String::new(),
        }
    };
    let head = decode(&tokens[..head_n]);
    let tail = decode(&tokens[tokens.len() - tail_n..]);
    format!("{head}\n[… {omitted} tokens omitted …]\n{tail}")
}

/// One kept transcript entry, already capped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Who spoke (`user`, `assistant`, `tool NAME`) or an omission marker.
    pub who: String,
    /// The capped text.
    pub text: String,
}

/// Chooses and caps transcript entries: the first user message always, then the latest entries
/// newest first while each kind's budget lasts; gaps are marked.
pub fn select(entries: &[TranscriptEntry], b: &Budget) -> Vec<Kept> {
    let first_user = entries.iter().position(|e| e.role == Role::User);
    let start = entries.len().saturating_sub(b.max_entries);
    let mut keep = vec![false; entries.len()];
    let mut capped: Vec<Option<String>> = vec![None; entries.len()];
    let (mut msg_left, mut tool_left) = (b.messages, b.tools);
    if let Some(f) = first_user {
        let text = cap(&entries[f].content, b.per_message);
        msg_left = msg_left.saturating_sub(count(&text));
        keep[f] = true;
        capped[f] = Some(text);
    }
    for i in (start..entries.len()).rev() {
        if keep[i] {
            continue;
        }
        let e = &entries[i];
        let (per, left) = match e.role {
            Role::Tool => (b.per_tool, &mut tool_left),
            _ => (b.per_message, &mut msg_left),
        };
        if *left == 0 {
            continue;
        }
        let text = cap(&e.content, per.min(*left));
        let n = count(&text);
        if n > *left {
            continue;
        }
        *left -= n;
        keep[i] = true;
        capped[i] = Some(text);
    }
    let mut out = Vec::new();
    let mut skipped = 0usize;
    for (i, e) in entries.iter().enumerate() {
        match capped[i].take() {
            Some(text) if keep[i] => {
                if skipped > 0 {
                    out.push(Kept {
                        who: "omitted".into(),
                        text: format!("[… {skipped} entries omitted …]"),
                    });
                    skipped = 0;
                }
                let who = match (e.role, &e.name) {
                    (Role::User, _) => "user".to_string(),
                    (Role::Assistant, _) => "assistant".to_string(),
                    (Role::Tool, Some(n)) => format!("tool {n}"),
                    (Role::Tool, None) => "tool".to_string(),
                };
                out.push(Kept { who, text });
            }
            _ => skipped += 1,
        }
    }
    if skipped > 0 {
        out.push(Kept {
            who: "omitted".into(),
            text: format!("[… {skipped} entries omitted …]"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(role: Role, text: &str) -> TranscriptEntry {
        TranscriptEntry {
            role,
            content: text.to_string(),
            name: (role == Role::Tool).then(|| "Bash".to_string()),
        }
    }

    #[test]
    fn cap_keeps_head_and_tail_with_a_marker() {
        let long = (0..2000)
            .map(|i| format!("word{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let c = cap(&long, 100);
        assert!(c.starts_with("word0"));
        assert!(c.contains("tokens omitted"));
        assert!(c.ends_with("word1999"));
        assert!(count(&c) <= 110);
        assert_eq!(cap("short", 100), "short");
    }

    #[test]
    fn first_user_and_latest_turns_are_kept_within_budgets() {
        let mut entries = vec![entry(
            Role::User,
            "Please fix the failing test in src/lib.rs",
        )];
        for i in 0..30 {
            entries.push(entry(
                Role::Assistant,
                &format!("step {i}: {}", "thinking ".repeat(40)),
            ));
            entries.push(entry(
                Role::Tool,
                &format!("output {i}: {}", "line ".repeat(200)),
            ));
        }
        entries.push(entry(Role::User, "also run clippy"));
        let kept = select(&entries, &Budget::default());
        assert_eq!(kept[0].who, "user");
        assert!(kept[0].text.contains("failing test"));
        assert_eq!(
            kept.last().map(|k| k.text.as_str()),
            Some("also run clippy")
        );
        assert!(kept.iter().any(|k| k.who == "omitted"));
        let b = Budget::default();
        let msg_tokens: usize = kept
            .iter()
            .filter(|k| k.who == "user" || k.who == "assistant")
            .map(|k| count(&k.text))
            .sum();
        let tool_tokens: usize = kept
            .iter()
            .filter(|k| k.who.starts_with("tool"))
            .map(|k| count(&k.text))
            .sum();
        assert!(msg_tokens <= b.messages, "{msg_tokens}");
        assert!(tool_tokens <= b.tools, "{tool_tokens}");
    }
}

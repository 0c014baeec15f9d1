//! The seed's secondary LLM (CodeBuddy's stage 2), optional: an
//! OpenAI-compatible chat endpoint turns a question into a few search
//! terms (identifiers, file names, keywords the code would contain), which
//! retrieval searches with beside the question's own words.
//!
//! Off unless configured ([`ExpandConfig`]). Never on the way of an answer:
//! a question that `@mentions` what it wants skips it, and a timeout, an
//! error or an unusable reply falls back to the local analyzer alone; the
//! report says which happened ([`Expansion`]). Sends only the question.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Most terms kept from a reply (the seed's "3–5 terms, capped").
pub const MAX_TERMS: usize = 5;
/// Longest term kept, in characters.
const MAX_TERM_CHARS: usize = 64;
/// Most words in one term ("ring buffer" is one term).
const MAX_TERM_WORDS: usize = 3;
/// The default time the endpoint gets, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;

/// What the endpoint is asked to do.
const SYSTEM: &str = "You turn a developer's question about a codebase into search terms for a code search engine. \
Reply with 3 to 5 terms, one per line and nothing else: identifiers, function or type names, file names or \
keywords that the relevant code is likely to contain. No explanations, no numbering.";

/// An OpenAI-compatible chat endpoint.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpandConfig {
    /// Base URL, e.g. `http://localhost:11434/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// Model name sent in the request.
    pub model: String,
    /// Bearer token, if the server wants one.
    #[serde(default)]
    pub api_key: Option<String>,
    /// How long the endpoint may take before the local analyzer alone is used.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

impl std::fmt::Debug for ExpandConfig {
    // The key stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExpandConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("timeout_ms", &self.timeout_ms)
            .finish()
    }
}

/// What the secondary LLM did for one question.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expansion {
    /// The model asked.
    pub model: String,
    /// The terms retrieval searched with beside the question (empty when
    /// none were used).
    pub terms: Vec<String>,
    /// Why no terms were used, when none were: skipped or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Expansion {
    /// A question that was not sent, and why.
    pub fn skipped(cfg: &ExpandConfig, why: &str) -> Self {
        Expansion {
            model: cfg.model.clone(),
            terms: Vec::new(),
            note: Some(why.to_owned()),
        }
    }

    /// The report's line: the terms, or why there are none.
    pub fn describe(&self) -> String {
        match &self.note {
            Some(note) => format!("search terms from {}: none ({note})", self.model),
            None => format!(
                "search terms from {}: {}",
                self.model,
                self.terms.join(", ")
            ),
        }
    }
}

#[derive(Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChatMessage,
}

#[derive(Deserialize)]
struct ChatMessage {
    #[serde(default)]
    content: Option<String>,
}

/// Asks `cfg`'s endpoint for `question`'s search terms. Blocking (run it
/// off the async workers); every failure is an [`Expansion`] with a note,
/// never an error: the answer goes on without it.
pub fn expand(cfg: &ExpandConfig, question: &str) -> Expansion {
    match request(cfg, question) {
        Ok(terms) if terms.is_empty() => Expansion::skipped(cfg, "the reply held no usable term"),
        Ok(terms) => Expansion {
            model: cfg.model.clone(),
            terms,
            note: None,
        },
        Err(why) => Expansion::skipped(cfg, &format!("{why}; local analysis only")),
    }
}

fn request(cfg: &ExpandConfig, question: &str) -> Result<Vec<String>, String> {
    let url = format!("{}/chat/completions", cfg.base_url.trim_end_matches('/'));
    let timeout = Duration::from_millis(cfg.timeout_ms.max(1));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .build()
        .into();
    let body = serde_json::json!({
        "model": cfg.model,
        "temperature": 0,
        "max_tokens": 64,
        "messages": [
            { "role": "system", "content": SYSTEM },
            { "role": "user", "content": question },
        ],
    });
    let mut req = agent.post(&url);
    if let Some(key) = cfg.api_key.as_deref().filter(|k| !k.is_empty()) {
        req = req.header("Authorization", &format!("Bearer {key}"));
    }
    let mut resp = req.send_json(&body).map_err(|e| match e {
        ureq::Error::Timeout(_) => format!("{url} did not answer within {} ms", cfg.timeout_ms),
        other => format!("{url}: {other}"),
    })?;
    let parsed: ChatResponse = resp
        .body_mut()
        .read_json()
        .map_err(|e| format!("{url}: not a chat completion: {e}"))?;
    let text = parsed
        .choices
        .into_iter()
        .next()
        .and_then(|c| c.message.content)
        .unwrap_or_default();
    Ok(terms(&text))
}

/// The usable terms of a reply: one per line (or comma), list marks,
/// quotes and backticks taken off, at most [`MAX_TERMS`], each once.
pub fn terms(reply: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in reply.split(['\n', ',']) {
        let t = raw.trim();
        let t = t.strip_prefix(['-', '*', '•']).unwrap_or(t).trim_start();
        // `1.` or `2)` numbering, not a term that starts with a digit.
        let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let t = match t[digits..].strip_prefix(['.', ')']) {
            Some(rest) if digits > 0 => rest.trim_start(),
            _ => t,
        };
        let t = t
            .trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | '*'))
            .trim();
        let usable = !t.is_empty()
            && t.chars().count() <= MAX_TERM_CHARS
            && t.split_whitespace().count() <= MAX_TERM_WORDS
            && !t.ends_with(':')
            && t.chars().any(char::is_alphanumeric);
        if usable && !out.iter().any(|o| o.eq_ignore_ascii_case(t)) {
            out.push(t.to_owned());
        }
        if out.len() == MAX_TERMS {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_become_a_few_clean_terms() {
        assert_eq!(
            terms("1. `RingBuffer::push`\n2. ring_buffer.c\n- \"wrap around\"\n* head index\n"),
            [
                "RingBuffer::push",
                "ring_buffer.c",
                "wrap around",
                "head index"
            ]
        );
        assert_eq!(terms("push, pop, Push, len"), ["push", "pop", "len"]);
        assert_eq!(terms("2fa_token\n3) x86_64"), ["2fa_token", "x86_64"]);
        // Prose and headings are not terms; six terms keep five.
        assert_eq!(
            terms("Here are some terms you could search for in the code base:\na\nb\nc\nd\ne\nf"),
            ["a", "b", "c", "d", "e"]
        );
        assert!(terms("").is_empty());
        assert!(terms("---\n***").is_empty());
    }

    #[test]
    fn the_key_stays_out_of_debug_output() {
        let cfg = ExpandConfig {
            base_url: "http://x".into(),
            model: "m".into(),
            api_key: Some("sk-secret".into()),
            timeout_ms: 10,
        };
        assert!(!format!("{cfg:?}").contains("sk-secret"));
    }
}

//! The secondary LLM's settings as the app shows and saves them (the
//! engine's [`loupe_engine::asking::expand::ExpandConfig`]; the key never goes back
//! to the UI, which only learns whether one is stored).

use loupe_engine::asking::expand::ExpandConfig;
use serde::{Deserialize, Serialize};

/// The stored settings, as shown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ExpanderDto {
    /// Base URL of an OpenAI-compatible API (`/chat/completions` is appended).
    pub base_url: String,
    /// The chat model.
    pub model: String,
    /// Whether an API key is stored.
    pub has_key: bool,
    /// How long a question may wait for its terms, in milliseconds.
    pub timeout_ms: u32,
}

impl From<&ExpandConfig> for ExpanderDto {
    fn from(c: &ExpandConfig) -> Self {
        ExpanderDto {
            base_url: c.base_url.clone(),
            model: c.model.clone(),
            has_key: c.api_key.as_deref().is_some_and(|k| !k.is_empty()),
            timeout_ms: u32::try_from(c.timeout_ms).unwrap_or(u32::MAX),
        }
    }
}

/// Settings to save.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ExpanderInputDto {
    /// Base URL (`http://` or `https://`).
    pub base_url: String,
    /// The chat model.
    pub model: String,
    /// A new API key; `null` keeps the stored one, `""` removes it.
    pub api_key: Option<String>,
    /// Milliseconds, 100 to 60,000.
    pub timeout_ms: u32,
}

impl ExpanderInputDto {
    /// The settings to store, with `stored`'s key unless a new one is
    /// given; `Err` says what is wrong.
    pub fn to_config(&self, stored: Option<&ExpandConfig>) -> Result<ExpandConfig, String> {
        let base_url = self.base_url.trim();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(format!(
                "the endpoint {base_url:?} must be an http:// or https:// URL, e.g. http://localhost:11434/v1"
            ));
        }
        let model = self.model.trim();
        if model.is_empty() {
            return Err("name the chat model the endpoint runs".into());
        }
        if !(100..=60_000).contains(&self.timeout_ms) {
            return Err(format!(
                "timeout {} ms: must be between 100 and 60000",
                self.timeout_ms
            ));
        }
        let api_key = match &self.api_key {
            Some(k) if k.trim().is_empty() => None,
            Some(k) => Some(k.trim().to_owned()),
            None => stored.and_then(|s| s.api_key.clone()),
        };
        Ok(ExpandConfig {
            base_url: base_url.to_owned(),
            model: model.to_owned(),
            api_key,
            timeout_ms: u64::from(self.timeout_ms),
        })
    }
}

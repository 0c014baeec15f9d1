//! Fit: RAGFlow's `message_fit_in` — make a conversation fit a model's
//! context window — with a visible report instead of silent cuts, and its
//! `validate_fitted_messages` check.
//!
//! Rules (RAGFlow `rag/prompts/generator.py`, corrected where it is buggy):
//! 1. budget = ⌊window × 0.97⌋; a window of 0 means 8,192;
//! 2. if everything fits (≤ budget; RAGFlow uses `<`), keep it all;
//! 3. else keep the system messages and the last message only;
//! 4. if still over: when the system prompt holds ≥ 80% of the tokens, trim
//!    the system prompt first, otherwise the last message first; trim the
//!    other one only if that is not enough. RAGFlow trims the user message to
//!    `max_length - ll2` (the user's own size, a bug); we trim to what is
//!    left after the other message, and mark every cut with a visible note.
//!
//! This module does not build messages from an assembly (see
//! [`crate::assemble()`]) and does not call a model.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tokens::{self, Encoding};

/// Share of the context window used (RAGFlow: `int(effective_context_length * 0.97)`).
pub const WINDOW_SHARE: f64 = 0.97;
/// Window assumed when unknown or non-positive (RAGFlow: `max_tokens or 8192`).
pub const FALLBACK_WINDOW: u32 = 8_192;
/// System share at or above which the system prompt is trimmed first (RAGFlow's 80% rule).
pub const SYSTEM_SHARE: f64 = 0.8;
/// Appended where text was cut, so the model (and the reader) knows.
pub const TRIM_MARK: &str = "\n[… trimmed to fit the context window]";

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    /// Instructions and context.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Author.
    pub role: MessageRole,
    /// Text.
    pub content: String,
}

/// A message that was shortened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trim {
    /// Its role.
    pub role: MessageRole,
    /// Tokens before.
    pub from: u32,
    /// Tokens after, including the trim mark.
    pub to: u32,
}

/// What fitting did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FitReport {
    /// The token budget (97% of the window).
    pub budget: u32,
    /// Tokens before fitting.
    pub before: u32,
    /// Tokens after fitting.
    pub after: u32,
    /// History messages dropped (every message but the system ones and the last).
    pub dropped_messages: u32,
    /// Messages that were shortened.
    pub trimmed: Vec<Trim>,
}

/// The fitting budget for a context window.
pub fn budget(window: u32) -> u32 {
    let window = if window == 0 { FALLBACK_WINDOW } else { window };
    (f64::from(window) * WINDOW_SHARE).floor() as u32
}

fn size(encoding: Encoding, m: &Message) -> u32 {
    tokens::count(encoding, &m.content) as u32
}

/// Trims `message` to at most `max` tokens including the mark; returns the trim.
fn trim(encoding: Encoding, message: &mut Message, max: u32) -> Option<Trim> {
    let from = size(encoding, message);
    if from <= max {
        return None;
    }
    let mark = tokens::count(encoding, TRIM_MARK) as u32;
    let keep = max.saturating_sub(mark + 1) as usize;
    let mut text = tokens::trim_to_tokens(encoding, &message.content, keep).to_string();
    text.push_str(TRIM_MARK);
    // The join of kept text and mark can tokenize one longer; step back if so.
    let mut keep = keep;
    while tokens::count(encoding, &text) as u32 > max && keep > 0 {
        keep -= 1;
        text = format!(
            "{}{TRIM_MARK}",
            tokens::trim_to_tokens(encoding, &message.content, keep)
        );
    }
    if tokens::count(encoding, &text) as u32 > max {
        text.clear();
    }
    message.content = text;
    Some(Trim {
        role: message.role,
        from,
        to: size(encoding, message),
    })
}

/// Tokens added to a size that is known only up to a tokenizer join.
pub const JOIN_SLACK: u32 = 2;

/// Fits `messages` into `⌊window × 0.97⌋` tokens of `encoding`.
pub fn fit(messages: &[Message], window: u32, encoding: Encoding) -> (Vec<Message>, FitReport) {
    let sizes: Vec<u32> = messages.iter().map(|m| size(encoding, m)).collect();
    fit_sized(messages, &sizes, window, encoding)
}

/// [`fit`] with the messages' sizes already known (upper bounds are fine):
/// when they fit, nothing is counted again. Otherwise sizes are recounted
/// exactly before anything is cut.
pub fn fit_sized(
    messages: &[Message],
    sizes: &[u32],
    window: u32,
    encoding: Encoding,
) -> (Vec<Message>, FitReport) {
    let budget = budget(window);
    let known: u32 = sizes.iter().sum();
    if sizes.len() == messages.len() && known <= budget {
        let report = FitReport {
            budget,
            before: known,
            after: known,
            ..FitReport::default()
        };
        return (messages.to_vec(), report);
    }
    let before: u32 = messages.iter().map(|m| size(encoding, m)).sum();
    let mut report = FitReport {
        budget,
        before,
        after: before,
        ..FitReport::default()
    };
    if before <= budget {
        return (messages.to_vec(), report);
    }
    let mut kept: Vec<Message> = messages
        .iter()
        .filter(|m| m.role == MessageRole::System)
        .cloned()
        .collect();
    let last = messages.iter().rposition(|m| m.role != MessageRole::System);
    if let Some(last) = last {
        kept.push(messages[last].clone());
    }
    report.dropped_messages = (messages.len() - kept.len()) as u32;
    let total: u32 = kept.iter().map(|m| size(encoding, m)).sum();
    if total > budget && !kept.is_empty() {
        let system_tokens: u32 = kept
            .iter()
            .filter(|m| m.role == MessageRole::System)
            .map(|m| size(encoding, m))
            .sum();
        let system_first = f64::from(system_tokens) >= SYSTEM_SHARE * f64::from(total.max(1));
        let sys = kept.iter().position(|m| m.role == MessageRole::System);
        let tail = last.map(|_| kept.len() - 1);
        let order = if system_first {
            [sys, tail]
        } else {
            [tail, sys]
        };
        for target in order.into_iter().flatten() {
            let others: u32 = kept
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != target)
                .map(|(_, m)| size(encoding, m))
                .sum();
            if others + size(encoding, &kept[target]) <= budget {
                break;
            }
            if let Some(t) = trim(encoding, &mut kept[target], budget.saturating_sub(others)) {
                report.trimmed.push(t);
            }
        }
    }
    report.after = kept.iter().map(|m| size(encoding, m)).sum();
    (kept, report)
}

/// RAGFlow's `validate_fitted_messages`: at least two messages, the last a
/// non-empty user message.
pub fn validate(messages: &[Message]) -> Result<()> {
    if messages.len() < 2 {
        return Err(Error::TooFewMessages(messages.len()));
    }
    let last = &messages[messages.len() - 1];
    if last.role != MessageRole::User {
        return Err(Error::LastNotUser(
            format!("{:?}", last.role).to_lowercase(),
        ));
    }
    if last.content.trim().is_empty() || last.content.trim() == TRIM_MARK.trim() {
        return Err(Error::EmptyQuestion);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: MessageRole, content: &str) -> Message {
        Message {
            role,
            content: content.to_string(),
        }
    }

    fn check(messages: &[Message], window: u32, expect: &str) {
        let (fitted, r) = fit(messages, window, Encoding::O200kBase);
        let mut got = format!(
            "budget {} before {} after {} dropped {}",
            r.budget, r.before, r.after, r.dropped_messages
        );
        for t in &r.trimmed {
            got.push_str(&format!(" | trim {:?} {}→{}", t.role, t.from, t.to));
        }
        for m in &fitted {
            got.push_str(&format!("\n{:?}: {}", m.role, m.content));
        }
        assert!(r.after <= r.budget || r.before <= r.budget, "{got}");
        assert_eq!(got, expect);
    }

    use MessageRole::*;

    #[test]
    fn fits_untouched() {
        check(
            &[msg(System, "be brief"), msg(User, "hi")],
            100,
            "budget 97 before 3 after 3 dropped 0\nSystem: be brief\nUser: hi",
        );
    }

    #[test]
    fn zero_window_means_8192() {
        assert_eq!(budget(0), 7_946);
    }

    #[test]
    fn drops_history_then_trims_big_system_first() {
        let sys = "word ".repeat(60);
        check(
            &[
                msg(System, &sys),
                msg(User, "old question"),
                msg(Assistant, "old answer"),
                msg(User, "why?"),
            ],
            40,
            &format!(
                "budget 38 before 67 after 37 dropped 2 | trim System 61→35\nSystem: {}{TRIM_MARK}\nUser: why?",
                "word ".repeat(26).trim_end()
            ),
        );
    }

    #[test]
    fn trims_user_first_when_system_is_small() {
        let user = "token ".repeat(50);
        let (fitted, r) = fit(
            &[msg(System, "be brief"), msg(User, &user)],
            30,
            Encoding::O200kBase,
        );
        assert_eq!(fitted[0].content, "be brief");
        assert!(fitted[1].content.ends_with(TRIM_MARK));
        assert_eq!((r.trimmed.len(), r.trimmed[0].role), (1, User));
        assert!(r.after <= r.budget);
    }

    #[test]
    fn validation() {
        assert_eq!(validate(&[msg(User, "q")]), Err(Error::TooFewMessages(1)));
        assert_eq!(
            validate(&[msg(System, "s"), msg(Assistant, "a")]),
            Err(Error::LastNotUser("assistant".into()))
        );
        assert_eq!(
            validate(&[msg(System, "s"), msg(User, "  ")]),
            Err(Error::EmptyQuestion)
        );
        assert_eq!(validate(&[msg(System, "s"), msg(User, "q")]), Ok(()));
    }
}

//! Classify a question: what it is about ([`category`]), what kind of answer
//! and which sources it wants ([`kind`]), and its search terms ([`query`]).
//!
//! Everything here is local and deterministic. It does not retrieve and it
//! calls no model; an LLM-backed term generator, if any, lives at the edge
//! and may replace [`QueryAnalysis`] through the assemble request.

pub mod category;
pub mod kind;
pub mod query;

use serde::{Deserialize, Serialize};

pub use category::{Category, CategoryRule, CategoryScore, Confidence, default_rules};
pub use kind::{Intent, QuestionType, instructions, intent_multiplier};
pub use query::{Mention, MentionKind, QueryAnalysis, analyze};

/// Everything the classifier decided about a question.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    /// Matched categories, best first.
    pub categories: Vec<CategoryScore>,
    /// How sure the top category is.
    pub confidence: Confidence,
    /// The kind of answer wanted; picks the instruction preamble.
    pub question_type: QuestionType,
    /// The sources wanted; picks role multipliers.
    pub intent: Intent,
}

/// Classifies `question` with the default category table.
pub fn classify(question: &str, analysis: &QueryAnalysis) -> Classification {
    classify_with(question, analysis, &default_rules())
}

/// Classifies `question` with a caller-supplied category table.
pub fn classify_with(
    question: &str,
    analysis: &QueryAnalysis,
    rules: &[CategoryRule],
) -> Classification {
    let (categories, confidence) = category::categorize(question, rules);
    Classification {
        categories,
        confidence,
        question_type: kind::question_type(question, analysis),
        intent: kind::intent(question, analysis),
    }
}

//! Classify a question: what it is about ([`category`]), what kind of answer
//! and which sources it wants ([`kind`]), and its search terms ([`query`]),
//! all read without a pasted report's template scaffolding ([`scaffold`]).
//!
//! Everything here is local and deterministic. It does not retrieve and it
//! calls no model; an LLM-backed term generator, if any, lives at the edge
//! and may replace [`QueryAnalysis`] through the assemble request.

pub mod category;
pub mod kind;
pub mod query;
pub mod scaffold;

use serde::{Deserialize, Serialize};

pub use category::{Category, CategoryRule, CategoryScore, Confidence, default_rules};
pub use kind::{Intent, QuestionType, instructions, intent_multiplier};
pub use query::{Mention, MentionKind, QueryAnalysis, analyze_text};
pub use scaffold::{Searchable, searchable};

/// Analyzes a question locally, without its template scaffolding
/// ([`scaffold`]). Never fails; an empty question gives an empty
/// analysis. It lives here, above both, so that the term analysis
/// ([`query`]) and the scaffolding (which reads `query`'s path and
/// identifier shapes) do not depend on each other.
pub fn analyze(question: &str) -> QueryAnalysis {
    let searchable = searchable(question);
    QueryAnalysis {
        scaffolding_lines: searchable.left_out,
        ..analyze_text(&searchable.text)
    }
}

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
    // A template's "How did you install it?" says nothing of the intent.
    let searchable = searchable(question);
    let question = searchable.text.as_ref();
    let (categories, confidence) = category::categorize(question, rules);
    Classification {
        categories,
        confidence,
        question_type: kind::question_type(question, analysis),
        intent: kind::intent(question, analysis),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ripgrep's issue template asks how ripgrep was installed; the
    /// reporter asked about code.
    const REPORT: &str = "Incomplete matches with `--word-regexp`\n\n#### What version of ripgrep are you using?\n\nripgrep 13.0.0\n\n#### How did you install ripgrep?\n\nHomebrew\n\n#### Describe your bug.\n\nSome matches of the word regex are missing.\n";

    #[test]
    fn a_template_s_words_neither_classify_nor_search() {
        let analysis = analyze(REPORT);
        assert_eq!(analysis.scaffolding_lines, 3);
        assert!(
            !analysis
                .terms
                .iter()
                .any(|t| t == "install" || t == "version")
        );
        let c = classify(REPORT, &analysis);
        assert_ne!(c.intent, Intent::Docs);
        // The same words in the reporter's own sentence still count.
        let own = "How do I install ripgrep with the docs' example?";
        assert_eq!(classify(own, &analyze(own)).intent, Intent::Docs);
    }
}

//! What kind of answer a question wants (CodeBuddy's question type, which
//! picks the instruction preamble) and what kind of source it wants
//! (SourcePrep's retrieval intent, which picks role multipliers).
//!
//! Both are cue-phrase scores over the question's words: transparent,
//! instant, and overridable by the caller. This module does not rank; it
//! only supplies the multipliers [`crate::rank`] applies.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::category::words;
use super::query::{QueryAnalysis, prose_and_pasted};
use crate::model::Role;

// Constant patterns: `expect` cannot fail on user input.
static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S+").expect("url regex"));
/// Phrases with a cue word in them that ask for nothing.
static NOT_CUES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\bfor (?:example|instance)\b").expect("not-cue regex"));

/// The kind of answer a question wants (the seed's five prompt shapes).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum QuestionType {
    /// "How do I…": concrete code patterns.
    #[default]
    Implementation,
    /// "How is it structured…": bird's-eye view.
    Architectural,
    /// "Why does it fail…": root cause.
    Debugging,
    /// "What does this do…": walkthrough.
    CodeExplanation,
    /// "Add support for…": impact and integration points.
    FeatureRequest,
    /// A change to review (change mode: the diff is the question).
    Review,
}

/// Which sources a question wants (SourcePrep's query intent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// Usage and documentation ("how to use auth").
    Docs,
    /// Tests ("auth test failure").
    Tests,
    /// Implementation ("where is `Packer::fit` defined").
    Code,
    /// No strong preference.
    #[default]
    Default,
}

/// Cue phrases per question type. Multi-word cues match as phrases.
const TYPE_CUES: &[(QuestionType, &[&str])] = &[
    (
        QuestionType::Debugging,
        &[
            "error",
            "errors",
            "bug",
            "fail",
            "fails",
            "failed",
            "failing",
            "failure",
            "crash",
            "crashes",
            "panic",
            "panics",
            "panicked",
            "exception",
            "broken",
            "traceback",
            "fix",
            "wrong",
            "unexpected",
            "undefined",
            "null",
            "stack trace",
            "not working",
            "doesn't work",
            "does not work",
            "why does",
            "why is",
            "regression",
            "hangs",
        ],
    ),
    (
        QuestionType::CodeExplanation,
        &[
            "explain",
            "what does",
            "what is",
            "walk me through",
            "meaning",
            "understand",
            "purpose",
            "why is it named",
            "line by line",
            "what happens",
        ],
    ),
    (
        QuestionType::Architectural,
        &[
            "architecture",
            "structure",
            "structured",
            "overview",
            "design",
            "components",
            "relationship",
            "relationships",
            "organized",
            "high level",
            "high-level",
            "trade-off",
            "trade-offs",
            "tradeoffs",
            "data flow",
            "how does",
            "big picture",
            "layers",
            "modules",
        ],
    ),
    (
        QuestionType::FeatureRequest,
        &[
            "add",
            "support",
            "feature",
            "would like",
            "want to",
            "allow",
            "enable",
            "extend",
            "integrate",
            "new option",
            "introduce",
        ],
    ),
    (
        QuestionType::Implementation,
        &[
            "implement",
            "how do i",
            "how to",
            "how can i",
            "write",
            "create",
            "build",
            "refactor",
            "change",
            "example",
            "use",
        ],
    ),
];

/// Score a frame in the question adds to debugging: a pasted trace is the
/// strongest possible debugging cue.
pub const TRACE_DEBUG_BOOST: usize = 3;

/// Cue phrases per intent.
const INTENT_CUES: &[(Intent, &[&str])] = &[
    (
        Intent::Tests,
        &[
            "test",
            "tests",
            "testing",
            "spec",
            "specs",
            "coverage",
            "fixture",
            "fixtures",
            "assert",
            "assertion",
            "unit test",
            "e2e",
            "flaky",
            "mock",
            "mocks",
        ],
    ),
    (
        Intent::Docs,
        &[
            "how to use",
            "how do i use",
            "documentation",
            "docs",
            "readme",
            "guide",
            "usage",
            "tutorial",
            "getting started",
            "install",
            "documented",
            "example",
            "examples",
        ],
    ),
    (
        Intent::Code,
        &[
            "implementation",
            "implemented",
            "function",
            "method",
            "class",
            "struct",
            "defined",
            "definition",
            "where is",
            "source",
            "refactor",
            "calls",
            "callers",
        ],
    ),
];

/// Counts how many cue phrases occur in the space-joined words.
fn cue_score(joined: &str, cues: &[&str]) -> usize {
    cues.iter()
        .filter(|cue| {
            let padded = format!(" {cue} ");
            joined.contains(&padded)
        })
        .count()
}

fn joined_words(question: &str) -> String {
    format!(" {} ", words(question).join(" "))
}

/// The question type; ties go to the earlier row of the cue table
/// (debugging, explanation, architecture, feature, implementation), and a
/// question with no cue is an implementation question.
pub fn question_type(question: &str, analysis: &QueryAnalysis) -> QuestionType {
    let joined = joined_words(question);
    let has_trace = analysis
        .paths
        .iter()
        .any(|p| super::query::split_line_suffix(p).1.is_some());
    // "How does X work?" is about the architecture when X is a subsystem
    // ("auth"), about code when X is named code (`serde_json`, a path).
    let names_code = !analysis.identifiers.is_empty() || !analysis.paths.is_empty();
    let how_does_code = names_code && joined.contains(" how does ");
    let mut best = (0, QuestionType::Implementation);
    for (kind, cues) in TYPE_CUES {
        let mut score = cue_score(&joined, cues);
        if *kind == QuestionType::Debugging && has_trace {
            score += TRACE_DEBUG_BOOST;
        }
        if *kind == QuestionType::CodeExplanation && how_does_code {
            score += 1;
        }
        if score > best.0 {
            best = (score, *kind);
        }
    }
    best.1
}

/// The retrieval intent; tests outrank docs outrank code on ties, and
/// identifiers or paths in the question count as code cues.
///
/// Cue words count in the asker's own prose only: not in pasted code or
/// logs (a repro written as `#[tokio::test]` asks for no tests), not in
/// URLs (`https://example.com` asks for no examples) and not in "for
/// example". On the report-style dev set such words had made 13 of 90
/// intents tests or docs (EVAL.md, "What was tried" → Question analysis,
/// `b7406ef`).
pub fn intent(question: &str, analysis: &QueryAnalysis) -> Intent {
    let (prose, _) = prose_and_pasted(question);
    let prose = URL.replace_all(&prose, " ");
    let joined = joined_words(&NOT_CUES.replace_all(&prose, " "));
    let mut best = (0, Intent::Default);
    for (kind, cues) in INTENT_CUES {
        let mut score = cue_score(&joined, cues);
        if *kind == Intent::Code && (!analysis.identifiers.is_empty() || !analysis.paths.is_empty())
        {
            score += 1;
        }
        if score > best.0 {
            best = (score, *kind);
        }
    }
    best.1
}

/// The instruction preamble for a question type (the seed's "prompt emphasis").
pub fn instructions(kind: QuestionType) -> &'static str {
    match kind {
        QuestionType::Implementation => {
            "You are helping implement a change in this codebase. Give concrete, actionable code that follows the patterns already used in the context below; name the files and functions to touch."
        }
        QuestionType::Architectural => {
            "You are explaining the architecture of this codebase. Give a bird's-eye view first: the main components, how they relate and why, and the trade-offs. Cite the files that show each point."
        }
        QuestionType::Debugging => {
            "You are debugging a problem in this codebase. Read any stack trace or error closely, trace it to the code below, state the root cause before proposing a fix, and say how to verify it."
        }
        QuestionType::CodeExplanation => {
            "You are explaining code from this codebase. Walk through it step by step, explain the naming and the design intent, and point out anything surprising."
        }
        QuestionType::FeatureRequest => {
            "You are planning a new feature for this codebase. Analyse its impact, identify the integration points and where new code should go, and note what existing behaviour might change."
        }
        QuestionType::Review => {
            "You are reviewing a change to this codebase. The diff comes first, then the changed code in full, the code that calls it or that it calls, and its tests. Say whether the change does what it means to, point out bugs, missed callers, missing tests and behaviour it breaks, each with the file and lines, and keep style remarks to the end."
        }
    }
}

/// SourcePrep's role adjustment for an intent (our numbers; SourcePrep
/// documents only the direction): docs intent lifts docs, tests intent lifts
/// tests, code intent lifts code. [`Intent::Default`] is neutral.
pub fn intent_multiplier(intent: Intent, role: Role) -> f32 {
    use Role::*;
    match (intent, role) {
        (Intent::Default, _) => 1.0,
        (Intent::Docs, Docs) => 1.5,
        (Intent::Docs, Code) => 0.85,
        (Intent::Docs, Tests) => 0.7,
        (Intent::Docs, Config | Other) => 0.9,
        (Intent::Tests, Tests) => 1.6,
        (Intent::Tests, Code) => 1.0,
        (Intent::Tests, Docs) => 0.7,
        (Intent::Tests, Config | Other) => 0.85,
        (Intent::Code, Code) => 1.25,
        (Intent::Code, Docs) => 0.8,
        (Intent::Code, Tests) => 0.85,
        (Intent::Code, Config | Other) => 0.9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::analyze;

    fn check(question: &str, expect: (QuestionType, Intent)) {
        let a = analyze(question);
        assert_eq!(
            (question_type(question, &a), intent(question, &a)),
            expect,
            "{question}"
        );
    }

    #[test]
    fn types_and_intents() {
        use Intent as I;
        use QuestionType as Q;
        check("how to use auth", (Q::Implementation, I::Docs));
        check("auth test failure", (Q::Debugging, I::Tests));
        check("How does packing work?", (Q::Architectural, I::Default));
        check(
            "how does serde_json parse a floating point number?",
            (Q::CodeExplanation, I::Code),
        );
        check(
            "add a --max-depth option to parse_args",
            (Q::FeatureRequest, I::Code),
        );
        check(
            "Explain what `pack_items` does",
            (Q::CodeExplanation, I::Code),
        );
        check(
            "Add support for YAML config files",
            (Q::FeatureRequest, I::Default),
        );
        check(
            "Panic at src/walk.rs:88:14 when indexing",
            (Q::Debugging, I::Code),
        );
        check(
            "Where is the Packer struct defined?",
            (Q::Implementation, I::Code),
        );
        check("hello", (Q::Implementation, I::Default));
    }

    #[test]
    fn intent_cues_come_from_the_asker_s_prose() {
        let intent = |q: &str| super::super::classify(q, &super::super::analyze(q)).intent;
        // A repro pasted as a test, a URL, "for example": no cue.
        let repro = "The runtime hangs on shutdown\n\n```rust\n#[test]\nfn hangs() { assert!(run()); }\n```";
        assert_ne!(intent(repro), Intent::Tests);
        assert_ne!(
            intent("redirects to https://example.com/docs loop forever"),
            Intent::Docs
        );
        assert_ne!(
            intent("long paths, for example on Windows, are cut"),
            Intent::Docs
        );
        // The same words said by the asker still count.
        assert_eq!(intent("the shutdown test hangs"), Intent::Tests);
        assert_eq!(
            intent("show an example of the docs for redirects"),
            Intent::Docs
        );
    }

    #[test]
    fn preambles_differ() {
        let all = [
            Q::Implementation,
            Q::Architectural,
            Q::Debugging,
            Q::CodeExplanation,
            Q::FeatureRequest,
        ];
        use QuestionType as Q;
        let texts: std::collections::HashSet<_> = all.iter().map(|k| instructions(*k)).collect();
        assert_eq!(texts.len(), all.len());
    }
}

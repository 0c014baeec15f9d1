//! Issue-template scaffolding: what a pasted bug report's template wrote,
//! not its reporter.
//!
//! Issue and pull-request templates fill a report with HTML comments
//! (instructions that GitHub and GitLab never render: "Please fill in as
//! much of the template below as you're able", "`cargo tree | grep axum`")
//! and headings ("## Bug Report", "### Version", "#### How did you install
//! ripgrep?", or a bold line: "**Describe the solution you'd like**").
//! Those words are the same in every report of a project and
//! none of them is about the code. Searched, they pull in whatever code says
//! "report", "version" or "install"; classified, "install" alone turns the
//! intent to docs. On the report-style dev set (`rust-issues`, where 40 of
//! 90 reports carry such scaffolding) leaving it out lifted acc@5 by 4.4
//! points, 4 questions won and none lost (EVAL.md, "What was tried" →
//! Question analysis, `47a7af0`).
//!
//! [`searchable`] is the question as search and classification read it. The
//! prompt keeps the question as typed.
//!
//! *Invariants:* only HTML comments and headings (or lines that are bold and
//! nothing else) that name no code are left out, and not a lone heading
//! that opens the text (its title); a heading that names code (`` ### `Sender::send` panics``,
//! `## tokio::select! drops a branch`) stays; nothing inside a fenced code
//! block is touched except HTML comments; a question with nothing else left
//! is searched as typed, so no question becomes empty.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::query::{PATH, has_path_extension, is_identifier_shaped};

// Constant patterns: `expect` cannot fail on user input.
static HTML_COMMENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)<!--.*?(?:-->|\z)").expect("html comment regex"));
/// A Markdown heading, or a line that is bold and nothing else
/// (`**Describe the bug**`: GitHub's own bug template writes its headings so).
static HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ {0,3}(?:#{1,6}[ \t]+(.*)|\*\*([^*]+)\*\*:?|__([^_]+)__:?)[ \t]*$")
        .expect("heading regex")
});

/// A question without its template scaffolding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Searchable<'a> {
    /// The text to search and classify.
    pub text: Cow<'a, str>,
    /// Lines left out: those of HTML comments and template headings.
    pub left_out: usize,
}

/// `question` without HTML comments and without the Markdown headings
/// (outside fenced code) that name no code; the question as typed when
/// nothing else would be left.
pub fn searchable(question: &str) -> Searchable<'_> {
    let as_typed = Searchable {
        text: Cow::Borrowed(question),
        left_out: 0,
    };
    let has_comment = question.contains("<!--");
    let has_heading = question.lines().any(|l| HEADING.is_match(l));
    if !has_comment && !has_heading {
        return as_typed;
    }
    let mut left_out = 0;
    let uncommented = HTML_COMMENT.replace_all(question, |c: &regex::Captures<'_>| {
        left_out += c[0].lines().count().max(1);
        // Keep the line break a comment may have separated words with.
        if c[0].contains('\n') { "\n" } else { " " }
    });
    // Which lines are headings (outside fenced code) that name no code.
    let mut in_fence = false;
    let lines: Vec<(&str, bool)> = uncommented
        .lines()
        .map(|line| {
            let t = line.trim_start();
            if t.starts_with("```") || t.starts_with("~~~") {
                in_fence = !in_fence;
                return (line, false);
            }
            let scaffold = !in_fence
                && HEADING
                    .captures(line)
                    .and_then(|cap| cap.get(1).or(cap.get(2)).or(cap.get(3)))
                    .is_some_and(|text| !names_code(text.as_str()));
            (line, scaffold)
        })
        .collect();
    // A lone heading that opens the text is its title ("# Panic on an
    // empty file"), not a template's.
    let headings = lines.iter().filter(|(_, h)| *h).count();
    let opening = lines.iter().position(|(l, _)| !l.trim().is_empty());
    let mut kept = String::with_capacity(uncommented.len());
    for (i, (line, scaffold)) in lines.iter().enumerate() {
        if *scaffold && !(headings == 1 && opening == Some(i)) {
            left_out += 1;
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    if left_out == 0 || !kept.chars().any(char::is_alphanumeric) {
        return as_typed;
    }
    Searchable {
        text: Cow::Owned(kept),
        left_out,
    }
}

/// Whether a heading's text names code: inline code, a path, or a word
/// shaped like an identifier.
fn names_code(heading: &str) -> bool {
    heading.contains('`')
        || PATH
            .captures_iter(heading)
            .any(|cap| cap[1].contains(['/', '\\']) || has_path_extension(&cap[2]))
        || heading.split_whitespace().any(|w| {
            let w = w.trim_matches(|c: char| matches!(c, '"' | '\'' | '(' | '[' | ']' | '*'));
            let w = w.trim_end_matches(['?', '.', ',', ':', ';', '!']);
            is_identifier_shaped(w)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_s_comments_and_headings_are_left_out() {
        let report = "Axum 0.6.15 breaks ServeDir\n<!--\nThank you for reporting an issue.\n\nPlease fill in the template.\n-->\n\n## Bug Report\n\n### Version\n\naxum v0.6.15\n\n#### How did you install it?\n\nWith `cargo add`. <!-- one line -->\n";
        let s = searchable(report);
        let kept: Vec<&str> = s
            .text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(
            kept,
            [
                "Axum 0.6.15 breaks ServeDir",
                "axum v0.6.15",
                "With `cargo add`."
            ]
        );
        // Five comment lines, one more comment, three headings.
        assert_eq!(s.left_out, 9);
        assert!(!s.text.contains("install"));
    }

    #[test]
    fn a_bold_line_is_a_heading_and_bold_words_in_a_sentence_are_not() {
        let q = "Add recv_many\n**Is your feature request related to a problem? Please describe.**\nI want many.\n__Additional context__:\n**Workaround**: call it twice, **not** once.\n**How did you install `bat`?**";
        let s = searchable(q);
        assert_eq!(
            s.text,
            "Add recv_many\nI want many.\n**Workaround**: call it twice, **not** once.\n**How did you install `bat`?**\n"
        );
        assert_eq!(s.left_out, 2);
    }

    #[test]
    fn a_lone_heading_that_opens_the_question_is_its_title() {
        let q = "# Panic on an empty file\n\nReading one crashes.";
        assert_eq!(searchable(q).text, q);
        // Among a template's headings, the first one is the template's.
        let s = searchable("## Bug Report\n\n### Description\n\nReading one crashes.");
        assert_eq!(s.text.trim(), "Reading one crashes.");
        assert_eq!(s.left_out, 2);
    }

    #[test]
    fn headings_that_name_code_stay() {
        for heading in [
            "### `Sender::send` panics when the receiver is gone",
            "## tokio::select! drops a branch",
            "# spawn_blocking never returns",
            "## Crash in src/runtime/task.rs",
            "### HashMap iteration order",
        ] {
            let q = format!("{heading}\n\nDetails follow.");
            assert_eq!(searchable(&q).text, q, "{heading}");
        }
    }

    #[test]
    fn code_blocks_keep_their_comment_lines() {
        let q = "Config is ignored\n\n```sh\n# Use a theme\n--theme=gruvbox\n```\n### Expected\nit works";
        let s = searchable(q);
        assert_eq!(
            s.text,
            "Config is ignored\n\n```sh\n# Use a theme\n--theme=gruvbox\n```\nit works\n"
        );
        assert_eq!(s.left_out, 1);
    }

    #[test]
    fn a_question_without_scaffolding_is_borrowed_as_typed() {
        let q = "why does #123 still fail? <- see the issue";
        let s = searchable(q);
        assert!(matches!(s.text, Cow::Borrowed(_)));
        assert_eq!(s.left_out, 0);
    }

    #[test]
    fn a_question_that_is_only_scaffolding_is_searched_as_typed() {
        for q in [
            "## How do I configure logging?",
            "<!-- nothing -->",
            "## Bug\n### Details\n<!-- x -->",
        ] {
            let s = searchable(q);
            assert_eq!(s.text, q);
            assert_eq!(s.left_out, 0);
        }
    }

    #[test]
    fn an_unclosed_comment_runs_to_the_end() {
        let s = searchable("Title words\n<!-- left open\nnever rendered");
        assert_eq!(s.text, "Title words\n\n");
        assert_eq!(s.left_out, 2);
    }
}

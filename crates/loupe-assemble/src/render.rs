//! Render: lay the packed items out as the prompt text, in the seed's
//! assembly order — instructions → primers (architecture context) → notes →
//! pinned → retrieved → question — as XML, Markdown or JSON.
//!
//! Citations are `@path:start-end` (SourcePrep's form, which editors turn
//! into links). XML follows Claude's `<documents>` convention with the
//! source as an attribute.
//!
//! This module does not choose, order by score or count anything; it only
//! formats. *Invariant:* a prompt is the concatenation of its parts in
//! order, so per-part sizes add up (up to tokenizer joins).

use serde::{Deserialize, Serialize};

use crate::report::Section;

/// Output format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Claude-style `<documents>` XML.
    #[default]
    Xml,
    /// Markdown with a header and a fenced block per item.
    Markdown,
    /// A JSON object with the sections and items.
    Json,
}

/// Output toggles (SourcePrep's context panel).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Toggles {
    /// Add the `@path:start-end` citation to each item.
    pub sources: bool,
    /// Add each item's score.
    pub scores: bool,
    /// Return JSON whatever the format (SourcePrep's "Structured").
    pub structured: bool,
    /// Put the best retrieved items at both ends ("lost in the middle").
    pub lost_in_middle: bool,
    /// Show a change under review as its new code with the changed lines
    /// marked, instead of as a unified diff.
    pub diff_as_code: bool,
}

impl Default for Toggles {
    fn default() -> Self {
        Toggles {
            sources: true,
            scores: false,
            structured: false,
            lost_in_middle: false,
            diff_as_code: false,
        }
    }
}

/// One item ready to print.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// Project-relative path.
    pub path: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// Language name, for the Markdown fence.
    pub language: String,
    /// Level of detail it is rendered at.
    pub lod: u8,
    /// Final score.
    pub score: f32,
    /// The enclosing definition's header, when it is not in the prompt itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The rendered text.
    pub content: String,
}

impl Block {
    /// `@path:start-end`.
    pub fn citation(&self) -> String {
        format!("@{}:{}-{}", self.path, self.start_line, self.end_line)
    }
}

/// Everything a prompt is made of, in assembly order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptParts {
    /// The question-type preamble.
    pub instructions: String,
    /// Primer files.
    pub primers: Vec<Block>,
    /// Memory or team notes.
    pub notes: Vec<String>,
    /// Pinned items.
    pub pinned: Vec<Block>,
    /// Retrieved items, in display order.
    pub retrieved: Vec<Block>,
    /// The user's question.
    pub question: String,
}

/// Reorders best-first items so the best sit at both ends and the weakest in
/// the middle (Liu et al. 2023, "Lost in the Middle"): 1, 3, 5, … 6, 4, 2.
pub fn lost_in_middle<T>(items: Vec<T>) -> Vec<T> {
    let mut front = Vec::with_capacity(items.len());
    let mut back = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if i % 2 == 0 {
            front.push(item)
        } else {
            back.push(item)
        }
    }
    back.reverse();
    front.extend(back);
    front
}

fn xml_attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

/// Keeps our own closing tags from being closed early by content.
fn xml_body(s: &str) -> String {
    s.replace("</document>", "&lt;/document>")
}

/// A backtick fence longer than any run of backticks in `content`.
fn fence_for(content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

/// One block in `format`. The text ends with a newline.
pub fn block(b: &Block, index: usize, format: Format, toggles: Toggles) -> String {
    let body = if b.content.ends_with('\n') {
        b.content.clone()
    } else {
        format!("{}\n", b.content)
    };
    let context = b.context.as_deref().unwrap_or("");
    match effective(format, toggles) {
        Format::Xml => {
            let mut attrs = format!("index=\"{index}\"");
            if toggles.sources {
                attrs.push_str(&format!(" source=\"{}\"", xml_attr(&b.citation())));
            }
            if b.lod > 0 {
                attrs.push_str(&format!(" lod=\"{}\"", b.lod));
            }
            if toggles.scores {
                attrs.push_str(&format!(" score=\"{:.2}\"", b.score));
            }
            if !context.is_empty() {
                attrs.push_str(&format!(" context=\"{}\"", xml_attr(context)));
            }
            format!("<document {attrs}>\n{}</document>\n", xml_body(&body))
        }
        Format::Markdown => {
            let mut header = String::from("###");
            if toggles.sources {
                header.push(' ');
                header.push_str(&b.citation());
            } else {
                header.push_str(&format!(" [{index}]"));
            }
            if !context.is_empty() {
                header.push_str(&format!(" · in `{context}`"));
            }
            if b.lod > 0 {
                header.push_str(&format!(" · LOD {}", b.lod));
            }
            if toggles.scores {
                header.push_str(&format!(" · score {:.2}", b.score));
            }
            let fence = fence_for(&body);
            let lang = if b.language == "text" {
                ""
            } else {
                b.language.as_str()
            };
            format!("{header}\n{fence}{lang}\n{body}{fence}\n\n")
        }
        Format::Json => serde_json::to_string(&json_item(b, toggles)).unwrap_or_default(),
    }
}

fn json_item(b: &Block, toggles: Toggles) -> JsonItem<'_> {
    JsonItem {
        source: toggles.sources.then(|| b.citation()),
        path: toggles.sources.then_some(b.path.as_str()),
        start_line: toggles.sources.then_some(b.start_line),
        end_line: toggles.sources.then_some(b.end_line),
        lod: b.lod,
        score: toggles
            .scores
            .then(|| (f64::from(b.score) * 100.0).round() / 100.0),
        context: b.context.as_deref(),
        content: &b.content,
    }
}

/// One item in JSON output; fields in reading order.
#[derive(Serialize)]
struct JsonItem<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<u32>,
    lod: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<&'a str>,
    content: &'a str,
}

/// The JSON prompt; fields in the seed's assembly order.
#[derive(Serialize)]
struct JsonPrompt<'a> {
    instructions: &'a str,
    primers: Vec<JsonItem<'a>>,
    notes: &'a [String],
    pinned: Vec<JsonItem<'a>>,
    retrieved: Vec<JsonItem<'a>>,
    question: &'a str,
}

/// The format after the `structured` toggle.
pub fn effective(format: Format, toggles: Toggles) -> Format {
    if toggles.structured {
        Format::Json
    } else {
        format
    }
}

/// Pushes a non-empty group of blocks between its opening and closing scaffolding.
fn group(
    pieces: &mut Vec<(Section, String)>,
    section: Section,
    open: String,
    blocks: Vec<String>,
    close: &str,
) {
    if blocks.is_empty() {
        return;
    }
    pieces.push((Section::Overhead, open));
    pieces.push((section, blocks.concat()));
    if !close.is_empty() {
        pieces.push((Section::Overhead, close.to_string()));
    }
}

/// The prompt, and the size-relevant text of each section (for the account).
// Long: the prompt's sections in output order; each section's text is built where it is placed.
pub fn prompt<'a>(
    parts: &'a PromptParts,
    format: Format,
    toggles: Toggles,
) -> (String, Vec<(Section, String)>) {
    let format = effective(format, toggles);
    let mut pieces: Vec<(Section, String)> = Vec::new();
    let blocks = |list: &[Block], start: usize| -> Vec<String> {
        list.iter()
            .enumerate()
            .map(|(i, b)| block(b, start + i + 1, format, toggles))
            .collect()
    };
    let primers = blocks(&parts.primers, 0);
    let pinned = blocks(&parts.pinned, parts.primers.len());
    let retrieved = blocks(&parts.retrieved, parts.primers.len() + parts.pinned.len());
    match format {
        Format::Json => {
            let items = |list: &'a [Block]| {
                list.iter()
                    .map(|b| json_item(b, toggles))
                    .collect::<Vec<_>>()
            };
            let value = JsonPrompt {
                instructions: &parts.instructions,
                primers: items(&parts.primers),
                notes: &parts.notes,
                pinned: items(&parts.pinned),
                retrieved: items(&parts.retrieved),
                question: &parts.question,
            };
            let text = serde_json::to_string_pretty(&value).unwrap_or_default();
            pieces.push((Section::Instructions, parts.instructions.clone()));
            pieces.push((Section::Primers, primers.concat()));
            pieces.push((Section::Notes, parts.notes.concat()));
            pieces.push((Section::Pinned, pinned.concat()));
            pieces.push((Section::RetrievedCode, retrieved.concat()));
            pieces.push((Section::Question, parts.question.clone()));
            return (text, pieces);
        }
        Format::Xml => {
            pieces.push((
                Section::Instructions,
                format!("<instructions>\n{}\n</instructions>\n", parts.instructions),
            ));
            let open = |name: &str| format!("<documents kind=\"{name}\">\n");
            let close = "</documents>\n";
            group(
                &mut pieces,
                Section::Primers,
                open("primer"),
                primers,
                close,
            );
            if !parts.notes.is_empty() {
                let notes: String = parts
                    .notes
                    .iter()
                    .map(|n| format!("<note>{}</note>\n", xml_body(n)))
                    .collect();
                pieces.push((Section::Notes, format!("<notes>\n{notes}</notes>\n")));
            }
            group(&mut pieces, Section::Pinned, open("pinned"), pinned, close);
            group(
                &mut pieces,
                Section::RetrievedCode,
                open("retrieved"),
                retrieved,
                close,
            );
            pieces.push((
                Section::Question,
                format!("<question>\n{}\n</question>\n", parts.question),
            ));
        }
        Format::Markdown => {
            pieces.push((
                Section::Instructions,
                format!("## Instructions\n\n{}\n\n", parts.instructions),
            ));
            let title = |t: &str| format!("## {t}\n\n");
            group(
                &mut pieces,
                Section::Primers,
                title("Project context"),
                primers,
                "",
            );
            if !parts.notes.is_empty() {
                let notes: String = parts
                    .notes
                    .iter()
                    .map(|n| format!("- {}\n", n.replace('\n', "\n  ")))
                    .collect();
                pieces.push((Section::Notes, format!("## Notes\n\n{notes}\n")));
            }
            group(&mut pieces, Section::Pinned, title("Pinned"), pinned, "");
            group(
                &mut pieces,
                Section::RetrievedCode,
                title("Retrieved"),
                retrieved,
                "",
            );
            pieces.push((
                Section::Question,
                format!("## Question\n\n{}\n", parts.question),
            ));
        }
    }
    let text = pieces.iter().map(|(_, s)| s.as_str()).collect();
    (text, pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: std::fmt::Debug>(got: T, expect: &str) {
        assert_eq!(format!("{got:?}"), expect);
    }

    #[test]
    fn lost_in_the_middle_order() {
        check(lost_in_middle(vec![1, 2, 3, 4, 5, 6]), "[1, 3, 5, 6, 4, 2]");
        check(lost_in_middle(Vec::<u8>::new()), "[]");
    }

    #[test]
    fn fences_outgrow_content() {
        check(fence_for("a ``` b"), "\"````\"");
        check(fence_for("plain"), "\"```\"");
    }
}

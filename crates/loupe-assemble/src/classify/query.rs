//! Local query analysis: search terms, identifiers, file paths and
//! `@` mentions extracted from a question, robust to long pasted bug reports
//! (fenced code blocks, stack traces, log lines).
//!
//! This module does not classify (see [`super::category`]) and calls no LLM:
//! it is the fallback and the fast path both. It decides nothing about
//! retrieval weights.
//!
//! *Invariants:* outputs are deduplicated and keep first-appearance order;
//! `terms` holds at most [`MAX_KEYWORDS`] keywords followed by the lowercased
//! identifiers; the same question always gives the same analysis.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Keywords kept from prose: the seed's "capped at 5 to prevent over-fetching".
pub const MAX_KEYWORDS: usize = 5;
/// Identifiers kept at most: a pasted log can name hundreds; the first (by
/// priority tier, then appearance) are the ones the user is talking about.
pub const MAX_IDENTIFIERS: usize = 24;
/// Paths kept at most, for the same reason.
pub const MAX_PATHS: usize = 16;

/// What an `@` mention names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MentionKind {
    /// A file or folder path (`@src/lib.rs`, `@README.md`).
    Path,
    /// A symbol (`@Packer`, `@pack_items`).
    Symbol,
}

/// An `@path` or `@symbol` mention: the user pins what it names.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Mention {
    /// Path or symbol.
    pub kind: MentionKind,
    /// The text after `@`, without trailing punctuation.
    pub value: String,
}

/// What retrieval needs to know about a question.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryAnalysis {
    /// Search terms: up to [`MAX_KEYWORDS`] prose keywords (lowercase,
    /// stopwords out, most frequent first), then every identifier lowercased.
    pub terms: Vec<String>,
    /// Identifiers as written: CamelCase, snake_case, `a::b` / `a.b` paths
    /// (both the whole and the last segment), `call()` names, stack-frame
    /// functions, `inline code`.
    pub identifiers: Vec<String>,
    /// File paths as written, with a `:line[:col]` suffix when one was given.
    pub paths: Vec<String>,
    /// `@` mentions, which become pinned items.
    #[serde(default)]
    pub mentions: Vec<Mention>,
    /// Lines of a pasted report's template (HTML comments, headings that
    /// name no code) left out of the analysis and the search
    /// ([`super::scaffold`]).
    #[serde(default)]
    pub scaffolding_lines: usize,
}

impl QueryAnalysis {
    /// What the search left out of the question, in words for the report
    /// (`None` when it searched the question whole).
    pub fn scaffolding_note(&self) -> Option<String> {
        match self.scaffolding_lines {
            0 => None,
            n => Some(format!(
                "searched without {n} line{} of a report template (HTML comments, headings that name no code)",
                if n == 1 { "" } else { "s" }
            )),
        }
    }
}

/// File extensions that make a dotted word a path even without a `/`.
const PATH_EXTENSIONS: &[&str] = &[
    "rs",
    "py",
    "pyi",
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "go",
    "java",
    "kt",
    "kts",
    "c",
    "h",
    "cc",
    "cpp",
    "cxx",
    "hpp",
    "hh",
    "cs",
    "rb",
    "php",
    "swift",
    "scala",
    "m",
    "mm",
    "sh",
    "bash",
    "zsh",
    "ps1",
    "sql",
    "md",
    "mdx",
    "rst",
    "txt",
    "toml",
    "json",
    "jsonc",
    "yaml",
    "yml",
    "xml",
    "html",
    "htm",
    "css",
    "scss",
    "sass",
    "less",
    "vue",
    "svelte",
    "lock",
    "cfg",
    "ini",
    "conf",
    "env",
    "gradle",
    "proto",
    "graphql",
    "gql",
    "tf",
    "lua",
    "dart",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "clj",
    "zig",
    "nim",
    "jl",
    "r",
    "dockerfile",
    "mk",
    "cmake",
    "scm",
];

/// English function words and question filler that never make good search terms.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "down",
    "during",
    "each",
    "else",
    "etc",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "get",
    "gets",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "however",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "need",
    "needs",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "out",
    "over",
    "own",
    "please",
    "same",
    "see",
    "seems",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "though",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "use",
    "used",
    "using",
    "very",
    "via",
    "want",
    "was",
    "way",
    "we",
    "well",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "within",
    "without",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "work",
    "works",
    "working",
    "tell",
    "show",
    "explain",
    "help",
    "know",
    "make",
    "makes",
    "think",
    "thanks",
    "thank",
    "hi",
    "hello",
    "hey",
    "e.g",
    "i.e",
    "eg",
    "ie",
    "ok",
    "okay",
    "really",
    "something",
    "anything",
    "everything",
    "still",
    "instead",
    "already",
    "maybe",
    "sure",
    "try",
    "tried",
    "trying",
    "happen",
    "happens",
    "happening",
    "code",
    "line",
    "lines",
    "file",
    "files",
    "called",
    "call",
    "calls",
    "does",
    "doesn",
    "don",
    "isn",
    "aren",
    "wasn",
    "won",
    "can't",
    "cannot",
    "dont",
    "didn",
    "shouldn",
    "couldn",
    "wouldn",
    "there's",
    "it's",
    "i'm",
    "i've",
    "traceback",
    "recent",
    "last",
    "most",
    "back",
    "new",
    "old",
    "many",
    "able",
];

// Regex literals are compiled once; they are constants, so `expect` cannot
// fail on user input (a typo here fails every test at once).
static FENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?ms)^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*(?:```|~~~)[ \t]*$|\z)")
        .expect("fence regex")
});
static INLINE_CODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"`([^`\n]+)`").expect("inline code regex"));
static PYTHON_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"File "([^"]+)", line (\d+)(?:, in ([A-Za-z_][\w.<>]*))?"#)
        .expect("python frame regex")
});
static JVM_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bat ((?:[A-Za-z_$][\w$]*\.)+)([A-Za-z_$<][\w$<>]*)\(([\w$.-]+):(\d+)\)")
        .expect("jvm frame regex")
});
static JS_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bat (?:(?:async |new )?([A-Za-z_$][\w$.<>]*) )?\(?((?:file://)?[^\s()]+?):(\d+):(\d+)\)?")
        .expect("js frame regex")
});
static RUST_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*\d+:\s+(?:0x[0-9a-f]+ - )?((?:[A-Za-z_<][\w<>]*::)+[A-Za-z_][\w]*)")
        .expect("rust frame regex")
});
pub(super) static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s\x22'`(\[<,=:])((?:[A-Za-z]:\\|\.{1,2}/|/|~/)?(?:[\w+-][\w.+-]*[/\\])*[\w+-][\w.+-]*\.([A-Za-z][A-Za-z0-9]{0,9})(?::(\d+)(?::\d+)?)?)")
        .expect("path regex")
});
static SLASH_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s\x22'`(\[<,=])((?:\.{1,2}/|/)?[\w.-]+(?:/[\w.-]+)+/?)")
        .expect("slash path regex")
});
static MENTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|[\s(\[{,;])@([\w][\w./:#-]*)").expect("mention regex"));
static IDENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z_$][\w$]*(?:(?:::|\.|->|#)[A-Za-z_$][\w$]*)*(?:\(\))?")
        .expect("ident regex")
});
static WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z][A-Za-z0-9'-]*[A-Za-z0-9]|[A-Za-z]").expect("word regex")
});

/// Priority tiers for identifiers: earlier tiers survive the cap.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    /// Written in `backticks` or as a call in prose: the user pointed at it.
    Pointed,
    /// A function from a stack frame.
    Frame,
    /// Looks like an identifier in prose.
    Prose,
    /// Looks like an identifier inside a pasted code block or log.
    Pasted,
}

#[derive(Default)]
struct Collector {
    identifiers: Vec<(Tier, usize, String)>,
    seen_identifiers: HashSet<String>,
    paths: Vec<String>,
    seen_paths: HashSet<String>,
    order: usize,
}

impl Collector {
    fn identifier(&mut self, tier: Tier, ident: &str) {
        let ident = ident.trim_end_matches("()");
        if ident.len() < 2 || !self.seen_identifiers.insert(ident.to_string()) {
            return;
        }
        self.order += 1;
        self.identifiers.push((tier, self.order, ident.to_string()));
    }

    /// Adds a qualified name (`a::b`, `a.b.c`, `Foo#bar`) and its last segment.
    fn qualified(&mut self, tier: Tier, name: &str) {
        let name = name.trim_end_matches("()");
        let last = name.rsplit(['.', ':', '#', '>']).next().unwrap_or(name);
        if last != name && !last.is_empty() {
            self.identifier(tier, last);
        }
        self.identifier(tier, name);
    }

    /// Adds a path, keeping at most a `:line` suffix; a path already seen
    /// (with or without a line) is not added again.
    fn path(&mut self, path: &str) {
        let path = path.trim_end_matches(['.', ',', ';', ')', ']', '\'', '"']);
        let path = path.strip_prefix("file://").unwrap_or(path);
        let (base, line) = split_line_suffix(path);
        if base.len() < 3 || base.contains("://") || !self.seen_paths.insert(base.to_string()) {
            return;
        }
        self.paths.push(match line {
            Some(line) => format!("{base}:{line}"),
            None => base.to_string(),
        });
    }
}

/// Splits `path:line[:col]` into the path and its line.
pub fn split_line_suffix(path: &str) -> (&str, Option<u32>) {
    let mut rest = path;
    let mut numbers = Vec::new();
    while let Some((head, tail)) = rest.rsplit_once(':') {
        match tail.parse::<u32>() {
            Ok(n) if numbers.len() < 2 => {
                numbers.push(n);
                rest = head;
            }
            _ => break,
        }
    }
    // `path:line:col` pushed col first; the line is the last number pushed.
    (rest, numbers.last().copied())
}

/// Whether a word is shaped like a code identifier rather than English.
pub(super) fn is_identifier_shaped(word: &str) -> bool {
    let bare = word.trim_end_matches("()");
    if bare.len() < 2 || !bare.chars().any(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    if word.ends_with("()") || bare.contains("::") || bare.contains("->") || bare.contains('#') {
        return true;
    }
    if bare.contains('.') {
        // Dotted names (`os.path.join`, `self.config`), not abbreviations (`e.g`).
        let last = bare.rsplit('.').next().unwrap_or(bare);
        return bare.split('.').all(|s| s.len() >= 2)
            && !STOPWORDS.contains(&bare)
            && !has_path_extension(last);
    }
    let chars: Vec<char> = bare.chars().collect();
    let inner_upper = chars
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let acronym_then_word = chars.windows(3).any(|w| {
        w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase() && w[2].is_ascii_lowercase()
    });
    let snake = bare.trim_matches('_').contains('_');
    let digits_in_word = chars.iter().any(char::is_ascii_digit)
        && chars[0].is_ascii_alphabetic()
        && chars.len() > 3
        && chars.iter().any(|c| c.is_ascii_lowercase())
        && chars.iter().any(|c| c.is_ascii_uppercase());
    inner_upper || acronym_then_word || snake || digits_in_word
}

pub(super) fn has_path_extension(ext: &str) -> bool {
    PATH_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
}

/// Analyzes text as it is: a question already without its scaffolding,
/// with text that is not the asker's appended (a change's lines, whose
/// `# comment` lines are no template).
// Long: numbered steps that share one collector; each step is short and labelled below.
pub fn analyze_text(question: &str) -> QueryAnalysis {
    let mut found = Collector::default();

    // 1. Split pasted code blocks from prose. Both are scanned for frames,
    //    paths and identifiers; only prose gives keywords and mentions.
    let (prose, pasted) = prose_and_pasted(question);

    // 2. Mentions (prose only: `@Override` in pasted Java is not a pin).
    let mut mentions = Vec::new();
    for cap in MENTION.captures_iter(&prose) {
        let value = cap[1]
            .trim_end_matches(['.', ',', ':', ';', '-', '/'])
            .to_string();
        if value.is_empty() {
            continue;
        }
        let is_path = value.contains('/')
            || value
                .rsplit_once('.')
                .is_some_and(|(_, ext)| has_path_extension(ext));
        let kind = if is_path {
            MentionKind::Path
        } else {
            MentionKind::Symbol
        };
        let mention = Mention { kind, value };
        if !mentions.contains(&mention) {
            mentions.push(mention);
        }
    }

    // 3. Stack frames, anywhere.
    for text in [&prose, &pasted] {
        for cap in PYTHON_FRAME.captures_iter(text) {
            found.path(&format!("{}:{}", &cap[1], &cap[2]));
            if let Some(func) = cap.get(3).filter(|f| !f.as_str().starts_with('<')) {
                found.identifier(Tier::Frame, func.as_str());
            }
        }
        for cap in JVM_FRAME.captures_iter(text) {
            let class = cap[1].trim_end_matches('.');
            let class_name = class.rsplit('.').next().unwrap_or(class);
            found.identifier(Tier::Frame, &cap[2]);
            found.identifier(Tier::Frame, class_name);
            found.path(&format!("{}:{}", &cap[3], &cap[4]));
        }
        for cap in JS_FRAME.captures_iter(text) {
            if let Some(func) = cap.get(1) {
                found.qualified(Tier::Frame, func.as_str());
            }
            let path = &cap[2];
            if !path.contains("node_modules")
                && !path.starts_with("node:")
                && !path.starts_with("internal/")
            {
                found.path(&format!("{path}:{}", &cap[3]));
            }
        }
        for cap in RUST_FRAME.captures_iter(text) {
            let name = &cap[1];
            if !name.starts_with("std::") && !name.starts_with("core::") && !name.starts_with("<") {
                found.qualified(Tier::Frame, name);
            }
        }
    }

    // 4. Paths, anywhere (frames above already added theirs first).
    for text in [&prose, &pasted] {
        for cap in PATH.captures_iter(text) {
            let whole = &cap[1];
            let has_dir = whole.contains('/') || whole.contains('\\');
            if has_dir || has_path_extension(&cap[2]) {
                found.path(whole);
            }
        }
        for cap in SLASH_PATH.captures_iter(text) {
            let whole = cap[1].trim_end_matches('/');
            let parts: Vec<&str> = whole.split('/').filter(|p| !p.is_empty()).collect();
            // `and/or`, `ci/cd`, `i/o` are prose; a directory path has a part
            // longer than three letters or starts at the root.
            let plausible = whole.starts_with('/')
                || whole.starts_with('.')
                || parts.iter().any(|p| p.len() > 3);
            if parts.len() >= 2
                && plausible
                && !prose.contains(&format!("@{whole}"))
                && !whole.contains("//")
            {
                found.path(whole);
            }
        }
    }

    // 5. Identifiers: pointed at (inline code, calls), prose, then pasted.
    for cap in INLINE_CODE.captures_iter(&prose) {
        let inner = cap[1].trim();
        if let Some(m) = IDENT.find(inner)
            && m.as_str().len() == inner.len()
            && !inner.contains('/')
        {
            found.qualified(Tier::Pointed, inner);
        }
    }
    let mut prose_without_paths = strip_paths(&prose, &found.paths);
    for mention in &mentions {
        prose_without_paths = prose_without_paths.replace(&format!("@{}", mention.value), " ");
    }
    let pasted_without_paths = strip_paths(&pasted, &found.paths);
    for (text, tier) in [
        (&prose_without_paths, Tier::Prose),
        (&pasted_without_paths, Tier::Pasted),
    ] {
        for m in IDENT.find_iter(text) {
            let word = m.as_str();
            // Skip the tail of something longer (an e-mail, a mention).
            let before = text[..m.start()].chars().next_back();
            if matches!(before, Some('@') | Some('/')) {
                continue;
            }
            if is_identifier_shaped(word) {
                let tier = if word.ends_with("()") && tier == Tier::Prose {
                    Tier::Pointed
                } else {
                    tier
                };
                found.qualified(tier, word);
            }
        }
    }

    let mut identifiers = found.identifiers;
    identifiers.sort_by_key(|(tier, order, _)| (*tier, *order));
    let identifiers: Vec<String> = identifiers
        .into_iter()
        .take(MAX_IDENTIFIERS)
        .map(|(_, _, id)| id)
        .collect();
    let mut paths = found.paths;
    paths.truncate(MAX_PATHS);

    // 6. Keywords from prose words that are not identifiers or paths.
    let identifier_set: HashSet<String> = identifiers.iter().map(|i| i.to_lowercase()).collect();
    let mut counts: HashMap<String, (usize, usize)> = HashMap::new();
    for (position, m) in WORD.find_iter(&prose_without_paths).enumerate() {
        let before = prose_without_paths[..m.start()].chars().next_back();
        let after = prose_without_paths[m.end()..].chars().next();
        if matches!(before, Some('@') | Some('_') | Some('.') | Some(':'))
            || matches!(after, Some('_') | Some('(') | Some('@'))
        {
            continue;
        }
        let word = m.as_str().to_lowercase();
        let word = word.trim_end_matches("'s").to_string();
        if word.len() < 2 || STOPWORDS.contains(&word.as_str()) || identifier_set.contains(&word) {
            continue;
        }
        if is_identifier_shaped(m.as_str()) {
            continue;
        }
        let entry = counts.entry(word).or_insert((0, position));
        entry.0 += 1;
    }
    let mut keywords: Vec<(String, (usize, usize))> = counts.into_iter().collect();
    keywords.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    let mut terms: Vec<String> = keywords
        .into_iter()
        .take(MAX_KEYWORDS)
        .map(|(w, _)| w)
        .collect();
    for ident in &identifiers {
        let lower = ident.to_lowercase();
        if !terms.contains(&lower) {
            terms.push(lower);
        }
    }

    QueryAnalysis {
        terms,
        identifiers,
        paths,
        mentions,
        scaffolding_lines: 0,
    }
}

/// `question` split into the asker's prose and what they pasted: fenced
/// code blocks, and prose lines that are really log or trace lines.
pub(super) fn prose_and_pasted(question: &str) -> (String, String) {
    let mut prose = String::with_capacity(question.len());
    let mut pasted = String::new();
    let mut last = 0;
    for block in FENCE.find_iter(question) {
        prose.push_str(&question[last..block.start()]);
        prose.push('\n');
        pasted.push_str(block.as_str());
        pasted.push('\n');
        last = block.end();
    }
    prose.push_str(&question[last..]);
    let (prose, log_lines): (Vec<&str>, Vec<&str>) =
        prose.lines().partition(|line| !is_log_line(line));
    for line in log_lines {
        pasted.push_str(line);
        pasted.push('\n');
    }
    (prose.join("\n"), pasted)
}

/// Whether a prose line is really a pasted trace or log line.
fn is_log_line(line: &str) -> bool {
    let t = line.trim_start();
    // Indented by four spaces or a tab: Markdown's indented code, and how
    // tracebacks print the source line under each frame.
    let indented = line.starts_with("    ") || line.starts_with('\t');
    indented
        || PYTHON_FRAME.is_match(t)
        || JVM_FRAME.is_match(t)
        || (t.starts_with("at ") && JS_FRAME.is_match(t))
        || RUST_FRAME.is_match(line)
        || t.starts_with("Traceback (most recent call last)")
        || t.starts_with("stack backtrace:")
        || t.starts_with("note: run with `RUST_BACKTRACE")
}

/// `text` with every found path blanked out, so `src/lib.rs` gives no
/// identifier `lib.rs` and no keyword `src`.
fn strip_paths(text: &str, paths: &[String]) -> String {
    let mut out = text.to_string();
    let mut sorted: Vec<&str> = paths.iter().map(|p| split_line_suffix(p).0).collect();
    sorted.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for path in sorted {
        out = out.replace(path, " ");
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::classify::analyze;

    fn check(question: &str, expect: &str) {
        let a = analyze(question);
        let mut got = format!(
            "terms: {}\nidents: {}\npaths: {}",
            a.terms.join(" | "),
            a.identifiers.join(" | "),
            a.paths.join(" | ")
        );
        for m in &a.mentions {
            got.push_str(&format!("\n@{:?} {}", m.kind, m.value));
        }
        assert_eq!(got.trim(), expect.trim(), "\n--- got ---\n{got}\n");
    }

    #[test]
    fn plain_question() {
        check(
            "How does packing work?",
            "terms: packing\nidents: \npaths: ",
        );
    }

    #[test]
    fn identifiers_and_paths() {
        check(
            "Why does parse_config() in src/config/mod.rs return None for HttpServer::bind?",
            "terms: return | none | parse_config | bind | httpserver::bind\nidents: parse_config | bind | HttpServer::bind\npaths: src/config/mod.rs",
        );
    }

    #[test]
    fn mentions_are_pins_not_emails() {
        check(
            "Look at @src/pack.rs and @Packer, mail me at dev@example.com",
            "terms: look | mail\nidents: \npaths: \n@Path src/pack.rs\n@Symbol Packer",
        );
    }

    #[test]
    fn python_traceback() {
        check(
            "Login fails:\nTraceback (most recent call last):\n  File \"app/auth/views.py\", line 42, in login_user\n    token = make_token(user)\n  File \"app/auth/jwt.py\", line 7, in make_token\nKeyError: 'secret'",
            "terms: login | fails | secret | login_user | make_token | keyerror\nidents: login_user | make_token | KeyError\npaths: app/auth/views.py:42 | app/auth/jwt.py:7",
        );
    }

    #[test]
    fn rust_panic_and_code_block() {
        check(
            "The indexer crashes on big repos.\n```\nthread 'main' panicked at crates/engine/src/walk.rs:88:14:\nindex out of bounds\n   0: loupe_engine::walk::Walker::next\n```\nThe `Walker` should skip it.",
            "terms: indexer | crashes | big | repos | skip | walker | next | loupe_engine::walk::walker::next\nidents: Walker | next | loupe_engine::walk::Walker::next\npaths: crates/engine/src/walk.rs:88",
        );
    }

    #[test]
    fn js_and_java_frames() {
        check(
            "TypeError: x is undefined\n    at renderList (src/ui/List.tsx:12:5)\n    at com.acme.billing.InvoiceService.total(InvoiceService.java:88)",
            "terms: undefined | total | invoiceservice | renderlist | typeerror | com.acme.billing.invoiceservice.total\n\
             idents: total | InvoiceService | renderList | TypeError | com.acme.billing.InvoiceService.total\n\
             paths: InvoiceService.java:88 | src/ui/List.tsx:12",
        );
    }

    #[test]
    fn prose_slashes_are_not_paths() {
        check(
            "Should CI/CD and/or docker run tests?",
            "terms: ci | cd | docker | run | tests\nidents: \npaths: ",
        );
    }
}

//! Change mode: a diff as the question. [`read`] asks git (read-only
//! plumbing, like `history.rs`) for the working tree's unstaged or staged
//! changes or a `BASE..HEAD` range and parses the unified diff; [`Diff`]
//! then says which lines to pin, which words to retrieve with, and renders
//! itself as a note that fits a share of the budget (hunks degrade to
//! their headers, then files drop, each reported).

use crate::{Error, Result};
use loupe_assemble::tokens::Measure;
use std::path::Path;
use std::process::{Command, Stdio};

/// Which change to review.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DiffSpec {
    /// The working tree against the index (`git diff`).
    Unstaged,
    /// The index against `HEAD` (`git diff --cached`).
    Staged,
    /// A commit range, `BASE..HEAD` (`git diff BASE..HEAD`).
    Range(String),
}

impl std::str::FromStr for DiffSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "" | "unstaged" => Ok(DiffSpec::Unstaged),
            "staged" | "cached" => Ok(DiffSpec::Staged),
            r if r.contains("..") && !r.starts_with('-') && !r.contains(char::is_whitespace) => {
                Ok(DiffSpec::Range(r.to_owned()))
            }
            other => Err(Error::Request(format!(
                "change {other:?}: expected `unstaged`, `staged` or a range `BASE..HEAD`"
            ))),
        }
    }
}

impl DiffSpec {
    /// The spec as written on a command line (`unstaged`, `staged`,
    /// `BASE..HEAD`): what [`str::parse`] reads back.
    pub fn arg(&self) -> &str {
        match self {
            DiffSpec::Unstaged => "unstaged",
            DiffSpec::Staged => "staged",
            DiffSpec::Range(r) => r,
        }
    }
}

impl std::fmt::Display for DiffSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiffSpec::Unstaged => f.write_str("unstaged changes"),
            DiffSpec::Staged => f.write_str("staged changes"),
            DiffSpec::Range(r) => write!(f, "{r}"),
        }
    }
}

/// What happened to a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    /// New file.
    Added,
    /// Changed in place.
    Modified,
    /// Removed.
    Deleted,
    /// Moved (maybe changed too).
    Renamed,
}

/// One hunk of a file's diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// First line on the new side (1-based; 0 for a deleted file).
    pub new_start: u32,
    /// Lines on the new side.
    pub new_lines: u32,
    /// The `@@ … @@` line.
    pub header: String,
    /// The hunk's lines after its header (context, `-` and `+`).
    pub body: String,
    /// New-side line numbers of its added lines.
    pub added: Vec<u32>,
}

/// One file of the diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    /// Project-relative path on the new side (the old path when deleted).
    pub path: String,
    /// The old path of a rename.
    pub old_path: Option<String>,
    /// What happened to it.
    pub kind: ChangeKind,
    /// Git found no text to diff.
    pub binary: bool,
    /// Its hunks.
    pub hunks: Vec<Hunk>,
}

/// A parsed diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    /// What was asked for.
    pub spec: DiffSpec,
    /// The files it touches, in git's order.
    pub files: Vec<FileChange>,
}

/// A git command in `root`: no pager, prompts, locks or colour; paths unquoted.
fn git(root: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(root)
        .args(["-c", "core.quotepath=false", "-c", "color.ui=never"])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .stdin(Stdio::null());
    cmd
}

fn run(root: &Path, args: &[&str]) -> Result<std::result::Result<String, String>> {
    let out = git(root).args(args).output().map_err(|e| {
        Error::Request(format!(
            "change mode needs git, which could not be run: {e}"
        ))
    })?;
    Ok(if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    })
}

/// Reads the change `spec` names in the repository holding `root`, paths
/// relative to `root` (changes outside it are left out).
pub fn read(root: &Path, spec: &DiffSpec) -> Result<Diff> {
    if !matches!(run(root, &["rev-parse", "--is-inside-work-tree"])?, Ok(ref s) if s.trim() == "true")
    {
        return Err(Error::Request(format!(
            "{} is not in a git repository: change mode reads the diff with git",
            root.display()
        )));
    }
    let has_commits = run(root, &["rev-parse", "--verify", "--quiet", "HEAD"])?.is_ok();
    let mut args = vec![
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--find-renames",
        "--relative",
        "--unified=3",
    ];
    match spec {
        DiffSpec::Unstaged => {}
        DiffSpec::Staged => args.push("--cached"),
        DiffSpec::Range(range) => {
            if !has_commits {
                return Err(Error::Request(
                    "the repository has no commits yet: only `--diff unstaged` or `--diff staged` can be read"
                        .into(),
                ));
            }
            args.push(range);
        }
    }
    args.push("--");
    let text = run(root, &args)?
        .map_err(|stderr| Error::Request(format!("git diff of {spec}: {stderr}")))?;
    let mut files = parse(&text);
    if *spec == DiffSpec::Unstaged {
        // `git diff` leaves out files git does not track yet; a review of
        // the working tree includes them (ignored files stay out).
        let untracked =
            run(root, &["ls-files", "--others", "--exclude-standard", "-z"])?.unwrap_or_default();
        files.extend(
            untracked
                .split('\0')
                .filter(|p| !p.is_empty())
                .map(|p| new_file(root, p)),
        );
    }
    let diff = Diff {
        spec: spec.clone(),
        files,
    };
    if diff.files.is_empty() {
        return Err(Error::Request(format!(
            "no {spec} under {}: nothing to review",
            root.display()
        )));
    }
    Ok(diff)
}

/// Untracked files larger than this are listed, not shown.
const MAX_NEW_FILE_BYTES: u64 = 1 << 20;

/// An untracked file as an added one: every line added, or binary when it
/// is not text (or too large to show).
fn new_file(root: &Path, rel: &str) -> FileChange {
    let path = root.join(rel);
    let text = std::fs::metadata(&path)
        .ok()
        .filter(|m| m.is_file() && m.len() <= MAX_NEW_FILE_BYTES)
        .and_then(|_| std::fs::read(&path).ok())
        .filter(|b| !b.contains(&0))
        .and_then(|b| String::from_utf8(b).ok());
    let mut file = FileChange {
        path: rel.to_owned(),
        old_path: None,
        kind: ChangeKind::Added,
        binary: text.is_none(),
        hunks: Vec::new(),
    };
    if let Some(text) = text.filter(|t| !t.is_empty()) {
        let n = u32::try_from(text.lines().count()).unwrap_or(u32::MAX);
        let body: String = text.lines().map(|l| format!("+{l}\n")).collect();
        file.hunks.push(Hunk {
            new_start: 1,
            new_lines: n,
            header: format!("@@ -0,0 +1,{n} @@ (untracked)"),
            body,
            added: (1..=n).collect(),
        });
    }
    file
}

/// A path from a diff header: C-quoted when git quoted it, `a/`/`b/` stripped.
fn header_path(raw: &str) -> Option<String> {
    let raw = raw.trim_end_matches('\t');
    if raw == "/dev/null" {
        return None;
    }
    let unquoted = if raw.starts_with('"') && raw.ends_with('"') && raw.len() >= 2 {
        unquote(&raw[1..raw.len() - 1])
    } else {
        raw.to_owned()
    };
    Some(
        unquoted
            .strip_prefix("a/")
            .or_else(|| unquoted.strip_prefix("b/"))
            .unwrap_or(&unquoted)
            .to_owned(),
    )
}

/// Git's C quoting: `\\`, `\"`, `\t`, `\n` and octal bytes.
fn unquote(s: &str) -> String {
    let mut bytes = Vec::with_capacity(s.len());
    let mut it = s.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    match it.peek() {
                        Some(&n @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(n - b'0');
                            it.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(u8::try_from(v).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `@@ -a,b +c,d @@` → (c, d).
fn new_range(header: &str) -> Option<(u32, u32)> {
    let plus = header.split_whitespace().find(|w| w.starts_with('+'))?;
    let mut parts = plus[1..].splitn(2, ',');
    let start = parts.next()?.parse().ok()?;
    let lines = match parts.next() {
        Some(n) => n.parse().ok()?,
        None => 1,
    };
    Some((start, lines))
}

/// Parses `git diff`'s unified output.
pub fn parse(text: &str) -> Vec<FileChange> {
    let mut files: Vec<FileChange> = Vec::new();
    let mut new_line = 0u32;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            // The b/ side until a `---`/`+++` or rename line says better.
            let path = rest
                .rsplit_once(" b/")
                .map(|(_, b)| b.to_owned())
                .or_else(|| header_path(rest))
                .unwrap_or_default();
            files.push(FileChange {
                path,
                old_path: None,
                kind: ChangeKind::Modified,
                binary: false,
                hunks: Vec::new(),
            });
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if let Some(hunk) = file.hunks.last_mut()
            && !line.starts_with("@@")
        {
            match line.as_bytes().first() {
                Some(b'+') => {
                    hunk.added.push(new_line);
                    new_line += 1;
                }
                Some(b' ') => new_line += 1,
                Some(b'-') | Some(b'\\') => {}
                // Not a hunk line: the next file's header follows.
                _ => continue,
            }
            hunk.body.push_str(line);
            hunk.body.push('\n');
            continue;
        }
        if line.starts_with("@@") {
            let (start, lines) = new_range(line).unwrap_or((0, 0));
            new_line = start;
            file.hunks.push(Hunk {
                new_start: start,
                new_lines: lines,
                header: line.to_owned(),
                body: String::new(),
                added: Vec::new(),
            });
        } else if line.starts_with("new file mode") {
            file.kind = ChangeKind::Added;
        } else if line.starts_with("deleted file mode") {
            file.kind = ChangeKind::Deleted;
        } else if let Some(from) = line.strip_prefix("rename from ") {
            file.kind = ChangeKind::Renamed;
            file.old_path = Some(header_path(from).unwrap_or_else(|| from.to_owned()));
        } else if let Some(to) = line.strip_prefix("rename to ") {
            file.path = header_path(to).unwrap_or_else(|| to.to_owned());
        } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
            file.binary = true;
        } else if let Some(old) = line.strip_prefix("--- ") {
            if file.kind == ChangeKind::Deleted
                && let Some(p) = header_path(old)
            {
                file.path = p;
            }
        } else if let Some(new) = line.strip_prefix("+++ ")
            && let Some(p) = header_path(new)
        {
            file.path = p;
        }
    }
    files
}

impl FileChange {
    /// Whether its new code can be in the index (pinned).
    pub fn in_new_tree(&self) -> bool {
        !self.binary && self.kind != ChangeKind::Deleted
    }

    /// The first new-side line of each run of changed lines: one chunk pin
    /// each. A hunk that only removes lines pins where they were.
    pub fn pin_lines(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for h in &self.hunks {
            if h.added.is_empty() {
                out.push(h.new_start.max(1));
                continue;
            }
            let mut prev = None;
            for &l in &h.added {
                if prev.is_none_or(|p| p + 1 != l) {
                    out.push(l);
                }
                prev = Some(l);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    fn title(&self) -> String {
        let what = match self.kind {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Renamed => "renamed",
        };
        match &self.old_path {
            Some(old) => format!("{old} → {} ({what})", self.path),
            None => format!("{} ({what})", self.path),
        }
    }

    /// The file's diff: its title, then each hunk with an `@path:a-b`
    /// citation of the new lines it covers, or headers only; each hunk as
    /// diff lines, or (`style` [`DiffStyle::Code`]) as its new lines,
    /// numbered, the changed ones marked.
    fn render(&self, headers_only: bool, style: DiffStyle) -> String {
        let mut out = format!("### {}\n", self.title());
        if self.binary {
            out.push_str("(binary: no text diff)\n");
            return out;
        }
        for h in &self.hunks {
            if h.new_lines > 0 {
                let end = h.new_start + h.new_lines - 1;
                out.push_str(&format!("@{}:{}-{}\n", self.path, h.new_start, end));
            }
            out.push_str(&h.header);
            out.push('\n');
            if !headers_only {
                match style {
                    DiffStyle::Unified => out.push_str(&h.body),
                    DiffStyle::Code => out.push_str(&h.as_code()),
                }
            }
        }
        out
    }
}

impl Hunk {
    /// The hunk's new side, one numbered line each, added lines marked `+`
    /// and each run of removed lines as one `-` line saying how many.
    fn as_code(&self) -> String {
        let last = self.new_start + self.new_lines;
        let width = last.max(1).to_string().len();
        let mut out = String::new();
        let mut line = self.new_start;
        let mut removed = 0u32;
        let flush = |out: &mut String, removed: &mut u32| {
            if *removed > 0 {
                let s = if *removed == 1 { "" } else { "s" };
                out.push_str(&format!("- {:width$} | ({removed} line{s} removed)\n", ""));
                *removed = 0;
            }
        };
        for l in self.body.lines() {
            let (mark, text) = match l.split_at_checked(1) {
                Some(("+", text)) => ('+', text),
                Some((" ", text)) => (' ', text),
                Some(("-", _)) => {
                    removed += 1;
                    continue;
                }
                // `\ No newline at end of file`, or an empty context line.
                _ if l.starts_with('\\') => continue,
                _ => (' ', ""),
            };
            flush(&mut out, &mut removed);
            out.push_str(&format!("{mark} {line:>width$} | {text}\n"));
            line += 1;
        }
        flush(&mut out, &mut removed);
        out
    }
}

/// How the change under review is shown in the prompt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiffStyle {
    /// A unified diff (`-`/`+` lines).
    #[default]
    Unified,
    /// The new code, numbered, its changed lines marked.
    Code,
}

/// The diff as it goes into the prompt, and what had to give way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderedDiff {
    /// The note: a title line, then each file's diff.
    pub text: String,
    /// One line per file shown as headers only or left out.
    pub warnings: Vec<String>,
}

impl Diff {
    /// Every changed line as text (no `+`/`-`): what retrieval searches
    /// with besides the question, capped at `max` characters.
    pub fn changed_text(&self, max: usize) -> String {
        let mut out = String::new();
        for f in &self.files {
            out.push_str(&f.path);
            out.push('\n');
            for h in &f.hunks {
                for line in h.body.lines() {
                    if let Some(l) = line.strip_prefix('+').or_else(|| line.strip_prefix('-')) {
                        if out.len() + l.len() + 1 > max {
                            return out;
                        }
                        out.push_str(l);
                        out.push('\n');
                    }
                }
            }
        }
        out
    }

    /// The diff as a note within `room` (in `measure`'s unit): whole hunks
    /// while they fit; then the largest files' hunks become their headers;
    /// then files go, the largest first. Each step is a warning.
    pub fn render(&self, measure: Measure, room: usize, style: DiffStyle) -> RenderedDiff {
        let title = match style {
            DiffStyle::Unified => format!(
                "The change under review ({}), as a unified diff:\n",
                self.spec
            ),
            DiffStyle::Code => format!(
                "The change under review ({}), as the new code with numbered lines; `+` marks an added or changed line, `-` where lines were removed:\n",
                self.spec
            ),
        };
        let mut mode: Vec<u8> = vec![0; self.files.len()]; // 0 full, 1 headers, 2 out
        let text_of = |mode: &[u8]| {
            let mut t = title.clone();
            for (f, m) in self.files.iter().zip(mode) {
                match m {
                    0 => t.push_str(&f.render(false, style)),
                    1 => t.push_str(&f.render(true, style)),
                    _ => {}
                }
            }
            t
        };
        let size = |f: &FileChange| measure.size(&f.render(false, style));
        let mut order: Vec<usize> = (0..self.files.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(size(&self.files[i])), i));
        for step in [1u8, 2] {
            for &i in &order {
                if measure.size(&text_of(&mode)) <= room {
                    break;
                }
                mode[i] = step;
            }
        }
        let mut warnings = Vec::new();
        for (f, m) in self.files.iter().zip(&mode) {
            match m {
                1 => warnings.push(format!(
                    "diff of {}: hunks shown as headers only (the diff may take {room} of the budget)",
                    f.path
                )),
                2 => warnings.push(format!(
                    "diff of {}: left out (the diff may take {room} of the budget)",
                    f.path
                )),
                _ => {}
            }
        }
        for f in &self.files {
            if f.binary {
                warnings.push(format!("{}: binary, no text diff", f.path));
            } else if f.kind == ChangeKind::Deleted {
                warnings.push(format!(
                    "{}: deleted; its old code is in the diff only",
                    f.path
                ));
            }
        }
        RenderedDiff {
            text: text_of(&mode),
            warnings,
        }
    }
}

/// The last few commit subjects of each path (at most `per_file`), for the
/// note on the touched files' history; empty when git has none.
pub fn recent_commits(root: &Path, paths: &[&str], per_file: usize) -> Vec<(String, Vec<String>)> {
    let n = format!("-{per_file}");
    paths
        .iter()
        .filter_map(|p| {
            let log = run(root, &["log", &n, "--format=%h %s (%as)", "--", p])
                .ok()?
                .ok()?;
            let subjects: Vec<String> = log.lines().map(str::to_owned).collect();
            (!subjects.is_empty()).then(|| ((*p).to_owned(), subjects))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "\
diff --git a/src/a.rs b/src/a.rs
index 1111111..2222222 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -2,4 +2,5 @@ fn a() {
 one
-two
+two changed
+inserted
 three
@@ -20,2 +21,1 @@ fn b() {
 keep
-removed
diff --git a/old name.rs b/new name.rs
similarity index 90%
rename from old name.rs
rename to new name.rs
diff --git a/gone.rs b/gone.rs
deleted file mode 100644
index 3333333..0000000
--- a/gone.rs
+++ /dev/null
@@ -1,2 +0,0 @@
-fn gone() {}
-
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..4444444
Binary files /dev/null and b/logo.png differ
diff --git \"a/sp\\303\\251cial.rs\" \"b/sp\\303\\251cial.rs\"
new file mode 100644
--- /dev/null
+++ \"b/sp\\303\\251cial.rs\"
@@ -0,0 +1 @@
+fn special() {}
";

    #[test]
    fn parses_hunks_renames_deletions_binaries_and_quoted_paths() {
        let files = parse(DIFF);
        assert_eq!(files.len(), 5);
        let a = &files[0];
        assert_eq!(
            (a.path.as_str(), a.kind),
            ("src/a.rs", ChangeKind::Modified)
        );
        assert_eq!(a.hunks.len(), 2);
        assert_eq!(a.hunks[0].added, vec![3, 4]);
        assert_eq!(a.pin_lines(), vec![3, 21]);
        assert_eq!(files[1].kind, ChangeKind::Renamed);
        assert_eq!(files[1].path, "new name.rs");
        assert_eq!(files[1].old_path.as_deref(), Some("old name.rs"));
        assert_eq!(
            (files[2].path.as_str(), files[2].kind),
            ("gone.rs", ChangeKind::Deleted)
        );
        assert!(!files[2].in_new_tree());
        assert!(files[3].binary);
        assert_eq!(files[3].path, "logo.png");
        assert_eq!(files[4].path, "spécial.rs");
        assert_eq!(files[4].hunks[0].added, vec![1]);
    }

    #[test]
    fn a_diff_over_its_room_degrades_to_headers_then_drops() {
        let diff = Diff {
            spec: DiffSpec::Staged,
            files: parse(DIFF),
        };
        let chars = Measure::Chars;
        let full = diff.render(chars, 100_000, DiffStyle::Unified);
        assert!(full.text.contains("+two changed\n"));
        assert!(full.text.contains("@src/a.rs:2-6\n"));
        assert_eq!(full.warnings.len(), 2, "{:?}", full.warnings); // binary + deleted
        let headers = diff.render(chars, full.text.len() - 10, DiffStyle::Unified);
        assert!(!headers.text.contains("+two changed"), "{}", headers.text);
        assert!(headers.text.contains("@@ -2,4 +2,5 @@"));
        assert!(headers.warnings.iter().any(|w| w.contains("headers only")));
        let tiny = diff.render(chars, 80, DiffStyle::Unified);
        assert!(tiny.warnings.iter().any(|w| w.contains("left out")));
        assert!(chars.size(&tiny.text) <= 80 || tiny.text.lines().count() == 1);
    }

    #[test]
    fn as_code_numbers_the_new_lines_and_marks_what_changed() {
        let diff = Diff {
            spec: DiffSpec::Staged,
            files: parse(DIFF),
        };
        let code = diff.render(Measure::Chars, 100_000, DiffStyle::Code).text;
        let a = "\
### src/a.rs (modified)
@src/a.rs:2-6
@@ -2,4 +2,5 @@ fn a() {
  2 | one
-   | (1 line removed)
+ 3 | two changed
+ 4 | inserted
  5 | three
@src/a.rs:21-21
@@ -20,2 +21,1 @@ fn b() {
  21 | keep
-    | (1 line removed)
";
        assert!(code.contains(a), "{code}");
        assert!(code.contains("+ 1 | fn special() {}\n"), "{code}");
        assert!(
            code.starts_with("The change under review (staged changes), as the new code"),
            "{code}"
        );
        // A deleted file has no new side: its hunk is only the removal.
        assert!(code.contains("-   | (2 lines removed)\n"), "{code}");
        assert!(!code.contains("two\n"), "removed text stays out: {code}");
        let unified = diff
            .render(Measure::Chars, 100_000, DiffStyle::Unified)
            .text;
        assert!(unified.contains("-two\n+two changed\n"));
    }

    #[test]
    fn specs_parse_or_say_what_is_expected() {
        assert_eq!("staged".parse::<DiffSpec>().unwrap(), DiffSpec::Staged);
        assert_eq!("unstaged".parse::<DiffSpec>().unwrap(), DiffSpec::Unstaged);
        assert_eq!(
            "main..HEAD".parse::<DiffSpec>().unwrap(),
            DiffSpec::Range("main..HEAD".into())
        );
        for spec in [
            DiffSpec::Unstaged,
            DiffSpec::Staged,
            DiffSpec::Range("v1..HEAD".into()),
        ] {
            assert_eq!(
                spec.arg().parse::<DiffSpec>().unwrap(),
                spec,
                "arg reads back"
            );
        }
        for bad in ["--output=x", "HEAD", "a .. b"] {
            let err = bad.parse::<DiffSpec>().unwrap_err().to_string();
            assert!(err.contains("BASE..HEAD"), "{err}");
        }
    }
}

//! What agents were given: `loupe mcp` records every `context`, `search`
//! and `explain` call in the project's data directory, and the app lists
//! them, re-opens one in its inspector and can save knobs that the agent's
//! next calls start from.
//!
//! ```text
//! <project data dir>/agent-requests.jsonl    one JSON object per call, appended
//! <project data dir>/agent-requests.1.jsonl  the previous file, once the first passes MAX_LOG_BYTES
//! <project data dir>/agent-knobs.json        a KnobsPatch over the team's knobs, for agents
//! ```
//!
//! An entry holds what is needed to ask again exactly (question, change,
//! knobs, the resolved pins and bans) and what the agent got, bounded: the
//! report's numbers, the prompt's size and blake3 hash (so the app can say
//! whether asking again gives the same prompt) and the first
//! [`MAX_ITEMS`] items by rank. The prompt itself is not kept: it can be
//! tens of thousands of tokens per call.
//!
//! *Invariants:* recording never fails a tool call (the server logs a
//! failure on stderr and answers). Each entry is one `write` of one line to
//! a file opened for appending, so entries from several servers do not
//! interleave; a line cut short by a crash, or from a newer Loupe, is
//! skipped and counted by [`read`], never fatal. The log is at most two
//! files of about [`MAX_LOG_BYTES`].

use crate::asking::selection::Selection;
use crate::{Answer, Error, Result};
use loupe_assemble::report::ItemStatus;
use loupe_assemble::{Knobs, KnobsPatch};
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The log, in the project's data directory.
pub const LOG_FILE: &str = "agent-requests.jsonl";
/// The log before the last rotation.
pub const OLD_LOG_FILE: &str = "agent-requests.1.jsonl";
/// Size past which the log is rotated (about 400 calls).
pub const MAX_LOG_BYTES: u64 = 4 * 1024 * 1024;
/// Items kept per entry, best rank first.
pub const MAX_ITEMS: usize = 40;
/// Knobs saved for agents, in the project's data directory.
pub const AGENT_KNOBS_FILE: &str = "agent-knobs.json";
/// Largest agent-knobs file read (a patch is a few hundred bytes).
const MAX_AGENT_KNOBS_BYTES: u64 = 256 * 1024;

/// One item of what the agent got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoggedItem {
    /// Project-relative path.
    pub path: String,
    /// First line.
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// Final score.
    pub score: f32,
    /// Level of detail, if in the prompt.
    pub lod: Option<u8>,
    /// Size in the budget's unit (0 if not in the prompt).
    pub size: u32,
    /// What happened to it, in words ("included", "dropped: over budget …").
    pub status: String,
    /// Whether it is in the prompt.
    pub in_prompt: bool,
}

/// The numbers of what the agent got.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoggedReport {
    /// The model row used.
    pub model: String,
    /// `tokens` or `chars`.
    pub unit: String,
    /// The budget.
    pub budget: u32,
    /// What the prompt used.
    pub used: u32,
    /// Something was degraded, dropped for the budget or trimmed.
    pub truncated: bool,
    /// Items in the prompt.
    pub included: u32,
    /// Items in the prompt at less detail than they wanted.
    pub degraded: u32,
    /// Candidates not in the prompt.
    pub dropped: u32,
    /// The prompt's length in bytes.
    pub prompt_bytes: u64,
    /// blake3 of the prompt, hex.
    pub prompt_hash: String,
}

/// One recorded tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentRequest {
    /// Unique across processes: milliseconds, process id, sequence.
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub time_ms: i64,
    /// What was asked (its fields are at the entry's top level).
    #[serde(flatten)]
    pub call: CallInfo,
    /// What the agent got.
    pub report: LoggedReport,
    /// The first items by rank.
    pub items: Vec<LoggedItem>,
    /// Candidates in all (the items above are the first of them).
    pub items_total: u32,
}

/// A new, process-unique request id at `time_ms`.
fn new_id(time_ms: i64) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    format!("{time_ms}-{}-{seq}", std::process::id())
}

/// Now, in milliseconds since the Unix epoch.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// What a call asked, as it was asked: what the app needs to ask again.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CallInfo {
    /// `context`, `search` or `explain`.
    pub tool: String,
    /// The MCP client's name and version, when it said.
    pub client: Option<String>,
    /// The question as asked.
    pub question: String,
    /// The change reviewed, as `DiffSpec::arg` writes it (`unstaged`,
    /// `staged`, `BASE..HEAD`), if any.
    pub change: Option<String>,
    /// For `explain`: the file or symbol asked about.
    pub target: Option<String>,
    /// The knobs the call was assembled with (team file, agent knobs and
    /// the call's arguments applied).
    pub knobs: Knobs,
    /// The call's pins and bans, resolved to the index's targets.
    pub selection: Selection,
}

impl AgentRequest {
    /// The entry for a call and its answer, stamped now.
    pub fn new(call: CallInfo, answer: &Answer) -> AgentRequest {
        let time_ms = now_ms();
        let a = &answer.assembly;
        let unit = a.report.unit.clone();
        let mut order: Vec<usize> = (0..a.items.len()).collect();
        order.sort_by(|&x, &y| {
            let (x, y) = (&a.items[x], &a.items[y]);
            y.score
                .score
                .total_cmp(&x.score.score)
                .then(x.id.cmp(&y.id))
        });
        let count = |f: &dyn Fn(&ItemStatus) -> bool| {
            u32::try_from(a.items.iter().filter(|i| f(&i.status)).count()).unwrap_or(u32::MAX)
        };
        let items = order
            .into_iter()
            .take(MAX_ITEMS)
            .map(|i| {
                let row = &a.items[i];
                LoggedItem {
                    path: row.path.clone(),
                    start_line: row.start_line,
                    end_line: row.end_line,
                    score: row.score.score,
                    lod: row.lod,
                    size: row.size,
                    status: row.status.describe(&unit),
                    in_prompt: row.status.is_in(),
                }
            })
            .collect();
        AgentRequest {
            id: new_id(time_ms),
            time_ms,
            call,
            report: LoggedReport {
                model: a.report.model.clone(),
                unit,
                budget: a.report.budget,
                used: a.report.used,
                truncated: a.report.was_truncated,
                included: count(&|s| s.is_in()),
                degraded: count(&|s| matches!(s, ItemStatus::Degraded { .. })),
                dropped: a.report.dropped_count,
                prompt_bytes: a.prompt.len() as u64,
                prompt_hash: prompt_hash(&a.prompt),
            },
            items,
            items_total: u32::try_from(a.items.len()).unwrap_or(u32::MAX),
        }
    }
}

/// The hash an entry keeps of its prompt: blake3, hex.
pub fn prompt_hash(prompt: &str) -> String {
    blake3::hash(prompt.as_bytes()).to_hex().to_string()
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::Io { what, path, source }
}

/// Appends `entry` to the log in `data_dir`, rotating first when the log
/// is over [`MAX_LOG_BYTES`].
pub fn record(data_dir: &Path, entry: &AgentRequest) -> Result<()> {
    let path = data_dir.join(LOG_FILE);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
        // Another server may rotate at the same moment: the loser's rename
        // finds no file, which is fine.
        match std::fs::rename(&path, data_dir.join(OLD_LOG_FILE)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("rotating the agent log", &path)(e)),
        }
    }
    let mut line = serde_json::to_vec(entry).map_err(|e| Error::Corrupt {
        what: "agent log entry",
        detail: e.to_string(),
    })?;
    line.push(b'\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(io("opening the agent log", &path))?;
    file.write_all(&line)
        .map_err(io("writing the agent log", &path))
}

/// The log as read: entries oldest first, and how many lines were skipped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentLog {
    /// Every entry that decoded, oldest first.
    pub entries: Vec<AgentRequest>,
    /// Lines that did not decode (cut short by a crash, or from another
    /// version of Loupe).
    pub skipped: usize,
}

/// A cheap fingerprint of the log files (sizes and modification times):
/// equal fingerprints mean [`read`] would return the same entries.
pub fn fingerprint(data_dir: &Path) -> u64 {
    let mut h = blake3::Hasher::new();
    for name in [OLD_LOG_FILE, LOG_FILE] {
        if let Ok(m) = std::fs::metadata(data_dir.join(name)) {
            h.update(&m.len().to_le_bytes());
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            h.update(&modified.to_le_bytes());
        } else {
            h.update(b"-");
        }
    }
    let bytes = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// Reads the log in `data_dir` (the rotated file, then the current one).
/// A missing log is empty; an unreadable one is an error.
pub fn read(data_dir: &Path) -> Result<AgentLog> {
    let mut log = AgentLog::default();
    for name in [OLD_LOG_FILE, LOG_FILE] {
        let path = data_dir.join(name);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io("reading the agent log", &path)(e)),
        };
        for line in bytes.split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<AgentRequest>(line) {
                Ok(entry) => log.entries.push(entry),
                Err(_) => log.skipped += 1,
            }
        }
    }
    log.entries.sort_by_key(|e| e.time_ms);
    Ok(log)
}

impl AgentLog {
    /// The entry `id`; a request error when the log no longer has it.
    pub fn find(&self, id: &str) -> Result<&AgentRequest> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.id == id)
            .ok_or_else(|| {
                Error::Request(format!(
                    "no agent request {id:?} in the log (rotated away or cleared)"
                ))
            })
    }
}

fn agent_knobs_path(data_dir: &Path) -> PathBuf {
    data_dir.join(AGENT_KNOBS_FILE)
}

/// The knobs saved for agents, in range (what was out of range is taken
/// out and said in the warnings). A missing file is `None`; a malformed,
/// oversized or unreadable one is `None` with a warning: it never stops a
/// tool call.
pub fn load_agent_knobs(data_dir: &Path) -> (Option<KnobsPatch>, Vec<String>) {
    let path = agent_knobs_path(data_dir);
    let shown = path.display();
    match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (None, Vec::new()),
        Err(e) => return (None, vec![format!("{shown}: {e}, ignored")]),
        Ok(m) if m.len() > MAX_AGENT_KNOBS_BYTES => {
            return (
                None,
                vec![format!(
                    "{shown}: over {MAX_AGENT_KNOBS_BYTES} bytes, ignored"
                )],
            );
        }
        Ok(_) => {}
    }
    let mut patch: KnobsPatch = match std::fs::read(&path)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
    {
        Ok(p) => p,
        Err(e) => return (None, vec![format!("{shown}: {e}, ignored")]),
    };
    let warnings = patch
        .validate()
        .iter()
        .map(|p| format!("{shown}: {p}, ignored"))
        .collect();
    (Some(patch), warnings)
}

/// Saves `patch` as the knobs agents start from (over the team's), through
/// a temporary file and a rename; `None` removes the file.
pub fn save_agent_knobs(data_dir: &Path, patch: Option<&KnobsPatch>) -> Result<()> {
    let path = agent_knobs_path(data_dir);
    let Some(patch) = patch else {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(io("removing the agent knobs", &path)(e))
            }
            _ => Ok(()),
        };
    };
    let bytes = serde_json::to_vec_pretty(patch).map_err(|e| Error::Corrupt {
        what: "agent knobs",
        detail: e.to_string(),
    })?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, bytes).map_err(io("writing the agent knobs", &tmp))?;
    std::fs::rename(&tmp, &path).map_err(io("replacing the agent knobs", &path))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;
    use loupe_assemble::Budget;

    fn entry(time_ms: i64, question: &str) -> AgentRequest {
        AgentRequest {
            id: new_id(time_ms),
            time_ms,
            call: CallInfo {
                tool: "context".into(),
                client: Some("test 1.0".into()),
                question: question.into(),
                ..CallInfo::default()
            },
            report: LoggedReport::default(),
            items: Vec::new(),
            items_total: 0,
        }
    }

    #[test]
    fn entries_round_trip_and_a_cut_line_is_skipped_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), AgentLog::default());
        record(dir.path(), &entry(2, "second")).unwrap();
        record(dir.path(), &entry(1, "first")).unwrap();
        // A crash mid-write leaves half a line; the next write starts a new one.
        let path = dir.path().join(LOG_FILE);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"id\": \"cut sh").unwrap();
        drop(f);
        let log = read(dir.path()).unwrap();
        let questions: Vec<&str> = log
            .entries
            .iter()
            .map(|e| e.call.question.as_str())
            .collect();
        assert_eq!(questions, ["first", "second"], "oldest first");
        assert_eq!(log.skipped, 1);
        let first = &log.entries[0];
        assert_eq!(log.find(&first.id).unwrap(), first);
        let missing = log.find("nope").unwrap_err().to_string();
        assert!(missing.contains("no agent request"), "{missing}");
    }

    #[test]
    fn the_log_rotates_into_one_old_file_and_both_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        record(dir.path(), &entry(1, "old")).unwrap();
        // Pad the log past the limit, as many calls would.
        let big = entry(2, &"x".repeat(usize::try_from(MAX_LOG_BYTES).unwrap()));
        record(dir.path(), &big).unwrap();
        let before = fingerprint(dir.path());
        record(dir.path(), &entry(3, "new")).unwrap();
        assert_ne!(fingerprint(dir.path()), before);
        assert!(std::fs::metadata(&path).unwrap().len() < 4096, "rotated");
        let log = read(dir.path()).unwrap();
        assert_eq!(log.entries.len(), 3);
        assert_eq!(log.entries[2].call.question, "new");
        // The next rotation drops the oldest file ("old" and the x's).
        let big = entry(4, &"y".repeat(usize::try_from(MAX_LOG_BYTES).unwrap()));
        record(dir.path(), &big).unwrap();
        record(dir.path(), &entry(5, "newest")).unwrap();
        let questions: Vec<String> = read(dir.path())
            .unwrap()
            .entries
            .iter()
            .map(|e| e.call.question.chars().take(6).collect())
            .collect();
        assert_eq!(questions, ["new", "yyyyyy", "newest"]);
    }

    #[test]
    fn agent_knobs_save_load_and_bad_files_are_warnings() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load_agent_knobs(dir.path()), (None, Vec::new()));
        let patch = KnobsPatch {
            budget: Some(Budget::Tokens(9000)),
            min_score: Some(5.0),
            ..KnobsPatch::default()
        };
        save_agent_knobs(dir.path(), Some(&patch)).unwrap();
        let (loaded, warnings) = load_agent_knobs(dir.path());
        assert_eq!(loaded.unwrap().budget, Some(Budget::Tokens(9000)));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("`min_score` 5"), "{warnings:?}");
        std::fs::write(dir.path().join(AGENT_KNOBS_FILE), "{not json").unwrap();
        let (loaded, warnings) = load_agent_knobs(dir.path());
        assert!(
            loaded.is_none() && warnings[0].contains("ignored"),
            "{warnings:?}"
        );
        save_agent_knobs(dir.path(), None).unwrap();
        assert_eq!(load_agent_knobs(dir.path()), (None, Vec::new()));
        save_agent_knobs(dir.path(), None).unwrap();
    }
}

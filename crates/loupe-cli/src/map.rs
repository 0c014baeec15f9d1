//! `loupe map`: the project's token map as a text tree (or JSON).

use crate::setup::{index_if_new, knob_patch, open, team_knobs};
use crate::{Cli, KnobArgs};
use anyhow::Result;
use loupe_engine::AskRequest;
use loupe_engine::asking::map::{MapNode, Marks, StatusCounts};
use std::fmt::Write as _;
use std::path::Path;

/// How much of the map to print.
pub(crate) struct MapView {
    /// Folder levels shown below the root.
    pub(crate) depth: Option<u32>,
    /// Entries smaller than this are summed into one line per folder.
    pub(crate) min_tokens: u64,
    /// JSON instead of the tree.
    pub(crate) json: bool,
}

pub(crate) async fn map(
    cli: &Cli,
    path: &Path,
    question: Option<&str>,
    knob_args: &KnobArgs,
    view: MapView,
) -> Result<()> {
    let flags = knob_patch(knob_args)?;
    let project = open(cli, path).await?;
    index_if_new(&project, path, loupe_engine::Until::Complete).await?;
    let mut knobs = team_knobs(project.root(), knob_args.no_team_defaults);
    flags.apply(&mut knobs);
    let answer = match question {
        Some(q) => Some(
            project
                .ask(
                    &AskRequest::new(q, knobs.clone()),
                    &mut loupe_engine::AskCache::default(),
                )
                .await?,
        ),
        None => None,
    };
    let banned = answer
        .as_ref()
        .map(|a| a.selected.banned_paths())
        .unwrap_or_default();
    let marks = answer.as_ref().map(|a| Marks {
        assembly: &a.assembly,
        path_weights: &knobs.path_weights,
        banned: &banned,
    });
    let tree = project.token_map(marks).await?;
    let assembly = answer.as_ref().map(|a| &a.assembly);
    if view.json {
        outln!("{}", serde_json::to_string_pretty(&tree)?);
    } else {
        let used = assembly
            .as_ref()
            .map(|a| (a.report.used, a.report.unit.as_str()));
        out!("{}", render(&tree, question, used, &view));
    }
    Ok(())
}

/// `1234567` → `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn counts_text(k: &StatusCounts) -> String {
    let parts: Vec<String> = [
        (k.included, "included"),
        (k.degraded, "degraded"),
        (k.dropped, "dropped"),
        (k.hidden, "hidden"),
        (k.banned, "banned"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("  [{}]", parts.join(", "))
    }
}

/// The map as a tree of lines: a header, then every folder and file with
/// its tokens and (for a question) its status.
pub(crate) fn render(
    tree: &MapNode,
    question: Option<&str>,
    used: Option<(u32, &str)>,
    view: &MapView,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} files, {} chunks, {} tokens (o200k_base, whole files)",
        tree.name,
        thousands(u64::from(tree.files)),
        thousands(u64::from(tree.chunks)),
        thousands(tree.tokens)
    );
    if let (Some(q), Some(k)) = (question, &tree.counts) {
        let (used, unit) = used.unwrap_or((0, "tokens"));
        let _ = writeln!(
            out,
            "prompt for {q:?} ({} {unit}): {} files included, {} degraded, {} dropped, {} hidden by path weights, {} not retrieved",
            thousands(u64::from(used)),
            k.included,
            k.degraded,
            k.dropped,
            k.hidden,
            k.not_retrieved
        );
    }
    lines(&mut out, tree, "", 1, view);
    out
}

fn lines(out: &mut String, node: &MapNode, prefix: &str, level: u32, view: &MapView) {
    let (shown, folded): (Vec<&MapNode>, Vec<&MapNode>) = node
        .children
        .iter()
        .partition(|c| c.tokens >= view.min_tokens);
    let last = shown.len() + usize::from(!folded.is_empty());
    for (i, child) in shown.iter().enumerate() {
        let is_last = i + 1 == last;
        let (branch, next) = if is_last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        let tokens = thousands(child.tokens);
        if child.is_file() {
            let status = child
                .status
                .as_ref()
                .filter(|s| !matches!(s, loupe_engine::asking::map::FileStatus::NotRetrieved))
                .map(|s| format!("  {}", s.describe()))
                .unwrap_or_default();
            let _ = writeln!(out, "{prefix}{branch}{} {tokens}{status}", child.name);
        } else {
            let counts = child.counts.as_ref().map(counts_text).unwrap_or_default();
            let files = if child.files == 1 { "file" } else { "files" };
            let _ = writeln!(
                out,
                "{prefix}{branch}{}/ {tokens} in {} {files}{counts}",
                child.name, child.files
            );
            if view.depth.is_none_or(|d| level < d) {
                lines(out, child, &format!("{prefix}{next}"), level + 1, view);
            }
        }
    }
    if !folded.is_empty() {
        let tokens: u64 = folded.iter().map(|c| c.tokens).sum();
        let mut counts = StatusCounts::default();
        let mut any = false;
        for c in &folded {
            match (&c.counts, &c.status) {
                (Some(k), _) => counts.merge(k),
                (None, Some(s)) => counts.add(s),
                (None, None) => continue,
            }
            any = true;
        }
        let counts = if any {
            counts_text(&counts)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{prefix}└── … {} more under {} tokens: {}{counts}",
            folded.len(),
            thousands(view.min_tokens),
            thousands(tokens)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}

//! The guard's secret redactions on real code: every file Loupe would index
//! under CORPUS is cut into Loupe's chunks and each chunk guarded for
//! secrets, as a prompt's retrieved code is. Prints a summary; writes each
//! redaction (path, line, rule, the line as it was) as JSON lines to OUT,
//! for checking a sample by hand (EVAL.md, "Secrets on real code").
//!
//! `cargo run --release -p loupe-engine --example guard_scan -- CORPUS OUT.jsonl`

use loupe_assemble::guard::{GuardConfig, guard_text};
use loupe_engine::indexing::chunk::{ChunkConfig, chunk_file};
use loupe_engine::indexing::walk::{WalkConfig, walk};
use loupe_engine::progress::{CancelToken, no_progress};
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(corpus), Some(out)) = (args.next(), args.next()) else {
        return Err("usage: guard_scan CORPUS OUT.jsonl".into());
    };
    let corpus = PathBuf::from(corpus);
    let walked = walk(
        &corpus,
        &WalkConfig::default(),
        &no_progress,
        &CancelToken::new(),
    )?;
    let secrets = GuardConfig {
        sanitize: false,
        injections: false,
        secrets: true,
    };
    let cfg = ChunkConfig::default();
    let mut out = BufWriter::new(std::fs::File::create(out)?);
    let (mut files, mut chunks, mut flagged) = (0u64, 0u64, 0u64);
    let mut by_rule: BTreeMap<String, u64> = BTreeMap::new();
    for file in &walked.files {
        // Binary and non-UTF-8 files are not indexed as text.
        let Ok(text) = std::fs::read_to_string(&file.abs) else {
            continue;
        };
        files += 1;
        let parsed = chunk_file(&file.rel, &text, &cfg);
        for c in &parsed.chunks {
            let Some(body) = text.get(c.start_byte as usize..c.end_byte as usize) else {
                continue;
            };
            chunks += 1;
            let mut found = Vec::new();
            guard_text(body, secrets, &file.rel, c.start_line, &mut found);
            if found.is_empty() {
                continue;
            }
            flagged += 1;
            for r in found {
                *by_rule.entry(r.rule.clone()).or_default() += 1;
                let line = r.line.unwrap_or(c.start_line);
                let original = text
                    .lines()
                    .nth(line.saturating_sub(1) as usize)
                    .unwrap_or("");
                let original: String = original.chars().take(300).collect();
                serde_json::to_writer(
                    &mut out,
                    &serde_json::json!({
                        "path": file.rel, "line": line, "rule": r.rule,
                        "chars": r.chars, "text": original,
                    }),
                )?;
                out.write_all(b"\n")?;
            }
        }
    }
    out.flush()?;
    println!(
        "{files} files, {chunks} chunks; {flagged} chunks with a secret redaction ({:.3}%)",
        100.0 * flagged as f64 / chunks.max(1) as f64
    );
    for (rule, n) in by_rule {
        println!("  {rule}: {n}");
    }
    Ok(())
}

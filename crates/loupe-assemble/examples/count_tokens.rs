//! Counts each file named on stdin (one path per line) with every encoding
//! Loupe ships, one JSON object per line: what `tools/tokens/margins.py`
//! compares with the models' own tokenizers (TOKENIZERS.md).

use std::io::{BufRead, Write};

use loupe_assemble::tokens::{Encoding, count};

fn main() -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for path in std::io::stdin().lock().lines() {
        let path = path?;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("count_tokens: {path}: {e}");
                continue;
            }
        };
        let counts: serde_json::Map<String, serde_json::Value> = [
            Encoding::O200kBase,
            Encoding::Cl100kBase,
            Encoding::Qwen2,
            Encoding::Qwen35,
        ]
        .into_iter()
        .map(|e| (e.name().to_owned(), count(e, &text).into()))
        .collect();
        let line = serde_json::json!({ "path": path, "counts": counts });
        writeln!(out, "{line}")?;
    }
    Ok(())
}

//! Recompute the static embedder's shipped centring mean
//! (`assets/static-minilm-l3-mean.txt`) from the whole distilled table.
//!
//! Run after changing the bundled model or the distillation recipe:
//! `cargo run --release -p loupe-engine --example static_mean -- DATA_ROOT`.
//! It reads `DATA_ROOT/models/static-minilm-l3.table` when that file holds
//! every row, and otherwise distills the whole vocabulary (about a minute
//! and a half on 2 cores) and saves it there first.

use loupe_engine::progress::{CancelToken, Progress};
use loupe_engine::signals::embed::{
    PocketEmbedder, TABLE_FILE, TokenTable, Vocabulary, all_ids, distill, models_dir, table_id,
};

/// Where the mean goes, relative to this crate.
const OUT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/static-minilm-l3-mean.txt"
);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args_os()
        .nth(1)
        .map(std::path::PathBuf::from)
        .ok_or("usage: static_mean DATA_ROOT")?;
    let vocab = Vocabulary::bundled()?;
    let dim = pocket_encoder::model_info().dimensions;
    let path = models_dir(&root).join(TABLE_FILE);
    let reachable = all_ids(&vocab)
        .into_iter()
        .filter(|&id| vocab.source_text(id).is_some())
        .count();
    let table = match TokenTable::load(&path, &table_id(), vocab.size(), dim) {
        Ok(t) if t.present() == reachable => t,
        _ => {
            eprintln!(
                "distilling all {reachable} reachable tokens into {}",
                path.display()
            );
            let encoder = PocketEmbedder::new()?;
            let report = |p: Progress| eprint!("\r{} / {:?}", p.done, p.total);
            let t = distill(
                &encoder,
                &vocab,
                &all_ids(&vocab),
                &report,
                &CancelToken::new(),
            )?;
            eprintln!();
            std::fs::create_dir_all(models_dir(&root))?;
            t.save(&path)?;
            t
        }
    };
    let mean = table.mean().ok_or("the table has no rows")?;
    let mut out = table_id();
    for x in &mean {
        out.push_str(&format!("\n{x}"));
    }
    out.push('\n');
    std::fs::write(OUT, out)?;
    eprintln!("wrote the mean of {} rows to {OUT}", table.present());
    Ok(())
}

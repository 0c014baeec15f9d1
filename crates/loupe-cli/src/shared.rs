//! The team's shared store from the command line: which store a command
//! uses (`--shared`, `LOUPE_SHARED_URL`, or `[shared]` in the project's
//! `.loupe.toml`, in that order), `loupe shared status` and `loupe shared
//! gc`, and the line an index run or `loupe status` prints about it.

use crate::{Cli, SharedCommand};
use anyhow::{Context, Result, anyhow};
use loupe_engine::stores::shared::{Shared, SharedConfig, SharedReport};
use std::path::Path;
use std::time::Duration;

/// The store the command uses for the project at `root`, if any
/// ([`SharedConfig::resolve`]: `--shared`, `LOUPE_SHARED_URL`, `.loupe.toml`).
pub(crate) fn config(cli: &Cli, root: &Path) -> Result<Option<SharedConfig>> {
    let mode = cli.shared_mode.as_deref();
    let Some(mut cfg) =
        SharedConfig::resolve(cli.shared.as_deref(), mode, root).map_err(|e| anyhow!(e))?
    else {
        return Ok(None);
    };
    cfg.timeout = Duration::from_secs_f64(cli.shared_timeout.max(0.1));
    Ok(Some(cfg))
}

/// `loupe shared status|gc`; `model` is this build's embedder's, whose
/// vectors `gc` keeps.
pub(crate) async fn command(cli: &Cli, what: &SharedCommand, model: Option<String>) -> Result<()> {
    let (path, json) = match what {
        SharedCommand::Status { path, json } | SharedCommand::Gc { path, json } => (path, *json),
    };
    let cfg = config(cli, path)?.context(
        "no shared store: pass --shared URL, set LOUPE_SHARED_URL, or add [shared] to .loupe.toml",
    )?;
    let shown = cfg.shown();
    let store = Shared::new(cfg).map_err(|e| anyhow!(e))?;
    let current = loupe_engine::indexing::derived::deriver_prefix();
    match what {
        SharedCommand::Status { .. } => {
            let holding = store.holding().await.map_err(|e| anyhow!(e))?;
            if json {
                let value = serde_json::json!({
                    "store": shown,
                    "current_deriver": current,
                    "current_model": model,
                    "holding": holding,
                });
                outln!("{}", serde_json::to_string_pretty(&value)?);
                return Ok(());
            }
            outln!("store: {shown}");
            if holding.is_empty() {
                outln!("empty");
            }
            for h in holding {
                let mark = if h.by.starts_with(&current) || Some(&h.by) == model.as_ref() {
                    "  (this build's)"
                } else {
                    ""
                };
                outln!(
                    "{:<8} {:>9} rows {:>12} bytes  {}{mark}",
                    h.table,
                    h.rows,
                    h.bytes,
                    h.by
                );
            }
        }
        SharedCommand::Gc { .. } => {
            let models: Vec<String> = model.into_iter().collect();
            let gone = store.gc(&current, &models).await.map_err(|e| anyhow!(e))?;
            if json {
                outln!("{}", serde_json::json!({ "store": shown, "deleted": gone }));
            } else {
                outln!(
                    "{shown}: deleted {gone} rows no longer derived by this build ({current}*{})",
                    models.first().map(|m| format!(", {m}")).unwrap_or_default()
                );
            }
        }
    }
    Ok(())
}

/// One line about what a run got from the store, for `index` and `status`.
pub(crate) fn describe(r: &SharedReport) -> String {
    let mut line = format!(
        "shared:   {}: {} files and {} vectors pulled, {} files and {} vectors pushed",
        r.store, r.files_pulled, r.vectors_pulled, r.files_pushed, r.vectors_pushed
    );
    if r.rejected > 0 {
        line.push_str(&format!("; {} damaged rows ignored", r.rejected));
    }
    if let Some(why) = &r.fault {
        line.push_str(&format!("; stopped asking ({why}), the rest derived here"));
    }
    line
}

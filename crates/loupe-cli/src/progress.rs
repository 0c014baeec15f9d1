//! A terminal progress bar for indexing, fed by the engine's progress sink.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use loupe_engine::{Progress, Stage};
use std::sync::Mutex;

/// One bar that relabels itself per stage.
pub struct Bar {
    bar: ProgressBar,
    stage: Mutex<Option<Stage>>,
}

impl Bar {
    /// A bar on stderr (hidden when stderr is not a terminal).
    pub fn new() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        Self {
            bar,
            stage: Mutex::new(None),
        }
    }

    /// Update from an engine report.
    pub fn update(&self, p: Progress) {
        let mut stage = self
            .stage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *stage != Some(p.stage) {
            *stage = Some(p.stage);
            let label = match p.stage {
                Stage::Walk => "walking",
                Stage::Parse => "parsing",
                Stage::Commit => "committing",
                Stage::Ready => "searchable",
                Stage::Embed => "embedding",
                Stage::Vectors => "vector index",
                Stage::Graph => "vector graph",
                Stage::Distill => "distilling",
                Stage::Wait => "waiting for another Loupe process",
                Stage::Done => "done",
            };
            let template = if p.total.is_some() {
                "{prefix:>12} [{bar:30}] {pos}/{len} ({per_sec}, eta {eta})"
            } else {
                "{prefix:>12} {spinner} {pos}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                self.bar.set_style(style.progress_chars("=> "));
            }
            self.bar.set_prefix(label);
            self.bar.reset();
        }
        self.bar.set_length(p.total.unwrap_or(0));
        self.bar.set_position(p.done);
    }

    /// Remove the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

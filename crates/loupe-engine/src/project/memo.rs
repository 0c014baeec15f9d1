//! What a project remembers between questions for the stages that read
//! it: the primer files of the last lookup (`retrieve`) and each file's
//! tokens for the token map (`map`). The caches live here, beside the
//! handles they sit with, so that the project depends on no stage.

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};

/// Each indexed file's path, tokens and chunks, as the token map is built
/// from.
pub type FileTokens = Arc<Vec<(String, u64, u32)>>;

/// The primer files found among one set of indexed paths for one list of
/// primer names: the set only changes when the index does, and matching
/// every path on every question cost about 2 ms on a 34 k-file project.
/// The set is held weakly: a strong reference would make every index
/// update copy it (`Arc::make_mut`), and a weak one keeps its address from
/// being reused, so pointer equality means "the same set".
#[derive(Debug, Default)]
pub(crate) struct PrimerMemo {
    paths: Weak<BTreeSet<String>>,
    names: Vec<String>,
    files: Vec<String>,
}

impl PrimerMemo {
    /// The files `find` gives for `paths` and `names`, from the last call's
    /// answer when both are the same as then.
    pub(crate) fn files(
        &mut self,
        paths: &Arc<BTreeSet<String>>,
        names: &[String],
        find: impl FnOnce() -> Vec<String>,
    ) -> Vec<String> {
        if std::ptr::eq(self.paths.as_ptr(), Arc::as_ptr(paths)) && self.names == names {
            return self.files.clone();
        }
        let files = find();
        *self = PrimerMemo {
            paths: Arc::downgrade(paths),
            names: names.to_vec(),
            files: files.clone(),
        };
        files
    }
}

/// Each file's tokens and chunks for the token map, with the index
/// generation they were read at: the map is redrawn on every knob change,
/// the files change only with the index.
#[derive(Debug, Default)]
pub(crate) struct TokensMemo(std::sync::Mutex<Option<(u64, FileTokens)>>);

impl TokensMemo {
    /// The files at `generation`: the last call's when it read the same
    /// generation, else what `read` gives (kept for the next call).
    pub(crate) async fn files<F>(&self, generation: u64, read: F) -> crate::Result<FileTokens>
    where
        F: std::future::Future<Output = crate::Result<Vec<(String, u64, u32)>>>,
    {
        let cached = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .filter(|(g, _)| *g == generation)
            .map(|(_, files)| Arc::clone(files));
        if let Some(files) = cached {
            return Ok(files);
        }
        let files: FileTokens = Arc::new(read.await?);
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((generation, Arc::clone(&files)));
        Ok(files)
    }
}

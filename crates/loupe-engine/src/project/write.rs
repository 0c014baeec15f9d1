//! The write path of a [`Project`]: a full index run ([`Project::index`],
//! [`Project::index_until`]) and the watcher's known-path run
//! ([`Project::update_paths`]) both go through `run`: walk (or stat) →
//! read and chunk (both cores) → one catalog transaction with the lexical
//! writer fed beside it → the in-memory tables → `Stage::Ready` → embed →
//! the vector index. The read side (open, catch-up, status) stays in
//! `project.rs`.

use super::*;

impl Project {
    /// Bring the index up to date with the folder: re-chunk what changed,
    /// drop what is gone, embed what is new. Safe to cancel at any point.
    ///
    /// Questions can be asked from the moment the run reports
    /// [`Stage::Ready`] (the lexical index, symbols and graph committed),
    /// while it embeds: answers use what is ready and say so.
    pub async fn index(
        &self,
        progress: ProgressSink<'_>,
        cancel: &CancelToken,
    ) -> Result<IndexReport> {
        self.index_until(Until::Complete, progress, cancel).await
    }

    /// [`Project::index`], stopping where `until` says.
    pub async fn index_until(
        &self,
        until: Until,
        progress: ProgressSink<'_>,
        cancel: &CancelToken,
    ) -> Result<IndexReport> {
        let _guard = self.write.lock().await;
        let result = self.run(None, until, progress, cancel).await;
        result.map_err(|e| self.damage_seen(e))
    }

    /// Re-index just `paths` (absolute, as a watcher reports them), without
    /// walking the folder. Only paths already in the index can be handled
    /// this way — their ignore status is known; anything else (a new file,
    /// a folder, an ignore file) makes this a full [`Project::index`] run.
    pub async fn update_paths(
        &self,
        paths: &[PathBuf],
        progress: ProgressSink<'_>,
        cancel: &CancelToken,
    ) -> Result<IndexReport> {
        let _guard = self.write.lock().await;
        let result = self.update_paths_locked(paths, progress, cancel).await;
        result.map_err(|e| self.damage_seen(e))
    }

    /// [`Project::update_paths`] with `self.write` held.
    async fn update_paths_locked(
        &self,
        paths: &[PathBuf],
        progress: ProgressSink<'_>,
        cancel: &CancelToken,
    ) -> Result<IndexReport> {
        let rels: Option<Vec<String>> = paths
            .iter()
            .map(|p| walk::rel_path(&self.root, p))
            .collect();
        let Some(mut rels) = rels else {
            return self.run(None, Until::Complete, progress, cancel).await;
        };
        rels.sort();
        rels.dedup();
        let states = self.catalog.file_states_of(&rels).await?;
        if rels.is_empty() || rels.iter().any(|r| !states.contains_key(r)) {
            return self.run(None, Until::Complete, progress, cancel).await;
        }
        self.run(Some((rels, states)), Until::Complete, progress, cancel)
            .await
    }

    /// The one write path. `scope` is `None` for a full walk, or known paths
    /// with their stored states. The caller holds `self.write`.
    async fn run(
        &self,
        scope: Option<(Vec<String>, HashMap<String, FileState>)>,
        until: Until,
        progress: ProgressSink<'_>,
        cancel: &CancelToken,
    ) -> Result<IndexReport> {
        let _lock = WriteLock::acquire(&self.dir, cancel, || {
            progress(Progress {
                stage: Stage::Wait,
                done: 0,
                total: None,
            })
        })
        .await?;
        // Another process may have written since we last looked: what we
        // hold is the base this run's changes are applied to.
        let now = self.catalog.generation().await?;
        if now != self.loaded.load(Ordering::Acquire) {
            self.catch_up_locked(now).await?;
        }
        let mut report = IndexReport::default();
        let full = scope.is_none();

        let started = Instant::now();
        let (walked, states, deletes) = match scope {
            None => {
                let root = self.root.clone();
                let cfg = self.cfg.walk.clone();
                let walked = tokio::task::block_in_place(|| {
                    walk::walk(&root, &cfg, progress, &cancel.clone())
                })?;
                let states = self.catalog.file_states().await?;
                let seen: HashSet<&str> = walked.files.iter().map(|f| f.rel.as_str()).collect();
                let mut deletes: Vec<String> = states
                    .keys()
                    .filter(|p| !seen.contains(p.as_str()))
                    .cloned()
                    .collect();
                deletes.sort();
                (walked, states, deletes)
            }
            Some((rels, states)) => {
                let (walked, deletes) = walk::stat_known(&self.root, &rels, &self.cfg.walk);
                (walked, states, deletes)
            }
        };
        report.times.walk = started.elapsed();
        report.files_seen = walked.files.len() as u64;
        let mut diagnostics = walked.diagnostics;

        let started = Instant::now();
        let mut changes = ChangeSet {
            deletes,
            ..ChangeSet::default()
        };
        let to_read: Vec<&WalkedFile> = walked
            .files
            .iter()
            .filter(|f| {
                states
                    .get(&f.rel)
                    .is_none_or(|s| s.size != f.size || s.mtime_ns != f.mtime_ns)
            })
            .collect();
        report.files_unchanged = (walked.files.len() - to_read.len()) as u64;
        let total = to_read.len() as u64;
        progress(Progress {
            stage: Stage::Parse,
            done: 0,
            total: Some(total),
        });
        let done = std::sync::atomic::AtomicU64::new(0);
        let chunk_cfg = &self.cfg.chunk;
        let outcomes: Vec<ReadOutcome> = tokio::task::block_in_place(|| {
            to_read
                .par_iter()
                .map(|file| {
                    if cancel.is_cancelled() {
                        return ReadOutcome::Cancelled;
                    }
                    let out = read_and_chunk(file, states.get(&file.rel), chunk_cfg);
                    let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    progress(Progress {
                        stage: Stage::Parse,
                        done: n,
                        total: Some(total),
                    });
                    out
                })
                .collect()
        });
        for outcome in outcomes {
            match outcome {
                ReadOutcome::Cancelled => return Err(Error::Cancelled),
                ReadOutcome::Unchanged(path, size, mtime) => {
                    report.files_unchanged += 1;
                    changes.touched.push((path, size, mtime));
                }
                ReadOutcome::Changed(update, warnings) => {
                    report.files_changed += 1;
                    report.chunks_added += update.chunks.len() as u64;
                    diagnostics.extend(warnings);
                    changes.upserts.push(*update);
                }
                ReadOutcome::Skipped(path, diagnostic) => {
                    // A file we indexed before that is now binary, unreadable
                    // or gone must leave the index too.
                    if states.contains_key(&path) {
                        changes.deletes.push(path);
                    }
                    diagnostics.push(diagnostic);
                }
            }
        }
        report.files_deleted = changes.deletes.len() as u64;
        report.times.parse = started.elapsed();
        // Last point at which cancelling leaves no trace at all.
        cancel.check()?;

        progress(Progress {
            stage: Stage::Commit,
            done: 0,
            total: Some(1),
        });
        // Only a full walk sees every file, so only it replaces the stored list.
        changes.diagnostics = full.then(|| diagnostics.clone());
        let changes_chunks = changes.changes_chunks();
        let applied = if self.changes_nothing(&changes, now).await? {
            // No new generation: every process's answers and caches stay
            // valid (a watcher's run over files another process indexed).
            Applied {
                generation: now,
                ..Applied::default()
            }
        } else {
            self.commit(changes, &mut report.times).await?
        };
        let started = Instant::now();
        if changes_chunks {
            self.follow(&applied);
        }
        self.loaded.store(applied.generation, Ordering::Release);
        report.times.lexical += started.elapsed();
        progress(Progress {
            stage: Stage::Commit,
            done: 1,
            total: Some(1),
        });
        report.generation = applied.generation;
        report.diagnostics = diagnostics;
        if full {
            self.refresh_history().await;
        }
        progress(Progress {
            stage: Stage::Ready,
            done: 1,
            total: Some(1),
        });
        if until == Until::Searchable {
            report.vectors_deferred = self.cfg.embedder.is_some();
        } else if let Some(embedder) = self.cfg.embedder.clone() {
            let started = Instant::now();
            let inserted = applied.inserted.len() as u64;
            // Nothing else moves the live set or the held vectors while
            // this run holds the write lock: one look serves both stages.
            let gaps = self.vector_gaps(embedder.model_id());
            match self
                .embed_missing(embedder.as_ref(), gaps.as_ref(), progress, cancel)
                .await
            {
                Ok(n) => report.chunks_embedded = n,
                Err(Error::Cancelled) => report.embedding_incomplete = true,
                Err(e) => return Err(e),
            }
            report.embeddings_cached = inserted.saturating_sub(report.chunks_embedded);
            report.times.embed = started.elapsed();
            let started = Instant::now();
            progress(Progress {
                stage: Stage::Vectors,
                done: 0,
                total: Some(1),
            });
            self.update_vectors(embedder.as_ref(), gaps, applied.generation)
                .await?;
            report.times.vectors = started.elapsed();
        }
        progress(Progress {
            stage: Stage::Done,
            done: 1,
            total: Some(1),
        });
        Ok(report)
    }

    /// Whether committing `changes` at `generation` would store nothing new:
    /// no file changed, moved its mtime or went, the diagnostics are the
    /// stored ones, and the project was indexed before (a first run commits
    /// even an empty folder: generation 0 means "never indexed").
    async fn changes_nothing(&self, changes: &ChangeSet, generation: u64) -> Result<bool> {
        if generation == 0
            || changes.changes_chunks()
            || !changes.touched.is_empty()
            || self.lexical.is_empty() != lock(&self.live).is_empty()
        {
            return Ok(false);
        }
        let Some(ours) = &changes.diagnostics else {
            return Ok(true);
        };
        let key = |d: &Diagnostic| (d.path.clone(), format!("{:?}", d.kind), d.message.clone());
        let mut ours: Vec<_> = ours.iter().map(key).collect();
        let mut stored: Vec<_> = self.catalog.diagnostics().await?.iter().map(key).collect();
        ours.sort();
        stored.sort();
        Ok(ours == stored)
    }

    /// Commit `changes` to the catalog and the lexical index.
    ///
    /// The catalog stages the step (ids assigned, transaction open) and
    /// writes its rows while a second thread feeds the inserted chunks to the
    /// tantivy writer: the transaction is single-threaded, so on its own it
    /// would leave a core idle (see BENCHMARKS.md, session 4). Only when both
    /// sides succeeded does the catalog commit, and only then tantivy, with
    /// the new generation as payload; on any error neither commits (the
    /// tantivy writer is dropped, the transaction rolled back).
    async fn commit(&self, changes: ChangeSet, times: &mut StageTimes) -> Result<Applied> {
        let started = Instant::now();
        let changes_chunks = changes.changes_chunks();
        let (mut staged, mut applied) = self.catalog.stage(changes).await?;
        // Without chunk changes only the payload moves forward, unless the
        // index disagrees with the catalog about being empty.
        let feed = changes_chunks || self.lexical.is_empty() != applied.inserted.is_empty();
        let failed = AtomicBool::new(false);
        let (written, writer) = tokio::task::block_in_place(|| {
            std::thread::scope(|scope| {
                let feeder = std::thread::Builder::new()
                    .name("loupe-lexical-feed".into())
                    .spawn_scoped(scope, || self.feed_lexical(&applied, feed, &failed));
                let written = tokio::runtime::Handle::current().block_on(staged.write());
                if written.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                let writer = match feeder {
                    Ok(handle) => handle.join().unwrap_or_else(|panic| {
                        Err(Error::Task(format!(
                            "lexical index update failed: {}",
                            panic_message(panic.as_ref())
                        )))
                    }),
                    Err(e) => Err(Error::Task(format!("cannot start the lexical writer: {e}"))),
                };
                (written, writer)
            })
        });
        // Either error drops the other side uncommitted.
        written?;
        let writer = writer?;
        applied.generation = staged.commit().await?;
        times.catalog = started.elapsed();
        let started = Instant::now();
        writer.commit(applied.generation)?;
        times.lexical = started.elapsed();
        Ok(applied)
    }

    /// A lexical writer holding `applied`'s deletions and additions (none
    /// unless `feed`), not committed. Stops early once `failed` is set.
    fn feed_lexical(
        &self,
        applied: &Applied,
        feed: bool,
        failed: &AtomicBool,
    ) -> Result<LexicalWriter<'_>> {
        let mut writer = self
            .lexical
            .writer_for(if feed { applied.inserted.len() } else { 0 })?;
        if !feed {
            return Ok(writer);
        }
        for path in &applied.removed_paths {
            writer.delete_path(path);
        }
        let defined = group_names(&applied.defined);
        for chunk in &applied.inserted {
            if failed.load(Ordering::Relaxed) {
                // The catalog failed; its error is the one reported.
                return Err(Error::Cancelled);
            }
            writer.add(
                chunk,
                defined.get(&chunk.id).map(Vec::as_slice).unwrap_or(&[]),
            )?;
        }
        Ok(writer)
    }

    /// How the held vector index of `model` differs from the live chunks;
    /// `None` when no index of `model` is held.
    fn vector_gaps(&self, model: &str) -> Option<VectorGaps> {
        let live = Arc::clone(&lock(&self.live));
        let guard = lock(&self.vectors);
        let index = guard.as_ref().filter(|v| v.model() == model)?;
        let mut missing: Vec<ChunkId> = live
            .iter()
            .filter(|id| !index.contains(**id))
            .copied()
            .collect();
        missing.sort_unstable();
        Some(VectorGaps {
            missing,
            dead: index.ids().iter().filter(|id| !live.contains(id)).count(),
            points: index.points(),
        })
    }

    /// Embed every chunk whose content has no cached vector. Returns how many
    /// were embedded; stops with `Cancelled` between batches, keeping what
    /// it embedded.
    async fn embed_missing(
        &self,
        embedder: &dyn Embedder,
        gaps: Option<&VectorGaps>,
        progress: ProgressSink<'_>,
        cancel: &CancelToken,
    ) -> Result<u64> {
        let model = embedder.model_id().to_owned();
        // A chunk with a point in the held vector index has a cached
        // vector; only the live chunks without one can lack it (after a
        // small change, the chunks it added). With no index held for this
        // model, every chunk is asked.
        let missing = match gaps {
            Some(gaps) => {
                self.catalog
                    .chunks_missing_embeddings_among(&model, &gaps.missing)
                    .await?
            }
            None => self.catalog.chunks_missing_embeddings(&model).await?,
        };
        // Identical content appears more than once (license headers, vendored
        // copies): embed each hash once.
        let mut seen = HashSet::new();
        let todo: Vec<&Chunk> = missing
            .iter()
            .filter(|c| seen.insert(c.hash.as_str()))
            .collect();
        let total = todo.len() as u64;
        let mut done = 0u64;
        progress(Progress {
            stage: Stage::Embed,
            done,
            total: Some(total),
        });
        let mut unsaved: Vec<(String, Vec<f32>)> = Vec::new();
        let mut stored_at = Instant::now();
        for batch in todo.chunks(EMBED_BATCH) {
            if cancel.is_cancelled() {
                // What was embedded is kept: the next run skips it.
                self.catalog.store_embeddings(&model, &unsaved).await?;
                return Err(Error::Cancelled);
            }
            let texts: Vec<String> = batch.iter().map(|c| embed_text(c)).collect();
            let vectors = tokio::task::block_in_place(|| embedder.embed(&texts))?;
            unsaved.extend(batch.iter().map(|c| c.hash.clone()).zip(vectors));
            done += batch.len() as u64;
            progress(Progress {
                stage: Stage::Embed,
                done,
                total: Some(total),
            });
            // Few, large transactions: a commit per batch (and the WAL
            // checkpoints they trigger) took 0.9 s of tokio's 1 s
            // embedding stage, the embedding itself 0.1 s. A slow model
            // still stores every few seconds, so a crash loses little.
            if unsaved.len() >= EMBED_STORE_ROWS || stored_at.elapsed() >= EMBED_STORE_EVERY {
                self.catalog.store_embeddings(&model, &unsaved).await?;
                unsaved.clear();
                stored_at = Instant::now();
            }
        }
        self.catalog.store_embeddings(&model, &unsaved).await?;
        Ok(done)
    }

    /// Insert vectors of live chunks missing from the index (or rebuild when
    /// there is none, or tombstones dominate), then save at `generation`.
    async fn update_vectors(
        &self,
        embedder: &dyn Embedder,
        gaps: Option<VectorGaps>,
        generation: u64,
    ) -> Result<()> {
        let Some(VectorGaps {
            missing,
            dead,
            points,
        }) = gaps
        else {
            return self.rebuild_vectors(generation).await;
        };
        if points == 0 || dead as f64 > MAX_DEAD_FRACTION * points as f64 {
            return self.rebuild_vectors(generation).await;
        }
        let vectors = self
            .catalog
            .vectors_of(embedder.model_id(), &missing)
            .await?;
        let index = self.release_vectors();
        let Some(index) = index else {
            return self.rebuild_vectors(generation).await;
        };
        self.extend_vectors(index, vectors, generation).await
    }
}

/// Live chunks without a point in the held vector index (sorted), points
/// whose chunks are gone, and points in all.
struct VectorGaps {
    missing: Vec<ChunkId>,
    dead: usize,
    points: usize,
}

enum ReadOutcome {
    Cancelled,
    Unchanged(String, u64, i64),
    Changed(Box<FileUpdate>, Vec<Diagnostic>),
    Skipped(String, Diagnostic),
}

/// Read one file, decide whether its content changed, and chunk it if so.
fn read_and_chunk(file: &WalkedFile, stored: Option<&FileState>, cfg: &ChunkConfig) -> ReadOutcome {
    let bytes = match std::fs::read(&file.abs) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return ReadOutcome::Skipped(
                file.rel.clone(),
                Diagnostic::new(
                    &file.rel,
                    DiagnosticKind::Vanished,
                    "deleted while indexing",
                ),
            );
        }
        Err(e) => {
            return ReadOutcome::Skipped(
                file.rel.clone(),
                Diagnostic::new(&file.rel, DiagnosticKind::Unreadable, e),
            );
        }
    };
    if bytes.len() as u64 > cfg.max_parse_bytes.max(1) as u64 * 64 {
        // Grew past any sane size between walk and read.
        return ReadOutcome::Skipped(
            file.rel.clone(),
            Diagnostic::new(&file.rel, DiagnosticKind::TooLarge, "grew while indexing"),
        );
    }
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return ReadOutcome::Skipped(
            file.rel.clone(),
            Diagnostic::new(&file.rel, DiagnosticKind::Binary, "contains NUL bytes"),
        );
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    let size = bytes.len() as u64;
    if stored.is_some_and(|s| s.hash == hash) {
        return ReadOutcome::Unchanged(file.rel.clone(), size, file.mtime_ns);
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return ReadOutcome::Skipped(
                file.rel.clone(),
                Diagnostic::new(
                    &file.rel,
                    DiagnosticKind::InvalidUtf8,
                    format!(
                        "not UTF-8 (first bad byte at offset {})",
                        e.utf8_error().valid_up_to()
                    ),
                ),
            );
        }
    };
    let parsed = chunk_file(&file.rel, &text, cfg);
    let role = crate::role::role_for_path(&file.rel);
    let chunks = parsed
        .chunks
        .iter()
        .filter_map(|d| {
            let piece = text.get(d.start_byte as usize..d.end_byte as usize)?;
            Some(Chunk {
                id: 0,
                path: file.rel.clone(),
                language: parsed.language.to_owned(),
                kind: d.kind,
                symbol: d.symbol.clone(),
                parent: d.parent.clone(),
                start_byte: d.start_byte,
                end_byte: d.end_byte,
                start_line: d.start_line,
                end_line: d.end_line,
                role: crate::role::role_for_chunk(
                    role,
                    parsed.language,
                    d.kind,
                    d.symbol.as_deref(),
                    d.parent.as_deref(),
                ),
                text: piece.to_owned(),
                outline: d.outline.clone(),
                hash: blake3::hash(piece.as_bytes()).to_hex().to_string(),
                tokens: u32::try_from(loupe_assemble::tokens::count(
                    loupe_assemble::tokens::Encoding::O200kBase,
                    piece,
                ))
                .unwrap_or(u32::MAX),
            })
        })
        .collect();
    let warnings = parsed
        .warnings
        .iter()
        .map(|w| Diagnostic::new(&file.rel, DiagnosticKind::Degraded, w))
        .collect();
    ReadOutcome::Changed(
        Box::new(FileUpdate {
            path: file.rel.clone(),
            size,
            mtime_ns: file.mtime_ns,
            hash,
            language: parsed.language.to_owned(),
            role,
            chunks,
            defs: parsed.defs,
            refs: parsed.refs,
        }),
        warnings,
    )
}

//! The write path of a [`Project`]: a full index run ([`Project::index`],
//! [`Project::index_until`]) and the watcher's known-path run
//! ([`Project::update_paths`]) both go through `run`: walk (or stat) →
//! read and chunk (both cores) → one catalog transaction with the lexical
//! writer fed beside it → the in-memory tables → `Stage::Ready` → embed →
//! the vector index. The read side (open, catch-up, status) stays in
//! `project.rs`.

use super::*;
use crate::indexing::derived::{self, Derived};
use crate::stores::shared::{Key, Row, SharedRun, Table};
use crate::stores::vectors::MAX_DEAD_FRACTION;

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

    /// After a run that wrote `chunks_added` chunks, more than a watcher's
    /// update does, or when an earlier bulk run left the lexical index in
    /// several large segments (a `loupe index`, which does not merge, or a
    /// host closed before its merge was over), merge the lexical index
    /// into one segment ([`crate::stores::lexical::LexicalIndex::compact`]):
    /// questions then answer sooner and read fewer pages of its term
    /// dictionaries. Returns whether it merged. Hosts that keep a project
    /// open and answer many questions (the app, `loupe mcp`) call it in
    /// the background once their index run is over; a one-shot command
    /// does not wait for it. Holds the write lock meanwhile, so a
    /// watcher's update waits; answers do not.
    pub async fn compact_after(&self, chunks_added: u64) -> Result<bool> {
        if chunks_added <= crate::stores::lexical::SMALL_BATCH_CHUNKS as u64
            && self.lexical.large_segments()? <= 1
        {
            return Ok(false);
        }
        let _guard = self.write.lock().await;
        tokio::task::block_in_place(|| self.lexical.compact())
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
    // Long: the write path's stages in order (lock, catch up, walk, read and commit, ready, vectors, done), each reporting progress; the work is in methods.
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
        let shared = self
            .shared
            .as_ref()
            .map(|store| Arc::new(SharedRun::new(Arc::clone(store))));

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
        let applied = self
            .read_and_commit(
                Step {
                    to_read: &to_read,
                    states: &states,
                    deletes,
                    full,
                    generation: now,
                    shared: shared.as_ref(),
                },
                &mut diagnostics,
                &mut report,
                progress,
                cancel,
            )
            .await?;
        let started = Instant::now();
        self.follow(&applied);
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
        // After `Ready`: folding waits for other readers of the log, and
        // questions need not wait for it.
        self.fold_wal().await;
        if until == Until::Searchable {
            report.vectors_deferred = self.cfg.embedder.is_some();
        } else if let Some(embedder) = self.cfg.embedder.clone() {
            // Nothing else moves the live set or the held vectors while
            // this run holds the write lock: one look serves both stages.
            let gaps = self.vector_gaps(embedder.model_id());
            let started = Instant::now();
            let next = if embedder.caches_vectors() {
                let inserted = applied.inserted.len() as u64;
                match self
                    .embed_missing(
                        EmbedRun::start(embedder.as_ref(), shared.as_ref(), progress),
                        gaps.as_ref(),
                        cancel,
                    )
                    .await
                {
                    Ok(n) => report.chunks_embedded = n,
                    Err(Error::Cancelled) => report.embedding_incomplete = true,
                    Err(e) => return Err(e),
                }
                report.embeddings_cached = inserted.saturating_sub(report.chunks_embedded);
                VectorStage::FromCache(gaps)
            } else {
                let run = EmbedRun::start(embedder.as_ref(), shared.as_ref(), progress);
                self.embed_into_vectors(run, gaps, &mut report, cancel)
                    .await?
            };
            report.times.embed = started.elapsed();
            let started = Instant::now();
            progress(Progress {
                stage: Stage::Vectors,
                done: 0,
                total: Some(1),
            });
            match next {
                VectorStage::FromCache(gaps) => {
                    self.update_vectors(embedder.as_ref(), gaps, applied.generation)
                        .await?
                }
                VectorStage::SaveHeld => self.save_held_vectors(applied.generation)?,
                VectorStage::HoldNew(index) => {
                    self.save_and_hold_vectors(*index, applied.generation)
                        .await?
                }
            }
            report.times.vectors = started.elapsed();
            // An embedder that caches its vectors wrote them to the catalog.
            self.fold_wal().await;
        }
        if let Some(shared) = shared {
            report.shared = Some(self.remember_shared(&shared).await);
        }
        progress(Progress {
            stage: Stage::Done,
            done: 1,
            total: Some(1),
        });
        Ok(report)
    }

    /// Wait for the run's pushes, and keep its report for `status` (best
    /// effort: a failure only loses the figures).
    async fn remember_shared(&self, shared: &SharedRun) -> SharedReport {
        let report = shared.finish().await;
        if let Ok(json) = serde_json::to_string(&report)
            && let Err(e) = self.catalog.set_meta(SHARED_LAST, &json).await
        {
            tracing::warn!("keeping the shared store's figures: {e}");
        }
        report
    }

    /// Fold a large write-ahead log into the catalog file
    /// ([`Catalog::fold_wal_above`]), so that the next process to open
    /// the catalog does not read it all again. Best effort: a failure
    /// only leaves the log for a later run.
    async fn fold_wal(&self) {
        match self.catalog.fold_wal_above(self.cfg.fold_wal_bytes).await {
            Ok(true) => tracing::debug!("folded the catalog's write-ahead log"),
            Ok(false) => {}
            Err(e) => tracing::warn!("folding the catalog's write-ahead log: {e}"),
        }
    }

    /// Read and chunk `step.to_read`, and commit what changed as one
    /// catalog transaction and one lexical commit.
    ///
    /// The files go through in batches of at most [`BATCH_FILES`] files and
    /// [`BATCH_BYTES`] bytes, three at a time: one thread reads and chunks
    /// a batch on every core, the catalog writes the one before it, and a
    /// third thread feeds the one before that to the tantivy writer. A run
    /// over a large folder holds a few batches, not the folder (the vendor
    /// corpus's 1.2 GB held at once peaked at 6.2 GiB; BENCHMARKS.md).
    /// Only when both sides succeeded does the catalog commit, and only
    /// then tantivy, with the new generation as payload; on any error, or
    /// when cancelled, neither commits (the tantivy writer is dropped, the
    /// transaction rolled back) and the run leaves no trace.
    ///
    /// A step that would store nothing new (no file changed, moved its
    /// mtime or went, the diagnostics are the stored ones, and the project
    /// was indexed before: a watcher's run over files another process
    /// indexed) is rolled back too and keeps `step.generation`, so every
    /// process's answers and caches stay valid.
    // Long: the parse threads and the writer run side by side in one thread scope and share its channels.
    async fn read_and_commit(
        &self,
        step: Step<'_>,
        diagnostics: &mut Vec<Diagnostic>,
        report: &mut IndexReport,
        progress: ProgressSink<'_>,
        cancel: &CancelToken,
    ) -> Result<Applied> {
        let total = step.to_read.len() as u64;
        progress(Progress {
            stage: Stage::Parse,
            done: 0,
            total: Some(total),
        });
        let bytes: u64 = step.to_read.iter().map(|f| f.size).sum();
        let batches = batches(step.to_read);
        let failed = AtomicBool::new(false);
        let stop = || cancel.is_cancelled() || failed.load(Ordering::Relaxed);
        let (streamed, writer, parse_time) = tokio::task::block_in_place(|| {
            std::thread::scope(|scope| {
                let (parsed_tx, parsed_rx) = tokio::sync::mpsc::channel::<Vec<ReadOutcome>>(1);
                let (feed_tx, feed_rx) = tokio::sync::mpsc::channel::<Feed>(1);
                let deriver = Deriver {
                    states: step.states,
                    cfg: &self.cfg.chunk,
                    shared: step.shared,
                    runtime: tokio::runtime::Handle::current(),
                    stop: &stop,
                    done: AtomicU64::new(0),
                    progress,
                    total,
                };
                let parser = std::thread::Builder::new()
                    .name("loupe-parse".into())
                    .spawn_scoped(scope, move || {
                        let mut busy = Duration::ZERO;
                        for batch in batches {
                            let started = Instant::now();
                            let outcomes = deriver.batch(batch);
                            busy += started.elapsed();
                            if parsed_tx.blocking_send(outcomes).is_err() {
                                break;
                            }
                        }
                        // The pool's threads live on with the caches their
                        // token counts built: up to 17 MB after a first
                        // index of the vendor corpus, kept for good.
                        rayon::broadcast(|_| loupe_assemble::tokens::forget_thread_state());
                        busy
                    });
                let feeder = std::thread::Builder::new()
                    .name("loupe-lexical-feed".into())
                    .spawn_scoped(scope, move || self.feed_lexical(feed_rx, bytes));
                let streamed = match (&parser, &feeder) {
                    (Ok(_), Ok(_)) => tokio::runtime::Handle::current().block_on(
                        self.write_batches(&step, parsed_rx, feed_tx, diagnostics, report),
                    ),
                    (Err(e), _) | (_, Err(e)) => {
                        // Whichever thread did start stops once its channel
                        // closes, so the joins below return.
                        drop((parsed_rx, feed_tx));
                        Err(Error::Task(format!("cannot start an indexing thread: {e}")))
                    }
                };
                if streamed.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                let parse_time: Result<Duration> = joined(parser);
                let writer: Result<Result<(LexicalWriter<'_>, Duration)>> = joined(feeder);
                (streamed, writer.and_then(|w| w), parse_time)
            })
        });
        report.times.parse = parse_time?;
        // The feeder stops early only on an error of its own, which then
        // also stopped the catalog side: its error is the cause. Otherwise
        // the catalog's error (or cancel), if any, is.
        let (writer, feed_time) = writer?;
        let (mut staging, catalog_time) = streamed?;
        report.times.lexical = feed_time;
        // Last point at which cancelling leaves no trace at all.
        cancel.check()?;
        progress(Progress {
            stage: Stage::Commit,
            done: 0,
            total: Some(1),
        });
        let started = Instant::now();
        // Only a full walk sees every file, so only it replaces the stored list.
        let ours = step.full.then_some(&*diagnostics);
        if self
            .changes_nothing(&staging, ours, step.generation)
            .await?
        {
            return Ok(Applied {
                generation: step.generation,
                ..Applied::default()
            });
        }
        if let Some(ours) = ours {
            staging.replace_diagnostics(ours).await?;
        }
        // From here to the lexical commit the catalog is ahead of the
        // reader questions search: they wait for the window to close.
        let window = self.committing.write().await;
        let applied = staging.commit().await?;
        report.times.catalog = catalog_time + started.elapsed();
        let started = Instant::now();
        writer.commit(applied.generation)?;
        drop(window);
        report.times.lexical += started.elapsed();
        Ok(applied)
    }

    /// The catalog side of [`Project::read_and_commit`]: opens the
    /// transaction, removes the files that went, then writes each batch
    /// `parsed` brings and passes it on to the lexical feeder. Returns the
    /// open transaction and the time spent in it. Stops at the first
    /// cancelled file (the transaction is rolled back when dropped).
    async fn write_batches(
        &self,
        step: &Step<'_>,
        mut parsed: tokio::sync::mpsc::Receiver<Vec<ReadOutcome>>,
        feed: tokio::sync::mpsc::Sender<Feed>,
        diagnostics: &mut Vec<Diagnostic>,
        report: &mut IndexReport,
    ) -> Result<(Staging, Duration)> {
        let started = Instant::now();
        let mut busy = Duration::ZERO;
        let mut staging = self.catalog.begin().await?;
        staging.remove(&step.deletes).await?;
        report.files_deleted = step.deletes.len() as u64;
        // A send fails only when the feeder stopped on an error of its own,
        // which is then the one reported.
        let feeder_gone = || Error::Task("the lexical index writer stopped".into());
        if !step.deletes.is_empty() {
            feed.send(Feed::Remove(step.deletes.clone()))
                .await
                .map_err(|_| feeder_gone())?;
        }
        busy += started.elapsed();
        while let Some(outcomes) = parsed.recv().await {
            let started = Instant::now();
            let mut upserts = Vec::new();
            let mut touched = Vec::new();
            let mut gone = Vec::new();
            for outcome in outcomes {
                match outcome {
                    ReadOutcome::Cancelled => return Err(Error::Cancelled),
                    ReadOutcome::Unchanged(path, size, mtime) => {
                        report.files_unchanged += 1;
                        touched.push((path, size, mtime));
                    }
                    ReadOutcome::Changed(update, warnings) => {
                        report.files_changed += 1;
                        report.chunks_added += update.chunks.len() as u64;
                        diagnostics.extend(warnings);
                        upserts.push(*update);
                    }
                    ReadOutcome::Skipped(path, diagnostic) => {
                        // A file we indexed before that is now binary,
                        // unreadable or gone must leave the index too.
                        if step.states.contains_key(&path) {
                            gone.push(path);
                        }
                        diagnostics.push(diagnostic);
                    }
                }
            }
            staging.touch(&touched).await?;
            report.files_deleted += gone.len() as u64;
            // Rewritten files leave with the gone ones before they come back.
            gone.extend(
                upserts
                    .iter()
                    .filter(|u| step.states.contains_key(&u.path))
                    .map(|u| u.path.clone()),
            );
            if !gone.is_empty() {
                staging.remove(&gone).await?;
                feed.send(Feed::Remove(gone))
                    .await
                    .map_err(|_| feeder_gone())?;
            }
            if !upserts.is_empty() {
                let inserted = staging.insert(upserts).await?;
                feed.send(Feed::Add(inserted))
                    .await
                    .map_err(|_| feeder_gone())?;
            }
            busy += started.elapsed();
        }
        Ok((staging, busy))
    }

    /// Whether committing `staging` at `generation` would store nothing
    /// new: no file written or removed, none moved its mtime, `ours` (a full
    /// walk's diagnostics) are the stored ones, and the project was indexed
    /// before (a first run commits even an empty folder: generation 0 means
    /// "never indexed").
    async fn changes_nothing(
        &self,
        staging: &Staging,
        ours: Option<&Vec<Diagnostic>>,
        generation: u64,
    ) -> Result<bool> {
        if generation == 0
            || staging.changes_chunks()
            || staging.touches()
            || self.lexical.is_empty() != lock(&self.live).is_empty()
        {
            return Ok(false);
        }
        let Some(ours) = ours else {
            return Ok(true);
        };
        let key = |d: &Diagnostic| (d.path.clone(), format!("{:?}", d.kind), d.message.clone());
        let mut ours: Vec<_> = ours.iter().map(key).collect();
        let mut stored: Vec<_> = self.catalog.diagnostics().await?.iter().map(key).collect();
        ours.sort();
        stored.sort();
        Ok(ours == stored)
    }

    /// The lexical side of [`Project::read_and_commit`]: a writer (sized for
    /// `bytes` of source) fed what `feed` brings, until the catalog side
    /// closes it; not committed. Returns the time spent feeding.
    fn feed_lexical(
        &self,
        mut feed: tokio::sync::mpsc::Receiver<Feed>,
        bytes: u64,
    ) -> Result<(LexicalWriter<'_>, Duration)> {
        let started = Instant::now();
        let mut writer = self.lexical.writer_for(estimated_chunks(bytes))?;
        let mut busy = started.elapsed();
        while let Some(message) = feed.blocking_recv() {
            let started = Instant::now();
            match message {
                Feed::Remove(paths) => {
                    for path in &paths {
                        writer.delete_path(path);
                    }
                }
                Feed::Add(inserted) => {
                    let defined = group_names(&inserted.defined);
                    for chunk in &inserted.chunks {
                        writer.add(
                            chunk,
                            defined.get(&chunk.id).map(Vec::as_slice).unwrap_or(&[]),
                        )?;
                    }
                }
            }
            busy += started.elapsed();
        }
        Ok((writer, busy))
    }

    /// How the held vector index of `model` differs from the live chunks;
    /// `None` when no index of `model` is held.
    fn vector_gaps(&self, model: &str) -> Option<VectorGaps> {
        let live = Arc::clone(&lock(&self.live));
        let guard = lock(&self.vectors);
        let index = guard.as_ref().filter(|v| v.model() == model)?;
        let mut missing: Vec<ChunkId> = live.iter().filter(|id| !index.contains(*id)).collect();
        missing.sort_unstable();
        Some(VectorGaps {
            missing,
            dead: index.ids().iter().filter(|id| !live.contains(**id)).count(),
            points: index.points(),
        })
    }

    /// The chunks of `ids` (a page: every text is read), in id order.
    async fn chunks_in_id_order(&self, ids: &[ChunkId]) -> Result<Vec<Chunk>> {
        let mut chunks: Vec<Chunk> = self
            .catalog
            .chunks(ids)
            .await?
            .into_iter()
            .map(|(chunk, _)| chunk)
            .collect();
        chunks.sort_unstable_by_key(|c| c.id);
        Ok(chunks)
    }

    /// Embed every chunk whose content has no cached vector. Returns how many
    /// were embedded; stops with `Cancelled` between batches, keeping what
    /// it embedded.
    async fn embed_missing(
        &self,
        mut run: EmbedRun<'_>,
        gaps: Option<&VectorGaps>,
        cancel: &CancelToken,
    ) -> Result<u64> {
        let model = run.embedder.model_id().to_owned();
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
        // Identical content appears more than once (license headers,
        // vendored copies): each hash is listed, and embedded, once.
        run.plan(missing.len());
        let mut unsaved: Vec<(String, Vec<f32>)> = Vec::new();
        let mut stored_at = Instant::now();
        // The texts are read a page at a time: all of them at once was the
        // largest allocation of a first index with vectors.
        for page in missing.chunks(EMBED_STORE_ROWS) {
            let ids: Vec<ChunkId> = page.iter().map(|(id, _)| *id).collect();
            for batch in self.chunks_in_id_order(&ids).await?.chunks(EMBED_BATCH) {
                if cancel.is_cancelled() {
                    // What was embedded is kept: the next run skips it.
                    self.catalog.store_embeddings(&model, &unsaved).await?;
                    return Err(Error::Cancelled);
                }
                let vectors = run.embed(batch).await?;
                unsaved.extend(batch.iter().map(|c| c.hash.clone()).zip(vectors));
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
        }
        self.catalog.store_embeddings(&model, &unsaved).await?;
        Ok(run.computed)
    }

    /// The gaps of a held index the run extends in place (`None`: no
    /// index of the model held, or an empty one: build anew), its dead
    /// points dropped first when they dominate.
    fn extendable(&self, gaps: Option<VectorGaps>) -> Option<VectorGaps> {
        let gaps = gaps.filter(|g| g.points > 0)?;
        if gaps.mostly_dead() {
            self.compact_held_vectors();
        }
        Some(gaps)
    }

    /// Insert vectors of live chunks missing from the index (or rebuild when
    /// there is none; drop the dead points first when they dominate), then
    /// save at `generation`.
    async fn update_vectors(
        &self,
        embedder: &dyn Embedder,
        gaps: Option<VectorGaps>,
        generation: u64,
    ) -> Result<()> {
        let Some(gaps) = self.extendable(gaps) else {
            return self.rebuild_vectors(generation).await;
        };
        let vectors = self
            .catalog
            .vectors_of(embedder.model_id(), &gaps.missing)
            .await?;
        if !self.extend_held_vectors(&vectors, generation)? {
            return self.rebuild_vectors(generation).await;
        }
        Ok(())
    }

    /// Embed the live chunks that have no point straight into the vector
    /// index, for a model whose vectors the catalog does not keep
    /// ([`Embedder::caches_vectors`]): into the held index, or, with no
    /// index of the model held, into a new one. Says what the vector stage
    /// saves. Fills in `report`'s embedding numbers. A cancel stops it
    /// between batches; what was embedded is kept (and saved), and the
    /// next run embeds the rest.
    async fn embed_into_vectors(
        &self,
        mut run: EmbedRun<'_>,
        gaps: Option<VectorGaps>,
        report: &mut IndexReport,
        cancel: &CancelToken,
    ) -> Result<VectorStage> {
        let embedder = run.embedder;
        let (ids, mut building) = match self.extendable(gaps) {
            Some(gaps) => (gaps.missing, None),
            None => {
                let mut ids: Vec<ChunkId> = lock(&self.live).iter().collect();
                ids.sort_unstable();
                let index = VectorIndex::new(embedder.model_id(), embedder.dim(), ids.len());
                (ids, Some(index))
            }
        };
        run.plan(ids.len());
        for page in ids.chunks(EMBED_STORE_ROWS) {
            // A page goes into the index at once: each insert keeps the
            // index's ids sorted, and a held index's answers are
            // invalidated once per page rather than per batch.
            let mut items: Vec<(ChunkId, Vec<f32>)> = Vec::with_capacity(page.len());
            for batch in self.chunks_in_id_order(page).await?.chunks(EMBED_BATCH) {
                if cancel.is_cancelled() {
                    report.embedding_incomplete = true;
                    break;
                }
                let vectors = run.embed(batch).await?;
                items.extend(batch.iter().map(|c| c.id).zip(vectors));
            }
            match building.as_mut() {
                Some(index) => tokio::task::block_in_place(|| index.insert(&items)),
                None => {
                    self.insert_held_vectors(&items);
                }
            }
            if report.embedding_incomplete {
                break;
            }
        }
        report.chunks_embedded = run.computed;
        Ok(match building {
            Some(index) => VectorStage::HoldNew(Box::new(index)),
            None => VectorStage::SaveHeld,
        })
    }
}

/// What an index run's vector stage does after its embed stage.
enum VectorStage {
    /// Bring the held index up to the live chunks from the catalog's
    /// cached vectors (or rebuild it from them).
    FromCache(Option<VectorGaps>),
    /// Save the held index, which the embed stage extended.
    SaveHeld,
    /// Save the index the embed stage built, and hold it.
    HoldNew(Box<VectorIndex>),
}

/// Embeds batches of chunks for an index run, reporting
/// [`Stage::Embed`] progress as it goes; with a shared store and a model
/// that caches its vectors, the vectors the store holds are pulled and
/// only the others computed (and pushed).
struct EmbedRun<'a> {
    embedder: &'a dyn Embedder,
    shared: Option<&'a Arc<SharedRun>>,
    progress: ProgressSink<'a>,
    done: u64,
    total: u64,
    /// Vectors the model computed (`done` less those pulled from the store).
    computed: u64,
    /// The model's weights, kept in memory for the run ([`Embedder::hold`]).
    _hold: Option<crate::signals::embed::Hold>,
}

impl<'a> EmbedRun<'a> {
    fn start(
        embedder: &'a dyn Embedder,
        shared: Option<&'a Arc<SharedRun>>,
        progress: ProgressSink<'a>,
    ) -> Self {
        Self {
            embedder,
            // Only a model worth caching is worth a round trip.
            shared: shared.filter(|_| embedder.caches_vectors()),
            progress,
            done: 0,
            total: 0,
            computed: 0,
            _hold: None,
        }
    }

    /// Report that `total` chunks are to be embedded.
    fn plan(&mut self, total: usize) {
        self.total = total as u64;
        self._hold = self.embedder.hold(total);
        self.report();
    }

    /// The vectors of `batch`, in order.
    async fn embed(&mut self, batch: &[Chunk]) -> Result<Vec<Vec<f32>>> {
        let texts: Vec<String> = batch.iter().map(embed_text).collect();
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let model = self.embedder.model_id();
        let keys: Vec<Key> = match self.shared {
            Some(_) => texts.iter().map(|t| Key::of_input(t, model)).collect(),
            None => Vec::new(),
        };
        if let Some(shared) = self.shared {
            let pulled = shared.pull(Table::Vectors, &keys).await;
            let mut bad = Vec::new();
            for (slot, key) in vectors.iter_mut().zip(&keys) {
                if let Some(bytes) = pulled.get(key) {
                    *slot = crate::stores::shared::vector_from(bytes, self.embedder.dim());
                    if slot.is_none() {
                        bad.push(key.clone());
                    }
                }
            }
            shared.used(Table::Vectors, (pulled.len() - bad.len()) as u64);
            shared.reject(bad);
        }
        let missing: Vec<usize> = (0..texts.len()).filter(|i| vectors[*i].is_none()).collect();
        if !missing.is_empty() {
            let inputs: Vec<String> = missing.iter().map(|i| texts[*i].clone()).collect();
            let computed = tokio::task::block_in_place(|| self.embedder.embed(&inputs))?;
            self.computed += computed.len() as u64;
            if computed.len() != inputs.len() {
                return Err(Error::Embed(format!(
                    "{} vectors for {} texts",
                    computed.len(),
                    inputs.len()
                )));
            }
            let mut rows = Vec::new();
            for (i, v) in missing.into_iter().zip(computed) {
                if let Some(key) = keys.get(i) {
                    rows.push((key.clone(), crate::stores::shared::vector_bytes(&v)));
                }
                vectors[i] = Some(v);
            }
            if let Some(shared) = self.shared {
                shared.push(Table::Vectors, rows);
            }
        }
        self.done += batch.len() as u64;
        self.report();
        Ok(vectors.into_iter().flatten().collect())
    }

    fn report(&self) {
        (self.progress)(Progress {
            stage: Stage::Embed,
            done: self.done,
            total: Some(self.total),
        });
    }
}

/// Live chunks without a point in the held vector index (sorted), points
/// whose chunks are gone, and points in all.
struct VectorGaps {
    missing: Vec<ChunkId>,
    dead: usize,
    points: usize,
}

impl VectorGaps {
    /// Whether the dead points are more than [`MAX_DEAD_FRACTION`] of the
    /// index: then they are dropped before the missing ones go in.
    fn mostly_dead(&self) -> bool {
        self.dead as f64 > MAX_DEAD_FRACTION * self.points as f64
    }
}

/// Reads and derives the batches of an index run's parse thread: reads
/// and hashes a batch on every core, pulls the parses the shared store
/// holds for those bytes, derives the others (and pushes them).
struct Deriver<'a> {
    states: &'a HashMap<String, FileState>,
    cfg: &'a ChunkConfig,
    shared: Option<&'a Arc<SharedRun>>,
    /// The run's runtime: the parse thread waits on the store through it.
    runtime: tokio::runtime::Handle,
    /// Whether the run was cancelled or failed.
    stop: &'a (dyn Fn() -> bool + Sync),
    done: AtomicU64,
    progress: ProgressSink<'a>,
    total: u64,
}

impl Deriver<'_> {
    /// The outcome of each file of `batch`, in order.
    fn batch(&self, batch: &[&WalkedFile]) -> Vec<ReadOutcome> {
        // Each changed file with its key in the store, when there is one.
        type Read<'s> = std::result::Result<(Source<'s>, Option<Key>), ReadOutcome>;
        let read: Vec<Read<'_>> = batch
            .par_iter()
            .map(|file| {
                if (self.stop)() {
                    return Err(ReadOutcome::Cancelled);
                }
                let source = read_source(file, self.states.get(&file.rel), self.cfg)?;
                let key = self.shared.and_then(|_| {
                    Key::from_hex(&source.hash, &derived::deriver(&file.rel, self.cfg))
                });
                Ok((source, key))
            })
            .collect();
        let pulled = match self.shared {
            Some(shared) => {
                let keys: Vec<Key> = read
                    .iter()
                    .flatten()
                    .filter_map(|(_, k)| k.clone())
                    .collect();
                self.runtime.block_on(shared.pull(Table::Parses, &keys))
            }
            None => HashMap::new(),
        };
        let used = AtomicU64::new(0);
        let bad = std::sync::Mutex::new(Vec::new());
        let (outcomes, pushes): (Vec<ReadOutcome>, Vec<Option<Row>>) = read
            .into_par_iter()
            .map(|read| {
                let out = match read {
                    Ok((source, key)) => self.derive(source, key, &pulled, (&used, &bad)),
                    Err(outcome) => (outcome, None),
                };
                let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
                (self.progress)(Progress {
                    stage: Stage::Parse,
                    done: n,
                    total: Some(self.total),
                });
                out
            })
            .unzip();
        if let Some(shared) = self.shared {
            shared.used(Table::Parses, used.into_inner());
            shared.reject(bad.into_inner().unwrap_or_default());
            shared.push(Table::Parses, pushes.into_iter().flatten().collect());
        }
        outcomes
    }

    /// One file's outcome from the store's parse of its bytes (counted in
    /// `used`) or, failing that, its own (a row that does not fit the
    /// bytes counted in `bad`), and the row to push, if any.
    fn derive(
        &self,
        source: Source<'_>,
        key: Option<Key>,
        pulled: &HashMap<Key, Vec<u8>>,
        (used, bad): (&AtomicU64, &std::sync::Mutex<Vec<Key>>),
    ) -> (ReadOutcome, Option<Row>) {
        let from_store = key
            .as_ref()
            .and_then(|k| pulled.get(k))
            .map(|bytes| Derived::from_row(bytes).filter(|d| d.mismatch(&source.text).is_none()));
        let (derived, push) = match from_store {
            Some(Some(derived)) => {
                used.fetch_add(1, Ordering::Relaxed);
                (derived, None)
            }
            pulled => {
                if let (Some(_), Some(key)) = (pulled, &key)
                    && let Ok(mut bad) = bad.lock()
                {
                    bad.push(key.clone());
                }
                let derived = derived::derive(&source.file.rel, &source.text, self.cfg);
                let push = key
                    .filter(|_| derived.shareable())
                    .and_then(|k| derived.to_row().map(|row| (k, row)));
                (derived, push)
            }
        };
        (source.update(&derived), push)
    }
}

/// What one [`Project::read_and_commit`] works on.
struct Step<'a> {
    /// Files whose size or mtime moved (or that are new).
    to_read: &'a [&'a WalkedFile],
    /// The stored state of every indexed file the run looked at.
    states: &'a HashMap<String, FileState>,
    /// Indexed files the walk no longer found.
    deletes: Vec<String>,
    /// The run's use of the shared store, when there is one.
    shared: Option<&'a Arc<SharedRun>>,
    /// Whether the walk saw every file (so its diagnostics replace the
    /// stored ones).
    full: bool,
    /// The catalog generation the run starts from.
    generation: u64,
}

/// A message to the lexical feeder.
enum Feed {
    /// Paths whose documents leave.
    Remove(Vec<String>),
    /// A written batch's chunks come in.
    Add(Inserted),
}

/// The value of a scoped thread that may not have started.
fn joined<T>(handle: std::io::Result<std::thread::ScopedJoinHandle<'_, T>>) -> Result<T> {
    handle
        .map_err(|e| Error::Task(format!("cannot start an indexing thread: {e}")))?
        .join()
        .map_err(|panic| {
            Error::Task(format!(
                "indexing failed: {}",
                panic_message(panic.as_ref())
            ))
        })
}

/// Files read per batch of [`Project::read_and_commit`], at most.
const BATCH_FILES: usize = 256;
/// Bytes of source per batch, at most (a single larger file is a batch
/// of its own).
const BATCH_BYTES: u64 = 4 << 20;

/// `files` cut into consecutive batches of at most [`BATCH_FILES`] files and
/// [`BATCH_BYTES`] bytes.
fn batches<'a>(files: &'a [&'a WalkedFile]) -> Vec<&'a [&'a WalkedFile]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut bytes = 0u64;
    for (i, file) in files.iter().enumerate() {
        if i > start && (i - start >= BATCH_FILES || bytes + file.size > BATCH_BYTES) {
            out.push(&files[start..i]);
            start = i;
            bytes = 0;
        }
        bytes += file.size;
    }
    if start < files.len() {
        out.push(&files[start..]);
    }
    out
}

/// Source bytes per chunk, roughly (tokio: 5.6 MB of files read, 6,704
/// chunks), to size the lexical writer before the chunks exist.
const BYTES_PER_CHUNK: u64 = 800;

fn estimated_chunks(bytes: u64) -> usize {
    usize::try_from(bytes / BYTES_PER_CHUNK).unwrap_or(usize::MAX)
}

pub(crate) enum ReadOutcome {
    Cancelled,
    Unchanged(String, u64, i64),
    Changed(Box<FileUpdate>, Vec<Diagnostic>),
    Skipped(String, Diagnostic),
}

/// Read one file, decide whether its content changed, and chunk it if so.
pub(crate) fn read_and_chunk(
    file: &WalkedFile,
    stored: Option<&FileState>,
    cfg: &ChunkConfig,
) -> ReadOutcome {
    match read_source(file, stored, cfg) {
        Ok(source) => {
            let derived = derived::derive(&file.rel, &source.text, cfg);
            source.update(&derived)
        }
        Err(outcome) => outcome,
    }
}

/// A file read whose content changed: its text, to be derived.
pub(crate) struct Source<'a> {
    pub(crate) file: &'a WalkedFile,
    pub(crate) text: String,
    /// blake3 of the bytes, hex.
    pub(crate) hash: String,
}

impl Source<'_> {
    /// The file's update from its parse.
    pub(crate) fn update(self, derived: &Derived) -> ReadOutcome {
        let rel = &self.file.rel;
        let warnings = derived
            .warnings
            .iter()
            .map(|w| Diagnostic::new(rel, DiagnosticKind::Degraded, w))
            .collect();
        ReadOutcome::Changed(
            Box::new(FileUpdate {
                path: rel.clone(),
                size: self.text.len() as u64,
                mtime_ns: self.file.mtime_ns,
                hash: self.hash,
                language: crate::indexing::chunk::language_of(rel).to_owned(),
                role: crate::indexing::role::role_for_path(rel),
                chunks: derived.chunks(rel, &self.text),
                defs: derived.defs.clone(),
                refs: derived.refs.clone(),
            }),
            warnings,
        )
    }
}

/// Read one file and decide whether its content changed: its text if so,
/// else what the run records instead (unchanged, or skipped and why).
// Long: each way a file can fail to read is its own diagnostic, in the order they are checked.
pub(crate) fn read_source<'a>(
    file: &'a WalkedFile,
    stored: Option<&FileState>,
    cfg: &ChunkConfig,
) -> std::result::Result<Source<'a>, ReadOutcome> {
    let bytes = match std::fs::read(&file.abs) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ReadOutcome::Skipped(
                file.rel.clone(),
                Diagnostic::new(
                    &file.rel,
                    DiagnosticKind::Vanished,
                    "deleted while indexing",
                ),
            ));
        }
        Err(e) => {
            return Err(ReadOutcome::Skipped(
                file.rel.clone(),
                Diagnostic::new(&file.rel, DiagnosticKind::Unreadable, e),
            ));
        }
    };
    if bytes.len() as u64 > cfg.max_parse_bytes.max(1) as u64 * 64 {
        // Grew past any sane size between walk and read.
        return Err(ReadOutcome::Skipped(
            file.rel.clone(),
            Diagnostic::new(&file.rel, DiagnosticKind::TooLarge, "grew while indexing"),
        ));
    }
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(ReadOutcome::Skipped(
            file.rel.clone(),
            Diagnostic::new(&file.rel, DiagnosticKind::Binary, "contains NUL bytes"),
        ));
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if stored.is_some_and(|s| s.hash == hash) {
        return Err(ReadOutcome::Unchanged(
            file.rel.clone(),
            bytes.len() as u64,
            file.mtime_ns,
        ));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Source { file, text, hash }),
        Err(e) => Err(ReadOutcome::Skipped(
            file.rel.clone(),
            Diagnostic::new(
                &file.rel,
                DiagnosticKind::InvalidUtf8,
                format!(
                    "not UTF-8 (first bad byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RetrieveQuery;
    use crate::progress::no_progress;

    const LEDGER: &str = "/// The total of an invoice in cents.\npub fn invoice_total(lines: &[i64]) -> i64 {\n    lines.iter().sum()\n}\n";

    /// A project holding `ledger.rs`, indexed by `asker`, whose snapshot is
    /// taken; then the file's function is rewritten (so its chunk gets a
    /// new id) and indexed by a second handle on the same data, as another
    /// process would: the catalog and the lexical index on disk move on,
    /// the asker's reader does not.
    struct Rewritten {
        _dirs: (tempfile::TempDir, tempfile::TempDir),
        asker: Arc<Project>,
        snapshot: Snapshot,
    }

    async fn rewritten_under_a_question() -> Rewritten {
        let folder = tempfile::tempdir().expect("tempdir");
        let data = tempfile::tempdir().expect("tempdir");
        let ledger = folder.path().join("ledger.rs");
        std::fs::write(&ledger, LEDGER).expect("write");
        let cancel = CancelToken::new();
        let open = || Project::open(folder.path(), ProjectConfig::new(data.path()));
        let asker = Arc::new(open().await.expect("open"));
        asker.index(&no_progress, &cancel).await.expect("index");
        let snapshot = asker.snapshot().await.expect("snapshot");
        let rewritten = LEDGER.replace("lines.iter().sum()", "lines.iter().copied().sum()");
        std::fs::write(&ledger, rewritten).expect("write");
        let writer = open().await.expect("open");
        writer.index(&no_progress, &cancel).await.expect("index");
        Rewritten {
            _dirs: (folder, data),
            asker,
            snapshot,
        }
    }

    fn ask(r: &Rewritten) -> tokio::task::JoinHandle<Result<crate::Retrieved>> {
        let (asker, snapshot) = (Arc::clone(&r.asker), r.snapshot.clone());
        tokio::spawn(async move {
            let query = RetrieveQuery::from_question("How is the invoice total computed?");
            asker.retrieve_from(&snapshot, &query).await
        })
    }

    fn assert_found(found: &crate::Retrieved) {
        let paths: Vec<&str> = found
            .candidates
            .iter()
            .map(|c| c.chunk.path.as_str())
            .collect();
        assert!(
            found
                .candidates
                .iter()
                .any(|c| c.chunk.path == "ledger.rs" && c.chunk.text.contains("copied()")),
            "{paths:?}"
        );
    }

    /// Another process's run rewrote the file under the question: the old
    /// chunk the asker's reader finds is gone from the catalog, and the
    /// question, asked again after catching up, still finds the file.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_file_rewritten_under_a_question_is_still_found() {
        let r = rewritten_under_a_question().await;
        assert_found(&ask(&r).await.expect("join").expect("retrieve"));
    }

    /// The same while this process's own run is between its catalog and
    /// lexical commits (its write lock taken, so the snapshot cannot catch
    /// up, and its commit window open): the question waits for the window
    /// to close, however long it stays open, instead of spending its
    /// retries on a snapshot that cannot move yet.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_question_waits_out_its_own_runs_commit_window() {
        let r = rewritten_under_a_question().await;
        let running = r.asker.write.lock().await;
        let window = r.asker.committing.write().await;
        let question = ask(&r);
        // Longer than every retry's pause together.
        tokio::time::sleep(Duration::from_millis(600)).await;
        drop((running, window));
        assert_found(&question.await.expect("join").expect("retrieve"));
    }

    /// Size of the catalog's write-ahead log (0 when there is none).
    fn wal_bytes(project: &Project) -> u64 {
        std::fs::metadata(project.dir.join("catalog.sqlite-wal")).map_or(0, |m| m.len())
    }

    /// An index run folds a write-ahead log above the configured size
    /// into the catalog file, so the next process does not read it again;
    /// below it, the log is left to SQLite.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_index_run_folds_a_large_write_ahead_log() {
        let folder = tempfile::tempdir().expect("tempdir");
        std::fs::write(folder.path().join("ledger.rs"), LEDGER).expect("write");
        let cancel = CancelToken::new();
        let mut logs = Vec::new();
        for fold_wal_bytes in [crate::stores::catalog::FOLD_WAL_BYTES, 0] {
            let data = tempfile::tempdir().expect("tempdir");
            let mut cfg = ProjectConfig::new(data.path());
            cfg.fold_wal_bytes = fold_wal_bytes;
            let project = Project::open(folder.path(), cfg).await.expect("open");
            project.index(&no_progress, &cancel).await.expect("index");
            logs.push(wal_bytes(&project));
            let snapshot = project.snapshot().await.expect("snapshot");
            let query = RetrieveQuery::from_question("How is the invoice total computed?");
            let found = project
                .retrieve_from(&snapshot, &query)
                .await
                .expect("retrieve");
            assert!(found.candidates.iter().any(|c| c.chunk.path == "ledger.rs"));
        }
        assert!(logs[0] > 0, "a small log is left to SQLite: {logs:?}");
        assert_eq!(logs[1], 0, "folded: {logs:?}");
    }
}

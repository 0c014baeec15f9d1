//! The graph index over a large project's vector rows: an `hnsw_rs` graph
//! that proposes a question's candidates, which the int8 rows then score
//! exactly (`VectorIndex::search`), so an answer differs from the scan's
//! only where the graph misses a point the scan would have kept.
//!
//! A graph indexes one rows file (`vectors/chunks.i8`), named by its
//! blake3 digest: its point `n` is the file's record `n`. Points added
//! since (a delta file, points inserted in memory) are not in it; a search
//! scans them exactly. A rows file written again (a full save, a
//! compaction) makes the graph stale: the scan answers until a new one is
//! built (`Project`'s graph builder, in the background).
//!
//! Built serially, in record order (chunk-id order), with `hnsw_rs`'s
//! level generator, which starts from a fixed seed: two builds of one rows
//! file give the same graph, and so the same answers. (`hnsw_rs`'s
//! parallel insertion draws levels in whatever order its threads come, so
//! it is not used.) Distances are taken on the rows requantized to one
//! scale (a unit vector's coordinates times 127), so the graph holds one
//! byte a coordinate and needs no per-point scale.
//!
//! Saved beside the vectors (`<data>/graph/`) as `hnsw_rs`'s dump (a
//! `.hnsw.graph` and a `.hnsw.data` file) and a manifest written last with
//! the rows digest, the point count and a blake3 checksum of each file; a
//! directory is written whole and swapped into place. A load verifies all
//! of it before `hnsw_rs` reads a byte (its reader asserts on what it does
//! not expect), and reads under `catch_unwind` besides: a damaged, stale or
//! unreadable graph is reported as absent and rebuilt, never trusted.

use super::vectors::{
    Proposer, Rows, VectorIndex, fields, file_digest, install_dir, io, read_at, read_checked,
    record_len, remove_dir_if_exists, sibling, write_synced,
};
use crate::{Error, Result};
use hnsw_rs::prelude::{AnnT, Distance, Hnsw, HnswIo};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// The basename `hnsw_rs` dumps under: `graph.hnsw.graph`, `graph.hnsw.data`.
const BASENAME: &str = "graph";
/// Written last into a graph directory.
const MANIFEST: &str = "manifest.json";
/// What a graph's format and parameters are; a manifest naming another is
/// stale.
const FORMAT: u32 = 1;
/// Layers at most (`hnsw_rs`'s own limit).
const LAYERS: usize = 16;
/// Insertions between two looks at the build's cancel flag.
const CANCEL_EVERY: usize = 16;
/// Records read from the rows file at once while building.
const BUILD_BLOCK: usize = 4096;
/// A unit vector's coordinate `c` is `c × UNIT` in the graph, rounded.
const UNIT: f32 = 127.0;

/// Cosine distance between two unit vectors held at one scale ([`UNIT`]):
/// one minus their dot product, at least zero.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnitCosine;

impl Distance<i8> for UnitCosine {
    fn eval(&self, a: &[i8], b: &[i8]) -> f32 {
        let dot: i32 = a
            .iter()
            .zip(b)
            .map(|(x, y)| i32::from(*x) * i32::from(*y))
            .sum();
        (1.0 - dot as f32 / (UNIT * UNIT)).max(0.0)
    }
}

/// A unit vector's coordinates (`unit`) as the graph holds them.
pub fn graph_coordinates(unit: &[f32], out: &mut Vec<i8>) {
    out.clear();
    out.extend(
        unit.iter()
            .map(|c| (c * UNIT).round().clamp(-UNIT, UNIT) as i8),
    );
}

/// How a graph is built and searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphParams {
    /// Neighbours a point keeps per layer (twice as many on the bottom one).
    pub connections: usize,
    /// Candidates an insertion looks at.
    pub ef_construction: usize,
    /// A search follows this many times the points it returns
    /// (`hnsw_rs`'s `ef`); not saved with the graph.
    #[serde(skip)]
    pub search_factor: usize,
}

impl Default for GraphParams {
    fn default() -> Self {
        Self {
            connections: 32,
            ef_construction: 200,
            search_factor: 2,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Manifest {
    format: u32,
    params: GraphParams,
    /// The digest of the rows file the graph indexes.
    rows: String,
    points: usize,
    dim: usize,
    files: Vec<(String, String)>,
}

/// An `hnsw_rs` graph over one rows file's records.
pub struct Graph {
    hnsw: Hnsw<'static, i8, UnitCosine>,
    params: GraphParams,
    rows: String,
    points: usize,
    dim: usize,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("rows", &self.rows)
            .field("points", &self.points)
            .finish()
    }
}

impl Proposer for Graph {
    fn rows(&self) -> &str {
        &self.rows
    }

    fn points(&self) -> usize {
        self.points
    }

    fn propose(&self, unit: &[f32], n: usize, keep: &dyn Fn(usize) -> bool) -> Vec<usize> {
        let mut query = Vec::with_capacity(self.dim);
        graph_coordinates(unit, &mut query);
        self.search(&query, n, keep)
    }
}

impl Graph {
    /// Build the graph of `rows`, one record after another. `done` counts
    /// the points inserted so far (for a progress bar); `cancel` stops the
    /// build within a few insertions (`Ok(None)`). Fails when the rows file
    /// cannot be read.
    pub fn build(
        rows: &Rows,
        params: GraphParams,
        done: &AtomicUsize,
        cancel: &AtomicBool,
    ) -> Result<Option<Graph>> {
        let hnsw = Hnsw::new(
            params.connections,
            rows.points.max(1),
            LAYERS,
            params.ef_construction,
            UnitCosine,
        );
        let len = record_len(rows.dim);
        let mut block = Vec::new();
        let mut unit = Vec::with_capacity(rows.dim);
        let mut coords = Vec::with_capacity(rows.dim);
        for first in (0..rows.points).step_by(BUILD_BLOCK) {
            let n = BUILD_BLOCK.min(rows.points - first);
            block.resize(n * len, 0);
            read_at(&rows.file, &mut block, (first * len) as u64)
                .map_err(|e| Error::Vectors(format!("read the vector rows for the graph: {e}")))?;
            for (i, record) in block.chunks_exact(len).enumerate() {
                // An insertion into a large graph takes about a
                // millisecond: a closing project waits a few at most.
                if i % CANCEL_EVERY == 0 && cancel.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                let (_, scale, row) = fields(record);
                unit.clear();
                unit.extend(row.iter().map(|b| f32::from(b.cast_signed()) * scale));
                graph_coordinates(&unit, &mut coords);
                hnsw.insert_slice((&coords, first + i));
            }
            done.store(first + n, Ordering::Relaxed);
        }
        Ok(Some(Graph {
            hnsw,
            params,
            rows: rows.digest.clone(),
            points: rows.points,
            dim: rows.dim,
        }))
    }

    /// Search `search_factor` times wider from now on.
    pub fn set_search_factor(&mut self, search_factor: usize) {
        self.params.search_factor = search_factor.max(1);
    }

    /// Up to `n` record numbers whose points are nearest `query` (a unit
    /// vector in [`graph_coordinates`]), among those `keep` accepts,
    /// nearest first; `n` times the search factor candidates are followed
    /// on the bottom layer.
    pub fn search(&self, query: &[i8], n: usize, keep: &dyn Fn(usize) -> bool) -> Vec<usize> {
        let filter = |at: &usize| keep(*at);
        let ef = n.saturating_mul(self.params.search_factor.max(1));
        self.hnsw
            .search_filter(query, n, ef, Some(&filter))
            .into_iter()
            .map(|hit| hit.d_id)
            .collect()
    }

    /// Save the graph into `dir`, whole: dump into a sibling directory,
    /// checksum the files, write the manifest last, then swap the
    /// directories. A crash at any point leaves the old graph or none.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let tmp = sibling(dir, "tmp");
        remove_dir_if_exists(&tmp)?;
        fs::create_dir_all(&tmp).map_err(|e| io("create graph dump dir", &tmp, e))?;
        let name = self
            .hnsw
            .file_dump(&tmp, BASENAME)
            .map_err(|e| Error::Vectors(format!("write the vector graph: {e}")))?;
        if name != BASENAME {
            return Err(Error::Vectors(format!(
                "the vector graph was written as {name}, not {BASENAME}"
            )));
        }
        let mut files = Vec::new();
        for file in dump_files() {
            let path = tmp.join(&file);
            // `hnsw_rs` does not sync what it writes.
            fs::File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(|e| io("sync the vector graph", &path, e))?;
            let sum = file_digest(&path).ok_or_else(|| {
                Error::Vectors(format!("read back the vector graph {}", path.display()))
            })?;
            files.push((file, sum));
        }
        let manifest = Manifest {
            format: FORMAT,
            params: self.params,
            rows: self.rows.clone(),
            points: self.points,
            dim: self.dim,
            files,
        };
        let json = serde_json::to_vec(&manifest).map_err(|e| Error::Vectors(e.to_string()))?;
        write_synced(&tmp.join(MANIFEST), &json)?;
        install_dir(&tmp, dir)
    }

    /// Whether `dir`'s manifest names a graph of `rows` (its files are not
    /// read: [`Graph::load`] checks them).
    pub fn saved_for(dir: &Path, rows: &Rows) -> bool {
        fs::read(dir.join(MANIFEST))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Manifest>(&bytes).ok())
            .is_some_and(|m| m.format == FORMAT && m.rows == rows.digest && m.points == rows.points)
    }

    /// The graph saved in `dir` for the rows file `rows`, when it is
    /// there, whole and of this format; `None` otherwise (build it anew).
    pub fn load(dir: &Path, rows: &Rows, params: GraphParams) -> Option<Graph> {
        let mut manifest: Manifest =
            serde_json::from_slice(&fs::read(dir.join(MANIFEST)).ok()?).ok()?;
        // How wide to search is not the graph's; the rest must match.
        manifest.params.search_factor = params.search_factor;
        let files: Vec<(String, String)> = dump_files()
            .into_iter()
            .map(|name| {
                let sum = manifest
                    .files
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, s)| s.clone())
                    .unwrap_or_default();
                (name, sum)
            })
            .collect();
        let expected = Manifest {
            format: FORMAT,
            params,
            rows: rows.digest.clone(),
            points: rows.points,
            dim: rows.dim,
            files,
        };
        if manifest != expected {
            return None;
        }
        for (name, sum) in &manifest.files {
            read_checked(&dir.join(name), sum, |_| true, 4 << 20, |_| Some(()))?;
        }
        let dir = dir.to_path_buf();
        // `hnsw_rs` asserts on a dump it does not expect; a checksummed
        // file should never make it, but a panic must not escape a load.
        let loaded = std::panic::catch_unwind(move || {
            // The graph borrows its reader for as long as it lives: one
            // small struct a load, kept for the process's life.
            let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(&dir, BASENAME)));
            io.load_hnsw::<i8, UnitCosine>().ok()
        })
        .ok()
        .flatten()?;
        (loaded.get_nb_point() == rows.points).then(|| Graph {
            hnsw: loaded,
            params,
            rows: rows.digest.clone(),
            points: rows.points,
            dim: rows.dim,
        })
    }
}

/// Points from which a project's vectors get a graph (BENCHMARKS.md,
/// "The vector graph"): on real code vectors the scan answers faster than
/// the graph at every size measured up to 1 M points (6.4 against 10.3 ms
/// p50 there), and it grows about 6 ns a point where the graph grew 50 %
/// from 200 k to 1 M points, so the graph starts to pay about here.
pub const GRAPH_MIN_POINTS: usize = 2_000_000;

/// When a project's vector index gets a graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphPolicy {
    /// Rows files of fewer points are only ever scanned.
    pub min_points: usize,
    /// Whether this process builds a missing graph (in the background),
    /// or only loads a saved one (a one-shot command, which would exit
    /// before a build is done).
    pub build: bool,
}

impl Default for GraphPolicy {
    fn default() -> Self {
        Self {
            min_points: GRAPH_MIN_POINTS,
            build: true,
        }
    }
}

impl GraphPolicy {
    /// This policy with `LOUPE_GRAPH_MIN_POINTS` as its size, when that
    /// is set to a number: how tests and measurements give a small
    /// project a graph.
    pub fn from_env(self) -> Self {
        match std::env::var("LOUPE_GRAPH_MIN_POINTS").map(|v| v.trim().parse::<usize>()) {
            Ok(Ok(min_points)) => Self { min_points, ..self },
            _ => self,
        }
    }

    /// Never a graph: every search scans.
    pub fn off() -> Self {
        Self {
            min_points: usize::MAX,
            build: false,
        }
    }
}

/// How a question's vector search finds its candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum VectorSearch {
    /// Every point's code is scanned: the project is below the graph's
    /// size, or no graph is built in this process.
    Scan,
    /// The scan answers while a graph is loaded or built: `done` of
    /// `total` points are in it.
    GraphBuilding {
        /// Points in the graph so far.
        done: u64,
        /// Points it will hold.
        total: u64,
    },
    /// A graph proposes the candidates.
    Graph,
    /// This process never uses a graph (a one-shot command), though one
    /// is saved for the rows file: the long-lived processes use it.
    GraphSaved,
}

impl VectorSearch {
    /// How far the graph is: `None` when this process scans without one
    /// coming, 0–99 while it is built, 100 once it answers.
    pub fn graph_percent(&self) -> Option<u8> {
        match self {
            VectorSearch::Scan | VectorSearch::GraphSaved => None,
            VectorSearch::GraphBuilding { done, total } => {
                Some((done.saturating_mul(100) / (*total).max(1)).min(99) as u8)
            }
            VectorSearch::Graph => Some(100),
        }
    }
}

impl std::fmt::Display for VectorSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VectorSearch::Scan => f.write_str("exact scan"),
            VectorSearch::GraphBuilding { .. } => write!(
                f,
                "exact scan, graph building {}%",
                self.graph_percent().unwrap_or(0)
            ),
            VectorSearch::Graph => f.write_str("graph"),
            VectorSearch::GraphSaved => f.write_str("exact scan here, graph saved"),
        }
    }
}

/// The vector index a project holds, shared with its searches.
pub type HeldVectors = Arc<RwLock<Option<VectorIndex>>>;

/// Keeps a project's vector index supplied with a graph: when the held
/// index's rows file is large enough and has none, a background thread
/// loads the one saved for that file or builds it (and saves it), then
/// hands it to the index, if its rows file is still the same (otherwise
/// it starts over on the new one). One such thread at a time; dropping
/// the keeper cancels it and waits for it.
pub struct GraphKeeper {
    dir: PathBuf,
    policy: GraphPolicy,
    work: Arc<Work>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

#[derive(Default)]
struct Work {
    running: AtomicBool,
    cancel: AtomicBool,
    done: AtomicUsize,
    total: AtomicUsize,
}

impl GraphKeeper {
    /// A keeper of the graphs saved in `dir` (`<data>/graph`).
    pub fn new(dir: PathBuf, policy: GraphPolicy) -> Self {
        Self {
            dir,
            policy,
            work: Arc::default(),
            thread: Mutex::new(None),
        }
    }

    /// Give `vectors` a graph if it needs one and none is on its way.
    pub fn consider(&self, vectors: &HeldVectors) {
        if needs_graph(vectors, &self.policy).is_none()
            || self.work.running.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let (dir, policy, work) = (self.dir.clone(), self.policy, Arc::clone(&self.work));
        let vectors = Arc::clone(vectors);
        let spawned = std::thread::Builder::new()
            .name("loupe-graph".into())
            .spawn(move || keep(&dir, policy, &work, &vectors));
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        match spawned {
            // The last thread has ended (it cleared `running`): let it go.
            Ok(handle) => *thread = Some(handle),
            Err(err) => {
                tracing::warn!(%err, "could not start the vector graph's thread");
                self.work.running.store(false, Ordering::Release);
            }
        }
    }

    /// How `vectors`' searches find their candidates now.
    pub fn state(&self, vectors: &HeldVectors) -> VectorSearch {
        let guard = vectors.read().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(index) if index.has_graph() => VectorSearch::Graph,
            _ if self.work.running.load(Ordering::Acquire) => VectorSearch::GraphBuilding {
                done: self.work.done.load(Ordering::Relaxed) as u64,
                total: self.work.total.load(Ordering::Relaxed) as u64,
            },
            // A process that never uses a graph for this index (one-shot
            // commands) says whether one is saved for the others.
            Some(index)
                if index.rows().is_some_and(|rows| {
                    rows.points < self.policy.min_points && Graph::saved_for(&self.dir, &rows)
                }) =>
            {
                VectorSearch::GraphSaved
            }
            _ => VectorSearch::Scan,
        }
    }

    /// The points done and in all of the graph under way, if one is.
    pub fn pending(&self) -> Option<(u64, u64)> {
        self.work.running.load(Ordering::Acquire).then(|| {
            (
                self.work.done.load(Ordering::Relaxed) as u64,
                self.work.total.load(Ordering::Relaxed) as u64,
            )
        })
    }
}

impl Drop for GraphKeeper {
    fn drop(&mut self) {
        self.work.cancel.store(true, Ordering::Release);
        let thread = self.thread.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(handle) = thread.take() {
            let _ = handle.join();
        }
    }
}

/// The rows file of `vectors`' index when it is large enough for a graph
/// and has none.
fn needs_graph(vectors: &HeldVectors, policy: &GraphPolicy) -> Option<Rows> {
    let guard = vectors.read().unwrap_or_else(|e| e.into_inner());
    let index = guard.as_ref()?;
    if index.has_graph() {
        return None;
    }
    index.rows().filter(|rows| rows.points >= policy.min_points)
}

/// Run the calling thread only when a core would otherwise idle (Linux's
/// `SCHED_IDLE`; the lowest priority elsewhere): a graph build must not
/// slow the questions asked meanwhile (BENCHMARKS.md, "The vector graph").
/// Failure leaves the thread as it was.
pub fn yield_to_questions() {
    use thread_priority::{
        NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
    if let Err(err) = set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, idle)
    {
        tracing::debug!(?err, "the vector graph builds at normal priority");
    }
}

/// The keeper's thread: load or build a graph for the held rows file,
/// hand it over, and start over while the rows file moved meanwhile.
fn keep(dir: &Path, policy: GraphPolicy, work: &Work, vectors: &HeldVectors) {
    yield_to_questions();
    loop {
        while let Some(rows) = needs_graph(vectors, &policy) {
            if work.cancel.load(Ordering::Acquire) {
                break;
            }
            work.total.store(rows.points, Ordering::Relaxed);
            work.done.store(0, Ordering::Relaxed);
            let params = GraphParams::default();
            let graph = match Graph::load(dir, &rows, params) {
                Some(graph) => graph,
                None if policy.build => match Graph::build(&rows, params, &work.done, &work.cancel)
                {
                    Ok(Some(graph)) => {
                        if let Err(err) = graph.save(dir) {
                            tracing::warn!(%err, "the vector graph is used but not saved");
                        }
                        graph
                    }
                    Ok(None) => break,
                    Err(err) => {
                        tracing::warn!(%err, "no vector graph: questions scan the vectors");
                        break;
                    }
                },
                None => break,
            };
            let mut guard = vectors.write().unwrap_or_else(|e| e.into_inner());
            if let Some(index) = guard.as_mut() {
                index.attach_graph(Arc::new(graph));
            }
        }
        work.running.store(false, Ordering::Release);
        // A `consider` that found this thread running and left: look once
        // more, now that it would not.
        if work.cancel.load(Ordering::Acquire)
            || !policy.build
            || needs_graph(vectors, &policy).is_none()
            || work.running.swap(true, Ordering::AcqRel)
        {
            return;
        }
    }
}

/// The files `hnsw_rs` dumps a graph to.
fn dump_files() -> Vec<String> {
    vec![
        format!("{BASENAME}.hnsw.graph"),
        format!("{BASENAME}.hnsw.data"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::vectors::VectorIndex;
    use loupe_assemble::ChunkId;

    const DIM: usize = 32;

    /// Clustered pseudo-random vectors (xorshift): 40 centres, each point
    /// a centre plus noise, as code vectors cluster by topic.
    fn clustered(n: usize, seed: u64) -> Vec<(ChunkId, Vec<f32>)> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        };
        let centres: Vec<Vec<f32>> = (0..40)
            .map(|_| (0..DIM).map(|_| next()).collect())
            .collect();
        (0..n)
            .map(|i| {
                let c = &centres[i % centres.len()];
                let v = c.iter().map(|c| c + 0.35 * next()).collect();
                (i as ChunkId * 7 + 3, v)
            })
            .collect()
    }

    /// An index of `n` points saved in `dir`, so it has a rows file.
    fn saved(dir: &Path, n: usize) -> VectorIndex {
        let mut index = VectorIndex::new("test", DIM, n);
        index.insert(&clustered(n, 0x9E37_79B9_7F4A_7C15));
        index.save(&dir.join("vectors"), 1).expect("save");
        index
    }

    fn built(index: &VectorIndex) -> Graph {
        let rows = index.rows().expect("a rows file");
        Graph::build(
            &rows,
            GraphParams::default(),
            &AtomicUsize::new(0),
            &AtomicBool::new(false),
        )
        .expect("build")
        .expect("not cancelled")
    }

    fn queries() -> Vec<Vec<f32>> {
        clustered(60, 0x1234_5678_9ABC_DEF1)
            .into_iter()
            .map(|(_, v)| v)
            .collect()
    }

    #[test]
    fn the_graph_finds_what_the_scan_finds() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut index = saved(dir.path(), 6000);
        let everything = |_: ChunkId| true;
        let scanned: Vec<_> = queries()
            .iter()
            .map(|q| index.search(q, 10, &everything).expect("scan"))
            .collect();
        assert!(!index.has_graph());
        assert!(index.attach_graph(Arc::new(built(&index))));
        assert!(index.has_graph());
        let (mut same, mut all) = (0, 0);
        for (q, want) in queries().iter().zip(&scanned) {
            let got = index.search(q, 10, &everything).expect("graph");
            assert_eq!(got.len(), 10);
            all += want.len();
            same += want.iter().filter(|hit| got.contains(hit)).count();
        }
        // The candidates are scored exactly, so what the graph proposes
        // carries the scan's own scores: a hit is the same hit or missing.
        assert!(
            same * 100 >= all * 99,
            "{same} of {all} of the scan's top 10"
        );
    }

    #[test]
    fn points_added_after_the_graph_and_tombstones_are_searched_exactly() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut index = saved(dir.path(), 3000);
        assert!(index.attach_graph(Arc::new(built(&index))));
        let q = queries().remove(0);
        // A point added since the rows file: the query itself.
        index.insert(&[(1, q.clone())]);
        let top = index.search(&q, 5, &|_| true).expect("search");
        assert_eq!(top[0].0, 1);
        assert!(index.has_graph(), "an insertion keeps the graph");
        // Tombstones are filtered in the graph as in the scan.
        let dead: Vec<ChunkId> = top.iter().map(|h| h.0).collect();
        let live = |id: ChunkId| !dead.contains(&id);
        let again = index.search(&q, 5, &live).expect("search");
        assert!(again.iter().all(|h| live(h.0)));
        assert_eq!(again.len(), 5);
        // A delta save keeps the rows file, and the graph with it; a full
        // save writes the rows anew, and the graph no longer fits.
        index.save(&dir.path().join("vectors"), 2).expect("delta");
        assert!(index.has_graph());
        index
            .save_full(&dir.path().join("vectors"), 3)
            .expect("full");
        assert!(!index.has_graph());
    }

    #[test]
    fn two_builds_of_one_rows_file_are_the_same_graph() {
        let dir = tempfile::tempdir().expect("temp dir");
        let index = saved(dir.path(), 2000);
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        built(&index).save(&a).expect("save a");
        built(&index).save(&b).expect("save b");
        for name in dump_files() {
            let same = fs::read(a.join(&name)).expect("a") == fs::read(b.join(&name)).expect("b");
            assert!(same, "{name} differs between two builds");
        }
    }

    #[test]
    fn a_saved_graph_loads_for_its_rows_and_nothing_else() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut index = saved(dir.path(), 2000);
        let graph_dir = dir.path().join("graph");
        let graph = built(&index);
        graph.save(&graph_dir).expect("save");
        let rows = index.rows().expect("rows");
        let loaded = Graph::load(&graph_dir, &rows, GraphParams::default()).expect("loads");
        let q = queries().remove(3);
        let mut query = Vec::new();
        let mut unit = q.clone();
        crate::stores::vectors::normalize(&mut unit);
        graph_coordinates(&unit, &mut query);
        assert_eq!(
            loaded.search(&query, 20, &|_| true),
            graph.search(&query, 20, &|_| true)
        );
        // Another rows file: stale.
        let other = Rows {
            digest: "0".repeat(64),
            ..rows.clone()
        };
        assert!(Graph::load(&graph_dir, &other, GraphParams::default()).is_none());
        // A damaged file: one byte changed, then one cut off.
        let data = graph_dir.join(format!("{BASENAME}.hnsw.data"));
        let mut bytes = fs::read(&data).expect("read");
        let last = bytes.len() - 1;
        bytes[last] ^= 0x5a;
        fs::write(&data, &bytes).expect("write");
        assert!(Graph::load(&graph_dir, &rows, GraphParams::default()).is_none());
        bytes.truncate(last);
        fs::write(&data, &bytes).expect("write");
        assert!(Graph::load(&graph_dir, &rows, GraphParams::default()).is_none());
        // No manifest (a crash before it was written): none.
        graph.save(&graph_dir).expect("save again");
        fs::remove_file(graph_dir.join(MANIFEST)).expect("remove");
        assert!(Graph::load(&graph_dir, &rows, GraphParams::default()).is_none());
        // The same rows written again are the same file: the graph fits.
        let graph = Arc::new(graph);
        index
            .save_full(&dir.path().join("vectors"), 2)
            .expect("save");
        assert!(index.attach_graph(Arc::<Graph>::clone(&graph)));
        // Rows with one point more are another file: it does not.
        index.insert(&[(1, q)]);
        index
            .save_full(&dir.path().join("vectors"), 3)
            .expect("save");
        assert!(!index.attach_graph(graph));
    }

    #[test]
    fn a_cancelled_build_stops() {
        let dir = tempfile::tempdir().expect("temp dir");
        let index = saved(dir.path(), 500);
        let rows = index.rows().expect("rows");
        let built = Graph::build(
            &rows,
            GraphParams::default(),
            &AtomicUsize::new(0),
            &AtomicBool::new(true),
        )
        .expect("build");
        assert!(built.is_none());
    }
}

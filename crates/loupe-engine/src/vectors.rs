//! The vector index over chunk embeddings, keyed by chunk id, persisted next
//! to the catalog: a flat array up to [`EXACT_SEARCH_MAX_POINTS`] points
//! (every search scores every point, so the graph would never be walked),
//! an HNSW graph (hnsw_rs) above. Building a graph of tokio's 6,800 chunks
//! took 3–4 s of a 6 s first index for nothing; the flat array is filled
//! as fast as the vectors are read (BENCHMARKS.md, "Vectors").
//!
//! Derived data: the vectors themselves live in the catalog's embedding cache,
//! so this index can always be rebuilt without re-embedding. A dump is written
//! to a fresh directory with a manifest holding the catalog generation and a
//! blake3 checksum of every file, then swapped into place; a load verifies the
//! manifest before handing the files to hnsw_rs (whose loader panics on bad
//! input), and anything that does not verify is reported as stale.
//!
//! HNSW has no delete: removed chunks stay in the graph as tombstones and are
//! filtered out at query time by the caller's liveness check. When tombstones
//! pass [`MAX_DEAD_FRACTION`] the owner rebuilds.

use crate::{Error, Result};
use hnsw_rs::hnswio::HnswIo;
use hnsw_rs::prelude::{AnnT, Distance, Hnsw};
use loupe_assemble::ChunkId;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Neighbours kept per node: hnsw_rs's recommended 16 for ~384-d data.
const MAX_CONNECTIONS: usize = 16;
/// Layers in the graph (hnsw_rs caps it at 16).
const MAX_LAYERS: usize = 16;
/// Candidate list size while building: quality over build speed, per the HNSW paper's range.
const EF_CONSTRUCTION: usize = 200;
/// Candidate list size while searching, at least `k`.
const EF_SEARCH: usize = 128;
/// Up to this many points a search scores every point instead of walking
/// the graph: the answer is then the exact one, the same however and in
/// whatever order the graph was built (parallel inserts, a cold index or
/// years of incremental ones), at a few milliseconds (BENCHMARKS.md).
pub const EXACT_SEARCH_MAX_POINTS: usize = 20_000;
/// Search hits best first: higher similarity, then lower chunk id.
fn best_first(a: &(ChunkId, f32), b: &(ChunkId, f32)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Rebuild once this share of graph nodes are tombstones.
pub const MAX_DEAD_FRACTION: f64 = 0.3;
/// File-name stem of the hnsw_rs dump.
const BASENAME: &str = "chunks";
/// The flat array's file: per point its chunk id (i64) and `dim` f32s,
/// little-endian, in chunk-id order.
const FLAT_FILE: &str = "chunks.flat";
/// Manifest written last into a dump directory.
const MANIFEST: &str = "manifest.json";

/// Dot-product distance for unit vectors, clamped to `[0, 2]`. hnsw_rs's own
/// `DistDot` asserts `dot <= 1`, which float rounding can break: a panic in
/// the app for no real reason.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnitDot;

impl Distance<f32> for UnitDot {
    fn eval(&self, a: &[f32], b: &[f32]) -> f32 {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        (1.0 - dot).clamp(0.0, 2.0)
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    generation: u64,
    model: String,
    dim: usize,
    points: usize,
    ids: Vec<ChunkId>,
    files: Vec<(String, String)>,
}

/// Where the points live.
enum Store {
    /// Unit vectors back to back, `dim` each, beside their chunk ids.
    Flat { ids: Vec<ChunkId>, data: Vec<f32> },
    /// An HNSW graph, which holds its points itself.
    Graph(Box<Hnsw<'static, f32, UnitDot>>),
}

/// An in-memory index over unit vectors: flat while small, a graph above.
pub struct VectorIndex {
    store: Store,
    model: String,
    dim: usize,
    points: usize,
    ids: HashSet<ChunkId>,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("model", &self.model)
            .field("dim", &self.dim)
            .field("points", &self.points)
            .field("graph", &matches!(self.store, Store::Graph(_)))
            .finish()
    }
}

/// Scale `v` to unit length in place; false if it has no direction.
pub fn normalize(v: &mut [f32]) -> bool {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !norm.is_finite() || norm <= f32::EPSILON {
        return false;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    true
}

impl VectorIndex {
    /// An empty index for vectors of `dim` coordinates from `model`
    /// (flat until it holds more than [`EXACT_SEARCH_MAX_POINTS`]).
    pub fn new(model: &str, dim: usize, capacity: usize) -> Self {
        let capacity = capacity.min(EXACT_SEARCH_MAX_POINTS);
        Self {
            store: Store::Flat {
                ids: Vec::with_capacity(capacity),
                data: Vec::with_capacity(capacity * dim),
            },
            model: model.to_owned(),
            dim,
            points: 0,
            ids: HashSet::new(),
        }
    }

    /// The embedding model these vectors come from.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Nodes in the graph, tombstones included.
    pub fn points(&self) -> usize {
        self.points
    }

    /// Chunk ids in the graph, tombstones included.
    pub fn ids(&self) -> &HashSet<ChunkId> {
        &self.ids
    }

    /// Whether the points are in an HNSW graph (else a flat array).
    pub fn is_graph(&self) -> bool {
        matches!(self.store, Store::Graph(_))
    }

    /// Insert vectors. Vectors of the wrong dimension or with no direction
    /// are skipped. Past [`EXACT_SEARCH_MAX_POINTS`] the points move into
    /// an HNSW graph (built in parallel).
    pub fn insert(&mut self, items: &[(ChunkId, Vec<f32>)]) {
        let prepared: Vec<(Vec<f32>, ChunkId)> = items
            .iter()
            .filter_map(|(id, v)| {
                let mut v = v.clone();
                (v.len() == self.dim && usize::try_from(*id).is_ok() && normalize(&mut v))
                    .then_some((v, *id))
            })
            .collect();
        if self.points + prepared.len() > EXACT_SEARCH_MAX_POINTS {
            self.graph_for(self.points + prepared.len());
        }
        match &mut self.store {
            Store::Flat { ids, data } => {
                for (v, id) in &prepared {
                    ids.push(*id);
                    data.extend_from_slice(v);
                }
            }
            Store::Graph(hnsw) => {
                let refs: Vec<(&Vec<f32>, usize)> = prepared
                    .iter()
                    .filter_map(|(v, id)| Some((v, usize::try_from(*id).ok()?)))
                    .collect();
                hnsw.parallel_insert(&refs);
            }
        }
        self.points += prepared.len();
        self.ids.extend(prepared.iter().map(|(_, id)| *id));
    }

    /// Move the points into an HNSW graph, whatever their number (an index
    /// does so itself past [`EXACT_SEARCH_MAX_POINTS`]; the benchmark
    /// compares both searches on one index).
    pub fn build_graph(&mut self) {
        self.graph_for(self.points);
    }

    /// [`VectorIndex::build_graph`], sized for `capacity` points.
    fn graph_for(&mut self, capacity: usize) {
        let Store::Flat { ids, data } = &self.store else {
            return;
        };
        let hnsw = Hnsw::new(
            MAX_CONNECTIONS,
            capacity.max(1024),
            MAX_LAYERS,
            EF_CONSTRUCTION,
            UnitDot,
        );
        let points: Vec<(Vec<f32>, usize)> = ids
            .iter()
            .zip(data.chunks_exact(self.dim.max(1)))
            .filter_map(|(id, v)| Some((v.to_vec(), usize::try_from(*id).ok()?)))
            .collect();
        let refs: Vec<(&Vec<f32>, usize)> = points.iter().map(|(v, id)| (v, *id)).collect();
        hnsw.parallel_insert(&refs);
        self.store = Store::Graph(Box::new(hnsw));
    }

    /// The `k` nearest live chunks to `query`, as (id, cosine similarity),
    /// best first (ties in chunk-id order): exact up to
    /// [`EXACT_SEARCH_MAX_POINTS`], through the graph above.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        live: &(dyn Fn(ChunkId) -> bool + Sync),
    ) -> Vec<(ChunkId, f32)> {
        if self.points <= EXACT_SEARCH_MAX_POINTS {
            self.exact_search(query, k, live)
        } else {
            self.graph_search(query, k, live)
        }
    }

    /// `query` as a unit vector of this index's dimension, if it is one.
    fn unit_query(&self, query: &[f32], k: usize) -> Option<Vec<f32>> {
        if self.points == 0 || query.len() != self.dim || k == 0 {
            return None;
        }
        let mut q = query.to_vec();
        normalize(&mut q).then_some(q)
    }

    /// [`VectorIndex::search`] through the HNSW graph: approximate, so its
    /// answer can depend on how the graph was built. A flat index has no
    /// graph: the exact answer.
    pub fn graph_search(
        &self,
        query: &[f32],
        k: usize,
        live: &(dyn Fn(ChunkId) -> bool + Sync),
    ) -> Vec<(ChunkId, f32)> {
        let Store::Graph(hnsw) = &self.store else {
            return self.exact_search(query, k, live);
        };
        let Some(q) = self.unit_query(query, k) else {
            return Vec::new();
        };
        let filter = |id: &usize| i64::try_from(*id).is_ok_and(live);
        let found = hnsw.search_filter(&q, k, EF_SEARCH.max(k), Some(&filter));
        let mut out: Vec<(ChunkId, f32)> = found
            .into_iter()
            .filter_map(|n| Some((i64::try_from(n.d_id).ok()?, 1.0 - n.distance)))
            .collect();
        // Equal similarities (identical chunks) in chunk-id order, not in
        // the order the graph, built in parallel, happened to yield them.
        out.sort_by(best_first);
        out
    }

    /// [`VectorIndex::search`] by scoring every live point: exact, and so
    /// independent of the graph.
    pub fn exact_search(
        &self,
        query: &[f32],
        k: usize,
        live: &(dyn Fn(ChunkId) -> bool + Sync),
    ) -> Vec<(ChunkId, f32)> {
        let Some(q) = self.unit_query(query, k) else {
            return Vec::new();
        };
        let q = q.as_slice();
        let score = |id: ChunkId, v: &[f32]| live(id).then(|| (id, 1.0 - UnitDot.eval(q, v)));
        let mut scored: Vec<(ChunkId, f32)> = match &self.store {
            Store::Flat { ids, data } => ids
                .iter()
                .zip(data.chunks_exact(self.dim.max(1)))
                .filter_map(|(id, v)| score(*id, v))
                .collect(),
            Store::Graph(hnsw) => hnsw
                .get_point_indexation()
                .into_iter()
                .filter_map(|p| score(i64::try_from(p.get_origin_id()).ok()?, p.get_v()))
                .collect(),
        };
        if scored.len() > k {
            scored.select_nth_unstable_by(k - 1, best_first);
            scored.truncate(k);
        }
        scored.sort_by(best_first);
        scored
    }

    /// Write the index to `dir` atomically: dump into a sibling temporary
    /// directory, write the manifest last, then swap directories.
    pub fn save(&self, dir: &Path, generation: u64) -> Result<()> {
        let tmp = sibling(dir, "tmp");
        let old = sibling(dir, "old");
        remove_dir_if_exists(&tmp)?;
        fs::create_dir_all(&tmp).map_err(|e| io("create vector dump dir", &tmp, e))?;
        let mut files = Vec::new();
        match &self.store {
            Store::Flat { ids, data } => {
                let mut order: Vec<usize> = (0..ids.len()).collect();
                order.sort_by_key(|&i| ids[i]);
                let mut bytes = Vec::with_capacity(ids.len() * (8 + 4 * self.dim));
                for i in order {
                    bytes.extend_from_slice(&ids[i].to_le_bytes());
                    for x in &data[i * self.dim..(i + 1) * self.dim] {
                        bytes.extend_from_slice(&x.to_le_bytes());
                    }
                }
                let path = tmp.join(FLAT_FILE);
                write_synced(&path, &bytes)?;
                files.push((FLAT_FILE.to_owned(), checksum(&path)?));
            }
            // hnsw_rs refuses to dump an empty graph; the manifest alone says "empty".
            Store::Graph(_) if self.points == 0 => {}
            Store::Graph(hnsw) => {
                let written = hnsw
                    .file_dump(&tmp, BASENAME)
                    .map_err(|e| Error::Vectors(format!("dump failed: {e}")))?;
                for suffix in [".hnsw.graph", ".hnsw.data"] {
                    let name = format!("{written}{suffix}");
                    files.push((name.clone(), checksum(&tmp.join(&name))?));
                }
            }
        }
        let manifest = Manifest {
            generation,
            model: self.model.clone(),
            dim: self.dim,
            points: self.points,
            ids: {
                let mut ids: Vec<ChunkId> = self.ids.iter().copied().collect();
                ids.sort_unstable();
                ids
            },
            files,
        };
        let json = serde_json::to_vec(&manifest).map_err(|e| Error::Vectors(e.to_string()))?;
        write_synced(&tmp.join(MANIFEST), &json)?;
        remove_dir_if_exists(&old)?;
        if dir.exists() {
            fs::rename(dir, &old).map_err(|e| io("retire old vector index", dir, e))?;
        }
        fs::rename(&tmp, dir).map_err(|e| io("install vector index", dir, e))?;
        remove_dir_if_exists(&old)?;
        Ok(())
    }

    /// Load the index saved in `dir` if it is intact, made for `generation`
    /// and `model`. `Ok(None)` means missing, stale or damaged: rebuild it.
    pub fn load(dir: &Path, generation: u64, model: &str) -> Result<Option<Self>> {
        let Ok(bytes) = fs::read(dir.join(MANIFEST)) else {
            return Ok(None);
        };
        let Ok(manifest) = serde_json::from_slice::<Manifest>(&bytes) else {
            return Ok(None);
        };
        if manifest.generation != generation || manifest.model != model {
            return Ok(None);
        }
        for (name, sum) in &manifest.files {
            if name.contains('/') || checksum(&dir.join(name)).ok().as_deref() != Some(sum) {
                return Ok(None);
            }
        }
        if manifest.points == 0 {
            return Ok(Some(Self::new(model, manifest.dim, 0)));
        }
        if manifest.files.iter().any(|(n, _)| n == FLAT_FILE) {
            return Ok(load_flat(&dir.join(FLAT_FILE), manifest));
        }
        let basename = manifest
            .files
            .first()
            .and_then(|(n, _)| n.strip_suffix(".hnsw.graph"))
            .unwrap_or(BASENAME)
            .to_owned();
        // hnsw_rs ties the loaded graph's lifetime to its loader. The loader is
        // a few paths; leaking one per load gives a 'static graph.
        let loader: &'static HnswIo = Box::leak(Box::new(HnswIo::new(dir, &basename)));
        // Checksums make a panic very unlikely, but hnsw_rs asserts on format
        // details; never let that reach the caller.
        let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            loader.load_hnsw_with_dist::<f32, UnitDot>(UnitDot)
        }));
        match loaded {
            Ok(Ok(hnsw)) => Ok(Some(Self {
                store: Store::Graph(Box::new(hnsw)),
                model: manifest.model,
                dim: manifest.dim,
                points: manifest.points,
                ids: manifest.ids.into_iter().collect(),
            })),
            _ => Ok(None),
        }
    }
}

/// The flat array saved at `path` for `manifest` (already checksummed);
/// `None` when it does not hold the manifest's points.
fn load_flat(path: &Path, manifest: Manifest) -> Option<VectorIndex> {
    let bytes = fs::read(path).ok()?;
    let record = 8 + 4 * manifest.dim;
    if manifest.dim == 0 || bytes.len() != record * manifest.points {
        return None;
    }
    let mut ids = Vec::with_capacity(manifest.points);
    let mut data = Vec::with_capacity(manifest.points * manifest.dim);
    for rec in bytes.chunks_exact(record) {
        let (id, v) = rec.split_at(8);
        ids.push(ChunkId::from_le_bytes(id.try_into().ok()?));
        data.extend(
            v.chunks_exact(4)
                .filter_map(|b| Some(f32::from_le_bytes(b.try_into().ok()?))),
        );
    }
    Some(VectorIndex {
        store: Store::Flat { ids, data },
        model: manifest.model,
        dim: manifest.dim,
        points: manifest.points,
        ids: manifest.ids.into_iter().collect(),
    })
}

fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".{suffix}"));
    dir.with_file_name(name)
}

fn io(what: &'static str, path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

fn remove_dir_if_exists(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io("remove directory", dir, e)),
    }
}

fn checksum(path: &Path) -> Result<String> {
    let mut hasher = blake3::Hasher::new();
    let file = fs::File::open(path).map_err(|e| io("checksum vector index", path, e))?;
    hasher
        .update_reader(file)
        .map_err(|e| io("checksum vector index", path, e))?;
    Ok(hasher.finalize().to_hex().to_string())
}

/// Write `bytes` to `path` and fsync it.
pub(crate) fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut f = fs::File::create(path).map_err(|e| io("write", path, e))?;
    f.write_all(bytes).map_err(|e| io("write", path, e))?;
    f.sync_all().map_err(|e| io("sync", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random vectors (xorshift), some of them equal.
    fn vectors(n: usize, dim: usize) -> Vec<(ChunkId, Vec<f32>)> {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        (0..n)
            .map(|i| {
                let v: Vec<f32> = (0..dim)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % 2001) as f32 / 1000.0 - 1.0
                    })
                    .collect();
                // Every tenth repeats its neighbour: ties the graph cannot order.
                (i as ChunkId + 1, v)
            })
            .enumerate()
            .map(|(i, (id, v))| {
                if i % 10 == 9 {
                    (id, vec![0.5; dim])
                } else {
                    (id, v)
                }
            })
            .collect()
    }

    #[test]
    fn small_indexes_search_exactly_whatever_the_insert_order() {
        let items = vectors(1500, 16);
        let mut forward = VectorIndex::new("m", 16, items.len());
        forward.insert(&items);
        let mut reversed_items = items.clone();
        reversed_items.reverse();
        let mut backward = VectorIndex::new("m", 16, items.len());
        // In small batches, as incremental runs would.
        for batch in reversed_items.chunks(97) {
            backward.insert(batch);
        }
        let live = |id: ChunkId| id % 7 != 0;
        for (_, q) in items.iter().step_by(101) {
            let a = forward.search(q, 25, &live);
            let b = backward.search(q, 25, &live);
            assert_eq!(a, b);
            // And it is the brute-force answer.
            let mut unit = q.clone();
            assert!(normalize(&mut unit));
            let mut want: Vec<(ChunkId, f32)> = items
                .iter()
                .filter(|(id, _)| live(*id))
                .filter_map(|(id, v)| {
                    let mut v = v.clone();
                    normalize(&mut v).then(|| (*id, 1.0 - UnitDot.eval(&unit, &v)))
                })
                .collect();
            want.sort_by(best_first);
            want.truncate(25);
            assert_eq!(a, want);
        }
    }

    #[test]
    fn flat_and_graph_indexes_save_load_and_answer_alike() {
        let items = vectors(600, 8);
        let live = |id: ChunkId| id % 5 != 0;
        let dir = tempfile::tempdir().expect("temp dir");
        let mut flat = VectorIndex::new("m", 8, items.len());
        flat.insert(&items);
        assert!(!flat.is_graph());
        let mut graph = VectorIndex::new("m", 8, items.len());
        graph.insert(&items);
        graph.build_graph();
        assert!(graph.is_graph());
        for (name, index) in [("flat", &flat), ("graph", &graph)] {
            let path = dir.path().join(name);
            index.save(&path, 7).expect("save");
            let loaded = VectorIndex::load(&path, 7, "m")
                .expect("load")
                .expect("intact");
            assert_eq!(loaded.is_graph(), index.is_graph());
            assert_eq!(loaded.points(), 600);
            assert_eq!(loaded.ids(), flat.ids());
            // Another generation or model is not this index.
            assert!(VectorIndex::load(&path, 8, "m").expect("load").is_none());
            assert!(VectorIndex::load(&path, 7, "x").expect("load").is_none());
            for (_, q) in items.iter().step_by(37) {
                assert_eq!(
                    loaded.exact_search(q, 20, &live),
                    flat.exact_search(q, 20, &live)
                );
            }
        }
        // A damaged flat file is not loaded (it is rebuilt from the catalog).
        let file = dir.path().join("flat").join(FLAT_FILE);
        let mut bytes = fs::read(&file).expect("read");
        bytes[20] ^= 0xff;
        fs::write(&file, bytes).expect("write");
        assert!(
            VectorIndex::load(&dir.path().join("flat"), 7, "m")
                .expect("load")
                .is_none()
        );
    }

    #[test]
    fn a_flat_index_becomes_a_graph_past_the_exact_search_limit() {
        let items = vectors(EXACT_SEARCH_MAX_POINTS + 50, 4);
        let mut index = VectorIndex::new("m", 4, 0);
        let (first, rest) = items.split_at(EXACT_SEARCH_MAX_POINTS - 10);
        index.insert(first);
        assert!(!index.is_graph());
        index.insert(rest);
        assert!(index.is_graph());
        assert_eq!(index.points(), items.len());
        // Every point made it into the graph: each finds itself.
        let live = |_: ChunkId| true;
        for (id, q) in items.iter().step_by(997) {
            let found = index.exact_search(q, 1, &live);
            let mut unit = q.clone();
            assert!(normalize(&mut unit));
            assert!((found[0].1 - 1.0).abs() < 1e-5, "{id}: {found:?}");
        }
    }
}

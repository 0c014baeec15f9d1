//! The vector index: an HNSW graph (hnsw_rs) over chunk embeddings, keyed by
//! chunk id, persisted next to the catalog.
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

/// An in-memory HNSW index over unit vectors.
pub struct VectorIndex {
    hnsw: Hnsw<'static, f32, UnitDot>,
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
    /// An empty index for vectors of `dim` coordinates from `model`.
    pub fn new(model: &str, dim: usize, capacity: usize) -> Self {
        let hnsw = Hnsw::new(
            MAX_CONNECTIONS,
            capacity.max(1024),
            MAX_LAYERS,
            EF_CONSTRUCTION,
            UnitDot,
        );
        Self {
            hnsw,
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

    /// Insert vectors (in parallel). Vectors of the wrong dimension or with no
    /// direction are skipped.
    pub fn insert(&mut self, items: &[(ChunkId, Vec<f32>)]) {
        let prepared: Vec<(Vec<f32>, usize)> = items
            .iter()
            .filter_map(|(id, v)| {
                let mut v = v.clone();
                let id = usize::try_from(*id).ok()?;
                (v.len() == self.dim && normalize(&mut v)).then_some((v, id))
            })
            .collect();
        let refs: Vec<(&Vec<f32>, usize)> = prepared.iter().map(|(v, id)| (v, *id)).collect();
        self.hnsw.parallel_insert(&refs);
        self.points += refs.len();
        self.ids.extend(
            prepared
                .iter()
                .filter_map(|(_, id)| i64::try_from(*id).ok()),
        );
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
    /// answer can depend on how the graph was built.
    pub fn graph_search(
        &self,
        query: &[f32],
        k: usize,
        live: &(dyn Fn(ChunkId) -> bool + Sync),
    ) -> Vec<(ChunkId, f32)> {
        let Some(q) = self.unit_query(query, k) else {
            return Vec::new();
        };
        let filter = |id: &usize| i64::try_from(*id).is_ok_and(live);
        let found = self
            .hnsw
            .search_filter(&q, k, EF_SEARCH.max(k), Some(&filter));
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
        let mut scored: Vec<(ChunkId, f32)> = self
            .hnsw
            .get_point_indexation()
            .into_iter()
            .filter_map(|p| {
                let id = i64::try_from(p.get_origin_id()).ok()?;
                live(id).then(|| (id, 1.0 - UnitDot.eval(q, p.get_v())))
            })
            .collect();
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
        // hnsw_rs refuses to dump an empty graph; the manifest alone says "empty".
        if self.points > 0 {
            let written = self
                .hnsw
                .file_dump(&tmp, BASENAME)
                .map_err(|e| Error::Vectors(format!("dump failed: {e}")))?;
            for suffix in [".hnsw.graph", ".hnsw.data"] {
                let name = format!("{written}{suffix}");
                files.push((name.clone(), checksum(&tmp.join(&name))?));
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
                hnsw,
                model: manifest.model,
                dim: manifest.dim,
                points: manifest.points,
                ids: manifest.ids.into_iter().collect(),
            })),
            _ => Ok(None),
        }
    }
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
}

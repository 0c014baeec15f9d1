//! The vector index over chunk embeddings, keyed by chunk id, persisted next
//! to the catalog: one flat array of int8 rows (each unit vector scaled by
//! its largest coordinate, the scale kept beside it), searched exactly.
//!
//! Every search scores every point, on all cores, so the answer is the same
//! however and in whatever order the index was built (a cold index, years
//! of incremental ones, another machine). There is no graph to build or
//! load: an HNSW graph of the `cargo vendor` corpus (544 k chunks) took
//! 823 s of a 1,266 s first index and ~16 s of every one-shot query that
//! opened it, and held 2 GiB; the int8 rows are 146 MB, filled as fast as
//! they are read, and scanned in 4.8 ms on two cores (0.4 ms at 50 k chunks;
//! BENCHMARKS.md, "Session 14: vectors without a graph" and "Session 24").
//!
//! Derived data: the vectors themselves live in the catalog's embedding cache,
//! so this index can always be rebuilt without re-embedding. A dump is written
//! to a fresh directory with a manifest holding the catalog generation and a
//! blake3 checksum of every file, then swapped into place; a load verifies the
//! manifest and the file's size, and anything that does not verify (an older
//! format, a graph from before, a damaged file) is reported as stale.
//!
//! A save after a small change does not rewrite the rows (146 MB on the
//! vendor corpus, most of a one-file change's second): the points added
//! since the rows file was written go to a delta file beside it, and a new
//! manifest naming both replaces the old one in one rename. Once the delta
//! holds more than [`MAX_DELTA_SHARE`] of the base, or when the directory's
//! rows are not the ones this index was loaded or saved with, the save
//! writes the whole dump again.
//!
//! Removed chunks stay in the array as tombstones and are filtered out at
//! query time by the caller's liveness check. When tombstones pass
//! [`MAX_DEAD_FRACTION`] the owner rebuilds.

use crate::{Error, Result};
use loupe_assemble::ChunkId;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BinaryHeap;
use std::fs;
use std::path::{Path, PathBuf};

/// Rebuild once this share of points are tombstones.
pub const MAX_DEAD_FRACTION: f64 = 0.3;
/// The array's file: the records of [`VectorIndex`], in chunk-id order.
const ROWS_FILE: &str = "chunks.i8";
/// Manifest written last into a dump directory.
const MANIFEST: &str = "manifest.json";
/// Delta files are named `delta.<generation>.<digest prefix>.i8`.
const DELTA_PREFIX: &str = "delta.";
/// A save writes a delta while it holds at most this share of the points
/// in the rows file; past it the whole dump is written again.
pub const MAX_DELTA_SHARE: f64 = 0.125;
/// Points scored per parallel task: large enough that splitting costs
/// nothing next to the scan, small enough to use both cores on tokio's
/// 6,800 chunks.
const SCAN_BLOCK: usize = 4096;

/// A search hit: chunk id and cosine similarity. Ordered best first:
/// higher similarity, then lower chunk id, so "greater" is "worse" and a
/// max-heap of hits keeps the worst on top.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Hit(ChunkId, f32);

impl Eq for Hit {}

impl Ord for Hit {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.1.total_cmp(&self.1).then(self.0.cmp(&other.0))
    }
}

impl PartialOrd for Hit {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    generation: u64,
    model: String,
    dim: usize,
    points: usize,
    files: Vec<(String, String)>,
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

/// `v` (a unit vector) as int8 coordinates and the scale that maps them
/// back: `v[i] ≈ q[i] * scale`, the largest coordinate at ±127.
fn quantize(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = max / 127.0;
    // `normalize` guarantees a non-zero coordinate; `as` saturates anyway.
    out.extend(v.iter().map(|x| (x / scale).round() as i8));
    scale
}

/// The integer dot product of an int8 query and a stored row (its bytes
/// are int8s; exact: 256 × 127² fits i32 many times over), written so the
/// compiler vectorises it.
#[inline(always)]
fn dot(a: &[i8], b: &[u8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(i8::from_le_bytes([y])))
        .sum()
}

/// How a quantized query meets a stored row: the integer dot product.
trait Dot: Sync {
    fn dot(&self, row: &[u8]) -> i32;
}

/// [`dot`], compiled for whatever SIMD the caller's dispatch enabled.
struct Plain<'a>(&'a [i8]);

impl Dot for Plain<'_> {
    #[inline(always)]
    fn dot(&self, row: &[u8]) -> i32 {
        dot(self.0, row)
    }
}

/// [`dot`] in AVX2's byte multiply-add, 32 coordinates a step.
///
/// `vpmaddubsw` multiplies unsigned by signed bytes, so the query goes in
/// as its absolute values and each row byte takes the query's sign
/// (`vpsignb`): |q|·(sign(q)·r) = q·r. A pair of such products is at most
/// 2 · 127 · 127 = 32,258, within i16, because [`quantize`] never writes
/// −128. The compiler's own vectorisation of [`dot`] widens every byte to
/// i16 first, 8 at a time: this is about three times fewer instructions
/// (BENCHMARKS.md, "Session 24").
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use pulp::bytemuck;
    use pulp::x86::V3;
    use std::arch::x86_64::__m256i;

    const LANES: usize = 32;

    pub(super) struct Avx2 {
        simd: V3,
        /// |q|, 32 coordinates a register.
        abs: Vec<__m256i>,
        /// q, whose signs the row bytes take.
        sign: Vec<__m256i>,
    }

    impl Avx2 {
        /// The kernel for `query`, when this CPU has AVX2 and the rows are
        /// whole registers long.
        pub(super) fn new(query: &[i8]) -> Option<Self> {
            if query.is_empty() || !query.len().is_multiple_of(LANES) {
                return None;
            }
            let simd = V3::try_new()?;
            let registers = |bytes: Vec<i8>| -> Vec<__m256i> {
                bytes
                    .chunks_exact(LANES)
                    .map(|c| bytemuck::pod_read_unaligned(bytemuck::cast_slice::<i8, u8>(c)))
                    .collect()
            };
            Some(Self {
                simd,
                abs: registers(query.iter().map(|q| q.unsigned_abs() as i8).collect()),
                sign: registers(query.to_vec()),
            })
        }

        /// Run `op` with AVX2 enabled, so the kernel inlines into it.
        #[inline(always)]
        pub(super) fn vectorize<R>(&self, op: impl pulp::NullaryFnOnce<Output = R>) -> R {
            self.simd.vectorize(op)
        }
    }

    impl super::Dot for Avx2 {
        #[inline(always)]
        fn dot(&self, row: &[u8]) -> i32 {
            let (avx, avx2) = (self.simd.avx, self.simd.avx2);
            let ones = avx._mm256_set1_epi16(1);
            let mut acc = avx._mm256_setzero_si256();
            for ((bytes, abs), sign) in row.chunks_exact(LANES).zip(&self.abs).zip(&self.sign) {
                let r: __m256i = bytemuck::pod_read_unaligned(bytes);
                let pairs = avx2._mm256_maddubs_epi16(*abs, avx2._mm256_sign_epi8(r, *sign));
                acc = avx2._mm256_add_epi32(acc, avx2._mm256_madd_epi16(pairs, ones));
            }
            bytemuck::cast::<__m256i, [i32; 8]>(acc).iter().sum()
        }
    }
}

/// A quantized query's scale and how many hits it wants.
struct Query {
    scale: f32,
    dim: usize,
    k: usize,
}

impl Query {
    /// Keep in `heap` (worst on top) the best `k` live points of it and
    /// `records`. Inlined into the caller's SIMD dispatch, so the dot
    /// products use its features.
    #[inline(always)]
    fn top(
        &self,
        kernel: &impl Dot,
        heap: &mut BinaryHeap<Hit>,
        records: &[u8],
        live: &(dyn Fn(ChunkId) -> bool + Sync),
    ) {
        for record in records.chunks_exact(record_len(self.dim)) {
            let (id, scale, row) = fields(record);
            let hit = Hit(id, kernel.dot(row) as f32 * self.scale * scale);
            if heap.len() < self.k {
                if live(id) {
                    heap.push(hit);
                }
            } else if heap.peek().is_some_and(|worst| hit < *worst) && live(id) {
                heap.pop();
                heap.push(hit);
            }
        }
    }
}

/// [`Query::top`] over one block of records, as a SIMD operation (a
/// closure would be compiled apart from the dispatch, without its
/// features); pulp makes every `NullaryFnOnce` a `WithSimd` too.
struct Scan<'a, D> {
    query: &'a Query,
    kernel: &'a D,
    heap: &'a mut BinaryHeap<Hit>,
    records: &'a [u8],
    live: &'a (dyn Fn(ChunkId) -> bool + Sync),
}

impl<D: Dot> pulp::NullaryFnOnce for Scan<'_, D> {
    type Output = ();

    #[inline(always)]
    fn call(self) {
        self.query
            .top(self.kernel, self.heap, self.records, self.live)
    }
}

/// An in-memory index over unit vectors, as int8 rows, in the layout of its
/// file: per point its chunk id (i64), its scale (f32, coordinate `i` is
/// `row[i] * scale`) and `dim` int8 coordinates, little-endian. Loading is
/// one read; nothing is parsed or hashed.
pub struct VectorIndex {
    model: String,
    dim: usize,
    /// The rows file's records first (see `base`), in chunk-id order, then
    /// the points added since, in insertion order.
    records: Vec<u8>,
    /// The points' chunk ids, sorted.
    ids: Vec<ChunkId>,
    /// What of `records` is the rows file this index was loaded from or
    /// last saved as; `None` when it was built in memory.
    base: Option<Base>,
}

/// The rows file an index holds at the front of its records.
#[derive(Clone, Debug)]
struct Base {
    /// Points in it.
    points: usize,
    /// Its blake3 digest, as its manifest names it.
    digest: String,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("model", &self.model)
            .field("dim", &self.dim)
            .field("points", &self.ids.len())
            .finish()
    }
}

/// Bytes per point: id, scale, coordinates.
#[inline(always)]
fn record_len(dim: usize) -> usize {
    8 + 4 + dim
}

/// The chunk id, scale and coordinates of one record.
#[inline(always)]
fn fields(record: &[u8]) -> (ChunkId, f32, &[u8]) {
    let (id, rest) = record.split_at(8);
    let (scale, row) = rest.split_at(4);
    let id = ChunkId::from_le_bytes(id.try_into().unwrap_or_default());
    let scale = f32::from_le_bytes(scale.try_into().unwrap_or_default());
    (id, scale, row)
}

impl VectorIndex {
    /// An empty index for vectors of `dim` coordinates from `model`, with
    /// room for `capacity` points.
    pub fn new(model: &str, dim: usize, capacity: usize) -> Self {
        Self {
            model: model.to_owned(),
            dim,
            records: Vec::with_capacity(capacity.saturating_mul(record_len(dim))),
            ids: Vec::with_capacity(capacity),
            base: None,
        }
    }

    /// The embedding model these vectors come from.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Points in the index, tombstones included.
    pub fn points(&self) -> usize {
        self.ids.len()
    }

    /// Chunk ids in the index, tombstones included, sorted.
    pub fn ids(&self) -> &[ChunkId] {
        &self.ids
    }

    /// Whether chunk `id` has a point in the index.
    pub fn contains(&self, id: ChunkId) -> bool {
        self.ids.binary_search(&id).is_ok()
    }

    /// Insert vectors. Vectors of the wrong dimension or with no direction,
    /// and chunks already in the index, are skipped (of one chunk given
    /// twice, the first).
    pub fn insert(&mut self, items: &[(ChunkId, Vec<f32>)]) {
        let mut fresh: Vec<&(ChunkId, Vec<f32>)> = items
            .iter()
            .filter(|(id, v)| v.len() == self.dim && !self.contains(*id))
            .collect();
        // Stable: of equal ids, the first given stays.
        fresh.sort_by_key(|(id, _)| *id);
        fresh.dedup_by_key(|(id, _)| *id);
        let mut unit = Vec::with_capacity(self.dim);
        let mut row = Vec::with_capacity(self.dim);
        let before = self.ids.len();
        for (id, v) in fresh {
            unit.clear();
            unit.extend_from_slice(v);
            if !normalize(&mut unit) {
                continue;
            }
            row.clear();
            let scale = quantize(&unit, &mut row);
            self.records.extend_from_slice(&id.to_le_bytes());
            self.records.extend_from_slice(&scale.to_le_bytes());
            self.records.extend(row.iter().map(|x| x.to_le_bytes()[0]));
            self.ids.push(*id);
        }
        if before > 0 && self.ids.len() > before {
            self.ids.sort_unstable();
        }
    }

    /// Drop the points whose chunk `keep` refuses (tombstones), keeping the
    /// others' rows as they are: nothing is embedded or quantized again.
    /// The next save writes the whole index.
    pub fn retain(&mut self, keep: impl Fn(ChunkId) -> bool) {
        let len = record_len(self.dim);
        let mut records = Vec::with_capacity(self.records.len());
        for record in self.records.chunks_exact(len) {
            if keep(fields(record).0) {
                records.extend_from_slice(record);
            }
        }
        self.records = records;
        self.ids.retain(|id| keep(*id));
        self.base = None;
    }

    /// The `k` nearest live chunks to `query`, as (id, cosine similarity of
    /// the int8 rows), best first, ties in chunk-id order. Every point is
    /// scored, on all cores; `live` is asked only of points that would
    /// enter the top `k`.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        live: &(dyn Fn(ChunkId) -> bool + Sync),
    ) -> Vec<(ChunkId, f32)> {
        if self.ids.is_empty() || query.len() != self.dim || k == 0 {
            return Vec::new();
        }
        let mut q = query.to_vec();
        if !normalize(&mut q) {
            return Vec::new();
        }
        let mut q8 = Vec::with_capacity(self.dim);
        let q_scale = quantize(&q, &mut q8);
        // The scan compiled for the widest SIMD this CPU has, chosen at run
        // time (the build targets baseline x86-64, where the same loop is
        // half as fast; BENCHMARKS.md): AVX2's byte multiply-add where
        // there is AVX2, else the plain loop under pulp's dispatch.
        let arch = pulp::Arch::new();
        #[cfg(target_arch = "x86_64")]
        let avx2 = avx2::Avx2::new(&q8);
        let query = Query {
            scale: q_scale,
            dim: self.dim,
            k,
        };
        let plain = Plain(&q8);
        // One heap carried across the blocks a thread scans, not one per
        // block: a row is asked whether it is live only once it beats the
        // k-th best so far, and a carried k-th best rises fast. (A fresh
        // heap per block asked it of ~270 rows a block, each a miss in the
        // 432 k-entry live set: 8% of a vendor question's CPU.)
        let mut hits: Vec<Hit> = self
            .records
            .par_chunks(SCAN_BLOCK * record_len(self.dim))
            .fold(
                || BinaryHeap::with_capacity(k + 1),
                |mut heap, records| {
                    #[cfg(target_arch = "x86_64")]
                    if let Some(kernel) = &avx2 {
                        kernel.vectorize(Scan {
                            query: &query,
                            kernel,
                            heap: &mut heap,
                            records,
                            live,
                        });
                        return heap;
                    }
                    arch.dispatch(Scan {
                        query: &query,
                        kernel: &plain,
                        heap: &mut heap,
                        records,
                        live,
                    });
                    heap
                },
            )
            .reduce(BinaryHeap::new, |mut a, b| {
                for hit in b {
                    a.push(hit);
                    if a.len() > k {
                        a.pop();
                    }
                }
                a
            })
            .into_vec();
        hits.sort();
        hits.into_iter().map(|Hit(id, s)| (id, s)).collect()
    }

    /// Save the index to `dir` as `generation`'s, atomically: a delta of
    /// the points added since the rows file in `dir` was written, when that
    /// file is this index's base and the delta is small; otherwise the
    /// whole dump ([`VectorIndex::save_full`]).
    pub fn save(&mut self, dir: &Path, generation: u64) -> Result<()> {
        match self.base.clone() {
            Some(base)
                if (self.ids.len() - base.points) as f64
                    <= MAX_DELTA_SHARE * base.points as f64
                    && self.rows_in(dir).as_deref() == Some(base.digest.as_str()) =>
            {
                self.save_delta(dir, generation, &base)
            }
            _ => self.save_full(dir, generation),
        }
    }

    /// The digest of the rows file the manifest in `dir` names, when it is
    /// a dump of this index's model and dimension.
    fn rows_in(&self, dir: &Path) -> Option<String> {
        let manifest: Manifest =
            serde_json::from_slice(&fs::read(dir.join(MANIFEST)).ok()?).ok()?;
        let (name, sum) = manifest.files.into_iter().next()?;
        (manifest.model == self.model && manifest.dim == self.dim && name == ROWS_FILE)
            .then_some(sum)
    }

    /// Write the points added since `base` to a new delta file in `dir`,
    /// then a manifest naming the rows file and it, renamed over the old
    /// one; older delta files go after that. A crash at any point leaves
    /// the old manifest with the files it names.
    fn save_delta(&self, dir: &Path, generation: u64, base: &Base) -> Result<()> {
        let len = record_len(self.dim);
        let mut added: Vec<&[u8]> = self.records[base.points * len..]
            .chunks_exact(len)
            .collect();
        added.sort_by_key(|r| fields(r).0);
        let bytes = added.concat();
        let sum = digest(&bytes);
        let name = format!("{DELTA_PREFIX}{generation}.{}.i8", &sum[..16]);
        write_synced(&dir.join(&name), &bytes)?;
        let manifest = Manifest {
            generation,
            model: self.model.clone(),
            dim: self.dim,
            points: self.ids.len(),
            files: vec![
                (ROWS_FILE.to_owned(), base.digest.clone()),
                (name.clone(), sum),
            ],
        };
        let json = serde_json::to_vec(&manifest).map_err(|e| Error::Vectors(e.to_string()))?;
        let tmp = dir.join(format!("{MANIFEST}.tmp"));
        write_synced(&tmp, &json)?;
        let path = dir.join(MANIFEST);
        fs::rename(&tmp, &path).map_err(|e| io("install vector manifest", &path, e))?;
        // Files no manifest names any more; one left behind by a crash is
        // removed by the next save.
        if let Ok(entries) = fs::read_dir(dir) {
            for entry in entries.flatten() {
                let other = entry.file_name();
                let other = other.to_string_lossy();
                if other.starts_with(DELTA_PREFIX) && other != name.as_str() {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        Ok(())
    }

    /// Write the whole index to `dir` atomically: dump into a sibling
    /// temporary directory, write the manifest last, then swap directories.
    /// Records are written in chunk-id order, so the same points give the
    /// same file; the index keeps them in that order, as its new base.
    pub fn save_full(&mut self, dir: &Path, generation: u64) -> Result<()> {
        let tmp = sibling(dir, "tmp");
        let old = sibling(dir, "old");
        remove_dir_if_exists(&tmp)?;
        fs::create_dir_all(&tmp).map_err(|e| io("create vector dump dir", &tmp, e))?;
        let len = record_len(self.dim);
        let path = tmp.join(ROWS_FILE);
        let in_order = self
            .records
            .chunks_exact(len)
            .map(|r| fields(r).0)
            .eq(self.ids.iter().copied());
        if !in_order {
            let mut records: Vec<&[u8]> = self.records.chunks_exact(len).collect();
            records.sort_by_key(|r| fields(r).0);
            self.records = records.concat();
        }
        write_synced(&path, &self.records)?;
        let sum = digest(&self.records);
        let manifest = Manifest {
            generation,
            model: self.model.clone(),
            dim: self.dim,
            points: self.ids.len(),
            files: vec![(ROWS_FILE.to_owned(), sum.clone())],
        };
        let json = serde_json::to_vec(&manifest).map_err(|e| Error::Vectors(e.to_string()))?;
        write_synced(&tmp.join(MANIFEST), &json)?;
        remove_dir_if_exists(&old)?;
        if dir.exists() {
            fs::rename(dir, &old).map_err(|e| io("retire old vector index", dir, e))?;
        }
        fs::rename(&tmp, dir).map_err(|e| io("install vector index", dir, e))?;
        remove_dir_if_exists(&old)?;
        self.base = Some(Base {
            points: self.ids.len(),
            digest: sum,
        });
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
        let (base_sum, delta) = match manifest.files.as_slice() {
            [(name, sum)] if name == ROWS_FILE => (sum.clone(), None),
            [(name, sum), (delta, delta_sum)]
                if name == ROWS_FILE
                    && delta.starts_with(DELTA_PREFIX)
                    && !delta.contains(['/', '\\']) =>
            {
                (sum.clone(), Some((delta.clone(), delta_sum.clone())))
            }
            _ => return Ok(None),
        };
        let Some(mut records) = read_verified(&dir.join(ROWS_FILE), &base_sum) else {
            return Ok(None);
        };
        let base_len = records.len();
        if let Some((name, sum)) = delta {
            let Some(added) = read_verified(&dir.join(name), &sum) else {
                return Ok(None);
            };
            records.extend_from_slice(&added);
        }
        Ok(from_records(records, base_len, manifest, base_sum))
    }
}

/// The bytes of `path` when their digest is `sum`.
fn read_verified(path: &Path, sum: &str) -> Option<Vec<u8>> {
    let bytes = fs::read(path).ok()?;
    (digest(&bytes) == sum).then_some(bytes)
}

/// The index whose records are `records` (already checksummed): the rows
/// file's `base_len` bytes, then a delta's. `None` when they do not hold
/// the manifest's points, each file in chunk-id order, no id twice.
fn from_records(
    records: Vec<u8>,
    base_len: usize,
    manifest: Manifest,
    base_digest: String,
) -> Option<VectorIndex> {
    let len = record_len(manifest.dim);
    if manifest.dim == 0
        || records.len() != len.checked_mul(manifest.points)?
        || !base_len.is_multiple_of(len)
    {
        return None;
    }
    let sorted_ids = |bytes: &[u8]| -> Option<Vec<ChunkId>> {
        let mut ids: Vec<ChunkId> = Vec::with_capacity(bytes.len() / len);
        for record in bytes.chunks_exact(len) {
            let (id, scale, _) = fields(record);
            if !scale.is_finite() || ids.last().is_some_and(|last| *last >= id) {
                return None;
            }
            ids.push(id);
        }
        Some(ids)
    };
    let mut ids = sorted_ids(&records[..base_len])?;
    let added = sorted_ids(&records[base_len..])?;
    if !added.is_empty() {
        ids.extend(added);
        ids.sort_unstable();
        if ids.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
    }
    Some(VectorIndex {
        model: manifest.model,
        dim: manifest.dim,
        records,
        ids,
        base: Some(Base {
            points: base_len / len,
            digest: base_digest,
        }),
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

/// The blake3 digest of `bytes`, hashed on all cores (139 MB of vendor
/// vectors are read by every process that opens that index).
fn digest(bytes: &[u8]) -> String {
    blake3::Hasher::new()
        .update_rayon(bytes)
        .finalize()
        .to_hex()
        .to_string()
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

    /// Deterministic pseudo-random vectors (xorshift); every tenth is the
    /// same vector, so similarities tie.
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
                let id = i as ChunkId + 1;
                if i % 10 == 9 {
                    (id, vec![0.5; dim])
                } else {
                    (id, v)
                }
            })
            .collect()
    }

    /// Every live point scored one by one, in the index's own arithmetic.
    fn brute_force(
        index: &VectorIndex,
        query: &[f32],
        k: usize,
        live: impl Fn(ChunkId) -> bool,
    ) -> Vec<(ChunkId, f32)> {
        let mut q = query.to_vec();
        assert!(normalize(&mut q));
        let mut q8 = Vec::new();
        let q_scale = quantize(&q, &mut q8);
        let mut hits: Vec<Hit> = index
            .records
            .chunks_exact(record_len(index.dim))
            .map(fields)
            .filter(|(id, _, _)| live(*id))
            .map(|(id, scale, row)| Hit(id, dot(&q8, row) as f32 * q_scale * scale))
            .collect();
        hits.sort();
        hits.truncate(k);
        hits.into_iter().map(|Hit(id, s)| (id, s)).collect()
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        let (mut a, mut b) = (a.to_vec(), b.to_vec());
        assert!(normalize(&mut a) && normalize(&mut b));
        a.iter().zip(&b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn search_is_exact_and_independent_of_insert_order() {
        // 16 dimensions take the plain loop; 256 (the code model's) take
        // AVX2's where the CPU has it.
        for dim in [16, 256] {
            exact_and_independent_of_insert_order(dim);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_kernel_is_the_plain_dot_product() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut bytes = |n: usize| -> Vec<i8> {
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // -127..=127: what `quantize` writes.
                    ((x % 255) as i16 - 127) as i8
                })
                .collect()
        };
        for dim in [32, 64, 256] {
            let mut queries = vec![vec![127; dim], vec![-127; dim], vec![0; dim]];
            queries.extend((0..20).map(|_| bytes(dim)));
            let mut rows = vec![vec![127; dim], vec![-127; dim], vec![0; dim]];
            rows.extend((0..50).map(|_| bytes(dim)));
            for q in &queries {
                let Some(kernel) = avx2::Avx2::new(q) else {
                    return; // no AVX2 here: the plain loop is all there is
                };
                for row in &rows {
                    let row: Vec<u8> = row.iter().map(|b| b.to_le_bytes()[0]).collect();
                    assert_eq!(kernel.vectorize(|| kernel.dot(&row)), dot(q, &row));
                }
            }
        }
        // Rows not a whole number of registers long take the plain loop.
        assert!(avx2::Avx2::new(&[1; 48]).is_none());
        assert!(avx2::Avx2::new(&[]).is_none());
    }

    fn exact_and_independent_of_insert_order(dim: usize) {
        // Several scan blocks, so the parallel top-k lists are merged.
        let items = vectors(3 * SCAN_BLOCK + 123, dim);
        let mut forward = VectorIndex::new("m", dim, items.len());
        forward.insert(&items);
        let mut reversed = items.clone();
        reversed.reverse();
        let mut backward = VectorIndex::new("m", dim, 0);
        // In small batches, as incremental runs would.
        for batch in reversed.chunks(97) {
            backward.insert(batch);
        }
        assert_eq!(forward.points(), items.len());
        let live = |id: ChunkId| id % 7 != 0;
        for (_, q) in items.iter().step_by(1001) {
            for k in [1, 25, 300] {
                let a = forward.search(q, k, &live);
                assert_eq!(a, backward.search(q, k, &live));
                assert_eq!(a, brute_force(&forward, q, k, live));
                assert_eq!(a.len(), k);
                assert!(a.iter().all(|(id, _)| live(*id)));
            }
        }
        // Ties (every tenth vector is the same) come in chunk-id order.
        let tied = forward.search(&vec![0.5; dim], 20, &live);
        let ids: Vec<ChunkId> = tied.iter().map(|h| h.0).collect();
        let want: Vec<ChunkId> = (1..=items.len() as ChunkId)
            .filter(|id| id % 10 == 0 && live(*id))
            .take(20)
            .collect();
        assert_eq!(ids, want);
    }

    #[test]
    fn retain_drops_tombstones_and_keeps_the_rest_exactly() {
        let items = vectors(2 * SCAN_BLOCK + 17, 16);
        let live = |id: ChunkId| id % 3 != 0;
        let mut full = VectorIndex::new("m", 16, items.len());
        full.insert(&items);
        let dir = tempfile::tempdir().expect("tempdir");
        full.save(dir.path(), 1).expect("save");
        // Added after the save: the records are out of id order again.
        let later = vectors(5, 16)
            .into_iter()
            .map(|(id, v)| (id + 1_000_000, v))
            .collect::<Vec<_>>();
        full.insert(&later);
        let mut kept: Vec<(ChunkId, Vec<f32>)> = items.iter().chain(&later).cloned().collect();
        kept.retain(|(id, _)| live(*id));
        let mut fresh = VectorIndex::new("m", 16, kept.len());
        fresh.insert(&kept);

        full.retain(live);
        assert_eq!(full.ids(), fresh.ids());
        assert!(full.ids().iter().all(|id| live(*id)));
        let all = |_: ChunkId| true;
        for (_, q) in items.iter().step_by(211) {
            assert_eq!(full.search(q, 30, &all), fresh.search(q, 30, &all));
        }
        // The next save is whole, and loads back as the same index.
        full.save(dir.path(), 2).expect("save");
        assert_eq!(fs::read_dir(dir.path()).expect("dir").count(), 2);
        let loaded = VectorIndex::load(dir.path(), 2, "m")
            .expect("load")
            .expect("saved");
        assert_eq!(loaded.ids(), fresh.ids());
    }

    #[test]
    fn int8_similarities_stay_close_to_the_float_cosines() {
        let dim = 256;
        let items = vectors(2000, dim);
        let mut index = VectorIndex::new("m", dim, items.len());
        index.insert(&items);
        let all = |_: ChunkId| true;
        let (mut asked, mut same_top) = (0, 0);
        // Queries that are not one of the repeated vectors.
        for (id, q) in items.iter().step_by(97).filter(|(id, _)| id % 10 != 0) {
            let found = index.search(q, 10, &all);
            // A point finds itself first.
            assert_eq!(found[0].0, *id);
            assert!((found[0].1 - 1.0).abs() < 0.01, "{id}: {found:?}");
            for (hit, sim) in &found {
                let v = &items[*hit as usize - 1].1;
                assert!((sim - cosine(q, v)).abs() < 0.01, "{hit}: {sim}");
            }
            // The float ranking's runner-up is the int8 one's too, as a rule.
            let mut float: Vec<(ChunkId, f32)> = items
                .iter()
                .map(|(other, v)| (*other, cosine(q, v)))
                .collect();
            float.sort_by(|a, b| b.1.total_cmp(&a.1));
            asked += 1;
            same_top += usize::from(found[1].0 == float[1].0);
        }
        assert!(same_top * 10 >= asked * 8, "{same_top} of {asked}");
    }

    #[test]
    fn bad_vectors_and_repeats_are_skipped() {
        let mut index = VectorIndex::new("m", 3, 0);
        index.insert(&[
            (1, vec![1.0, 0.0, 0.0]),
            (2, vec![0.0; 3]),
            (3, vec![1.0, 2.0]),
            (4, vec![f32::NAN, 1.0, 0.0]),
            (1, vec![0.0, 1.0, 0.0]),
            (5, vec![0.0, -3.0, 4.0]),
        ]);
        assert_eq!(index.points(), 2);
        let all = |_: ChunkId| true;
        let found = index.search(&[0.0, -0.6, 0.8], 5, &all);
        assert_eq!(found.iter().map(|h| h.0).collect::<Vec<_>>(), vec![5, 1]);
        assert!(index.search(&[0.0; 3], 5, &all).is_empty());
        assert!(index.search(&[1.0, 0.0], 5, &all).is_empty());
        assert!(index.search(&[1.0, 0.0, 0.0], 0, &all).is_empty());
    }

    #[test]
    fn an_index_saves_loads_and_answers_alike() {
        let items = vectors(600, 8);
        let live = |id: ChunkId| id % 5 != 0;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("vectors");
        let mut index = VectorIndex::new("m", 8, items.len());
        index.insert(&items);
        index.save(&path, 7).expect("save");
        let loaded = VectorIndex::load(&path, 7, "m")
            .expect("load")
            .expect("intact");
        assert_eq!(loaded.points(), 600);
        assert_eq!(loaded.ids(), index.ids());
        // Another generation or model is not this index.
        assert!(VectorIndex::load(&path, 8, "m").expect("load").is_none());
        assert!(VectorIndex::load(&path, 7, "x").expect("load").is_none());
        for (_, q) in items.iter().step_by(37) {
            assert_eq!(loaded.search(q, 20, &live), index.search(q, 20, &live));
        }
        // An empty index round-trips too.
        let empty_path = dir.path().join("empty");
        VectorIndex::new("m", 8, 0)
            .save(&empty_path, 1)
            .expect("save");
        let empty = VectorIndex::load(&empty_path, 1, "m")
            .expect("load")
            .expect("intact");
        assert_eq!(empty.points(), 0);
        // A damaged file is not loaded (it is rebuilt from the catalog).
        let file = path.join(ROWS_FILE);
        let mut bytes = fs::read(&file).expect("read");
        bytes[20] ^= 0xff;
        fs::write(&file, bytes).expect("write");
        assert!(VectorIndex::load(&path, 7, "m").expect("load").is_none());
    }

    /// The files of a dump directory, by name, with their bytes.
    fn files_of(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
        fs::read_dir(dir)
            .expect("list")
            .map(|e| {
                let e = e.expect("entry");
                (
                    e.file_name().to_string_lossy().into_owned(),
                    fs::read(e.path()).expect("read"),
                )
            })
            .collect()
    }

    /// The sizes of the delta files among `files`.
    fn delta_sizes(files: &std::collections::BTreeMap<String, Vec<u8>>) -> Vec<usize> {
        files
            .iter()
            .filter(|(n, _)| n.starts_with(DELTA_PREFIX))
            .map(|(_, bytes)| bytes.len())
            .collect()
    }

    #[test]
    fn small_additions_save_as_a_delta_beside_the_rows_they_extend() {
        let items = vectors(1000, 8);
        let live = |_: ChunkId| true;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("vectors");
        let mut index = VectorIndex::new("m", 8, items.len());
        index.insert(&items[..800]);
        index.save(&path, 1).expect("save");
        let rows = fs::read(path.join(ROWS_FILE)).expect("rows");

        // 50 more: the rows file stays as it was, a delta holds them.
        index.insert(&items[800..850]);
        index.save(&path, 2).expect("save");
        let files = files_of(&path);
        assert_eq!(files[ROWS_FILE], rows, "the rows are not rewritten");
        // One delta, of the points added since the rows.
        assert_eq!(delta_sizes(&files), vec![50 * record_len(8)], "{files:?}");
        let loaded = VectorIndex::load(&path, 2, "m")
            .expect("load")
            .expect("intact");
        assert_eq!(loaded.ids(), index.ids());
        for (_, q) in items.iter().step_by(41) {
            assert_eq!(loaded.search(q, 10, &live), index.search(q, 10, &live));
        }
        assert!(VectorIndex::load(&path, 1, "m").expect("load").is_none());

        // The loaded index goes on from there: its delta replaces the old
        // one, which is removed.
        let mut loaded = loaded;
        loaded.insert(&items[850..900]);
        loaded.save(&path, 3).expect("save");
        let files = files_of(&path);
        assert_eq!(files[ROWS_FILE], rows);
        // One delta, of the points added since the rows.
        assert_eq!(delta_sizes(&files), vec![100 * record_len(8)], "{files:?}");
        let again = VectorIndex::load(&path, 3, "m")
            .expect("load")
            .expect("intact");
        assert_eq!(again.points(), 900);

        // Past an eighth of the rows, the whole dump is written again.
        let mut again = again;
        again.insert(&items[900..]);
        again.save(&path, 4).expect("save");
        let files = files_of(&path);
        assert!(delta_sizes(&files).is_empty(), "{files:?}");
        assert_eq!(files[ROWS_FILE].len(), 1000 * record_len(8));
        let full = VectorIndex::load(&path, 4, "m")
            .expect("load")
            .expect("intact");
        assert_eq!(full.ids(), again.ids());

        // Rows another index wrote since (another process's rebuild) are
        // not this index's base: its next save is a whole dump of its own.
        let mut other = VectorIndex::new("m", 8, 10);
        other.insert(&items[..10]);
        other.save(&path, 5).expect("save");
        index.insert(&items[850..851]);
        index.save(&path, 6).expect("save");
        let mine = VectorIndex::load(&path, 6, "m")
            .expect("load")
            .expect("intact");
        assert_eq!(mine.ids(), index.ids());
        assert!(delta_sizes(&files_of(&path)).is_empty());

        // A damaged delta is not loaded.
        index.insert(&items[851..852]);
        index.save(&path, 7).expect("save");
        let delta = files_of(&path)
            .into_keys()
            .find(|n| n.starts_with(DELTA_PREFIX))
            .expect("a delta");
        let mut bytes = fs::read(path.join(&delta)).expect("read");
        bytes[9] ^= 0xff;
        fs::write(path.join(&delta), bytes).expect("write");
        assert!(VectorIndex::load(&path, 7, "m").expect("load").is_none());
    }

    #[test]
    fn a_dump_of_another_format_is_stale_not_an_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        // What an HNSW graph's dump (before this format) left behind.
        fs::write(dir.path().join("chunks.hnsw.graph"), b"graph").expect("write");
        let sum = digest(b"graph");
        let manifest = serde_json::json!({
            "generation": 3, "model": "m", "dim": 4, "points": 1, "ids": [1],
            "files": [["chunks.hnsw.graph", sum]],
        });
        fs::write(dir.path().join(MANIFEST), manifest.to_string()).expect("write");
        assert!(
            VectorIndex::load(dir.path(), 3, "m")
                .expect("load")
                .is_none()
        );
        // Rows whose length does not match the manifest's points.
        fs::write(dir.path().join(ROWS_FILE), [0u8; 10]).expect("write");
        let sum = digest(&[0u8; 10]);
        let manifest = serde_json::json!({
            "generation": 3, "model": "m", "dim": 4, "points": 1,
            "files": [[ROWS_FILE, sum]],
        });
        fs::write(dir.path().join(MANIFEST), manifest.to_string()).expect("write");
        assert!(
            VectorIndex::load(dir.path(), 3, "m")
                .expect("load")
                .is_none()
        );
    }
}

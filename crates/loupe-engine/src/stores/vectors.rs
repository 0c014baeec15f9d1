//! The vector index over chunk embeddings, keyed by chunk id, persisted next
//! to the catalog: one flat array of int8 rows (each unit vector scaled by
//! its largest coordinate, the scale kept beside it).
//!
//! A search has two passes. The first scores every point from its int4
//! code (each int8 coordinate rounded to sevenths of the row's largest:
//! 132 bytes a point at the code model's 256 dimensions, against its
//! row's 268), on all cores, and keeps the [`rescored`] best live points;
//! the second scores those exactly from their int8 rows. The rows of a
//! saved index stay in its file and are read back only for the second
//! pass; their codes stay in a codes file beside it and are read a block
//! at a time by the first. An open index holds its points' ids and scales
//! (12 bytes a point) and what was added since it was saved: on the
//! `cargo vendor` corpus 5 MB between questions, where holding the codes
//! took 57 MB, for a read of the codes file's 55 MB (from the page cache
//! once the file has been read) each question. Which points the
//! first pass keeps depends only on the points and the question (ties go
//! by chunk id), so the answer is the same however and in whatever order
//! the index was built; an index of at most that many points is
//! searched exactly. On the vendor corpus the two passes return 99.998 %
//! of the exact top 50 for the dev sets' 840 questions, all of the top 10
//! (`examples/vector_recall.rs`; BENCHMARKS.md, "Embedding and vectors").
//!
//! The scan is the index every project answers from first. A project
//! large enough (`graph::GRAPH_MIN_POINTS`) also gets an HNSW graph over
//! its rows file, built in the background ([`Graph`], `graph.rs`); once it
//! is attached, a search takes the rows file's candidates from the graph
//! and scans only the points added since, then scores both exactly as
//! before. A graph on the first index's path cost the `cargo vendor`
//! corpus (544 k chunks) 823 s of a 1,266 s first index and ~16 s of
//! every one-shot query that opened it (BENCHMARKS.md, "Changes to
//! embedding and vectors", `4a9fe02`): it is never on that path.
//!
//! Derived data: a damaged or stale index is rebuilt, never trusted. The
//! embedders whose vectors are costly (MiniLM, an HTTP endpoint) keep them
//! in the catalog's embedding cache, so their index is rebuilt without
//! re-embedding; Loupe's code model caches nothing and embeds again (about
//! 60,000 chunks/s, cheaper than reading a cache). A dump is written
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
use std::sync::Arc;

/// Rebuild once this share of points are tombstones.
pub const MAX_DEAD_FRACTION: f64 = 0.3;
/// The array's file: the records of [`VectorIndex`], in chunk-id order.
const ROWS_FILE: &str = "chunks.i8";
/// The rows file's int4 codes ([`Codes`]), in the same order: what a
/// search's first pass reads.
const CODES_FILE: &str = "chunks.i4";
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
/// Points a search for the best `k` scores exactly, from their int8 rows,
/// after the first pass over the codes has kept them: five times `k`, at
/// least 250 (the engine asks for 50).
pub fn rescored(k: usize) -> usize {
    k.saturating_mul(5).max(250)
}

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

/// The files a manifest names, with their digests: the rows file, its
/// codes file and, after a save of a few points, a delta file.
struct DumpFiles {
    rows: String,
    codes: String,
    delta: Option<(String, String)>,
}

impl Manifest {
    /// Its files, when they are a rows file, its codes file and at most
    /// one delta file (a plain name, nothing that leaves the directory).
    fn dump_files(&self) -> Option<DumpFiles> {
        match self.files.as_slice() {
            [(rows, rows_sum), (codes, codes_sum), delta @ ..]
                if rows == ROWS_FILE && codes == CODES_FILE =>
            {
                let delta = match delta {
                    [] => None,
                    [(name, sum)]
                        if name.starts_with(DELTA_PREFIX) && !name.contains(['/', '\\']) =>
                    {
                        Some((name.clone(), sum.clone()))
                    }
                    _ => return None,
                };
                Some(DumpFiles {
                    rows: rows_sum.clone(),
                    codes: codes_sum.clone(),
                    delta,
                })
            }
            _ => None,
        }
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
/// are int8s; exact: 256 × 127² fits i32 many times over).
#[inline(always)]
fn dot(a: &[i8], b: &[u8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(i8::from_le_bytes([y])))
        .sum()
}

/// Bytes of a point's int4 code: 32 for every 64 coordinates.
#[inline(always)]
fn code_len(dim: usize) -> usize {
    dim.div_ceil(64) * 32
}

/// Where coordinate `d` sits in an int4 code: its byte, and whether it is
/// that byte's high nibble. Coordinates go in groups of 64: byte `j` of a
/// group's 32 holds coordinates `j` (low nibble) and `j + 32` (high), so
/// one 32-byte load splits into two registers of 32 coordinates each.
#[inline(always)]
fn nibble_of(d: usize) -> (usize, bool) {
    (d / 64 * 32 + d % 32, d % 64 >= 32)
}

/// The stored nibble of each int8 coordinate (by its byte): `n + 8`,
/// `n = round(r · 7 / 127)`, halves away from zero.
static NIBBLE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let r = b as u8 as i8 as i32;
        let sign = if r < 0 {
            -1
        } else if r > 0 {
            1
        } else {
            0
        };
        table[b] = ((r * 7 + 63 * sign) / 127 + 8) as u8;
        b += 1;
    }
    table
};

/// The points' int4 codes in record order: per point, each int8
/// coordinate `r` rounded to `n = round(r · 7 / 127)` (−7..=7: the row's
/// largest coordinate, at ±127, maps to ±7) and stored as `n + 8`, and
/// the row's scale, so `scale · Σ q·n` ranks points as their rows would
/// (within a rounding step per coordinate); and the points' chunk ids.
/// 132 bytes a point at 256 dimensions, against the rows' 268.
///
/// The scales and ids are every point's; `bytes` holds the codes of the
/// points after the rows file's (every point's when there is none). The
/// rows file's codes stay in the codes file beside it and are read block
/// by block during a search, so they are not part of the process between
/// questions.
struct Codes {
    len: usize,
    bytes: Vec<u8>,
    scales: Vec<f32>,
    ids: Vec<ChunkId>,
}

impl Codes {
    fn with_capacity(dim: usize, points: usize) -> Self {
        Self {
            len: code_len(dim),
            bytes: Vec::with_capacity(points * code_len(dim)),
            scales: Vec::with_capacity(points),
            ids: Vec::with_capacity(points),
        }
    }

    /// The codes of `records`, in their order.
    fn of(records: &[u8], dim: usize) -> Self {
        let len = record_len(dim);
        let mut codes = Self::with_capacity(dim, records.len() / len);
        for record in records.chunks_exact(len) {
            let (id, scale, row) = fields(record);
            codes.push(id, scale, row);
        }
        codes
    }

    /// The ids and scales of `records`, in their order, without codes.
    fn keys_of(records: &[u8], dim: usize) -> Self {
        let len = record_len(dim);
        let mut codes = Self::with_capacity(dim, 0);
        for record in records.chunks_exact(len) {
            let (id, scale, _) = fields(record);
            codes.ids.push(id);
            codes.scales.push(scale);
        }
        codes
    }

    fn push(&mut self, id: ChunkId, scale: f32, row: &[u8]) {
        let start = self.bytes.len();
        // An unused nibble is 8: n = 0, whatever the query's coordinate.
        self.bytes.resize(start + self.len, 0x88);
        let code = &mut self.bytes[start..];
        let mut groups = row.chunks_exact(64);
        for (group, out) in groups.by_ref().zip(code.chunks_exact_mut(32)) {
            let (low, high) = group.split_at(32);
            for ((b, &lo), &hi) in out.iter_mut().zip(low).zip(high) {
                *b = NIBBLE[usize::from(lo)] | (NIBBLE[usize::from(hi)] << 4);
            }
        }
        let done = row.len() - groups.remainder().len();
        for (d, &r) in groups.remainder().iter().enumerate() {
            let (byte, high) = nibble_of(done + d);
            let b = &mut code[byte];
            let u = NIBBLE[usize::from(r)];
            *b = if high {
                (*b & 0x0f) | (u << 4)
            } else {
                (*b & 0xf0) | u
            };
        }
        self.scales.push(scale);
        self.ids.push(id);
    }

    fn extend(&mut self, other: Codes) {
        self.bytes.extend(other.bytes);
        self.scales.extend(other.scales);
        self.ids.extend(other.ids);
    }
}

/// An int8 query laid out as the codes are ([`nibble_of`]): per code
/// byte, the coordinates its low and high nibbles hold (0 past the
/// query's end), and what the `+ 8` of every stored nibble adds to a sum.
struct CodeQuery {
    low: Vec<i8>,
    high: Vec<i8>,
    offset: i32,
}

impl CodeQuery {
    fn new(q8: &[i8]) -> Self {
        let len = code_len(q8.len());
        let (mut low, mut high) = (vec![0; len], vec![0; len]);
        for (d, &q) in q8.iter().enumerate() {
            match nibble_of(d) {
                (byte, false) => low[byte] = q,
                (byte, true) => high[byte] = q,
            }
        }
        let offset = 8 * q8.iter().map(|&q| i32::from(q)).sum::<i32>();
        Self { low, high, offset }
    }
}

/// How a query meets a point's int4 code: `Σ q·(n + 8)`.
trait CodeDot: Sync {
    fn dot(&self, code: &[u8]) -> i32;
}

/// The plain loop, compiled for whatever SIMD the caller's dispatch
/// enabled.
impl CodeDot for CodeQuery {
    #[inline(always)]
    fn dot(&self, code: &[u8]) -> i32 {
        code.iter()
            .zip(self.low.iter().zip(&self.high))
            .map(|(&b, (&lo, &hi))| {
                i32::from(b & 0x0f) * i32::from(lo) + i32::from(b >> 4) * i32::from(hi)
            })
            .sum()
    }
}

/// [`CodeQuery`]'s dot product in AVX2's byte multiply-add, 64
/// coordinates a step: one load of 32 code bytes, its low and high
/// nibbles masked out, each multiplied (`vpmaddubsw`, unsigned by signed
/// bytes: the nibbles are 0..=15) by the query's coordinates they hold.
/// A pair of products is at most 2 · 15 · 128 = 3,840, within i16.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use pulp::bytemuck;
    use pulp::x86::V3;
    use std::arch::x86_64::__m256i;

    const LANES: usize = 32;

    pub(super) struct Avx2 {
        simd: V3,
        low: Vec<__m256i>,
        high: Vec<__m256i>,
    }

    impl Avx2 {
        /// The kernel for `query`, when this CPU has AVX2.
        pub(super) fn new(query: &super::CodeQuery) -> Option<Self> {
            let simd = V3::try_new()?;
            let registers = |bytes: &[i8]| -> Vec<__m256i> {
                bytes
                    .chunks_exact(LANES)
                    .map(|c| bytemuck::pod_read_unaligned(bytemuck::cast_slice::<i8, u8>(c)))
                    .collect()
            };
            Some(Self {
                simd,
                low: registers(&query.low),
                high: registers(&query.high),
            })
        }

        /// Run `op` with AVX2 enabled, so the kernel inlines into it.
        #[inline(always)]
        pub(super) fn vectorize<R>(&self, op: impl pulp::NullaryFnOnce<Output = R>) -> R {
            self.simd.vectorize(op)
        }
    }

    impl super::CodeDot for Avx2 {
        #[inline(always)]
        fn dot(&self, code: &[u8]) -> i32 {
            let (avx, avx2) = (self.simd.avx, self.simd.avx2);
            let ones = avx._mm256_set1_epi16(1);
            let nibble = avx._mm256_set1_epi8(0x0f);
            let mut acc = avx._mm256_setzero_si256();
            for ((bytes, low), high) in code.chunks_exact(LANES).zip(&self.low).zip(&self.high) {
                let r: __m256i = bytemuck::pod_read_unaligned(bytes);
                let lo = avx2._mm256_and_si256(r, nibble);
                let hi = avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(r), nibble);
                let pairs = avx2._mm256_add_epi16(
                    avx2._mm256_maddubs_epi16(lo, *low),
                    avx2._mm256_maddubs_epi16(hi, *high),
                );
                acc = avx2._mm256_add_epi32(acc, avx2._mm256_madd_epi16(pairs, ones));
            }
            bytemuck::cast::<__m256i, [i32; 8]>(acc).iter().sum()
        }
    }
}

/// A point the first pass keeps: its chunk id with its int4 score, as a
/// [`Hit`] (so ordered best first, ties by chunk id: which points are
/// kept does not depend on where they are), and where its record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    hit: Hit,
    at: usize,
}

/// The first pass over one block of codes, as a SIMD operation (a closure
/// would be compiled apart from the dispatch, without its features);
/// pulp makes every `NullaryFnOnce` a `WithSimd` too.
struct Coarse<'a, D> {
    kernel: &'a D,
    offset: i32,
    len: usize,
    bytes: &'a [u8],
    scales: &'a [f32],
    ids: &'a [ChunkId],
    /// Position of the block's first point.
    first: usize,
    keep: usize,
    heap: &'a mut BinaryHeap<Candidate>,
    live: &'a (dyn Fn(ChunkId) -> bool + Sync),
}

impl<D: CodeDot> pulp::NullaryFnOnce for Coarse<'_, D> {
    type Output = ();

    #[inline(always)]
    fn call(self) {
        let points = self
            .bytes
            .chunks_exact(self.len)
            .zip(self.scales)
            .zip(self.ids);
        for (j, ((code, &scale), &id)) in points.enumerate() {
            let c = Candidate {
                hit: Hit(id, (self.kernel.dot(code) - self.offset) as f32 * scale),
                at: self.first + j,
            };
            if self.heap.len() < self.keep {
                if (self.live)(id) {
                    self.heap.push(c);
                }
            } else if self.heap.peek().is_some_and(|worst| c < *worst) && (self.live)(id) {
                self.heap.pop();
                self.heap.push(c);
            }
        }
    }
}

/// An index over unit vectors, as int8 rows: per point its chunk id
/// (i64), its scale (f32, coordinate `i` is `row[i] * scale`) and `dim`
/// int8 coordinates, little-endian, one record after another as in its
/// file. The records of the rows file it was loaded from or saved as
/// stay in that file and are read back only for a search's candidates;
/// their int4 codes ([`Codes`]) stay in the codes file beside it, read
/// by each search's first pass. In memory it keeps every point's id and scale, and the
/// codes and records of the points added since.
pub struct VectorIndex {
    model: String,
    dim: usize,
    /// Every point's id and scale, in record order (the rows file's
    /// points, then the tail's), and the tail's codes.
    codes: Codes,
    /// The points' chunk ids sorted, when the codes' record order is not
    /// (only points inserted out of order make it so: a new chunk's id is
    /// larger than every older one's). `None` the rest of the time, so the
    /// ids are not held twice.
    sorted: Option<Vec<ChunkId>>,
    /// The records after the rows file's: a delta's, then the points
    /// inserted since, in insertion order. Every record when there is no
    /// rows file.
    tail: Vec<u8>,
    /// The rows file this index was loaded from or last saved as, whose
    /// records come first; `None` when it was built in memory.
    base: Option<Base>,
    /// A graph over the rows file's records ([`Graph`]), once one is
    /// built or loaded for it: a search takes its candidates from it
    /// instead of scanning every code. Dropped when the rows file is
    /// written again.
    graph: Option<Arc<dyn Proposer>>,
}

/// What proposes a search's candidates among a rows file's records in
/// place of the scan: the graph (`graph.rs`).
pub trait Proposer: Send + Sync {
    /// The digest of the rows file whose records it proposes.
    fn rows(&self) -> &str;
    /// Records in that file.
    fn points(&self) -> usize;
    /// Up to `n` record numbers whose points are nearest `unit` (a unit
    /// vector), among those `keep` accepts, nearest first.
    fn propose(&self, unit: &[f32], n: usize, keep: &dyn Fn(usize) -> bool) -> Vec<usize>;
}

/// A rows file a graph can be built over: the file, open, with its
/// digest, its points and their dimension.
#[derive(Clone, Debug)]
pub struct Rows {
    pub(crate) file: Arc<fs::File>,
    pub(crate) digest: String,
    pub(crate) points: usize,
    pub(crate) dim: usize,
}

/// The rows file whose records an index reads from disk, and its codes.
#[derive(Clone, Debug)]
struct Base {
    /// Points in it.
    points: usize,
    /// Its blake3 digest, as its manifest names it.
    digest: String,
    /// The codes file's digest.
    codes_digest: String,
    /// It, open: a newer dump renamed over it leaves this one readable.
    file: Arc<fs::File>,
    /// The codes file, open.
    codes: Arc<fs::File>,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("model", &self.model)
            .field("dim", &self.dim)
            .field("points", &self.points())
            .field("on_disk", &self.base.as_ref().map_or(0, |b| b.points))
            .finish()
    }
}

/// Bytes per point: id, scale, coordinates.
#[inline(always)]
pub(crate) fn record_len(dim: usize) -> usize {
    8 + 4 + dim
}

/// The chunk id, scale and coordinates of one record.
#[inline(always)]
pub(crate) fn fields(record: &[u8]) -> (ChunkId, f32, &[u8]) {
    let (id, rest) = record.split_at(8);
    let (scale, row) = rest.split_at(4);
    let id = ChunkId::from_le_bytes(id.try_into().unwrap_or_default());
    let scale = f32::from_le_bytes(scale.try_into().unwrap_or_default());
    (id, scale, row)
}

/// Fill `buf` from `file` at `offset`.
pub(crate) fn read_at(file: &fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < buf.len() {
            match std::os::windows::fs::FileExt::seek_read(
                file,
                &mut buf[done..],
                offset + done as u64,
            )? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                n => done += n,
            }
        }
        Ok(())
    }
}

impl VectorIndex {
    /// An empty index for vectors of `dim` coordinates from `model`, with
    /// room for `capacity` points.
    pub fn new(model: &str, dim: usize, capacity: usize) -> Self {
        Self {
            model: model.to_owned(),
            dim,
            codes: Codes::with_capacity(dim, capacity),
            tail: Vec::with_capacity(capacity.saturating_mul(record_len(dim))),
            sorted: None,
            base: None,
            graph: None,
        }
    }

    /// The embedding model these vectors come from.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Points in the index, tombstones included.
    pub fn points(&self) -> usize {
        self.codes.ids.len()
    }

    /// Chunk ids in the index, tombstones included, sorted.
    pub fn ids(&self) -> &[ChunkId] {
        self.sorted.as_deref().unwrap_or(&self.codes.ids)
    }

    /// Whether chunk `id` has a point in the index.
    pub fn contains(&self, id: ChunkId) -> bool {
        self.ids().binary_search(&id).is_ok()
    }

    /// Records held in memory rather than read from the rows file.
    pub fn points_in_memory(&self) -> usize {
        self.tail.len() / record_len(self.dim)
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
        let before = self.points();
        for (id, v) in fresh {
            unit.clear();
            unit.extend_from_slice(v);
            if !normalize(&mut unit) {
                continue;
            }
            row.clear();
            let scale = quantize(&unit, &mut row);
            self.tail.extend_from_slice(&id.to_le_bytes());
            self.tail.extend_from_slice(&scale.to_le_bytes());
            let start = self.tail.len();
            self.tail.extend(row.iter().map(|x| x.to_le_bytes()[0]));
            self.codes.push(*id, scale, &self.tail[start..]);
        }
        if self.points() > before {
            self.sorted = sorted_copy(&self.codes.ids);
        }
    }

    /// Every record, the rows file's read back, in record order.
    fn all_records(&self) -> Result<Vec<u8>> {
        let len = record_len(self.dim);
        let on_disk = self.base.as_ref().map_or(0, |b| b.points);
        let mut records = vec![0u8; on_disk * len];
        if let Some(base) = &self.base {
            read_at(&base.file, &mut records, 0)
                .map_err(|e| Error::Vectors(format!("read the vector rows: {e}")))?;
        }
        records.extend_from_slice(&self.tail);
        Ok(records)
    }

    /// Hold `records` (every point's, in memory) in place of what this
    /// index held; no rows file backs it.
    fn hold_in_memory(&mut self, records: Vec<u8>) {
        self.codes = Codes::of(&records, self.dim);
        self.sorted = sorted_copy(&self.codes.ids);
        self.tail = records;
        self.base = None;
        self.graph = None;
    }

    /// Drop the points whose chunk `keep` refuses (tombstones), keeping the
    /// others' rows as they are: nothing is embedded or quantized again.
    /// The index is held in memory until the next save, which writes it
    /// whole. Fails only when the rows file cannot be read.
    pub fn retain(&mut self, keep: impl Fn(ChunkId) -> bool) -> Result<()> {
        let len = record_len(self.dim);
        let records = self.all_records()?;
        let mut kept = Vec::with_capacity(records.len());
        for record in records.chunks_exact(len) {
            if keep(fields(record).0) {
                kept.extend_from_slice(record);
            }
        }
        drop(records);
        self.hold_in_memory(kept);
        Ok(())
    }

    /// The `k` nearest live chunks to `query`, as (id, cosine similarity of
    /// the int8 rows), best first, ties in chunk-id order.
    ///
    /// Two passes: the int4 codes of every point, on all cores, keep the
    /// [`rescored`] live points that score best (ties in chunk-id order),
    /// and those are scored exactly from their int8 rows (read from the
    /// rows file). Which points are kept depends only on the points and
    /// the query, so the answer is the same however the index was built;
    /// an index of at most that many points is searched exactly. `live`
    /// is asked only of points that would be kept. Fails when the rows
    /// file cannot be read.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        live: &(dyn Fn(ChunkId) -> bool + Sync),
    ) -> Result<Vec<(ChunkId, f32)>> {
        self.search_rescoring(query, k, live, rescored(k))
    }

    /// [`VectorIndex::search`] with `rescored` points scored exactly: with
    /// `usize::MAX`, every point (what `tools/` and the tests compare
    /// against).
    pub fn search_rescoring(
        &self,
        query: &[f32],
        k: usize,
        live: &(dyn Fn(ChunkId) -> bool + Sync),
        rescored: usize,
    ) -> Result<Vec<(ChunkId, f32)>> {
        if self.points() == 0 || query.len() != self.dim || k == 0 {
            return Ok(Vec::new());
        }
        let mut q = query.to_vec();
        if !normalize(&mut q) {
            return Ok(Vec::new());
        }
        let mut q8 = Vec::with_capacity(self.dim);
        let q_scale = quantize(&q, &mut q8);
        let keep = rescored.max(k).min(self.points());
        let candidates = match self.usable_graph() {
            Some(graph) if rescored != usize::MAX => self.proposed(graph, &q, &q8, keep, live)?,
            _ => self.coarse(&q8, keep, live)?,
        };
        self.rescore(candidates, &q8, q_scale, k)
    }

    /// The rows file this index reads its first records from, for a
    /// graph to be built over; `None` while the index is held in memory.
    pub fn rows(&self) -> Option<Rows> {
        self.base.as_ref().map(|base| Rows {
            file: Arc::clone(&base.file),
            digest: base.digest.clone(),
            points: base.points,
            dim: self.dim,
        })
    }

    /// Take `graph` as the graph of this index's rows file; false (and
    /// nothing changes) when it is another file's.
    pub fn attach_graph(&mut self, graph: Arc<dyn Proposer>) -> bool {
        let fits = self
            .base
            .as_ref()
            .is_some_and(|b| b.digest == graph.rows() && b.points == graph.points());
        if fits {
            self.graph = Some(graph);
        }
        fits
    }

    /// Whether a search takes its candidates from a graph.
    pub fn has_graph(&self) -> bool {
        self.usable_graph().is_some()
    }

    fn usable_graph(&self) -> Option<&dyn Proposer> {
        let graph = self.graph.as_deref()?;
        let base = self.base.as_ref()?;
        (base.digest == graph.rows() && base.points == graph.points()).then_some(graph)
    }

    /// The first pass with a graph: the `keep` live points of the rows
    /// file the graph finds nearest `q`, and the `keep` best live points
    /// added since (scanned from their codes), sorted by where their
    /// records are. Each is scored exactly next.
    fn proposed(
        &self,
        graph: &dyn Proposer,
        q: &[f32],
        q8: &[i8],
        keep: usize,
        live: &(dyn Fn(ChunkId) -> bool + Sync),
    ) -> Result<Vec<Candidate>> {
        let ids = &self.codes.ids;
        let is_live = |at: usize| ids.get(at).is_some_and(|id| live(*id));
        let found = graph.propose(q, keep, &is_live);
        let mut kept: Vec<Candidate> = found
            .into_iter()
            .filter_map(|at| {
                ids.get(at).map(|id| Candidate {
                    hit: Hit(*id, 0.0),
                    at,
                })
            })
            .collect();
        if graph.points() < self.points() {
            kept.extend(self.scan(q8, keep, live, graph.points())?);
        }
        kept.sort_unstable_by_key(|c| c.at);
        Ok(kept)
    }

    /// The first pass: the `keep` live points whose int4 codes score best
    /// against the query, sorted by where their records are.
    ///
    /// The scan asks nothing of `live`: it keeps the best `2 × keep`
    /// points, and the live ones among them, best first, are taken. Only
    /// when more than half of those are tombstones does a second scan ask
    /// `live` of every point that would be kept. (Asked during the scan,
    /// the liveness of the few thousand points that pass through the heaps
    /// is a hash lookup and a cache miss each: 2–5 ms of a vendor
    /// question, more than the scan itself.)
    fn coarse(
        &self,
        q8: &[i8],
        keep: usize,
        live: &(dyn Fn(ChunkId) -> bool + Sync),
    ) -> Result<Vec<Candidate>> {
        let wide = self.scan(q8, keep.saturating_mul(2), &|_| true, 0)?;
        let mut kept: Vec<Candidate> = wide
            .iter()
            .filter(|c| live(c.hit.0))
            .take(keep)
            .copied()
            .collect();
        if kept.len() < keep && wide.len() < self.points() {
            kept = self.scan(q8, keep, live, 0)?;
        }
        kept.sort_unstable_by_key(|c| c.at);
        Ok(kept)
    }

    /// The `keep` live points from record `from` on whose int4 codes
    /// score best against the query, best first. The scan is compiled for the widest SIMD this
    /// CPU has, chosen at run time (the build targets baseline x86-64,
    /// where the same loop is about half as fast; BENCHMARKS.md): AVX2's
    /// byte multiply-add where there is AVX2, else the plain loop under
    /// pulp's dispatch. The rows file's codes are read from the codes
    /// file a block at a time into a buffer each thread reuses, so the
    /// scan holds a few hundred kilobytes of them at once. Fails when the
    /// codes file cannot be read.
    // Long: the SIMD dispatch and the per-thread block loop share the heap and buffers; split, the hot loop would cross a call.
    fn scan(
        &self,
        q8: &[i8],
        keep: usize,
        live: &(dyn Fn(ChunkId) -> bool + Sync),
        from: usize,
    ) -> Result<Vec<Candidate>> {
        let query = CodeQuery::new(q8);
        let arch = pulp::Arch::new();
        #[cfg(target_arch = "x86_64")]
        let avx2 = avx2::Avx2::new(&query);
        let codes = &self.codes;
        let len = codes.len;
        let on_disk = self.base.as_ref().map_or(0, |b| b.points);
        let points = self.points();
        // (first point, points) of each block; no block spans the rows
        // file's points and the tail's.
        let blocks: Vec<(usize, usize)> = (from.min(on_disk)..on_disk)
            .step_by(SCAN_BLOCK)
            .map(|first| (first, SCAN_BLOCK.min(on_disk - first)))
            .chain(
                (from.max(on_disk)..points)
                    .step_by(SCAN_BLOCK)
                    .map(|first| (first, SCAN_BLOCK.min(points - first))),
            )
            .collect();
        // One heap carried across the blocks a thread scans, not one per
        // block: a point is asked whether it is live only once it beats
        // the worst kept so far, and a carried worst rises fast.
        blocks
            .into_par_iter()
            .try_fold(
                || (BinaryHeap::with_capacity(keep + 1), Vec::new()),
                |(mut heap, mut buf), (first, n)| -> Result<_> {
                    {
                        let bytes: &[u8] = match &self.base {
                            Some(base) if first < on_disk => {
                                buf.resize(n * len, 0);
                                read_at(&base.codes, &mut buf, (first * len) as u64).map_err(
                                    |e| Error::Vectors(format!("read the vector codes: {e}")),
                                )?;
                                &buf
                            }
                            _ => {
                                let from = (first - on_disk) * len;
                                codes.bytes.get(from..from + n * len).ok_or_else(|| {
                                    Error::Vectors(format!("vector point {first} is missing"))
                                })?
                            }
                        };
                        macro_rules! scan {
                            ($kernel:expr) => {
                                Coarse {
                                    kernel: $kernel,
                                    offset: query.offset,
                                    len,
                                    bytes,
                                    scales: &codes.scales[first..first + n],
                                    ids: &codes.ids[first..first + n],
                                    first,
                                    keep,
                                    heap: &mut heap,
                                    live,
                                }
                            };
                        }
                        #[cfg(target_arch = "x86_64")]
                        if let Some(kernel) = &avx2 {
                            kernel.vectorize(scan!(kernel));
                            return Ok((heap, buf));
                        }
                        arch.dispatch(scan!(&query));
                    }
                    Ok((heap, buf))
                },
            )
            .map(|scanned| scanned.map(|(heap, _)| heap))
            .try_reduce(BinaryHeap::new, |mut a, b| {
                for c in b {
                    a.push(c);
                    if a.len() > keep {
                        a.pop();
                    }
                }
                Ok(a)
            })
            .map(BinaryHeap::into_sorted_vec)
    }

    /// The second pass: `candidates` scored from their int8 rows, the best
    /// `k`, best first.
    fn rescore(
        &self,
        candidates: Vec<Candidate>,
        q8: &[i8],
        q_scale: f32,
        k: usize,
    ) -> Result<Vec<(ChunkId, f32)>> {
        let len = record_len(self.dim);
        let on_disk = self.base.as_ref().map_or(0, |b| b.points);
        let mut record = vec![0u8; len];
        let mut hits = Vec::with_capacity(candidates.len());
        for c in candidates {
            let bytes = match &self.base {
                Some(base) if c.at < on_disk => {
                    read_at(&base.file, &mut record, (c.at * len) as u64)
                        .map_err(|e| Error::Vectors(format!("read the vector rows: {e}")))?;
                    &record[..]
                }
                _ => {
                    let from = (c.at - on_disk) * len;
                    self.tail.get(from..from + len).ok_or_else(|| {
                        Error::Vectors(format!("vector point {} is missing", c.at))
                    })?
                }
            };
            let (id, scale, row) = fields(bytes);
            if id != c.hit.0 {
                return Err(Error::Vectors(
                    "the vector rows file changed on disk; reopen the project to rebuild it".into(),
                ));
            }
            hits.push(Hit(id, dot(q8, row) as f32 * q_scale * scale));
        }
        hits.sort();
        hits.truncate(k);
        Ok(hits.into_iter().map(|Hit(id, s)| (id, s)).collect())
    }

    /// Save the index to `dir` as `generation`'s, atomically: a delta of
    /// the points added since the rows file in `dir` was written, when that
    /// file is this index's base and the delta is small; otherwise the
    /// whole dump ([`VectorIndex::save_full`]).
    pub fn save(&mut self, dir: &Path, generation: u64) -> Result<()> {
        match self.base.clone() {
            Some(base)
                if (self.points() - base.points) as f64 <= MAX_DELTA_SHARE * base.points as f64
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
        (manifest.model == self.model && manifest.dim == self.dim)
            .then(|| manifest.dump_files())
            .flatten()
            .map(|files| files.rows)
    }

    /// Write the points added since `base` to a new delta file in `dir`,
    /// then a manifest naming the rows and codes files and it, renamed
    /// over the old one; older delta files go after that. A crash at any point leaves
    /// the old manifest with the files it names.
    fn save_delta(&self, dir: &Path, generation: u64, base: &Base) -> Result<()> {
        let len = record_len(self.dim);
        let mut added: Vec<&[u8]> = self.tail.chunks_exact(len).collect();
        added.sort_by_key(|r| fields(r).0);
        let bytes = added.concat();
        let sum = digest(&bytes);
        let name = format!("{DELTA_PREFIX}{generation}.{}.i8", &sum[..16]);
        write_synced(&dir.join(&name), &bytes)?;
        let manifest = Manifest {
            generation,
            model: self.model.clone(),
            dim: self.dim,
            points: self.points(),
            files: vec![
                (ROWS_FILE.to_owned(), base.digest.clone()),
                (CODES_FILE.to_owned(), base.codes_digest.clone()),
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
    /// same file, and their codes to a codes file beside it; the index
    /// then reads its rows and codes from those files, its new base, and
    /// keeps only the points' ids and scales in memory.
    pub fn save_full(&mut self, dir: &Path, generation: u64) -> Result<()> {
        let tmp = sibling(dir, "tmp");
        remove_dir_if_exists(&tmp)?;
        fs::create_dir_all(&tmp).map_err(|e| io("create vector dump dir", &tmp, e))?;
        let len = record_len(self.dim);
        let path = tmp.join(ROWS_FILE);
        let mut records = self.all_records()?;
        let in_order = records
            .chunks_exact(len)
            .map(|r| fields(r).0)
            .eq(self.ids().iter().copied());
        if !in_order {
            let mut sorted: Vec<&[u8]> = records.chunks_exact(len).collect();
            sorted.sort_by_key(|r| fields(r).0);
            records = sorted.concat();
        }
        write_synced(&path, &records)?;
        // The codes in memory are every point's, in record order, only
        // when there is no rows file and nothing was inserted out of order.
        let rebuilt = (self.base.is_some() || !in_order).then(|| Codes::of(&records, self.dim));
        let code_bytes = rebuilt.as_ref().map_or(&self.codes.bytes, |c| &c.bytes);
        let codes_path = tmp.join(CODES_FILE);
        write_synced(&codes_path, code_bytes)?;
        let codes_sum = digest(code_bytes);
        // Opened before the swap, so they are this dump's files whatever
        // another process installs after.
        let file = fs::File::open(&path).map_err(|e| io("open vector rows", &path, e))?;
        let codes_file =
            fs::File::open(&codes_path).map_err(|e| io("open vector codes", &codes_path, e))?;
        let sum = digest(&records);
        let manifest = Manifest {
            generation,
            model: self.model.clone(),
            dim: self.dim,
            points: self.points(),
            files: vec![
                (ROWS_FILE.to_owned(), sum.clone()),
                (CODES_FILE.to_owned(), codes_sum.clone()),
            ],
        };
        let json = serde_json::to_vec(&manifest).map_err(|e| Error::Vectors(e.to_string()))?;
        write_synced(&tmp.join(MANIFEST), &json)?;
        install_dir(&tmp, dir)?;
        if let Some(codes) = rebuilt {
            self.codes = codes;
        }
        self.codes.bytes = Vec::new();
        self.tail = Vec::new();
        self.graph = None;
        self.base = Some(Base {
            points: self.points(),
            digest: sum,
            codes_digest: codes_sum,
            file: Arc::new(file),
            codes: Arc::new(codes_file),
        });
        Ok(())
    }

    /// Load the index saved in `dir` if it is intact, made for `generation`
    /// and `model`. `Ok(None)` means missing, stale or damaged: rebuild it.
    /// The rows and codes files are read once, in blocks (their digests
    /// checked, the points' ids and scales taken), and kept open for the
    /// searches to read from.
    pub fn load(dir: &Path, generation: u64, model: &str) -> Result<Option<Self>> {
        let Ok(bytes) = fs::read(dir.join(MANIFEST)) else {
            return Ok(None);
        };
        let Ok(manifest) = serde_json::from_slice::<Manifest>(&bytes) else {
            return Ok(None);
        };
        if manifest.generation != generation || manifest.model != model || manifest.dim == 0 {
            return Ok(None);
        }
        let Some(DumpFiles {
            rows: base_sum,
            codes: codes_sum,
            delta,
        }) = manifest.dump_files()
        else {
            return Ok(None);
        };
        let Some((file, mut codes)) = read_rows(&dir.join(ROWS_FILE), &base_sum, manifest.dim)
        else {
            return Ok(None);
        };
        let on_disk = codes.ids.len();
        let Some(codes_file) = read_codes(
            &dir.join(CODES_FILE),
            &codes_sum,
            on_disk * code_len(manifest.dim),
        ) else {
            return Ok(None);
        };
        let mut tail = Vec::new();
        if let Some((name, sum)) = delta {
            let Some(added) = read_verified(&dir.join(name), &sum) else {
                return Ok(None);
            };
            let Some(added_codes) = checked_codes(&added, manifest.dim) else {
                return Ok(None);
            };
            codes.extend(added_codes);
            tail = added;
        }
        if codes.ids.len() != manifest.points {
            return Ok(None);
        }
        let sorted = sorted_copy(&codes.ids);
        if sorted
            .as_ref()
            .is_some_and(|ids| ids.windows(2).any(|w| w[0] == w[1]))
        {
            return Ok(None);
        }
        Ok(Some(VectorIndex {
            model: manifest.model,
            dim: manifest.dim,
            codes,
            sorted,
            tail,
            base: Some(Base {
                points: on_disk,
                digest: base_sum,
                codes_digest: codes_sum,
                file: Arc::new(file),
                codes: Arc::new(codes_file),
            }),
            graph: None,
        }))
    }
}

/// `ids` sorted, when they are not in strictly rising order already.
fn sorted_copy(ids: &[ChunkId]) -> Option<Vec<ChunkId>> {
    if ids.windows(2).all(|w| w[0] < w[1]) {
        return None;
    }
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    Some(sorted)
}

/// [`Codes::of`] records read from a file: `None` unless they are whole
/// records in rising chunk-id order with finite scales.
fn checked_codes(records: &[u8], dim: usize) -> Option<Codes> {
    records
        .len()
        .is_multiple_of(record_len(dim))
        .then(|| Codes::of(records, dim))
        .and_then(checked)
}

/// `codes` when their ids rise and their scales are finite.
fn checked(codes: Codes) -> Option<Codes> {
    let ordered = codes.ids.windows(2).all(|w| w[0] < w[1]);
    (ordered && codes.scales.iter().all(|s| s.is_finite())).then_some(codes)
}

/// Records read at a time by [`read_rows`]: about 4 MB.
const LOAD_BLOCK: usize = 16 * 1024;

/// The rows file at `path`, open, with its records' ids and scales
/// ([`Codes::keys_of`]), when its digest is `sum` and it holds whole,
/// ordered records ([`checked`]). Read in blocks, so its rows are never
/// all in memory.
fn read_rows(path: &Path, sum: &str, dim: usize) -> Option<(fs::File, Codes)> {
    let len = record_len(dim);
    let mut codes = Codes::with_capacity(dim, 0);
    let file = read_checked(
        path,
        sum,
        |size| size.is_multiple_of(len),
        LOAD_BLOCK * len,
        |block| {
            let read = checked(Codes::keys_of(block, dim))?;
            if let (Some(last), Some(first)) = (codes.ids.last(), read.ids.first())
                && last >= first
            {
                return None;
            }
            codes.extend(read);
            Some(())
        },
    )?;
    Some((file, codes))
}

/// The codes file at `path`, open, when it holds `size` bytes whose
/// digest is `sum`.
fn read_codes(path: &Path, sum: &str, size: usize) -> Option<fs::File> {
    read_checked(path, sum, |s| s == size, 4 << 20, |_| Some(()))
}

/// The file at `path`, open, when `size_ok` accepts its size, `each`
/// accepts every block of `block` bytes read from it in turn (the last
/// may be shorter), and its digest is `sum`.
pub(crate) fn read_checked(
    path: &Path,
    sum: &str,
    size_ok: impl FnOnce(usize) -> bool,
    block: usize,
    each: impl FnMut(&[u8]) -> Option<()>,
) -> Option<fs::File> {
    let mut file = fs::File::open(path).ok()?;
    let size = usize::try_from(file.metadata().ok()?.len()).ok()?;
    if !size_ok(size) {
        return None;
    }
    (digest_blocks(&mut file, size, block, each)?.as_str() == sum).then_some(file)
}

/// The blake3 digest of the file at `path`, read 4 MB at a time.
pub(crate) fn file_digest(path: &Path) -> Option<String> {
    let mut file = fs::File::open(path).ok()?;
    let size = usize::try_from(file.metadata().ok()?.len()).ok()?;
    digest_blocks(&mut file, size, 4 << 20, |_| Some(()))
}

/// The digest of the `size` bytes read from `file` in blocks of `block`
/// bytes, each handed to `each` (which may refuse it) first.
fn digest_blocks(
    file: &mut fs::File,
    size: usize,
    block: usize,
    mut each: impl FnMut(&[u8]) -> Option<()>,
) -> Option<String> {
    use std::io::Read;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; block.min(size).max(1)];
    let mut left = size;
    while left > 0 {
        let take = left.min(buf.len());
        file.read_exact(&mut buf[..take]).ok()?;
        hasher.update_rayon(&buf[..take]);
        each(&buf[..take])?;
        left -= take;
    }
    Some(hasher.finalize().to_hex().to_string())
}

/// The bytes of `path` when their digest is `sum`.
fn read_verified(path: &Path, sum: &str) -> Option<Vec<u8>> {
    let bytes = fs::read(path).ok()?;
    (digest(&bytes) == sum).then_some(bytes)
}

pub(crate) fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".{suffix}"));
    dir.with_file_name(name)
}

pub(crate) fn io(what: &'static str, path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// Swap the finished dump `tmp` in as `dir`: the old one is moved to a
/// sibling, then removed. A crash leaves the old dump, the new one, or no
/// `dir` at all (a missing index, rebuilt), never half of one.
pub(crate) fn install_dir(tmp: &Path, dir: &Path) -> Result<()> {
    let old = sibling(dir, "old");
    remove_dir_if_exists(&old)?;
    if dir.exists() {
        fs::rename(dir, &old).map_err(|e| io("retire the old dump", dir, e))?;
    }
    fs::rename(tmp, dir).map_err(|e| io("install the new dump", dir, e))?;
    remove_dir_if_exists(&old)
}

pub(crate) fn remove_dir_if_exists(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io("remove directory", dir, e)),
    }
}

/// The blake3 digest of `bytes`, hashed on all cores (a save hashes the
/// whole rows file: 116 MB on the vendor corpus).
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
        let records = index.all_records().expect("records");
        let mut hits: Vec<Hit> = records
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
    fn search_is_independent_of_insert_order_and_finds_the_exact_answer() {
        // 100 dimensions fill a code's last group only in part.
        for dim in [16, 100, 256] {
            independent_of_insert_order_and_near_exact(dim);
        }
    }

    fn independent_of_insert_order_and_near_exact(dim: usize) {
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
        // Inserted in rising order, the codes' ids are the sorted list;
        // out of order, a sorted copy is kept beside them.
        assert!(forward.sorted.is_none() && backward.sorted.is_some());
        assert_eq!(forward.ids(), backward.ids());
        assert!(items.iter().all(|(id, _)| backward.contains(*id)));
        assert!(!backward.contains(-1) && !backward.contains(items.len() as ChunkId + 1));
        // Saved part way: its first points' codes are read from the codes
        // file (a short last block), the rest's are in memory.
        let dir = tempfile::tempdir().expect("temp dir");
        let (first, rest) = items.split_at(2 * SCAN_BLOCK + 50);
        let mut saved = VectorIndex::new("m", dim, first.len());
        saved.insert(first);
        saved.save(dir.path(), 1).expect("save");
        saved.insert(rest);
        assert_eq!(saved.points_in_memory(), rest.len());
        let live = |id: ChunkId| id % 7 != 0;
        let (mut wanted, mut found) = (0, 0);
        for (id, q) in items.iter().step_by(1001) {
            // Every live point scored, best first.
            let all = brute_force(&forward, q, items.len(), live);
            let sims: std::collections::HashMap<ChunkId, f32> = all.iter().copied().collect();
            for k in [1, 25, 300] {
                let a = forward.search(q, k, &live).expect("search");
                assert_eq!(a, backward.search(q, k, &live).expect("search"));
                assert_eq!(a, saved.search(q, k, &live).expect("search"));
                // Every point rescored: the exact answer.
                let exact = &all[..k];
                assert_eq!(
                    forward
                        .search_rescoring(q, k, &live, usize::MAX)
                        .expect("search"),
                    exact
                );
                assert_eq!(a.len(), k);
                assert!(
                    a.windows(2)
                        .all(|w| Hit(w[0].0, w[0].1) < Hit(w[1].0, w[1].1))
                );
                // What is found is live and scored exactly, and a point
                // finds itself first (one of the repeated vectors, the
                // first of them).
                for (hit, sim) in &a {
                    assert_eq!(sims.get(hit), Some(sim), "{hit}");
                }
                if live(*id) && id % 10 != 0 {
                    assert_eq!(a[0].0, *id);
                }
                let exact: std::collections::HashSet<ChunkId> = exact.iter().map(|h| h.0).collect();
                wanted += k;
                found += a.iter().filter(|h| exact.contains(&h.0)).count();
            }
        }
        // Random points have no near neighbours but themselves, and their
        // similarities crowd near 0 where a rounding step counts most;
        // still the codes keep all but a few of the exact answer.
        assert!(
            found * 100 >= wanted * 95,
            "{dim} dims: {found} of {wanted}"
        );
        // Ties (every tenth vector is the same) come in chunk-id order.
        let tied = forward.search(&vec![0.5; dim], 20, &live).expect("search");
        let ids: Vec<ChunkId> = tied.iter().map(|h| h.0).collect();
        let want: Vec<ChunkId> = (1..=items.len() as ChunkId)
            .filter(|id| id % 10 == 0 && live(*id))
            .take(20)
            .collect();
        assert_eq!(ids, want);
    }

    #[test]
    fn a_search_among_mostly_tombstones_still_finds_k_live_points() {
        let dim = 64;
        let items = vectors(2 * SCAN_BLOCK, dim);
        let mut index = VectorIndex::new("m", dim, items.len());
        index.insert(&items);
        // Four points in five dead: the codes' best 2 × 250 hold about
        // 100 live ones, so the first pass scans again, asking each.
        let live = |id: ChunkId| id % 5 == 0;
        for (_, q) in items.iter().step_by(797) {
            let all = brute_force(&index, q, items.len(), live);
            let sims: std::collections::HashMap<ChunkId, f32> = all.iter().copied().collect();
            let found = index.search(q, 50, &live).expect("search");
            assert_eq!(found.len(), 50);
            for (hit, sim) in &found {
                assert_eq!(sims.get(hit), Some(sim), "{hit}");
            }
            let exact: std::collections::HashSet<ChunkId> = all[..50].iter().map(|h| h.0).collect();
            let kept = found.iter().filter(|h| exact.contains(&h.0)).count();
            assert!(kept >= 45, "{kept} of 50");
        }
    }

    #[test]
    fn the_stored_nibbles_round_each_coordinate_to_sevenths() {
        for r in -128i32..=127 {
            let byte = (r as i8).to_le_bytes()[0];
            let n = (f64::from(r) * 7.0 / 127.0).round().clamp(-7.0, 7.0) as i32;
            assert_eq!(i32::from(NIBBLE[usize::from(byte)]), n + 8, "{r}");
        }
    }

    #[test]
    fn the_code_kernels_agree_with_the_coordinates() {
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
        for dim in [3, 64, 100, 256] {
            let mut queries = vec![vec![127; dim], vec![-127; dim], vec![0; dim]];
            queries.extend((0..20).map(|_| bytes(dim)));
            let mut rows = vec![vec![127; dim], vec![-127; dim], vec![0; dim]];
            rows.extend((0..50).map(|_| bytes(dim)));
            for q in &queries {
                let query = CodeQuery::new(q);
                for row in &rows {
                    let row: Vec<u8> = row.iter().map(|b| b.to_le_bytes()[0]).collect();
                    let mut codes = Codes::with_capacity(dim, 1);
                    codes.push(1, 1.0, &row);
                    // Σ q·n over the coordinates, each n from its nibble.
                    let want: i32 = q
                        .iter()
                        .zip(&row)
                        .map(|(&q, &r)| i32::from(q) * (i32::from(NIBBLE[usize::from(r)]) - 8))
                        .sum();
                    assert_eq!(query.dot(&codes.bytes) - query.offset, want);
                    #[cfg(target_arch = "x86_64")]
                    if let Some(kernel) = avx2::Avx2::new(&query) {
                        let got = kernel.vectorize(|| kernel.dot(&codes.bytes));
                        assert_eq!(got - query.offset, want);
                    }
                }
            }
        }
    }

    #[test]
    fn a_saved_index_reads_its_rows_from_the_file() {
        let items = vectors(3000, 32);
        let live = |_: ChunkId| true;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("vectors");
        let mut index = VectorIndex::new("m", 32, items.len());
        index.insert(&items);
        assert_eq!(index.points_in_memory(), 3000);
        let before: Vec<_> = items
            .iter()
            .step_by(101)
            .map(|(_, q)| index.search(q, 10, &live).expect("search"))
            .collect();
        index.save(&path, 1).expect("save");
        assert_eq!(index.points_in_memory(), 0);
        let loaded = VectorIndex::load(&path, 1, "m")
            .expect("load")
            .expect("intact");
        assert_eq!(loaded.points_in_memory(), 0);
        // Neither holds the codes: a search reads them from the codes file.
        assert!(index.codes.bytes.is_empty() && loaded.codes.bytes.is_empty());
        for (want, (_, q)) in before.iter().zip(items.iter().step_by(101)) {
            assert_eq!(&index.search(q, 10, &live).expect("search"), want);
            assert_eq!(&loaded.search(q, 10, &live).expect("search"), want);
        }
        // The codes file cut short under an open index: an error, not a
        // panic nor a short answer.
        let codes = path.join(CODES_FILE);
        let whole = fs::read(&codes).expect("read codes");
        fs::OpenOptions::new()
            .write(true)
            .open(&codes)
            .and_then(|f| f.set_len(whole.len() as u64 / 2))
            .expect("truncate codes");
        let err = loaded
            .search(&items[5].1, 10, &live)
            .expect_err("short codes");
        assert!(err.to_string().contains("vector codes"), "{err}");
        fs::write(&codes, &whole).expect("restore codes");
        // The rows file overwritten in place under an open index (no save
        // of ours does that: each writes a new file): its answers fail,
        // they are not made from the wrong rows.
        let file = path.join(ROWS_FILE);
        let mut bytes = fs::read(&file).expect("read");
        for record in bytes.chunks_exact_mut(record_len(32)) {
            record[..8].copy_from_slice(&ChunkId::MAX.to_le_bytes());
        }
        fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
            .expect("overwrite");
        let err = loaded
            .search(&items[5].1, 10, &live)
            .expect_err("changed rows");
        assert!(err.to_string().contains("changed on disk"), "{err}");
        // A truncated file, too.
        fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .and_then(|f| f.set_len(100))
            .expect("truncate");
        assert!(loaded.search(&items[5].1, 10, &live).is_err());
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

        full.retain(live).expect("retain");
        assert_eq!(full.ids(), fresh.ids());
        assert!(full.ids().iter().all(|id| live(*id)));
        let all = |_: ChunkId| true;
        for (_, q) in items.iter().step_by(211) {
            assert_eq!(
                full.search(q, 30, &all).expect("search"),
                fresh.search(q, 30, &all).expect("search")
            );
        }
        // The next save is whole, and loads back as the same index.
        full.save(dir.path(), 2).expect("save");
        assert_eq!(fs::read_dir(dir.path()).expect("dir").count(), 3);
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
            let found = index.search(q, 10, &all).expect("search");
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
        let found = index.search(&[0.0, -0.6, 0.8], 5, &all).expect("search");
        assert_eq!(found.iter().map(|h| h.0).collect::<Vec<_>>(), vec![5, 1]);
        assert!(index.search(&[0.0; 3], 5, &all).expect("search").is_empty());
        assert!(
            index
                .search(&[1.0, 0.0], 5, &all)
                .expect("search")
                .is_empty()
        );
        assert!(
            index
                .search(&[1.0, 0.0, 0.0], 0, &all)
                .expect("search")
                .is_empty()
        );
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
            assert_eq!(
                loaded.search(q, 20, &live).expect("search"),
                index.search(q, 20, &live).expect("search")
            );
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
        // A damaged file is not loaded (it is rebuilt from the catalog):
        // the codes file,
        let codes = path.join(CODES_FILE);
        let whole = fs::read(&codes).expect("read codes");
        let mut bytes = whole.clone();
        bytes[3] ^= 0xff;
        fs::write(&codes, bytes).expect("write");
        assert!(VectorIndex::load(&path, 7, "m").expect("load").is_none());
        fs::write(&codes, whole).expect("restore");
        assert!(VectorIndex::load(&path, 7, "m").expect("load").is_some());
        // or the rows file.
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
            assert_eq!(
                loaded.search(q, 10, &live).expect("search"),
                index.search(q, 10, &live).expect("search")
            );
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

//! The static embedder's token table: one vector per vocabulary id, and its
//! file format.
//!
//! The file is derived data (recomputed from the bundled model when missing
//! or wrong), so reading it checks everything and reports what is wrong;
//! it never panics on a damaged file. Writing goes through a temp file and a
//! rename, so a reader sees the old file or the new one, never half of one.
//!
//! Format (little-endian), version 1:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `LPSTATIC` |
//! | 4 | format version (`u32`) |
//! | 4 | rows (`u32`, the vocabulary size) |
//! | 4 | dims (`u32`) |
//! | 4 | id length (`u32`, at most [`MAX_ID_BYTES`]) |
//! | 32 | blake3 of the id bytes followed by the payload |
//! | id length | the table id (UTF-8) |
//! | rows × dims × 2 | payload: IEEE f16 coordinates, row-major |
//!
//! A row of zeros is a token without a vector: one not distilled yet (the
//! table fills lazily, `distill.rs`) or one the tokenizer never produces
//! from text; every other row is a unit vector. A file that holds only some
//! rows is therefore a valid, partial table, and saving a grown table
//! replaces it whole.
//!
//! Does not decide what goes into the table (`distill.rs` does).

use std::io::Write;
use std::path::{Path, PathBuf};

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"LPSTATIC";
/// Bump when the byte layout changes.
const FORMAT_VERSION: u32 = 1;
/// Fixed header bytes before the id: magic, version, rows, dims, id length,
/// checksum.
const HEADER_BYTES: usize = 8 + 4 + 4 + 4 + 4 + 32;
/// Ids are short strings; anything longer is a damaged header.
pub const MAX_ID_BYTES: usize = 4096;

/// One vector per token id, in memory as f32.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenTable {
    /// What produced the vectors (model and recipe); a file with another id
    /// is not this table.
    pub id: String,
    /// Coordinates per vector.
    pub dim: usize,
    /// `rows × dim` coordinates, row-major; a zero row is a missing token.
    pub data: Vec<f32>,
}

/// Why a table file was not used.
#[derive(Debug, thiserror::Error)]
pub enum TableFileError {
    /// There is no file yet.
    #[error("no table file yet")]
    Missing,
    /// The file could not be read.
    #[error("unreadable: {0}")]
    Io(#[from] std::io::Error),
    /// The file is not a table of the expected shape, or is damaged.
    #[error("{0}")]
    Invalid(String),
}

impl TokenTable {
    /// A table of `rows` missing tokens.
    pub fn empty(id: impl Into<String>, rows: usize, dim: usize) -> Self {
        Self {
            id: id.into(),
            dim,
            data: vec![0.0; rows * dim],
        }
    }

    /// Number of rows (token ids).
    pub fn rows(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// The vector of token `id`, or `None` when the id is out of range or has
    /// no vector.
    pub fn row(&self, id: usize) -> Option<&[f32]> {
        let row = self.data.get(id * self.dim..(id + 1) * self.dim)?;
        row.iter().any(|&x| x != 0.0).then_some(row)
    }

    /// Set the vector of token `id`, rounded to f16 (ignored when out of
    /// range or of the wrong length). Rounding here keeps a table in memory
    /// equal to the same table saved and loaded again, so vectors do not
    /// depend on whether a row was distilled in this process or read back.
    pub fn set_row(&mut self, id: usize, v: &[f32]) {
        if v.len() != self.dim {
            return;
        }
        if let Some(row) = self.data.get_mut(id * self.dim..(id + 1) * self.dim) {
            row.iter_mut().zip(v).for_each(|(r, &x)| *r = round_f16(x));
        }
    }

    /// The mean of the rows that have a vector (accumulated in f64), or
    /// `None` when no row has one.
    pub fn mean(&self) -> Option<Vec<f32>> {
        let mut mean = vec![0.0f64; self.dim];
        let mut n = 0usize;
        for i in 0..self.rows() {
            if let Some(row) = self.row(i) {
                mean.iter_mut().zip(row).for_each(|(m, &x)| *m += x as f64);
                n += 1;
            }
        }
        (n > 0).then(|| mean.iter().map(|m| (m / n as f64) as f32).collect())
    }

    /// Rows that have a vector.
    pub fn present(&self) -> usize {
        (0..self.rows()).filter(|&i| self.row(i).is_some()).count()
    }

    /// Encode to the file format (coordinates rounded to f16).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut payload = Vec::with_capacity(self.data.len() * 2);
        for &x in &self.data {
            payload.extend_from_slice(&half::f16::from_f32(x).to_le_bytes());
        }
        let id = self.id.as_bytes();
        let mut out = Vec::with_capacity(HEADER_BYTES + id.len() + payload.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&u32_of(self.rows()).to_le_bytes());
        out.extend_from_slice(&u32_of(self.dim).to_le_bytes());
        out.extend_from_slice(&u32_of(id.len()).to_le_bytes());
        out.extend_from_slice(checksum(id, &payload).as_bytes());
        out.extend_from_slice(id);
        out.extend_from_slice(&payload);
        out
    }

    /// Decode a file, requiring exactly the expected id and shape.
    pub fn from_bytes(
        bytes: &[u8],
        id: &str,
        rows: usize,
        dim: usize,
    ) -> Result<Self, TableFileError> {
        let bad = |what: String| Err(TableFileError::Invalid(what));
        if bytes.len() < HEADER_BYTES {
            return bad(format!("{} bytes is shorter than the header", bytes.len()));
        }
        if &bytes[..8] != MAGIC {
            return bad("not a Loupe static embedding table (bad magic)".into());
        }
        let field = |at: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&bytes[at..at + 4]);
            u32::from_le_bytes(b) as usize
        };
        let (version, file_rows, file_dim, id_len) = (field(8), field(12), field(16), field(20));
        if version != FORMAT_VERSION as usize {
            return bad(format!(
                "format version {version}, expected {FORMAT_VERSION}"
            ));
        }
        if id_len > MAX_ID_BYTES {
            return bad(format!("id of {id_len} bytes"));
        }
        let id_end = HEADER_BYTES + id_len;
        let Some(file_id) = bytes.get(HEADER_BYTES..id_end) else {
            return bad("truncated in the id".into());
        };
        if file_id != id.as_bytes() {
            return bad(format!(
                "made for model `{}`, expected `{id}`",
                String::from_utf8_lossy(file_id)
            ));
        }
        if (file_rows, file_dim) != (rows, dim) {
            return bad(format!("{file_rows} × {file_dim}, expected {rows} × {dim}"));
        }
        let payload = &bytes[id_end..];
        if payload.len() != rows * dim * 2 {
            return bad(format!(
                "payload of {} bytes, expected {}",
                payload.len(),
                rows * dim * 2
            ));
        }
        if checksum(file_id, payload).as_bytes() != &bytes[24..56] {
            return bad("checksum mismatch".into());
        }
        let data: Vec<f32> = payload
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect();
        if data.iter().any(|x| !x.is_finite()) {
            return bad("non-finite coordinate".into());
        }
        Ok(Self {
            id: id.to_owned(),
            dim,
            data,
        })
    }

    /// Read `path`, requiring exactly the expected id and shape.
    pub fn load(path: &Path, id: &str, rows: usize, dim: usize) -> Result<Self, TableFileError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(TableFileError::Missing);
            }
            Err(e) => return Err(e.into()),
        };
        Self::from_bytes(&bytes, id, rows, dim)
    }

    /// Write to `path` atomically: a temp file in the same folder, synced,
    /// then renamed over `path`.
    pub fn save(&self, path: &Path) -> crate::Result<()> {
        let io = |what: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| crate::Error::Io { what, path, source }
        };
        let tmp = temp_path(path);
        let written = (|| {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(&self.to_bytes())?;
            file.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io("write static embedding table", &tmp)(e));
        }
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io("move static embedding table into place", path)(e)
        })
    }
}

/// A temp name next to `path`, unique per process and moment, so two
/// processes building the table at once never write the same file.
fn temp_path(path: &Path) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".tmp-{}-{nanos}", std::process::id()));
    path.with_file_name(name)
}

/// `x` as the file stores it.
pub fn round_f16(x: f32) -> f32 {
    half::f16::from_f32(x).to_f32()
}

fn checksum(id: &[u8], payload: &[u8]) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    h.update(id);
    h.update(payload);
    h.finalize()
}

/// Table shapes are far below 4 G; saturate rather than wrap if not.
fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

//! The catalog: project metadata in SQLite (via sqlx) — files, chunks with
//! their text and outlines, symbols, references, the embedding cache,
//! diagnostics and user settings.
//!
//! The catalog is the source of truth; the lexical and vector indexes are
//! derived from it. Every write of an indexing run goes through
//! [`Catalog::begin`] … [`Staging::commit`], one transaction that also bumps the *generation*
//! counter, so the derived indexes can tell whether they are current.
//!
//! Does not walk, parse or rank.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::indexing::chunk::{RefKind, SymbolDef, SymbolRef};
use crate::{Error, Result};
use loupe_assemble::{Chunk, ChunkId, ChunkKind, OutlineSpan, Role, SpanKind};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{Connection, QueryBuilder, Row, Sqlite, Transaction};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Version of the derived data layout (chunking rules, tokenizer, lexical
/// schema). Bump it when any of them changes: the next open re-indexes.
pub const INDEX_VERSION: &str = "5";

/// Stored state of one indexed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileState {
    /// Row id.
    pub id: i64,
    /// Size in bytes at indexing time.
    pub size: u64,
    /// Modification time (ns) at indexing time.
    pub mtime_ns: i64,
    /// blake3 of the contents.
    pub hash: String,
}

/// A file whose chunks are (re)written.
#[derive(Clone, Debug)]
pub struct FileUpdate {
    /// Relative path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time (ns).
    pub mtime_ns: i64,
    /// blake3 of the contents.
    pub hash: String,
    /// Language name.
    pub language: String,
    /// Role.
    pub role: Role,
    /// Chunks in file order (`id` is ignored and assigned on insert).
    pub chunks: Vec<Chunk>,
    /// Definitions, indexing into `chunks`.
    pub defs: Vec<SymbolDef>,
    /// References, indexing into `chunks`.
    pub refs: Vec<SymbolRef>,
}

/// What one committed indexing step changed, for the in-memory tables.
#[derive(Debug, Default)]
pub struct Applied {
    /// The catalog generation after the change.
    pub generation: u64,
    /// Ids of the inserted chunks.
    pub inserted: Vec<ChunkId>,
    /// Paths of the inserted files that have chunks.
    pub inserted_paths: Vec<String>,
    /// Paths whose previous rows were removed (deleted and rewritten files).
    pub removed_paths: Vec<String>,
    /// Ids of the removed chunks.
    pub removed_ids: Vec<ChunkId>,
}

/// One batch written by [`Staging::insert`], for the derived indexes: its
/// chunks moved out with their ids, and (chunk id, name as written) of
/// their definitions.
#[derive(Debug, Default)]
pub struct Inserted {
    /// The new chunks, ids assigned.
    pub chunks: Vec<Chunk>,
    /// (chunk id, name as written) of the new definitions.
    pub defined: Vec<(ChunkId, String)>,
}

/// Values in one `IN (...)` list; far below SQLite's 32,766 bound-parameter limit.
const MAX_IN_LIST: usize = 500;
/// [`Catalog::chunks`] reads in two halves at once from this many ids a half.
const PARALLEL_READ_MIN: usize = 64;
/// Bound parameters per multi-row `INSERT` (SQLite allows 32,766 since 3.32;
/// a third of that keeps statements small enough to prepare quickly).
const MAX_PARAMS_PER_INSERT: usize = 10_000;

/// Rows of `columns` values that fit in one `INSERT`. Each length of
/// batch is a statement sqlx keeps prepared on the connection until the
/// step commits (see [`Staging::commit`]).
fn rows_per_insert(columns: usize) -> usize {
    (MAX_PARAMS_PER_INSERT / columns).max(1)
}

/// `?, ?, ?` with `n` markers.
fn placeholders(n: usize) -> String {
    vec!["?"; n].join(",")
}

/// A write-ahead log larger than this is folded into the catalog file
/// after an index run ([`Catalog::fold_wal_above`]). SQLite leaves the
/// log at its largest size after a checkpoint, and every process that
/// opens the catalog after the last one exited reads the whole log
/// again to rebuild its index: a first index of the vendor corpus left
/// 1.36 GB, and each one-shot `loupe query` then spent 0.45–0.6 s of
/// system time on it (0.78–0.95 s in all, against 0.28–0.33 s once
/// folded; BENCHMARKS.md, "Changes to indexing", `755420e`). 16 MiB of
/// log reads in a few milliseconds.
pub const FOLD_WAL_BYTES: u64 = 16 << 20;

/// The path of a SQLite file's companion (`-wal`, `-shm`): the file's own
/// path with `suffix` appended, whatever bytes the name holds.
pub(crate) fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// A handle on one project's catalog.
#[derive(Clone, Debug)]
pub struct Catalog {
    pool: SqlitePool,
    /// The catalog file's path (its log is `<path>-wal`).
    path: PathBuf,
}

/// Name of a serde-serialized unit enum (`ChunkKind::Function` → `function`).
fn enum_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

fn parse_enum<T: serde::de::DeserializeOwned>(what: &'static str, s: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(s.to_owned())).map_err(|_| Error::Corrupt {
        what,
        detail: format!("unknown value {s:?}"),
    })
}

/// Encode an outline as 9 bytes per span: kind, start (u32 LE), end (u32 LE).
pub fn encode_outline(outline: &[OutlineSpan]) -> Vec<u8> {
    let mut out = Vec::with_capacity(outline.len() * 9);
    for span in outline {
        out.push(match span.kind {
            SpanKind::Signature => 0,
            SpanKind::Doc => 1,
            SpanKind::Body => 2,
            SpanKind::Import => 3,
            SpanKind::Comment => 4,
            SpanKind::Code => 5,
        });
        out.extend_from_slice(&span.start.to_le_bytes());
        out.extend_from_slice(&span.end.to_le_bytes());
    }
    out
}

/// Inverse of [`encode_outline`].
pub fn decode_outline(bytes: &[u8]) -> Result<Vec<OutlineSpan>> {
    let corrupt = |detail: &str| Error::Corrupt {
        what: "outline",
        detail: detail.to_owned(),
    };
    if !bytes.len().is_multiple_of(9) {
        return Err(corrupt("length is not a multiple of 9"));
    }
    bytes
        .chunks_exact(9)
        .map(|b| {
            let kind = match b[0] {
                0 => SpanKind::Signature,
                1 => SpanKind::Doc,
                2 => SpanKind::Body,
                3 => SpanKind::Import,
                4 => SpanKind::Comment,
                5 => SpanKind::Code,
                _ => return Err(corrupt("unknown span kind")),
            };
            let word = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
            Ok(OutlineSpan {
                kind,
                start: word(1),
                end: word(5),
            })
        })
        .collect()
}

/// Encode a vector as little-endian f32s.
pub fn encode_vector(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Inverse of [`encode_vector`].
pub fn decode_vector(bytes: &[u8]) -> Result<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(Error::Corrupt {
            what: "embedding",
            detail: "bad length".into(),
        });
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

const CHUNK_COLUMNS: &str = "c.id, f.path, f.language, c.kind, c.symbol, c.parent, c.start_byte, \
     c.end_byte, c.start_line, c.end_line, f.role, c.text, c.outline, c.hash, c.tokens, f.mtime_ns";

/// A row's first two columns.
fn pair_from_row<A, B>(row: &SqliteRow) -> Result<(A, B)>
where
    A: for<'r> sqlx::Decode<'r, Sqlite> + sqlx::Type<Sqlite>,
    B: for<'r> sqlx::Decode<'r, Sqlite> + sqlx::Type<Sqlite>,
{
    Ok((row.try_get(0)?, row.try_get(1)?))
}

fn chunk_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<(Chunk, i64)> {
    let kind: String = row.try_get(3)?;
    let role: String = row.try_get(10)?;
    let outline: Vec<u8> = row.try_get(12)?;
    let language: String = row.try_get(2)?;
    let kind = parse_enum::<ChunkKind>("chunk kind", &kind)?;
    let symbol: Option<String> = row.try_get(4)?;
    let parent: Option<String> = row.try_get(5)?;
    // The file's role, refined per chunk (Rust's inline test modules).
    let role = crate::indexing::role::role_for_chunk(
        parse_enum::<Role>("role", &role)?,
        &language,
        kind,
        symbol.as_deref(),
        parent.as_deref(),
    );
    let chunk = Chunk {
        id: row.try_get(0)?,
        path: row.try_get(1)?,
        language,
        kind,
        symbol,
        parent,
        start_byte: row.try_get(6)?,
        end_byte: row.try_get(7)?,
        start_line: row.try_get(8)?,
        end_line: row.try_get(9)?,
        role,
        text: row.try_get(11)?,
        outline: decode_outline(&outline)?,
        hash: row.try_get(13)?,
        tokens: row.try_get(14)?,
    };
    let mtime_ns: i64 = row.try_get(15)?;
    Ok((chunk, mtime_ns))
}

impl Catalog {
    /// Rows of `select`, whose `{in}` becomes an `IN` list, for every key:
    /// [`MAX_IN_LIST`] keys per statement (SQLite's limit on bound
    /// parameters), rows in statement order.
    async fn rows_in<K>(&self, select: &str, keys: &[K]) -> Result<Vec<SqliteRow>>
    where
        K: Clone + Send + for<'q> sqlx::Encode<'q, Sqlite> + sqlx::Type<Sqlite> + 'static,
    {
        let mut out = Vec::new();
        for batch in keys.chunks(MAX_IN_LIST) {
            let sql = select.replace("{in}", &placeholders(batch.len()));
            let mut q = sqlx::query(&sql);
            for key in batch {
                q = q.bind(key.clone());
            }
            out.extend(q.fetch_all(&self.pool).await?);
        }
        Ok(out)
    }

    /// Open (creating if needed) the catalog at `path` and run migrations.
    /// Migrations from a newer Loupe that this one does not know are ignored,
    /// so an older build can still open a newer catalog.
    pub async fn open(path: &Path) -> Result<Self> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // WAL + NORMAL: a crash of the app never corrupts or half-applies a
            // transaction; only a power loss may lose the last commits.
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        if let Err(e) = migrator.run(&pool).await {
            // Closed before the error returns: a caller setting the file
            // aside must not race a connection still holding it.
            pool.close().await;
            return Err(e.into());
        }
        // No `PRAGMA quick_check` here: it reads the whole file (1.3 s on a
        // 1.8M-chunk catalog). A damaged header already fails the migration
        // query above; damage deeper in surfaces as a query error.
        Ok(Self {
            pool,
            path: path.to_path_buf(),
        })
    }

    /// If the write-ahead log is larger than `limit` bytes, copy what it
    /// holds into the catalog file and truncate it (`PRAGMA
    /// wal_checkpoint(TRUNCATE)`); see [`FOLD_WAL_BYTES`]. Right after a
    /// commit SQLite's own checkpoint has already copied the pages, so
    /// this mostly truncates. Returns whether the log was folded whole:
    /// `false` if it was small, or if a reader in another process held
    /// part of it (SQLite waits for readers up to the busy timeout; what
    /// is left is folded by a later run).
    pub async fn fold_wal_above(&self, limit: u64) -> Result<bool> {
        match std::fs::metadata(companion(&self.path, "-wal")) {
            Ok(meta) if meta.len() > limit => {}
            _ => return Ok(false),
        }
        let (busy,): (i64,) = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)")
            .fetch_one(&self.pool)
            .await?;
        Ok(busy == 0)
    }

    /// Copy what another (damaged) catalog still gives of the two tables an
    /// index rebuild cannot recompute cheaply: settings and cached vectors.
    /// Each table comes whole or not at all (one statement each). Returns
    /// what was kept, in words, for the recovery note (`; kept …`).
    pub async fn salvage(&self, old: &Path) -> String {
        let Ok(mut conn) = self.pool.acquire().await else {
            return String::new();
        };
        let attached = sqlx::query("ATTACH DATABASE ? AS old")
            .bind(old.to_string_lossy().into_owned())
            .execute(&mut *conn)
            .await;
        if attached.is_err() {
            return "; nothing could be read from the damaged file".into();
        }
        let mut notes = Vec::new();
        for (table, what) in [("settings", "settings"), ("embeddings", "cached vectors")] {
            let sql = format!("INSERT OR IGNORE INTO main.{table} SELECT * FROM old.{table}");
            match sqlx::query(&sql).execute(&mut *conn).await {
                Ok(r) => notes.push(format!("kept {} {what}", r.rows_affected())),
                Err(_) => notes.push(format!("{what} unreadable, lost")),
            }
        }
        let _ = sqlx::query("DETACH DATABASE old").execute(&mut *conn).await;
        format!("; {}", notes.join(", "))
    }

    /// Fold the WAL into the catalog file, then close all connections.
    /// The checkpoint comes first because another handle (a background
    /// task still finishing, a second pool) keeps the WAL apart until it
    /// too is gone; after this the catalog file holds everything either
    /// way. Best effort: a busy reader only leaves some pages for later.
    pub async fn close(&self) {
        let _ = self.fold_wal_above(0).await;
        self.pool.close().await;
    }

    /// Read a meta value.
    pub async fn meta(&self, key: &str) -> Result<Option<String>> {
        Ok(sqlx::query_scalar("SELECT value FROM meta WHERE key = ?")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// Write a meta value.
    pub async fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        sqlx::query("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)")
            .bind(key)
            .bind(value)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The current generation (0 for a fresh catalog).
    pub async fn generation(&self) -> Result<u64> {
        Ok(self
            .meta("generation")
            .await?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    /// Remove every derived row (files, chunks, symbols, refs, diagnostics),
    /// keeping settings and the embedding cache. Bumps the generation.
    pub async fn clear_index(&self) -> Result<u64> {
        let mut tx = self.pool.begin().await?;
        for table in ["refs", "symbols", "chunks", "files", "diagnostics"] {
            sqlx::query(&format!("DELETE FROM {table}"))
                .execute(&mut *tx)
                .await?;
        }
        let generation = bump_generation(&mut tx).await?;
        tx.commit().await?;
        Ok(generation)
    }

    /// Every indexed file's stored state, by path.
    pub async fn file_states(&self) -> Result<HashMap<String, FileState>> {
        let rows = sqlx::query("SELECT id, path, size, mtime_ns, hash FROM files")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(file_state_from_row).collect()
    }

    /// Stored states of the given paths (those that are indexed).
    pub async fn file_states_of(&self, paths: &[String]) -> Result<HashMap<String, FileState>> {
        let rows = self
            .rows_in(
                "SELECT id, path, size, mtime_ns, hash FROM files WHERE path IN ({in})",
                paths,
            )
            .await?;
        rows.iter().map(file_state_from_row).collect()
    }

    /// Open the transaction of one indexing step. The step is written in
    /// batches ([`Staging::remove`], [`Staging::touch`], [`Staging::insert`])
    /// as the files are read, so a run over a large folder never holds
    /// more than a few batches in memory; nothing is visible to readers
    /// before [`Staging::commit`], and dropping the [`Staging`] rolls the
    /// whole step back.
    ///
    /// A step that fills an empty catalog (a first index, or one after a
    /// format change or a heal) bulk-loads: the secondary indexes of the
    /// chunk, symbol and reference tables are dropped in the transaction
    /// and built again from their stored definitions before it commits,
    /// since one sort per index costs less than keeping millions of rows'
    /// random keys in order as they arrive (BENCHMARKS.md, "Changes to
    /// indexing", `5f240f6`).
    ///
    /// The transaction takes the write lock as it begins (`BEGIN
    /// IMMEDIATE`), so it waits out the busy timeout for a writer still
    /// holding it (a step just dropped, whose rollback has not run yet),
    /// where a deferred one would read first and then fail to upgrade
    /// with "database is locked".
    pub async fn begin(&self) -> Result<Staging> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let empty: bool = sqlx::query_scalar("SELECT NOT EXISTS (SELECT 1 FROM files)")
            .fetch_one(&mut *tx)
            .await?;
        let mut deferred = Vec::new();
        if empty {
            let rows = sqlx::query(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' \
                 AND tbl_name IN ('chunks', 'symbols', 'refs') AND sql IS NOT NULL \
                 ORDER BY name",
            )
            .fetch_all(&mut *tx)
            .await?;
            for row in rows {
                let name: String = row.try_get(0)?;
                let sql: String = row.try_get(1)?;
                sqlx::query(&format!("DROP INDEX \"{}\"", name.replace('"', "\"\"")))
                    .execute(&mut *tx)
                    .await?;
                deferred.push(sql);
            }
        }
        Ok(Staging {
            tx,
            applied: Applied::default(),
            changes_chunks: false,
            touches: false,
            deferred,
        })
    }

    /// How many files the last run skipped or degraded (what
    /// [`Catalog::diagnostics`] lists), without reading them.
    pub async fn diagnostics_count(&self) -> Result<u64> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM diagnostics")
            .fetch_one(&self.pool)
            .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// Stored diagnostics of the last full run.
    pub async fn diagnostics(&self) -> Result<Vec<Diagnostic>> {
        let rows = sqlx::query("SELECT path, kind, message FROM diagnostics ORDER BY path")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                let kind: String = r.try_get(1)?;
                Ok(Diagnostic {
                    path: r.try_get(0)?,
                    kind: DiagnosticKind::parse(&kind).unwrap_or(DiagnosticKind::Unreadable),
                    message: r.try_get(2)?,
                })
            })
            .collect()
    }

    /// Counts for status: (files, chunks).
    pub async fn counts(&self) -> Result<(u64, u64)> {
        let files: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM files")
            .fetch_one(&self.pool)
            .await?;
        let chunks: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chunks")
            .fetch_one(&self.pool)
            .await?;
        Ok((
            u64::try_from(files).unwrap_or(0),
            u64::try_from(chunks).unwrap_or(0),
        ))
    }

    /// Every indexed file with its chunks' tokens summed (the index
    /// tokenizer, o200k_base) and its chunk count, sorted by path.
    pub async fn file_tokens(&self) -> Result<Vec<(String, u64, u32)>> {
        let rows = sqlx::query(
            "SELECT f.path, COALESCE(SUM(c.tokens), 0), COUNT(c.id) FROM files f \
             LEFT JOIN chunks c ON c.file_id = f.id GROUP BY f.id ORDER BY f.path",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let tokens: i64 = r.try_get(1)?;
                let chunks: i64 = r.try_get(2)?;
                Ok((
                    r.try_get(0)?,
                    u64::try_from(tokens).unwrap_or(0),
                    u32::try_from(chunks).unwrap_or(0),
                ))
            })
            .collect()
    }

    /// Chunks by id, with their file's mtime (ns). Unknown ids are skipped.
    pub async fn chunks(&self, ids: &[ChunkId]) -> Result<Vec<(Chunk, i64)>> {
        let select = format!(
            "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id \
             WHERE c.id IN ({{in}})"
        );
        // A question's few hundred chunks are read in two halves on two
        // connections at once: SQLite and sqlx's row hand-over take a core
        // each (a vendor-corpus question's candidates took 6 ms on one).
        let (first, second) = ids.split_at(ids.len().div_ceil(2));
        let rows = if second.len() < PARALLEL_READ_MIN {
            self.rows_in(&select, ids).await?
        } else {
            let (mut a, b) =
                tokio::try_join!(self.rows_in(&select, first), self.rows_in(&select, second))?;
            a.extend(b);
            a
        };
        rows.iter().map(chunk_from_row).collect()
    }

    /// (path, chunk id) of every chunk of `paths`, by path, in file order:
    /// for callers that need which chunks, not their text.
    pub async fn chunk_ids_of_paths(&self, paths: &[String]) -> Result<Vec<(String, ChunkId)>> {
        let rows = self
            .rows_in(
                "SELECT f.path, c.id FROM chunks c JOIN files f ON f.id = c.file_id \
                 WHERE f.path IN ({in}) ORDER BY f.path, c.ordinal",
                paths,
            )
            .await?;
        rows.iter().map(pair_from_row).collect()
    }

    /// All chunks of the given files, in file order.
    pub async fn chunks_of_paths(&self, paths: &[String]) -> Result<Vec<(Chunk, i64)>> {
        let select = format!(
            "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id \
             WHERE f.path IN ({{in}}) ORDER BY f.path, c.ordinal"
        );
        let rows = self.rows_in(&select, paths).await?;
        rows.iter().map(chunk_from_row).collect()
    }

    /// One page of all chunks in id order, after `after_id` (for rebuilding
    /// derived indexes without loading everything at once).
    pub async fn chunk_page(&self, after_id: ChunkId, limit: u32) -> Result<Vec<Chunk>> {
        let sql = format!(
            "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id \
             WHERE c.id > ? ORDER BY c.id LIMIT ?"
        );
        let rows = sqlx::query(&sql)
            .bind(after_id)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| chunk_from_row(r).map(|(c, _)| c))
            .collect()
    }

    /// Every file path, sorted.
    pub async fn paths(&self) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar("SELECT path FROM files ORDER BY path")
            .fetch_all(&self.pool)
            .await?)
    }

    /// Up to `limit` distinct symbol names (as written) whose lower-cased
    /// form contains `needle_lower`, earliest match then shortest first
    /// (what `@` completion offers).
    pub async fn symbol_names_matching(
        &self,
        needle_lower: &str,
        limit: u32,
    ) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT name FROM symbols WHERE instr(name_lower, ?1) > 0 \
             GROUP BY name ORDER BY instr(name_lower, ?1), length(name), name LIMIT ?2",
        )
        .bind(needle_lower)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Every (lower-cased symbol name, chunk id) pair, in that order. A
    /// full scan (3 M rows on the vendor benchmark corpus): for checks and
    /// benchmarks; questions look names up with [`Catalog::definers`].
    pub async fn symbol_table(&self) -> Result<Vec<(String, ChunkId)>> {
        Ok(
            sqlx::query_as(
                "SELECT name_lower, chunk_id FROM symbols ORDER BY name_lower, chunk_id",
            )
            .fetch_all(&self.pool)
            .await?,
        )
    }

    /// Names (lower-cased) referenced from the given chunks.
    pub async fn refs_from(&self, ids: &[ChunkId]) -> Result<Vec<(ChunkId, String)>> {
        let rows = self
            .rows_in(
                "SELECT DISTINCT chunk_id, name_lower FROM refs WHERE chunk_id IN ({in})",
                ids,
            )
            .await?;
        rows.iter().map(pair_from_row).collect()
    }

    /// Chunks that reference any of the given (lower-cased) names, at most
    /// `limit` per name (the lowest chunk ids).
    pub async fn referrers(&self, names: &[String], limit: u32) -> Result<Vec<(String, ChunkId)>> {
        self.first_chunks_by_name("refs", names, limit).await
    }

    /// Chunks that define any of the given (lower-cased) names, at most
    /// `limit` per name (the lowest chunk ids), in (name, chunk id) order of
    /// each name's run. A question looks up a few names (what it mentions)
    /// and a few hundred (what its best hits reference); nothing is loaded
    /// ahead, so a one-shot process opens without reading millions of rows.
    pub async fn definers(&self, names: &[String], limit: u32) -> Result<Vec<(String, ChunkId)>> {
        self.first_chunks_by_name("symbols", names, limit).await
    }

    /// The first `limit` distinct chunk ids of each name in `table` (`refs`
    /// or `symbols`), one query per 64 names.
    async fn first_chunks_by_name(
        &self,
        table: &'static str,
        names: &[String],
        limit: u32,
    ) -> Result<Vec<(String, ChunkId)>> {
        // One LIMITed subquery per name, each a range of the table's
        // (name, chunk) index: reads `limit` rows per name however common
        // the name is.
        const NAMES_PER_QUERY: usize = 64;
        let mut out = Vec::new();
        for batch in names.chunks(NAMES_PER_QUERY) {
            let one = format!(
                "SELECT * FROM (SELECT DISTINCT name_lower, chunk_id FROM {table} \
                 WHERE name_lower = ? ORDER BY chunk_id LIMIT ?)"
            );
            let sql = vec![one; batch.len()].join(" UNION ALL ");
            let mut q = sqlx::query_as::<_, (String, ChunkId)>(&sql);
            for name in batch {
                q = q.bind(name).bind(limit);
            }
            out.extend(q.fetch_all(&self.pool).await?);
        }
        Ok(out)
    }

    /// (chunk id, name as written) of every definition in the given chunks.
    pub async fn defined_names(&self, ids: &[ChunkId]) -> Result<Vec<(ChunkId, String)>> {
        let rows = self
            .rows_in(
                "SELECT chunk_id, name FROM symbols WHERE chunk_id IN ({in}) \
                 ORDER BY chunk_id, line",
                ids,
            )
            .await?;
        rows.iter().map(pair_from_row).collect()
    }

    /// (id, content hash) of the chunks whose content has no cached
    /// vector for `model`, one per hash (the lowest id), in id order.
    /// Ids, not texts: the caller reads the texts a page at a time
    /// ([`Catalog::chunks`]), so a first index of a large folder does not
    /// hold every chunk's text at once.
    pub async fn chunks_missing_embeddings(&self, model: &str) -> Result<Vec<(ChunkId, String)>> {
        let rows = sqlx::query(
            "SELECT MIN(c.id), c.hash FROM chunks c \
             WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash AND e.model = ?) \
             GROUP BY c.hash ORDER BY 1",
        )
        .bind(model)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }

    /// [`Catalog::chunks_missing_embeddings`] among the chunks `ids` only
    /// (unknown ids skipped): after a small change, the few chunks it
    /// added, instead of a walk of every chunk (30 s on a catalog of
    /// 544 k chunks).
    pub async fn chunks_missing_embeddings_among(
        &self,
        model: &str,
        ids: &[ChunkId],
    ) -> Result<Vec<(ChunkId, String)>> {
        let mut out: Vec<(ChunkId, String)> = Vec::new();
        for batch in ids.chunks(MAX_IN_LIST) {
            let sql = format!(
                "SELECT c.id, c.hash FROM chunks c WHERE c.id IN ({}) AND NOT EXISTS \
                 (SELECT 1 FROM embeddings e WHERE e.hash = c.hash AND e.model = ?)",
                placeholders(batch.len())
            );
            let mut q = sqlx::query(&sql);
            for id in batch {
                q = q.bind(id);
            }
            for row in q.bind(model).fetch_all(&self.pool).await? {
                out.push((row.try_get(0)?, row.try_get(1)?));
            }
        }
        out.sort_unstable();
        let mut seen = HashSet::new();
        out.retain(|(_, hash)| seen.insert(hash.clone()));
        Ok(out)
    }

    /// Store vectors for content hashes.
    pub async fn store_embeddings(&self, model: &str, items: &[(String, Vec<f32>)]) -> Result<()> {
        let mut tx = self.pool.begin().await?;
        for (hash, v) in items {
            sqlx::query("INSERT OR REPLACE INTO embeddings(hash, model, vector) VALUES (?, ?, ?)")
                .bind(hash)
                .bind(model)
                .bind(encode_vector(v))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Vectors of `model` for up to `limit` chunks with an id above
    /// `after`, in chunk-id order: one page of a walk over every chunk's
    /// vector, so a rebuild holds a page of decoded vectors, not all of
    /// them twice (raw and decoded: 770 MB on the vendor corpus).
    pub async fn chunk_vectors_after(
        &self,
        model: &str,
        after: ChunkId,
        limit: usize,
    ) -> Result<Vec<(ChunkId, Vec<f32>)>> {
        let rows: Vec<(ChunkId, Vec<u8>)> = sqlx::query_as(
            "SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.hash = c.hash \
             WHERE e.model = ? AND c.id > ? ORDER BY c.id LIMIT ?",
        )
        .bind(model)
        .bind(after)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|(id, b)| Ok((id, decode_vector(&b)?)))
            .collect()
    }

    /// Vectors of the given chunks (those that have one).
    pub async fn vectors_of(
        &self,
        model: &str,
        ids: &[ChunkId],
    ) -> Result<Vec<(ChunkId, Vec<f32>)>> {
        let mut out = Vec::new();
        for batch in ids.chunks(MAX_IN_LIST) {
            let placeholders = placeholders(batch.len());
            let sql = format!(
                "SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.hash = c.hash \
                 WHERE e.model = ? AND c.id IN ({placeholders})"
            );
            let mut q = sqlx::query_as::<_, (ChunkId, Vec<u8>)>(&sql).bind(model);
            for id in batch {
                q = q.bind(id);
            }
            for (id, b) in q.fetch_all(&self.pool).await? {
                out.push((id, decode_vector(&b)?));
            }
        }
        Ok(out)
    }

    /// Every live chunk id, sorted.
    pub async fn chunk_ids(&self) -> Result<Vec<ChunkId>> {
        // One concatenated row instead of one row per chunk: sqlx hands
        // rows over one by one across a channel (seconds for millions).
        // Unordered, so SQLite reads the ids from its smallest covering
        // index: in id order it walked the table itself, chunk texts and
        // all (1.0–1.2 s of the vendor corpus's 4 GB catalog, against
        // 0.06–0.15 s), on every open of a one-shot command.
        let packed: Option<String> = sqlx::query_scalar("SELECT group_concat(id) FROM chunks")
            .fetch_one(&self.pool)
            .await?;
        let mut ids: Vec<ChunkId> = packed
            .as_deref()
            .unwrap_or_default()
            .split(',')
            .filter_map(|id| id.parse().ok())
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// Read a setting.
    pub async fn setting(&self, key: &str) -> Result<Option<String>> {
        Ok(
            sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
                .bind(key)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    /// Write a setting.
    pub async fn set_setting(&self, key: &str, value: &str) -> Result<()> {
        sqlx::query("INSERT OR REPLACE INTO settings(key, value) VALUES (?, ?)")
            .bind(key)
            .bind(value)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

/// One indexing step's open transaction (see [`Catalog::begin`]).
/// Dropping it rolls the whole step back.
pub struct Staging {
    tx: Transaction<'static, Sqlite>,
    applied: Applied,
    /// Whether a file was written or removed (even one without chunks).
    changes_chunks: bool,
    /// Whether an unchanged file's size or mtime was recorded.
    touches: bool,
    /// Definitions of the indexes a bulk load dropped, built again by
    /// [`Staging::commit`].
    deferred: Vec<String>,
}

impl std::fmt::Debug for Staging {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staging")
            .field("inserted", &self.applied.inserted.len())
            .field("removed", &self.applied.removed_ids.len())
            .finish()
    }
}

/// Ids are kept below this: positive as `i64` and `usize`, and exact as a
/// JavaScript number, which is what the app's IPC makes of them (above
/// 2⁵³ the UI would ask for a chunk that is not there).
const CHUNK_ID_SPACE: u64 = 1 << 52;

/// A chunk's id from what it is: 52 bits of blake3 over its path, byte
/// span and text hash. The same chunk of the same tree gets the same id in
/// every build; two chunks collide with odds of about n²/2⁵³ (10⁻⁴ for a
/// million chunks), and [`assign_chunk_ids`] resolves that.
pub fn content_id(path: &str, chunk: &Chunk) -> ChunkId {
    let mut h = blake3::Hasher::new();
    h.update(path.as_bytes());
    h.update(&[0]);
    h.update(&chunk.start_byte.to_le_bytes());
    h.update(&chunk.end_byte.to_le_bytes());
    h.update(chunk.hash.as_bytes());
    let mut eight = [0u8; 8];
    eight.copy_from_slice(&h.finalize().as_bytes()[..8]);
    let id = u64::from_le_bytes(eight) % CHUNK_ID_SPACE;
    i64::try_from(id.max(1)).unwrap_or(1)
}

/// The ids of `files`' chunks: [`content_id`], except where that id is
/// taken (by another new chunk, or a row that stays), then the next free
/// one. Runs after the rows that leave were deleted, in the transaction.
async fn assign_chunk_ids(
    tx: &mut Transaction<'static, Sqlite>,
    files: &[FileUpdate],
) -> Result<Vec<Vec<ChunkId>>> {
    let wanted: Vec<Vec<ChunkId>> = files
        .iter()
        .map(|f| f.chunks.iter().map(|c| content_id(&f.path, c)).collect())
        .collect();
    let all: Vec<ChunkId> = wanted.iter().flatten().copied().collect();
    let mut stored: HashSet<ChunkId> = HashSet::new();
    for batch in all.chunks(MAX_IN_LIST) {
        let sql = format!(
            "SELECT id FROM chunks WHERE id IN ({})",
            placeholders(batch.len())
        );
        let mut q = sqlx::query_scalar::<_, ChunkId>(&sql);
        for id in batch {
            q = q.bind(id);
        }
        stored.extend(q.fetch_all(&mut **tx).await?);
    }
    let mut taken: HashSet<ChunkId> = HashSet::with_capacity(all.len());
    let mut out = Vec::with_capacity(wanted.len());
    for ids in wanted {
        let mut file_ids = Vec::with_capacity(ids.len());
        for mut id in ids {
            while stored.contains(&id) || !taken.insert(id) {
                id = id % (CHUNK_ID_SPACE as i64 - 1) + 1;
                if stored.contains(&id) {
                    continue;
                }
                // The probe may land on a row outside this batch's lookup.
                let exists: Option<ChunkId> =
                    sqlx::query_scalar("SELECT id FROM chunks WHERE id = ?")
                        .bind(id)
                        .fetch_optional(&mut **tx)
                        .await?;
                if exists.is_some() {
                    stored.insert(id);
                }
            }
            file_ids.push(id);
        }
        out.push(file_ids);
    }
    Ok(out)
}

impl Staging {
    /// Remove `paths`' files with their chunks, symbols and references,
    /// recording the chunk ids that leave.
    pub async fn remove(&mut self, paths: &[String]) -> Result<()> {
        self.changes_chunks |= !paths.is_empty();
        for batch in paths.chunks(MAX_IN_LIST) {
            let list = placeholders(batch.len());
            let sql = format!(
                "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path IN ({list})"
            );
            let mut q = sqlx::query_scalar::<_, ChunkId>(&sql);
            for p in batch {
                q = q.bind(p);
            }
            self.applied
                .removed_ids
                .extend(q.fetch_all(&mut *self.tx).await?);
            let sql = format!("DELETE FROM files WHERE path IN ({list})");
            let mut q = sqlx::query(&sql);
            for p in batch {
                q = q.bind(p);
            }
            q.execute(&mut *self.tx).await?;
        }
        self.applied.removed_paths.extend_from_slice(paths);
        Ok(())
    }

    /// Record the new size and mtime of files whose content did not change.
    pub async fn touch(&mut self, touched: &[(String, u64, i64)]) -> Result<()> {
        self.touches |= !touched.is_empty();
        for (path, size, mtime) in touched {
            sqlx::query("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?")
                .bind(i64::try_from(*size).unwrap_or(i64::MAX))
                .bind(mtime)
                .bind(path)
                .execute(&mut *self.tx)
                .await?;
        }
        Ok(())
    }

    /// Write `files`, and hand their chunks back with the ids they were
    /// given, for the derived indexes. Files indexed before must have been
    /// [`Staging::remove`]d first (their paths are unique).
    ///
    /// Ids are assigned here rather than by SQLite: the caller holds the
    /// project's write lock, so nobody else allocates ids. That lets rows
    /// go in as multi-row `INSERT`s. A chunk's id comes from what it is
    /// ([`content_id`]: its path, span and text), so the same tree has the
    /// same ids however it was reached (a cold index, years of incremental
    /// ones): every tie broken by chunk id breaks the same way. An id names
    /// one text at one place, so a vector kept for it is always that text's.
    pub async fn insert(&mut self, files: Vec<FileUpdate>) -> Result<Inserted> {
        self.changes_chunks |= !files.is_empty();
        let first_file: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) + 1 FROM files")
            .fetch_one(&mut *self.tx)
            .await?;
        let chunk_ids = assign_chunk_ids(&mut self.tx, &files).await?;
        write_rows(&mut self.tx, &files, first_file, &chunk_ids).await?;
        let mut out = Inserted::default();
        for (file, ids) in files.into_iter().zip(chunk_ids) {
            for def in &file.defs {
                if let Some(&id) = ids.get(def.chunk) {
                    out.defined.push((id, def.name.clone()));
                }
            }
            if !file.chunks.is_empty() {
                self.applied.inserted_paths.push(file.path);
            }
            self.applied.inserted.extend_from_slice(&ids);
            out.chunks
                .extend(file.chunks.into_iter().zip(ids).map(|(mut chunk, id)| {
                    chunk.id = id;
                    chunk
                }));
        }
        Ok(out)
    }

    /// Replace the stored diagnostics (a full run's).
    pub async fn replace_diagnostics(&mut self, diagnostics: &[Diagnostic]) -> Result<()> {
        sqlx::query("DELETE FROM diagnostics")
            .execute(&mut *self.tx)
            .await?;
        for batch in diagnostics.chunks(rows_per_insert(3)) {
            let mut b =
                QueryBuilder::<Sqlite>::new("INSERT INTO diagnostics(path, kind, message) ");
            b.push_values(batch, |mut row, d| {
                row.push_bind(&d.path)
                    .push_bind(d.kind.as_str())
                    .push_bind(&d.message);
            });
            b.build().execute(&mut *self.tx).await?;
        }
        Ok(())
    }

    /// Whether a file was written or removed so far.
    pub fn changes_chunks(&self) -> bool {
        self.changes_chunks
    }

    /// Whether an unchanged file's size or mtime was recorded so far.
    pub fn touches(&self) -> bool {
        self.touches
    }

    /// Build the indexes a bulk load deferred, bump the generation and
    /// commit; returns what changed.
    pub async fn commit(mut self) -> Result<Applied> {
        let deferred = std::mem::take(&mut self.deferred);
        if !deferred.is_empty() {
            // Each index is one sort of its table, on one core while the
            // other idles (every file is parsed by now): SQLite's sorter
            // may use helper threads, off by default. On the vendor
            // corpus the six indexes took 6.5 s, 5.4 s with two threads
            // (BENCHMARKS.md, "Changes to indexing", `e50f74b`).
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
            sqlx::query(&format!("PRAGMA threads = {threads}"))
                .execute(&mut *self.tx)
                .await?;
        }
        for sql in &deferred {
            sqlx::query(sql).execute(&mut *self.tx).await?;
        }
        if !deferred.is_empty() {
            // The connection goes back to the pool: its other sorts are
            // questions' small ones.
            sqlx::query("PRAGMA threads = 0")
                .execute(&mut *self.tx)
                .await?;
        }
        self.applied.generation = bump_generation(&mut self.tx).await?;
        // The connection goes back to the pool without the statements this
        // step prepared: a bulk load's full-batch `INSERT`s hold megabytes
        // of compiled program each, for the next load only. Failing to drop
        // them costs memory, not the step.
        if let Err(e) = self.tx.clear_cached_statements().await {
            tracing::warn!("the catalog keeps this step's prepared statements: {e}");
        }
        self.tx.commit().await?;
        Ok(self.applied)
    }
}

/// Insert `files` with their chunks, symbols and references (multi-row
/// `INSERT`s): the files get ids from `first_file` on, their chunks
/// `chunk_ids`.
// Long: one multi-row INSERT per table (files, chunks, symbols, references), in foreign-key order.
async fn write_rows(
    tx: &mut Transaction<'static, Sqlite>,
    files: &[FileUpdate],
    first_file: i64,
    chunk_ids: &[Vec<ChunkId>],
) -> Result<()> {
    let mut chunk_rows: Vec<(ChunkId, i64, usize, &Chunk)> = Vec::new();
    let mut symbol_rows: Vec<(ChunkId, &SymbolDef)> = Vec::new();
    let mut ref_rows: Vec<(ChunkId, &SymbolRef)> = Vec::new();
    for ((file, ids), file_id) in files.iter().zip(chunk_ids.iter()).zip(first_file..) {
        for def in &file.defs {
            if let Some(&id) = ids.get(def.chunk) {
                symbol_rows.push((id, def));
            }
        }
        for r in &file.refs {
            if let Some(&id) = ids.get(r.chunk) {
                ref_rows.push((id, r));
            }
        }
        for (ordinal, (chunk, &id)) in file.chunks.iter().zip(ids.iter()).enumerate() {
            chunk_rows.push((id, file_id, ordinal, chunk));
        }
    }
    let file_rows: Vec<(i64, &FileUpdate)> = (first_file..).zip(files.iter()).collect();
    for batch in file_rows.chunks(rows_per_insert(7)) {
        let mut b = QueryBuilder::<Sqlite>::new(
            "INSERT INTO files(id, path, size, mtime_ns, hash, language, role) ",
        );
        b.push_values(batch, |mut row, (id, f)| {
            row.push_bind(*id)
                .push_bind(&f.path)
                .push_bind(i64::try_from(f.size).unwrap_or(i64::MAX))
                .push_bind(f.mtime_ns)
                .push_bind(&f.hash)
                .push_bind(&f.language)
                .push_bind(enum_name(&f.role));
        });
        b.build().execute(&mut **tx).await?;
    }
    for batch in chunk_rows.chunks(rows_per_insert(14)) {
        let mut b = QueryBuilder::<Sqlite>::new(
            "INSERT INTO chunks(id, file_id, ordinal, kind, symbol, parent, start_byte, \
             end_byte, start_line, end_line, text, outline, hash, tokens) ",
        );
        b.push_values(batch, |mut row, (id, file_id, ordinal, c)| {
            row.push_bind(*id)
                .push_bind(*file_id)
                .push_bind(i64::try_from(*ordinal).unwrap_or(i64::MAX))
                .push_bind(enum_name(&c.kind))
                .push_bind(&c.symbol)
                .push_bind(&c.parent)
                .push_bind(c.start_byte)
                .push_bind(c.end_byte)
                .push_bind(c.start_line)
                .push_bind(c.end_line)
                .push_bind(&c.text)
                .push_bind(encode_outline(&c.outline))
                .push_bind(&c.hash)
                .push_bind(c.tokens);
        });
        b.build().execute(&mut **tx).await?;
    }
    for batch in symbol_rows.chunks(rows_per_insert(5)) {
        let mut b = QueryBuilder::<Sqlite>::new(
            "INSERT INTO symbols(chunk_id, name, name_lower, kind, line) ",
        );
        b.push_values(batch, |mut row, (id, d)| {
            row.push_bind(*id)
                .push_bind(&d.name)
                .push_bind(d.name.to_lowercase())
                .push_bind(enum_name(&d.kind))
                .push_bind(d.line);
        });
        b.build().execute(&mut **tx).await?;
    }
    for batch in ref_rows.chunks(rows_per_insert(4)) {
        let mut b =
            QueryBuilder::<Sqlite>::new("INSERT INTO refs(chunk_id, name_lower, kind, line) ");
        b.push_values(batch, |mut row, (id, r)| {
            row.push_bind(*id)
                .push_bind(r.name.to_lowercase())
                .push_bind(ref_kind_name(r.kind))
                .push_bind(r.line);
        });
        b.build().execute(&mut **tx).await?;
    }
    Ok(())
}

fn file_state_from_row(r: &sqlx::sqlite::SqliteRow) -> Result<(String, FileState)> {
    let size: i64 = r.try_get(2)?;
    Ok((
        r.try_get::<String, _>(1)?,
        FileState {
            id: r.try_get(0)?,
            size: u64::try_from(size).unwrap_or(0),
            mtime_ns: r.try_get(3)?,
            hash: r.try_get(4)?,
        },
    ))
}

fn ref_kind_name(kind: RefKind) -> &'static str {
    match kind {
        RefKind::Call => "call",
        RefKind::Import => "import",
        RefKind::Type => "type",
    }
}

async fn bump_generation(tx: &mut Transaction<'_, Sqlite>) -> Result<u64> {
    let current: Option<String> =
        sqlx::query_scalar("SELECT value FROM meta WHERE key = 'generation'")
            .fetch_optional(&mut **tx)
            .await?;
    let next = current.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) + 1;
    sqlx::query("INSERT OR REPLACE INTO meta(key, value) VALUES ('generation', ?)")
        .bind(next.to_string())
        .execute(&mut **tx)
        .await?;
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty catalog in a temporary directory, which lives as long as
    /// the returned guard.
    async fn scratch_catalog() -> (tempfile::TempDir, Catalog) {
        let dir = tempfile::tempdir().expect("tempdir");
        let catalog = Catalog::open(&dir.path().join("catalog.sqlite"))
            .await
            .expect("open");
        (dir, catalog)
    }

    /// A log above the limit is folded into the file and truncated, and
    /// what it held is still read; at or below it, nothing happens.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_large_write_ahead_log_is_folded_into_the_file() {
        let (dir, catalog) = scratch_catalog().await;
        let wal = dir.path().join("catalog.sqlite-wal");
        let mut staging = catalog.begin().await.expect("begin");
        staging
            .insert(vec![file("a.rs", "alpha", "x"), file("b.rs", "beta", "y")])
            .await
            .expect("insert");
        staging.commit().await.expect("commit");
        let before = std::fs::metadata(&wal).expect("a log").len();
        assert!(before > 0);
        assert!(!catalog.fold_wal_above(before).await.expect("fold"));
        assert_eq!(std::fs::metadata(&wal).expect("a log").len(), before);
        assert!(catalog.fold_wal_above(0).await.expect("fold"));
        assert_eq!(std::fs::metadata(&wal).expect("a log").len(), 0);
        assert!(!catalog.fold_wal_above(0).await.expect("fold"));
        assert_eq!(catalog.paths().await.expect("paths"), ["a.rs", "b.rs"]);
        catalog.close().await;
    }

    /// (name, definition) of every explicit index.
    async fn indexes(catalog: &Catalog) -> Vec<(String, String)> {
        sqlx::query_as(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL \
             ORDER BY name",
        )
        .fetch_all(&catalog.pool)
        .await
        .expect("list indexes")
    }

    /// One file of one chunk that defines `name` and calls `callee`.
    fn file(path: &str, name: &str, callee: &str) -> FileUpdate {
        let text = format!("fn {name}() {{ {callee}() }}\n");
        FileUpdate {
            path: path.into(),
            size: text.len() as u64,
            mtime_ns: 1,
            hash: blake3::hash(text.as_bytes()).to_hex().to_string(),
            language: "rust".into(),
            role: Role::Code,
            chunks: vec![Chunk {
                id: 0,
                path: path.into(),
                language: "rust".into(),
                kind: ChunkKind::Function,
                symbol: Some(name.into()),
                parent: None,
                start_byte: 0,
                end_byte: u32::try_from(text.len()).expect("short"),
                start_line: 1,
                end_line: 1,
                role: Role::Code,
                hash: blake3::hash(text.as_bytes()).to_hex().to_string(),
                tokens: 8,
                outline: Vec::new(),
                text,
            }],
            defs: vec![SymbolDef {
                name: name.into(),
                kind: ChunkKind::Function,
                line: 1,
                chunk: 0,
            }],
            refs: vec![SymbolRef {
                name: callee.into(),
                kind: RefKind::Call,
                line: 1,
                chunk: 0,
            }],
        }
    }

    /// A step's commit hands its connection back to the pool without the
    /// statements the step prepared: a bulk load's `INSERT`s of up to
    /// 10,000 parameters hold megabytes of compiled program each.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_commit_leaves_no_statement_prepared() {
        let (_dir, catalog) = scratch_catalog().await;
        let files: Vec<FileUpdate> = (0..1500)
            .map(|i| file(&format!("f{i}.rs"), &format!("fun{i}"), "callee"))
            .collect();
        let mut staging = catalog.begin().await.expect("begin");
        // A temporary table lives on its connection only: it marks the
        // step's connection among the pool's.
        sqlx::query("CREATE TEMP TABLE step_marker (x)")
            .persistent(false)
            .execute(&mut *staging.tx)
            .await
            .expect("mark");
        staging.insert(files).await.expect("insert");
        staging.remove(&["f1.rs".to_owned()]).await.expect("remove");
        assert!(staging.tx.cached_statements_size() > 3);
        staging.commit().await.expect("commit");
        // A dropped connection goes back to the pool from a task of its
        // own; then every connection is held at once, so each is seen.
        for _ in 0..500 {
            if catalog.pool.num_idle() == catalog.pool.size() as usize {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let mut held = Vec::new();
        for _ in 0..catalog.pool.size() {
            held.push(catalog.pool.acquire().await.expect("connection"));
        }
        let mut marked = Vec::new();
        for conn in &mut held {
            let cached = conn.cached_statements_size();
            let (is_step,): (bool,) = sqlx::query_as(
                "SELECT count(*) > 0 FROM temp.sqlite_master WHERE name = 'step_marker'",
            )
            .persistent(false)
            .fetch_one(&mut **conn)
            .await
            .expect("look for the marker");
            if is_step {
                marked.push(cached);
            }
        }
        assert_eq!(marked, vec![0], "statements on the step's connection");
        drop(held);
        assert_eq!(catalog.counts().await.expect("counts"), (1499, 1499));
        catalog.close().await;
    }

    /// The bulk load of an empty catalog drops the secondary indexes inside
    /// its transaction: a rollback brings them back untouched, a commit
    /// builds them again exactly as the migrations defined them, and a
    /// step on a catalog that has files keeps them as they are.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_bulk_load_builds_its_indexes_again_and_a_rollback_keeps_them() {
        let (_dir, catalog) = scratch_catalog().await;
        let before = indexes(&catalog).await;
        for name in ["chunks_hash", "refs_name_chunk", "symbols_name_chunk"] {
            assert!(before.iter().any(|(n, _)| n == name), "{name}: {before:?}");
        }

        // The commit sorts with helper threads: the bundled SQLite has them.
        let mut conn = catalog.pool.acquire().await.expect("connection");
        let threads: i64 = sqlx::query_scalar("PRAGMA threads = 2")
            .fetch_one(&mut *conn)
            .await
            .expect("pragma");
        assert_eq!(threads, 2);
        sqlx::query("PRAGMA threads = 0")
            .execute(&mut *conn)
            .await
            .expect("pragma");
        drop(conn);

        let mut staging = catalog.begin().await.expect("begin");
        assert_eq!(staging.deferred.len(), before.len(), "every index deferred");
        staging
            .insert(vec![file("a.rs", "alpha", "beta")])
            .await
            .expect("insert");
        drop(staging);
        assert_eq!(indexes(&catalog).await, before);
        assert_eq!(catalog.counts().await.expect("counts"), (0, 0));

        let mut staging = catalog.begin().await.expect("begin");
        let inserted = staging
            .insert(vec![file("a.rs", "alpha", "beta")])
            .await
            .expect("insert");
        assert_eq!(inserted.defined.len(), 1);
        let applied = staging.commit().await.expect("commit");
        assert_eq!(applied.inserted, vec![inserted.chunks[0].id]);
        assert_eq!(indexes(&catalog).await, before);
        assert_eq!(catalog.counts().await.expect("counts"), (1, 1));

        let mut staging = catalog.begin().await.expect("begin");
        assert!(
            staging.deferred.is_empty(),
            "a catalog with files keeps its indexes"
        );
        staging.remove(&["a.rs".to_owned()]).await.expect("remove");
        staging
            .insert(vec![
                file("a.rs", "gamma", "beta"),
                file("b.rs", "beta", "gamma"),
            ])
            .await
            .expect("insert");
        let applied = staging.commit().await.expect("commit");
        assert_eq!(applied.removed_ids.len(), 1);
        assert_eq!(applied.inserted_paths, ["a.rs", "b.rs"]);
        assert_eq!(indexes(&catalog).await, before);
        assert_eq!(catalog.counts().await.expect("counts"), (2, 2));
        catalog.close().await;
    }

    /// A question's chunks, read in two halves at once past
    /// `PARALLEL_READ_MIN`, come back each once, whatever order they were
    /// asked in; an id naming nothing is left out.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn chunks_read_in_halves_come_back_each_once() {
        let (_dir, catalog) = scratch_catalog().await;
        let n = 4 * PARALLEL_READ_MIN + 31;
        let files: Vec<FileUpdate> = (0..n)
            .map(|i| file(&format!("f{i}.rs"), &format!("name{i}"), "x"))
            .collect();
        let mut staging = catalog.begin().await.expect("begin");
        staging.insert(files).await.expect("insert");
        let applied = staging.commit().await.expect("commit");
        // Every other id, out of order, and one that names nothing.
        let mut asked: Vec<ChunkId> = applied.inserted.iter().step_by(2).copied().collect();
        asked.reverse();
        asked.push(ChunkId::MAX);
        for ids in [&asked[..], &asked[..PARALLEL_READ_MIN], &[][..]] {
            let mut got: Vec<ChunkId> = catalog
                .chunks(ids)
                .await
                .expect("chunks")
                .iter()
                .map(|(c, _)| c.id)
                .collect();
            got.sort_unstable();
            let mut want: Vec<ChunkId> = ids
                .iter()
                .copied()
                .filter(|id| *id != ChunkId::MAX)
                .collect();
            want.sort_unstable();
            assert_eq!(got, want);
        }
        catalog.close().await;
    }

    /// Paging through every chunk's vector a page at a time, as a rebuild
    /// of the vector index does, meets each chunk with a vector once, in
    /// id order, and stops on an empty page.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn vectors_page_through_every_chunk_in_id_order() {
        let (_dir, catalog) = scratch_catalog().await;
        let files: Vec<FileUpdate> = (0..5)
            .map(|i| file(&format!("f{i}.rs"), &format!("name{i}"), "x"))
            .collect();
        let hashes: Vec<String> = files.iter().map(|f| f.chunks[0].hash.clone()).collect();
        let mut staging = catalog.begin().await.expect("begin");
        staging.insert(files).await.expect("insert");
        let applied = staging.commit().await.expect("commit");
        // Four of the five have a vector; the third does not.
        let stored: Vec<(String, Vec<f32>)> = hashes
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 2)
            .map(|(i, h)| (h.clone(), vec![i as f32 + 1.0, 0.5]))
            .collect();
        catalog.store_embeddings("m", &stored).await.expect("store");
        let mut seen = Vec::new();
        let mut after = 0;
        loop {
            let page = catalog
                .chunk_vectors_after("m", after, 2)
                .await
                .expect("page");
            assert!(page.len() <= 2);
            let Some(&(last, _)) = page.last() else {
                break;
            };
            after = last;
            seen.extend(page);
        }
        let mut expected: Vec<ChunkId> = applied.inserted.clone();
        let without = applied.inserted[2];
        expected.retain(|id| *id != without);
        expected.sort_unstable();
        assert_eq!(seen.iter().map(|(id, _)| *id).collect::<Vec<_>>(), expected);
        assert!(seen.iter().all(|(_, v)| v.len() == 2));
        assert!(
            catalog
                .chunk_vectors_after("other", 0, 10)
                .await
                .expect("page")
                .is_empty()
        );
        catalog.close().await;
    }

    /// A catalog an older version wrote still holds the code model's
    /// cached vectors; opening it drops them, and keeps every other
    /// model's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn opening_an_older_catalog_drops_the_code_models_cached_vectors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("catalog.sqlite");
        let catalog = Catalog::open(&path).await.expect("open");
        let files = vec![file("a.rs", "alpha", "x"), file("b.rs", "beta", "y")];
        let hashes: Vec<String> = files.iter().map(|f| f.chunks[0].hash.clone()).collect();
        let mut staging = catalog.begin().await.expect("begin");
        staging.insert(files).await.expect("insert");
        staging.commit().await.expect("commit");
        let rows: Vec<(String, Vec<f32>)> =
            hashes.iter().map(|h| (h.clone(), vec![1.0, 0.5])).collect();
        for model in ["loupe-code:0123456789abcdef/w1", "static:minilm", "http:m"] {
            catalog.store_embeddings(model, &rows).await.expect("store");
        }
        // As if written before the migration: it runs again on the next open.
        sqlx::query("DELETE FROM _sqlx_migrations WHERE version = 4")
            .execute(&catalog.pool)
            .await
            .expect("forget the migration");
        catalog.close().await;

        let catalog = Catalog::open(&path).await.expect("reopen");
        let missing = |model: &'static str| {
            let catalog = &catalog;
            async move {
                catalog
                    .chunks_missing_embeddings(model)
                    .await
                    .expect("missing")
                    .len()
            }
        };
        assert_eq!(missing("loupe-code:0123456789abcdef/w1").await, 2);
        assert_eq!(missing("static:minilm").await, 0);
        assert_eq!(missing("http:m").await, 0);
        catalog.close().await;
    }
}

//! The team's shared store: what indexing derives from a file's bytes (its
//! parse: chunks, outlines, token counts, symbols, references) and what the
//! code model makes of a chunk (its vector), kept on a PostgreSQL server a
//! team already runs, so that a second laptop, a CI job or an agent's
//! sandbox pulls what the first one derived instead of deriving it again.
//!
//! ```text
//! index run: read + hash a batch ─ pull(keys) ─┬─ hit: rebuilt from the row + the local bytes
//!                                              └─ miss: derived locally ─ push (in the background)
//! ```
//!
//! - **Content-addressed.** A parse is keyed by the blake3 of the file's
//!   bytes and the [deriver](crate::indexing::derived::deriver) (chunking
//!   code and settings, language); a vector by the blake3 of the text the
//!   model read and the model's id. No key names a path or a machine, so
//!   two checkouts at different paths share every row they have in common.
//! - **Privacy by construction**: a client only asks for keys of bytes it
//!   holds; nothing here lists rows.
//! - **Faults never cost an answer.** Every call has a deadline, and a
//!   pull slower than deriving (`slow_for`) counts as a failure. The first
//!   failure of a run ([`SharedRun`]) turns the store off for the rest of
//!   that run, which derives locally what it did not get and says why
//!   once ([`SharedReport::fault`]). A row that fails validation (its
//!   digest, its decoding, its spans against the local bytes, a vector's
//!   length) is counted, ignored and derived locally.
//! - **Rows are immutable**: a push is one `INSERT … ON CONFLICT DO
//!   NOTHING` statement per batch (atomic: a killed push leaves nothing
//!   half-visible), so two writers of the same content are harmless.
//! - `SharedMode::Read` never writes; the server enforces it too when
//!   the role has no INSERT right.
//!
//! Does not parse, embed or rank: the index run (`project/write.rs`)
//! decides what to pull and push, and [`crate::indexing::derived`] turns
//! a row back into a file's chunks.

use serde::Serialize;
use sqlx::Row as _;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use std::collections::HashMap;
use std::future::Future;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long one call to the store may take before the run gives up on it
/// (connecting included), unless configured.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// The environment variable naming the store.
pub const URL_ENV: &str = "LOUPE_SHARED_URL";
/// The environment variable naming the mode (`read`, `read-write`).
pub const MODE_ENV: &str = "LOUPE_SHARED_MODE";
/// Keys asked for, or rows written, per statement.
pub const ROWS_PER_STATEMENT: usize = 1_000;

/// Whether this member writes what it derives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SharedMode {
    /// Pull, and push what was derived locally.
    #[default]
    ReadWrite,
    /// Pull only (CI jobs, agents, members without write rights).
    Read,
}

impl FromStr for SharedMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-write" | "rw" => Ok(Self::ReadWrite),
            "read" | "ro" => Ok(Self::Read),
            other => Err(format!(
                "shared mode `{other}`: expected `read` or `read-write`"
            )),
        }
    }
}

/// Where the shared store is and how to use it. The URL never carries a
/// password ([`SharedConfig::new`]); `Debug` and [`SharedConfig::shown`]
/// print it without one anyway.
#[derive(Clone)]
pub struct SharedConfig {
    url: String,
    /// Pull only, or pull and push.
    pub mode: SharedMode,
    /// The deadline of each call.
    pub timeout: Duration,
}

impl std::fmt::Debug for SharedConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedConfig")
            .field("url", &self.shown())
            .field("mode", &self.mode)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl SharedConfig {
    /// A store at `url` (`postgres://user@host:port/db`). A URL that
    /// carries a password is refused unless `password_allowed` (it came
    /// from the environment): a password belongs in `PGPASSWORD` or a
    /// password file (`~/.pgpass`, `PGPASSFILE`), never in a committed
    /// `.loupe.toml` or a command line others can read.
    pub fn new(url: &str, mode: SharedMode, password_allowed: bool) -> Result<Self, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("shared store URL: {e}"))?;
        if !matches!(parsed.scheme(), "postgres" | "postgresql") {
            return Err(format!(
                "shared store URL: scheme `{}`: expected postgres://",
                parsed.scheme()
            ));
        }
        let has_password = parsed.password().is_some()
            || parsed
                .query_pairs()
                .any(|(k, _)| k.eq_ignore_ascii_case("password"));
        if has_password && !password_allowed {
            return Err(
                "shared store URL: it carries a password; put the password in \
                 PGPASSWORD or a password file (~/.pgpass) instead"
                    .into(),
            );
        }
        PgConnectOptions::from_str(url).map_err(|e| format!("shared store URL: {e}"))?;
        Ok(Self {
            url: url.to_owned(),
            mode,
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// The store a process uses for the project at `root`, if any: `url`
    /// (a command-line flag), else [`URL_ENV`] (which may carry the
    /// password: the environment is where one belongs), else `[shared]`
    /// in the project's `.loupe.toml`; `mode` likewise, else
    /// [`MODE_ENV`], else the table's, else read-write.
    pub fn resolve(
        url: Option<&str>,
        mode: Option<&str>,
        root: &std::path::Path,
    ) -> Result<Option<Self>, String> {
        let table = crate::team::shared_store(root)?;
        let from_env = std::env::var(URL_ENV).ok().filter(|u| !u.trim().is_empty());
        let (url, password_allowed) = match (url, from_env) {
            (Some(url), _) => (url.to_owned(), false),
            (None, Some(url)) => (url, true),
            (None, None) => match &table {
                Some(t) => (t.url.clone(), false),
                None => return Ok(None),
            },
        };
        let mode = mode
            .map(str::to_owned)
            .or_else(|| std::env::var(MODE_ENV).ok())
            .or_else(|| table.and_then(|t| t.mode));
        let mode = match mode {
            Some(m) => m.parse()?,
            None => SharedMode::default(),
        };
        Self::new(&url, mode, password_allowed).map(Some)
    }

    /// The URL without its password or query, for messages and status.
    pub fn shown(&self) -> String {
        match url::Url::parse(&self.url) {
            Ok(mut u) => {
                let _ = u.set_password(None);
                u.set_query(None);
                u.to_string()
            }
            Err(_) => "(unparsable URL)".into(),
        }
    }
}

/// A connection pool to the store, opened lazily: building one never
/// waits on the server.
pub struct Shared {
    pool: PgPool,
    cfg: SharedConfig,
    /// The schema check (or migration) of this process, done once.
    ready: tokio::sync::OnceCell<()>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("cfg", &self.cfg).finish()
    }
}

/// A row's key: the blake3 of the content and who derived what from it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// blake3 of the bytes (a file's, or a model input's).
    pub content: [u8; 32],
    /// The deriver (parses) or the model id (vectors).
    pub by: String,
}

impl Key {
    /// The key of `content` (a hex blake3, as the catalog stores file
    /// hashes) as derived `by`; `None` if `content` is not one.
    pub fn from_hex(content: &str, by: &str) -> Option<Self> {
        let hash = blake3::Hash::from_hex(content).ok()?;
        Some(Self {
            content: *hash.as_bytes(),
            by: by.to_owned(),
        })
    }

    /// The key of a model input.
    pub fn of_input(text: &str, model: &str) -> Self {
        Self {
            content: *blake3::hash(text.as_bytes()).as_bytes(),
            by: model.to_owned(),
        }
    }

    /// The digest a row of this key and `payload` carries.
    fn digest(&self, payload: &[u8]) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(&self.content);
        h.update(&(self.by.len() as u64).to_le_bytes());
        h.update(self.by.as_bytes());
        h.update(payload);
        *h.finalize().as_bytes()
    }
}

/// A row as pushed: its key and its bytes.
pub type Row = (Key, Vec<u8>);

/// The two tables, each a kind of row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// A file's parse ([`crate::indexing::derived::Derived::to_row`]).
    Parses,
    /// A code vector (little-endian f32).
    Vectors,
}

impl Table {
    fn sql(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Table::Parses => ("loupe_parses", "content", "deriver", "payload"),
            Table::Vectors => ("loupe_vectors", "input", "model", "vector"),
        }
    }
}

/// What the store holds, per table and deriver (`loupe shared status`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Holding {
    /// `parses` or `vectors`.
    pub table: &'static str,
    /// The deriver or model.
    pub by: String,
    /// Rows.
    pub rows: i64,
    /// Payload bytes.
    pub bytes: i64,
}

impl Shared {
    /// A pool for `cfg`; nothing is sent until the first call.
    pub fn new(cfg: SharedConfig) -> Result<Self, String> {
        let timeout_ms = cfg.timeout.as_millis().max(1).to_string();
        let options = PgConnectOptions::from_str(&cfg.url)
            .map_err(|e| format!("shared store URL: {e}"))?
            .application_name("loupe")
            // The server gives up on a statement too, not only the client.
            .options([("statement_timeout", timeout_ms.as_str())]);
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .min_connections(0)
            // Past the call's own deadline, so that the deadline speaks.
            .acquire_timeout(cfg.timeout + Duration::from_secs(1))
            .connect_lazy_with(options);
        Ok(Self {
            pool,
            cfg,
            ready: tokio::sync::OnceCell::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SharedConfig {
        &self.cfg
    }

    /// `fut` within the deadline, its error as a message.
    async fn within<T, E: std::fmt::Display>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, E>>,
    ) -> Result<T, String> {
        match tokio::time::timeout(self.cfg.timeout, fut).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(format!("{what}: {e}")),
            Err(_) => Err(format!(
                "{what}: no answer within {:.1} s",
                self.cfg.timeout.as_secs_f64()
            )),
        }
    }

    /// Check the schema once per process: a writer brings it up to date
    /// (sqlx's migrator, which takes a lock on the server), a reader only
    /// checks the tables are there.
    pub async fn prepare(&self) -> Result<(), String> {
        self.ready
            .get_or_try_init(|| async {
                match self.cfg.mode {
                    SharedMode::ReadWrite => {
                        let migrator = sqlx::migrate!("./migrations-shared");
                        self.within("migrating the shared store", migrator.run(&self.pool))
                            .await
                    }
                    SharedMode::Read => self
                        .within(
                            "reading the shared store's tables",
                            sqlx::query("SELECT 1 FROM loupe_parses, loupe_vectors LIMIT 0")
                                .execute(&self.pool),
                        )
                        .await
                        .map(|_| ()),
                }
            })
            .await
            .map(|_| ())
    }

    /// The rows of `keys` the store holds whose digest checks out, and the
    /// keys of the rows it held that did not.
    pub async fn pull(
        &self,
        table: Table,
        keys: &[Key],
    ) -> Result<(HashMap<Key, Vec<u8>>, Vec<Key>), String> {
        self.prepare().await?;
        let (name, content, by, payload) = table.sql();
        let sql = format!(
            "SELECT t.{content}, t.{by}, t.{payload}, t.digest FROM {name} t \
             JOIN unnest($1::bytea[], $2::text[]) AS k(c, b) ON t.{content} = k.c AND t.{by} = k.b"
        );
        let mut found = HashMap::new();
        let mut damaged = Vec::new();
        for page in keys.chunks(ROWS_PER_STATEMENT) {
            let contents: Vec<&[u8]> = page.iter().map(|k| &k.content[..]).collect();
            let bys: Vec<&str> = page.iter().map(|k| k.by.as_str()).collect();
            let rows = self
                .within(
                    "pulling from the shared store",
                    sqlx::query(&sql)
                        .bind(&contents)
                        .bind(&bys)
                        .fetch_all(&self.pool),
                )
                .await?;
            for row in rows {
                let content: Vec<u8> = row.try_get(0).map_err(|e| e.to_string())?;
                let by: String = row.try_get(1).map_err(|e| e.to_string())?;
                let body: Vec<u8> = row.try_get(2).map_err(|e| e.to_string())?;
                let digest: Vec<u8> = row.try_get(3).map_err(|e| e.to_string())?;
                // The join matched a key we asked for: its content is 32 bytes.
                let Ok(content) = <[u8; 32]>::try_from(content.as_slice()) else {
                    continue;
                };
                let key = Key { content, by };
                if key.digest(&body)[..] != digest[..] {
                    damaged.push(key);
                    continue;
                }
                found.insert(key, body);
            }
        }
        Ok((found, damaged))
    }

    /// Write `rows`, a statement (and so a transaction) per
    /// [`ROWS_PER_STATEMENT`]. Keys already there are left as they are,
    /// unless `replace` (rows that failed validation here: a good row
    /// takes the damaged one's place). Returns how many rows were written.
    pub async fn push(&self, table: Table, rows: &[Row], replace: bool) -> Result<u64, String> {
        if self.cfg.mode == SharedMode::Read {
            return Ok(0);
        }
        self.prepare().await?;
        let (name, content, by, payload) = table.sql();
        let conflict = if replace {
            format!(
                "({content}, {by}) DO UPDATE SET {payload} = EXCLUDED.{payload}, digest = EXCLUDED.digest"
            )
        } else {
            "DO NOTHING".to_owned()
        };
        let sql = format!(
            "INSERT INTO {name} ({content}, {by}, {payload}, digest) \
             SELECT * FROM unnest($1::bytea[], $2::text[], $3::bytea[], $4::bytea[]) \
             ON CONFLICT {conflict}"
        );
        let mut written = 0;
        for page in rows.chunks(ROWS_PER_STATEMENT) {
            let contents: Vec<&[u8]> = page.iter().map(|(k, _)| &k.content[..]).collect();
            let bys: Vec<&str> = page.iter().map(|(k, _)| k.by.as_str()).collect();
            let bodies: Vec<&[u8]> = page.iter().map(|(_, b)| b.as_slice()).collect();
            let digests: Vec<Vec<u8>> = page.iter().map(|(k, b)| k.digest(b).to_vec()).collect();
            let done = self
                .within(
                    "pushing to the shared store",
                    sqlx::query(&sql)
                        .bind(&contents)
                        .bind(&bys)
                        .bind(&bodies)
                        .bind(&digests)
                        .execute(&self.pool),
                )
                .await?;
            written += done.rows_affected();
        }
        Ok(written)
    }

    /// Rows and bytes per table and deriver.
    pub async fn holding(&self) -> Result<Vec<Holding>, String> {
        self.prepare().await?;
        let mut out = Vec::new();
        for (table, label) in [(Table::Parses, "parses"), (Table::Vectors, "vectors")] {
            let (name, _, by, payload) = table.sql();
            let sql = format!(
                "SELECT {by}, count(*)::int8, coalesce(sum(octet_length({payload})), 0)::int8 \
                 FROM {name} GROUP BY {by} ORDER BY {by}"
            );
            let rows = self
                .within(
                    "reading the shared store",
                    sqlx::query(&sql).fetch_all(&self.pool),
                )
                .await?;
            for row in rows {
                out.push(Holding {
                    table: label,
                    by: row.try_get(0).map_err(|e| e.to_string())?,
                    rows: row.try_get(1).map_err(|e| e.to_string())?,
                    bytes: row.try_get(2).map_err(|e| e.to_string())?,
                });
            }
        }
        Ok(out)
    }

    /// Delete the parses no deriver starting with `parses` wrote (an
    /// older build's) and the vectors of every model not in `models` (a
    /// retired model's). Returns how many rows went.
    pub async fn gc(&self, parses: &str, models: &[String]) -> Result<u64, String> {
        if self.cfg.mode == SharedMode::Read {
            return Err("the shared store is read-only here (--shared-mode read)".into());
        }
        self.prepare().await?;
        let parses = self
            .within(
                "collecting the shared store's garbage",
                sqlx::query("DELETE FROM loupe_parses WHERE NOT starts_with(deriver, $1)")
                    .bind(parses)
                    .execute(&self.pool),
            )
            .await?;
        let vectors = self
            .within(
                "collecting the shared store's garbage",
                sqlx::query("DELETE FROM loupe_vectors WHERE NOT (model = ANY($1::text[]))")
                    .bind(models)
                    .execute(&self.pool),
            )
            .await?;
        Ok(parses.rows_affected() + vectors.rows_affected())
    }
}

/// One index run's use of the store: its counts, and its first fault,
/// after which the run stops asking.
#[derive(Debug)]
pub struct SharedRun {
    store: Arc<Shared>,
    fault: Mutex<Option<String>>,
    files_pulled: AtomicU64,
    files_pushed: AtomicU64,
    vectors_pulled: AtomicU64,
    vectors_pushed: AtomicU64,
    rejected: AtomicU64,
    /// Keys whose row failed validation: this run's rows replace them.
    damaged: Mutex<std::collections::HashSet<Key>>,
    pushes: Mutex<tokio::task::JoinSet<()>>,
    /// The runtime pushes run on (a parse thread pushes from outside it).
    runtime: tokio::runtime::Handle,
}

/// What a run got from the store and gave it.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct SharedReport {
    /// The store, without its password.
    pub store: String,
    /// Files whose parse came from the store.
    pub files_pulled: u64,
    /// Parses this run derived and wrote to the store.
    pub files_pushed: u64,
    /// Chunks whose vector came from the store.
    pub vectors_pulled: u64,
    /// Vectors this run computed and wrote to the store.
    pub vectors_pushed: u64,
    /// Rows the store held that failed validation (derived locally).
    pub rejected: u64,
    /// Why the run stopped asking the store, if it did.
    pub fault: Option<String>,
}

impl SharedRun {
    /// A run against `store`, pushing on the current runtime.
    pub fn new(store: Arc<Shared>) -> Self {
        Self {
            runtime: tokio::runtime::Handle::current(),
            store,
            fault: Mutex::new(None),
            files_pulled: AtomicU64::new(0),
            files_pushed: AtomicU64::new(0),
            vectors_pulled: AtomicU64::new(0),
            vectors_pushed: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            damaged: Mutex::new(std::collections::HashSet::new()),
            pushes: Mutex::new(tokio::task::JoinSet::new()),
        }
    }

    fn faulted(&self) -> bool {
        self.fault.lock().map(|f| f.is_some()).unwrap_or(true)
    }

    /// Record the run's first fault, and say it once.
    fn fail(&self, why: String) {
        if let Ok(mut fault) = self.fault.lock()
            && fault.is_none()
        {
            tracing::warn!(
                "shared store {}: {why}; this run derives the rest locally",
                self.store.cfg.shown()
            );
            *fault = Some(why);
        }
    }

    /// The rows of `keys` (none once the run has faulted).
    pub async fn pull(&self, table: Table, keys: &[Key]) -> HashMap<Key, Vec<u8>> {
        if keys.is_empty() || self.faulted() {
            return HashMap::new();
        }
        // Connecting and the schema check are not the pace of a pull.
        if let Err(why) = self.store.prepare().await {
            self.fail(why);
            return HashMap::new();
        }
        let started = std::time::Instant::now();
        match self.store.pull(table, keys).await {
            Ok((found, damaged)) => {
                self.reject(damaged);
                let took = started.elapsed();
                if took > slow_for(keys.len()) {
                    // Within each deadline, but at this pace the run would
                    // wait on the store longer than it derives: keep what
                    // came, ask no more.
                    self.fail(format!(
                        "answering {} keys took {:.1} s, slower than deriving here",
                        keys.len(),
                        took.as_secs_f64()
                    ));
                }
                found
            }
            Err(why) => {
                self.fail(why);
                HashMap::new()
            }
        }
    }

    /// Count `n` rows of `table` used.
    pub fn used(&self, table: Table, n: u64) {
        let counter = match table {
            Table::Parses => &self.files_pulled,
            Table::Vectors => &self.vectors_pulled,
        };
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// Count the rows of `keys` as damaged (failed a check): the rows this
    /// run derives for them replace them.
    pub fn reject(&self, keys: impl IntoIterator<Item = Key>) {
        if let Ok(mut damaged) = self.damaged.lock() {
            for key in keys {
                if damaged.insert(key) {
                    self.rejected.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Write `rows` in the background; the run
    /// waits for every push in [`SharedRun::finish`].
    pub fn push(self: &Arc<Self>, table: Table, rows: Vec<Row>) {
        if rows.is_empty() || self.store.cfg.mode == SharedMode::Read || self.faulted() {
            return;
        }
        let (repairs, rows): (Vec<_>, Vec<_>) = match self.damaged.lock() {
            Ok(damaged) => rows.into_iter().partition(|(k, _)| damaged.contains(k)),
            Err(_) => (Vec::new(), rows),
        };
        let run = Arc::clone(self);
        let Ok(mut pushes) = self.pushes.lock() else {
            return;
        };
        pushes.spawn_on(
            async move {
                if run.faulted() {
                    return;
                }
                let written = match run.store.push(table, &rows, false).await {
                    Ok(n) if !repairs.is_empty() => {
                        run.store.push(table, &repairs, true).await.map(|m| n + m)
                    }
                    done => done,
                };
                match written {
                    Ok(written) => {
                        let counter = match table {
                            Table::Parses => &run.files_pushed,
                            Table::Vectors => &run.vectors_pushed,
                        };
                        counter.fetch_add(written, Ordering::Relaxed);
                    }
                    Err(why) => run.fail(why),
                }
            },
            &self.runtime,
        );
    }

    /// Wait for the run's pushes (each bounded by the store's deadline),
    /// then report.
    pub async fn finish(&self) -> SharedReport {
        let pushes = self
            .pushes
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        let _ = pushes.join_all().await;
        SharedReport {
            store: self.store.cfg.shown(),
            files_pulled: self.files_pulled.load(Ordering::Relaxed),
            files_pushed: self.files_pushed.load(Ordering::Relaxed),
            vectors_pulled: self.vectors_pulled.load(Ordering::Relaxed),
            vectors_pushed: self.vectors_pushed.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            fault: self.fault.lock().ok().and_then(|f| f.clone()),
        }
    }
}

/// How long a pull of `keys` keys may take before the run stops asking:
/// a healthy store answers 1,000 keys in 7–80 ms (BENCHMARKS.md, "The
/// shared store"), and the local parse costs about 2 ms a file.
fn slow_for(keys: usize) -> Duration {
    Duration::from_millis(250) + Duration::from_millis(keys as u64)
}

/// A vector as a row's bytes.
pub fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A row's bytes as a vector of `dim` finite values, or `None`.
pub fn vector_from(bytes: &[u8], dim: usize) -> Option<Vec<f32>> {
    if bytes.len() != dim * 4 {
        return None;
    }
    let v: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    v.iter().all(|x| x.is_finite()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_a_committed_url_is_refused_and_never_shown() {
        let with = "postgres://team:hunter2@db.example:5433/loupe";
        let err = SharedConfig::new(with, SharedMode::Read, false).unwrap_err();
        assert!(err.contains("PGPASSWORD"), "{err}");
        assert!(!err.contains("hunter2"));
        let err = SharedConfig::new(
            "postgres://team@db.example/loupe?password=hunter2",
            SharedMode::Read,
            false,
        )
        .unwrap_err();
        assert!(err.contains("password"), "{err}");
        let cfg = SharedConfig::new(with, SharedMode::Read, true).unwrap();
        assert_eq!(cfg.shown(), "postgres://team@db.example:5433/loupe");
        assert!(!format!("{cfg:?}").contains("hunter2"));
    }

    #[test]
    fn only_postgres_urls_and_known_modes_are_taken() {
        assert!(SharedConfig::new("mysql://x@y/z", SharedMode::Read, false).is_err());
        assert!(SharedConfig::new("not a url", SharedMode::Read, false).is_err());
        assert_eq!("read".parse::<SharedMode>(), Ok(SharedMode::Read));
        assert_eq!(
            "read-write".parse::<SharedMode>(),
            Ok(SharedMode::ReadWrite)
        );
        assert!("write".parse::<SharedMode>().is_err());
    }

    #[test]
    fn a_row_moved_under_another_key_fails_its_digest() {
        let a = Key::of_input("fn a() {}", "m");
        let b = Key::of_input("fn b() {}", "m");
        let other_model = Key::of_input("fn a() {}", "n");
        let payload = b"payload";
        assert_ne!(a.digest(payload), b.digest(payload));
        assert_ne!(a.digest(payload), other_model.digest(payload));
        assert_ne!(a.digest(payload), a.digest(b"payloaD"));
    }

    #[test]
    fn vectors_of_the_wrong_length_or_not_finite_are_refused() {
        let v = vec![0.5f32, -1.0, 2.25];
        let bytes = vector_bytes(&v);
        assert_eq!(vector_from(&bytes, 3), Some(v));
        assert_eq!(vector_from(&bytes[..8], 3), None);
        assert_eq!(vector_from(&vector_bytes(&[f32::NAN, 0.0, 0.0]), 3), None);
    }
}

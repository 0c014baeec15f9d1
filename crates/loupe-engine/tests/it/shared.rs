//! The team's shared store against a real PostgreSQL server
//! (`loupe_testkit::pg`): what one checkout derives, another pulls and
//! answers with byte for byte; and every way the server can fail costs
//! only the saying.

use crate::support::{CountingEmbedder, Env, ask, index, sample_project};
use loupe_engine::stores::shared::{
    Key, Shared, SharedConfig, SharedMode, SharedReport, SharedRun, Table,
};
use loupe_engine::{IndexReport, Project};
use loupe_testkit::pg::PgCluster;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const QUESTION: &str = "how are items packed under the token budget?";

/// A checkout of the sample project (plus a file only it has, when
/// `own` is given) and its embedder, indexed against `url`.
struct Member {
    env: Env,
    embedder: Arc<CountingEmbedder>,
    project: Project,
}

async fn member(url: Option<&str>, mode: SharedMode, own: Option<&str>) -> Member {
    let env = Env::new();
    sample_project(&env);
    if let Some(text) = own {
        env.write("src/own.rs", text);
    }
    let embedder = Arc::new(CountingEmbedder::default());
    let mut cfg = env.config(Some(embedder.clone()));
    cfg.shared = url.map(|u| {
        let mut c = SharedConfig::new(u, mode, true).unwrap();
        c.timeout = Duration::from_secs(2);
        c
    });
    let project = Project::open(env.root(), cfg).await.unwrap();
    Member {
        env,
        embedder,
        project,
    }
}

impl Member {
    async fn index(&self) -> (IndexReport, SharedReport) {
        let report = index(&self.project).await;
        let shared = report
            .shared
            .clone()
            .expect("a run with a store reports on it");
        (report, shared)
    }

    async fn prompt(&self) -> String {
        ask(&self.project, QUESTION).await.assembly.prompt
    }

    fn embedded(&self) -> usize {
        self.embedder.calls.load(Ordering::SeqCst)
    }
}

fn rows(pg: &PgCluster, db: &str, table: &str) -> u64 {
    pg.sql(db, &format!("SELECT count(*) FROM {table}"))
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_checkout_elsewhere_pulls_everything_and_answers_byte_for_byte() {
    let pg = PgCluster::start();
    let url = pg.database("team");
    let first = member(Some(&url), SharedMode::ReadWrite, None).await;
    let (report, shared) = first.index().await;
    assert_eq!(shared.fault, None);
    assert_eq!(shared.files_pulled, 0);
    assert_eq!(shared.files_pushed, report.files_changed);
    assert_eq!(shared.vectors_pushed as usize, first.embedded());
    assert_eq!(rows(&pg, "team", "loupe_parses"), report.files_changed);

    // Another path, another data dir: nothing parsed or embedded again.
    let second = member(Some(&url), SharedMode::ReadWrite, None).await;
    assert_ne!(second.env.root(), first.env.root());
    let (report2, shared2) = second.index().await;
    assert_eq!(shared2.files_pulled, report2.files_changed);
    assert_eq!(shared2.files_pushed, 0);
    assert_eq!(second.embedded(), 0, "every vector came from the store");
    assert_eq!(shared2.vectors_pushed, 0);
    assert_eq!(report2.chunks_added, report.chunks_added);
    assert_eq!(second.prompt().await, first.prompt().await);
    // And what was pulled is what this machine would have derived.
    let alone = member(None, SharedMode::ReadWrite, None).await;
    let report3 = index(&alone.project).await;
    assert!(report3.shared.is_none());
    assert_eq!(alone.prompt().await, second.prompt().await);
    // `status` (any process) says what the last run got.
    let status = second.project.status().await.unwrap();
    assert_eq!(status.shared.as_ref(), Some(&shared2));
    assert_eq!(alone.project.status().await.unwrap().shared, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_nobody_answers_at_costs_a_note_and_nothing_else() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://loupe@127.0.0.1:{port}/team");
    let m = member(Some(&url), SharedMode::ReadWrite, None).await;
    let (report, shared) = m.index().await;
    let fault = shared.fault.expect("the fault is reported");
    assert!(fault.contains("shared store"), "{fault}");
    assert_eq!(shared.files_pulled + shared.files_pushed, 0);
    assert!(report.files_changed > 0 && report.chunks_added > 0);
    let alone = member(None, SharedMode::ReadWrite, None).await;
    index(&alone.project).await;
    assert_eq!(m.prompt().await, alone.prompt().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_server_is_given_up_on_at_the_deadline_and_a_restarted_one_used_again() {
    let pg = PgCluster::start();
    let url = pg.database("team");
    let first = member(Some(&url), SharedMode::ReadWrite, None).await;
    first.index().await;

    // SIGSTOP: the kernel still accepts the connection; nobody answers.
    pg.pause(true);
    let frozen = member(Some(&url), SharedMode::ReadWrite, None).await;
    let started = Instant::now();
    let (report, shared) = frozen.index().await;
    let took = started.elapsed();
    pg.pause(false);
    let fault = shared.fault.expect("the deadline is reported");
    assert!(fault.contains("no answer within"), "{fault}");
    assert!(report.chunks_added > 0);
    // One deadline for the first call; the run stops asking after it.
    assert!(took < Duration::from_secs(30), "{took:?}");

    // Slow, not dead: connected, then frozen for 1.2 s, well under a 10 s
    // deadline. The pull answers, and the run asks no more at that pace.
    let mut cfg = SharedConfig::new(&url, SharedMode::Read, true).unwrap();
    cfg.timeout = Duration::from_secs(10);
    let store = Arc::new(Shared::new(cfg).unwrap());
    store.prepare().await.unwrap();
    let run = Arc::new(SharedRun::new(store));
    let keys = [Key::of_input("fn a() {}", "test:counting")];
    let thaw = pg.freeze_for(Duration::from_millis(1200));
    let pulled = run.pull(Table::Vectors, &keys).await;
    thaw.join().unwrap();
    assert!(pulled.is_empty());
    let fault = run.finish().await.fault.expect("the slowness is reported");
    assert!(fault.contains("slower than deriving here"), "{fault}");

    // Killed as a crash would, then back: the next run pulls again.
    pg.down(true);
    let down = member(Some(&url), SharedMode::ReadWrite, None).await;
    let (_, shared) = down.index().await;
    assert!(shared.fault.is_some());
    pg.up();
    let back = member(Some(&url), SharedMode::ReadWrite, None).await;
    let (report, shared) = back.index().await;
    assert_eq!(shared.fault, None);
    assert_eq!(shared.files_pulled, report.files_changed);
    assert_eq!(back.prompt().await, first.prompt().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_rows_and_an_older_builds_rows_are_never_used() {
    let pg = PgCluster::start();
    let url = pg.database("team");
    let first = member(Some(&url), SharedMode::ReadWrite, None).await;
    let (report, _) = first.index().await;
    let files = report.files_changed;

    // One parse and one vector damaged in place (their digests stay).
    pg.sql(
        "team",
        "UPDATE loupe_parses SET payload = overlay(payload placing '\\x20'::bytea from 3) \
         WHERE content = (SELECT content FROM loupe_parses ORDER BY content LIMIT 1)",
    );
    pg.sql(
        "team",
        "UPDATE loupe_vectors SET vector = substring(vector from 1 for 8) \
         WHERE input = (SELECT input FROM loupe_vectors ORDER BY input LIMIT 1)",
    );
    let second = member(Some(&url), SharedMode::ReadWrite, None).await;
    let (_, shared) = second.index().await;
    assert_eq!(shared.rejected, 2);
    assert_eq!(shared.files_pulled, files - 1);
    assert_eq!(second.embedded(), 1, "only the damaged vector is computed");
    assert_eq!(second.prompt().await, first.prompt().await);
    // The second member's rows took the damaged ones' place.
    let repaired = member(Some(&url), SharedMode::ReadWrite, None).await;
    let (_, shared) = repaired.index().await;
    assert_eq!((shared.rejected, shared.files_pulled), (0, files));
    assert_eq!(repaired.embedded(), 0);

    // Rows an older build derived (another deriver) are not read...
    pg.sql(
        "team",
        "UPDATE loupe_parses SET deriver = 'parse/0/older/' || deriver",
    );
    let third = member(Some(&url), SharedMode::ReadWrite, None).await;
    let (_, shared) = third.index().await;
    assert_eq!(shared.files_pulled, 0);
    assert_eq!(shared.files_pushed, files);
    assert_eq!(third.prompt().await, first.prompt().await);
    // ...and `gc` drops them.
    let store = loupe_engine::stores::shared::Shared::new(
        SharedConfig::new(&url, SharedMode::ReadWrite, true).unwrap(),
    )
    .unwrap();
    let gone = store
        .gc(
            &loupe_engine::indexing::derived::deriver_prefix(),
            &["test:counting".to_owned()],
        )
        .await
        .unwrap();
    assert_eq!(gone, files);
    assert_eq!(rows(&pg, "team", "loupe_parses"), files);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_pulls_and_never_writes_and_the_server_enforces_it() {
    let pg = PgCluster::start();
    let url = pg.database("team");
    let first = member(Some(&url), SharedMode::ReadWrite, None).await;
    first.index().await;
    let before = rows(&pg, "team", "loupe_parses");
    pg.sql(
        "team",
        "CREATE ROLE reader LOGIN; GRANT SELECT ON loupe_parses, loupe_vectors TO reader",
    );
    let reader_url = pg.url("team", "reader");

    // Read mode: pulls what is there, keeps its own file to itself.
    let own = "pub fn only_here() -> u8 {\n    7\n}\n";
    let reader = member(Some(&reader_url), SharedMode::Read, Some(own)).await;
    let (report, shared) = reader.index().await;
    assert_eq!(shared.fault, None);
    assert_eq!(shared.files_pulled, report.files_changed - 1);
    assert_eq!(shared.files_pushed, 0);
    assert_eq!(rows(&pg, "team", "loupe_parses"), before);

    // The same role in read-write mode: the server says no, the run goes on.
    let writer = member(Some(&reader_url), SharedMode::ReadWrite, Some(own)).await;
    let (report, shared) = writer.index().await;
    let fault = shared.fault.expect("the refusal is reported");
    assert!(fault.contains("permission denied"), "{fault}");
    assert!(report.chunks_added > 0);
    assert_eq!(rows(&pg, "team", "loupe_parses"), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_pushing_the_same_content_at_once_are_harmless() {
    let pg = PgCluster::start();
    let url = pg.database("team");
    let a = member(Some(&url), SharedMode::ReadWrite, None).await;
    let b = member(Some(&url), SharedMode::ReadWrite, None).await;
    let ((ra, sa), (rb, sb)) = tokio::join!(a.index(), b.index());
    assert_eq!((sa.fault, sb.fault), (None, None));
    assert_eq!(rows(&pg, "team", "loupe_parses"), ra.files_changed);
    assert_eq!(ra.files_changed, rb.files_changed);
    assert_eq!(a.prompt().await, b.prompt().await);
}

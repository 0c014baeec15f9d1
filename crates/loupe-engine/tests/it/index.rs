//! Indexing: incremental updates, the embedding cache, bad input, recovery
//! from damaged indexes.

use crate::support::*;
use loupe_engine::{DiagnosticKind, RetrieveQuery};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// (path → chunk ids) from a search that returns everything.
async fn ids_by_path(p: &loupe_engine::Project) -> BTreeMap<String, Vec<i64>> {
    let paths = p.catalog().paths().await.unwrap();
    let chunks = p.catalog().chunks_of_paths(&paths).await.unwrap();
    let mut out: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (c, _) in chunks {
        out.entry(c.path).or_default().push(c.id);
    }
    out
}

async fn search_paths(p: &loupe_engine::Project, q: &str) -> Vec<String> {
    let found = p.retrieve(&RetrieveQuery::from_question(q)).await.unwrap();
    found.into_iter().map(|c| c.chunk.path).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_add_delete_rename_touch_exactly_the_affected_chunks() {
    let env = Env::new();
    sample_project(&env);
    let embedder = Arc::new(CountingEmbedder::default());
    let p = env.open(Some(embedder.clone())).await;
    let first = index(&p).await;
    assert_eq!(first.files_changed, 4);
    let before = ids_by_path(&p).await;
    let embedded_first = embedder.calls.load(Ordering::SeqCst);
    assert!(embedded_first > 0);

    // Unchanged re-index: nothing read, nothing embedded.
    let again = index(&p).await;
    assert_eq!(
        (
            again.files_changed,
            again.files_unchanged,
            again.chunks_added
        ),
        (0, 4, 0)
    );
    assert_eq!(
        embedder.calls.load(Ordering::SeqCst),
        embedded_first,
        "cache hit rate must be 100%"
    );
    assert_eq!(ids_by_path(&p).await, before);

    // Edit one file: only its chunks change.
    env.write(
        "tools/report.py",
        "import json\n\ndef write_report(rows):\n    return json.dumps(rows, indent=2)\n",
    );
    let r = index(&p).await;
    assert_eq!(r.files_changed, 1);
    let after = ids_by_path(&p).await;
    for (path, ids) in &before {
        if path == "tools/report.py" {
            assert_ne!(after[path], *ids);
        } else {
            assert_eq!(after[path], *ids, "{path} should be untouched");
        }
    }

    // Touch without change: mtime moves, content hash matches → no re-chunk.
    let t = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(env.root().join("src/pack.rs"))
        .unwrap()
        .set_modified(t)
        .unwrap();
    let r = index(&p).await;
    assert_eq!(r.files_changed, 0);
    assert_eq!(ids_by_path(&p).await["src/pack.rs"], before["src/pack.rs"]);

    // Add, delete, rename.
    let calls = embedder.calls.load(Ordering::SeqCst);
    env.write("src/extra.rs", "pub fn brand_new_function() {}\n");
    std::fs::remove_file(env.root().join("README.md")).unwrap();
    std::fs::rename(
        env.root().join("src/render.rs"),
        env.root().join("src/view.rs"),
    )
    .unwrap();
    let r = index(&p).await;
    assert_eq!((r.files_changed, r.files_deleted), (2, 2));
    let now = ids_by_path(&p).await;
    assert!(now.contains_key("src/extra.rs") && now.contains_key("src/view.rs"));
    assert!(!now.contains_key("README.md") && !now.contains_key("src/render.rs"));
    assert_eq!(now["src/pack.rs"], before["src/pack.rs"]);
    // The renamed file's chunks are new rows but their content is cached:
    // only the new file is embedded.
    let new_calls = embedder.calls.load(Ordering::SeqCst) - calls;
    assert_eq!(new_calls, now["src/extra.rs"].len());

    // Search sees the changes.
    assert!(
        search_paths(&p, "brand_new_function")
            .await
            .contains(&"src/extra.rs".to_string())
    );
    assert!(
        !search_paths(&p, "sample project packing usage")
            .await
            .contains(&"README.md".to_string())
    );
    let status = p.status().await.unwrap();
    assert_eq!(status.lexical_chunks, status.chunks);
    assert!(status.vectors_ready);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_keeps_everything_and_rebuilds_nothing() {
    let env = Env::new();
    sample_project(&env);
    let embedder = Arc::new(CountingEmbedder::default());
    {
        let p = env.open(Some(embedder.clone())).await;
        index(&p).await;
        p.catalog().close().await;
    }
    let p = env.open(Some(embedder.clone())).await;
    let status = p.status().await.unwrap();
    assert!(status.recovered.is_empty(), "{:?}", status.recovered);
    assert!(status.vectors_ready);
    assert_eq!(status.files, 4);
    let found = p
        .retrieve(&RetrieveQuery::from_question("pack items budget"))
        .await
        .unwrap();
    assert_eq!(found[0].chunk.path, "src/pack.rs");
    assert!(found.iter().any(|c| c.signals.vector.is_some()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_becomes_diagnostics_not_failures() {
    let env = Env::new();
    sample_project(&env);
    env.write("bin/blob.dat", [0u8, 1, 2, 0, 159, 146, 150]);
    env.write("bad/latin1.txt", b"caf\xe9 au lait\n");
    // 50 MB: over the size cap, skipped before it is read.
    let big = env.root().join("big/huge.rs");
    std::fs::create_dir_all(big.parent().unwrap()).unwrap();
    std::fs::File::create(&big)
        .unwrap()
        .set_len(50 * 1024 * 1024)
        .unwrap();
    // A symlink loop and a dangling link.
    std::fs::create_dir_all(env.root().join("loop")).unwrap();
    std::os::unix::fs::symlink(env.root().join("loop"), env.root().join("loop/again")).unwrap();
    std::os::unix::fs::symlink(env.root().join("missing"), env.root().join("dangling.rs")).unwrap();
    // Very deep nesting.
    let deep = format!("fn deep() {{ {} }}\n", "(".repeat(5000) + &")".repeat(5000));
    env.write("src/deep.rs", deep);
    // Deep directories.
    let mut dir = String::from("d");
    for _ in 0..60 {
        dir.push_str("/d");
    }
    env.write(&format!("{dir}/leaf.rs"), "fn leaf() {}\n");
    // An unreadable directory (only meaningful when not running as root).
    let locked = env.root().join("locked");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::write(locked.join("secret.rs"), "fn hidden() {}\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();

    let p = env.open(None).await;
    let r = index(&p).await;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();

    let kinds: BTreeMap<String, DiagnosticKind> = r
        .diagnostics
        .iter()
        .map(|d| (d.path.clone(), d.kind))
        .collect();
    assert_eq!(kinds.get("bin/blob.dat"), Some(&DiagnosticKind::Binary));
    assert_eq!(
        kinds.get("bad/latin1.txt"),
        Some(&DiagnosticKind::InvalidUtf8)
    );
    assert_eq!(kinds.get("big/huge.rs"), Some(&DiagnosticKind::TooLarge));
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.kind == DiagnosticKind::SymlinkLoop),
        "{:?}",
        r.diagnostics
    );
    assert!(kinds.contains_key("dangling.rs"), "{:?}", r.diagnostics);
    let paths = ids_by_path(&p).await;
    assert!(paths.contains_key("src/deep.rs"));
    assert!(paths.contains_key(&format!("{dir}/leaf.rs")));
    assert!(paths.contains_key("src/pack.rs"));
    // Diagnostics persist for `status`.
    assert_eq!(p.diagnostics().await.unwrap().len(), r.diagnostics.len());
    assert_eq!(
        p.status().await.unwrap().diagnostics,
        r.diagnostics.len() as u64
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_turns_binary_leaves_the_index() {
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    index(&p).await;
    env.write("src/pack.rs", [0u8; 64]);
    let r = index(&p).await;
    assert_eq!(r.files_deleted, 1);
    assert!(!ids_by_path(&p).await.contains_key("src/pack.rs"));
}

fn corrupt(path: &std::path::Path) {
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    std::fs::write(path, vec![0xA5u8; (len as usize).clamp(16, 4096)]).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_index_files_are_rebuilt_on_open() {
    let env = Env::new();
    sample_project(&env);
    let embedder: Arc<CountingEmbedder> = Arc::new(CountingEmbedder::default());
    let dir = {
        let p = env.open(Some(embedder.clone())).await;
        index(&p).await;
        p.catalog().close().await;
        p.data_dir().to_path_buf()
    };
    // Every file of the lexical and vector indexes, one at a time.
    let mut victims = Vec::new();
    for sub in ["lexical", "vectors"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = e.unwrap().path();
            if path.is_file()
                && !path.ends_with(".tantivy-meta.lock")
                && !path.ends_with(".tantivy-writer.lock")
            {
                victims.push(path);
            }
        }
    }
    assert!(victims.len() >= 4, "{victims:?}");
    for victim in victims {
        if !victim.exists() {
            continue;
        }
        corrupt(&victim);
        let p = env.open(Some(embedder.clone())).await;
        let status = p.status().await.unwrap();
        assert_eq!(
            status.lexical_chunks, status.chunks,
            "after damaging {victim:?}"
        );
        assert!(status.vectors_ready, "after damaging {victim:?}");
        if victim.parent().is_some_and(|d| d.ends_with("lexical")) {
            // Why it was rebuilt, not only that it was behind.
            assert!(
                status
                    .recovered
                    .iter()
                    .any(|r| r.starts_with("lexical index rebuilt: ")),
                "after damaging {victim:?}: {:?}",
                status.recovered
            );
        }
        let found = p
            .retrieve(&RetrieveQuery::from_question("pack items"))
            .await
            .unwrap();
        assert!(
            found.iter().any(|c| c.chunk.path == "src/pack.rs"),
            "after damaging {victim:?}"
        );
        p.catalog().close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_catalog_is_set_aside_and_rebuilt() {
    let env = Env::new();
    sample_project(&env);
    let dir = {
        let p = env.open(None).await;
        index(&p).await;
        p.catalog().close().await;
        p.data_dir().to_path_buf()
    };
    // sqlx closes connections on their worker threads; the last one
    // checkpoints the WAL into the main file. Wait for that before damaging it.
    for _ in 0..100 {
        if !dir.join("catalog.sqlite-wal").exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    corrupt(&dir.join("catalog.sqlite"));
    let p = env.open(None).await;
    let status = p.status().await.unwrap();
    assert!(!status.recovered.is_empty());
    assert_eq!(status.files, 0);
    let r = index(&p).await;
    assert_eq!(r.files_changed, 4);
    assert!(std::fs::read_dir(&dir).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("catalog.sqlite.corrupt-")
    }));
}

/// Index the sample project, close it, and return its data dir once the
/// WAL is checkpointed into the catalog file.
async fn indexed_and_closed(
    env: &Env,
    embedder: Option<Arc<CountingEmbedder>>,
) -> std::path::PathBuf {
    let p = env
        .open(embedder.map(|e| e as Arc<dyn loupe_engine::signals::embed::Embedder>))
        .await;
    index(&p).await;
    p.catalog()
        .set_setting("knobs", "{\"budget\":9000}")
        .await
        .unwrap();
    p.catalog().close().await;
    let dir = p.data_dir().to_path_buf();
    // `close` checkpoints the WAL into the file (TRUNCATE leaves it
    // empty); the last handle gone removes it. A handle that lingers (seen
    // in about 1 run of 6 on a loaded machine) leaves an empty WAL, which
    // is as good for what follows: the catalog file holds everything.
    drop(p);
    let wal = dir.join("catalog.sqlite-wal");
    let folded = || std::fs::metadata(&wal).map_or(true, |m| m.len() == 0);
    for _ in 0..600 {
        if folded() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        folded(),
        "the WAL was not checkpointed within 30 s of closing"
    );
    dir
}

fn corrupt_copies(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.starts_with("catalog.sqlite.corrupt-")
                && !name.ends_with("-wal")
                && !name.ends_with("-shm")
        })
        .count()
}

/// The case: the header is fine (SQLite opens the file, migrations
/// pass) but pages behind it are garbage, so reads fail with "database disk
/// image is malformed". Opening sets the file aside and rebuilds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catalog_damaged_behind_its_header_heals_on_open() {
    let env = Env::new();
    sample_project(&env);
    let dir = indexed_and_closed(&env, None).await;
    let path = dir.join("catalog.sqlite");
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 3 * 4096, "{} bytes", bytes.len());
    for (i, b) in bytes.iter_mut().enumerate().skip(4096) {
        *b = (i * 7 % 251) as u8;
    }
    std::fs::write(&path, bytes).unwrap();

    let p = env.open(None).await;
    let status = p.status().await.unwrap();
    let note = status.recovered.join("\n");
    assert!(note.contains("was damaged"), "{note}");
    assert!(
        note.contains(&*path.to_string_lossy()),
        "names the file: {note}"
    );
    assert_eq!(status.files, 0);
    assert_eq!(index(&p).await.files_changed, 4);
    assert!(!search_paths(&p, "pack items").await.is_empty());
    assert_eq!(corrupt_copies(&dir), 1);
}

/// A command that meets damage leaves a mark; the next open heals, keeping
/// the settings and every cached vector (nothing is embedded again), and
/// only the newest damaged copy is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healing_keeps_settings_and_cached_vectors() {
    let env = Env::new();
    sample_project(&env);
    let embedder = Arc::new(CountingEmbedder::default());
    let dir = indexed_and_closed(&env, Some(embedder.clone())).await;
    let embedded = embedder.calls.load(Ordering::SeqCst);
    assert!(embedded > 0);
    std::fs::write(
        dir.join("catalog.sqlite.corrupt-1"),
        b"an older damaged copy",
    )
    .unwrap();
    std::fs::write(
        dir.join("catalog.damaged"),
        b"database disk image is malformed",
    )
    .unwrap();

    let p = env.open(Some(embedder.clone())).await;
    let note = p.status().await.unwrap().recovered.join("\n");
    assert!(
        note.contains("settings") && !note.contains("kept 0 settings"),
        "{note}"
    );
    assert!(
        note.contains("cached vectors") && !note.contains("kept 0 cached"),
        "{note}"
    );
    assert!(!dir.join("catalog.damaged").exists());
    assert_eq!(
        p.catalog().setting("knobs").await.unwrap().as_deref(),
        Some("{\"budget\":9000}")
    );
    assert_eq!(index(&p).await.files_changed, 4);
    assert_eq!(
        embedder.calls.load(Ordering::SeqCst),
        embedded,
        "re-embedded"
    );
    assert_eq!(corrupt_copies(&dir), 1, "one damaged generation is kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_format_change_triggers_reindex() {
    let env = Env::new();
    sample_project(&env);
    {
        let p = env.open(None).await;
        index(&p).await;
        p.catalog().set_meta("index_version", "0").await.unwrap();
        p.catalog().close().await;
    }
    let p = env.open(None).await;
    let status = p.status().await.unwrap();
    assert_eq!(status.files, 0);
    assert!(status.recovered.iter().any(|r| r.contains("format")));
    assert_eq!(index(&p).await.files_changed, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_run_writes_nothing() {
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    let cancel = loupe_engine::CancelToken::new();
    cancel.cancel();
    let r = p.index(&loupe_engine::progress::no_progress, &cancel).await;
    assert!(matches!(r, Err(loupe_engine::Error::Cancelled)));
    assert_eq!(p.status().await.unwrap().files, 0);
    assert_eq!(index(&p).await.files_changed, 4);
}

/// A folder several times larger than one batch of the streaming commit
/// (256 files): 700 small files, each defining its own function, and 40
/// copies of one text.
fn many_files(env: &Env) {
    for i in 0..700 {
        env.write(
            &format!("m/f{i:03}.rs"),
            format!("pub fn unique_name_{i:03}() -> u32 {{\n    {i}\n}}\n"),
        );
    }
    for i in 0..40 {
        env.write(
            &format!("copies/c{i:02}.txt"),
            "The same notice in every copy, embedded once.\n",
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_of_many_batches_is_one_commit_and_updates_across_batches() {
    let env = Env::new();
    many_files(&env);
    let embedder = Arc::new(CountingEmbedder::default());
    let p = env.open(Some(embedder.clone())).await;
    let first = index(&p).await;
    assert_eq!((first.files_changed, first.generation), (740, 1));
    let status = p.status().await.unwrap();
    assert_eq!((status.files, status.generation), (740, 1));
    assert_eq!(status.lexical_chunks, status.chunks);
    assert!(status.vectors_ready);
    // One vector per distinct text: the 40 copies share one.
    assert_eq!(
        embedder.calls.load(Ordering::SeqCst) as u64,
        status.chunks - 39
    );
    let before = ids_by_path(&p).await;
    let all: std::collections::HashSet<i64> = before.values().flatten().copied().collect();
    assert_eq!(all.len() as u64, status.chunks, "chunk ids are unique");
    for name in ["unique_name_003", "unique_name_333", "unique_name_690"] {
        let path = format!("m/f{}.rs", &name[12..]);
        assert_eq!(search_paths(&p, name).await.first(), Some(&path), "{name}");
    }

    // Changes in the first and last batches, a deletion in the middle and
    // a file that turned binary.
    env.write("m/f010.rs", "pub fn renamed_in_the_first_batch() {}\n");
    env.write("m/f600.rs", "pub fn renamed_in_the_last_batch() {}\n");
    std::fs::remove_file(env.root().join("m/f300.rs")).unwrap();
    env.write("m/f500.rs", b"\0\x01binary now".as_slice());
    let r = index(&p).await;
    assert_eq!((r.files_changed, r.files_deleted, r.generation), (2, 2, 2));
    let after = ids_by_path(&p).await;
    assert!(!after.contains_key("m/f300.rs") && !after.contains_key("m/f500.rs"));
    assert_ne!(after["m/f010.rs"], before["m/f010.rs"]);
    assert_eq!(after["m/f001.rs"], before["m/f001.rs"]);
    assert_eq!(after["m/f699.rs"], before["m/f699.rs"]);
    for (name, path) in [
        ("renamed_in_the_first_batch", Some("m/f010.rs")),
        ("renamed_in_the_last_batch", Some("m/f600.rs")),
        ("unique_name_010", None),
        ("unique_name_300", None),
        ("unique_name_500", None),
    ] {
        let found = search_paths(&p, name).await;
        match path {
            Some(path) => assert_eq!(found.first().map(String::as_str), Some(path), "{name}"),
            None => assert!(
                !found.iter().any(|f| f.contains(&name[12..])),
                "{name}: {found:?}"
            ),
        }
    }
    let status = p.status().await.unwrap();
    assert_eq!((status.files, status.generation), (738, 2));
    assert_eq!(status.lexical_chunks, status.chunks);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_mid_stream_rolls_back_the_batches_already_written() {
    let env = Env::new();
    many_files(&env);
    let p = env.open(None).await;
    let cancel = loupe_engine::CancelToken::new();
    // Past 690 files read, the third batch is being read, so the catalog
    // has taken the first (the channel between them holds one batch).
    let late = |progress: loupe_engine::progress::Progress| {
        if progress.stage == loupe_engine::progress::Stage::Parse && progress.done >= 690 {
            cancel.cancel();
        }
    };
    let r = p.index(&late, &cancel).await;
    assert!(matches!(r, Err(loupe_engine::Error::Cancelled)), "{r:?}");
    let status = p.status().await.unwrap();
    assert_eq!(
        (
            status.files,
            status.chunks,
            status.lexical_chunks,
            status.generation
        ),
        (0, 0, 0, 0)
    );
    let again = index(&p).await;
    assert_eq!((again.files_changed, again.generation), (740, 1));
    assert_eq!(
        search_paths(&p, "unique_name_003")
            .await
            .first()
            .map(String::as_str),
        Some("m/f003.rs")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_project_paths_are_clear_errors() {
    let env = Env::new();
    let missing = env.root().join("nope");
    let e = loupe_engine::Project::open(&missing, env.config(None))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    let file = env.write("file.txt", "x");
    let e = loupe_engine::Project::open(&file, env.config(None))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("is a file"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pins_mentions_and_graph_neighbours() {
    let env = Env::new();
    sample_project(&env);
    env.write("AGENTS.md", "# Agents\n\nRead src first.\n");
    let p = env.open(None).await;
    index(&p).await;
    let found = p
        .retrieve(&RetrieveQuery::from_question(
            "why does render_prompt call it? @tools/report.py",
        ))
        .await
        .unwrap();
    let get = |path: &str, sym: Option<&str>| {
        found
            .iter()
            .find(|c| c.chunk.path == path && (sym.is_none() || c.chunk.symbol.as_deref() == sym))
            .unwrap_or_else(|| {
                panic!(
                    "{path} {sym:?} missing from {:?}",
                    found.iter().map(|c| &c.chunk.path).collect::<Vec<_>>()
                )
            })
    };
    assert!(get("tools/report.py", None).signals.pinned);
    assert!(get("AGENTS.md", None).signals.primer);
    let render = get("src/render.rs", Some("render_prompt"));
    assert!(render.signals.symbol_exact);
    // A seed of the graph with a neighbour is a graph hit; a README-like
    // primer, among so few candidates a seed too, has none and is not.
    assert_eq!(render.signals.graph_distance, Some(0));
    assert_eq!(get("AGENTS.md", None).signals.graph_distance, None);
    // render_prompt calls pack_items: one hop away.
    assert_eq!(
        get("src/pack.rs", Some("pack_items"))
            .signals
            .graph_distance,
        Some(1)
    );
    let e = p
        .retrieve(&RetrieveQuery::from_question("@no/such/file.rs please"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no indexed file"), "{e}");
    // A handle in a pasted issue is not a typo'd pin: it pins nothing and
    // the assembly says so.
    let found = p
        .retrieve(&RetrieveQuery::from_question(
            "@octocat says pack_items overflows",
        ))
        .await
        .unwrap();
    assert!(found.iter().all(|c| !c.signals.pinned));
    let a = p
        .ask(
            &loupe_engine::AskRequest::new(
                "@octocat says pack_items overflows",
                Default::default(),
            ),
            &mut loupe_engine::AskCache::default(),
        )
        .await
        .unwrap()
        .assembly;
    assert!(
        a.report.warnings.iter().any(|w| w.contains("@octocat")),
        "{:?}",
        a.report.warnings
    );
}

/// Issue 16: never a silent empty prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_says_why_a_prompt_holds_no_code() {
    use loupe_engine::{AskCache, AskRequest};
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    let ask = |q: &str| AskRequest::new(q, Default::default());
    // Never indexed: an error that says what to run, not an empty prompt.
    let e = p
        .ask(&ask("how are items packed?"), &mut AskCache::default())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not indexed yet"), "{e}");
    index(&p).await;
    let mut cache = AskCache::default();
    let found = p
        .ask(&ask("how are items packed under a budget?"), &mut cache)
        .await
        .unwrap();
    assert!(found.assembly.items.iter().any(|i| i.lod.is_some()));
    assert!(
        !found
            .assembly
            .report
            .warnings
            .iter()
            .any(|w| w.starts_with("nothing")),
        "{:?}",
        found.assembly.report.warnings
    );
    // No primers, so nothing at all comes back for words the code lacks.
    let bare = loupe_assemble::Knobs {
        primers: Vec::new(),
        ..Default::default()
    };
    let none = p
        .ask(
            &AskRequest::new("zyxxyqq wuvvutt", bare.clone()),
            &mut cache,
        )
        .await
        .unwrap()
        .assembly;
    assert!(
        none.report
            .warnings
            .iter()
            .any(|w| w.starts_with("nothing was retrieved: no indexed text")),
        "{:?}",
        none.report.warnings
    );
    // Everything hidden by a path weight of 0.
    let hide = AskRequest::new(
        "how are items packed under a budget?",
        loupe_assemble::Knobs {
            path_weights: vec![loupe_assemble::rank::PathWeight {
                glob: "**".into(),
                weight: 0.0,
            }],
            ..bare
        },
    );
    let hidden = p.ask(&hide, &mut cache).await.unwrap().assembly;
    assert!(
        hidden
            .report
            .warnings
            .iter()
            .any(|w| w.contains("hidden by a path weight of 0 (**)")),
        "{:?}",
        hidden.report.warnings
    );
}

/// The rest of a leading file is read for the prompt, though retrieval
/// found none of it (a fix's other lines share no word with the question).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_leading_file_is_read_whole_unless_the_lift_is_off() {
    use loupe_engine::{AskCache, AskRequest};
    let env = Env::new();
    sample_project(&env);
    // Two functions large enough to be chunks of their own.
    let body = |stmt: &str| format!("    {stmt}\n").repeat(15);
    env.write(
        "src/ledger.rs",
        format!(
            "/// Sum an invoice's lines.\npub fn invoice_total(lines: &[u32]) -> u32 {{\n{}    lines.iter().sum()\n}}\n\n\
             /// Halve, rounding down.\npub fn zqx_halve(mut v: u64) -> u64 {{\n{}    v / 2\n}}\n",
            body("debug_assert!(lines.len() < usize::MAX);"),
            body("v = v.saturating_add(0);"),
        ),
    );
    let p = env.open(None).await;
    index(&p).await;
    let question = "why is invoice_total wrong for an empty invoice?";
    let retrieved = p
        .retrieve(&loupe_engine::RetrieveQuery::from_question(question))
        .await
        .unwrap();
    assert!(
        retrieved
            .iter()
            .all(|c| c.chunk.symbol.as_deref() != Some("zqx_halve")),
        "retrieval alone finds it: the test proves nothing"
    );
    let mut cache = AskCache::default();
    let answer = p
        .ask(&AskRequest::new(question, Default::default()), &mut cache)
        .await
        .unwrap();
    let halve = answer
        .selected
        .candidates
        .iter()
        .find(|c| c.chunk.symbol.as_deref() == Some("zqx_halve"))
        .unwrap_or_else(|| panic!("{:#?}", answer.selected.candidates));
    // No evidence of its own: it is there for its file.
    assert_eq!(halve.signals.bm25_rank, None);
    let row = answer
        .assembly
        .items
        .iter()
        .find(|i| i.id == halve.chunk.id)
        .unwrap();
    assert!(row.lod.is_some() && row.score.sibling_lift > 0.0, "{row:?}");
    assert!(answer.assembly.prompt.contains("v / 2"));
    // At a budget a tenth of which the file exceeds, it is not read
    // whole; with the lift off, nothing is read beyond what retrieval found.
    let small = loupe_assemble::Knobs {
        budget: Some(loupe_assemble::Budget::Tokens(2_000)),
        ..Default::default()
    };
    let off = loupe_assemble::Knobs {
        sibling_share: 0.0,
        ..Default::default()
    };
    for knobs in [small, off] {
        let answer = p
            .ask(&AskRequest::new(question, knobs), &mut cache)
            .await
            .unwrap();
        assert!(
            answer
                .selected
                .candidates
                .iter()
                .all(|c| c.chunk.symbol.as_deref() != Some("zqx_halve"))
        );
        assert!(!answer.assembly.prompt.contains("v / 2"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watcher_reindexes_a_saved_file() {
    let env = Env::new();
    sample_project(&env);
    let p = Arc::new(env.open(None).await);
    index(&p).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = loupe_engine::watch::watch(Arc::clone(&p), move |e| {
        if let loupe_engine::watch::WatchEvent::Indexed(r) = e {
            let _ = tx.send(r.files_changed);
        }
    })
    .unwrap();
    env.write("src/fresh.rs", "pub fn watched_into_the_index() {}\n");
    let changed = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(changed >= 1);
    assert!(
        search_paths(&p, "watched_into_the_index")
            .await
            .contains(&"src/fresh.rs".to_string())
    );
    handle.stop().await;
}

/// Reading a file (an editor opening it, the app showing it) is not a
/// change: inotify reports opens, and each used to start an index run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watcher_ignores_files_that_are_only_read() {
    let env = Env::new();
    sample_project(&env);
    let p = Arc::new(env.open(None).await);
    index(&p).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = loupe_engine::watch::watch(Arc::clone(&p), move |e| {
        if let loupe_engine::watch::WatchEvent::Changed(paths) = e {
            let _ = tx.send(paths);
        }
    })
    .unwrap();
    let read = std::fs::canonicalize(p.root()).unwrap();
    let read = std::fs::read_dir(read.join("src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .unwrap();
    std::fs::read_to_string(&read).unwrap();
    env.write("src/written.rs", "pub fn written_after_a_read() {}\n");
    let paths = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(!paths.contains(&read), "{paths:?}");
    assert!(
        paths.iter().any(|p| p.ends_with("src/written.rs")),
        "{paths:?}"
    );
    handle.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_definition_in_a_merged_chunk_is_findable() {
    let env = Env::new();
    // Small neighbours merge into one chunk whose symbol is the first name.
    env.write(
        "src/tiny.rs",
        "pub fn alpha_one() -> u32 { 1 }\n\npub fn beta_two() -> u32 { 2 }\n\npub const GAMMA_THREE: u32 = 3;\n",
    );
    env.write(
        "src/user.rs",
        "pub fn uses_it() -> u32 {\n    crate::helpers::beta_two() + 1\n}\n",
    );
    let p = env.open(None).await;
    index(&p).await;
    let merged: Vec<_> = p
        .catalog()
        .chunks_of_paths(&["src/tiny.rs".into()])
        .await
        .unwrap();
    assert_eq!(merged.len(), 1, "expected one merged chunk: {merged:?}");

    let found = p
        .retrieve(&RetrieveQuery::from_question("what is GAMMA_THREE for?"))
        .await
        .unwrap();
    let hit = found
        .iter()
        .find(|c| c.chunk.path == "src/tiny.rs")
        .unwrap();
    assert!(
        hit.signals.symbol_exact && hit.signals.bm25.is_some(),
        "{:?}",
        hit.signals
    );

    // Asking about the first name reaches callers of the second: user.rs
    // shares no word with the question, so only the graph can bring it.
    let found = p
        .retrieve(&RetrieveQuery::from_question("alpha_one"))
        .await
        .unwrap();
    let user = found
        .iter()
        .find(|c| c.chunk.path == "src/user.rs")
        .unwrap();
    assert_eq!(user.signals.graph_distance, Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_paths_rereads_known_files_without_a_walk() {
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    index(&p).await;
    let none = loupe_engine::progress::no_progress;
    let cancel = loupe_engine::CancelToken::new();

    // An edit to a known file: only that file is looked at.
    let edited = env.write("src/pack.rs", "pub fn pack_everything_now() -> u8 { 7 }\n");
    let r = p
        .update_paths(std::slice::from_ref(&edited), &none, &cancel)
        .await
        .unwrap();
    assert_eq!((r.files_seen, r.files_changed), (1, 1));
    assert!(
        search_paths(&p, "pack_everything_now")
            .await
            .contains(&"src/pack.rs".to_string())
    );

    // A deleted known file leaves the index.
    std::fs::remove_file(env.root().join("tools/report.py")).unwrap();
    let r = p
        .update_paths(&[env.root().join("tools/report.py")], &none, &cancel)
        .await
        .unwrap();
    assert_eq!(r.files_deleted, 1);
    assert!(!ids_by_path(&p).await.contains_key("tools/report.py"));

    // A new file is unknown: its ignore status needs a walk, so this is a full run.
    let fresh = env.write("src/fresh.rs", "pub fn fresh() {}\n");
    let r = p.update_paths(&[fresh], &none, &cancel).await.unwrap();
    assert_eq!(r.files_seen, 4);
    assert!(ids_by_path(&p).await.contains_key("src/fresh.rs"));

    // The same state as a full run from scratch.
    let status = p.status().await.unwrap();
    assert_eq!(status.lexical_chunks, status.chunks);
    assert_eq!(index(&p).await.files_changed, 0);
}

/// Embeds like [`CountingEmbedder`] until `fail` is set, then fails.
#[derive(Default)]
struct FailingEmbedder {
    inner: CountingEmbedder,
    fail: std::sync::atomic::AtomicBool,
}

impl loupe_engine::signals::embed::Embedder for FailingEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[String]) -> loupe_engine::Result<Vec<Vec<f32>>> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(loupe_engine::Error::Embed("the model went away".into()));
        }
        self.inner.embed(texts)
    }
}

/// A small change asks only about chunks without a vector point (not every
/// chunk in the catalog): those it added, and those an earlier run left
/// without a vector because its embedding failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_change_embeds_what_it_added_and_what_a_failed_run_left() {
    let env = Env::new();
    sample_project(&env);
    let embedder = Arc::new(FailingEmbedder::default());
    let p = env.open(Some(embedder.clone())).await;
    index(&p).await;
    assert!(p.status().await.unwrap().vectors_ready);
    let none = loupe_engine::progress::no_progress;
    let cancel = loupe_engine::CancelToken::new();

    // The model fails while a file is added: its chunks are indexed and
    // searchable, without vectors.
    embedder.fail.store(true, Ordering::SeqCst);
    let left = env.write(
        "src/left.rs",
        "/// Spread widgets over buckets.
pub fn spread_widgets() -> u8 { 1 }
",
    );
    let err = p
        .update_paths(std::slice::from_ref(&left), &none, &cancel)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("went away"), "{err}");
    let status = p.status().await.unwrap();
    assert!(!status.vectors_ready);
    assert!(ids_by_path(&p).await.contains_key("src/left.rs"));

    // The model is back; an edit elsewhere embeds its own chunks and the
    // ones left behind, and nothing already embedded.
    embedder.fail.store(false, Ordering::SeqCst);
    let before = embedder.inner.calls.load(Ordering::SeqCst);
    let edited = env.write(
        "src/pack.rs",
        "pub fn pack_everything_now() -> u8 { 7 }
",
    );
    let r = p
        .update_paths(std::slice::from_ref(&edited), &none, &cancel)
        .await
        .unwrap();
    let status = p.status().await.unwrap();
    assert!(status.vectors_ready, "{status:?}");
    assert_eq!(status.vector_chunks, status.chunks);
    let added = ids_by_path(&p).await;
    let fresh = added["src/left.rs"].len() + added["src/pack.rs"].len();
    assert_eq!(r.chunks_embedded as usize, fresh);
    assert_eq!(embedder.inner.calls.load(Ordering::SeqCst) - before, fresh);
    let found = search_paths(&p, "spread widgets over buckets").await;
    assert_eq!(found.first().map(String::as_str), Some("src/left.rs"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_packed_load_of_chunk_ids_is_complete() {
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    index(&p).await;
    let by_path = ids_by_path(&p).await;
    let mut expected: Vec<i64> = by_path.values().flatten().copied().collect();
    expected.sort_unstable();
    assert_eq!(p.catalog().chunk_ids().await.unwrap(), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn definers_are_capped_per_name_lowest_ids_first_and_case_blind() {
    let env = Env::new();
    for i in 0..7 {
        env.write(
            &format!("src/def{i}.rs"),
            format!("pub fn Shared_Helper() -> u32 {{\n    {i}\n}}\n"),
        );
    }
    // A heading holding control characters is a name like any other.
    env.write("docs/odd.md", "# Odd\u{1e}head\u{1f}ing\n\nText.\n");
    let p = env.open(None).await;
    index(&p).await;
    let by_path = ids_by_path(&p).await;
    let mut defs: Vec<i64> = (0..7)
        .flat_map(|i| by_path[&format!("src/def{i}.rs")].clone())
        .collect();
    defs.sort_unstable();

    let got = p
        .definitions(&["SHARED_helper".to_owned(), "nobody".to_owned()], 5)
        .await
        .unwrap();
    assert_eq!(got.exact("shared_helper"), &defs[..5]);
    assert!(got.exact("nobody").is_empty());
    let all = p.look_up("shared_helper").await.unwrap();
    assert_eq!(all.defined_by, defs);
    let odd = p.look_up("odd\u{1e}head\u{1f}ing").await.unwrap();
    assert_eq!(odd.defined_by, by_path["docs/odd.md"][..1].to_vec());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn near_names_come_from_the_index_and_forget_deleted_ones() {
    let env = Env::new();
    env.write(
        "src/a.rs",
        "pub fn parse_args() {}\npub fn render() {}\npub fn abcd() {}\n",
    );
    env.write("src/b.rs", "pub fn parse_argv() {}\n");
    let p = env.open(None).await;
    index(&p).await;
    let near = p.look_up("parse_argz").await.unwrap();
    assert!(near.defined_by.is_empty());
    assert_eq!(near.similar, ["parse_args", "parse_argv"]);
    assert_eq!(p.look_up("Rendr").await.unwrap().similar, ["render"]);
    // Under five characters: no near misses (`get` ~ `set` is noise).
    assert!(p.look_up("abce").await.unwrap().similar.is_empty());

    // `parse_argv` goes. A segment's dictionary may keep the name until a
    // merge; it is not suggested.
    std::fs::remove_file(env.root().join("src/b.rs")).unwrap();
    index(&p).await;
    assert_eq!(
        p.look_up("parse_argz").await.unwrap().similar,
        ["parse_args"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn referrers_are_capped_per_name_lowest_ids_first() {
    let env = Env::new();
    for i in 0..7 {
        env.write(
            &format!("src/caller{i}.rs"),
            format!("pub fn caller_{i}() -> u32 {{\n    shared_helper() + other_helper() + shared_helper()\n}}\n"),
        );
    }
    env.write(
        "src/one.rs",
        "pub fn lonely() -> u32 {\n    rare_helper()\n}\n",
    );
    let p = env.open(None).await;
    index(&p).await;
    let names = ["shared_helper", "rare_helper", "other_helper", "nobody"].map(String::from);
    let got = p.catalog().referrers(&names, 5).await.unwrap();
    let of = |name: &str| -> Vec<i64> {
        got.iter()
            .filter(|(n, _)| n == name)
            .map(|(_, id)| *id)
            .collect()
    };
    let callers: Vec<i64> = {
        let by_path = ids_by_path(&p).await;
        let mut ids: Vec<i64> = (0..7)
            .flat_map(|i| by_path[&format!("src/caller{i}.rs")].clone())
            .collect();
        ids.sort_unstable();
        ids
    };
    // At most 5 per name, no duplicates though each caller names it twice,
    // and the lowest chunk ids.
    assert_eq!(of("shared_helper"), callers[..5].to_vec());
    assert_eq!(of("other_helper"), callers[..5].to_vec());
    assert_eq!(of("rare_helper").len(), 1);
    assert!(of("nobody").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primer_added_after_a_question_is_found_by_the_next() {
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    index(&p).await;
    let q = RetrieveQuery::from_question("pack items budget");
    let primers = |found: &[loupe_assemble::Candidate]| {
        found
            .iter()
            .filter(|c| c.signals.primer)
            .map(|c| c.chunk.path.clone())
            .collect::<Vec<_>>()
    };
    assert!(primers(&p.retrieve(&q).await.unwrap()).is_empty());
    env.write(
        "docs/AGENTS.md",
        "# Agents\n\nRun the tests before packing.\n",
    );
    index(&p).await;
    assert_eq!(
        primers(&p.retrieve(&q).await.unwrap()),
        vec!["docs/AGENTS.md"]
    );
    std::fs::remove_file(env.root().join("docs/AGENTS.md")).unwrap();
    index(&p).await;
    assert!(primers(&p.retrieve(&q).await.unwrap()).is_empty());
}

/// A Rust file's inline `mod tests` is test code: its chunks carry the
/// `Tests` role (so ranking weighs them as tests), the rest of the file
/// stays `Code`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_inline_test_modules_have_the_tests_role() {
    let env = Env::new();
    // Big enough that the module is a chunk of its own, not merged with
    // the function into one block.
    let steps: String = (0..40)
        .map(|i| format!("    used += items.get({i}).copied().unwrap_or(0);\n"))
        .collect();
    let cases: String = (0..12)
        .map(|i| {
            format!(
                "    #[test]\n    fn packs_case_{i}() {{\n        \
                 assert!(pack_greedily(&[{i}, 2, 3], 3).len() <= 3);\n    }}\n\n"
            )
        })
        .collect();
    env.write(
        "src/lib.rs",
        format!(
            "/// Packs items greedily under a budget.\n\
             pub fn pack_greedily(items: &[u32], budget: u32) -> Vec<u32> {{\n    \
             let mut used = 0;\n{steps}    \
             items.iter().copied().filter(|_| used <= budget).collect()\n}}\n\n\
             #[cfg(test)]\nmod tests {{\n    use super::*;\n\n{cases}}}\n"
        ),
    );
    let p = env.open(None).await;
    index(&p).await;
    let found = p
        .retrieve(&RetrieveQuery::from_question(
            "pack greedily under the budget",
        ))
        .await
        .unwrap();
    let role_of = |symbol: &str| {
        found
            .iter()
            .find(|c| c.chunk.symbol.as_deref() == Some(symbol))
            .map(|c| c.chunk.role)
    };
    assert_eq!(role_of("pack_greedily"), Some(loupe_assemble::Role::Code));
    assert_eq!(role_of("tests"), Some(loupe_assemble::Role::Tests));
}

/// An embedder that fails on the question costs the vectors, not the
/// question: the other signals answer it, and the answer says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_the_embedder_fails_on_is_answered_without_vectors() {
    let env = Env::new();
    sample_project(&env);
    let embedder = Arc::new(FailingEmbedder::default());
    let p = env.open(Some(embedder.clone())).await;
    index(&p).await;
    let working = ask(&p, "how are items packed under a budget?").await;
    assert_eq!(working.signals.vectors_failed, None);
    assert!(working.signals.describe().contains("vectors"));

    embedder.fail.store(true, Ordering::SeqCst);
    let answer = ask(&p, "how are items packed under a budget?").await;
    assert!(answer.assembly.items.iter().any(|i| i.lod.is_some()));
    let why = answer.signals.vectors_failed.as_deref().unwrap();
    assert!(why.contains("went away"), "{why}");
    assert!(
        answer.signals.describe().contains("vectors failed"),
        "{}",
        answer.signals.describe()
    );
    assert!(
        answer
            .assembly
            .report
            .warnings
            .iter()
            .any(|w| w.starts_with("answered without vectors") && w.contains("went away")),
        "{:?}",
        answer.assembly.report.warnings
    );
    // The lexical candidates are the same as with vectors, less the
    // vector-only ones: every candidate still has a non-vector signal.
    let retrieved = p
        .retrieve_noting(&RetrieveQuery::from_question("pack items"))
        .await
        .unwrap();
    assert!(retrieved.vectors_failed.is_some());
    assert!(!retrieved.candidates.is_empty());
    assert!(
        retrieved
            .candidates
            .iter()
            .all(|c| c.signals.vector_rank.is_none())
    );
}

/// Merging the lexical index after a large run changes no answer, and the
/// merged index opens as current (its commit keeps the catalog generation).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merging_the_lexical_index_changes_no_answer() {
    use loupe_engine::{AskCache, AskRequest};
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    let report = index(&p).await;
    // A watcher-sized update adds a segment of its own.
    let extra = env.write("src/extra.rs", "pub fn pool_timeout_extra() -> u32 { 7 }\n");
    p.update_paths(
        &[extra],
        &loupe_engine::progress::no_progress,
        &loupe_engine::CancelToken::new(),
    )
    .await
    .unwrap();
    let question = "how are items packed into the budget?";
    async fn ask(p: &loupe_engine::Project, question: &str) -> String {
        let request = AskRequest::new(question, Default::default());
        let answer = p.ask(&request, &mut AskCache::default()).await.unwrap();
        answer.assembly.prompt
    }
    let before = ask(&p, question).await;
    // A small run is not worth it; the sample's is merged only when asked
    // as if it were large.
    assert!(
        !p.compact_after(report.chunks_added.min(2_000))
            .await
            .unwrap()
    );
    assert!(p.compact_after(u64::MAX).await.unwrap());
    assert!(
        !p.compact_after(u64::MAX).await.unwrap(),
        "one segment already"
    );
    assert_eq!(ask(&p, question).await, before);
    p.catalog().close().await;
    drop(p);
    let p = env.open(None).await;
    let status = p.status().await.unwrap();
    assert!(status.recovered.is_empty(), "{:?}", status.recovered);
    assert_eq!(ask(&p, question).await, before);
}

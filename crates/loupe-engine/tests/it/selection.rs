//! Pins, bans, the indexed source, stale files and `@` completion
//! (`selection.rs`).

use crate::support::{Env, index, sample_project};
use loupe_engine::{CompletionKind, Selection, Target};

fn render_pin() -> Target {
    Target::Chunk {
        path: "src/render.rs".into(),
        symbol: Some("render_prompt".into()),
        start_line: 3,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_names_its_chunk_by_symbol_so_it_survives_a_reindex_that_moves_it() {
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    index(&p).await;
    let selection = Selection {
        pinned: vec![render_pin()],
        banned: Vec::new(),
    };
    // Nothing retrieved: the pinned chunk is looked up and added.
    let before = p.apply_selection(&[], &selection).await.unwrap();
    assert_eq!(before.candidates.len(), 1);
    let first = &before.candidates[0];
    assert!(first.signals.pinned);
    assert_eq!(first.chunk.symbol.as_deref(), Some("render_prompt"));

    // Lines move and the chunk gets a new id; the pin still finds it.
    env.write(
        "src/render.rs",
        "\n\n\nuse crate::pack::pack_items;\n\n\
         pub fn render_prompt() -> String {\n    format!(\"{}\", pack_items(10))\n}\n",
    );
    index(&p).await;
    let after = p.apply_selection(&[], &selection).await.unwrap();
    assert_eq!(after.candidates.len(), 1, "{:?}", after.missing);
    let moved = &after.candidates[0];
    assert_eq!(moved.chunk.symbol.as_deref(), Some("render_prompt"));
    assert_ne!(moved.chunk.id, first.chunk.id);
    assert_ne!(moved.chunk.start_line, first.chunk.start_line);
    assert!(after.missing.is_empty());
    assert_eq!(after.pinned_by.get(&moved.chunk.id), Some(&render_pin()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bans_remove_candidates_unless_a_chunk_pin_keeps_one() {
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    index(&p).await;
    let everything = p
        .retrieve(&loupe_engine::RetrieveQuery::from_question(
            "render_prompt pack_items",
        ))
        .await
        .unwrap();
    assert!(everything.iter().any(|c| c.chunk.path == "src/render.rs"));
    let selection = Selection {
        pinned: vec![render_pin()],
        banned: vec![
            Target::File {
                path: "src/render.rs".into(),
            },
            Target::File {
                path: "src/pack.rs".into(),
            },
        ],
    };
    let s = p.apply_selection(&everything, &selection).await.unwrap();
    assert!(s.candidates.iter().all(|c| c.chunk.path != "src/pack.rs"));
    assert!(s.banned.iter().any(|c| c.chunk.path == "src/pack.rs"));
    let kept: Vec<_> = s
        .candidates
        .iter()
        .filter(|c| c.chunk.path == "src/render.rs")
        .collect();
    assert!(kept.iter().all(|c| c.signals.pinned), "{kept:?}");
    assert_eq!(s.candidates.len() + s.banned.len(), everything.len());

    // A pin on a symbol that is gone is reported, not an error.
    let gone = Selection {
        pinned: vec![Target::Chunk {
            path: "src/render.rs".into(),
            symbol: Some("renamed_away".into()),
            start_line: 3,
        }],
        banned: Vec::new(),
    };
    let s = p.apply_selection(&everything, &gone).await.unwrap();
    assert_eq!(s.missing, gone.pinned);
    assert_eq!(s.candidates.len(), everything.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_pins_or_bans_every_file_under_it_and_nothing_beside_it() {
    let env = Env::new();
    sample_project(&env);
    // Beside `src/`, a folder whose name starts the same way.
    env.write("srcx/other.rs", "pub fn other() {}\n");
    env.write("src/deep/inner.rs", "pub fn inner() {}\n");
    let p = env.open(None).await;
    index(&p).await;
    let folder = Target::Folder { path: "src".into() };
    let paths = |cs: &[loupe_assemble::Candidate]| {
        let mut v: Vec<String> = cs.iter().map(|c| c.chunk.path.clone()).collect();
        v.sort();
        v.dedup();
        v
    };

    // Pinned with nothing retrieved: every file under it, at any depth, is
    // looked up and added; `srcx/` is not under `src/`.
    let pinned = Selection {
        pinned: vec![folder.clone()],
        banned: Vec::new(),
    };
    let s = p.apply_selection(&[], &pinned).await.unwrap();
    assert_eq!(
        paths(&s.candidates),
        ["src/deep/inner.rs", "src/pack.rs", "src/render.rs"]
    );
    assert!(s.candidates.iter().all(|c| c.signals.pinned));
    assert!(s.pinned_by.values().all(|t| t == &folder));

    // Banned: the retrieved candidates under it go, the rest stay.
    let everything = p
        .retrieve(&loupe_engine::RetrieveQuery::from_question(
            "render_prompt pack_items other inner write_report",
        ))
        .await
        .unwrap();
    let banned = Selection {
        pinned: Vec::new(),
        banned: vec![folder.clone()],
    };
    let s = p.apply_selection(&everything, &banned).await.unwrap();
    assert!(s.candidates.iter().all(|c| !folder.covers(&c.chunk.path)));
    assert!(s.candidates.iter().any(|c| c.chunk.path == "srcx/other.rs"));
    assert!(!s.banned.is_empty());
    assert!(s.banned.iter().all(|c| c.chunk.path.starts_with("src/")));
    assert_eq!(s.candidates.len() + s.banned.len(), everything.len());

    // A pin inside a banned folder wins, as inside a banned file.
    let both = Selection {
        pinned: vec![render_pin()],
        banned: vec![folder.clone()],
    };
    let s = p.apply_selection(&everything, &both).await.unwrap();
    assert!(
        s.candidates
            .iter()
            .any(|c| c.signals.pinned && c.chunk.path == "src/render.rs")
    );

    // A folder with nothing indexed under it is a missing pin.
    let none = Selection {
        pinned: vec![Target::Folder {
            path: "nowhere".into(),
        }],
        banned: Vec::new(),
    };
    let s = p.apply_selection(&[], &none).await.unwrap();
    assert_eq!(s.missing, none.pinned);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_indexed_files_are_read_and_changes_make_them_stale() {
    let env = Env::new();
    sample_project(&env);
    env.write(".env", "SECRET=1\n");
    let p = env.open(None).await;
    index(&p).await;
    let fresh = p.indexed_source("src/pack.rs").await.unwrap();
    assert!(fresh.text.contains("pub fn pack_items"));
    assert!(!fresh.stale);
    for outside in [".env", "../outside.rs", "/etc/passwd", "src"] {
        let e = p.indexed_source(outside).await.unwrap_err();
        assert!(
            matches!(e, loupe_engine::Error::Request(_)),
            "{outside}: {e}"
        );
    }
    let paths = vec!["src/pack.rs".to_owned(), "README.md".to_owned()];
    assert!(p.stale_paths(&paths).await.unwrap().is_empty());
    env.write("src/pack.rs", "pub fn pack_items() {}\n// edited\n");
    assert_eq!(p.stale_paths(&paths).await.unwrap(), ["src/pack.rs"]);
    assert!(p.indexed_source("src/pack.rs").await.unwrap().stale);
    std::fs::remove_file(env.root().join("README.md")).unwrap();
    assert_eq!(
        p.stale_paths(&paths).await.unwrap(),
        ["src/pack.rs", "README.md"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_offers_files_then_symbols_best_match_first() {
    let env = Env::new();
    sample_project(&env);
    let p = env.open(None).await;
    index(&p).await;
    let found = p.complete("@pack", 10).await.unwrap();
    let got: Vec<(CompletionKind, &str)> =
        found.iter().map(|c| (c.kind, c.value.as_str())).collect();
    assert_eq!(got[0], (CompletionKind::File, "src/pack.rs"));
    assert!(
        got.contains(&(CompletionKind::Symbol, "pack_items")),
        "{got:?}"
    );
    // Symbol names keep their case.
    let r = p.complete("RENDER", 10).await.unwrap();
    assert!(r.iter().any(|c| c.value == "render_prompt"), "{r:?}");
    assert!(p.complete("@", 10).await.unwrap().is_empty());
    assert_eq!(p.complete("p", 1).await.unwrap().len(), 1);
}

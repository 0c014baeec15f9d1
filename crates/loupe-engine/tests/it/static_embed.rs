//! The static (distilled) embedder, its lazily filled token table and the
//! table file, on a few hundred tokens of the vocabulary (distilling all 30k
//! belongs in a benchmark).

use loupe_engine::progress::{CancelToken, Progress, Stage, no_progress};
use loupe_engine::signals::embed::{
    Embedder, MEAN_TXT, PocketEmbedder, StaticEmbedder, TABLE_FILE, TableFileError, TokenTable,
    Vocabulary, distill, models_dir, shipped_mean, table_id,
};
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::sync::{Barrier, Mutex};

/// Texts whose tokens the tests distill.
const TEXTS: [&str; 4] = [
    "read the file from disk and return its contents",
    "load the contents of a file stored on the disk",
    "the dog chased the cat across the garden",
    "(empty)",
];

/// Further ids in the full-build subset: other tokens in its batches, so the
/// lazy rows are compared with rows distilled in other company.
const EXTRA_IDS: std::ops::Range<u32> = 2000..2300;

fn subset(vocab: &Vocabulary) -> Vec<u32> {
    let mut ids: Vec<u32> = EXTRA_IDS.collect();
    for t in TEXTS {
        ids.extend(vocab.ids(t).unwrap());
    }
    // A continuation piece and a token no text produces.
    ids.push(vocab_id(vocab, "##ing"));
    ids.push(vocab_id(vocab, "[unused1]"));
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The ids with a vector that embedding `texts` needs: their tokens and the
/// stand-in for a text without any.
fn needed(vocab: &Vocabulary, texts: &[&str]) -> Vec<u32> {
    let mut ids: Vec<u32> = texts
        .iter()
        .chain(&["(empty)"])
        .flat_map(|t| vocab.ids(t).unwrap())
        .filter(|&id| vocab.source_text(id).is_some())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Ids of the rows `table` has.
fn rows_of(table: &TokenTable) -> Vec<u32> {
    (0..table.rows())
        .filter(|&i| table.row(i).is_some())
        .map(|i| i as u32)
        .collect()
}

fn vocab_id(vocab: &Vocabulary, token: &str) -> u32 {
    (0..vocab.size() as u32)
        .find(|&i| vocab.token(i).as_deref() == Some(token))
        .unwrap()
}

fn owned(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| t.to_string()).collect()
}

fn table_path(root: &Path) -> PathBuf {
    models_dir(root).join(TABLE_FILE)
}

fn load(root: &Path) -> Result<TokenTable, TableFileError> {
    let vocab = Vocabulary::bundled().unwrap();
    TokenTable::load(&table_path(root), &table_id(), vocab.size(), 384)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f32]) -> f32 {
    dot(a, a).sqrt()
}

#[test]
fn the_vendored_tokenizer_is_the_bundled_models() {
    let bytes = include_bytes!("../../assets/minilm-l3-tokenizer.json");
    let hex: String = sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hex, pocket_encoder::model_info().tokenizer_sha256);
}

#[test]
fn the_shipped_mean_is_for_this_distillation() {
    assert_eq!(MEAN_TXT.lines().next(), Some(table_id().as_str()));
    let mean = shipped_mean().unwrap();
    assert_eq!(mean.len(), pocket_encoder::model_info().dimensions);
    // Token vectors are unit vectors around a common direction: their mean
    // is neither zero nor a unit vector.
    assert!((0.05..0.95).contains(&norm(&mean)), "{}", norm(&mean));
}

#[test]
fn distilling_is_deterministic_and_gives_unit_vectors_to_reachable_tokens() {
    let vocab = Vocabulary::bundled().unwrap();
    let encoder = PocketEmbedder::new().unwrap();
    let ids = subset(&vocab);
    let reports = Mutex::new(Vec::new());
    let sink = |p: Progress| reports.lock().unwrap().push(p);
    let a = distill(&encoder, &vocab, &ids, &sink, &CancelToken::new()).unwrap();
    let b = distill(&encoder, &vocab, &ids, &no_progress, &CancelToken::new()).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.rows(), vocab.size());
    assert_eq!(a.id, table_id());

    let unused = vocab_id(&vocab, "[unused1]") as usize;
    assert!(a.row(unused).is_none(), "no text produces [unused1]");
    assert!(a.row(1).is_none(), "ids outside the subset stay empty");
    // A continuation piece gets the vector of its surface text.
    let ing = a.row(vocab_id(&vocab, "##ing") as usize).unwrap();
    let plain = &encoder.embed(&["ing".to_owned()]).unwrap()[0];
    assert!(dot(ing, plain) > 0.999);
    // A word-initial token is embedded alone, as the model sees it.
    let file = a.row(vocab_id(&vocab, "file") as usize).unwrap();
    let alone = &encoder.embed(&["file".to_owned()]).unwrap()[0];
    assert!(dot(file, alone) > 0.999);
    for id in &ids {
        if let Some(row) = a.row(*id as usize) {
            assert!((norm(row) - 1.0).abs() < 1e-3);
        }
    }
    let reports = reports.into_inner().unwrap();
    assert!(reports.iter().all(|p| p.stage == Stage::Distill));
    let last = reports.last().unwrap();
    assert_eq!(Some(last.done), last.total);
}

#[test]
fn distilling_stops_when_cancelled() {
    let vocab = Vocabulary::bundled().unwrap();
    let encoder = PocketEmbedder::new().unwrap();
    let cancel = CancelToken::new();
    cancel.cancel();
    let r = distill(&encoder, &vocab, &subset(&vocab), &no_progress, &cancel);
    assert!(matches!(r, Err(loupe_engine::Error::Cancelled)));
}

#[test]
fn opening_without_a_table_distills_nothing_until_a_text_needs_it() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = Vocabulary::bundled().unwrap();
    let embedder = StaticEmbedder::open(dir.path()).unwrap();
    assert_eq!(embedder.present(), 0);
    assert!(!models_dir(dir.path()).exists(), "open writes nothing");
    let id = embedder.model_id().to_owned();
    assert!(id.starts_with("static:"));
    assert_ne!(id, PocketEmbedder::new().unwrap().model_id());

    embedder.embed(&owned(&TEXTS[..1])).unwrap();
    let first = needed(&vocab, &TEXTS[..1]);
    assert_eq!(
        rows_of(&embedder.table()),
        first,
        "only what the text needs"
    );
    assert_eq!(
        rows_of(&load(dir.path()).unwrap()),
        first,
        "and it is saved"
    );
    embedder.embed(&owned(&TEXTS)).unwrap();
    assert_eq!(rows_of(&embedder.table()), needed(&vocab, &TEXTS));
    assert_eq!(
        embedder.model_id(),
        id,
        "the model id names the recipe, not the rows"
    );
}

#[test]
fn filling_the_whole_table_stops_when_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = StaticEmbedder::open(dir.path()).unwrap();
    let cancel = CancelToken::new();
    cancel.cancel();
    let reports = Mutex::new(Vec::new());
    let sink = |p: Progress| reports.lock().unwrap().push(p);
    let r = embedder.fill_all(&sink, &cancel);
    assert!(matches!(r, Err(loupe_engine::Error::Cancelled)));
    assert_eq!(embedder.present(), 0);
    let reports = reports.into_inner().unwrap();
    let vocab = Vocabulary::bundled().unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].stage, Stage::Distill);
    assert_eq!(reports[0].total, Some(vocab.size() as u64));
}

#[test]
fn the_lazy_table_equals_the_full_build_and_vectors_do_not_depend_on_other_rows() {
    let vocab = Vocabulary::bundled().unwrap();
    let full = distill(
        &PocketEmbedder::new().unwrap(),
        &vocab,
        &subset(&vocab),
        &no_progress,
        &CancelToken::new(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let lazy = StaticEmbedder::open(dir.path()).unwrap();
    let small = lazy.embed(&owned(&TEXTS[..1])).unwrap();
    let all = lazy.embed(&owned(&TEXTS)).unwrap();
    let table = lazy.table();
    for id in needed(&vocab, &TEXTS) {
        let (a, b) = (table.row(id as usize), full.row(id as usize));
        assert_eq!(a, b, "row {id} ({:?})", vocab.token(id));
    }
    // A vector depends on its text's rows only: the same with the table
    // holding only those rows and with it holding more.
    assert_eq!(small[0], all[0]);

    lazy.persist().unwrap();
    let again = StaticEmbedder::open(dir.path()).unwrap();
    assert_eq!(
        again.table(),
        table,
        "the file holds exactly the rows in memory"
    );
    assert_eq!(again.embed(&owned(&TEXTS)).unwrap(), all);
    assert_eq!(again.present(), lazy.present(), "nothing distilled again");
}

#[test]
fn static_vectors_are_unit_deterministic_and_closer_for_similar_texts() {
    let embedder = StaticEmbedder::in_memory().unwrap();
    let mut texts = owned(&TEXTS);
    texts.push("   ".into());
    texts.push("\u{1F980}\u{1F980}".into());
    let a = embedder.embed(&texts).unwrap();
    let b = embedder.embed(&texts).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.len(), texts.len());
    for v in &a {
        assert_eq!(v.len(), embedder.dim());
        assert!((norm(v) - 1.0).abs() < 1e-4);
    }
    // Blank text falls back to "(empty)"; text the vocabulary does not know
    // is `[UNK]`, which has a vector of its own (the model's, for "[UNK]").
    assert_eq!(a[4], a[3]);
    assert_ne!(a[5], a[3]);
    let similar = dot(&a[0], &a[1]);
    let unrelated = dot(&a[0], &a[2]).max(dot(&a[1], &a[2]));
    assert!(
        similar > unrelated + 0.1,
        "similar {similar} vs unrelated {unrelated}"
    );
}

#[test]
fn concurrent_embedding_is_safe_and_gives_what_one_thread_gives() {
    const THREADS: usize = 4;
    let dir = tempfile::tempdir().unwrap();
    let shared = StaticEmbedder::open(dir.path()).unwrap();
    // Overlapping sets: every thread needs some rows another one needs too.
    let sets: Vec<Vec<String>> = (0..THREADS)
        .map(|i| owned(&[TEXTS[i], TEXTS[(i + 1) % TEXTS.len()]]))
        .collect();
    let start = Barrier::new(THREADS);
    let got: Vec<Vec<Vec<f32>>> = std::thread::scope(|s| {
        let handles: Vec<_> = sets
            .iter()
            .map(|texts| {
                let (embedder, start) = (shared.clone(), &start);
                s.spawn(move || {
                    start.wait();
                    embedder.embed(texts).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let alone = StaticEmbedder::in_memory().unwrap();
    for (texts, vectors) in sets.iter().zip(&got) {
        assert_eq!(&alone.embed(texts).unwrap(), vectors);
    }
    assert_eq!(shared.table(), alone.table());
    shared.persist().unwrap();
    assert_eq!(load(dir.path()).unwrap(), alone.table());
}

#[test]
fn a_partial_table_is_extended_and_a_damaged_or_foreign_one_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = Vocabulary::bundled().unwrap();
    let first = StaticEmbedder::open(dir.path()).unwrap();
    let expected = first.embed(&owned(&TEXTS)).unwrap();
    drop(first);

    // Partial: a file with the rows of one text is used and grows.
    let one = StaticEmbedder::in_memory().unwrap();
    one.embed(&owned(&TEXTS[..1])).unwrap();
    one.table().save(&table_path(dir.path())).unwrap();
    let grown = StaticEmbedder::open(dir.path()).unwrap();
    assert_eq!(rows_of(&grown.table()), needed(&vocab, &TEXTS[..1]));
    assert_eq!(grown.embed(&owned(&TEXTS)).unwrap(), expected);
    grown.persist().unwrap();
    assert_eq!(rows_of(&load(dir.path()).unwrap()), needed(&vocab, &TEXTS));

    let bytes = std::fs::read(table_path(dir.path())).unwrap();
    let mut flipped = bytes.clone();
    *flipped.last_mut().unwrap() ^= 0x40;
    let foreign = TokenTable::empty("some other model", vocab.size(), 384).to_bytes();
    let damaged: [(&str, &[u8]); 4] = [
        ("truncated in the payload", &bytes[..bytes.len() / 2]),
        ("a flipped bit", &flipped),
        ("not a table", b"garbage"),
        ("another model's table", &foreign),
    ];
    for (what, file) in damaged {
        std::fs::write(table_path(dir.path()), file).unwrap();
        assert!(load(dir.path()).is_err(), "{what}: the check sees it");
        let embedder = StaticEmbedder::open(dir.path()).unwrap();
        assert_eq!(embedder.present(), 0, "{what}: not used");
        assert_eq!(embedder.embed(&owned(&TEXTS)).unwrap(), expected, "{what}");
        embedder.persist().unwrap();
        let saved = load(dir.path()).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(rows_of(&saved), needed(&vocab, &TEXTS), "{what}: replaced");
    }
    // No temp file left behind.
    assert_eq!(
        std::fs::read_dir(models_dir(dir.path())).unwrap().count(),
        1
    );
}

#[test]
fn rows_distilled_since_the_last_save_are_saved_when_the_embedder_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = Vocabulary::bundled().unwrap();
    let embedder = StaticEmbedder::open(dir.path()).unwrap();
    // The first rows are saved at once; these follow within SAVE_INTERVAL.
    embedder.embed(&owned(&TEXTS[..1])).unwrap();
    embedder.embed(&owned(&TEXTS)).unwrap();
    drop(embedder);
    assert_eq!(rows_of(&load(dir.path()).unwrap()), needed(&vocab, &TEXTS));
}

#[test]
fn table_file_round_trips_and_rejects_damage() {
    let mut table = TokenTable::empty("model-a", 6, 4);
    table.set_row(1, &[0.5, 0.5, 0.5, 0.5]);
    table.set_row(4, &[0.0, -0.25, 0.75, 0.125]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.table");
    table.save(&path).unwrap();
    let back = TokenTable::load(&path, "model-a", 6, 4).unwrap();
    assert_eq!(back, table, "these values are exact in f16");
    assert_eq!(back.present(), 2);
    // No temp file left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // A row is kept as the file keeps it.
    table.set_row(2, &[0.1, 0.2, 0.3, 0.4]);
    assert_eq!(table.row(2).unwrap()[0], half_of(0.1));
    let mean = table.mean().unwrap()[1];
    assert!(
        (mean - (0.5 + half_of(0.2) - 0.25) / 3.0).abs() < 1e-6,
        "{mean}"
    );

    let bytes = std::fs::read(&path).unwrap();
    let invalid = |bytes: &[u8], id: &str, rows: usize, dim: usize| match TokenTable::from_bytes(
        bytes, id, rows, dim,
    ) {
        Err(TableFileError::Invalid(why)) => why,
        other => panic!("expected an invalid table, got {other:?}"),
    };
    assert!(invalid(&bytes, "model-b", 6, 4).contains("made for model `model-a`"));
    assert!(invalid(&bytes, "model-a", 7, 4).contains("expected 7 × 4"));
    let mut flipped = bytes.clone();
    *flipped.last_mut().unwrap() ^= 0x40;
    assert!(invalid(&flipped, "model-a", 6, 4).contains("checksum"));
    assert!(invalid(&bytes[..bytes.len() - 1], "model-a", 6, 4).contains("payload"));
    assert!(invalid(&bytes[..20], "model-a", 6, 4).contains("shorter than the header"));
    assert!(
        invalid(
            b"not a table at all, just some bytes here....................",
            "model-a",
            6,
            4
        )
        .contains("magic")
    );
    assert!(matches!(
        TokenTable::load(&dir.path().join("none"), "model-a", 6, 4),
        Err(TableFileError::Missing)
    ));
}

fn half_of(x: f32) -> f32 {
    loupe_engine::signals::embed::round_f16(x)
}

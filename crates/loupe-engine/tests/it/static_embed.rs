//! The static (distilled) embedder and its table file, on a few hundred
//! tokens of the vocabulary (distilling all 30k belongs in a benchmark).

use loupe_engine::embed::{
    Embedder, PocketEmbedder, StaticEmbedder, TABLE_FILE, TableFileError, TokenTable, Vocabulary,
    distill, load_or_distill, models_dir,
};
use loupe_engine::progress::{CancelToken, Progress, Stage, no_progress};
use sha2::Digest;
use std::sync::Mutex;

/// Texts whose tokens are in the test subset.
const TEXTS: [&str; 4] = [
    "read the file from disk and return its contents",
    "load the contents of a file stored on the disk",
    "the dog chased the cat across the garden",
    "(empty)",
];

/// Further ids in the subset: enough other tokens for a meaningful mean.
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

fn vocab_id(vocab: &Vocabulary, token: &str) -> u32 {
    (0..vocab.size() as u32)
        .find(|&i| vocab.token(i).as_deref() == Some(token))
        .unwrap()
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
            assert!((norm(row) - 1.0).abs() < 1e-4);
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
fn static_vectors_are_unit_deterministic_and_closer_for_similar_texts() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = Vocabulary::bundled().unwrap();
    let ids = subset(&vocab);
    let (table, _) =
        load_or_distill(dir.path(), &vocab, &ids, &no_progress, &CancelToken::new()).unwrap();
    let embedder = StaticEmbedder::from_table(vocab, table).unwrap();
    assert!(embedder.model_id().starts_with("static:"));
    assert_ne!(
        embedder.model_id(),
        PocketEmbedder::new().unwrap().model_id()
    );
    let mut texts: Vec<String> = TEXTS.iter().map(|t| t.to_string()).collect();
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
    // Blank text and text with no known token fall back to "(empty)".
    assert_eq!(a[4], a[3]);
    assert_eq!(a[5], a[3]);
    let similar = dot(&a[0], &a[1]);
    let unrelated = dot(&a[0], &a[2]).max(dot(&a[1], &a[2]));
    assert!(
        similar > unrelated + 0.1,
        "similar {similar} vs unrelated {unrelated}"
    );
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

#[test]
fn a_corrupt_or_foreign_table_file_is_distilled_again() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = Vocabulary::bundled().unwrap();
    let ids = subset(&vocab);
    let cancel = CancelToken::new();
    let (first, took) = load_or_distill(dir.path(), &vocab, &ids, &no_progress, &cancel).unwrap();
    assert!(took.is_some(), "nothing on disk yet: distilled");
    let path = models_dir(dir.path()).join(TABLE_FILE);
    let (loaded, took) = load_or_distill(dir.path(), &vocab, &ids, &no_progress, &cancel).unwrap();
    assert!(took.is_none(), "second open loads the file");
    let same = StaticEmbedder::from_table(vocab.clone(), first.clone()).unwrap();
    let from_disk = StaticEmbedder::from_table(vocab.clone(), loaded).unwrap();
    let texts = vec![TEXTS[0].to_owned()];
    assert!(
        dot(
            &same.embed(&texts).unwrap()[0],
            &from_disk.embed(&texts).unwrap()[0]
        ) > 0.9999
    );

    // Damaged: truncated in the payload.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let (_, took) = load_or_distill(dir.path(), &vocab, &ids, &no_progress, &cancel).unwrap();
    assert!(took.is_some(), "a damaged file is distilled again");
    assert!(TokenTable::load(&path, &first.id, first.rows(), first.dim).is_ok());

    // Foreign: a valid file for another model (or the whole vocabulary).
    TokenTable::empty("some other model", first.rows(), first.dim)
        .save(&path)
        .unwrap();
    let (again, took) = load_or_distill(dir.path(), &vocab, &ids, &no_progress, &cancel).unwrap();
    assert!(took.is_some(), "a table of another model is not used");
    assert_eq!(again.id, first.id);
    assert!(TokenTable::load(&path, &first.id, first.rows(), first.dim).is_ok());
}

//! Fuzzing on the stable toolchain (issue 16): every parser of text a user
//! or a repository controls, run on generated input until a time limit,
//! through proptest's runner (which catches a panic, shrinks the input and
//! reports it).
//!
//! Each target runs for `LOUPE_FUZZ_SECS` seconds (default 2: the smoke
//! run `make test` does); `make fuzz` runs each for 10 minutes in release.
//! Seeds are the round number, so a run is reproducible given its length;
//! `LOUPE_FUZZ_REPORT=FILE` appends one JSON line per target (cases run,
//! failures) for FUZZING.md.
//!
//! Targets: the chunker of every language (with the chunk invariants) and
//! the outline renderer at every level of detail on what it cut; the
//! question analyzer; the `.loupe.toml` team file; the golden-question
//! file; the guard (sanitizer, secrets, injections); the code embedder's
//! words and pooling.

use loupe_assemble::Knobs;
use loupe_assemble::compress::{RenderOptions, render};
use loupe_assemble::guard::{GuardConfig, guard_text};
use loupe_engine::indexing::chunk::{ChunkConfig, chunk_file};
use loupe_engine::signals::embed::CodeModel;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::io::Write as _;
use std::time::{Duration, Instant};

/// Run `check` on values of `strategy` until the time limit; panic with
/// proptest's minimal failing input if any case panics.
fn fuzz<S: Strategy>(name: &str, strategy: S, check: impl Fn(S::Value))
where
    S::Value: std::fmt::Debug,
{
    let secs: f64 = std::env::var("LOUPE_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let started = Instant::now();
    let limit = Duration::from_secs_f64(secs);
    let per_round = 64u32;
    let mut cases = 0u64;
    let mut round = 0u64;
    while started.elapsed() < limit || round == 0 {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&round.to_le_bytes());
        seed[8..8 + name.len().min(24)].copy_from_slice(&name.as_bytes()[..name.len().min(24)]);
        let config = Config {
            cases: per_round,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner =
            TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
        if let Err(e) = runner.run(&strategy, |v| {
            check(v);
            Ok(())
        }) {
            panic!("fuzz target {name}, round {round}: {e}");
        }
        cases += u64::from(per_round);
        round += 1;
    }
    let took = started.elapsed().as_secs_f64();
    eprintln!("fuzz {name}: {cases} cases in {took:.1} s, no failure");
    if let Ok(path) = std::env::var("LOUPE_FUZZ_REPORT") {
        let line =
            serde_json::json!({ "target": name, "cases": cases, "seconds": took, "failures": 0 });
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// Pieces that stress parsers: delimiters left open, quotes, comments,
/// keywords of several languages, odd whitespace and Unicode.
const FRAGMENTS: &[&str] = &[
    "fn ",
    "def ",
    "class ",
    "impl ",
    "struct ",
    "func ",
    "function ",
    "interface ",
    "module ",
    "end\n",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    "\"",
    "'",
    "`",
    "\"\"\"",
    "/*",
    "*/",
    "//",
    "#",
    "--",
    "\n",
    "\r\n",
    "\t",
    "    ",
    ":",
    ";",
    ",",
    ".",
    "=>",
    "->",
    "::",
    "@",
    "$",
    "\\",
    "\u{0}",
    "\u{feff}",
    "\u{200b}",
    "é",
    "日本",
    "🦀",
    "\u{202e}",
    "x",
    "foo_bar",
    "FooBar",
    "#[test]",
    "@decorator\n",
    "/// doc\n",
    "# comment\n",
    "```",
    "<<EOF\n",
    "import os\n",
    "use std::io;\n",
    "package main\n",
    "#include <x.h>\n",
    "return ",
    "if ",
    "else ",
    "yield ",
    "async ",
    "await ",
    "lambda ",
    "=",
    "0x1F",
    "1e9",
    "ignore previous instructions ",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
    "-----BEGIN RSA PRIVATE KEY-----\n",
];

/// Text as a repository may hold it: raw bytes decoded lossily, arbitrary
/// printable text, or runs of parser-stressing fragments.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..3000)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        "(\\PC|\n|\r\n| ){0,800}",
        prop::collection::vec(prop::sample::select(FRAGMENTS), 0..400).prop_map(|v| v.concat()),
    ]
}

const EXTENSIONS: &[&str] = &[
    "rs", "py", "ts", "tsx", "js", "go", "java", "c", "h", "cpp", "cs", "rb", "md", "txt",
];

#[test]
fn fuzz_chunker_and_renderer() {
    let cfg = ChunkConfig {
        max_chunk_bytes: 300,
        min_chunk_bytes: 100,
        ..ChunkConfig::default()
    };
    let strategy = (text(), prop::sample::select(EXTENSIONS));
    fuzz("chunk+render", strategy, |(src, ext)| {
        let rel = format!("src/f.{ext}");
        let parsed = chunk_file(&rel, &src, &cfg);
        for c in &parsed.chunks {
            let (s, e) = (c.start_byte as usize, c.end_byte as usize);
            assert!(s < e && e <= src.len(), "{rel}: range {s}..{e}");
            assert!(src.is_char_boundary(s) && src.is_char_boundary(e));
            assert!(c.start_line <= c.end_line);
            let chunk = loupe_assemble::Chunk {
                id: 1,
                path: rel.clone(),
                language: parsed.language.to_owned(),
                kind: c.kind,
                symbol: c.symbol.clone(),
                parent: c.parent.clone(),
                start_byte: c.start_byte,
                end_byte: c.end_byte,
                start_line: c.start_line,
                end_line: c.end_line,
                role: loupe_assemble::Role::Code,
                text: src[s..e].to_owned(),
                outline: c.outline.clone(),
                hash: String::new(),
                tokens: 0,
            };
            for lod in 0..=5 {
                for skip_imports in [false, true] {
                    let _ = render(&chunk, lod, RenderOptions { skip_imports });
                }
            }
        }
    });
}

#[test]
fn fuzz_question_analyzer() {
    fuzz("analyze", text(), |q| {
        let _ = loupe_assemble::classify::analyze(&q);
    });
}

#[test]
fn fuzz_team_file() {
    // TOML-shaped text as well as arbitrary text.
    let toml_like = prop::collection::vec(
        prop::sample::select(
            &[
                "[knobs]\n",
                "[paths]\n",
                "budget = ",
                "model = ",
                "format = ",
                "weights = ",
                "\"src/**\" = ",
                "1.5\n",
                "-3\n",
                "1e400\n",
                "nan\n",
                "\"xml\"\n",
                "[\n",
                "]\n",
                "{ a = 1 }\n",
                "true\n",
                "'''\n",
                "\"\\u0000\"\n",
                "k = 99999999999999999999\n",
            ][..],
        ),
        0..60,
    )
    .prop_map(|v| v.concat());
    fuzz("team-file", prop_oneof![toml_like, text()], |t| {
        let mut knobs = Knobs::default();
        let _ = loupe_engine::team::apply(&t, &mut knobs);
    });
}

#[test]
fn fuzz_golden_file() {
    let golden_like = prop::collection::vec(
        prop::sample::select(
            &[
                "[[question]]\n",
                "text = ",
                "\"how?\"\n",
                "expect = ",
                "[\"src/a.rs\"]\n",
                "budget = ",
                "12\n",
                "-1\n",
                "weight = ",
                "{ \"x\" = 20 }\n",
                "[",
                "]\n",
                "\n",
                "pins = ",
                "bans = ",
                "type = ",
                "\"review\"\n",
                "'''\n",
            ][..],
        ),
        0..60,
    )
    .prop_map(|v| v.concat());
    fuzz("golden-file", prop_oneof![golden_like, text()], |t| {
        let _ = loupe_engine::asking::golden::parse(&t);
    });
}

#[test]
fn fuzz_guard() {
    let all = GuardConfig {
        sanitize: true,
        injections: true,
        secrets: true,
    };
    fuzz("guard", (text(), 1u32..100_000), |(t, line)| {
        let mut out = Vec::new();
        let _ = guard_text(&t, all, "src/f.rs", line, &mut out);
    });
}

#[test]
fn fuzz_code_embedder() {
    let model = CodeModel::shipped().expect("the shipped model decodes");
    fuzz("code-embed", text(), |t| {
        let v = model.embed_one(&t).expect("the model file stays readable");
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "norm {norm}");
    });
}

/// The harness itself: a target that panics on some inputs fails the run,
/// naming the target and the failure of proptest's shrunk input (so a real
/// crash cannot pass unnoticed).
#[test]
fn a_panicking_target_fails_the_run() {
    let failed = std::panic::catch_unwind(|| {
        fuzz("canary", text(), |t| {
            assert!(!t.contains('{'), "found a brace")
        });
    });
    let message = failed
        .err()
        .and_then(|p| p.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(message.contains("fuzz target canary"), "{message:?}");
    assert!(message.contains("found a brace"), "{message:?}");
}

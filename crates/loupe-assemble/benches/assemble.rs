//! Knob-change benchmark: re-assemble 1,000 candidates with a changed knob
//! (issue 3's target: p95 < 8 ms in release). Run with
//! `cargo bench -p loupe-assemble`; prints p50/p95 per scenario.

use std::time::{Duration, Instant};

use loupe_assemble::rank::PathWeight;
use loupe_assemble::{
    AssembleRequest, Budget, Candidate, Chunk, Knobs, OutlineSpan, Role, Signals, SpanKind,
    assemble,
};

/// Candidates in the benchmark (issue 3: "over 1,000 candidates").
const CANDIDATES: usize = 1_000;
/// Runs per scenario.
const RUNS: usize = 40;

fn candidate(n: usize) -> Candidate {
    let sig = format!("pub fn handler_{n}(request: &Request, state: &State) -> Result<Response> ");
    let body: String = (0..(5 + n % 40))
        .map(|l| format!("    let value_{l} = state.lookup(request.key({l}))?;\n"))
        .collect();
    let doc = format!("/// Handles request kind {n} and returns its response.\n");
    let text = format!("{doc}{sig}{{\n{body}    Ok(Response::new())\n}}\n");
    let d = doc.len() as u32;
    let s = d + sig.len() as u32;
    let outline = vec![
        OutlineSpan {
            kind: SpanKind::Doc,
            start: 0,
            end: d,
        },
        OutlineSpan {
            kind: SpanKind::Signature,
            start: d,
            end: s,
        },
        OutlineSpan {
            kind: SpanKind::Body,
            start: s,
            end: text.len() as u32,
        },
    ];
    Candidate {
        chunk: Chunk {
            symbol: Some(format!("handler_{n}")),
            start_byte: (n as u32) * 4_000,
            end_byte: (n as u32) * 4_000 + text.len() as u32,
            start_line: 1 + n as u32 * 100,
            end_line: 1 + n as u32 * 100 + text.lines().count() as u32,
            role: if n.is_multiple_of(7) {
                Role::Tests
            } else {
                Role::Code
            },
            hash: format!("{n:016x}"),
            text,
            outline,
            ..Chunk::sample(
                n as i64,
                &format!("src/module_{}/file_{}.rs", n % 17, n % 101),
                "",
            )
        },
        signals: Signals {
            bm25_rank: (!n.is_multiple_of(3)).then_some(1 + n as u32 / 2),
            vector_rank: (n.is_multiple_of(2)).then_some(1 + n as u32 / 3),
            symbol_hits: u32::from(n.is_multiple_of(50)),
            mtime: 1_700_000_000 - n as i64 * 3_600,
            pinned: n == 500,
            ..Default::default()
        },
    }
}

fn time(name: &str, candidates: &[Candidate], requests: &[AssembleRequest]) {
    let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
    for run in 0..RUNS {
        let request = &requests[run % requests.len()];
        let start = Instant::now();
        let assembly = assemble(candidates, request);
        times.push(start.elapsed());
        std::hint::black_box(assembly);
    }
    times.sort();
    let p50 = times[RUNS / 2];
    let p95 = times[RUNS * 95 / 100];
    println!("{name:<40} p50 {:>8.2?} p95 {:>8.2?}", p50, p95);
}

fn main() {
    let candidates: Vec<Candidate> = (0..CANDIDATES).map(candidate).collect();
    let base = AssembleRequest {
        question: "How does request handling look up state?".into(),
        knobs: Knobs {
            now: 1_700_000_000,
            ..Knobs::default()
        },
        ..Default::default()
    };
    // Warm the tokenizer tables once, outside the timings.
    assemble(&candidates, &base);
    let budgets: Vec<AssembleRequest> = [4_000, 8_000, 12_000, 20_000]
        .iter()
        .map(|b| AssembleRequest {
            knobs: Knobs {
                budget: Some(Budget::Tokens(*b)),
                ..base.knobs.clone()
            },
            ..base.clone()
        })
        .collect();
    time("budget slider (4k-20k tokens, k=20)", &candidates, &budgets);
    let weights: Vec<AssembleRequest> = [0.5f32, 1.0, 1.5, 2.0]
        .iter()
        .map(|w| AssembleRequest {
            knobs: Knobs {
                path_weights: vec![PathWeight {
                    glob: "src/module_3/**".into(),
                    weight: *w,
                }],
                ..base.knobs.clone()
            },
            ..base.clone()
        })
        .collect();
    time("path weight slider", &candidates, &weights);
    let wide: Vec<AssembleRequest> = [60usize, 100]
        .iter()
        .map(|k| AssembleRequest {
            knobs: Knobs {
                k: Some(*k),
                budget: Some(Budget::Tokens(20_000)),
                ..base.knobs.clone()
            },
            ..base.clone()
        })
        .collect();
    time("k 60-100, 20k tokens", &candidates, &wide);
    let chars: Vec<AssembleRequest> = [16_000u32, 32_000, 48_000, 80_000]
        .iter()
        .map(|c| AssembleRequest {
            knobs: Knobs {
                budget: Some(Budget::Chars(*c)),
                ..base.knobs.clone()
            },
            ..base.clone()
        })
        .collect();
    time(
        "budget slider in chars (16k-80k, k=20)",
        &candidates,
        &chars,
    );
}

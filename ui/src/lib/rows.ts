// A row's identity across answers to the same question. Chunk ids are the
// index's, except in an answer from a scan (before a first index lands),
// whose ids are its own: the rows that entered or left the prompt when the
// index landed are matched by where they are, not by id.

import type { RowDto } from './backend';

export function rowKey(r: RowDto): string {
  return `${r.path}:${r.start_line}`;
}

// The representation benchmark's anchor: TOON's reference encoder (npm
// @toon-format/toon, pinned in package.json) over every document of a
// corpus directory, with its default options. A `.jsonl` document is its
// array of values. Writes NAME.toon beside nothing else, into OUT_DIR.
// Usage: node toon-encode.mjs CORPUS_DIR OUT_DIR
import { encode } from '@toon-format/toon';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [corpus, out] = process.argv.slice(2);
for (const name of readdirSync(corpus).sort()) {
  const text = readFileSync(join(corpus, name), 'utf8');
  let value;
  if (name.endsWith('.jsonl')) {
    value = text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line));
  } else if (name.endsWith('.json')) {
    value = JSON.parse(text);
  } else {
    continue;
  }
  writeFileSync(join(out, `${name}.toon`), encode(value));
}

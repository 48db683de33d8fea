/** What every part's CRD tests check the same way: the generated files are current, and objects go in whole. */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CrdFile } from '../kind.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');

/** `dir` (from the repository root) holds exactly `generated`, byte for byte. */
export async function assertCrdFilesCurrent(generated: readonly CrdFile[], dir: string): Promise<void> {
  const path = join(ROOT, dir);
  const onDisk = (await readdir(path)).filter((f) => f.endsWith('.yaml')).sort();
  assert.deepEqual(onDisk, generated.map((f) => f.name).sort());
  for (const f of generated) {
    assert.equal(await readFile(join(path, f.name), 'utf8'), f.text, `${f.name} is stale`);
  }
}

/** Every field of `expected` is in `actual` with the same value (the server may add defaults). */
export function assertContains(actual: unknown, expected: unknown, path: string): void {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    assert.ok(
      actual !== null && typeof actual === 'object' && !Array.isArray(actual),
      `${path}: not an object`,
    );
    for (const [k, v] of Object.entries(expected)) {
      assertContains((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
    }
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: not a list`);
    assert.equal(actual.length, expected.length, `${path}: length`);
    expected.forEach((v, i) => assertContains(actual[i], v, `${path}[${i}]`));
  } else {
    assert.deepEqual(actual, expected, path);
  }
}

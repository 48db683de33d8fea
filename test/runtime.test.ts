import assert from 'node:assert/strict';
import { it } from 'node:test';

it('runs the tests on Node >= 22 (the pinned Node 24 from devDependencies)', () => {
  const major = Number(process.versions.node.split('.')[0]);
  assert.ok(
    major >= 22,
    `tests run on Node ${process.version}; run them through npm so the pinned Node is used`,
  );
});

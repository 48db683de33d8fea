/**
 * The kubeconfig the emulator writes holds its bearer token: readable by its owner only, whatever a
 * file left at the path allowed before, and its path comes back absolute.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startKubeSim } from './start.ts';

describe('startKubeSim kubeconfig', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'shiftstack-kube-files-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('writes the kubeconfig with mode 0600 over a world-readable file, and returns its absolute path', async () => {
    const path = join(dir, 'kubeconfig');
    await writeFile(path, 'apiVersion: v1\n', { mode: 0o644 });
    const kube = await startKubeSim({ kubeconfigPath: relative(process.cwd(), path) });
    await kube.dispose();
    assert.equal(((await stat(path)).mode & 0o777).toString(8), '600');
    assert.ok(isAbsolute(kube.kubeconfigPath), kube.kubeconfigPath);
    assert.equal(kube.kubeconfigPath, path);
  });
});

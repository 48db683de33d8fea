/**
 * `shiftstack ccm-operator run`: every bad input is reported before anything starts, all of them
 * in one run, each naming the flag and the fix, exit 2.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../main.ts';

async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['node', 'shiftstack', '--log-level', 'silent', 'ccm-operator', 'run', ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    signal: AbortSignal.abort(),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('shiftstack ccm-operator run', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-ccm-operator-run-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('reports every bad input at once, with the fix, and exits 2', async () => {
    const images = join(dir, 'images.json');
    await writeFile(images, '["not", "an", "object"]');
    const bundle = join(dir, 'bundle.pem');
    await writeFile(bundle, 'no certificate here');
    const r = await run(
      '--kubeconfig',
      join(dir, 'missing-kubeconfig'),
      '--leader-elect-lease-duration',
      'soon',
      '--leader-elect-resource-lock',
      'configmaps',
      '--health-addr',
      'everywhere',
      '--images-json',
      images,
      '--system-ca-bundle',
      bundle,
      '--namespace',
      'a',
      '--managed-namespace',
      'b',
    );
    assert.equal(r.code, 2, r.err);
    for (const want of [
      /--leader-elect-lease-duration: "soon" is not a duration/,
      /--leader-elect-resource-lock=configmaps is not supported/,
      /--health-addr: "everywhere" is not an address/,
      /--images-json .*images\.json.*not an images map: write a JSON object from image key to image reference/,
      /--system-ca-bundle .*bundle\.pem: .*PEM/,
      /--namespace=a and --managed-namespace=b disagree/,
      /missing-kubeconfig/,
    ]) {
      assert.match(r.err, want);
    }
  });

  it('names a file it cannot read', async () => {
    const r = await run('--system-ca-bundle', join(dir, 'nope.pem'), '--kubeconfig', join(dir, 'nope'));
    assert.equal(r.code, 2);
    assert.match(
      r.err,
      /--system-ca-bundle .*nope\.pem cannot be read \(ENOENT\)\. Fix: give the system CA bundle, or --system-ca-bundle=node/,
    );
  });
});

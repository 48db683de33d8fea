import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildKustomization, UnsupportedKustomizationError } from './components.ts';

describe('the kustomization reader of gen:clusterctl', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-kustomize-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const write = async (path: string, text: string) => {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  };

  it('reads resources (files and nested kustomizations) in order, with labels and namespace where kustomize puts them', async () => {
    await write(
      'base/kustomization.yaml',
      'resources: [deployment.yaml]\nlabels:\n  - pairs: { inner: x }\n    includeSelectors: true\n',
    );
    await write(
      'base/deployment.yaml',
      [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: { name: d }',
        'spec:',
        '  selector: { matchLabels: { app: d } }',
        '  template: { metadata: { labels: { app: d } }, spec: { containers: [] } }',
      ].join('\n'),
    );
    await write(
      'top/kustomization.yaml',
      'namespace: ns\nresources: [ns.yaml, ../base, role.yaml]\nlabels:\n  - pairs: { outer: y }\n',
    );
    await write('top/ns.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: { name: ns }\n');
    await write(
      'top/role.yaml',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: { name: r }\n---\n',
    );
    const objects = await buildKustomization(join(dir, 'top'));
    assert.deepEqual(
      objects.map((o) => [o.kind, o.metadata.namespace, o.metadata.labels]),
      [
        ['Namespace', undefined, { outer: 'y' }],
        ['Deployment', 'ns', { inner: 'x', outer: 'y' }],
        ['ClusterRole', undefined, { outer: 'y' }],
      ],
    );
    const spec = objects[1]!.spec as {
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> } };
    };
    // includeSelectors reaches the selector and the pod template; plain labels only metadata.
    assert.deepEqual(spec.selector.matchLabels, { app: 'd', inner: 'x' });
    assert.deepEqual(spec.template.metadata.labels, { app: 'd', inner: 'x' });
  });

  it('refuses a kustomization field it does not build, naming the file and the field', async () => {
    await write('patched/kustomization.yaml', 'resources: []\npatches:\n  - path: p.yaml\n');
    await assert.rejects(
      buildKustomization(join(dir, 'patched')),
      (e: unknown) =>
        e instanceof UnsupportedKustomizationError &&
        e.message.includes('patched/kustomization.yaml') &&
        e.message.includes('"patches"'),
    );
  });
});

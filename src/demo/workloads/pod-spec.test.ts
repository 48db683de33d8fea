import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ConfigMap, V1Container, V1Secret } from '@kubernetes/client-node';
import {
  ContainerConfigError,
  refusals,
  resolveEnv,
  shiftstackArgs,
  type ObjectSource,
  type PodFacts,
} from './pod-spec.ts';

const IMAGE = 'shiftstack:test';
const c = (extra: Partial<V1Container>): V1Container => ({ name: 'c', image: IMAGE, ...extra });

describe('pod-spec: a container as a shiftstack command line', () => {
  it('reads the image’s entrypoint, its programs and the sh -c wrapper', () => {
    assert.deepEqual(shiftstackArgs(c({ args: ['ccm', '--v=2'] })), ['ccm', '--v=2']);
    assert.deepEqual(shiftstackArgs(c({})), ['--help']);
    assert.deepEqual(shiftstackArgs(c({ args: ['/bin/openstack-cloud-controller-manager', '--v=1'] })), [
      'ccm',
      '--v=1',
    ]);
    assert.deepEqual(shiftstackArgs(c({ command: ['/manager'], args: ['--leader-elect'] })), [
      'capo',
      '--leader-elect',
    ]);
    assert.deepEqual(
      shiftstackArgs(
        c({
          command: [
            '/bin/sh',
            '-c',
            'set -a; if [ -f /x.env ]; then . /x.env; fi; exec /usr/local/bin/entrypoint "$@"',
            'shiftstack',
          ],
          args: ['ccm', '--cluster-name=$(NAME)'],
        }),
      ),
      ['ccm', '--cluster-name=$(NAME)'],
    );
  });
  it('refuses other programs, other images, exec probes and unknown volumes', () => {
    const r = shiftstackArgs(c({ command: ['/usr/bin/openstack-cloud-controller-manager'] }));
    assert.ok(!Array.isArray(r) && r.reason === 'UnsupportedCommand');
    const reasons = refusals(
      {
        containers: [
          c({ name: 'a', image: 'other:1' }),
          c({ name: 'b', readinessProbe: { exec: { command: ['true'] } } }),
        ],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'x' } }],
      },
      [IMAGE],
    ).map((x) => x.reason);
    assert.deepEqual(reasons, ['UnsupportedImage', 'UnsupportedProbe', 'UnsupportedVolume']);
  });
});

describe('pod-spec: the environment as the kubelet builds it', () => {
  const pod: PodFacts = {
    name: 'p-abc-xyz12',
    namespace: 'ns',
    uid: 'u1',
    nodeName: 'node-1',
    serviceAccountName: 'sa',
    labels: { app: 'x' },
    annotations: {},
    hostIP: '127.0.0.1',
  };
  const cms = new Map<string, V1ConfigMap>([['cm', { data: { A: '1', 'bad=name': 'x', B: '2' } }]]);
  const secrets = new Map<string, V1Secret>([
    ['s', { data: { key: Buffer.from('s3cret').toString('base64') } }],
  ]);
  const source: ObjectSource = {
    configMap: (_ns, name) => Promise.resolve(cms.get(name)),
    secret: (_ns, name) => Promise.resolve(secrets.get(name)),
  };
  it('envFrom, then env in order with $(VAR) of the earlier ones, fieldRefs and key refs', async () => {
    const env = await resolveEnv(
      c({
        envFrom: [{ configMapRef: { name: 'cm' }, prefix: 'CM_' }],
        env: [
          { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'WHERE', value: '$(NAME)@$(NODE)/$(CM_A)' },
          { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'PASS', valueFrom: { secretKeyRef: { name: 's', key: 'key' } } },
          { name: 'OPT', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k', optional: true } } },
        ],
      }),
      pod,
      source,
    );
    assert.deepEqual(Object.fromEntries(env), {
      CM_A: '1',
      CM_B: '2',
      NAME: 'p-abc-xyz12',
      WHERE: 'p-abc-xyz12@$(NODE)/1',
      NODE: 'node-1',
      APP: 'x',
      PASS: 's3cret',
    });
  });
  it('a missing source or key is a CreateContainerConfigError', async () => {
    await assert.rejects(
      resolveEnv(
        c({ env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'Z' } } }] }),
        pod,
        source,
      ),
      (err: Error) =>
        err instanceof ContainerConfigError && /couldn't find key Z in ConfigMap ns\/cm/.test(err.message),
    );
    await assert.rejects(
      resolveEnv(c({ envFrom: [{ secretRef: { name: 'gone' } }] }), pod, source),
      /secret "gone" not found/,
    );
  });
});

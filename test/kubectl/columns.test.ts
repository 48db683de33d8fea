/**
 * CRD printer columns as kubectl shows them: the CAPO CRDs' columns use escaped dots and filters
 * (`.metadata.labels.cluster\.x-k8s\.io/cluster-name`,
 * `.metadata.ownerReferences[?(@.kind=="Machine")].name`), which the server evaluates.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { capoConversions } from '../../src/capo/api/webhook.ts';
import { serveConversionWebhook, type RunningWebhook } from '../../src/kube/conversion/webhook.ts';
import { selfSignedCert } from '../../src/lib/tls-cert.ts';
import { kubectlMissing, startKubectlEnv, type KubectlEnv } from './kubectl.ts';

const CRDS = join(import.meta.dirname, '..', '..', 'deploy', 'capo', 'crds');
/** deploy/capo's webhook Service, as the CRD files name it. */
const WEBHOOK_SERVICE = 'capo-webhook-service.capo-system.svc';

const MACHINE = `
apiVersion: v1
kind: Namespace
metadata: {name: capo-demo}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: not-the-machine, namespace: capo-demo}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata:
  name: demo-md-0-x7k2p
  namespace: capo-demo
  labels: {cluster.x-k8s.io/cluster-name: demo}
spec:
  clusterName: demo
  bootstrap: {dataSecretName: demo-bootstrap}
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: OpenStackMachine
    name: demo-md-0-x7k2p
`;

function openStackMachine(ownerUid: string): string {
  return `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackMachine
metadata:
  name: demo-md-0-x7k2p
  namespace: capo-demo
  labels: {cluster.x-k8s.io/cluster-name: demo}
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: not-the-machine, uid: 00000000-0000-4000-8000-000000000001}
  - {apiVersion: cluster.x-k8s.io/v1beta1, kind: Machine, name: demo-md-0-x7k2p, uid: ${ownerUid}}
spec:
  flavor: m1.small
  image: {filter: {name: ubuntu}}
`;
}

describe(
  'kubectl get shows CRD printer columns with escaped dots and filters',
  { skip: kubectlMissing() },
  () => {
    let env: KubectlEnv;
    let webhook: RunningWebhook;
    before(async () => {
      // capo's conversion webhook behind its Service, with a certificate for the Service's name, as
      // cert-manager issues it in a cluster (the kubectl default version of Machine is v1beta2).
      webhook = await serveConversionWebhook({
        conversions: capoConversions({ clusterAPI: true }),
        port: 0,
        tls: selfSignedCert({ commonName: 'capo-webhook-service', hosts: [WEBHOOK_SERVICE] }),
      });
      env = await startKubectlEnv(undefined, {
        conversion: {
          resolveService: (svc) =>
            svc.namespace === 'capo-system' && svc.name === 'capo-webhook-service'
              ? `https://127.0.0.1:${webhook.port}`
              : undefined,
        },
      });
    });
    after(async () => {
      await env?.close();
      await webhook?.close();
    });

    /** What cert-manager's CA injector does for every CRD that asks (`cert-manager.io/inject-ca-from`). */
    async function injectCaBundle(): Promise<void> {
      for (const file of await readdir(CRDS)) {
        for (const doc of parseAllDocuments(await readFile(join(CRDS, file), 'utf8'))) {
          const crd = doc.toJSON() as { metadata: { name: string }; spec: { conversion?: unknown } };
          if (!crd.spec.conversion) continue;
          const patch = {
            spec: { conversion: { webhook: { clientConfig: { caBundle: webhook.caBundle } } } },
          };
          await env.kubectl('patch', 'crd', crd.metadata.name, '--type=merge', '-p', JSON.stringify(patch));
        }
      }
    }

    it('fills the CLUSTER and MACHINE columns of openstackmachines', async () => {
      await env.kubectl('apply', '-f', 'deploy/capo/crds/');
      await env.kubectl('wait', '--for=condition=Established', 'crd', '--all', '--timeout=20s');
      await injectCaBundle();
      await env.kubectlIn(MACHINE, 'apply', '-f', '-');
      const uid = await env.kubectl(
        'get',
        'machine',
        'demo-md-0-x7k2p',
        '-n',
        'capo-demo',
        '-o',
        'jsonpath={.metadata.uid}',
      );
      // Both owners exist, so the garbage collector keeps the object.
      const cm = await env.kubectl(
        'get',
        'configmap',
        'not-the-machine',
        '-n',
        'capo-demo',
        '-o',
        'jsonpath={.metadata.uid}',
      );
      await env.kubectlIn(
        openStackMachine(uid).replace('00000000-0000-4000-8000-000000000001', cm),
        'apply',
        '-f',
        '-',
      );
      // kubectl asks for the preferred version, v1beta2 (CAPO v0.15's columns); v1beta1's when named.
      const columns = [
        ['openstackmachines', /^NAME\s+CLUSTER\s+PROVIDERID\s+MACHINE\s+AGE$/],
        [
          'openstackmachines.v1beta1.infrastructure.cluster.x-k8s.io',
          /^NAME\s+CLUSTER\s+INSTANCESTATE\s+READY\s+PROVIDERID\s+MACHINE\s+AGE$/,
        ],
      ] as const;
      for (const [resource, wantHeader] of columns) {
        const table = await env.kubectl('get', resource, '-n', 'capo-demo');
        const [header = '', row = ''] = table.trim().split('\n');
        assert.match(header, wantHeader);
        const cells = row.split(/\s{2,}/);
        assert.equal(cells[0], 'demo-md-0-x7k2p');
        assert.equal(cells[1], 'demo', `CLUSTER column in:\n${table}`);
        assert.equal(cells.at(-2), 'demo-md-0-x7k2p', `MACHINE column in:\n${table}`);
      }
    });
  },
);

/**
 * CRD printer columns as kubectl shows them: the CAPO CRDs' columns use escaped dots and filters
 * (`.metadata.labels.cluster\.x-k8s\.io/cluster-name`,
 * `.metadata.ownerReferences[?(@.kind=="Machine")].name`), which the server evaluates.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubectlMissing, startKubectlEnv, type KubectlEnv } from './kubectl.ts';

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
    before(async () => {
      env = await startKubectlEnv();
    });
    after(async () => env.close());

    it('fills the CLUSTER and MACHINE columns of openstackmachines', async () => {
      await env.kubectl('apply', '-f', 'deploy/capo/crds/');
      await env.kubectl('wait', '--for=condition=Established', 'crd', '--all', '--timeout=20s');
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
      const table = await env.kubectl('get', 'openstackmachines', '-n', 'capo-demo');
      const [header = '', row = ''] = table.trim().split('\n');
      assert.match(header, /^NAME\s+CLUSTER\s+INSTANCESTATE\s+READY\s+PROVIDERID\s+MACHINE\s+AGE$/);
      const cells = row.split(/\s{2,}/);
      assert.equal(cells[0], 'demo-md-0-x7k2p');
      assert.equal(cells[1], 'demo', `CLUSTER column in:\n${table}`);
      assert.equal(cells.at(-2), 'demo-md-0-x7k2p', `MACHINE column in:\n${table}`);
    });
  },
);

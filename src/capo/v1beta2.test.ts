/**
 * CAPO's v1beta2 API end to end: an OpenStackCluster written in v1beta2 (CAPO v0.15's API, as its
 * templates and clusterctl write it) is stored as v1beta1 through the bed's conversion webhook,
 * made ready by the OpenStackCluster controller (which reads v1beta1), read back in v1beta2 with
 * v1beta2's status (initialization, conditions), and deleted with nothing left in the cloud.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { isNotFound, type KubernetesObject } from '../kube/index.ts';
import type { ConvertibleObject } from '../kube/conversion/types.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import { CAPO_CONVERSIONS } from './api/conversion/index.ts';
import { capoKinds, type OpenStackCluster } from './api/index.ts';
import { openStackClusterV1beta2, type OpenStackClusterV1beta2 } from './api/v1beta2/kinds.ts';
import { startCapoEnv, type CapoEnv, type RunningCapo } from './testing/env.ts';

const WAIT = { timeoutMs: 120_000, intervalMs: 100 };
const ROOT = join(import.meta.dirname, '..', '..');

/** examples/capo/cluster.yaml's Cluster and OpenStackCluster (no bastion), the latter in v1beta2. */
async function exampleInV1beta2(
  namespace: string,
): Promise<{ cluster: KubernetesObject; osc: ConvertibleObject }> {
  const docs = parseAllDocuments(await readFile(join(ROOT, 'examples', 'capo', 'cluster.yaml'), 'utf8')).map(
    (d) => d.toJSON() as ConvertibleObject,
  );
  const inNs = (o: ConvertibleObject): ConvertibleObject => ({
    ...o,
    metadata: { ...(o.metadata as object), namespace },
  });
  const cluster = inNs(docs.find((o) => o.kind === 'Cluster')!);
  const v1beta1 = inNs(docs.find((o) => o.kind === 'OpenStackCluster')!) as ConvertibleObject & {
    spec: Record<string, unknown>;
  };
  delete v1beta1.spec['bastion'];
  const conversion = CAPO_CONVERSIONS.find((c) => c.kind === 'OpenStackCluster')!;
  return { cluster, osc: conversion.convert(v1beta1, 'v1beta2') };
}

describe('CAPO v1beta2 end to end', () => {
  let env: CapoEnv;
  let capo: RunningCapo;

  before(async () => {
    env = await startCapoEnv();
    capo = await env.startCapo({ controllers: ['openstackcluster'] });
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  it('an OpenStackCluster written in v1beta2 is made ready, read in both versions, and deleted cleanly', async () => {
    const { cluster, osc } = await exampleInV1beta2(env.namespace);
    const name = (osc.metadata as { name: string }).name;
    const key = { namespace: env.namespace, name };
    assert.equal(osc.apiVersion, 'infrastructure.cluster.x-k8s.io/v1beta2');
    assert.ok(
      (osc.spec as Record<string, unknown>)['apiServer'],
      'the v1beta2 spelling of the API server fields',
    );
    await env.api.create(capoKinds.Cluster, cluster);
    await env.api.create<OpenStackClusterV1beta2>(
      openStackClusterV1beta2.resource,
      osc as OpenStackClusterV1beta2,
    );

    // The controller reads and writes v1beta1: the stored version.
    const ready = await eventually(
      async () => {
        const o = await env.api.get<OpenStackCluster>(capoKinds.OpenStackCluster, key);
        return o.status?.ready && o.spec.controlPlaneEndpoint?.host ? o : undefined;
      },
      { ...WAIT, what: `OpenStackCluster ${name} ready` },
    );
    assert.equal(ready!.apiVersion, 'infrastructure.cluster.x-k8s.io/v1beta1');

    // Read in v1beta2: v1beta2's status shape, the same network and endpoint.
    const up = await env.api.get<OpenStackClusterV1beta2>(openStackClusterV1beta2.resource, key);
    assert.equal(up.apiVersion, 'infrastructure.cluster.x-k8s.io/v1beta2');
    const status = up.status as Record<string, any>;
    assert.equal(status['initialization']?.provisioned, true);
    assert.equal(status['ready'], undefined, 'v1beta2 has no status.ready');
    assert.equal(
      (status['conditions'] as { type: string; status: string }[] | undefined)?.find(
        (c) => c.type === 'Ready',
      )?.status,
      'True',
    );
    assert.equal(status['network']?.id, ready!.status?.network?.id);
    assert.deepEqual(up.spec.controlPlaneEndpoint, ready!.spec.controlPlaneEndpoint);
    const list = await env.api.list<OpenStackClusterV1beta2>(openStackClusterV1beta2.resource, {
      namespace: env.namespace,
    });
    assert.deepEqual(
      list.items.map((o) => o.apiVersion),
      ['infrastructure.cluster.x-k8s.io/v1beta2'],
    );

    // Deleted through v1beta2: the controller tears down what it made.
    const lbId = ready!.status?.apiServerLoadBalancer?.id;
    const networkId = ready!.status?.network?.id;
    assert.ok(lbId && networkId);
    await env.api.delete(openStackClusterV1beta2.resource, key);
    await eventually(
      async () => {
        try {
          await env.api.get(capoKinds.OpenStackCluster, key);
          return false;
        } catch (err) {
          if (isNotFound(err)) return true;
          throw err;
        }
      },
      { ...WAIT, what: `OpenStackCluster ${name} gone` },
    );
    const lbs = await env.admin.loadBalancer.loadBalancers.list().all();
    assert.equal(lbs.filter((lb) => lb.id === lbId).length, 0, 'the API load balancer is gone');
    const networks = await env.admin.network.networks.list().all();
    assert.equal(networks.filter((n) => n.id === networkId).length, 0, 'the cluster network is gone');
  });
});

/**
 * The rules CAPI core's Machine and Cluster controllers follow, as the stand-in applies them:
 * phases in CAPI's order, nodeRef by providerID (one match only), the conditions, and the
 * cluster's controlPlaneReady from its control-plane Machines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import type { Cluster, Machine, OpenStackMachine } from '../api/index.ts';
import {
  clusterAsCore,
  clusterPhase,
  CoreConditions,
  CoreReasons,
  machineAsCore,
  machinePhase,
  machineStatusAsCore,
} from './capi-core.ts';

const PROVIDER_ID = 'openstack:///0b9c2a8e-8a47-4c44-9b3a-1f4a1c2d3e4f';

function machine(over: { labels?: Record<string, string>; dataSecretName?: string } = {}): Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Machine',
    metadata: {
      name: 'm-0',
      namespace: 'ns',
      uid: 'machine-uid',
      generation: 1,
      labels: { 'cluster.x-k8s.io/cluster-name': 'c', ...over.labels },
    },
    spec: {
      clusterName: 'c',
      bootstrap: over.dataSecretName === undefined ? { dataSecretName: 'm-0' } : {},
      infrastructureRef: { kind: 'OpenStackMachine', name: 'm-0' },
    },
  };
}

function osm(ready: boolean): OpenStackMachine {
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'OpenStackMachine',
    metadata: { name: 'm-0', namespace: 'ns' },
    spec: { flavor: 'm1.small', ...(ready ? { providerID: PROVIDER_ID } : {}) },
    status: {
      ready,
      ...(ready ? { addresses: [{ type: 'InternalIP', address: '10.6.0.4' }] } : {}),
    },
  } as OpenStackMachine;
}

function node(ready: 'True' | 'False' | 'Unknown' = 'True'): V1Node {
  return {
    metadata: { name: 'm-0', uid: 'node-uid' },
    spec: { providerID: PROVIDER_ID },
    status: {
      conditions: [{ type: 'Ready', status: ready }],
      nodeInfo: { kubeletVersion: 'v1.32.4' } as NonNullable<V1Node['status']>['nodeInfo'],
    },
  };
}

const cond = (o: { status?: { conditions?: { type: string }[] } }, type: string) =>
  o.status?.conditions?.find((c) => c.type === type) as
    { status: string; reason?: string; severity?: string } | undefined;

describe('CAPI core stand-in: Machine', () => {
  it('goes Provisioning → Provisioned → Running as the infrastructure and then the Node come', () => {
    const waiting = machineStatusAsCore(machine(), { infra: osm(false), nodes: [] });
    assert.equal(waiting.status?.phase, 'Provisioning');
    assert.equal(waiting.status?.bootstrapReady, true);
    assert.equal(cond(waiting, CoreConditions.BootstrapReady)?.status, 'True');
    assert.equal(
      cond(waiting, CoreConditions.InfrastructureReady)?.reason,
      CoreReasons.WaitingForInfrastructure,
    );
    assert.equal(cond(waiting, CoreConditions.NodeHealthy)?.reason, CoreReasons.WaitingForNodeRef);
    assert.equal(cond(waiting, 'Ready')?.status, 'False');
    assert.ok(waiting.status?.['lastUpdated']);

    const provisioned = machineStatusAsCore(waiting, { infra: osm(true), nodes: [] });
    assert.equal(provisioned.status?.phase, 'Provisioned');
    assert.equal(provisioned.spec.providerID, PROVIDER_ID);
    assert.deepEqual(provisioned.status?.addresses, [{ type: 'InternalIP', address: '10.6.0.4' }]);
    assert.equal(provisioned.status?.nodeRef, undefined);
    assert.equal(cond(provisioned, CoreConditions.NodeHealthy)?.reason, CoreReasons.NodeProvisioning);
    assert.equal(cond(provisioned, 'Ready')?.status, 'True');

    const running = machineStatusAsCore(provisioned, { infra: osm(true), nodes: [node()] });
    assert.equal(running.status?.phase, 'Running');
    assert.deepEqual(running.status?.nodeRef, {
      apiVersion: 'v1',
      kind: 'Node',
      name: 'm-0',
      uid: 'node-uid',
    });
    assert.deepEqual(running.status?.['nodeInfo'], { kubeletVersion: 'v1.32.4' });
    assert.equal(cond(running, CoreConditions.NodeHealthy)?.status, 'True');
  });

  it('takes no providerID or address from infrastructure that is not ready yet, so stays Provisioning', () => {
    // The OpenStackMachine controller writes spec.providerID and then status.ready: a reconcile
    // between the two writes sees the first only (reconcileInfrastructure returns early then).
    const early = osm(true);
    early.status = { ...early.status, ready: false };
    const m = machineStatusAsCore(machine(), { infra: early, nodes: [] });
    assert.equal(m.status?.phase, 'Provisioning');
    assert.equal(m.spec.providerID, undefined);
    assert.equal(m.status?.addresses, undefined);
    assert.equal(
      machineAsCore(machine(), { ready: false, providerID: PROVIDER_ID, addresses: [] }).spec.providerID,
      undefined,
    );
  });

  it('is Pending without bootstrap data, and takes no Node while two claim its providerID', () => {
    const pending = machineStatusAsCore(machine({ dataSecretName: '' }), { infra: undefined, nodes: [] });
    assert.equal(pending.status?.phase, 'Pending');
    assert.equal(cond(pending, CoreConditions.BootstrapReady)?.reason, CoreReasons.WaitingForDataSecret);

    const twin = { ...node(), metadata: { name: 'm-0-twin', uid: 'twin-uid' } };
    const ambiguous = machineStatusAsCore(machine(), { infra: osm(true), nodes: [node(), twin] });
    assert.equal(ambiguous.status?.nodeRef, undefined);
    assert.equal(ambiguous.status?.phase, 'Provisioned');
  });

  it('keeps the nodeRef of a Node that went, with NodeHealthy False (NodeNotFound)', () => {
    const running = machineStatusAsCore(machine(), { infra: osm(true), nodes: [node()] });
    const gone = machineStatusAsCore(running, { infra: osm(true), nodes: [] });
    assert.equal(gone.status?.phase, 'Running');
    assert.equal(gone.status?.nodeRef?.uid, 'node-uid');
    const healthy = cond(gone, CoreConditions.NodeHealthy);
    assert.equal(healthy?.reason, CoreReasons.NodeNotFound);
    assert.equal(healthy?.severity, 'Error');
  });

  it('reports an unhealthy Node, fails with its infrastructure, and says Deleting while deleted', () => {
    const sick = machineStatusAsCore(machine(), { infra: osm(true), nodes: [node('False')] });
    assert.equal(sick.status?.phase, 'Running');
    assert.equal(cond(sick, CoreConditions.NodeHealthy)?.reason, CoreReasons.NodeConditionsFailed);

    const broken = osm(true);
    broken.status = {
      ...broken.status,
      failureReason: 'UpdateError',
      failureMessage: 'instance state ERROR',
    };
    const failed = machineStatusAsCore(machine(), { infra: broken, nodes: [] });
    assert.equal(failed.status?.phase, 'Failed');
    assert.equal(failed.status?.failureReason, 'UpdateError');

    const deleting = machine();
    deleting.metadata = { ...deleting.metadata, deletionTimestamp: new Date('2025-01-01T00:00:00Z') };
    assert.equal(
      machinePhase(machineStatusAsCore(deleting, { infra: osm(true), nodes: [node()] })),
      'Deleting',
    );
  });

  it('from the infrastructure facts alone (the OpenStackMachine controller) keeps a Running machine running', () => {
    const running = machineStatusAsCore(machine(), { infra: osm(true), nodes: [node()] });
    const again = machineAsCore(running, { ready: true, providerID: PROVIDER_ID, addresses: [] });
    assert.equal(again.status?.phase, 'Running');
    assert.equal(again.status?.['lastUpdated'], running.status?.['lastUpdated']);
    const fresh = machineAsCore(machine(), { ready: true, providerID: PROVIDER_ID, addresses: [] });
    assert.equal(fresh.status?.phase, 'Provisioned');
  });
});

describe('CAPI core stand-in: Cluster', () => {
  const cluster = (): Cluster => ({
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Cluster',
    metadata: { name: 'c', namespace: 'ns' },
    spec: { infrastructureRef: { kind: 'OpenStackCluster', name: 'c' } },
  });

  it('is Provisioning until its infrastructure is ready and it has an endpoint, then Provisioned', () => {
    const c = cluster();
    assert.equal(clusterAsCore(c, []).status?.phase, 'Provisioning');
    c.status = { infrastructureReady: true };
    assert.equal(clusterPhase(c), 'Provisioning');
    c.spec = { ...c.spec, controlPlaneEndpoint: { host: '172.24.4.3', port: 6443 } };
    const next = clusterAsCore(c, []);
    assert.equal(next.status?.phase, 'Provisioned');
    assert.equal(cond(next, CoreConditions.InfrastructureReady)?.status, 'True');
    assert.equal(next.status?.controlPlaneReady, false);
    assert.equal(cond(next, 'Ready')?.reason, CoreReasons.WaitingForControlPlane);
  });

  it('has its control plane ready once a control-plane Machine runs; workers do not count', () => {
    const c = cluster();
    c.status = { infrastructureReady: true };
    c.spec = { ...c.spec, controlPlaneEndpoint: { host: '172.24.4.3', port: 6443 } };
    const worker = machineStatusAsCore(machine(), { infra: osm(true), nodes: [node()] });
    assert.equal(clusterAsCore(c, [worker]).status?.controlPlaneReady, false);
    const cp = machineStatusAsCore(machine({ labels: { 'cluster.x-k8s.io/control-plane': '' } }), {
      infra: osm(true),
      nodes: [node()],
    });
    const next = clusterAsCore(c, [worker, cp]);
    assert.equal(next.status?.controlPlaneReady, true);
    assert.equal(cond(next, CoreConditions.ControlPlaneInitialized)?.status, 'True');
    assert.equal(cond(next, 'Ready')?.status, 'True');
    // Initialized stays so when the machine goes; ready does not.
    const after = clusterAsCore(next, []);
    assert.equal(cond(after, CoreConditions.ControlPlaneInitialized)?.status, 'True');
    assert.equal(after.status?.controlPlaneReady, false);
  });
});

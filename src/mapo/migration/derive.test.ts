/**
 * deriveClusterAPIMachine: the Cluster API Machine and OpenStackMachine come from the
 * OpenStackServer's spec (not the providerSpec), every field in its place; a field that cannot be
 * carried over refuses the switch, naming it. withController: only the controller flag moves.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OpenStackServer } from '../../capo/api/index.ts';
import type { Machine } from '../api/index.ts';
import { deriveClusterAPIMachine } from './derive.ts';
import { RefusalReasons } from './names.ts';
import { controlledOnlyBy, withController } from './owners.ts';

const machine: Machine = {
  apiVersion: 'machine.openshift.io/v1beta1',
  kind: 'Machine',
  metadata: {
    name: 'ostest-worker-0-abcde',
    namespace: 'openshift-machine-api',
    uid: 'm-uid',
    labels: {
      'machine.openshift.io/cluster-api-cluster': 'ostest',
      'machine.openshift.io/cluster-api-machine-role': 'worker',
    },
  },
  spec: {
    // A providerSpec that no longer matches the server: the server wins.
    providerSpec: { value: { flavor: 'changed-since', image: 'other' } },
    providerID: 'openstack:///9b3c',
  },
};

function server(spec: Partial<OpenStackServer['spec']> = {}): OpenStackServer {
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
    kind: 'OpenStackServer',
    metadata: { name: 'ostest-worker-0-abcde', namespace: 'openshift-machine-api' },
    spec: {
      identityRef: { type: 'Secret', name: 'openstack-cloud-credentials', cloudName: 'openstack' },
      image: { filter: { name: 'rhcos' } },
      flavor: 'm1.large',
      ports: [
        {
          network: { id: '0b8f0c5e-2a2b-4a53-9f7e-7a9a3f2c1d11' },
          fixedIPs: [{ subnet: { id: '5d7e1f3a-5a6b-4c7d-8e9f-0a1b2c3d4e5f' } }],
          allowedAddressPairs: [{ ipAddress: '10.0.0.5' }],
          securityGroups: [{ id: '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d' }],
          tags: ['openshiftClusterID=ostest'],
        },
      ],
      securityGroups: [{ filter: { name: 'ostest-worker' } }],
      tags: ['openshiftClusterID=ostest'],
      serverMetadata: [{ key: 'Name', value: 'ostest-worker' }],
      trunk: true,
      configDrive: true,
      sshKeyName: 'ostest-key',
      rootVolume: { sizeGiB: 25, type: 'fast' },
      additionalBlockDevices: [{ name: 'etcd', sizeGiB: 10, storage: { type: 'Local' } }],
      serverGroup: { id: '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f' },
      availabilityZone: 'az1',
      userDataRef: { name: 'ostest-worker-0-abcde-user-data' },
      ...spec,
    },
    status: { ready: true, instanceID: '9b3c' },
  };
}

describe('deriveClusterAPIMachine', () => {
  it('carries every field of the OpenStackServer over to the OpenStackMachine and the Cluster API Machine', () => {
    const s = server();
    const derived = deriveClusterAPIMachine({ machine, server: s, clusterName: 'ostest' });
    assert.ok(derived.ok, derived.ok ? '' : derived.refusal.message);
    const { machine: capi, openStackMachine: osm } = derived.objects;
    const { availabilityZone: _az, userDataRef: _ud, ...carried } = s.spec;
    assert.deepEqual(osm.spec, { ...carried, providerID: 'openstack:///9b3c' });
    assert.deepEqual(osm.spec.ports, s.spec.ports, 'the server’s ports, as explicit ports');
    assert.deepEqual(capi.spec, {
      clusterName: 'ostest',
      bootstrap: { dataSecretName: 'ostest-worker-0-abcde-user-data' },
      infrastructureRef: {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'OpenStackMachine',
        name: 'ostest-worker-0-abcde',
        namespace: 'openshift-machine-api',
      },
      providerID: 'openstack:///9b3c',
      failureDomain: 'az1',
    });
    for (const o of [capi, osm]) {
      assert.equal(o.metadata?.name, 'ostest-worker-0-abcde');
      assert.equal(o.metadata?.namespace, 'openshift-machine-api');
      assert.equal(o.metadata?.labels?.['cluster.x-k8s.io/cluster-name'], 'ostest');
      assert.equal(o.metadata?.labels?.['machine.openshift.io/cluster-api-machine-role'], 'worker');
    }
  });

  it('takes the providerID from the instance when the Machine has none yet', () => {
    const m = structuredClone(machine);
    delete m.spec!.providerID;
    const derived = deriveClusterAPIMachine({
      machine: m,
      server: server({ trunk: false }),
      clusterName: 'ostest',
    });
    assert.ok(derived.ok);
    assert.equal(derived.objects.openStackMachine.spec.providerID, 'openstack:///9b3c');
    assert.equal(derived.objects.openStackMachine.spec.trunk, undefined);
  });

  it('refuses a server without user data: Cluster API needs its bootstrap data Secret', () => {
    const derived = deriveClusterAPIMachine({
      machine,
      server: server({ userDataRef: undefined }),
      clusterName: 'ostest',
    });
    assert.ok(!derived.ok);
    assert.equal(derived.refusal.reason, RefusalReasons.FieldNotCarriedOver);
    assert.match(
      derived.refusal.message,
      /spec\.userDataRef.*spec\.bootstrap\.dataSecretName.*Fix: keep this Machine on the Machine API/,
    );
  });

  it('refuses what CAPO’s validation refuses on an OpenStackMachine, naming the field', () => {
    const derived = deriveClusterAPIMachine({
      machine,
      server: server({ securityGroups: [{ filter: {} }] }),
      clusterName: 'ostest',
    });
    assert.ok(!derived.ok);
    assert.equal(derived.refusal.reason, RefusalReasons.FieldNotCarriedOver);
    assert.match(
      derived.refusal.message,
      /spec\.securityGroups\[0\]\.filter: an empty filter would match any security group/,
    );
    assert.match(
      derived.refusal.message,
      /the OpenStackServer's spec\.securityGroups\[0\]\.filter, which cannot change/,
    );
  });
});

describe('withController', () => {
  const machineRef = {
    apiVersion: 'machine.openshift.io/v1beta1',
    kind: 'Machine',
    name: 'w',
    uid: 'm-uid',
    controller: true,
    blockOwnerDeletion: true,
  };
  const osmRef = {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'OpenStackMachine',
    name: 'w',
    uid: 'o-uid',
  };

  it('adds the new controller and keeps the old one as a plain owner', () => {
    const refs = withController([machineRef], osmRef);
    assert.deepEqual(refs, [
      {
        apiVersion: 'machine.openshift.io/v1beta1',
        kind: 'Machine',
        name: 'w',
        uid: 'm-uid',
        blockOwnerDeletion: true,
      },
      { ...osmRef, controller: true, blockOwnerDeletion: true },
    ]);
    assert.ok(controlledOnlyBy(refs, 'o-uid'));
  });

  it('moves the flag back without adding a reference, and is idempotent', () => {
    const there = withController([machineRef], osmRef);
    const back = withController(there, { ...machineRef, controller: false });
    assert.equal(back.length, 2);
    assert.ok(controlledOnlyBy(back, 'm-uid'));
    assert.deepEqual(withController(back, machineRef), back);
  });
});

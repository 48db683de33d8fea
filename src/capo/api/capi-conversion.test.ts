import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONVERSION_DATA_ANNOTATION } from '../../kube/conversion/lossless.ts';
import type { ConvertibleObject, KindConversion } from '../../kube/conversion/types.ts';
import { CLUSTER_CONVERSION, goSeconds, MACHINE_CONVERSION } from './capi-conversion.ts';

const meta = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  namespace: 'capo-demo',
  uid: `uid-${name}`,
  resourceVersion: '7',
  generation: 2,
  labels: { 'cluster.x-k8s.io/cluster-name': 'demo' },
  ...extra,
});

/** A v1beta1 Cluster as a user writes it and our stand-in's controllers fill its status. */
const clusterV1beta1: ConvertibleObject = {
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'Cluster',
  metadata: meta('demo'),
  spec: {
    clusterNetwork: { pods: { cidrBlocks: ['192.168.0.0/16'] } },
    controlPlaneEndpoint: { host: '203.0.113.10', port: 6443 },
    infrastructureRef: {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackCluster',
      name: 'demo',
    },
    controlPlaneRef: {
      apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
      kind: 'KubeadmControlPlane',
      name: 'demo-control-plane',
      namespace: 'capo-demo',
    },
  },
  status: {
    phase: 'Provisioned',
    infrastructureReady: true,
    controlPlaneReady: false,
    failureDomains: {
      'az-2': { controlPlane: true },
      'az-1': { controlPlane: true, attributes: { a: 'b' } },
    },
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    failureMessage: 'none',
    observedGeneration: 2,
    v1beta2: {
      conditions: [
        {
          type: 'Available',
          status: 'False',
          reason: 'NotAvailable',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
      workers: { replicas: 3 },
    },
  },
};

/** The same Cluster as CAPI v1.11 serves it in v1beta2 (CAPO's current templates' shape). */
const clusterV1beta2: ConvertibleObject = {
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  metadata: meta('demo'),
  spec: {
    clusterNetwork: { pods: { cidrBlocks: ['192.168.0.0/16'] } },
    controlPlaneEndpoint: { host: '203.0.113.10', port: 6443 },
    infrastructureRef: {
      apiGroup: 'infrastructure.cluster.x-k8s.io',
      kind: 'OpenStackCluster',
      name: 'demo',
    },
    controlPlaneRef: {
      apiGroup: 'controlplane.cluster.x-k8s.io',
      kind: 'KubeadmControlPlane',
      name: 'demo-control-plane',
    },
  },
  status: {
    phase: 'Provisioned',
    initialization: { infrastructureProvisioned: true, controlPlaneInitialized: false },
    failureDomains: [
      { name: 'az-1', controlPlane: true, attributes: { a: 'b' } },
      { name: 'az-2', controlPlane: true },
    ],
    conditions: [
      {
        type: 'Available',
        status: 'False',
        reason: 'NotAvailable',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
    workers: { replicas: 3 },
    deprecated: {
      v1beta1: {
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }],
        failureMessage: 'none',
      },
    },
    observedGeneration: 2,
  },
};

const machineV1beta1: ConvertibleObject = {
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'Machine',
  metadata: meta('demo-md-0-abc'),
  spec: {
    clusterName: 'demo',
    version: 'v1.32.4',
    bootstrap: {
      configRef: {
        apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1',
        kind: 'KubeadmConfig',
        name: 'demo-md-0-abc',
        namespace: 'capo-demo',
      },
      dataSecretName: 'demo-md-0-abc',
    },
    infrastructureRef: {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachine',
      name: 'demo-md-0-abc',
      namespace: 'capo-demo',
    },
    providerID: 'openstack:///4b7f',
    nodeDrainTimeout: '1m30s',
    nodeDeletionTimeout: '10s',
  },
  status: {
    phase: 'Running',
    bootstrapReady: true,
    infrastructureReady: true,
    addresses: [{ type: 'InternalIP', address: '10.6.0.12' }],
    nodeRef: { apiVersion: 'v1', kind: 'Node', name: 'demo-md-0-abc' },
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }],
  },
};

const machineV1beta2: ConvertibleObject = {
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Machine',
  metadata: meta('demo-md-0-abc'),
  spec: {
    clusterName: 'demo',
    version: 'v1.32.4',
    bootstrap: {
      configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name: 'demo-md-0-abc' },
      dataSecretName: 'demo-md-0-abc',
    },
    infrastructureRef: {
      apiGroup: 'infrastructure.cluster.x-k8s.io',
      kind: 'OpenStackMachine',
      name: 'demo-md-0-abc',
    },
    providerID: 'openstack:///4b7f',
    deletion: { nodeDrainTimeoutSeconds: 90, nodeDeletionTimeoutSeconds: 10 },
  },
  status: {
    phase: 'Running',
    initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
    addresses: [{ type: 'InternalIP', address: '10.6.0.12' }],
    nodeRef: { name: 'demo-md-0-abc' },
    deprecated: {
      v1beta1: {
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }],
      },
    },
  },
};

/** The object without the conversion-data annotation (what a reader compares field by field). */
function withoutData(obj: ConvertibleObject): ConvertibleObject {
  const copy = structuredClone(obj);
  const annotations = (copy['metadata'] as { annotations?: Record<string, string> }).annotations;
  if (annotations) {
    delete annotations[CONVERSION_DATA_ANNOTATION];
    if (Object.keys(annotations).length === 0)
      delete (copy['metadata'] as Record<string, unknown>)['annotations'];
  }
  return copy;
}

function roundTrip(c: KindConversion, obj: ConvertibleObject, via: string): ConvertibleObject {
  const from = obj.apiVersion.split('/')[1] as string;
  return c.convert(c.convert(obj, via), from);
}

describe('Cluster API Cluster v1beta1 ↔ v1beta2', () => {
  it('maps each field as CAPI does, going up', () => {
    assert.deepEqual(withoutData(CLUSTER_CONVERSION.convert(clusterV1beta1, 'v1beta2')), clusterV1beta2);
  });

  it('maps each field as CAPI does, going down (the contract version, the namespace)', () => {
    const down = CLUSTER_CONVERSION.convert(clusterV1beta2, 'v1beta1');
    const spec = down['spec'] as Record<string, any>;
    assert.deepEqual(spec['infrastructureRef'], {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackCluster',
      name: 'demo',
      namespace: 'capo-demo',
    });
    const status = down['status'] as Record<string, any>;
    assert.equal(status['infrastructureReady'], true);
    assert.equal(status['controlPlaneReady'], false);
    assert.deepEqual(Object.keys(status['failureDomains']).sort(), ['az-1', 'az-2']);
    assert.deepEqual(status['v1beta2'], {
      conditions: (clusterV1beta2['status'] as any).conditions,
      workers: { replicas: 3 },
    });
    assert.equal(status['failureMessage'], 'none');
  });

  for (const [name, obj, via] of [
    ['v1beta1 → v1beta2 → v1beta1', clusterV1beta1, 'v1beta2'],
    ['v1beta2 → v1beta1 → v1beta2', clusterV1beta2, 'v1beta1'],
  ] as const) {
    it(`${name} is the identity`, () => assert.deepEqual(roundTrip(CLUSTER_CONVERSION, obj, via), obj));
  }

  it('keeps what v1beta2 cannot hold in the annotation, and only that', () => {
    const up = CLUSTER_CONVERSION.convert(clusterV1beta1, 'v1beta2');
    const data = JSON.parse((up['metadata'] as any).annotations[CONVERSION_DATA_ANNOTATION]);
    // The control plane reference names its namespace and comes back as it was; the infrastructure
    // one does not, and would come back with the object's namespace.
    assert.deepEqual(Object.keys(data.v1beta1), ['infrastructureRef']);
  });

  it('a reference changed in v1beta2 is converted afresh, not restored', () => {
    const up = CLUSTER_CONVERSION.convert(clusterV1beta1, 'v1beta2');
    (up['spec'] as any).controlPlaneRef = {
      apiGroup: 'controlplane.cluster.x-k8s.io',
      kind: 'Other',
      name: 'x',
    };
    const down = CLUSTER_CONVERSION.convert(up, 'v1beta1');
    assert.deepEqual((down['spec'] as any).controlPlaneRef, {
      apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
      kind: 'Other',
      name: 'x',
      namespace: 'capo-demo',
    });
    assert.deepEqual(
      (down['spec'] as any).infrastructureRef,
      (clusterV1beta1['spec'] as any).infrastructureRef,
    );
  });

  it('a v1beta2 topology classRef is v1beta1 class and classNamespace', () => {
    const obj = {
      ...clusterV1beta2,
      spec: { topology: { classRef: { name: 'cc', namespace: 'ns' }, version: 'v1.32.4' } },
    };
    const down = CLUSTER_CONVERSION.convert(obj, 'v1beta1');
    assert.deepEqual((down['spec'] as any).topology, {
      class: 'cc',
      classNamespace: 'ns',
      version: 'v1.32.4',
    });
    assert.deepEqual(roundTrip(CLUSTER_CONVERSION, obj, 'v1beta1'), obj);
  });

  it('leaves metadata but the annotation alone', () => {
    const up = CLUSTER_CONVERSION.convert(clusterV1beta1, 'v1beta2');
    assert.deepEqual(withoutData(up)['metadata'], clusterV1beta1['metadata']);
  });
});

describe('Cluster API Machine v1beta1 ↔ v1beta2', () => {
  it('maps each field as CAPI does, going up', () => {
    assert.deepEqual(withoutData(MACHINE_CONVERSION.convert(machineV1beta1, 'v1beta2')), machineV1beta2);
  });

  it('going down: durations as Go writes them, the Node reference, readiness', () => {
    const down = MACHINE_CONVERSION.convert(machineV1beta2, 'v1beta1');
    const spec = down['spec'] as Record<string, any>;
    assert.equal(spec['nodeDrainTimeout'], '1m30s');
    assert.equal(spec['nodeDeletionTimeout'], '10s');
    assert.equal(spec['deletion'], undefined);
    assert.deepEqual(spec['infrastructureRef'], (machineV1beta1['spec'] as any).infrastructureRef);
    const status = down['status'] as Record<string, any>;
    assert.deepEqual(status['nodeRef'], { apiVersion: 'v1', kind: 'Node', name: 'demo-md-0-abc' });
    assert.equal(status['bootstrapReady'], true);
    assert.equal(status['infrastructureReady'], true);
  });

  it("keeps v1beta2's minReadySeconds across v1beta1", () => {
    const obj = { ...machineV1beta2, spec: { ...(machineV1beta2['spec'] as object), minReadySeconds: 30 } };
    const down = MACHINE_CONVERSION.convert(obj, 'v1beta1');
    assert.equal((down['spec'] as any).minReadySeconds, undefined);
    assert.match((down['metadata'] as any).annotations[CONVERSION_DATA_ANNOTATION], /minReadySeconds/);
    assert.deepEqual(MACHINE_CONVERSION.convert(down, 'v1beta2'), obj);
  });

  for (const [name, obj, via] of [
    ['v1beta1 → v1beta2 → v1beta1', machineV1beta1, 'v1beta2'],
    ['v1beta2 → v1beta1 → v1beta2', machineV1beta2, 'v1beta1'],
  ] as const) {
    it(`${name} is the identity`, () => assert.deepEqual(roundTrip(MACHINE_CONVERSION, obj, via), obj));
  }

  it('a duration Go would write differently comes back as written', () => {
    const obj = {
      ...machineV1beta1,
      spec: { ...(machineV1beta1['spec'] as object), nodeDrainTimeout: '90s' },
    };
    const up = MACHINE_CONVERSION.convert(obj, 'v1beta2');
    assert.equal((up['spec'] as any).deletion.nodeDrainTimeoutSeconds, 90);
    assert.deepEqual(MACHINE_CONVERSION.convert(up, 'v1beta1'), obj);
  });

  it('a status the controllers wrote in v1beta1 after a v1beta2 write reads back with the new values', () => {
    const stored = MACHINE_CONVERSION.convert({ ...machineV1beta2, status: undefined }, 'v1beta1');
    delete (stored as any).status;
    (stored as any).status = { bootstrapReady: false, infrastructureReady: true, phase: 'Provisioned' };
    const read = MACHINE_CONVERSION.convert(stored, 'v1beta2');
    assert.deepEqual((read['status'] as any).initialization, {
      bootstrapDataSecretCreated: false,
      infrastructureProvisioned: true,
    });
  });
});

describe('goSeconds', () => {
  it("writes Go's Duration.String() of whole seconds", () => {
    assert.deepEqual([0, 45, 90, 3600, 3725].map(goSeconds), ['0s', '45s', '1m30s', '1h0m0s', '1h2m5s']);
  });
});

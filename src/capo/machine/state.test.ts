import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CapiCondition, OpenStackServer } from '../api/index.ts';
import { markFalse, markTrue, markUnknown, setSummary, getCapiCondition } from './conditions.ts';
import { internalIP, machineAddresses, machineState, providerID } from './state.ts';

function server(status: OpenStackServer['status']): OpenStackServer {
  return {
    metadata: { name: 'w-1', namespace: 'ns' },
    spec: { identityRef: { name: 's', cloudName: 'c' }, image: { id: 'x' }, ports: [{}] },
    status,
  };
}

describe('machine state from the OpenStackServer', () => {
  it('providerID with and without a region', () => {
    assert.equal(providerID('RegionOne', 'abc'), 'openstack://RegionOne/abc');
    assert.equal(providerID(undefined, 'abc'), 'openstack:///abc');
    assert.equal(providerID('', 'abc'), 'openstack:///abc');
  });

  it('maps each Nova state', () => {
    assert.deepEqual(machineState(server({ instanceState: 'ACTIVE', instanceID: 'i' })), {
      phase: 'Active',
      instanceID: 'i',
    });
    assert.equal(machineState(server({ instanceState: 'ACTIVE' })).phase, 'Building');
    assert.equal(machineState(server({ instanceState: 'BUILD', instanceID: 'i' })).phase, 'Building');
    assert.equal(machineState(server({})).phase, 'Building');
    const error = machineState(server({ instanceState: 'ERROR', instanceID: 'i' }));
    assert.equal(error.phase, 'Error');
    assert.equal(error.phase === 'Error' && error.reason, 'InstanceStateError');
    for (const s of ['DELETED', 'SOFT_DELETED']) {
      const r = machineState(server({ instanceState: s }));
      assert.equal(r.phase === 'Deleted' && r.reason, 'InstanceDeleted');
    }
    assert.deepEqual(machineState(server({ instanceState: 'SHUTOFF' })), {
      phase: 'Other',
      state: 'SHUTOFF',
    });
  });

  it('addresses: the server addresses plus its name as InternalDNS, once', () => {
    const s = server({
      addresses: [
        { type: 'InternalIP', address: '10.6.0.5' },
        { type: 'ExternalIP', address: '172.24.4.9' },
      ],
    });
    const a = machineAddresses(s);
    assert.deepEqual(a, [
      { type: 'InternalIP', address: '10.6.0.5' },
      { type: 'ExternalIP', address: '172.24.4.9' },
      { type: 'InternalDNS', address: 'w-1' },
    ]);
    assert.equal(internalIP(a), '10.6.0.5');
    const again = server({ addresses: a });
    assert.equal(machineAddresses(again).filter((x) => x.type === 'InternalDNS').length, 1);
    assert.equal(internalIP([]), undefined);
  });
});

describe('Cluster API conditions', () => {
  it('keeps lastTransitionTime until the status flips; True carries no reason', () => {
    const list: CapiCondition[] = [];
    markFalse(list, 'InstanceReady', 'WaitingForBootstrapData', 'Info', 'waiting', 1_000);
    const first = getCapiCondition(list, 'InstanceReady')!;
    assert.equal(first.severity, 'Info');
    markFalse(list, 'InstanceReady', 'InstanceNotReady', 'Warning', 'other', 5_000);
    assert.equal(getCapiCondition(list, 'InstanceReady')!.lastTransitionTime, first.lastTransitionTime);
    markTrue(list, 'InstanceReady', 9_000);
    const t = getCapiCondition(list, 'InstanceReady')!;
    assert.notEqual(t.lastTransitionTime, first.lastTransitionTime);
    assert.deepEqual(Object.keys(t).sort(), ['lastTransitionTime', 'status', 'type']);
    assert.throws(() => markFalse(list, 'X', 'not camel case', 'Info', ''), /CamelCase/);
  });

  it('the summary takes the worst condition: False by severity, then Unknown', () => {
    const list: CapiCondition[] = [];
    markTrue(list, 'InstanceReady');
    setSummary(list, ['InstanceReady', 'APIServerIngressReadyCondition']);
    assert.equal(getCapiCondition(list, 'Ready')!.status, 'True');
    markUnknown(list, 'APIServerIngressReadyCondition', 'Waiting', 'member pending');
    setSummary(list, ['InstanceReady', 'APIServerIngressReadyCondition']);
    assert.equal(getCapiCondition(list, 'Ready')!.status, 'Unknown');
    markFalse(list, 'InstanceReady', 'InstanceNotReady', 'Info', 'building');
    markFalse(list, 'APIServerIngressReadyCondition', 'LoadBalancerMemberError', 'Error', 'octavia said no');
    setSummary(list, ['InstanceReady', 'APIServerIngressReadyCondition']);
    const ready = getCapiCondition(list, 'Ready')!;
    assert.deepEqual(
      [ready.status, ready.reason, ready.severity, ready.message],
      ['False', 'LoadBalancerMemberError', 'Error', 'octavia said no'],
    );
  });
});

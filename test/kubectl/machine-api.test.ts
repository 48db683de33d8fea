/**
 * `kubectl get machinesets,machines -n openshift-machine-api` reads as on OpenShift: the columns
 * of deploy/mapo/crds filled from the installer's objects (examples/mapo/machineset.yaml), the
 * labels the actuator sets, status written through /status, and `kubectl scale` through /scale.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubectlMissing, startKubectlEnv, type KubectlEnv } from './kubectl.ts';

const NS = 'openshift-machine-api';
const MACHINE = 'ostest-7xk2p-master-0';
const SET = 'ostest-7xk2p-worker-0';

/** The table's rows as cells, by the header's column names. */
function table(text: string): Record<string, string>[] {
  const [header = '', ...rows] = text.trim().split('\n');
  const names = header.trim().split(/\s+/);
  const starts = names.map((n) => header.indexOf(n));
  return rows.map((row) =>
    Object.fromEntries(names.map((n, i) => [n, row.slice(starts[i], starts[i + 1] ?? row.length).trim()])),
  );
}

describe('kubectl get machinesets,machines shows OpenShift’s columns', { skip: kubectlMissing() }, () => {
  let env: KubectlEnv;
  before(async () => {
    env = await startKubectlEnv();
    await env.kubectl('apply', '-f', 'deploy/mapo/crds/');
    await env.kubectl('wait', '--for=condition=Established', 'crd', '--all', '--timeout=20s');
    await env.kubectl('create', 'namespace', NS);
    await env.kubectl('apply', '-f', 'examples/mapo/machineset.yaml');
  });
  after(async () => env?.close());

  it('prints PHASE, TYPE, REGION, ZONE and AGE of a Machine, and NODE, PROVIDERID and STATE with -o wide', async () => {
    await env.kubectl(
      'label',
      'machine',
      MACHINE,
      '-n',
      NS,
      'machine.openshift.io/instance-type=m1.xlarge',
      'machine.openshift.io/region=regionOne',
      'machine.openshift.io/zone=nova',
    );
    await env.kubectl('annotate', 'machine', MACHINE, '-n', NS, 'machine.openshift.io/instance-state=ACTIVE');
    await env.kubectl(
      'patch',
      'machine',
      MACHINE,
      '-n',
      NS,
      '--type=merge',
      '-p',
      '{"spec":{"providerID":"openstack:///0d8c5c6e-2f1b-4c8a-9e7d-5b4a3c2d1e0f"}}',
    );
    await env.kubectl(
      'patch',
      'machine',
      MACHINE,
      '-n',
      NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      `{"status":{"phase":"Running","nodeRef":{"kind":"Node","name":"${MACHINE}"}}}`,
    );
    const [row] = table(await env.kubectl('get', 'machines', '-n', NS));
    assert.deepEqual(Object.keys(row!), ['NAME', 'PHASE', 'TYPE', 'REGION', 'ZONE', 'AGE']);
    assert.deepEqual(
      { ...row, AGE: undefined },
      {
        NAME: MACHINE,
        PHASE: 'Running',
        TYPE: 'm1.xlarge',
        REGION: 'regionOne',
        ZONE: 'nova',
        AGE: undefined,
      },
    );
    const [wide] = table(await env.kubectl('get', 'machines', '-n', NS, '-o', 'wide'));
    assert.equal(wide!.NODE, MACHINE);
    assert.equal(wide!.PROVIDERID, 'openstack:///0d8c5c6e-2f1b-4c8a-9e7d-5b4a3c2d1e0f');
    assert.equal(wide!.STATE, 'ACTIVE');
  });

  it('prints DESIRED, CURRENT, READY and AVAILABLE of a MachineSet, and kubectl scale changes DESIRED', async () => {
    await env.kubectl(
      'patch',
      'machineset',
      SET,
      '-n',
      NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"replicas":3,"readyReplicas":2,"availableReplicas":2}}',
    );
    const both = await env.kubectl('get', 'machinesets,machines', '-n', NS);
    // Two tables, one per kind, each with its own header.
    const [sets = '', machines = ''] = both.trim().split(/\n\s*\n/);
    const [set] = table(sets);
    assert.deepEqual(
      { ...set, AGE: undefined },
      {
        NAME: `machineset.machine.openshift.io/${SET}`,
        DESIRED: '3',
        CURRENT: '3',
        READY: '2',
        AVAILABLE: '2',
        AGE: undefined,
      },
    );
    assert.equal(table(machines)[0]!.NAME, `machine.machine.openshift.io/${MACHINE}`);

    await env.kubectl('scale', 'machineset', SET, '-n', NS, '--replicas=1');
    const [scaled] = table(await env.kubectl('get', 'machinesets', '-n', NS));
    assert.equal(scaled!.DESIRED, '1');
  });
});

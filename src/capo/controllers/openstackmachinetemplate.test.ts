/**
 * The OpenStackMachineTemplate controller through both emulators: status.capacity from the
 * template's flavor, with the template's own credentials or its cluster's; a flavor that does not
 * exist is a Warning Event and no capacity.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { capoKinds, type OpenStackMachineTemplate } from '../api/index.ts';
import { binaryQuantity } from '../machine/capacity.ts';
import { startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 50 };

describe('OpenStackMachineTemplate controller', () => {
  let env: CapoEnv;
  let capo: RunningCapo;
  before(async () => {
    env = await startCapoEnv();
    capo = await env.startCapo({ controllers: ['openstackmachinetemplate'] });
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  const template = (name: string, spec: OpenStackMachineTemplate['spec']['template']['spec'], labels = {}) =>
    env.api.create(capoKinds.OpenStackMachineTemplate, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachineTemplate',
      metadata: { name, namespace: env.namespace, labels },
      spec: { template: { spec } },
    });
  const capacity = (name: string) =>
    eventually(
      async () =>
        (await env.api.get(capoKinds.OpenStackMachineTemplate, { namespace: env.namespace, name })).status
          ?.capacity,
      { ...WAIT, what: `${name} capacity` },
    );

  it('capacity from the flavor, with the template’s identityRef; a root volume sets the storage', async () => {
    const flavor = (await env.os.compute.flavors.findByName('m1.small'))!;
    await template('md-0', {
      flavor: 'm1.small',
      image: { filter: { name: 'ubuntu-22.04' } },
      identityRef: env.identityRef,
    });
    assert.deepEqual(await capacity('md-0'), {
      cpu: String(flavor.vcpus),
      memory: binaryQuantity(flavor.ram * 1024 ** 2),
      ...(flavor['OS-FLV-EXT-DATA:ephemeral'] > 0
        ? { 'ephemeral-storage': binaryQuantity(flavor['OS-FLV-EXT-DATA:ephemeral'] * 1024 ** 3) }
        : {}),
      ...(flavor.disk > 0 ? { storage: binaryQuantity(flavor.disk * 1024 ** 3) } : {}),
    });
    await template('md-1', {
      flavorID: flavor.id,
      image: { filter: { name: 'ubuntu-22.04' } },
      identityRef: env.identityRef,
      rootVolume: { sizeGiB: 30 },
    });
    assert.equal((await capacity('md-1'))!.storage, '30Gi');
  });

  it('OpenStackAuthenticationSucceeded: True with working credentials, False (Error) with a missing Secret', async () => {
    const condition = (name: string) =>
      eventually(
        async () =>
          (
            await env.api.get(capoKinds.OpenStackMachineTemplate, { namespace: env.namespace, name })
          ).status?.conditions?.find((c) => c.type === 'OpenStackAuthenticationSucceeded'),
        { ...WAIT, what: `${name} OpenStackAuthenticationSucceeded` },
      );
    await template('auth-ok', {
      flavor: 'm1.small',
      image: { filter: { name: 'ubuntu-22.04' } },
      identityRef: env.identityRef,
    });
    assert.equal((await condition('auth-ok'))?.status, 'True');
    await template('auth-bad', {
      flavor: 'm1.small',
      image: { filter: { name: 'ubuntu-22.04' } },
      identityRef: { ...env.identityRef, name: 'no-such-secret' },
    });
    const bad = await condition('auth-bad');
    assert.equal(bad?.status, 'False');
    assert.equal(bad?.reason, 'OpenStackAuthenticationFailed');
    assert.equal(bad?.severity, 'Error');
    assert.match(bad?.message ?? '', /no-such-secret/);
  });

  it("without an identityRef, the cluster's credentials (through the cluster-name label)", async () => {
    await env.api.create(capoKinds.Cluster, {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: { name: 'c1', namespace: env.namespace },
      spec: { infrastructureRef: { kind: 'OpenStackCluster', name: 'c1' } },
    });
    await env.api.create(capoKinds.OpenStackCluster, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackCluster',
      metadata: { name: 'c1', namespace: env.namespace },
      spec: { identityRef: env.identityRef },
    });
    await template(
      'cp',
      { flavor: 'm1.medium', image: { filter: { name: 'ubuntu-22.04' } } },
      { 'cluster.x-k8s.io/cluster-name': 'c1' },
    );
    const flavor = (await env.os.compute.flavors.findByName('m1.medium'))!;
    assert.equal((await capacity('cp'))!.cpu, String(flavor.vcpus));
  });

  it('a flavor that does not exist: a Warning Event, no capacity', async () => {
    await template('bad', {
      flavor: 'm9.huge',
      image: { filter: { name: 'ubuntu-22.04' } },
      identityRef: env.identityRef,
    });
    const event = await eventually(
      async () =>
        (await env.api.listAll(kinds.EventsV1Event, { namespace: env.namespace })).items.find(
          (e: EventsV1Event) => e.regarding?.name === 'bad' && e.reason === 'FlavorNotFound',
        ),
      { ...WAIT, what: 'FlavorNotFound Event' },
    );
    assert.match(event!.note ?? '', /flavor m9\.huge not found/);
    const t = await env.api.get(capoKinds.OpenStackMachineTemplate, {
      namespace: env.namespace,
      name: 'bad',
    });
    assert.equal(t.status?.capacity, undefined);
  });
});

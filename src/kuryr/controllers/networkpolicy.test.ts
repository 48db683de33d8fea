/**
 * NetworkPolicy as security groups on the emulators: the networkpolicy, kuryrnetworkpolicy and
 * pod-label controllers with the `policy` driver. Pods are wired here as the port code wires them
 * (a Neutron port on the pod subnet with the groups the driver gives, a KuryrPort whose VIF names
 * it), so what is asserted is Neutron's: the group's rules and each port's groups.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ContainerPort, V1NetworkPolicy } from '@kubernetes/client-node';
import { isNotFound, kinds } from '../../kube/index.ts';
import { isNotFound as isOpenStackNotFound } from '../../openstack/core/errors.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { Finalizers, kuryrKinds } from '../api/index.ts';
import { isPending } from '../drivers.ts';
import { policyGroupName } from '../policy/security-group.ts';
import { wirePod } from '../policy/testing/wire.ts';
import { startKuryrEnv, type KuryrEnv, type RunningKuryr } from '../testing/env.ts';

const WAIT = { timeoutMs: 20_000, intervalMs: 50 };

describe('NetworkPolicy → security group (networkpolicy, kuryrnetworkpolicy, pod-label)', () => {
  let env: KuryrEnv;
  let kuryr: RunningKuryr;
  const ports = new Map<string, string>();
  const ips = new Map<string, string>();

  before(async () => {
    env = await startKuryrEnv({ nodes: 1 });
    kuryr = await env.startKuryr({
      controllers: ['networkpolicy', 'kuryrnetworkpolicy', 'pod-label'],
      options: { kubernetes: { podSecurityGroupsDriver: 'policy' } },
    });
    await env.ensureNamespace('np-a', { team: 'a' });
    await env.ensureNamespace('np-b', { team: 'b' });
  });
  after(async () => {
    await kuryr?.stop();
    await env?.close();
  });

  /** A pod wired as the port code wires it: its port made with the groups the driver gives. */
  async function wire(
    namespace: string,
    name: string,
    labels: Record<string, string>,
    containerPorts: V1ContainerPort[] = [],
  ) {
    const wired = await wirePod(env, {
      namespace,
      name,
      labels,
      containerPorts,
      vlanId: 100 + ports.size,
      groups: (pod) =>
        eventually(async () => {
          const g = await kuryr.ctx.securityGroups.forPod(pod, AbortSignal.timeout(5_000));
          return isPending(g) ? undefined : g;
        }, WAIT).then((g) => g!),
    });
    ports.set(`${namespace}/${name}`, wired.portId);
    ips.set(`${namespace}/${name}`, wired.ip);
    return wired;
  }

  const portGroups = async (key: string) => (await env.os.network.ports.get(ports.get(key)!)).security_groups;

  const knpOf = (namespace: string, name: string) =>
    env.api.get(kuryrKinds.KuryrNetworkPolicy, { namespace, name }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });

  /** The group's rules as `direction ethertype protocol ports remote`, sorted. */
  const groupRules = async (groupId: string) =>
    (await env.os.network.securityGroupRules.list({ security_group_id: groupId }).all())
      .map((r) => {
        const range = r.port_range_min === null ? '' : ` ${r.port_range_min}-${r.port_range_max}`;
        return `${r.direction} ${r.ethertype} ${r.protocol ?? 'any'}${range} ${r.remote_ip_prefix ?? '*'}`;
      })
      .sort();

  let groupId = '';

  it('gives a NetworkPolicy one group with its rules, on the ports of the pods it selects only', async () => {
    await wire('np-a', 'web-1', { app: 'web' });
    await wire('np-a', 'db', { app: 'db' }, [{ name: 'pg', containerPort: 5432 }]);
    await wire('np-b', 'client-1', { app: 'client' });
    const policy: V1NetworkPolicy = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'db', namespace: 'np-a' },
      spec: {
        podSelector: { matchLabels: { app: 'db' } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [{ podSelector: { matchLabels: { app: 'web' } } }],
            ports: [{ port: 'pg', protocol: 'TCP' }],
          },
          {
            from: [{ namespaceSelector: { matchLabels: { team: 'b' } } }],
            ports: [{ port: 5432, protocol: 'TCP' }],
          },
        ] as never,
      },
    };
    await env.api.create(kinds.NetworkPolicy, policy);

    const knp = await eventually(async () => {
      const k = await knpOf('np-a', 'db');
      return k?.status?.securityGroupId && (k.status.securityGroupRules ?? []).length > 0 ? k : undefined;
    }, WAIT).then((k) => k!);
    groupId = knp.status!.securityGroupId!;
    const group = await env.os.network.securityGroups.get(groupId);
    assert.equal(group.name, policyGroupName({ namespace: 'np-a', name: 'db' }));
    assert.deepEqual(group.tags, kuryr.ctx.tags);
    assert.deepEqual(await groupRules(groupId), [
      'egress IPv4 any *',
      'egress IPv6 any *',
      `ingress IPv4 any ${env.net.nodes.cidr}`,
      `ingress IPv4 any ${env.net.services.cidr}`,
      `ingress IPv4 tcp 5432-5432 ${ips.get('np-a/web-1')}/32`,
      `ingress IPv4 tcp 5432-5432 ${ips.get('np-b/client-1')}/32`,
    ]);
    assert.equal(knp.status?.securityGroupRules?.length, 6);
    assert.deepEqual(knp.metadata?.finalizers, [Finalizers.NetworkPolicy]);
    assert.equal(knp.metadata?.ownerReferences?.[0]?.kind, 'NetworkPolicy');
    const np = await env.api.get(kinds.NetworkPolicy, { namespace: 'np-a', name: 'db' });
    assert.deepEqual(np.metadata?.finalizers, [Finalizers.NetworkPolicy]);

    await eventually(async () => (await portGroups('np-a/db')).join() === groupId, {
      ...WAIT,
      what: 'db port on the policy group',
    });
    assert.deepEqual(await portGroups('np-a/web-1'), [env.net.podSecurityGroupId]);
    assert.deepEqual(await portGroups('np-b/client-1'), [env.net.podSecurityGroupId]);
  });

  it('adds a pod of a selected namespace to the rules, and a pod the policy selects gets its group', async () => {
    const client2 = await wire('np-b', 'client-2', { app: 'client' });
    await eventually(
      async () => (await groupRules(groupId)).includes(`ingress IPv4 tcp 5432-5432 ${client2.ip}/32`),
      {
        ...WAIT,
        what: 'a rule from client-2',
      },
    );
    const db2 = await wire('np-a', 'db-2', { app: 'db' });
    assert.deepEqual(
      await portGroups('np-a/db-2'),
      [groupId],
      'the driver gave the new pod the policy group',
    );
    assert.equal((await env.os.network.ports.get(db2.portId)).security_groups.length, 1);
  });

  it("moves a pod's port between groups when its labels change", async () => {
    await env.api.patch(kinds.Pod, { namespace: 'np-a', name: 'web-1' }, 'merge', {
      metadata: { labels: { app: 'db' } },
    });
    await eventually(async () => (await portGroups('np-a/web-1')).join() === groupId, {
      ...WAIT,
      what: 'web-1 on the policy group',
    });
    await env.api.patch(kinds.Pod, { namespace: 'np-a', name: 'web-1' }, 'merge', {
      metadata: { labels: { app: 'web' } },
    });
    await eventually(async () => (await portGroups('np-a/web-1')).join() === env.net.podSecurityGroupId, {
      ...WAIT,
      what: 'web-1 back on the default group',
    });
  });

  it('moves the group to the pods a changed podSelector selects, off those it no longer does', async () => {
    await env.api.patch(kinds.NetworkPolicy, { namespace: 'np-a', name: 'db' }, 'merge', {
      spec: { podSelector: { matchLabels: { app: 'web' } } },
    });
    await eventually(
      async () =>
        (await portGroups('np-a/web-1')).join() === groupId &&
        (await portGroups('np-a/db')).join() === env.net.podSecurityGroupId &&
        (await portGroups('np-a/db-2')).join() === env.net.podSecurityGroupId,
      { ...WAIT, what: 'the group on web-1 only' },
    );
    // The named port now resolves against web-1's containers, which name no `pg`: that rule goes.
    await eventually(
      async () => !(await groupRules(groupId)).some((r) => r.endsWith(`${ips.get('np-a/web-1')}/32`)),
      {
        ...WAIT,
        what: 'the named-port rule gone',
      },
    );
  });

  it('says on the KuryrNetworkPolicy why its group cannot be made, and makes it once it can', async () => {
    const used = (await env.os.network.securityGroups.list().all()).length;
    const quota = (n: number) =>
      env.sim.request('neutron', 'PUT', `/v2.0/quotas/${env.projectId}`, {
        user: 'admin',
        body: { quota: { security_group: n } },
      });
    assert.equal((await quota(used)).status, 200);
    try {
      await env.api.create(kinds.NetworkPolicy, {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'over-quota', namespace: 'np-b' },
        spec: { podSelector: {}, policyTypes: ['Ingress'] },
      });
      await eventually(
        async () => {
          const events = await env.api.list(kinds.Event, { namespace: 'np-b' });
          return events.items.some(
            (e) =>
              e.reason === 'FailedToAddSecurityGroup' &&
              e.involvedObject.kind === 'KuryrNetworkPolicy' &&
              /[Qq]uota/.test(e.message ?? ''),
          );
        },
        { ...WAIT, what: 'a FailedToAddSecurityGroup Event naming the quota' },
      );
    } finally {
      await quota(-1);
    }
    await eventually(async () => (await knpOf('np-b', 'over-quota'))?.status?.securityGroupId, {
      ...WAIT,
      what: 'the group made',
    });
    await env.api.delete(kinds.NetworkPolicy, { namespace: 'np-b', name: 'over-quota' });
    await eventually(async () => (await knpOf('np-b', 'over-quota')) === undefined, {
      ...WAIT,
      what: 'over-quota gone',
    });
  });

  it('deletes everything on delete: the ports go back to the default group, the group and both objects go', async () => {
    await env.api.delete(kinds.NetworkPolicy, { namespace: 'np-a', name: 'db' });
    await eventually(
      async () => {
        try {
          await env.api.get(kinds.NetworkPolicy, { namespace: 'np-a', name: 'db' });
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      { ...WAIT, what: 'the NetworkPolicy gone' },
    );
    assert.equal(await knpOf('np-a', 'db'), undefined);
    await assert.rejects(env.os.network.securityGroups.get(groupId), (err: unknown) =>
      isOpenStackNotFound(err),
    );
    const ours = await env.os.network.securityGroups.list({ tags: kuryr.ctx.tags }).all();
    assert.deepEqual(ours, [], 'no group of ours is left');
    for (const key of ports.keys())
      assert.deepEqual(await portGroups(key), [env.net.podSecurityGroupId], key);
  });
});

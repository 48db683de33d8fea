/**
 * Crash consistency of a policy's group: kuryr is killed right after its k-th OpenStack write
 * while it makes a NetworkPolicy's group, its rules and the selected pod's port groups (the write
 * takes effect, its answer and every later write are lost). A fresh kuryr, remembering only what
 * the KuryrNetworkPolicy records, converges: one group of that name, the policy's rules, the pod's
 * port on it; and the delete then leaves no group. For every write of a clean run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { isNotFound, kinds } from '../../kube/index.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import { killable } from '../../openstack/services/testing/kill.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { kuryrKinds } from '../api/index.ts';
import { policyGroupName } from '../policy/security-group.ts';
import { wirePod, type WiredPod } from '../policy/testing/wire.ts';
import { startKuryrEnv, type KuryrEnv, type StartKuryrOptions } from '../testing/env.ts';

const WAIT = { timeoutMs: 20_000, intervalMs: 20 };
const NS = 'np-crash';
const CONTROLLERS = ['networkpolicy', 'kuryrnetworkpolicy', 'pod-label'];

describe('kuryrnetworkpolicy killed after any OpenStack write', () => {
  let env: KuryrEnv;
  let pod: WiredPod;

  before(async () => {
    env = await startKuryrEnv({ nodes: 1 });
    await env.ensureNamespace(NS);
    pod = await wirePod(env, {
      namespace: NS,
      name: 'app',
      labels: { app: 'x' },
      vlanId: 100,
      groups: () => Promise.resolve([env.net.podSecurityGroupId]),
    });
  });
  after(async () => {
    await env?.close();
  });

  const start = (extra: Pick<StartKuryrOptions, 'context'> = {}) =>
    env.startKuryr({
      controllers: CONTROLLERS,
      options: { kubernetes: { podSecurityGroupsDriver: 'policy' } },
      ...extra,
    });

  const policy = (name: string): V1NetworkPolicy => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace: NS },
    spec: {
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ ports: [{ port: 80, protocol: 'TCP' }] }],
      egress: [{ to: [{ ipBlock: { cidr: '192.168.0.0/24', except: ['192.168.0.128/25'] } }] }],
    },
  });

  const named = (name: string) =>
    env.os.network.securityGroups.list({ name: policyGroupName({ namespace: NS, name }) }).all();

  /** Done: the recorded group is the only one of its name, holds the rules, and the pod's port carries it. */
  async function converged(name: string): Promise<boolean> {
    const knp = await env.api
      .get(kuryrKinds.KuryrNetworkPolicy, { namespace: NS, name })
      .catch(() => undefined);
    const id = knp?.status?.securityGroupId;
    if (!id) return false;
    const rules = await env.os.network.securityGroupRules.list({ security_group_id: id }).all();
    const port = await env.os.network.ports.get(pod.portId);
    return (
      rules.length === 5 && port.security_groups.join() === id && knp.status?.securityGroupRules?.length === 5
    );
  }

  async function remove(name: string): Promise<void> {
    await env.api.delete(kinds.NetworkPolicy, { namespace: NS, name });
    await eventually(
      () =>
        env.api.get(kinds.NetworkPolicy, { namespace: NS, name }).then(
          () => false,
          (err: unknown) => isNotFound(err),
        ),
      { ...WAIT, what: `${name} deleted` },
    );
    assert.deepEqual(await named(name), [], `${name}: no group left`);
    assert.deepEqual((await env.os.network.ports.get(pod.portId)).security_groups, [
      env.net.podSecurityGroupId,
    ]);
  }

  it('a fresh kuryr converges to one group with the rules and the port on it, for every k', async (t) => {
    let writes: () => number = () => 0;
    let log: () => string[] = () => [];
    const probe = await start({
      context: (ctx) => {
        const k = killable<OpenStackClient>(ctx.os, () => false);
        ctx.os = k.api;
        writes = k.writes;
        log = k.log;
      },
    });
    await env.api.create(kinds.NetworkPolicy, policy('probe'));
    await eventually(() => converged('probe'), { ...WAIT, what: 'probe converged' });
    const total = writes();
    t.diagnostic(`a clean run makes ${total} OpenStack writes: ${log().join(', ')}`);
    // The group, its tags, Neutron's two default egress rules, 4 ingress + 1 egress rules, then the port.
    assert.deepEqual(log(), [
      'create',
      'replace',
      'delete',
      'delete',
      'create',
      'create',
      'create',
      'create',
      'create',
      'update',
    ]);
    await remove('probe');
    await probe.stop();

    for (let k = 1; k <= total; k++) {
      const name = `crash-${k}`;
      let dead = () => false;
      const doomed = await start({
        context: (ctx) => {
          const kill = killable<OpenStackClient>(ctx.os, (_m, n) => n === k);
          ctx.os = kill.api;
          dead = () => kill.writes() >= k;
        },
      });
      await env.api.create(kinds.NetworkPolicy, policy(name));
      await eventually(dead, { ...WAIT, what: `${name}: killed` });
      await doomed.stop();

      const fresh = await start();
      try {
        await eventually(() => converged(name), { ...WAIT, what: `${name}: converged after restart` });
        const groups = await named(name);
        assert.equal(groups.length, 1, `${name}: one group`);
        assert.deepEqual(groups[0]?.tags, fresh.ctx.tags, `${name}: tagged as ours`);
        await remove(name);
      } finally {
        await fresh.stop();
      }
    }
  });
});

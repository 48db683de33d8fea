/**
 * NetworkPolicy with kuryr's own pod wiring: the pod and kuryrport controllers take each pod's port
 * from a pool keyed by the groups the policy driver gives, and the policy controllers make the
 * group and its rules from the VIFs' addresses. The pod a policy selects is wired straight onto
 * the policy's group; the others onto the default group; a pod made later appears in the rules.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { isNotFound, kinds } from '../../kube/index.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { defaultVif, kuryrKinds, type Vif } from '../api/index.ts';
import { startKuryrEnv, type KuryrEnv, type RunningKuryr } from '../testing/env.ts';

const WAIT = { timeoutMs: 30_000, intervalMs: 20 };
const NS = 'np-pods';

describe('NetworkPolicy on pods wired by the pod and kuryrport controllers', () => {
  let env: KuryrEnv;
  let kuryr: RunningKuryr;

  before(async () => {
    env = await startKuryrEnv({ nodes: 1 });
    await env.ensureNamespace(NS);
    kuryr = await env.startKuryr({
      controllers: ['pod', 'kuryrport', 'networkpolicy', 'kuryrnetworkpolicy', 'pod-label'],
      options: { kubernetes: { podSecurityGroupsDriver: 'policy' } },
    });
  });
  after(async () => {
    await kuryr?.stop();
    await env?.close();
  });

  const pod = (name: string, app: string) =>
    env.api.create(kinds.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, labels: { app } },
      spec: { nodeName: env.workers[0]!.name, containers: [{ name: 'c', image: 'busybox' }] },
    });

  const activeVif = async (name: string): Promise<Vif> =>
    (await eventually(
      async () => {
        const kp = await env.api.get(kuryrKinds.KuryrPort, { namespace: NS, name }).catch(() => undefined);
        const vif = defaultVif(kp?.status?.vifs)?.vif;
        return vif?.active ? vif : undefined;
      },
      { ...WAIT, what: `${name} wired` },
    ))!;

  it("wires a selected pod onto the policy's group, with the other pods' addresses in its rules", async () => {
    const policy: V1NetworkPolicy = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'db', namespace: NS },
      spec: {
        podSelector: { matchLabels: { app: 'db' } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [{ podSelector: { matchLabels: { app: 'web' } } }],
            ports: [{ port: 5432, protocol: 'TCP' }],
          },
        ] as never,
      },
    };
    await env.api.create(kinds.NetworkPolicy, policy);
    const groupId = (await eventually(
      async () => {
        const knp = await env.api
          .get(kuryrKinds.KuryrNetworkPolicy, { namespace: NS, name: 'db' })
          .catch(() => undefined);
        return knp?.status?.podSelector ? knp.status.securityGroupId : undefined;
      },
      { ...WAIT, what: 'the policy group with its rules' },
    ))!;

    await pod('db-0', 'db');
    await pod('web-0', 'web');
    const db = await activeVif('db-0');
    const web = await activeVif('web-0');
    assert.deepEqual((await env.os.network.ports.get(db.id)).security_groups, [groupId]);
    assert.deepEqual((await env.os.network.ports.get(web.id)).security_groups, [env.net.podSecurityGroupId]);
    const webIp = web.network.subnets[0]!.ips[0]!;
    await eventually(
      async () =>
        (await env.os.network.securityGroupRules.list({ security_group_id: groupId }).all()).some(
          (r) => r.remote_ip_prefix === `${webIp}/32` && r.port_range_min === 5432,
        ),
      { ...WAIT, what: "a rule from web-0's address" },
    );
  });

  it('leaves no group of ours once the policy and pods are gone', async () => {
    await env.api.delete(kinds.NetworkPolicy, { namespace: NS, name: 'db' });
    for (const name of ['db-0', 'web-0']) await env.api.delete(kinds.Pod, { namespace: NS, name });
    await eventually(
      async () =>
        env.api.get(kinds.NetworkPolicy, { namespace: NS, name: 'db' }).then(
          () => false,
          (err: unknown) => isNotFound(err),
        ),
      { ...WAIT, what: 'the policy gone' },
    );
    assert.deepEqual(await env.os.network.securityGroups.list({ tags: kuryr.ctx.tags }).all(), []);
  });
});

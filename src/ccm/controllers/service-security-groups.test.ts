import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event, V1Service } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import type { Port } from '../../openstack/network/v2/ports.ts';
import type { SecurityGroup } from '../../openstack/network/v2/security-groups.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { securityGroupDescription, securityGroupName } from '../naming.ts';
import { Annotation } from '../service/annotations.ts';
import { memberRules } from '../service/security-group-rules.ts';
import { startCcmEnv, type CcmEnv, type RunningCcm } from '../testing/env.ts';
import { MemberSecurityGroups } from './service/security-group.ts';

const wait = { timeoutMs: 30_000, intervalMs: 25 };

async function until<T>(fn: () => Promise<T | undefined | false>, what: string): Promise<T> {
  return (await eventually(fn, { ...wait, what })) as T;
}

describe('service controller: member security groups (end to end: kube and OpenStack emulators)', () => {
  let env: CcmEnv;
  let ccm: RunningCcm | undefined;
  let networkId: string;
  let subnetId: string;
  let publicId: string;
  /** Node name → the id of the port holding its InternalIP. */
  const ports = new Map<string, string>();

  before(async () => {
    env = await startCcmEnv();
    const { network: net, subnet, publicNetwork: pub } = await env.routedSubnet('10.30.0.0/24');
    networkId = net.id;
    subnetId = subnet.id;
    publicId = pub.id;
    await node('node-1', '10.30.0.11');
    await node('node-2', '10.30.0.12');
    // A member whose port has port security off: OCCM skips it, and so do we.
    await node('node-3', '10.30.0.13', { portSecurity: false });
    ccm = await startCcm({ manage: true });
  });
  after(async () => {
    await env?.close();
  });

  async function startCcm(opts: { manage: boolean; provider?: string }): Promise<RunningCcm> {
    await ccm?.stop();
    return env.startCcm({
      controllers: ['service'],
      cloudConfig: await env.cloudConf(
        `[LoadBalancer]\nsubnet-id = ${subnetId}\nfloating-network-id = ${publicId}\n` +
          `manage-security-groups = ${opts.manage}\n` +
          (opts.provider ? `lb-provider = ${opts.provider}\n` : ''),
      ),
    });
  }

  /** A server with one port on the member subnet, and its initialized Node. */
  async function node(name: string, ip: string, opts: { portSecurity?: boolean } = {}): Promise<void> {
    const port = await env.os.network.ports.create({
      network_id: networkId,
      name: `${name}-port`,
      fixed_ips: [{ subnet_id: subnetId, ip_address: ip }],
      ...(opts.portSecurity === false ? { port_security_enabled: false } : {}),
    });
    ports.set(name, port.id);
    const server = await env.os.compute.servers.create({
      name,
      flavorRef: env.boot.flavorId,
      imageRef: env.boot.imageId,
      networks: [{ port: port.id }],
    });
    await env.os.compute.servers.waitForActive(server.id, { intervalMs: 20, timeoutMs: 20_000 });
    await env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      spec: { providerID: `openstack:///${server.id}` },
      status: { addresses: [{ type: 'InternalIP', address: ip }] },
    });
  }

  const get = (name: string) => env.api.get(kinds.Service, { namespace: 'default', name });

  function service(name: string, spec: V1Service['spec'] = {}): Promise<V1Service> {
    return env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: {
        type: 'LoadBalancer',
        selector: { app: name },
        ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
        ...spec,
      },
    });
  }

  async function ready(name: string): Promise<V1Service> {
    return until(async () => {
      const s = await get(name);
      return s.status?.loadBalancer?.ingress?.[0] ? s : undefined;
    }, `${name} has an ingress address`);
  }

  async function groupsNamed(svc: V1Service): Promise<SecurityGroup[]> {
    const name = securityGroupName(svc.metadata!.uid!, 'default', svc.metadata!.name!);
    return env.os.network.securityGroups.list({ name }).all();
  }

  const ingress = (g: SecurityGroup) =>
    g.security_group_rules
      .filter((r) => r.direction === 'ingress')
      .map(
        (r) => `${r.ethertype} ${r.protocol}/${r.port_range_min}-${r.port_range_max} ${r.remote_ip_prefix}`,
      )
      .sort();

  const port = (node: string): Promise<Port> => env.os.network.ports.get(ports.get(node)!);

  /** The nodes whose port carries the group. */
  async function carriers(groupId: string): Promise<string[]> {
    const out: string[] = [];
    for (const [name, id] of ports) {
      if ((await env.os.network.ports.get(id)).security_groups.includes(groupId)) out.push(name);
    }
    return out.sort();
  }

  async function events(name: string, reason: string): Promise<EventsV1Event[]> {
    const list = await env.api.list(kinds.EventsV1Event, { namespace: 'default' });
    return list.items.filter((e) => e.regarding?.name === name && e.reason === reason);
  }

  let webGroup: SecurityGroup;

  it('creates the group with NodePort rules from the member subnet and puts it on the member ports', async () => {
    await service('web', {
      externalTrafficPolicy: 'Local',
      ports: [
        { name: 'http', protocol: 'TCP', port: 80 },
        { name: 'dns', protocol: 'UDP', port: 53 },
      ],
    });
    const svc = await ready('web');
    const [group, ...twins] = await groupsNamed(svc);
    assert.ok(group, 'the group exists once the Service has its address');
    assert.deepEqual(twins, []);
    assert.equal(group.description, securityGroupDescription('default', 'web', 'kubernetes'));
    const nodePorts = svc.spec!.ports!.map((p) => [p.protocol!.toLowerCase(), p.nodePort!] as const);
    const hcnp = svc.spec!.healthCheckNodePort!;
    assert.ok(hcnp > 0);
    assert.deepEqual(
      ingress(group),
      [...nodePorts, ['tcp', hcnp] as const]
        .map(([proto, p]) => `IPv4 ${proto}/${p}-${p} 10.30.0.0/24`)
        .sort(),
    );
    // Neutron's own egress rules are left alone.
    assert.equal(group.security_group_rules.filter((r) => r.direction === 'egress').length, 2);
    assert.deepEqual(await carriers(group.id), ['node-1', 'node-2']);
    // The group is added next to what the port had: the project's default group stays.
    assert.equal((await port('node-1')).security_groups.length, 2);
    assert.deepEqual(await events('web', 'SyncLoadBalancerFailed'), []);
    webGroup = group;
  });

  it('puts the group on the port of a node that joins', async () => {
    await node('node-4', '10.30.0.14');
    await until(
      async () => (await port('node-4')).security_groups.includes(webGroup.id),
      'node-4 port carries the group',
    );
    assert.deepEqual(await carriers(webGroup.id), ['node-1', 'node-2', 'node-4']);
  });

  it('takes the group off the port of a node that leaves', async () => {
    await env.api.delete(kinds.Node, { name: 'node-1' });
    await until(
      async () => !(await port('node-1')).security_groups.includes(webGroup.id),
      'node-1 port no longer carries the group',
    );
    assert.deepEqual(await carriers(webGroup.id), ['node-2', 'node-4']);
    assert.equal((await port('node-1')).security_groups.length, 1);
  });

  it('repairs a rule and a member port changed behind its back on the next reconcile', async () => {
    const extra = await env.os.network.securityGroupRules.create({
      security_group_id: webGroup.id,
      direction: 'ingress',
      protocol: 'tcp',
      port_range_min: 22,
      port_range_max: 22,
      remote_ip_prefix: '0.0.0.0/0',
    });
    const p = await port('node-2');
    await env.os.network.ports.update(p.id, {
      security_groups: p.security_groups.filter((g) => g !== webGroup.id),
    });
    // Any change to the Service wakes the controller.
    await env.api.patch(kinds.Service, { namespace: 'default', name: 'web' }, 'merge', {
      metadata: { labels: { touched: 'yes' } },
    });
    await until(
      async () => (await port('node-2')).security_groups.includes(webGroup.id),
      'node-2 port carries the group again',
    );
    await until(async () => {
      const g = await env.os.network.securityGroups.get(webGroup.id);
      return !g.security_group_rules.some((r) => r.id === extra.id);
    }, 'the extra rule deleted');
  });

  it('deletes the group with the Service, after taking it off every port', async () => {
    const svc = await get('web');
    await env.api.delete(kinds.Service, { namespace: 'default', name: 'web' });
    await until(
      async () =>
        (await env.api.list(kinds.Service, { namespace: 'default' })).items.every(
          (s) => s.metadata?.name !== 'web',
        ),
      'web gone',
    );
    assert.deepEqual(await groupsNamed(svc), []);
    assert.deepEqual(await carriers(webGroup.id), []);
    assert.deepEqual(await env.os.network.ports.list({ security_groups: webGroup.id }).all(), []);
  });

  it('deletes the group an earlier configuration left once manage-security-groups is off', async () => {
    await service('kept');
    const svc = await ready('kept');
    const group = await until(async () => (await groupsNamed(svc))[0], 'kept has a group');
    await until(async () => (await carriers(group.id)).length === 2, 'kept group on two ports');
    ccm = await startCcm({ manage: false });
    await until(async () => (await groupsNamed(svc)).length === 0, 'the leftover group deleted');
    assert.deepEqual(await carriers(group.id), []);
    // The load balancer itself stays.
    const lbId = (await get('kept')).metadata!.annotations![Annotation.LoadBalancerId]!;
    assert.equal((await env.os.loadBalancer.loadBalancers.get(lbId)).provisioning_status, 'ACTIVE');
    await env.api.delete(kinds.Service, { namespace: 'default', name: 'kept' });
  });

  it('with lb-provider = ovn opens the NodePorts to loadBalancerSourceRanges instead', async () => {
    ccm = await startCcm({ manage: true, provider: 'ovn' });
    await service('ovn', { loadBalancerSourceRanges: ['192.0.2.0/24', '198.51.100.7/24'] });
    const svc = await ready('ovn');
    const group = await until(async () => (await groupsNamed(svc))[0], 'ovn has a group');
    const nodePort = svc.spec!.ports![0]!.nodePort!;
    assert.deepEqual(ingress(group), [
      `IPv4 tcp/${nodePort}-${nodePort} 192.0.2.0/24`,
      `IPv4 tcp/${nodePort}-${nodePort} 198.51.100.0/24`,
    ]);
    assert.deepEqual(await carriers(group.id), ['node-2', 'node-4']);
    assert.deepEqual(await events('ovn', 'LoadBalancerSourceRangesIgnored'), []);

    // Ranges changed: the rules follow.
    await env.api.patch(kinds.Service, { namespace: 'default', name: 'ovn' }, 'merge', {
      spec: { loadBalancerSourceRanges: ['203.0.113.0/24'] },
    });
    await until(async () => {
      const g = await env.os.network.securityGroups.get(group.id);
      return ingress(g).join() === `IPv4 tcp/${nodePort}-${nodePort} 203.0.113.0/24`;
    }, 'rules from the new range');
    await ccm.stop();
    ccm = undefined;
  });

  it("never overwrites another writer's port change: a lost revision race is re-read and retried", async () => {
    const name = 'lb-sg-race';
    const other = await env.os.network.securityGroups.create({ name: 'someone-else' });
    const member = await env.os.network.ports.create({
      network_id: networkId,
      fixed_ips: [{ subnet_id: subnetId, ip_address: '10.30.0.50' }],
    });
    // The other writer adds its group to the member's port right between our read and our write.
    let raced = false;
    const racing = new Proxy(env.os, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'network') return value;
        const network = value as OpenStackClient['network'];
        return {
          ...network,
          ports: {
            ...network.ports,
            update: async (...args: Parameters<typeof network.ports.update>) => {
              if (!raced && args[0] === member.id) {
                raced = true;
                const p = await network.ports.get(args[0]);
                await network.ports.update(p.id, { security_groups: [...p.security_groups, other.id] });
              }
              return network.ports.update(...args);
            },
          },
        };
      },
    });
    const groups = new MemberSecurityGroups(racing);
    const out = await groups.ensure(
      {
        name,
        description: 'race',
        rules: memberRules({ ports: [{ protocol: 'TCP', nodePort: 30001 }], subnetCidr: '10.30.0.0/24' }),
        subnetId,
        members: [{ name: 'race', address: '10.30.0.50' }],
      },
      AbortSignal.timeout(20_000),
    );
    assert.ok(raced);
    const held = (await env.os.network.ports.get(member.id)).security_groups;
    assert.ok(held.includes(out.id), 'our group is on the port');
    assert.ok(held.includes(other.id), "the other writer's group survived");
    await groups.remove(name, AbortSignal.timeout(20_000));
    const left = (await env.os.network.ports.get(member.id)).security_groups;
    assert.ok(!left.includes(out.id));
    assert.ok(left.includes(other.id));
    assert.deepEqual(await env.os.network.securityGroups.list({ name }).all(), []);
  });

  it('fails on a rule Neutron refuses for quota instead of taking the 409 for a duplicate', async () => {
    const groups = new MemberSecurityGroups(env.os);
    const target = {
      name: 'lb-sg-quota',
      description: 'quota',
      rules: [] as ReturnType<typeof memberRules>,
      subnetId,
      members: [],
    };
    const signal = AbortSignal.timeout(20_000);
    const { id } = await groups.ensure(target, signal);
    const project = (await env.os.network.securityGroups.get(id)).project_id;
    const quotas = `/v2.0/quotas/${project}`;
    const used = (await env.sim.request('neutron', 'GET', `${quotas}/details.json`)).body.quota
      .security_group_rule.used as number;
    assert.equal(
      (await env.sim.request('neutron', 'PUT', quotas, { body: { quota: { security_group_rule: used } } }))
        .status,
      200,
    );
    try {
      const rules = memberRules({
        ports: [{ protocol: 'TCP', nodePort: 30002 }],
        subnetCidr: '10.30.0.0/24',
      });
      await assert.rejects(groups.ensure({ ...target, rules }, signal), /Quota exceeded/);
    } finally {
      await env.sim.request('neutron', 'DELETE', quotas);
      await groups.remove(target.name, signal);
    }
  });
});

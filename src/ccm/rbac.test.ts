/**
 * deploy/ccm's RBAC, derived from what the CCM does: the CCM runs as its ServiceAccount against the
 * Kubernetes emulator, which authorizes every call by the shipped Roles and bindings and records
 * it, through everything it does in a cluster (Node initialization, routes, a LoadBalancer
 * Service, deleting a Node whose server is gone, the config Secret, leader election with leader
 * migration, Events and a scrape of its secure port). Nothing it calls may be refused, and nothing granted may go unused.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1ClusterRole, V1PolicyRule, V1Role } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';
import { kinds, type KubernetesObject } from '../kube/index.ts';
import { freePort } from '../kube/testing/env.ts';
import type { AuditEntry } from '../sim/kube/auth/auth.ts';
import { kubeconfigText } from '../sim/kube/kubeconfig.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import { TAINT_UNINITIALIZED } from './node-spec.ts';
import { kustomizationObjects } from '../kube/testing/kustomization.ts';
import { startCcmEnv, type CcmEnv, type RunningCcm } from './testing/env.ts';

const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy', 'ccm');
const USER = 'system:serviceaccount:kube-system:cloud-controller-manager';
const wait = { timeoutMs: 30_000, intervalMs: 25 };

/** deploy/ccm as `kubectl apply -k` sends it. */
function manifests(): Promise<(KubernetesObject & Record<string, unknown>)[]> {
  return kustomizationObjects(DEPLOY);
}

/** Whether an allowed request of the CCM used this rule: every verb, resource and name it lists. */
function unusedParts(rule: V1PolicyRule, namespace: string, used: AuditEntry[]): string[] {
  const missing: string[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      const [res, sub = ''] = resource.split('/');
      for (const verb of rule.verbs) {
        for (const name of rule.resourceNames?.length ? rule.resourceNames : ['']) {
          const hit = used.some(
            (e) =>
              e.apiGroup === group &&
              e.resource === res &&
              e.subresource === sub &&
              e.verb === verb &&
              (!namespace || e.namespace === namespace) &&
              (!name || e.name === name),
          );
          if (!hit) missing.push(`${verb} ${group || 'core'}/${resource}${name ? ` ${name}` : ''}`);
        }
      }
    }
  }
  return missing;
}

describe('deploy/ccm RBAC: the CCM as its ServiceAccount, every call authorized by the shipped rules', () => {
  let env: CcmEnv;
  let ccm: RunningCcm;
  let securePort: number;
  let prometheus: string;
  const until = <T>(fn: () => Promise<T | undefined | false>, what: string) =>
    eventually(fn, { ...wait, what }) as Promise<T>;

  before(async () => {
    env = await startCcmEnv();
    for (const obj of await manifests()) {
      if (obj.kind === 'Secret') {
        // The example Secret's values are placeholders: this one overlays a valid setting.
        obj.stringData = { 'cloud.conf': '[LoadBalancer]\ncreate-monitor = false\n' };
      }
      if (obj.kind === 'DaemonSet' || obj.kind === 'Deployment') continue;
      await env.api.create(await env.api.discover(obj.apiVersion!, obj.kind!), obj);
    }
    const kube = env.kube.emulator;
    const token = kube.auth.issueServiceAccountToken('kube-system', 'cloud-controller-manager');
    const kubeconfig = join(env.dir, 'ccm-sa.kubeconfig');
    await writeFile(
      kubeconfig,
      kubeconfigText({ server: env.kube.url, token, ...(env.kube.caPem ? { caPem: env.kube.caPem } : {}) }),
    );
    // A scraper, bound to the shipped metrics-reader role.
    kube.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'prometheus', namespace: 'default' },
    });
    kube.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'prometheus' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:cloud-controller-manager:metrics-reader',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'default' }],
    });
    prometheus = kube.auth.issueServiceAccountToken('default', 'prometheus');

    const { network, subnet, router, publicNetwork } = await env.routedSubnet('10.30.0.0/16');
    const boot = async (name: string) => {
      const s = await env.os.compute.servers.create({
        name,
        flavorRef: env.boot.flavorId,
        imageRef: env.boot.imageId,
        networks: [{ uuid: network.id }],
      });
      await env.os.compute.servers.waitForActive(s.id, { intervalMs: 20, timeoutMs: 10_000 });
      return s.id;
    };
    await boot('worker-1');
    await boot('worker-2');
    await env.createNode('worker-1', { spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] } });
    await env.createNode('worker-2');
    securePort = await freePort();
    ccm = await env.startCcm({
      kubeconfig,
      leaderElect: true,
      // Upstream's default configuration: the migrated controllers run under the migration Lease.
      enableLeaderMigration: true,
      securePort,
      bindAddress: '127.0.0.1',
      clusterCidr: '10.244.0.0/16',
      nodeMonitorPeriodMs: 50,
      cloudConfig: await env.cloudConf(
        'secret-name = cloud-config\nsecret-namespace = kube-system\n' +
          `[LoadBalancer]\nsubnet-id = ${subnet.id}\nfloating-network-id = ${publicNetwork.id}\n` +
          `[Route]\nrouter-id = ${router.id}\n`,
      ),
    });
  });
  after(async () => {
    await env?.close();
  });

  it('does its whole job with no call refused', async () => {
    // Leader election on its Lease, and on the migration Lease (KEP-2436).
    for (const name of ['cloud-controller-manager', 'cloud-provider-extraction-migration']) {
      await until(async () => {
        const lease = await env.api.get(kinds.Lease, { namespace: 'kube-system', name });
        return lease.spec?.holderIdentity;
      }, `the Lease ${name} held`);
    }
    // Nodes initialized; the route of worker-1's podCIDR, and its NetworkUnavailable condition.
    for (const name of ['worker-1', 'worker-2']) {
      await until(async () => {
        const n = await env.api.get(kinds.Node, { name });
        return n.spec?.providerID && !(n.spec.taints ?? []).some((t) => t.key === TAINT_UNINITIALIZED);
      }, `${name} initialized`);
    }
    await until(async () => {
      const n = await env.api.get(kinds.Node, { name: 'worker-1' });
      return n.status?.conditions?.some((c) => c.type === 'NetworkUnavailable' && c.status === 'False');
    }, 'worker-1 routed');
    // A LoadBalancer Service, served and then deleted.
    await env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ protocol: 'TCP', port: 80 }] },
    });
    await until(async () => {
      const s = await env.api.get(kinds.Service, { namespace: 'default', name: 'web' });
      return s.status?.loadBalancer?.ingress?.[0]?.ip;
    }, 'web has an address');
    await env.api.delete(kinds.Service, { namespace: 'default', name: 'web' });
    await until(async () => {
      try {
        await env.api.get(kinds.Service, { namespace: 'default', name: 'web' });
        return false;
      } catch {
        return true;
      }
    }, 'web gone');
    // The server of worker-2 goes, while its kubelet is silent: the Node goes too.
    const w2 = await env.api.get(kinds.Node, { name: 'worker-2' });
    await env.api.patch(
      kinds.Node,
      { name: 'worker-2' },
      'merge',
      { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }] } },
      { subresource: 'status' },
    );
    await env.os.compute.servers.delete(w2.spec!.providerID!.split('/').pop()!);
    await until(async () => {
      try {
        await env.api.get(kinds.Node, { name: 'worker-2' });
        return false;
      } catch {
        return true;
      }
    }, 'worker-2 deleted');
    // A scrape of the secure port: the CCM reviews the token and the access.
    const insecure = new Agent({ connect: { rejectUnauthorized: false } });
    try {
      const r = await fetch(`https://127.0.0.1:${securePort}/metrics`, {
        dispatcher: insecure,
        headers: { authorization: `Bearer ${prometheus}` },
      });
      assert.equal(r.status, 200, await r.text());
    } finally {
      await insecure.close();
    }
    await ccm.stop();

    const calls = env.kube.emulator.auth.audit.filter((e) => e.user === USER);
    assert.ok(calls.length > 20, `the CCM's calls were recorded (${calls.length})`);
    const refused = calls.filter((e) => !e.allowed);
    assert.deepEqual(
      refused.map(
        (e) =>
          `${e.verb} ${e.apiGroup}/${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.namespace}/${e.name}`,
      ),
      [],
    );
  });

  it('is granted nothing it did not use', async () => {
    const objs = await manifests();
    const used = env.kube.emulator.auth.audit.filter((e) => e.user === USER && e.allowed);
    const unused: string[] = [];
    for (const o of objs) {
      if (o.kind !== 'ClusterRole' && o.kind !== 'Role') continue;
      const role = o as V1ClusterRole | V1Role;
      // Granted to scrapers, not to the CCM.
      if (role.metadata?.name?.endsWith(':metrics-reader')) continue;
      for (const rule of role.rules ?? []) {
        unused.push(...unusedParts(rule, o.kind === 'Role' ? role.metadata!.namespace! : '', used));
      }
    }
    // A repeated Event is a patch of the first one (within 10 minutes): not every run repeats one.
    assert.deepEqual(
      unused.filter((u) => u !== 'patch core/events'),
      [],
    );
  });
});

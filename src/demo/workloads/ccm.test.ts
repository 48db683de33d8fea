/**
 * The runner runs the real `shiftstack ccm` from a Deployment as the ccm-operator renders it: the
 * `sh -c` wrapper, `$(VAR)` from a ConfigMap, the cloud config from a ConfigMap whose clouds-file
 * is a mounted Secret, probes on the secure port, deploy/ccm's RBAC as its ServiceAccount.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { eventually } from '../../sim/kube/testing/harness.ts';
import { TAINT_UNINITIALIZED } from '../../ccm/node-spec.ts';
import { alive, ccmDeployment, NS, startRunnerEnv, type RunnerEnv } from './testing/env.ts';

const SA_USER = 'system:serviceaccount:kube-system:cloud-controller-manager';
const wait = { timeoutMs: 90_000, intervalMs: 100 };

describe('WorkloadRunner: a Deployment of shiftstack ccm runs for real', () => {
  let t: RunnerEnv;
  before(async () => {
    t = await startRunnerEnv();
  });
  after(async () => {
    await t?.close();
  });

  it('initializes a Node as its ServiceAccount, becomes Available, follows its ConfigMap, stops with the runner', async () => {
    const { env } = t;
    const net = await env.os.network.networks.create({ name: 'k8s' });
    await env.os.network.subnets.create({ network_id: net.id, cidr: '10.40.0.0/24', ip_version: 4 });
    const server = await env.os.compute.servers.create({
      name: 'worker-1',
      flavorRef: env.boot.flavorId,
      imageRef: env.boot.imageId,
      networks: [{ uuid: net.id }],
    });
    await env.os.compute.servers.waitForActive(server.id, { intervalMs: 20, timeoutMs: 10_000 });
    await env.createNode('worker-1');

    await env.api.create(kinds.Deployment, ccmDeployment('openstack-cloud-controller-manager', 1));
    const key = { namespace: NS, name: 'openstack-cloud-controller-manager' };

    const node = await eventually(
      async () => {
        const n = await env.api.get(kinds.Node, { name: 'worker-1' });
        return !n.spec?.taints?.some((x) => x.key === TAINT_UNINITIALIZED) && n.spec?.providerID
          ? n
          : undefined;
      },
      { ...wait, what: 'worker-1 initialized by the ccm pod' },
    );
    assert.equal(node.spec?.providerID, `openstack:///${server.id}`);
    const calls = env.kube.emulator.auth.audit.filter((e) => e.user === SA_USER);
    assert.ok(
      calls.some((e) => e.resource === 'nodes' && e.verb === 'patch' && e.allowed),
      'the Node was patched by the ServiceAccount, through its RBAC',
    );

    const d = await eventually(
      async () => {
        const x = await env.api.get<V1Deployment>(kinds.Deployment, key);
        const available = x.status?.conditions?.find((c) => c.type === 'Available');
        return available?.status === 'True' ? x : undefined;
      },
      { ...wait, what: 'the Deployment Available' },
    );
    const s = d.status!;
    assert.equal(s.observedGeneration, d.metadata?.generation);
    assert.equal(s.replicas, 1);
    assert.equal(s.updatedReplicas, 1);
    assert.equal(s.readyReplicas, 1);
    assert.equal(s.availableReplicas, 1);
    assert.equal(s.unavailableReplicas ?? 0, 0);
    const available = s.conditions?.find((c) => c.type === 'Available');
    assert.equal(available?.reason, 'MinimumReplicasAvailable');
    const progressing = s.conditions?.find((c) => c.type === 'Progressing');
    assert.equal(progressing?.status, 'True');
    assert.equal(progressing?.reason, 'NewReplicaSetAvailable');

    // The pod: its name, its HOSTNAME, the expanded and rewritten command line, the ConfigMap's
    // text rewritten to the pod root.
    const [pod] = t.runner.pods(NS, 'openstack-cloud-controller-manager');
    assert.ok(pod);
    assert.match(
      pod.name,
      /^openstack-cloud-controller-manager-[bcdfghjklmnpqrstvwxz2456789]+-[bcdfghjklmnpqrstvwxz2456789]{5}$/,
    );
    const [pid] = pod.pids;
    assert.ok(pid !== undefined && alive(pid));
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    assert.ok(cmdline.includes('--cluster-name=infra-test'), cmdline.join(' '));
    assert.ok(
      cmdline.includes(`--cloud-config=${pod.root}/etc/openstack/config/cloud.conf`),
      cmdline.join(' '),
    );
    assert.ok(!cmdline.includes('--secure-port=10258'), 'the secure port is mapped to a host port');
    const environ = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
    assert.ok(environ.includes(`HOSTNAME=${pod.name}`));
    assert.ok(environ.includes(`POD_NAME=${pod.name}`));
    const cloudConf = join(pod.root, 'etc/openstack/config/cloud.conf');
    assert.match(
      await readFile(cloudConf, 'utf8'),
      new RegExp(`clouds-file = ${pod.root}/etc/openstack/secret/clouds.yaml`),
    );

    // A ConfigMap change reaches the file, without a restart.
    await env.api.patch(kinds.ConfigMap, { namespace: NS, name: 'cloud-conf' }, 'merge', {
      data: {
        'cloud.conf':
          '[Global]\nuse-clouds = true\nclouds-file = /etc/openstack/secret/clouds.yaml\ncloud = openstack\n\n[LoadBalancer]\ncreate-monitor = false\n',
      },
    });
    await eventually(async () => (await readFile(cloudConf, 'utf8')).includes('create-monitor = false'), {
      ...wait,
      what: 'the ConfigMap change in the mounted file',
    });
    assert.deepEqual(t.runner.pods(NS, 'openstack-cloud-controller-manager')[0]?.pids, [pid], 'no restart');

    // The runner's stop stops the pod, and nothing is left.
    await t.stopRunner();
    assert.equal(alive(pid), false, 'the ccm process is gone once the runner has stopped');
  });
});

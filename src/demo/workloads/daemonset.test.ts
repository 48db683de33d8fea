/**
 * deploy/ccm as a user applies it (`kubectl apply -k deploy/ccm`, the DaemonSet of upstream's
 * shape), run by the WorkloadRunner playing one control-plane node: the DaemonSet's pod starts once
 * its node exists, runs `shiftstack ccm` from the pod spec (its args, the mounted cloud-config
 * Secret, its ServiceAccount) and initializes that node. And the DaemonSet controller's rules the
 * runner follows: which node a daemon pod belongs on.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1DaemonSet, V1Node, V1NodeSelectorTerm, V1PodSpec } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { kubectl, noKubectl } from '../../kube/testing/kubectl.ts';
import { eventually } from '../../sim/kube/testing/harness.ts';
import { TAINT_UNINITIALIZED } from '../../ccm/node-spec.ts';
import { notForNode, tolerates } from './daemonset.ts';
import { startRunnerEnv, type RunnerEnv } from './testing/env.ts';

const DEPLOY = join(import.meta.dirname, '..', '..', '..', 'deploy', 'ccm');
const NODE = 'cp-1';
const SA_USER = 'system:serviceaccount:kube-system:cloud-controller-manager';
const wait = { timeoutMs: 90_000, intervalMs: 100 };
const skip = noKubectl();

describe(
  'deploy/ccm: the DaemonSet, applied with kubectl, initializes its control-plane node',
  { skip },
  () => {
    let t: RunnerEnv;
    before(async () => {
      t = await startRunnerEnv({ images: ['shiftstack:latest'], nodeName: NODE, ccmRbac: false });
    });
    after(async () => {
      await t?.close();
    });

    it('`kubectl apply -k deploy/ccm`, the cloud.conf in its Secret, a control-plane Node: the pod starts there and initializes it', async () => {
      const { env } = t;
      const applied = await kubectl(['apply', '-k', DEPLOY], env.kube.kubeconfigPath, env.dir);
      assert.equal(applied.code, 0, applied.err);
      assert.match(applied.out, /daemonset.apps\/shiftstack-ccm created/);
      const key = { namespace: 'kube-system', name: 'shiftstack-ccm' };

      // No node yet: nothing scheduled, and the status says so.
      const empty = await eventually(
        async () => {
          const ds = await env.api.get<V1DaemonSet>(kinds.DaemonSet, key);
          return ds.status?.observedGeneration === ds.metadata?.generation ? ds : undefined;
        },
        { ...wait, what: 'the DaemonSet status without a node' },
      );
      assert.equal(empty.status?.desiredNumberScheduled, 0);
      assert.deepEqual(t.runner.pods('kube-system', 'shiftstack-ccm', 'DaemonSet'), []);

      // The user's edit of base/cloud-config-secret.yaml: this cloud's cloud.conf.
      const cloudConf = await readFile(await env.cloudConf(), 'utf8');
      await env.api.patch(kinds.Secret, { namespace: 'kube-system', name: 'cloud-config' }, 'merge', {
        data: { 'cloud.conf': Buffer.from(cloudConf).toString('base64') },
      });
      const net = await env.os.network.networks.create({ name: 'k8s' });
      await env.os.network.subnets.create({ network_id: net.id, cidr: '10.41.0.0/24', ip_version: 4 });
      const server = await env.os.compute.servers.create({
        name: NODE,
        flavorRef: env.boot.flavorId,
        imageRef: env.boot.imageId,
        networks: [{ uuid: net.id }],
      });
      await env.os.compute.servers.waitForActive(server.id, { intervalMs: 20, timeoutMs: 10_000 });
      // A new control-plane node as kubelet --cloud-provider=external registers it: not ready yet,
      // and not initialized.
      await env.createNode(NODE, {
        metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } },
        spec: {
          taints: [
            { key: TAINT_UNINITIALIZED, value: 'true', effect: 'NoSchedule' },
            { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' },
            { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
          ],
        },
      });

      const node = await eventually(
        async () => {
          const n = await env.api.get(kinds.Node, { name: NODE });
          return !n.spec?.taints?.some((x) => x.key === TAINT_UNINITIALIZED) && n.spec?.providerID
            ? n
            : undefined;
        },
        { ...wait, what: `${NODE} initialized by the DaemonSet's pod` },
      );
      assert.equal(node.spec?.providerID, `openstack:///${server.id}`);
      assert.ok(
        env.kube.emulator.auth.audit.some(
          (e) => e.user === SA_USER && e.resource === 'nodes' && e.verb === 'patch' && e.allowed,
        ),
        'the Node was patched by the ServiceAccount, through deploy/ccm RBAC',
      );

      // One pod, named as the DaemonSet controller names it, running the pod spec's command line.
      const pods = t.runner.pods('kube-system', 'shiftstack-ccm', 'DaemonSet');
      assert.equal(pods.length, 1);
      const [pod] = pods;
      assert.match(pod!.name, /^shiftstack-ccm-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      const [pid] = pod!.pids;
      assert.ok(pid !== undefined);
      const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      assert.ok(cmdline.includes('ccm'), cmdline.join(' '));
      assert.ok(cmdline.includes(`--cloud-config=${pod!.root}/etc/config/cloud.conf`), cmdline.join(' '));
      assert.ok(cmdline.includes('--cluster-name=kubernetes'), cmdline.join(' '));
      assert.ok(cmdline.includes('--leader-elect=true'), cmdline.join(' '));

      const ds = await eventually(
        async () => {
          const x = await env.api.get<V1DaemonSet>(kinds.DaemonSet, key);
          return x.status?.numberAvailable === 1 ? x : undefined;
        },
        { ...wait, what: 'the DaemonSet available on its node' },
      );
      assert.equal(ds.status?.desiredNumberScheduled, 1);
      assert.equal(ds.status?.currentNumberScheduled, 1);
      assert.equal(ds.status?.updatedNumberScheduled, 1);
      assert.equal(ds.status?.numberReady, 1);
      assert.equal(ds.status?.numberMisscheduled, 0);
      assert.equal(ds.status?.numberUnavailable, 0);
    });
  },
);

describe('which node a daemon pod belongs on', () => {
  const node = (labels: Record<string, string>, taints: V1Node['spec'] = {}): V1Node => ({
    metadata: { name: 'n', labels },
    spec: taints,
  });
  const pod: V1PodSpec = {
    containers: [],
    nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
    tolerations: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
  };

  it('needs the nodeSelector’s labels', () => {
    assert.equal(notForNode(node({ 'node-role.kubernetes.io/control-plane': '' }), pod), undefined);
    assert.match(notForNode(node({}), pod) ?? '', /nodeSelector node-role.kubernetes.io\/control-plane=/);
  });

  it('needs every NoSchedule and NoExecute taint tolerated; the controller’s own tolerations count', () => {
    const cp = { 'node-role.kubernetes.io/control-plane': '' };
    const with_ = (key: string, effect: string) => node(cp, { taints: [{ key, effect }] });
    assert.equal(notForNode(with_('node-role.kubernetes.io/control-plane', 'NoSchedule'), pod), undefined);
    assert.match(notForNode(with_('dedicated', 'NoSchedule'), pod) ?? '', /taint dedicated=:NoSchedule/);
    assert.equal(notForNode(with_('dedicated', 'PreferNoSchedule'), pod), undefined);
    // Added by the DaemonSet controller to every daemon pod.
    assert.equal(notForNode(with_('node.kubernetes.io/unschedulable', 'NoSchedule'), pod), undefined);
    assert.equal(notForNode(with_('node.kubernetes.io/not-ready', 'NoExecute'), pod), undefined);
    // Only to host-network pods.
    const unavailable = with_('node.kubernetes.io/network-unavailable', 'NoSchedule');
    assert.ok(notForNode(unavailable, pod));
    assert.equal(notForNode(unavailable, { ...pod, hostNetwork: true }), undefined);
  });

  it('needs a term of the required node affinity matched: terms ORed, requirements ANDed', () => {
    const affinity = (...nodeSelectorTerms: V1NodeSelectorTerm[]): V1PodSpec => ({
      containers: [],
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms } } },
    });
    // ccm-operator's placement: either control-plane role label.
    const roles = affinity(
      { matchExpressions: [{ key: 'node-role.kubernetes.io/master', operator: 'Exists' }] },
      { matchExpressions: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' }] },
    );
    assert.equal(notForNode(node({ 'node-role.kubernetes.io/control-plane': '' }), roles), undefined);
    assert.equal(notForNode(node({ 'node-role.kubernetes.io/master': '' }), roles), undefined);
    assert.match(
      notForNode(node({ 'node-role.kubernetes.io/worker': '' }), roles) ?? '',
      /none of the 2 required node affinity terms/,
    );

    const zone = (operator: string, values?: string[]) =>
      affinity({ matchExpressions: [{ key: 'zone', operator, ...(values ? { values } : {}) }] });
    const inA = node({ zone: 'a' });
    const bare = node({});
    assert.equal(notForNode(inA, zone('In', ['a', 'b'])), undefined);
    assert.ok(notForNode(inA, zone('In', ['b'])));
    assert.ok(notForNode(bare, zone('In', ['a'])));
    assert.ok(notForNode(inA, zone('NotIn', ['a'])));
    assert.equal(notForNode(bare, zone('NotIn', ['a'])), undefined, 'NotIn holds without the label');
    assert.equal(notForNode(inA, zone('Exists')), undefined);
    assert.ok(notForNode(bare, zone('Exists')));
    assert.equal(notForNode(bare, zone('DoesNotExist')), undefined);
    assert.ok(notForNode(inA, zone('DoesNotExist')));

    const cpus = (operator: string, values: string[]) =>
      affinity({ matchExpressions: [{ key: 'cpus', operator, values }] });
    assert.equal(notForNode(node({ cpus: '8' }), cpus('Gt', ['4'])), undefined);
    assert.ok(notForNode(node({ cpus: '4' }), cpus('Gt', ['4'])));
    assert.equal(notForNode(node({ cpus: '2' }), cpus('Lt', ['4'])), undefined);
    assert.ok(notForNode(node({ cpus: 'many' }), cpus('Gt', ['4'])), 'a label that is no integer');
    assert.ok(notForNode(node({}), cpus('Lt', ['4'])), 'Lt without the label');
    assert.ok(notForNode(node({ cpus: '8' }), cpus('Gt', ['4', '5'])), 'Gt takes one value');

    // Requirements of one term are ANDed; matchFields names the Node.
    const both = affinity({
      matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }],
      matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }],
    });
    assert.equal(notForNode(inA, both), undefined);
    assert.ok(notForNode({ ...inA, metadata: { ...inA.metadata, name: 'other' } }, both));
    assert.ok(notForNode(bare, both));
    const notMe = affinity({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n'] }] });
    assert.ok(notForNode(bare, notMe));
    assert.ok(
      notForNode(
        bare,
        affinity({ matchFields: [{ key: 'metadata.labels', operator: 'In', values: ['n'] }] }),
      ),
      'matchFields knows metadata.name only',
    );
    // An empty term matches nothing; so does an unknown operator.
    assert.ok(notForNode(bare, affinity({})));
    assert.ok(notForNode(inA, zone('Like', ['a'])));
    // The nodeSelector and the affinity must both hold.
    assert.ok(notForNode(inA, { ...zone('Exists'), nodeSelector: { disk: 'ssd' } }));
  });

  it('a pod bound to another node by spec.nodeName does not belong here', () => {
    assert.equal(notForNode(node({}), { containers: [], nodeName: 'n' }), undefined);
    assert.match(notForNode(node({}), { containers: [], nodeName: 'm' }) ?? '', /nodeName m/);
  });

  it('tolerations as core/v1 reads them: Exists, Equal values, an empty effect or key', () => {
    const taint = { key: 'k', value: 'v', effect: 'NoSchedule' };
    assert.ok(tolerates({ key: 'k', operator: 'Exists' }, taint));
    assert.ok(tolerates({ key: 'k', value: 'v' }, taint));
    assert.ok(!tolerates({ key: 'k', value: 'w' }, taint));
    assert.ok(!tolerates({ key: 'k', operator: 'Exists', effect: 'NoExecute' }, taint));
    assert.ok(tolerates({ operator: 'Exists' }, taint));
  });
});

/**
 * `shiftstack ccm-operator render` prints what the operator applies: the operator runs on the
 * Kubernetes emulator with an Infrastructure, a Proxy, a FeatureGate and an images ConfigMap that
 * each change the operands; every server-side apply body it sends is recorded at the API server;
 * then those same objects, as `kubectl get -o yaml` would save them, are given to `render` as
 * files, and what it prints must be exactly what the operator applied.
 *
 * One difference is allowed, and only one: the config hash the operator puts on each workload's
 * pod template (CONFIG_HASH_ANNOTATION). It is the hash of cloud-conf and ccm-trusted-ca as the
 * sync controllers wrote them, from the cloud config ConfigMap, the Proxy's trusted CA and the
 * system trust bundle on the operator's disk — none of which `render` reads, so it cannot know
 * it; the test checks that each workload the operator applied carries one, then compares without it.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { parse as parseYaml, parseAllDocuments, stringify } from 'yaml';
import {
  CLUSTER,
  IMAGES_CONFIGMAP,
  IMAGES_KEY,
  OPERATOR_NAMESPACE,
  operatorKinds,
} from '../../ccm-operator/api/index.ts';
import { CONFIG_HASH_ANNOTATION } from '../../ccm-operator/inventory/config-hash.ts';
import { OPERAND_LABEL } from '../../ccm-operator/operands/index.ts';
import { ccmOf, commandLine, find } from '../../ccm-operator/operands/testing/input.ts';
import { RELEASE, startOperatorEnv, type OperatorEnv } from '../../ccm-operator/testing/env.ts';
import { kinds, type KubernetesObject } from '../../kube/index.ts';
import { main } from '../main.ts';

const CLOUD_CONFIG = [
  '[Global]',
  'secret-name = openstack-credentials',
  'secret-namespace = kube-system',
  '',
].join('\n');

const IMAGES = {
  shiftstack: 'registry.example/shiftstack:equivalence',
  cloudControllerManagerOpenStack: 'registry.example/occm:equivalence',
  // Upstream's ConfigMap has keys no operand of ours uses: both sides ignore them.
  kubeRbacProxy: 'registry.example/kube-rbac-proxy:equivalence',
};

async function render(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    ['node', 'shiftstack', '--log-level', 'silent', 'ccm-operator', 'render', ...args],
    { out: (t) => out.push(t), err: (t) => err.push(t), signal: new AbortController().signal },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The identity of an object among the operands: kind, namespace, name. */
const idOf = (o: KubernetesObject) =>
  `${o.apiVersion}/${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;

/** A workload's pod template annotations, without the operator's config hash. */
function withoutConfigHash(o: KubernetesObject): KubernetesObject {
  if (o.kind !== 'Deployment' && o.kind !== 'DaemonSet') return o;
  const copy = structuredClone(o) as V1Deployment;
  const meta = copy.spec!.template.metadata!;
  assert.match(meta.annotations?.[CONFIG_HASH_ANNOTATION] ?? '', /^[0-9a-f]{64}$/, idOf(o));
  delete meta.annotations![CONFIG_HASH_ANNOTATION];
  if (Object.keys(meta.annotations!).length === 0) delete meta.annotations;
  return copy;
}

describe('shiftstack ccm-operator render = what the operator applies', () => {
  let env: OperatorEnv;
  before(async () => {
    env = await startOperatorEnv();
  });
  after(async () => env?.close());

  it('for one Infrastructure, Proxy, FeatureGate and images ConfigMap', async () => {
    const { api } = env;
    await env.setInfrastructure('OpenStack', {
      infrastructureName: 'equiv-x7k2p',
      controlPlaneTopology: 'SingleReplica',
      infrastructureTopology: 'SingleReplica',
      platformStatus: { type: 'OpenStack', openstack: { cloudName: 'openstack' } },
    });
    await env.setCloudConfig(CLOUD_CONFIG);
    const proxy = await api.create(operatorKinds.Proxy, {
      apiVersion: operatorKinds.Proxy.apiVersion,
      kind: 'Proxy',
      metadata: { name: CLUSTER },
      spec: { httpProxy: 'http://proxy.example:3128' },
    });
    await api.updateStatus(operatorKinds.Proxy, {
      ...proxy,
      status: { httpProxy: 'http://proxy.example:3128', noProxy: '.cluster.local,10.0.0.0/16' },
    });
    const featureGate = await api.create(operatorKinds.FeatureGate, {
      apiVersion: operatorKinds.FeatureGate.apiVersion,
      kind: 'FeatureGate',
      metadata: { name: CLUSTER },
      spec: { featureSet: 'TechPreviewNoUpgrade' },
    });
    await api.updateStatus(operatorKinds.FeatureGate, {
      ...featureGate,
      status: {
        featureGates: [
          { version: '4.17.0', enabled: [{ name: 'OnlyInTheOldRelease' }] },
          {
            version: RELEASE,
            enabled: [{ name: 'CloudDualStackNodeIPs' }, { name: 'AWSClusterHostedDNS' }],
            disabled: [{ name: 'GatewayAPI' }],
          },
        ],
      },
    });
    const imagesCm = await api.get(kinds.ConfigMap, {
      namespace: OPERATOR_NAMESPACE,
      name: IMAGES_CONFIGMAP,
    });
    await api.update(kinds.ConfigMap, { ...imagesCm, data: { [IMAGES_KEY]: JSON.stringify(IMAGES) } });

    // What the operator applies: every apply body of an operand, the last one per object.
    const applied = new Map<string, KubernetesObject>();
    env.kube.emulator.reactors.prepend('patch', '*', (action) => {
      if (action.patch?.type === 'apply') {
        const o = parseYaml(action.patch.body) as KubernetesObject;
        if (o.metadata?.labels?.[OPERAND_LABEL] !== undefined) applied.set(idOf(o), o);
      }
      return { handled: false };
    });
    env.startRollouts();
    // OCCM as upstream runs it: its command line carries the feature gates.
    await env.startOperator({ openstackCcm: 'upstream' });
    await env.waitForConditions(
      { Available: 'True', Progressing: 'False', Degraded: 'False', CloudControllerOwner: 'True' },
      'the operands applied and rolled out',
    );

    // The same objects, saved as `kubectl get -o yaml` saves them.
    const save = async (name: string, o: unknown) => {
      const path = join(env.dir, name);
      await writeFile(path, stringify(o));
      return path;
    };
    const r = await render([
      '--platform',
      'OpenStack',
      '--openstack-ccm',
      'upstream',
      '--infrastructure',
      await save('infrastructure.yaml', await api.get(operatorKinds.Infrastructure, { name: CLUSTER })),
      '--proxy',
      await save('proxy.yaml', await api.get(operatorKinds.Proxy, { name: CLUSTER })),
      '--feature-gate',
      await save('featuregate.yaml', await api.get(operatorKinds.FeatureGate, { name: CLUSTER })),
      '--release-version',
      RELEASE,
      '--images',
      await save(
        'images.yaml',
        await api.get(kinds.ConfigMap, { namespace: OPERATOR_NAMESPACE, name: IMAGES_CONFIGMAP }),
      ),
    ]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /key "kubeRbacProxy" is not an image any operand uses/);
    const printed = parseAllDocuments(r.out).map((d) => d.toJS() as KubernetesObject);

    // Every input reached the manifests, so the comparison below is not of two sets of defaults.
    const ccm = find<V1Deployment>(printed, 'Deployment', 'openstack-cloud-controller-manager');
    assert.equal(ccm.spec?.replicas, 1);
    assert.ok(!printed.some((o) => o.kind === 'PodDisruptionBudget'), 'SingleReplica: no budget');
    const container = ccmOf(ccm);
    assert.equal(container.image, IMAGES.cloudControllerManagerOpenStack);
    assert.match(
      commandLine(container),
      /--feature-gates=AWSClusterHostedDNS=true,CloudDualStackNodeIPs=true/,
    );
    assert.doesNotMatch(commandLine(container), /OnlyInTheOldRelease/);
    assert.equal(container.env?.find((e) => e.name === 'NO_PROXY')?.value, '.cluster.local,10.0.0.0/16');
    assert.equal(container.env?.find((e) => e.name === 'OCP_INFRASTRUCTURE_NAME')?.value, 'equiv-x7k2p');

    assert.deepEqual([...applied.keys()].sort(), printed.map(idOf).sort(), 'the same objects');
    for (const o of printed) {
      const byOperator = withoutConfigHash(applied.get(idOf(o))!);
      assert.deepEqual(byOperator, o, idOf(o));
    }
  });
});

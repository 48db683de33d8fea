/**
 * deploy/ccm-operator's RBAC, derived from what the operator does: it runs as its ServiceAccount
 * against the Kubernetes emulator, which authorizes every call by the shipped Roles and bindings
 * and records it, through what it does in a cluster (the cloud config and trust bundle synced,
 * OpenStack's CCM applied, a switch to AWS with its admission policies and the prune of
 * OpenStack's, the hand-back to kube-controller-manager, Events, leader election). Nothing it
 * calls may be refused.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { isAlreadyExists, type KubernetesObject } from '../kube/index.ts';
import { kubeconfigText } from '../sim/kube/kubeconfig.ts';
import { eventually } from '../sim/kube/testing/harness.ts';
import { startOperatorEnv, type OperatorEnv } from './testing/env.ts';

const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy', 'ccm-operator');
const NAMESPACE = 'openshift-cloud-controller-manager-operator';
const SA = 'cluster-cloud-controller-manager';
const USER = `system:serviceaccount:${NAMESPACE}:${SA}`;

/** deploy/ccm-operator as `kubectl apply -k` sends it. */
async function manifests(): Promise<(KubernetesObject & Record<string, unknown>)[]> {
  const k = parse(await readFile(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  const out: (KubernetesObject & Record<string, unknown>)[] = [];
  for (const file of k.resources) {
    for (const doc of parseAllDocuments(await readFile(join(DEPLOY, file), 'utf8'))) {
      out.push(doc.toJS() as KubernetesObject & Record<string, unknown>);
    }
  }
  return out;
}

describe('deploy/ccm-operator RBAC: the operator as its ServiceAccount, every call authorized by the shipped rules', () => {
  let env: OperatorEnv;

  before(async () => {
    env = await startOperatorEnv();
    for (const obj of await manifests()) {
      if (obj.kind === 'Deployment') continue;
      try {
        await env.api.create(await env.api.discover(obj.apiVersion!, obj.kind!), obj);
      } catch (err) {
        // The env made the CRDs and namespaces already.
        if (!isAlreadyExists(err)) throw err;
      }
    }
  });
  after(async () => {
    await env?.close();
  });

  it('syncs, deploys, switches platform and hands back without one refused call', async () => {
    const kube = env.kube.emulator;
    const token = kube.auth.issueServiceAccountToken(NAMESPACE, SA);
    const kubeconfig = join(env.dir, 'operator-sa.kubeconfig');
    await writeFile(
      kubeconfig,
      kubeconfigText({ server: env.kube.url, token, ...(env.kube.caPem ? { caPem: env.kube.caPem } : {}) }),
    );
    await env.setInfrastructure('OpenStack');
    await env.setCloudConfig('[Global]\nregion = r1\n', { 'ca-bundle.pem': 'not a certificate' });
    await env.setProxyTrustedCA('user-ca-bundle', 'not a certificate either');
    env.startRollouts();
    await env.startOperator({ kubeconfig });
    await env.waitForConditions({ Available: 'True', Progressing: 'False', CloudControllerOwner: 'True' });

    await env.setInfrastructure('AWS', { platformStatus: { type: 'AWS', aws: { region: 'us-east-1' } } });
    await eventually(
      async () =>
        (await env.deployments()).map((d) => d.metadata?.name).join(',') === 'aws-cloud-controller-manager',
      { timeoutMs: 20_000, what: 'the AWS CCM alone' },
    );
    await env.waitForConditions({ Available: 'True', Progressing: 'False', Degraded: 'False' });

    await env.setCloudControllerOwner('True');
    await env.waitForConditions({ CloudControllerOwner: 'False', Available: 'True' });
    assert.deepEqual(await env.deployments(), []);

    const calls = kube.auth.audit.filter((e) => e.user === USER);
    assert.ok(calls.length > 0, 'the operator ran as its ServiceAccount');
    const refused = calls.filter((e) => !e.allowed);
    assert.deepEqual(
      refused.map(
        (e) =>
          `${e.verb} ${e.apiGroup || 'core'}/${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.namespace ?? ''}/${e.name ?? ''}`,
      ),
      [],
    );
  });
});

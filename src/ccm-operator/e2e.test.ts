/**
 * The operator end to end on the Kubernetes emulator: the cloud config synced and transformed,
 * the operands applied server-side and kept as applied, a platform change, the in-tree handshake
 * both ways, the trust bundle, and the ClusterOperator reporting each. Operands come from the
 * platform renderers (renderOperands); the Deployment controller's rollout is played by the env.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isNotFound, kinds, type KubernetesObject } from '../kube/index.ts';
import { SkewedClock } from '../lib/testing/fake-clock.ts';
import { settled } from '../kube/testing/settle.ts';
import { OPERANDS_CONTROLLER } from './controllers/operands.ts';
import { eventually } from '../sim/kube/testing/harness.ts';
import {
  CLOUD_CONF_KEY,
  CLOUD_CONF_NAME,
  CLUSTER_OPERATOR_NAME,
  Conditions,
  operatorKinds,
  EventReasons,
  MANAGED_NAMESPACE,
  OPENSHIFT_CONFIG_NAMESPACE,
  TRUSTED_CA_KEY,
  TRUSTED_CA_NAME,
} from './api/index.ts';
import { OPERATOR_FIELD_MANAGER } from './settings.ts';
import {
  PLATFORM_LABEL,
  PodDisruptionBudget,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from './inventory/kinds.ts';
import { CONFIG_HASH_ANNOTATION } from './inventory/config-hash.ts';
import { renderOperands } from './operands/index.ts';
import type { RenderInput } from './operands/types.ts';
import {
  CLOUD_PROVIDER_CONFIG,
  RELEASE,
  TEST_IMAGES,
  startOperatorEnv,
  testCA,
  type OperatorEnv,
  type RunningOperator,
} from './testing/env.ts';

const LEGACY = [
  '[Global]',
  'secret-name = openstack-credentials',
  'secret-namespace = kube-system',
  'region = regionOne',
  '',
  '[BlockStorage]',
  'bs-version = v3',
  '',
  '[LoadBalancer]',
  'use-octavia = True',
  'floating-network-id = 3f1c0a2e',
  '',
].join('\n');

const SYNCED = [
  '[Global]',
  'region = regionOne',
  'use-clouds = true',
  'clouds-file = /etc/openstack/secret/clouds.yaml',
  'cloud = openstack',
  '',
  '[LoadBalancer]',
  'floating-network-id = 3f1c0a2e',
  'max-shared-lb = 1',
  'manage-security-groups = true',
  '',
].join('\n');

const OPENSTACK_CCM = 'openstack-cloud-controller-manager';

describe('ccm-operator on the Kubernetes emulator', () => {
  let env: OperatorEnv;
  let op: RunningOperator | undefined;

  before(async () => {
    env = await startOperatorEnv();
  });
  after(async () => {
    await env?.close();
  });

  const stopOperator = async () => {
    await op?.stop();
    op = undefined;
  };

  it('(a) OpenStack: cloud-conf transformed, operands applied, ClusterOperator Available', async () => {
    await env.setInfrastructure('OpenStack');
    await env.setCloudConfig(LEGACY);
    op = await env.startOperator();

    const conf = await eventually(() => env.configMap(MANAGED_NAMESPACE, CLOUD_CONF_NAME), {
      timeoutMs: 20_000,
      what: 'cloud-conf',
    });
    assert.equal(conf.data?.[CLOUD_CONF_KEY], SYNCED);
    assert.equal(conf.data?.[CLOUD_PROVIDER_CONFIG], undefined);

    const deployment = await eventually(
      async () => (await env.deployments()).find((d) => d.metadata?.name === OPENSTACK_CCM),
      { timeoutMs: 20_000, what: 'the OpenStack CCM Deployment' },
    );
    assert.equal(deployment.metadata?.labels?.[PLATFORM_LABEL], 'OpenStack');
    assert.equal(deployment.spec?.template.spec?.containers[0]?.image, TEST_IMAGES.shiftstack);
    assert.ok(
      deployment.metadata?.managedFields?.some(
        (f) => f.manager === OPERATOR_FIELD_MANAGER && f.operation === 'Apply',
      ),
      'applied server-side with the operator’s field manager',
    );
    assert.match(
      deployment.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION] ?? '',
      /^[0-9a-f]{64}$/,
    );
    const trust = await eventually(() => env.configMap(MANAGED_NAMESPACE, TRUSTED_CA_NAME), {
      what: 'ccm-trusted-ca',
    });
    assert.match(trust.data?.[TRUSTED_CA_KEY] ?? '', /BEGIN CERTIFICATE/);

    // Not Available until the CCM has rolled out.
    await env.waitForConditions({ Progressing: 'True', Degraded: 'False' }, 'progressing while rolling out');
    assert.notEqual((await env.condition(Conditions.Available))?.status, 'True');
    await env.rollOut();
    const co = await env.waitForConditions({
      Available: 'True',
      Progressing: 'False',
      Degraded: 'False',
      Upgradeable: 'True',
      CloudConfigControllerAvailable: 'True',
      CloudConfigControllerDegraded: 'False',
      TrustedCABundleControllerControllerAvailable: 'True',
      TrustedCABundleControllerControllerDegraded: 'False',
      CloudControllerOwner: 'True',
    });
    // From here on, the Deployment controller's part is played throughout.
    env.startRollouts();
    const available = co.status?.conditions?.find((c) => c.type === 'Available');
    assert.equal(available?.reason, 'AsExpected');
    assert.equal(available?.message, `Cluster Cloud Controller Manager Operator is available at ${RELEASE}`);
    assert.deepEqual(co.status?.versions, [{ name: 'operator', version: RELEASE }]);
    assert.deepEqual(
      co.status?.relatedObjects?.map((r) => `${r.resource}/${r.name}`),
      [
        'namespaces/openshift-cloud-controller-manager-operator',
        'clusteroperators/cloud-controller-manager',
        'namespaces/openshift-cloud-controller-manager',
      ],
    );
  });

  it('(b) a bad cloud config: Degraded and Upgradeable=False with the fix, an Event, the old cloud-conf kept; fixed, it recovers', async () => {
    const before = await env.configMap(MANAGED_NAMESPACE, CLOUD_CONF_NAME);
    const hashBefore = (await env.deployments()).find((x) => x.metadata?.name === OPENSTACK_CCM)?.spec
      ?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION];
    assert.ok(hashBefore);
    await env.setCloudConfig(LEGACY.replace('secret-namespace = kube-system', 'secret-namespace = other'));
    const co = await env.waitForConditions({
      CloudConfigControllerDegraded: 'True',
      Degraded: 'True',
      Upgradeable: 'False',
    });
    const degraded = co.status?.conditions?.find((c) => c.type === Conditions.CloudConfigControllerDegraded);
    assert.match(degraded?.message ?? '', /secret-namespace/);
    assert.match(degraded?.message ?? '', /Fix: /);
    assert.match(
      co.status?.conditions?.find((c) => c.type === 'Upgradeable')?.message ?? '',
      /secret-namespace/,
    );
    // The CCM keeps running on the last good config.
    assert.equal(co.status?.conditions?.find((c) => c.type === 'Available')?.status, 'True');
    const events = await eventually(
      async () => {
        const e = await env.events(CLOUD_PROVIDER_CONFIG, OPENSHIFT_CONFIG_NAMESPACE);
        return e.some((x) => x.reason === EventReasons.CloudConfigInvalid && x.type === 'Warning')
          ? e
          : undefined;
      },
      { what: 'the CloudConfigInvalid Event' },
    );
    assert.ok(events.length > 0);
    const kept = await env.configMap(MANAGED_NAMESPACE, CLOUD_CONF_NAME);
    assert.equal(kept?.data?.[CLOUD_CONF_KEY], SYNCED);
    assert.equal(kept?.metadata?.resourceVersion, before?.metadata?.resourceVersion);

    await env.setCloudConfig(LEGACY.replace('region = regionOne', 'region = regionTwo'));
    await eventually(
      async () =>
        (await env.configMap(MANAGED_NAMESPACE, CLOUD_CONF_NAME))?.data?.[CLOUD_CONF_KEY] ===
        SYNCED.replace('regionOne', 'regionTwo'),
      { timeoutMs: 20_000, what: 'the fixed config synced' },
    );
    // A new config rolls the CCM: its pod template's hash moved.
    await eventually(
      async () => {
        const d = (await env.deployments()).find((x) => x.metadata?.name === OPENSTACK_CCM);
        const now = d?.spec?.template.metadata?.annotations?.[CONFIG_HASH_ANNOTATION];
        return now !== undefined && now !== hashBefore;
      },
      { timeoutMs: 20_000, what: 'the CCM rolled for the new config' },
    );
    await env.waitForConditions({
      CloudConfigControllerDegraded: 'False',
      Degraded: 'False',
      Upgradeable: 'True',
      Available: 'True',
    });
  });

  it('(c) drift: an edited or deleted operand is put back as applied', async () => {
    // Quiet first, so that only the edit itself can wake the operator.
    await settled(op!.manager, OPERANDS_CONTROLLER, [
      [operatorKinds.ClusterOperator, { name: CLUSTER_OPERATOR_NAME }],
      [kinds.ConfigMap, { namespace: MANAGED_NAMESPACE, name: CLOUD_CONF_NAME }],
    ]);
    const [d] = (await env.deployments()).filter((x) => x.metadata?.name === OPENSTACK_CCM);
    assert.ok(d);
    await env.api.patch(
      kinds.Deployment,
      { namespace: MANAGED_NAMESPACE, name: OPENSTACK_CCM },
      'merge',
      {
        spec: {
          replicas: 5,
          template: { spec: { containers: [{ name: 'cloud-controller-manager', image: 'evil:1' }] } },
        },
      },
      { fieldManager: 'kubectl-edit' },
    );
    await eventually(
      async () => {
        const cur = (await env.deployments()).find((x) => x.metadata?.name === OPENSTACK_CCM);
        return (
          cur?.spec?.replicas === 2 && cur.spec.template.spec?.containers[0]?.image === TEST_IMAGES.shiftstack
        );
      },
      { timeoutMs: 20_000, what: 'the Deployment put back' },
    );
    const role = 'cloud-controller-manager';
    await env.api.delete(kinds.ClusterRole, { name: role });
    await eventually(
      async () => {
        try {
          return (
            (await env.api.get(kinds.ClusterRole, { name: role })).metadata?.labels?.[PLATFORM_LABEL] ===
            'shared'
          );
        } catch {
          return false;
        }
      },
      { timeoutMs: 20_000, what: 'the ClusterRole recreated' },
    );
    await env.waitForConditions({ Available: 'True', Progressing: 'False', Degraded: 'False' });
  });

  const exists = async (get: () => Promise<KubernetesObject>) => {
    try {
      return await get();
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  it('(d) platform switched: the previous platform’s operands removed, the new one’s applied, shared and foreign objects kept', async () => {
    const sa = await env.api.get(kinds.ServiceAccount, {
      namespace: MANAGED_NAMESPACE,
      name: 'cloud-controller-manager',
    });
    // Someone else's object carrying the label: not the operator's to remove.
    await env.api.create(kinds.ConfigMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        namespace: MANAGED_NAMESPACE,
        name: 'copied-label',
        labels: { [PLATFORM_LABEL]: 'OpenStack' },
      },
    });
    await env.setInfrastructure('AWS', { platformStatus: { type: 'AWS', aws: { region: 'us-east-1' } } });
    await eventually(
      async () => {
        const names = (await env.deployments()).map((d) => d.metadata?.name).sort();
        return names.join(',') === 'aws-cloud-controller-manager';
      },
      { timeoutMs: 20_000, what: 'only the AWS CCM Deployment' },
    );
    const aws = (await env.deployments())[0]!;
    assert.equal(aws.spec?.template.spec?.containers[0]?.image, TEST_IMAGES.cloudControllerManagerAWS);
    assert.equal(aws.metadata?.labels?.[PLATFORM_LABEL], 'AWS');
    const pdb = { namespace: MANAGED_NAMESPACE, name: OPENSTACK_CCM };
    await eventually(async () => !(await exists(() => env.api.get(PodDisruptionBudget, pdb))), {
      what: `PodDisruptionBudget ${OPENSTACK_CCM} removed`,
    });
    const delegator = 'cloud-controller-manager:shiftstack-auth-delegator';
    assert.equal(await exists(() => env.api.get(kinds.ClusterRoleBinding, { name: delegator })), undefined);
    assert.ok(
      await env.api.get(PodDisruptionBudget, {
        namespace: MANAGED_NAMESPACE,
        name: 'aws-cloud-controller-manager',
      }),
    );
    const vap = 'openshift-cloud-controller-manager-cloud-provider-aws';
    assert.equal(
      (await env.api.get(ValidatingAdmissionPolicy, { name: vap })).metadata?.labels?.[PLATFORM_LABEL],
      'AWS',
    );
    assert.ok(await env.api.get(ValidatingAdmissionPolicyBinding, { name: vap }));
    const keptSa = await env.api.get(kinds.ServiceAccount, {
      namespace: MANAGED_NAMESPACE,
      name: 'cloud-controller-manager',
    });
    assert.equal(keptSa.metadata?.uid, sa.metadata?.uid, 'the shared ServiceAccount stays');
    assert.ok(await env.configMap(MANAGED_NAMESPACE, 'copied-label'), 'a copied label does not make it ours');
    const removed = await env.events('cloud-controller-manager');
    assert.ok(
      removed.some(
        (e) =>
          e.reason === EventReasons.OperandsRemoved &&
          /Deployment openshift-cloud-controller-manager\/openstack-cloud-controller-manager/.test(
            e.message ?? '',
          ),
      ),
      'an Event names what was removed',
    );
    await env.waitForConditions({ Available: 'True', Progressing: 'False', Degraded: 'False' });

    await env.setInfrastructure('OpenStack');
    await eventually(
      async () => (await env.deployments()).map((d) => d.metadata?.name).join(',') === OPENSTACK_CCM,
      { timeoutMs: 20_000, what: 'back to OpenStack' },
    );
    await env.waitForConditions({ Available: 'True', Progressing: 'False' });
  });

  it('(e) the CloudControllerOwner gate: nothing deployed while kube-controller-manager runs the cloud loops, deployed once it hands them over, removed when they are handed back', async () => {
    await env.setCloudControllerOwner('True');
    await env.waitForConditions({ CloudControllerOwner: 'False', Available: 'True', Degraded: 'False' });
    assert.deepEqual(await env.deployments(), [], 'the hand-back removes the CCM before reporting it');
    assert.equal(
      await exists(() => env.api.get(kinds.ClusterRole, { name: 'cloud-controller-manager' })),
      undefined,
    );
    assert.ok(await env.api.get(kinds.Namespace, { name: MANAGED_NAMESPACE }), 'the namespace stays');
    assert.ok(await env.configMap(MANAGED_NAMESPACE, CLOUD_CONF_NAME), 'the synced config stays');
    assert.match(
      (await env.condition(Conditions.CloudControllerOwner))?.message ?? '',
      /CloudControllerOwner=True/,
    );
    const handedBack = await env.events('cloud-controller-manager');
    assert.ok(handedBack.some((e) => e.reason === EventReasons.CloudControllerOwnerChanged));

    // A restart while the in-tree side owns the loops deploys nothing either.
    await stopOperator();
    op = await env.startOperator();
    await env.setCloudControllerOwner('Unknown');
    await eventually(
      async () =>
        /CloudControllerOwner=Unknown/.test(
          (await env.condition(Conditions.CloudControllerOwner))?.message ?? '',
        ),
      { timeoutMs: 20_000, what: 'Unknown counted as the in-tree side’s' },
    );
    assert.equal((await env.condition(Conditions.CloudControllerOwner))?.status, 'False');
    assert.deepEqual(await env.deployments(), []);

    await env.setCloudControllerOwner('False');
    await eventually(
      async () => (await env.deployments()).map((d) => d.metadata?.name).join(',') === OPENSTACK_CCM,
      { timeoutMs: 20_000, what: 'the CCM deployed after the handover' },
    );
    await env.waitForConditions({ CloudControllerOwner: 'True', Available: 'True', Progressing: 'False' });

    // No KubeControllerManager at all (plain Kubernetes): nothing holds the CCM back.
    await env.setCloudControllerOwner(undefined);
    await env.waitForConditions({ CloudControllerOwner: 'True', Available: 'True' });
    assert.equal((await env.deployments()).length, 1);
  });

  it('(f) the trust bundle: the Proxy’s CA and the system bundle, an invalid cloud config CA left out with a Warning', async () => {
    const proxyCA = testCA('proxy-ca');
    await env.setProxyTrustedCA('user-ca-bundle', proxyCA);
    await env.setCloudConfig(LEGACY.replace('region = regionOne', 'region = regionTwo'), {
      'ca-bundle.pem': 'not a certificate',
    });
    const bundle = await eventually(
      async () => {
        const b = (await env.configMap(MANAGED_NAMESPACE, TRUSTED_CA_NAME))?.data?.[TRUSTED_CA_KEY];
        return b?.startsWith(proxyCA) ? b : undefined;
      },
      { timeoutMs: 20_000, what: 'the Proxy CA in the bundle' },
    );
    const { readFile } = await import('node:fs/promises');
    assert.equal(bundle, `${proxyCA}\n${await readFile(env.systemBundlePath, 'utf8')}`);
    assert.doesNotMatch(bundle, /not a certificate/);
    await eventually(
      async () =>
        (await env.events(CLOUD_CONF_NAME, MANAGED_NAMESPACE)).some(
          (e) =>
            e.type === 'Warning' &&
            e.reason === EventReasons.TrustedCAInvalid &&
            /ca-bundle\.pem/.test(e.message ?? ''),
        ),
      { what: 'the TrustedCAInvalid Warning on cloud-conf' },
    );
    await env.waitForConditions({
      TrustedCABundleControllerControllerAvailable: 'True',
      TrustedCABundleControllerControllerDegraded: 'False',
    });

    // Fixed: the cloud's CA goes in front.
    const cloudCA = testCA('cloud-ca');
    await env.setCloudConfig(LEGACY, { 'ca-bundle.pem': cloudCA });
    await eventually(
      async () =>
        (await env.configMap(MANAGED_NAMESPACE, TRUSTED_CA_NAME))?.data?.[TRUSTED_CA_KEY]?.startsWith(
          `${cloudCA}\n${proxyCA}`,
        ),
      { timeoutMs: 20_000, what: 'the cloud CA in the bundle' },
    );
  });

  it('transient failures degrade only after 2 m 30 s of them, on the manager’s clock', async () => {
    await stopOperator();
    const clock = new SkewedClock();
    // An operand the API server refuses: every apply fails, as during an outage.
    const render = (input: RenderInput) => {
      const out = renderOperands(input);
      return {
        objects: [
          ...out.objects,
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { namespace: MANAGED_NAMESPACE, name: 'refused' },
            spec: {
              selector: { matchLabels: { app: 'a' } },
              template: {
                metadata: { labels: { app: 'b' } },
                spec: { containers: [{ name: 'c', image: 'i' }] },
              },
            },
          },
        ],
      };
    };
    op = await env.startOperator({ clock, render });
    await eventually(
      async () =>
        (await env.events('refused', MANAGED_NAMESPACE)).filter(
          (e) => e.reason === EventReasons.OperandFailed,
        ).length > 0,
      { timeoutMs: 20_000, what: 'a failed apply' },
    );
    assert.equal((await env.condition('Degraded'))?.status, 'False', 'not Degraded on the first failures');
    clock.jump(150_000);
    const co = await env.waitForConditions({ Degraded: 'True', Upgradeable: 'False' });
    assert.match(
      co.status?.conditions?.find((c) => c.type === 'Degraded')?.message ?? '',
      /refused|selector/,
    );
    assert.match(
      co.status?.conditions?.find((c) => c.type === 'Degraded')?.message ?? '',
      /failing for 150 s/,
    );

    await stopOperator();
    op = await env.startOperator();
    await env.waitForConditions({ Degraded: 'False', Available: 'True' });
  });
});

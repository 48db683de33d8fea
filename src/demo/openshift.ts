/**
 * The OpenShift side of the demo's cluster, as the installer and the operators the emulated world
 * lacks leave it for `shiftstack ccm-operator`:
 *
 * - the installer: the config CRDs (deploy/ccm-operator/crds, which a real OpenShift already has),
 *   Infrastructure `cluster` on platform OpenStack with the cloud config ConfigMap
 *   `openshift-config/cloud-provider-config` in the legacy in-tree form, and the images ConfigMap of
 *   the release payload;
 * - the cloud credential operator: the CCM's clouds.yaml in `openstack-cloud-credentials`;
 * - the kube-controller-manager operator: KubeControllerManager `cluster` saying the in-tree
 *   provider owns the cloud loops (`CloudControllerOwner=True`). Sending it external is the
 *   annotation the in-tree stand-in reads (src/demo/intree/cloud-owner.ts), which then sets the
 *   condition False, as KCMO does once KCM runs with `--cloud-provider=external`.
 */
import { isAlreadyExists, kinds, type KubeClient, type ResourceType } from '../kube/index.ts';
import {
  ALL_KINDS,
  CLUSTER,
  Conditions,
  crdFiles,
  IMAGES_CONFIGMAP,
  IMAGES_KEY,
  MANAGED_NAMESPACE,
  OPENSHIFT_CONFIG_NAMESPACE,
  OPERATOR_NAMESPACE,
  operatorKinds,
} from '../ccm-operator/api/index.ts';
import { DEFAULT_IMAGES } from '../ccm-operator/operands/images.ts';
import { CREDENTIALS_SECRET } from '../ccm-operator/operands/openstack.ts';
import { CLOUD_NAME } from '../ccm-operator/cloud-config/transform.ts';
import { CLOUD_PROVIDER_ANNOTATION } from './intree/cloud-owner.ts';
import { installCrds } from './world.ts';

export const CLOUD_PROVIDER_CONFIG = { namespace: OPENSHIFT_CONFIG_NAMESPACE, name: 'cloud-provider-config' };
const CLOUD_PROVIDER_CONFIG_KEY = 'config';
/** The image the release payload names for `shiftstack ccm`: what the workload runner runs. */
export const SHIFTSTACK_IMAGE = DEFAULT_IMAGES.shiftstack;

export interface InstallOptions {
  /** Infrastructure `status.infrastructureName`: the CCM's `--cluster-name`. */
  infrastructureName: string;
  /** The external network the load balancers' floating IPs come from. */
  floatingNetworkId: string | undefined;
  /** The demo project's clouds.yaml, with one cloud named `openstack`. */
  cloudsYaml: (cloudName: string) => string;
  signal?: AbortSignal;
}

export async function installOpenShiftConfig(api: KubeClient, opts: InstallOptions): Promise<void> {
  const { signal } = opts;
  await installCrds(api, crdFiles(), ALL_KINDS, signal);
  for (const name of [OPENSHIFT_CONFIG_NAMESPACE, OPERATOR_NAMESPACE, MANAGED_NAMESPACE]) {
    await created(
      api.create(kinds.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { signal }),
    );
  }
  // What openshift-install writes for OpenStack: the in-tree provider's form, credentials by Secret.
  const conf =
    '[Global]\nsecret-name = openstack-credentials\nsecret-namespace = kube-system\n\n' +
    `[LoadBalancer]\n${opts.floatingNetworkId ? `floating-network-id = ${opts.floatingNetworkId}\n` : ''}`;
  await created(
    api.create(
      kinds.ConfigMap,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { ...CLOUD_PROVIDER_CONFIG },
        data: { [CLOUD_PROVIDER_CONFIG_KEY]: conf },
      },
      { signal },
    ),
  );
  await created(
    api.create(
      kinds.ConfigMap,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: OPERATOR_NAMESPACE, name: IMAGES_CONFIGMAP },
        data: { [IMAGES_KEY]: JSON.stringify({ shiftstack: SHIFTSTACK_IMAGE }, null, 2) },
      },
      { signal },
    ),
  );
  await created(
    api.create(
      kinds.Secret,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { namespace: MANAGED_NAMESPACE, name: CREDENTIALS_SECRET },
        stringData: { 'clouds.yaml': opts.cloudsYaml(CLOUD_NAME) },
      },
      { signal },
    ),
  );
  await withStatus(
    api,
    operatorKinds.Infrastructure,
    {
      spec: {
        cloudConfig: { name: CLOUD_PROVIDER_CONFIG.name, key: CLOUD_PROVIDER_CONFIG_KEY },
        platformSpec: { type: 'OpenStack' },
      },
    },
    {
      infrastructureName: opts.infrastructureName,
      controlPlaneTopology: 'SingleReplica',
      infrastructureTopology: 'SingleReplica',
      platform: 'OpenStack',
      platformStatus: { type: 'OpenStack' },
    },
    signal,
  );
  await withStatus(
    api,
    operatorKinds.KubeControllerManager,
    { spec: { managementState: 'Managed' } },
    {
      conditions: [
        {
          type: Conditions.CloudControllerOwner,
          status: 'True',
          reason: 'InTreeCloudProvider',
          message: 'kube-controller-manager runs the in-tree OpenStack provider',
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      ],
    },
    signal,
  );
}

/** KCMO's decision to run kube-controller-manager with `--cloud-provider=external`. */
export async function sendKubeControllerManagerExternal(api: KubeClient, signal: AbortSignal): Promise<void> {
  await api.patch(
    operatorKinds.KubeControllerManager,
    { name: CLUSTER },
    'merge',
    { metadata: { annotations: { [CLOUD_PROVIDER_ANNOTATION]: 'external' } } },
    { signal },
  );
}

async function withStatus(
  api: KubeClient,
  type: ResourceType,
  body: { spec: Record<string, unknown> },
  status: Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<void> {
  await created(
    api.create(
      type,
      { apiVersion: type.apiVersion, kind: type.kind, metadata: { name: CLUSTER }, ...body },
      { signal },
    ),
  );
  await api.patch(type, { name: CLUSTER }, 'merge', { status }, { subresource: 'status', signal });
}

async function created(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

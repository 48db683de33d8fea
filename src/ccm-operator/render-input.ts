/**
 * The renderers' input from OpenShift's objects (upstream CCCMO's `config.ComposeConfig`): the
 * platform and its status block, the cluster's name in the cloud, the topology, the feature gates
 * enabled at this release, the proxy in effect, the images. The one path from those objects to a
 * RenderInput: the operator gives it what it reads from the API server, `shiftstack ccm-operator
 * render` what it reads from files, so for the same objects `render` prints what the operator
 * applies (src/cli/commands/ccm-operator-render-equivalence.test.ts holds them to it).
 */
import type { FeatureGate, Infrastructure, Proxy } from './api/index.ts';
import type { Images } from './images.ts';
import {
  OPERAND_PLATFORMS,
  type OpenStackCcm,
  type OperandPlatform,
  type OperandProxy,
  type OperandTls,
  type RenderInput,
} from './operands/types.ts';

/** Infrastructure types upstream's operator deploys nothing for, and reports Available. */
export const NO_OPERAND_PLATFORMS = ['None', 'External'] as const;

export function isOperandPlatform(type: string | undefined): type is OperandPlatform {
  return (OPERAND_PLATFORMS as readonly (string | undefined)[]).includes(type);
}

/** The platform of the Infrastructure, when it is one with operands (else nothing is deployed). */
export function operandPlatform(infrastructure: Infrastructure | undefined): OperandPlatform | undefined {
  const type = infrastructure?.status?.platformStatus?.type;
  return isOperandPlatform(type) ? type : undefined;
}

/**
 * The cluster name without one in the Infrastructure: OCCM's own default, so the load balancers
 * a CCM made before keep their names.
 */
export const DEFAULT_INFRASTRUCTURE_NAME = 'kubernetes';

/**
 * The gates on for this release: the FeatureGate status entry of `releaseVersion` (the one entry
 * when there is only one, as on a cluster where the version is not told apart), else what a
 * CustomNoUpgrade spec turns on. Sorted, so a reordering changes nothing.
 */
export function enabledFeatureGates(featureGate: FeatureGate | undefined, releaseVersion: string): string[] {
  const entries = featureGate?.status?.featureGates ?? [];
  const entry =
    entries.find((e) => e.version === releaseVersion) ?? (entries.length === 1 ? entries[0] : undefined);
  if (entry) return (entry.enabled ?? []).map((g) => g.name).sort();
  if (featureGate?.spec?.featureSet === 'CustomNoUpgrade')
    return [...(featureGate.spec.customNoUpgrade?.enabled ?? [])].sort();
  return [];
}

/** The proxy upstream passes to the operands: what the Proxy's status says is in effect, not its spec. */
export function proxyInEffect(proxy: Proxy | undefined): OperandProxy | undefined {
  const s = proxy?.status;
  if (!s?.httpProxy && !s?.httpsProxy && !s?.noProxy) return undefined;
  return {
    ...(s.httpProxy ? { httpProxy: s.httpProxy } : {}),
    ...(s.httpsProxy ? { httpsProxy: s.httpsProxy } : {}),
    ...(s.noProxy ? { noProxy: s.noProxy } : {}),
  };
}

export interface RenderInputSources {
  platform: OperandPlatform;
  /** Infrastructure `cluster`; without one, DEFAULT_INFRASTRUCTURE_NAME and a highly available control plane. */
  infrastructure: Infrastructure | undefined;
  proxy: Proxy | undefined;
  featureGate: FeatureGate | undefined;
  /** The images, over the defaults (images.ts). */
  images: Images;
  openstackCcm: OpenStackCcm;
  namespace: string;
  /** The release whose FeatureGate status entry applies (RELEASE_VERSION). */
  releaseVersion: string;
  tls?: OperandTls;
}

export function renderInput(s: RenderInputSources): RenderInput {
  const status = s.infrastructure?.status ?? {};
  const proxy = proxyInEffect(s.proxy);
  return {
    platform: s.platform,
    platformStatus: { ...(status.platformStatus ?? { type: s.platform }) },
    infrastructureName: status.infrastructureName || DEFAULT_INFRASTRUCTURE_NAME,
    images: s.images,
    openstackCcm: s.openstackCcm,
    namespace: s.namespace,
    singleReplica: status.controlPlaneTopology === 'SingleReplica',
    featureGates: enabledFeatureGates(s.featureGate, s.releaseVersion),
    ...(proxy ? { proxy } : {}),
    ...(s.tls ? { tls: s.tls } : {}),
  };
}

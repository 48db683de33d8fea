/**
 * The renderers' input read off the cluster (upstream CCCMO's `config.ComposeConfig`): the
 * platform and its status block, the cluster's name in the cloud, the topology, the enabled
 * feature gates of this release, the proxy, the images. A pure function, so the operator and
 * `shiftstack ccm-operator render` give the renderers the same thing for the same objects.
 */
import type { FeatureGate, Infrastructure, Proxy } from './api/index.ts';
import {
  OPERAND_PLATFORMS,
  type OpenStackCcm,
  type OperandPlatform,
  type RenderInput,
} from './operands/types.ts';

/** The platform of the Infrastructure, when it is one with operands (else nothing is deployed). */
export function operandPlatform(infrastructure: Infrastructure | undefined): OperandPlatform | undefined {
  const type = infrastructure?.status?.platformStatus?.type;
  return (OPERAND_PLATFORMS as readonly string[]).includes(type ?? '')
    ? (type as OperandPlatform)
    : undefined;
}

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

export interface RenderInputSources {
  infrastructure: Infrastructure;
  platform: OperandPlatform;
  proxy: Proxy | undefined;
  featureGate: FeatureGate | undefined;
  images: Readonly<Record<string, string>>;
  openstackCcm: OpenStackCcm;
  namespace: string;
  releaseVersion: string;
}

export function renderInput(s: RenderInputSources): RenderInput {
  const status = s.infrastructure.status ?? {};
  const p = s.proxy?.status;
  const proxy = {
    ...(p?.httpProxy ? { httpProxy: p.httpProxy } : {}),
    ...(p?.httpsProxy ? { httpsProxy: p.httpsProxy } : {}),
    ...(p?.noProxy ? { noProxy: p.noProxy } : {}),
  };
  return {
    platform: s.platform,
    platformStatus: { ...status.platformStatus },
    infrastructureName: status.infrastructureName ?? '',
    images: s.images,
    openstackCcm: s.openstackCcm,
    namespace: s.namespace,
    singleReplica: status.controlPlaneTopology === 'SingleReplica',
    featureGates: enabledFeatureGates(s.featureGate, s.releaseVersion),
    ...(Object.keys(proxy).length > 0 ? { proxy } : {}),
  };
}

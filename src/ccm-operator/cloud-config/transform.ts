/**
 * The cloud config each platform's CCM reads, made from the one the user supplied (upstream
 * CCCMO's `CloudConfigTransformer`s, `pkg/cloud/<platform>/`). Pure functions of the text: a
 * config that cannot be transformed is a problem naming what to fix, never an exception, so the
 * controller keeps the last good cloud-conf and says why.
 *
 * - OpenStack: the legacy in-tree settings go (`[Global]` secret-name, secret-namespace and
 *   kubeconfig-path, checked first: the CCM reads credentials from the clouds.yaml Secret), the
 *   CCM reads clouds.yaml (`use-clouds`, `clouds-file`, `cloud`, forced), `[BlockStorage]` goes (CSI
 *   owns volumes), `[LoadBalancer] use-octavia` goes, and `max-shared-lb = 1` and
 *   `manage-security-groups = true` are added unless the admin set them.
 * - AWS: `[Global] ClusterServiceLoadBalancerHealthProbeMode = Shared` unless set;
 *   `NLBSecurityGroupMode = Managed` with the AWSServiceLBNetworkSecurityGroup feature gate.
 * - Azure (JSON): `cloud` from the Infrastructure (a different one is refused), `vmType` standard
 *   unless set, `clusterServiceLoadBalancerHealthProbeMode` shared.
 * - GCP, IBMCloud, PowerVS, Nutanix: copied unchanged, as upstream does. VSphere and Azure Stack
 *   Hub: copied unchanged too (upstream rewrites them; see docs/ccm-operator.md).
 *
 * Unlike upstream, which re-serializes the whole file (gopkg.in/ini.v1, encoding/json), the INI
 * configs keep every line the transform does not touch (src/lib/gcfg.ts `formatGcfg`), and names
 * match without regard to case, as gcfg (what the CCMs read with) matches them.
 */
import { ConfigError, formatProblem } from '../../lib/config.ts';
import {
  formatGcfg,
  gcfgDelete,
  gcfgDeleteSection,
  gcfgEnsureSection,
  gcfgLast,
  gcfgSection,
  gcfgSet,
  parseGcfg,
  type GcfgDocument,
} from '../../lib/gcfg.ts';

/** What the user must fix in the source config (or the Infrastructure). */
export interface CloudConfigProblem {
  problem: string;
  fix: string;
}

export type TransformResult = { ok: true; text: string } | { ok: false; problem: CloudConfigProblem };

export interface TransformInput {
  /** `Infrastructure.status.platformStatus` (its `type` and the platform's block). */
  platformStatus: Record<string, unknown> & { type?: string };
  /** Enabled feature gates. */
  featureGates: readonly string[];
  /** Where the source came from, for messages: `openshift-config/cloud-provider-config key config`. */
  where: string;
}

/** Where the OpenStack CCM finds clouds.yaml: the Secret openstack-cloud-credentials, mounted there. */
export const CLOUDS_FILE = '/etc/openstack/secret/clouds.yaml';
export const CLOUD_NAME = 'openstack';

/** The platforms whose cloud config is synced (upstream's isCloudConfigSyncNeeded). */
export const SYNCED_PLATFORMS = [
  'AWS',
  'Azure',
  'GCP',
  'VSphere',
  'IBMCloud',
  'PowerVS',
  'OpenStack',
  'Nutanix',
] as const;

/** Whether the platform's source is looked up in openshift-config-managed/kube-cloud-config first. */
export function readsManagedConfig(platform: string): boolean {
  return platform === 'AWS' || platform === 'Azure';
}

export function transformCloudConfig(source: string, input: TransformInput): TransformResult {
  switch (input.platformStatus.type) {
    case 'OpenStack':
      return transformOpenStack(source, input);
    case 'AWS':
      return transformAWS(source, input);
    case 'Azure':
      return isAzureStackHub(input.platformStatus)
        ? { ok: true, text: source }
        : transformAzure(source, input);
    default:
      return { ok: true, text: source };
  }
}

const ok = (text: string): TransformResult => ({ ok: true, text });
const fail = (problem: string, fix: string): TransformResult => ({ ok: false, problem: { problem, fix } });

function parse(source: string, where: string): GcfgDocument | CloudConfigProblem {
  try {
    return parseGcfg(source, where);
  } catch (err) {
    if (!ConfigError.is(err)) throw err;
    return {
      problem: `it is not valid gcfg/INI: ${err.problems.map(formatProblem).join('; ')}`,
      fix: 'correct the syntax at the lines named',
    };
  }
}

const isProblem = (x: GcfgDocument | CloudConfigProblem): x is CloudConfigProblem => 'problem' in x;

/** The legacy [Global] keys and the only values the external CCM can drop without losing meaning. */
const LEGACY_GLOBAL: readonly (readonly [string, string])[] = [
  ['secret-name', 'openstack-credentials'],
  ['secret-namespace', 'kube-system'],
  ['kubeconfig-path', ''],
];

function transformOpenStack(source: string, input: TransformInput): TransformResult {
  const doc = parse(source, input.where);
  if (isProblem(doc)) return { ok: false, problem: doc };
  const global = gcfgSection(doc, 'Global');
  for (const [key, expected] of LEGACY_GLOBAL) {
    const entry = gcfgLast(global, key);
    if (entry && entry.value !== expected) {
      return fail(
        `[Global] ${key} is set to a non-default value (${JSON.stringify(entry.value)}, line ${entry.line}): the external cloud controller manager reads its credentials from the clouds.yaml of the Secret openstack-cloud-credentials, not from a Secret this names`,
        expected
          ? `set ${key} = ${expected} in ${input.where}, or remove the line`
          : `remove ${key} from ${input.where}: the CCM uses its own service account`,
      );
    }
    gcfgDelete(doc, 'Global', key);
  }
  gcfgEnsureSection(doc, 'Global');
  gcfgSet(doc, 'Global', 'use-clouds', 'true');
  gcfgSet(doc, 'Global', 'clouds-file', CLOUDS_FILE);
  gcfgSet(doc, 'Global', 'cloud', CLOUD_NAME);
  gcfgDeleteSection(doc, 'BlockStorage');
  const lb = gcfgEnsureSection(doc, 'LoadBalancer');
  gcfgDelete(doc, 'LoadBalancer', 'use-octavia');
  // Sharing a load balancer between Services is off unless the admin turns it on (security and
  // multi-tenancy); per-Service security groups open only the NodePorts a Service needs.
  if (!gcfgLast(lb, 'max-shared-lb')) gcfgSet(doc, 'LoadBalancer', 'max-shared-lb', '1');
  if (!gcfgLast(lb, 'manage-security-groups')) gcfgSet(doc, 'LoadBalancer', 'manage-security-groups', 'true');
  return ok(formatGcfg(doc));
}

function transformAWS(source: string, input: TransformInput): TransformResult {
  // A cluster may have no cloud config at all; the AWS CCM still needs a [Global] section.
  const doc = parse(source === '' ? '[Global]\n' : source, input.where);
  if (isProblem(doc)) return { ok: false, problem: doc };
  const global = gcfgEnsureSection(doc, 'Global');
  // Health checks of Cluster-scoped Services go to the node proxy's endpoint (OVN serves it).
  if (!gcfgLast(global, 'ClusterServiceLoadBalancerHealthProbeMode')?.value) {
    gcfgSet(doc, 'Global', 'ClusterServiceLoadBalancerHealthProbeMode', 'Shared');
  }
  if (
    input.featureGates.includes('AWSServiceLBNetworkSecurityGroup') &&
    gcfgLast(global, 'NLBSecurityGroupMode')?.value !== 'Managed'
  ) {
    gcfgSet(doc, 'Global', 'NLBSecurityGroupMode', 'Managed');
  }
  return ok(formatGcfg(doc));
}

const AZURE_CLOUDS = [
  'AzurePublicCloud',
  'AzureUSGovernmentCloud',
  'AzureChinaCloud',
  'AzureGermanCloud',
  'AzureStackCloud',
] as const;

function azureBlock(platformStatus: TransformInput['platformStatus']): Record<string, unknown> | undefined {
  const block = platformStatus.azure;
  return block && typeof block === 'object' ? (block as Record<string, unknown>) : undefined;
}

function isAzureStackHub(platformStatus: TransformInput['platformStatus']): boolean {
  return azureBlock(platformStatus)?.cloudName === 'AzureStackCloud';
}

function transformAzure(source: string, input: TransformInput): TransformResult {
  let cfg: unknown;
  try {
    cfg = JSON.parse(source);
  } catch (err) {
    return fail(
      `it is not JSON (${(err as Error).message})`,
      `write the Azure cloud config as a JSON object in ${input.where}`,
    );
  }
  if (!cfg || typeof cfg !== 'object' || Array.isArray(cfg)) {
    return fail('it is not a JSON object', `write the Azure cloud config as a JSON object in ${input.where}`);
  }
  const conf = cfg as Record<string, unknown>;
  const cloudName = azureBlock(input.platformStatus)?.cloudName;
  const cloud = typeof cloudName === 'string' && cloudName !== '' ? cloudName : 'AzurePublicCloud';
  if (!(AZURE_CLOUDS as readonly string[]).includes(cloud)) {
    return fail(
      `Infrastructure status.platformStatus.azure.cloudName ${JSON.stringify(cloud)} is not an Azure cloud`,
      `use one of ${AZURE_CLOUDS.join(', ')}`,
    );
  }
  // encoding/json matches keys without regard to case, as the Azure CCM reads them.
  const keyOf = (name: string) =>
    Object.keys(conf).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;
  const current = conf[keyOf('cloud')];
  if (typeof current === 'string' && current !== '' && current.toLowerCase() !== cloud.toLowerCase()) {
    return fail(
      `"cloud" is ${JSON.stringify(current)} but the Infrastructure says ${cloud}`,
      `remove "cloud" from ${input.where}, or set it to ${cloud}`,
    );
  }
  conf[keyOf('cloud')] = cloud;
  if (!conf[keyOf('vmType')]) conf[keyOf('vmType')] = 'standard';
  conf[keyOf('clusterServiceLoadBalancerHealthProbeMode')] = 'shared';
  return ok(JSON.stringify(conf));
}

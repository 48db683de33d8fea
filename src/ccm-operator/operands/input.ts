/**
 * RenderInput from the objects upstream's operator reads (CCCMO `pkg/config.ComposeConfig`): the
 * Infrastructure `cluster` (platform, infrastructure name, topology), the Proxy `cluster` and the
 * images ConfigMap — as documents (`shiftstack ccm-operator render`'s files, or what the
 * operator gets from the API server). Only the fields used are declared; the rest passes.
 */
import { z } from 'zod';
import { ConfigError, parseConfig } from '../../lib/config.ts';
import { DEFAULT_OPERAND_NAMESPACE } from './common.ts';
import { DEFAULT_IMAGES, IMAGE_KEYS } from './images.ts';
import {
  OPERAND_PLATFORMS,
  type OpenStackCcm,
  type OperandPlatform,
  type OperandProxy,
  type OperandTls,
  type RenderInput,
} from './types.ts';

/** Infrastructure types upstream's operator deploys nothing for, and reports Available. */
export const NO_OPERAND_PLATFORMS = ['None', 'External'] as const;

export function isOperandPlatform(type: string): type is OperandPlatform {
  return (OPERAND_PLATFORMS as readonly string[]).includes(type);
}

/** What `render` and the operator assume without an Infrastructure: OCCM's own default cluster name, HA. */
export const DEFAULT_INFRASTRUCTURE_NAME = 'kubernetes';

export const infrastructureSchema = z.looseObject({
  apiVersion: z
    .literal('config.openshift.io/v1', { error: 'set apiVersion: config.openshift.io/v1' })
    .optional(),
  kind: z.literal('Infrastructure', { error: 'set kind: Infrastructure' }).optional(),
  status: z.looseObject(
    {
      platformStatus: z.looseObject(
        {
          type: z
            .string({ error: `set the platform type, e.g. OpenStack (${OPERAND_PLATFORMS.join(', ')})` })
            .min(1, { error: `set the platform type, e.g. OpenStack (${OPERAND_PLATFORMS.join(', ')})` }),
        },
        { error: 'set status.platformStatus with the platform type: the operator reads nothing else' },
      ),
      infrastructureName: z
        .string({ error: 'the cluster’s name in the cloud, e.g. mycluster-x7k2p' })
        .min(1)
        .optional(),
      controlPlaneTopology: z
        .enum(['HighlyAvailable', 'HighlyAvailableArbiter', 'SingleReplica', 'External', 'DualReplica'], {
          error: 'write HighlyAvailable, SingleReplica or External',
        })
        .optional(),
    },
    { error: 'set status: the operator reads the platform from status.platformStatus.type' },
  ),
});
export type InfrastructureDocument = z.output<typeof infrastructureSchema>;

export const proxySchema = z.looseObject({
  apiVersion: z
    .literal('config.openshift.io/v1', { error: 'set apiVersion: config.openshift.io/v1' })
    .optional(),
  kind: z.literal('Proxy', { error: 'set kind: Proxy' }).optional(),
  status: z
    .looseObject({
      httpProxy: z.string().optional(),
      httpsProxy: z.string().optional(),
      noProxy: z.string().optional(),
    })
    .optional(),
});
export type ProxyDocument = z.output<typeof proxySchema>;

const imageMap = z.record(
  z.string(),
  z.string({ error: 'write the image reference, e.g. quay.io/org/image:tag' }).min(1, {
    error: 'write the image reference, e.g. quay.io/org/image:tag',
  }),
);

/** upstream's `images.json`, or the `cloud-controller-manager-images` ConfigMap that holds it. */
export const imagesSchema = z.union([
  z.looseObject({
    kind: z.literal('ConfigMap'),
    data: z.looseObject({
      'images.json': z.string({ error: 'put the images map, as JSON, under data."images.json"' }),
    }),
  }),
  imageMap,
]);

/**
 * The images map of an images document (`file` names it in errors), merged over `defaults`, and
 * the keys no operand uses (reported, never silently dropped).
 */
export function imagesFrom(
  doc: z.output<typeof imagesSchema>,
  file: string,
  defaults: Readonly<Record<string, string>> = DEFAULT_IMAGES,
): { images: Record<string, string>; unknownKeys: string[] } {
  let map: Record<string, string>;
  if (doc.kind === 'ConfigMap' && typeof doc.data === 'object') {
    const text = (doc.data as Record<string, string>)['images.json']!;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new ConfigError([
        {
          file,
          key: 'data.images.json',
          value: undefined,
          problem: `not JSON (${(err as Error).message})`,
          fix: 'write the images map as a JSON object, e.g. {"shiftstack": "registry.example/shiftstack:v1"}',
        },
      ]);
    }
    map = parseConfig(imageMap, parsed, `${file} data."images.json"`);
  } else {
    map = doc as Record<string, string>;
  }
  const known = IMAGE_KEYS as readonly string[];
  return {
    images: { ...defaults, ...map },
    unknownKeys: Object.keys(map).filter((k) => !known.includes(k)),
  };
}

/** The fields of an Infrastructure that RenderInput takes. */
export function fromInfrastructure(infra: InfrastructureDocument): {
  type: string;
  platformStatus: Record<string, unknown>;
  infrastructureName: string;
  singleReplica: boolean;
} {
  const status = infra.status;
  const type = status.platformStatus.type;
  // PlatformStatus holds each platform's block under its type in lower case (openstack, ibmcloud, …).
  const block = (status.platformStatus as Record<string, unknown>)[type.toLowerCase()];
  return {
    type,
    platformStatus: block && typeof block === 'object' ? (block as Record<string, unknown>) : {},
    infrastructureName: status.infrastructureName ?? DEFAULT_INFRASTRUCTURE_NAME,
    singleReplica: status.controlPlaneTopology === 'SingleReplica',
  };
}

/** The proxy settings upstream passes to the operands: what the Proxy's status says is in effect. */
export function fromProxy(proxy: ProxyDocument): OperandProxy | undefined {
  const s = proxy.status;
  if (!s?.httpProxy && !s?.httpsProxy && !s?.noProxy) return undefined;
  return {
    ...(s.httpProxy ? { httpProxy: s.httpProxy } : {}),
    ...(s.httpsProxy ? { httpsProxy: s.httpsProxy } : {}),
    ...(s.noProxy ? { noProxy: s.noProxy } : {}),
  };
}

export interface RenderSources {
  platform: OperandPlatform;
  infrastructure?: InfrastructureDocument;
  images?: Readonly<Record<string, string>>;
  proxy?: OperandProxy;
  openstackCcm?: OpenStackCcm;
  namespace?: string;
  featureGates?: readonly string[];
  tls?: OperandTls;
}

/** A RenderInput with the defaults `render --help` states for what is not given. */
export function renderInputFrom(s: RenderSources): RenderInput {
  const infra = s.infrastructure ? fromInfrastructure(s.infrastructure) : undefined;
  return {
    platform: s.platform,
    platformStatus: infra?.platformStatus ?? {},
    infrastructureName: infra?.infrastructureName ?? DEFAULT_INFRASTRUCTURE_NAME,
    images: s.images ?? DEFAULT_IMAGES,
    openstackCcm: s.openstackCcm ?? 'shiftstack',
    namespace: s.namespace ?? DEFAULT_OPERAND_NAMESPACE,
    singleReplica: infra?.singleReplica ?? false,
    featureGates: s.featureGates ?? [],
    ...(s.proxy ? { proxy: s.proxy } : {}),
    ...(s.tls ? { tls: s.tls } : {}),
  };
}

/**
 * OpenShift's objects as files (`kubectl get infrastructure cluster -o yaml`, …), for `shiftstack
 * ccm-operator render`: checked where the API server would have checked them, with problems that
 * name the file and the key, then handed to render-input.ts as the objects the operator reads.
 * Only the fields render-input.ts reads are declared; the rest passes.
 */
import { z } from 'zod';
import { loadConfigFile } from '../lib/config.ts';
import type { FeatureGate, Infrastructure, Proxy } from './api/index.ts';
import { OPERAND_PLATFORMS } from './operands/types.ts';

const API_VERSION = z
  .literal('config.openshift.io/v1', { error: 'set apiVersion: config.openshift.io/v1' })
  .optional();
const PLATFORM_TYPE = `set the platform type, e.g. OpenStack (${OPERAND_PLATFORMS.join(', ')})`;

const infrastructureSchema = z.looseObject({
  apiVersion: API_VERSION,
  kind: z.literal('Infrastructure', { error: 'set kind: Infrastructure' }).optional(),
  status: z.looseObject(
    {
      platformStatus: z.looseObject(
        { type: z.string({ error: PLATFORM_TYPE }).min(1, { error: PLATFORM_TYPE }) },
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

const proxySchema = z.looseObject({
  apiVersion: API_VERSION,
  kind: z.literal('Proxy', { error: 'set kind: Proxy' }).optional(),
  status: z
    .looseObject({
      httpProxy: z.string().optional(),
      httpsProxy: z.string().optional(),
      noProxy: z.string().optional(),
    })
    .optional(),
});

const gateNames = z.array(z.looseObject({ name: z.string({ error: 'write the gate’s name' }) })).optional();
const featureGateSchema = z.looseObject({
  apiVersion: API_VERSION,
  kind: z.literal('FeatureGate', { error: 'set kind: FeatureGate' }).optional(),
  spec: z
    .looseObject({
      featureSet: z.string().optional(),
      customNoUpgrade: z.looseObject({ enabled: z.array(z.string()).optional() }).optional(),
    })
    .optional(),
  status: z
    .looseObject({
      featureGates: z
        .array(
          z.looseObject({
            version: z.string({ error: 'write the release version these gates apply to' }),
            enabled: gateNames,
            disabled: gateNames,
          }),
        )
        .optional(),
    })
    .optional(),
});

type Options = { signal?: AbortSignal };

export async function readInfrastructureFile(file: string, o: Options = {}): Promise<Infrastructure> {
  return (await loadConfigFile(file, infrastructureSchema, o)) as Infrastructure;
}

export async function readProxyFile(file: string, o: Options = {}): Promise<Proxy> {
  return (await loadConfigFile(file, proxySchema, o)) as Proxy;
}

export async function readFeatureGateFile(file: string, o: Options = {}): Promise<FeatureGate> {
  return (await loadConfigFile(file, featureGateSchema, o)) as FeatureGate;
}

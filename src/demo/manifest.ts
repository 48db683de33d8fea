/**
 * The demo's cluster: examples/capo/cluster.yaml as a user would apply it, with two things done at
 * run time that the file cannot know or that Cluster API's core controllers would do:
 *
 * - the identity Secret's clouds.yaml is filled with the emulator's credentials (its auth URL and
 *   port change every run); the Secret's name, key and cloud name stay as the file has them;
 * - owner references, as CAPI's controllers set them: the Cluster owns its OpenStackCluster, each
 *   Machine its OpenStackMachine (the CAPO controllers find their Cluster and Machine through them).
 *
 * Scaling the workers creates one more bootstrap Secret, Machine and OpenStackMachine from the
 * first worker's, named as a MachineSet names its machines.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  isAlreadyExists,
  kinds,
  ownerReference,
  type KubeClient,
  type KubernetesObject,
  type ResourceType,
} from '../kube/index.ts';
import {
  ALL_KINDS,
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  type OpenStackCluster,
} from '../capo/api/index.ts';

export const EXAMPLE_PATH = join(import.meta.dirname, '..', '..', 'examples', 'capo', 'cluster.yaml');
export const NAMESPACE = 'capo-demo';
const CLOUDS_YAML_KEY = 'clouds.yaml';
const SET_NAME_LABEL = 'cluster.x-k8s.io/set-name';

/** A manifest document: a Secret (stringData) or a kind with a spec. */
export interface Obj extends KubernetesObject {
  spec?: Record<string, unknown>;
  stringData?: Record<string, string>;
}

/** The references a Cluster or Machine makes, read without trusting the document's shape. */
function refs(o: Obj): { infra?: { kind?: string; name?: string }; bootstrapSecret?: string } {
  const spec = o.spec ?? {};
  const infra = spec.infrastructureRef as { kind?: string; name?: string } | undefined;
  const bootstrap = spec.bootstrap as { dataSecretName?: string } | undefined;
  return {
    ...(infra ? { infra } : {}),
    ...(bootstrap?.dataSecretName ? { bootstrapSecret: bootstrap.dataSecretName } : {}),
  };
}

export interface ClusterManifest {
  namespace: string;
  clusterName: string;
  /** In file order. */
  objects: Obj[];
}

export async function loadClusterManifest(
  path = EXAMPLE_PATH,
  namespace = NAMESPACE,
): Promise<ClusterManifest> {
  const objects: Obj[] = [];
  for (const doc of parseAllDocuments(await readFile(path, 'utf8'))) {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]!.message}`);
    const obj = doc.toJS() as Obj | null;
    if (!obj) continue;
    obj.metadata = { ...obj.metadata, namespace };
    objects.push(obj);
  }
  const cluster = objects.find((o) => o.kind === 'Cluster');
  if (!cluster?.metadata?.name) throw new Error(`${path}: no Cluster`);
  return { namespace, clusterName: cluster.metadata.name, objects };
}

/** The OpenStackCluster's identity Secret, with `cloudsYaml(cloudName)` as its clouds.yaml. */
export function fillCredentials(m: ClusterManifest, cloudsYaml: (cloudName: string) => string): void {
  const osc = m.objects.find((o) => o.kind === 'OpenStackCluster') as unknown as OpenStackCluster | undefined;
  const ref = osc?.spec.identityRef;
  if (!ref || (ref.type ?? 'Secret') !== 'Secret')
    throw new Error('the OpenStackCluster names no identity Secret');
  const secret = m.objects.find((o) => o.kind === 'Secret' && o.metadata?.name === ref.name);
  if (!secret) throw new Error(`the identity Secret ${ref.name} is not in the manifest`);
  secret.stringData = { ...secret.stringData, [CLOUDS_YAML_KEY]: cloudsYaml(ref.cloudName) };
}

export function countMachines(m: ClusterManifest): { controlPlane: number; workers: number } {
  const machines = m.objects.filter((o) => o.kind === 'Machine');
  const cp = machines.filter((o) => o.metadata?.labels?.[CONTROL_PLANE_LABEL] !== undefined).length;
  return { controlPlane: cp, workers: machines.length - cp };
}

function typeOf(obj: Obj): ResourceType {
  if (obj.apiVersion === 'v1' && obj.kind === 'Secret') return kinds.Secret;
  const k = ALL_KINDS.find((x) => x.resource.apiVersion === obj.apiVersion && x.resource.kind === obj.kind);
  if (!k) throw new Error(`the demo does not know ${obj.apiVersion} ${obj.kind}`);
  return k.resource;
}

/**
 * Creates the objects in file order (existing ones are kept), each infrastructure object owned by
 * the CAPI object naming it, as CAPI's core controllers would set it.
 */
export async function applyObjects(
  api: KubeClient,
  objects: readonly Obj[],
  signal: AbortSignal,
): Promise<Obj[]> {
  const created = new Map<string, Obj>();
  const out: Obj[] = [];
  for (const obj of objects) {
    const owner = ownerOf(obj, objects, created);
    const body: Obj = owner
      ? {
          ...obj,
          metadata: {
            ...obj.metadata,
            ownerReferences: [ownerReference(owner, { controller: true, blockOwnerDeletion: true })],
          },
        }
      : obj;
    let result: Obj;
    try {
      result = await api.create(typeOf(obj), body, { signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      result = await api.get(
        typeOf(obj),
        { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' },
        {
          signal,
        },
      );
    }
    created.set(`${obj.kind}/${obj.metadata?.name}`, result);
    out.push(result);
  }
  return out;
}

/** The Cluster naming an OpenStackCluster, the Machine naming an OpenStackMachine (created before it). */
function ownerOf(obj: Obj, all: readonly Obj[], created: Map<string, Obj>): Obj | undefined {
  const name = obj.metadata?.name;
  const ownerKind =
    obj.kind === 'OpenStackCluster' ? 'Cluster' : obj.kind === 'OpenStackMachine' ? 'Machine' : undefined;
  if (!ownerKind) return undefined;
  const named = all.find(
    (o) => o.kind === ownerKind && refs(o).infra?.kind === obj.kind && refs(o).infra?.name === name,
  );
  return named ? created.get(`${ownerKind}/${named.metadata?.name}`) : undefined;
}

/**
 * One more worker, as the MachineSet of the first worker would create it: its bootstrap Secret,
 * Machine and OpenStackMachine under a new name with the set's random suffix.
 */
export function anotherWorker(m: ClusterManifest, suffix = randomSuffix()): Obj[] {
  const machine = m.objects.find(
    (o) => o.kind === 'Machine' && o.metadata?.labels?.[CONTROL_PLANE_LABEL] === undefined,
  );
  if (!machine) throw new Error('the manifest has no worker Machine to copy');
  const { infra, bootstrapSecret } = refs(machine);
  const osm = m.objects.find((o) => o.kind === 'OpenStackMachine' && o.metadata?.name === infra?.name);
  const secret = m.objects.find((o) => o.kind === 'Secret' && o.metadata?.name === bootstrapSecret);
  if (!osm || !secret)
    throw new Error(`the worker ${machine.metadata?.name} lacks its OpenStackMachine or bootstrap Secret`);
  const set = machine.metadata?.labels?.[SET_NAME_LABEL] ?? machine.metadata?.name ?? 'worker';
  const name = `${set}-${suffix}`;
  const meta = (o: Obj) => ({
    name,
    namespace: m.namespace,
    labels: { ...o.metadata?.labels, [CLUSTER_NAME_LABEL]: m.clusterName },
    ...(o.metadata?.annotations ? { annotations: { ...o.metadata.annotations } } : {}),
  });
  return [
    {
      ...structuredClone(secret),
      metadata: meta(secret),
      stringData: { ...secret.stringData, value: `#cloud-config\nruncmd:\n  - echo ${name}\n` },
    },
    {
      ...structuredClone(machine),
      metadata: meta(machine),
      spec: {
        ...structuredClone(machine.spec),
        bootstrap: { dataSecretName: name },
        infrastructureRef: { ...infra, name },
      },
    },
    { ...structuredClone(osm), metadata: meta(osm) },
  ];
}

/** A MachineSet's suffix: five characters of Kubernetes' random alphabet (no vowels, no look-alikes). */
function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join('');
}

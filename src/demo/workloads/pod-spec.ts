/**
 * A pod template's container → the command line and environment of a `shiftstack` process, as
 * the kubelet and the image would give them:
 *
 * - The program: the shiftstack image's ENTRYPOINT (image/bin/entrypoint) runs exactly
 *   `node …/bin/shiftstack.js "$@"`, or the image path given first (`/bin/openstack-cloud-controller-manager`
 *   = `shiftstack ccm`, `/manager` = `shiftstack capo`, image/bin). The runner runs the same thing
 *   with the pinned Node on this checkout's bin/shiftstack.js. A `command` of `sh -c '<script>' <$0>`
 *   whose script ends with `exec <one of those> "$@"` runs that program with the remaining
 *   arguments; the rest of the script is not run: in the operands' wrapper it only sources
 *   `/etc/kubernetes/apiserver-url.env`, a file of OpenShift nodes that does not exist here.
 * - The environment: `envFrom` (in order, with prefixes), then `env` (each value expanded against
 *   the variables before it), with `valueFrom` fieldRef (metadata.name/namespace/uid/labels/
 *   annotations, spec.nodeName, spec.serviceAccountName, status.podIP(s)/hostIP(s)),
 *   configMapKeyRef and secretKeyRef (`optional` honoured); a missing source is the kubelet's
 *   CreateContainerConfigError, retried. Then `$(VAR)` in command and args, against all of it.
 *
 * What cannot run here is refused up front with an Event reason (`refusals`): another image,
 * another program, init containers, exec/grpc and startup probes, resourceFieldRef, volume types
 * other than configMap, secret, emptyDir, hostPath, projected and downwardAPI.
 */
import type {
  V1ConfigMap,
  V1Container,
  V1EnvVar,
  V1ObjectFieldSelector,
  V1PodSpec,
  V1Secret,
} from '@kubernetes/client-node';
import { expand } from './expand.ts';

/** The image's programs that are shiftstack, with the subcommand each one runs. */
const IMAGE_PROGRAMS: ReadonlyMap<string, readonly string[]> = new Map([
  ['/usr/local/bin/entrypoint', []],
  ['/usr/local/bin/shiftstack', []],
  ['shiftstack', []],
  ['/bin/openstack-cloud-controller-manager', ['ccm']],
  ['/manager', ['capo']],
]);
const ENTRYPOINT = '/usr/local/bin/entrypoint';
/** The image's CMD. */
const DEFAULT_ARGS = ['--help'];
const SHELLS = new Set(['/bin/sh', 'sh', '/bin/bash', 'bash', '/usr/bin/env sh']);

/** Something the emulated cluster will not run, as an Event reason and message. */
export interface Refusal {
  reason: string;
  message: string;
}

/** The shiftstack command line a container runs (before `$(VAR)` expansion), or why there is none. */
export function shiftstackArgs(c: V1Container): string[] | Refusal {
  const argv = [...(c.command ?? [ENTRYPOINT]), ...(c.command || c.args ? (c.args ?? []) : DEFAULT_ARGS)];
  const out = resolveProgram(argv, 4);
  if (out) return out;
  return {
    reason: 'UnsupportedCommand',
    message:
      `container "${c.name}" runs ${JSON.stringify(argv.slice(0, 3))}: the emulated cluster runs the ` +
      `shiftstack image's entrypoint or programs (${[...IMAGE_PROGRAMS.keys()].join(', ')}), directly or ` +
      'as the `exec … "$@"` of an `sh -c` script',
  };
}

function resolveProgram(argv: readonly string[], depth: number): string[] | undefined {
  if (depth === 0) return undefined;
  const [prog = '', ...rest] = argv;
  if (prog === ENTRYPOINT && rest[0]?.startsWith('/')) return resolveProgram(rest, depth - 1);
  const sub = IMAGE_PROGRAMS.get(prog);
  if (sub) return [...sub, ...rest];
  if (prog === 'node' && rest[0]?.endsWith('/bin/shiftstack.js')) return rest.slice(1);
  if (SHELLS.has(prog) && rest[0] === '-c' && rest[1] !== undefined) {
    const m = /(?:^|[;\n&|])\s*exec\s+(\S+)\s+"\$@"\s*;?\s*$/.exec(rest[1]);
    // "$@" is what follows $0 (rest[2]).
    if (m?.[1]) return resolveProgram([m[1], ...rest.slice(3)], depth - 1);
  }
  return undefined;
}

const FIELD_PATHS = new Set([
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
]);
const SUPPORTED_VOLUMES = ['configMap', 'secret', 'emptyDir', 'hostPath', 'projected', 'downwardAPI'];

/** What of this pod spec the emulated cluster cannot run. */
export function refusals(spec: V1PodSpec, images: readonly string[]): Refusal[] {
  const out: Refusal[] = [];
  if (spec.initContainers?.length) {
    out.push({
      reason: 'UnsupportedPodSpec',
      message: 'init containers are not run by the emulated cluster',
    });
  }
  for (const c of spec.containers) {
    if (!images.includes(c.image ?? '')) {
      out.push({
        reason: 'UnsupportedImage',
        message:
          `container "${c.name}" uses image "${c.image ?? ''}": the emulated cluster runs only ` +
          `shiftstack's image (${images.join(', ')})`,
      });
      continue;
    }
    const args = shiftstackArgs(c);
    if (!Array.isArray(args)) out.push(args);
    for (const [kind, probe] of [
      ['readiness', c.readinessProbe],
      ['liveness', c.livenessProbe],
      ['startup', c.startupProbe],
    ] as const) {
      if (!probe) continue;
      if (kind === 'startup' || probe.exec || probe.grpc) {
        const what = kind === 'startup' ? 'startup probes' : probe.exec ? 'exec probes' : 'grpc probes';
        out.push({
          reason: 'UnsupportedProbe',
          message: `container "${c.name}": ${what} are not run by the emulated cluster (httpGet and tcpSocket are)`,
        });
      }
    }
    for (const e of c.env ?? []) {
      const f = e.valueFrom?.fieldRef?.fieldPath;
      if (e.valueFrom?.resourceFieldRef || (f !== undefined && !fieldSupported(f))) {
        out.push({
          reason: 'UnsupportedEnv',
          message: `container "${c.name}" env ${e.name}: ${f ?? 'resourceFieldRef'} is not resolved by the emulated cluster`,
        });
      }
    }
  }
  for (const v of spec.volumes ?? []) {
    const kind = Object.keys(v).find((k) => k !== 'name');
    if (!kind || !SUPPORTED_VOLUMES.includes(kind)) {
      out.push({
        reason: 'UnsupportedVolume',
        message: `volume "${v.name}" (${kind ?? 'no source'}): the emulated cluster mounts ${SUPPORTED_VOLUMES.join(', ')}`,
      });
    }
  }
  return out;
}

function fieldSupported(path: string): boolean {
  return FIELD_PATHS.has(path) || /^metadata\.(labels|annotations)\['[^']+'\]$/.test(path);
}

/** What a pod knows of itself for fieldRefs and the downward API. */
export interface PodFacts {
  name: string;
  namespace: string;
  uid: string;
  nodeName: string;
  serviceAccountName: string;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  /** Host network: the pod's IP is the host's. */
  hostIP: string;
}

/** A fieldRef's value (`fieldRef.fieldPath`), as the kubelet's `podFieldSelectorRuntimeValue`. */
export function fieldValue(ref: V1ObjectFieldSelector, pod: PodFacts): string {
  const path = ref.fieldPath;
  switch (path) {
    case 'metadata.name':
      return pod.name;
    case 'metadata.namespace':
      return pod.namespace;
    case 'metadata.uid':
      return pod.uid;
    case 'spec.nodeName':
      return pod.nodeName;
    case 'spec.serviceAccountName':
      return pod.serviceAccountName;
    case 'status.hostIP':
    case 'status.hostIPs':
    case 'status.podIP':
    case 'status.podIPs':
      return pod.hostIP;
  }
  const m = /^metadata\.(labels|annotations)\['([^']+)'\]$/.exec(path);
  if (m) return (m[1] === 'labels' ? pod.labels : pod.annotations)[m[2] ?? ''] ?? '';
  if (path === 'metadata.labels') return formatMap(pod.labels);
  if (path === 'metadata.annotations') return formatMap(pod.annotations);
  throw new Error(`unsupported fieldPath ${path}`);
}

/** The downward API's map format: `key="value"` lines, sorted by key. */
export function formatMap(m: Readonly<Record<string, string>>): string {
  return Object.keys(m)
    .sort()
    .map((k) => `${k}=${JSON.stringify(m[k])}`)
    .join('\n');
}

/** Where ConfigMaps and Secrets are read (the runner's cache). */
export interface ObjectSource {
  configMap(namespace: string, name: string): Promise<V1ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<V1Secret | undefined>;
}

/** A container that cannot be started yet (the kubelet's CreateContainerConfigError). */
export class ContainerConfigError extends Error {
  override readonly name = 'ContainerConfigError';
}

/** A ConfigMap's or Secret's keys as text. */
export function dataOf(obj: V1ConfigMap | V1Secret, kind: 'ConfigMap' | 'Secret'): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (kind === 'ConfigMap') {
    const cm = obj as V1ConfigMap;
    for (const [k, v] of Object.entries(cm.data ?? {})) out.set(k, Buffer.from(v, 'utf8'));
    for (const [k, v] of Object.entries(cm.binaryData ?? {})) out.set(k, Buffer.from(v, 'base64'));
  } else {
    const s = obj as V1Secret;
    for (const [k, v] of Object.entries(s.data ?? {})) out.set(k, Buffer.from(v, 'base64'));
    for (const [k, v] of Object.entries(s.stringData ?? {})) out.set(k, Buffer.from(v, 'utf8'));
  }
  return out;
}

/** The container's environment as the kubelet's `makeEnvironmentVariables` builds it. */
export async function resolveEnv(
  c: V1Container,
  pod: PodFacts,
  source: ObjectSource,
): Promise<Map<string, string>> {
  const env = new Map<string, string>();
  const ns = pod.namespace;
  for (const from of c.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    if (!ref) continue;
    const name = ref.name ?? '';
    const obj = await (kind === 'ConfigMap' ? source.configMap(ns, name) : source.secret(ns, name));
    if (!obj) {
      if (ref.optional) continue;
      throw new ContainerConfigError(`${kind.toLowerCase()} "${name}" not found`);
    }
    for (const [k, v] of dataOf(obj, kind)) {
      const key = `${from.prefix ?? ''}${k}`;
      // Names the kubelet cannot set are skipped (it says so in an Event).
      if (key.includes('=') || key === '') continue;
      env.set(key, v.toString('utf8'));
    }
  }
  for (const e of c.env ?? []) {
    const value = await envValue(e, pod, source, env);
    if (value !== undefined) env.set(e.name, value);
  }
  return env;
}

async function envValue(
  e: V1EnvVar,
  pod: PodFacts,
  source: ObjectSource,
  before: ReadonlyMap<string, string>,
): Promise<string | undefined> {
  const from = e.valueFrom;
  if (!from) return expand(e.value ?? '', before);
  if (from.fieldRef) return fieldValue(from.fieldRef, pod);
  const ref = from.configMapKeyRef ?? from.secretKeyRef;
  if (!ref) throw new ContainerConfigError(`env ${e.name}: no value source the emulated cluster knows`);
  const kind = from.configMapKeyRef ? 'ConfigMap' : 'Secret';
  const name = ref.name ?? '';
  const obj = await (kind === 'ConfigMap'
    ? source.configMap(pod.namespace, name)
    : source.secret(pod.namespace, name));
  if (!obj) {
    if (ref.optional) return undefined;
    throw new ContainerConfigError(`${kind.toLowerCase()} "${name}" not found`);
  }
  const v = dataOf(obj, kind).get(ref.key);
  if (v === undefined) {
    if (ref.optional) return undefined;
    throw new ContainerConfigError(`couldn't find key ${ref.key} in ${kind} ${pod.namespace}/${name}`);
  }
  return v.toString('utf8');
}

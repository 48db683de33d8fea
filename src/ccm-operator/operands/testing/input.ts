/** RenderInput for tests: every image, a custom namespace and infrastructure name that show where they land. */
import type {
  KubernetesObject,
  V1Container,
  V1DaemonSet,
  V1Deployment,
  V1PodSpec,
} from '@kubernetes/client-node';
import { DEFAULT_IMAGES } from '../images.ts';
import type { OperandPlatform, RenderInput } from '../types.ts';

export function renderInput(platform: OperandPlatform, over: Partial<RenderInput> = {}): RenderInput {
  return {
    platform,
    platformStatus: {},
    infrastructureName: 'mycluster-x7k2p',
    images: { ...DEFAULT_IMAGES },
    openstackCcm: 'shiftstack',
    namespace: 'openshift-cloud-controller-manager',
    singleReplica: false,
    featureGates: [],
    ...over,
  };
}

export function find<T extends KubernetesObject>(objects: KubernetesObject[], kind: string, name: string): T {
  const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found) {
    const have = objects.map((o) => `${o.kind}/${o.metadata?.name}`).join(', ');
    throw new Error(`no ${kind}/${name} among ${have}`);
  }
  return found as T;
}

export function workloads(objects: KubernetesObject[]): (V1Deployment | V1DaemonSet)[] {
  return objects.filter((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet');
}

export function podOf(w: V1Deployment | V1DaemonSet): V1PodSpec {
  return w.spec!.template.spec!;
}

/** The CCM container (the name upstream substitutes images by). */
export function ccmOf(d: V1Deployment): V1Container {
  const c = podOf(d).containers.find((x) => x.name === 'cloud-controller-manager');
  if (!c) throw new Error(`${d.metadata?.name} has no cloud-controller-manager container`);
  return c;
}

/** A container's whole command line (command, then args) as one text, for flag checks. */
export function commandLine(c: V1Container): string {
  return [...(c.command ?? []), ...(c.args ?? [])].join(' ');
}

/**
 * `$(VAR)` in a container's command and args, as the kubelet expands them: from the container's
 * own env (plain values), `$$` for a literal `$`, and a reference to an unknown variable left as
 * written.
 */
export function expandKubeletVars(c: V1Container, text: string): string {
  const env = new Map(
    (c.env ?? []).flatMap((e) => (e.value !== undefined ? [[e.name, e.value] as const] : [])),
  );
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name: string | undefined) =>
    m === '$$' ? '$' : (env.get(name!) ?? m),
  );
}

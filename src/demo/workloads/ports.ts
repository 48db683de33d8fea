/**
 * Pods share the host's network (as `hostNetwork: true` does), and two replicas of one
 * Deployment would fight for the same port. So each port a container declares (`containerPort`)
 * or probes gets a free host port of its own, per pod; the args say the host port wherever they
 * say the container port after `=` or `:` (`--secure-port=10258`, `--bind-address=127.0.0.1:10258`)
 * and the probes use it. A port free when picked may be taken before the process binds it: the
 * process then fails to start and is restarted with another pick.
 */
import { createServer, type AddressInfo } from 'node:net';
import type { V1Container, V1Probe } from '@kubernetes/client-node';

/** Container port → host port, for one pod. */
export type PortMap = ReadonlyMap<number, number>;

/** A probe's port: a number, or the name of one of the container's ports. */
export function probePort(probe: V1Probe, container: V1Container): number | undefined {
  const port = probe.httpGet?.port ?? probe.tcpSocket?.port;
  if (typeof port === 'number') return port;
  if (port === undefined) return undefined;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/** Every port the pod's containers declare or probe. */
export function podPorts(containers: readonly V1Container[]): Set<number> {
  const out = new Set<number>();
  for (const c of containers) {
    for (const p of c.ports ?? []) out.add(p.containerPort);
    for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
      const port = probe ? probePort(probe, c) : undefined;
      if (port !== undefined) out.add(port);
    }
  }
  return out;
}

/** A free host port for each of `ports`. */
export async function allocatePorts(ports: Iterable<number>): Promise<PortMap> {
  const out = new Map<number, number>();
  for (const p of ports) out.set(p, await freePort());
  return out;
}

/** `arg` with each mapped container port after `=` or `:` replaced by its host port. */
export function rewritePorts(arg: string, ports: PortMap): string {
  return arg.replace(/([=:])(\d+)(?![\w.])/g, (m, sep: string, n: string) => {
    const host = ports.get(Number(n));
    return host === undefined ? m : `${sep}${host}`;
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

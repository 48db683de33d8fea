/**
 * Readiness and liveness probes as the kubelet's prober runs them: the first after
 * `initialDelaySeconds`, then every `periodSeconds` (both scaled with the runner's time scale),
 * each bounded by `timeoutSeconds` (never scaled: it is how long the process may take to answer);
 * the result flips after `successThreshold` successes or `failureThreshold` failures in a row.
 * A readiness probe starts failed (not ready), a liveness probe starts succeeded.
 *
 * httpGet (http or https, whose certificate is not checked, as the kubelet does; 200–399 is a
 * success; `host` defaults to the pod's IP, which is the host's here) and tcpSocket (a connection
 * opens). The port is the host port the container port was mapped to (ports.ts). exec and grpc
 * probes are refused before a pod starts (pod-spec.ts).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { V1Container, V1Probe } from '@kubernetes/client-node';
import type { Clock } from '../../lib/clock.ts';
import { probePort, type PortMap } from './ports.ts';

export type ProbeTarget =
  | {
      kind: 'http';
      scheme: 'http' | 'https';
      host: string;
      port: number;
      path: string;
      headers: Record<string, string>;
    }
  | { kind: 'tcp'; host: string; port: number };

export interface ProbeSpec {
  target: ProbeTarget;
  initialDelayMs: number;
  periodMs: number;
  timeoutMs: number;
  successThreshold: number;
  failureThreshold: number;
}

/** The probe with its defaults, its port mapped and its cadence scaled. */
export function probeSpec(
  probe: V1Probe,
  c: V1Container,
  ports: PortMap,
  hostIP: string,
  scale: (ms: number) => number,
): ProbeSpec {
  const port = probePort(probe, c);
  const hostPort = port === undefined ? undefined : ports.get(port);
  if (hostPort === undefined)
    throw new Error(`container "${c.name}": probe port ${String(port)} is not mapped`);
  const target: ProbeTarget = probe.httpGet
    ? {
        kind: 'http',
        scheme: probe.httpGet.scheme?.toUpperCase() === 'HTTPS' ? 'https' : 'http',
        host: probe.httpGet.host || hostIP,
        port: hostPort,
        path: probe.httpGet.path ?? '/',
        headers: Object.fromEntries((probe.httpGet.httpHeaders ?? []).map((h) => [h.name, h.value])),
      }
    : { kind: 'tcp', host: probe.tcpSocket?.host || hostIP, port: hostPort };
  return {
    target,
    initialDelayMs: scale((probe.initialDelaySeconds ?? 0) * 1000),
    periodMs: scale((probe.periodSeconds ?? 10) * 1000),
    timeoutMs: (probe.timeoutSeconds ?? 1) * 1000,
    successThreshold: probe.successThreshold ?? 1,
    failureThreshold: probe.failureThreshold ?? 3,
  };
}

/** One probe: undefined on success, else what failed (the kubelet's Unhealthy message). */
export function probeOnce(target: ProbeTarget, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    if (target.kind === 'tcp') {
      const socket = connect({ host: target.host, port: target.port, timeout: timeoutMs });
      socket.once('connect', () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once('timeout', () => {
        socket.destroy();
        resolve(`dial tcp ${target.host}:${target.port}: i/o timeout`);
      });
      socket.once('error', (err) => resolve(`dial tcp ${target.host}:${target.port}: ${err.message}`));
      return;
    }
    const send = target.scheme === 'https' ? httpsRequest : httpRequest;
    const url = `${target.scheme}://${target.host}:${target.port}${target.path}`;
    const req = send(
      url,
      {
        method: 'GET',
        headers: { 'user-agent': 'kube-probe/1.32', accept: '*/*', ...target.headers },
        timeout: timeoutMs,
        agent: false,
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(code >= 200 && code < 400 ? undefined : `HTTP probe failed with statuscode: ${code}`);
      },
    );
    req.once('timeout', () => {
      req.destroy();
      resolve(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
    });
    req.once('error', (err) => resolve(`Get "${url}": ${err.message}`));
    req.end();
  });
}

/**
 * Runs a probe until `signal` aborts, calling `onChange` each time its result flips (with the
 * last failure's message when it flips to failed).
 */
export async function runProber(
  spec: ProbeSpec,
  initial: boolean,
  clock: Clock,
  signal: AbortSignal,
  onChange: (ok: boolean, message: string | undefined) => void,
): Promise<void> {
  let state = initial;
  let successes = 0;
  let failures = 0;
  try {
    await clock.sleep(spec.initialDelayMs, signal);
    while (!signal.aborted) {
      const failure = await probeOnce(spec.target, spec.timeoutMs);
      if (signal.aborted) return;
      if (failure === undefined) {
        failures = 0;
        successes++;
        if (!state && successes >= spec.successThreshold) {
          state = true;
          onChange(true, undefined);
        }
      } else {
        successes = 0;
        failures++;
        if (state && failures >= spec.failureThreshold) {
          state = false;
          onChange(false, failure);
        }
      }
      await clock.sleep(spec.periodMs, signal);
    }
  } catch {
    // Stopped while sleeping.
  }
}

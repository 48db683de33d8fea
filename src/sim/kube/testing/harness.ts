/**
 * Test helpers for the Kubernetes emulator: start one on loopback (HTTPS, a kubeconfig in a
 * temporary directory), talk to it over real HTTP as clients do, read watch streams event by
 * event, and wait for conditions.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch } from 'undici';
import { startKubeSim, type RunningKubeSim, type StartKubeSimOptions } from '../start.ts';
import type { KubeEmulator } from '../emulator.ts';

export interface KubeResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface KubeRequestOptions {
  contentType?: string;
  accept?: string;
  /** Another token, or null to send none. */
  token?: string | null;
  userAgent?: string;
}

export interface WatchEvent {
  type: string;
  object: any;
  /** performance.now() when the line arrived (latency measurements). */
  receivedAt: number;
}

export interface WatchStream {
  events: WatchEvent[];
  /** Resolves with the first event (after those already consumed) matching the predicate. */
  next(
    pred?: (e: { type: string; object: any }) => boolean,
    timeoutMs?: number,
  ): Promise<{ type: string; object: any }>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  status: number;
  close(): void;
}

export interface TestKube {
  sim: RunningKubeSim;
  readonly em: KubeEmulator;
  dir: string;
  kubeconfigPath: string;
  req<T = any>(
    method: string,
    path: string,
    body?: unknown,
    opts?: KubeRequestOptions,
  ): Promise<KubeResponse<T>>;
  /** A GET with the token and the given headers, the response as it comes (binary bodies, 304s). */
  raw(path: string, headers?: Record<string, string>): Promise<Response>;
  watch(path: string): Promise<WatchStream>;
  close(): Promise<void>;
}

export async function startTestKube(options: StartKubeSimOptions = {}): Promise<TestKube> {
  const dir = await mkdtemp(join(tmpdir(), 'shiftstack-kube-'));
  const sim = await startKubeSim({ kubeconfigPath: join(dir, 'kubeconfig'), ...options });
  // HTTP/1.1, as src/kube/client.ts talks to an API server (undici's HTTP/2 teardown is unsafe);
  // the emulator's HTTP/2 is tested with node:http2 and kubectl.
  const agent = new Agent({ connect: sim.caPem ? { ca: sim.caPem } : {}, allowH2: false });
  const headers = (opts: KubeRequestOptions, body: unknown): Record<string, string> => {
    const h: Record<string, string> = { accept: opts.accept ?? 'application/json' };
    if (opts.token !== null) h.authorization = `Bearer ${opts.token ?? sim.token}`;
    if (body !== undefined) h['content-type'] = opts.contentType ?? 'application/json';
    if (opts.userAgent) h['user-agent'] = opts.userAgent;
    return h;
  };
  const streams = new Set<WatchStream>();
  const t: TestKube = {
    sim,
    get em() {
      return sim.emulator;
    },
    dir,
    kubeconfigPath: sim.kubeconfigPath,
    async req(method, path, body, opts = {}) {
      const res = await fetch(`${sim.url}${path}`, {
        method,
        headers: headers(opts, body),
        dispatcher: agent,
        // Strings and bytes (protobuf bodies) go as they are; anything else as JSON.
        ...(body !== undefined
          ? { body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body) }
          : {}),
      });
      const text = await res.text();
      let parsed: any = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // Not JSON (YAML, plain text): keep the text.
      }
      return { status: res.status, body: parsed, text, headers: res.headers as unknown as Headers };
    },
    async raw(path, extra = {}) {
      return fetch(`${sim.url}${path}`, {
        headers: { authorization: `Bearer ${sim.token}`, ...extra },
        dispatcher: agent,
      });
    },
    async watch(path) {
      const controller = new AbortController();
      const res = await fetch(`${sim.url}${path}`, {
        headers: headers({}, undefined),
        dispatcher: agent,
        signal: controller.signal,
      });
      const events: WatchEvent[] = [];
      let consumed = 0;
      let wake: (() => void) | undefined;
      let endedResolve!: () => void;
      const ended = new Promise<void>((r) => (endedResolve = r));
      let done = false;
      void (async () => {
        let buf = '';
        try {
          const decoder = new TextDecoder();
          for await (const chunk of res.body ?? []) {
            buf += decoder.decode(chunk as Uint8Array, { stream: true });
            let nl = buf.indexOf('\n');
            while (nl >= 0) {
              const line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              if (line.trim())
                events.push({
                  ...(JSON.parse(line) as { type: string; object: any }),
                  receivedAt: performance.now(),
                });
              nl = buf.indexOf('\n');
            }
            wake?.();
          }
        } catch {
          // Aborted by close(): the stream simply ends.
        }
        done = true;
        wake?.();
        endedResolve();
      })();
      const stream: WatchStream = {
        events,
        status: res.status,
        ended,
        async next(pred = () => true, timeoutMs = 5_000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            while (consumed < events.length) {
              const e = events[consumed++] as WatchEvent;
              if (pred(e)) return e;
            }
            if (done) throw new Error(`watch ended; events: ${JSON.stringify(events.map((e) => e.type))}`);
            const left = deadline - Date.now();
            if (left <= 0)
              throw new Error(
                `no matching watch event; got ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name]))}`,
              );
            await Promise.race([new Promise<void>((r) => (wake = r)), sleep(left)]);
          }
        },
        close() {
          controller.abort();
          streams.delete(stream);
        },
      };
      streams.add(stream);
      return stream;
    },
    async close() {
      for (const s of streams) s.close();
      await sim.dispose();
      await agent.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return t;
}

/** Polls until `fn` returns something truthy (komega's Eventually). */
export async function eventually<T>(
  fn: () => Promise<T> | T,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    await sleep(options.intervalMs ?? 10);
  }
  throw new Error(
    `timed out waiting for ${options.what ?? 'condition'}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`,
  );
}

/** A namespaced ConfigMap body. */
export function configMap(
  name: string,
  data: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): any {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data };
}

/** A small namespaced CRD with a status subresource, defaults and validation. */
export function widgetCRD(
  scope: 'Namespaced' | 'Cluster' = 'Namespaced',
  plural = 'widgets',
  kind = 'Widget',
): any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      scope,
      names: { plural, singular: kind.toLowerCase(), kind, shortNames: [kind.toLowerCase().slice(0, 2)] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          selectableFields: [{ jsonPath: '.spec.color' }],
          additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['size'],
                  properties: {
                    size: { type: 'integer', minimum: 1 },
                    color: { type: 'string', enum: ['red', 'blue'], default: 'red' },
                    tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
                    ports: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['name'],
                      items: {
                        type: 'object',
                        required: ['name'],
                        properties: { name: { type: 'string' }, port: { type: 'integer' } },
                      },
                    },
                  },
                },
                status: {
                  type: 'object',
                  properties: { phase: { type: 'string' }, observedGeneration: { type: 'integer' } },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/**
 * capo's controllers on a thread of their own, for the benches that time them against the cloud's
 * floor. In a deployment the API server and the cloud run elsewhere; in one bench process the two
 * emulators took about half the CPU while 100 machines started together, and capo waited for them
 * on one core. On a worker thread capo has its own event loop and V8 heap, the emulators theirs,
 * and a 2-core machine runs both at once. Everything between them is still HTTP: the kubeconfig
 * and the identity Secret's clouds.yaml, as `shiftstack capo` reaches them.
 *
 * The thread's side is bench/lib/capo-thread-main.ts; this is the bench's handle on it.
 */
import { Worker } from 'node:worker_threads';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { StartCapoOptions } from '../../src/capo/testing/env.ts';

/** What a bench reads of a running capo: its metrics, its CPU, and its end. */
export interface CapoHandle {
  registry: { getMetricsAsJSON(): Promise<MetricObjectWithValues<MetricValue<string>>[]> };
  /** CPU time capo itself used (its thread alone when it has one), µs. */
  cpuUsage(): Promise<NodeJS.CpuUsage>;
  /** capo's heap after a GC, MB: its thread's own (the whole process's when it has none). */
  heapMb(): Promise<number>;
  /** The thread's event-loop delay since start, ms (undefined in-process: the bench measures it). */
  lag?(): Promise<{ p50: number; p99: number; max: number }>;
  stop(): Promise<void>;
}

/** Asked of the thread: a reply carries the same id. */
export type CapoThreadRequest = { id: number; op: 'metrics' | 'lag' | 'heap' | 'stop' };
export type CapoThreadReply = { id: number; value?: unknown; error?: string };

/** Only plain data crosses to the thread: options holding a logger or a clock stay in-process. */
export type ThreadCapoOptions = Omit<StartCapoOptions, 'log' | 'clock'>;

export async function startCapoThread(kubeconfigPath: string, opts: ThreadCapoOptions): Promise<CapoHandle> {
  const worker = new Worker(new URL('./capo-thread-main.ts', import.meta.url), {
    workerData: { kubeconfigPath, opts },
  });
  let next = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let exited: Error | undefined;
  worker.on('message', (m: CapoThreadReply) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) p?.reject(new Error(`capo thread: ${m.error}`));
    else p?.resolve(m.value);
  });
  const fail = (err: Error) => {
    exited ??= err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`capo thread exited (${code})`)));
  const ask = <T>(op: CapoThreadRequest['op']): Promise<T> => {
    if (exited) return Promise.reject(exited);
    const id = next++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ id, op } satisfies CapoThreadRequest);
    });
  };
  // The thread says it started (id −1 is the announcement) once its manager runs.
  await new Promise<void>((resolve, reject) => {
    pending.set(-1, { resolve: () => resolve(), reject });
  });
  return {
    registry: { getMetricsAsJSON: () => ask('metrics') },
    cpuUsage: () => worker.cpuUsage(),
    lag: () => ask('lag'),
    heapMb: () => ask('heap'),
    async stop() {
      await ask('stop');
      await worker.terminate();
    },
  };
}

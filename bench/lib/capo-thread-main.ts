/**
 * The capo thread of bench/lib/capo-thread.ts: starts the controllers as the beds do (startCapo on
 * the kubeconfig), then answers the bench's questions until told to stop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startCapo } from '../../src/capo/testing/env.ts';
import { heapMb } from './machines.ts';
import type { CapoThreadReply, CapoThreadRequest, ThreadCapoOptions } from './capo-thread.ts';

const port = parentPort!;
const { kubeconfigPath, opts } = workerData as { kubeconfigPath: string; opts: ThreadCapoOptions };
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
const capo = await startCapo({ kube: { kubeconfigPath } }, opts);
port.on('message', (m: CapoThreadRequest) => {
  void answer(m).then(
    (value) => port.postMessage({ id: m.id, value } satisfies CapoThreadReply),
    (err: unknown) => port.postMessage({ id: m.id, error: String(err) } satisfies CapoThreadReply),
  );
});
port.postMessage({ id: -1 } satisfies CapoThreadReply);

async function answer(m: CapoThreadRequest): Promise<unknown> {
  switch (m.op) {
    case 'metrics':
      return capo.registry.getMetricsAsJSON();
    case 'heap':
      // This isolate's heap: V8's figures are per thread.
      return heapMb();
    case 'lag':
      return { p50: lag.percentile(50) / 1e6, p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 };
    case 'stop':
      lag.disable();
      await capo.stop();
      return undefined;
  }
}

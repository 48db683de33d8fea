/**
 * Drives an engine call the way a controller does, minus the queue: call, and while the answer is
 * Pending sleep its hint (capped by `maxSleepMs`, so tests on the fast profile stay quick), then
 * call again. Bounded by `maxCalls`.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface Drive<R> {
  result: R;
  calls: number;
  results: R[];
}

export async function drive<R extends { phase: string; retryAfterMs?: number }>(
  step: () => Promise<R>,
  options: { maxCalls?: number; maxSleepMs?: number } = {},
): Promise<Drive<R>> {
  const maxCalls = options.maxCalls ?? 2_000;
  const results: R[] = [];
  for (let calls = 1; calls <= maxCalls; calls++) {
    const result = await step();
    results.push(result);
    if (result.phase !== 'Pending') return { result, calls, results };
    await sleep(Math.min(result.retryAfterMs ?? 0, options.maxSleepMs ?? Infinity));
  }
  throw new Error(`not done after ${maxCalls} calls; last: ${JSON.stringify(results.at(-1))}`);
}

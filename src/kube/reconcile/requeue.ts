/**
 * A requeue decided in the middle of a reconcile counts from then, not from the reconcile's end:
 * what follows the decision (other calls, the status write) would otherwise delay the next look by
 * as long. While 100 machines start at once that tail was up to a few hundred ms, and a volume
 * looked at that late holds its server back as long.
 */
import type { Result } from './types.ts';

/** `result` with its requeueAfterMs counted from `from` (same clock as `now`); never below 1 ms. */
export function requeueCountedFrom(result: Result, from: number | undefined, now: number): Result {
  if (result.requeueAfterMs === undefined || from === undefined || from >= now) return result;
  return { ...result, requeueAfterMs: Math.max(1, result.requeueAfterMs - (now - from)) };
}

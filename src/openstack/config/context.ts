/**
 * The one place that reads the real process: the CLI passes this to the loaders, and tests pass a
 * context of their own so no developer's clouds.yaml or OS_* variables can leak into a run.
 */
import { homedir } from 'node:os';
import type { LoadContext } from './types.ts';

export function processContext(signal?: AbortSignal): LoadContext {
  return { env: process.env, homedir: homedir(), cwd: process.cwd(), ...(signal ? { signal } : {}) };
}

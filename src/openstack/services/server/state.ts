/** The recorded state, copied: what the engine hands to `record` and in results never aliases what it keeps working on. */
import type { ServerState } from './types.ts';

export function copyState(from: ServerState): ServerState {
  return {
    ...(from.resolved !== undefined ? { resolved: structuredClone(from.resolved) } : {}),
    ...(from.resources !== undefined ? { resources: structuredClone(from.resources) } : {}),
    ...(from.instanceID !== undefined ? { instanceID: from.instanceID } : {}),
  };
}

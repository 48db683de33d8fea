/** The recorded state, copied: what the engine hands to `record` and in results never aliases what it keeps working on. */
import { cloneJson } from '../../../lib/json.ts';
import type { ServerState } from './types.ts';

export function copyState(from: ServerState): ServerState {
  return {
    ...(from.resolved !== undefined ? { resolved: cloneJson(from.resolved) } : {}),
    ...(from.resources !== undefined ? { resources: cloneJson(from.resources) } : {}),
    ...(from.instanceID !== undefined ? { instanceID: from.instanceID } : {}),
  };
}

/**
 * `serverGroupName` without `serverGroupID`: the Nova server group of that name, created when
 * absent (policy soft-anti-affinity, as MAPO's CreateServerGroup), never deleted (as MAPO). Nova has
 * no unique names, so the lookup and create of one (identity, name) run once at a time in the
 * process: the Machines of a MachineSet created together find one group, not one each. More than
 * one group of the name is the user's to fix.
 */
import type { ServerGroup } from '../../openstack/compute/v2/server-groups.ts';
import type { ComputeV2 } from '../../openstack/compute/v2/index.ts';

export const SERVER_GROUP_POLICY = 'soft-anti-affinity';

export type ServerGroupResult =
  | { ok: true; id: string; created: boolean }
  /** Several groups have the name: which one the Machine means is the user's to say. */
  | { ok: false; message: string };

export class ServerGroupsByName {
  private readonly inflight = new Map<string, Promise<ServerGroupResult>>();

  /**
   * The group named `name` for the identity `identity` (any string naming the credentials and
   * cloud), through `compute`. Concurrent calls for one (identity, name) share one lookup.
   */
  ensure(
    identity: string,
    name: string,
    compute: ComputeV2,
    signal?: AbortSignal,
  ): Promise<ServerGroupResult> {
    const key = JSON.stringify([identity, name]);
    let p = this.inflight.get(key);
    if (!p) {
      p = findOrCreate(name, compute, signal).finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }
}

async function findOrCreate(
  name: string,
  compute: ComputeV2,
  signal?: AbortSignal,
): Promise<ServerGroupResult> {
  // Nova has no name filter on server groups.
  const all: ServerGroup[] = await compute.serverGroups.list({}, { signal });
  const named = all.filter((g) => g.name === name);
  if (named.length > 1) {
    return {
      ok: false,
      message: `${named.length} server groups are named ${name} (${named.map((g) => g.id).join(', ')}): set serverGroupID to the one to use, or delete the others`,
    };
  }
  if (named[0]) return { ok: true, id: named[0].id, created: false };
  const group = await compute.serverGroups.create({ name, policy: SERVER_GROUP_POLICY }, { signal });
  return { ok: true, id: group.id, created: true };
}

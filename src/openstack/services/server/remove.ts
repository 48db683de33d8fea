/**
 * remove(): one call towards "nothing left". It works from what was recorded — never from the
 * spec, which may have changed since (the bastion's old bug), nor from names derived from it:
 *   no resolved and no instance id → nothing was ever created (the create path records resolved first);
 *   adopt again (ports by name + network, the server by name) and record what was found;
 *   the server: delete, then wait for 404 / DELETED / SOFT_DELETED (Nova takes its volumes along);
 *   the volumes recorded in `resources.volumes` that are left (the create failed, or never happened);
 *   each port with its trunk: the trunk's subports recorded in `resources.subports` before they are
 *   detached, then the trunk and the port;
 *   the recorded subports' ports (a subport detached by a process that died before deleting its
 *   port is found here, and nowhere else), each dropped from the record once gone.
 */
import type { Server } from '../../compute/v2/servers.ts';
import type { EngineContext, StepContext } from './context.ts';
import { runCall } from './outcome.ts';
import { adoptPorts, deletePortAndTrunk, deleteSubportPorts, rememberSubports } from './ports.ts';
import { deleteServer, findServerByName, getServer } from './server.ts';
import type { CallOptions, RemoveInput, RemoveResult, ServerState } from './types.ts';
import { deleteVolumes } from './volumes.ts';

export async function removeServer(
  engine: EngineContext,
  input: RemoveInput,
  options: CallOptions = {},
): Promise<RemoveResult> {
  return runCall(engine, input, options, (ctx, state, record) => steps(ctx, input.name, state, record));
}

async function steps(
  ctx: StepContext,
  name: string,
  state: ServerState,
  record: () => Promise<void>,
): Promise<RemoveResult> {
  const { api, journal, signal } = ctx;
  const gone = (): RemoveResult => ({ phase: 'Ready', actions: journal.actions, state: journal.state });
  const { resolved } = state;
  if (!resolved && state.instanceID === undefined) return gone();

  const resources = (state.resources ??= { ports: [] });
  if (resolved && (await adoptPorts(api, resolved.ports, resources, signal)).grew) await record();

  let server: Server | undefined;
  if (state.instanceID !== undefined) {
    server = await getServer(ctx, state.instanceID);
  } else {
    server = await findServerByName(ctx, name);
    if (server) {
      state.instanceID = server.id;
      await record();
    }
  }
  const serverLeft = server && (await deleteServer(ctx, server));
  if (serverLeft) return journal.pending(serverLeft);

  // What was recorded, never names derived from the spec or the plan: a volume never asked for
  // needs no Cinder call (and no block-storage service) to be known gone.
  const volumesLeft = await deleteVolumes(
    ctx,
    (resources.volumes ?? []).map((v) => v.name),
  );
  if (volumesLeft) return journal.pending(volumesLeft);

  const onSubports = async (portIDs: readonly string[]) => {
    if (rememberSubports(resources, portIDs)) await record();
  };
  for (const port of resources.ports) {
    const wait = await deletePortAndTrunk(ctx, port.id, onSubports);
    if (wait) return journal.pending(wait);
  }
  const subportsLeft = await deleteSubportPorts(ctx, resources, record);
  if (subportsLeft) return journal.pending(subportsLeft);
  return gone();
}

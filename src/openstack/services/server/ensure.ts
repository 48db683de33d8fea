/**
 * ensure(): one call towards a running server. See engine.ts for the contract.
 *
 * Order (CAPO's OpenStackServer controller): resolve and record, then return so the caller saves it
 * (and its finalizer) before anything exists → adopt ports by name → ensure each port, recording
 * its id at once → adopt the server by name → volumes → create the server, recording its id → its
 * state. With a recorded instance id, only the server is read.
 */
import type { Server } from '../../compute/v2/servers.ts';
import { OpenStackHttpError } from '../../core/errors.ts';
import { waitHint } from './backoff.ts';
import type { EngineContext, StepContext } from './context.ts';
import { runCall } from './outcome.ts';
import { adoptPorts, ensurePort } from './ports.ts';
import { resolveServerSpec, volumeSpecs } from './resolve.ts';
import { createServer, findServerByName, getServer, GONE_STATES, instanceAddresses } from './server.ts';
import type { CallOptions, EnsureInput, EnsureResult, ServerSpec, ServerState } from './types.ts';
import { ensureVolumes } from './volumes.ts';

export async function ensureServer(
  engine: EngineContext,
  input: EnsureInput,
  options: CallOptions = {},
): Promise<EnsureResult> {
  return runCall(engine, input, options, (ctx, state, record) => steps(ctx, input.spec, state, record));
}

async function steps(
  ctx: StepContext,
  spec: ServerSpec,
  state: ServerState,
  record: () => Promise<void>,
): Promise<EnsureResult> {
  const { api, journal, policy, signal } = ctx;
  if (!state.resolved) {
    state.resolved = await resolveServerSpec(api, spec, signal, ctx.lookups);
    state.resources ??= { ports: [] };
    await record();
    return journal.pending({
      reason: 'Resolved',
      retryAfterMs: 0,
      message: `spec of ${spec.name} resolved: ${state.resolved.ports.length} ports; recorded before anything is created`,
    });
  }
  const resolved = state.resolved;
  const resources = (state.resources ??= { ports: [] });

  if (state.instanceID !== undefined) {
    const server = await getServer(ctx, state.instanceID);
    if (server) return report(ctx, server);
    return journal.failed(
      'InstanceNotFound',
      `server ${state.instanceID} was recorded but is gone; delete the object to clean up and create a new one`,
      true,
    );
  }

  if (await adoptPorts(api, resolved.ports, resources, signal)) await record();
  const portIDs: string[] = [];
  for (const [i, desired] of resolved.ports.entries()) {
    const port = await ensurePort(ctx, desired, resources.ports[i]?.id, async (p) => {
      if (resources.ports[i]?.id === p.id) return;
      resources.ports[i] = { id: p.id };
      await record();
    });
    portIDs.push(port.id);
  }

  // A server whose create answer was lost: adopt it rather than make a second one.
  const existing = await findServerByName(ctx, spec.name);
  if (existing) {
    state.instanceID = existing.id;
    await record();
    return report(ctx, existing);
  }

  const volumes = resolved.volumes ?? volumeSpecs(spec);
  const made = await ensureVolumes(ctx, volumes, resolved.imageID, resources, record);
  if (!('ids' in made)) return journal.pending(made);

  let id: string;
  try {
    id = await createServer(ctx, spec, resolved, portIDs, volumes, made.ids);
  } catch (err) {
    // Its ports stay recorded, found again by the next call and deleted by remove: nothing leaks.
    if (OpenStackHttpError.is(err) && (err.status >= 500 || err.status === 400 || err.status === 403)) {
      return journal.failed(
        'InstanceCreateFailed',
        `creating server ${spec.name}: ${err.serviceMessage || err.message}`,
        err.status === 400,
      );
    }
    throw err;
  }
  state.instanceID = id;
  await record();
  return journal.pending({
    reason: 'InstanceCreated',
    retryAfterMs: policy.initialMs,
    message: `server ${id} created`,
  });
}

/** The server's state as a result: ACTIVE is Ready, BUILD waits, ERROR is terminal. */
function report(ctx: StepContext, server: Server): EnsureResult {
  const { journal, policy } = ctx;
  const extra = { instanceState: server.status, server };
  switch (server.status) {
    case 'ACTIVE':
      return {
        phase: 'Ready',
        instanceID: server.id,
        instanceState: 'ACTIVE',
        server,
        addresses: instanceAddresses(server),
        actions: journal.actions,
        state: journal.state,
      };
    case 'BUILD':
      return journal.pending(
        {
          reason: 'InstanceBuilding',
          retryAfterMs: waitHint(server.created, ctx.now(), policy),
          message: `server ${server.id} is building${server['OS-EXT-STS:task_state'] ? ` (${server['OS-EXT-STS:task_state']})` : ''}`,
        },
        extra,
      );
    case 'ERROR':
      return journal.failed(
        'InstanceError',
        `server ${server.id} is in ERROR: ${server.fault?.message ?? 'Nova gives no fault'}`,
        true,
        extra,
      );
    default:
      if (GONE_STATES.has(server.status))
        return journal.failed('InstanceDeleted', `server ${server.id} is ${server.status}`, true, extra);
      return journal.pending(
        {
          reason: 'InstanceNotReady',
          retryAfterMs: policy.idleMs,
          message: `server ${server.id} is ${server.status}`,
        },
        extra,
      );
  }
}

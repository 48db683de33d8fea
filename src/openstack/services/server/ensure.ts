/**
 * ensure(): one call towards a running server. See engine.ts for the contract.
 *
 * Order: resolve, list the volumes (on a first call the ports by name beside them), and record
 * both (awaited: the caller saves the resolved spec and the volumes' names, with its finalizer,
 * before anything exists) → while recorded volumes are still being made, only they are read →
 * adopt ports by name → together: each port, recording its id beside its tags; and the server
 * adopted by name (unless a volume is yet to be made: no server can hold it), else the volumes →
 * create the server, recording its id (left to the caller's write of the result with
 * `recordsResult`: the call returns right after) → its state. With a recorded instance id, only
 * the server is read. (CAPO returns after recording the resolved spec and makes ports before
 * volumes; one call doing both and the volumes beside the ports saves a trip through the queue and
 * the ports' time.)
 */
import type { Server } from '../../compute/v2/servers.ts';
import { OpenStackHttpError } from '../../core/errors.ts';
import { waitHint } from './backoff.ts';
import type { EngineContext, StepContext } from './context.ts';
import { runCall, settled } from './outcome.ts';
import { adoptPorts, ensurePort } from './ports.ts';
import { resolveServerSpec, volumeSpecs } from './resolve.ts';
import { createServer, findServerByName, getServer, GONE_STATES, instanceAddresses } from './server.ts';
import type {
  CallOptions,
  EnsureInput,
  EnsureResult,
  ResolvedPortSpec,
  ServerResources,
  ServerSpec,
  ServerState,
} from './types.ts';
import { ensureVolumes, listVolumes, rememberVolume, volumesUnfinished } from './volumes.ts';

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
  let fresh = false;
  if (!state.resolved) {
    state.resolved = await resolveServerSpec(api, spec, signal, ctx.lookups);
    state.resources ??= { ports: [] };
    fresh = true;
  }
  const resolved = state.resolved;
  const resources = (state.resources ??= { ports: [] });

  if (state.instanceID !== undefined) {
    if (fresh) await record();
    const server = await getServer(ctx, state.instanceID);
    if (server) return report(ctx, server);
    return journal.failed(
      'InstanceNotFound',
      `server ${state.instanceID} was recorded but is gone; delete the object to clean up and create a new one`,
      true,
    );
  }

  const volumes = resolved.volumes ?? volumeSpecs(spec);
  // Volumes still being made: nothing else can move (the server waits for them, and none of ours
  // can exist yet), so only they are read until they are available.
  const listing = listVolumes(ctx, volumes, resources, resources.ports.length === resolved.ports.length);
  // A first call looks for its ports by name beside its volumes (reads both, for an object whose
  // status was lost; nothing is made before the record below): one round trip fewer.
  const adopting = fresh ? adoptPorts(api, resolved.ports, resources, signal) : undefined;
  // Its failure is thrown where it is used, below; a return before then must not leave it unhandled.
  adopting?.catch(() => undefined);
  if (fresh) {
    // The resolved spec is recorded (awaited) before anything is created, so a crash from here on
    // finds what we made through this record; with it the volumes' names (each must be recorded
    // before its create): one write, not two. Not when Cinder could not be read (a cloud without
    // block storage: a server that never got a volume needs none to go away). The same call goes
    // on (a second trip through the caller's queue would only wait behind every other object).
    const cinderAnswered = await listing.then(
      () => true,
      () => false,
    );
    if (cinderAnswered) for (const v of volumes) rememberVolume(resources, v.name);
    // The ports it found go into the same record.
    await adopting?.catch(() => undefined);
    await record();
  }
  const listed = await listing;
  if ('reason' in listed) return journal.pending(listed);

  const adopted = await (adopting ?? adoptPorts(api, resolved.ports, resources, signal));
  if (adopted.grew) await record();
  // The ports and the volumes together: a volume made from an image takes seconds, a port a
  // fraction of one, and neither needs the other.
  const [portIDs, serverOrVolumes] = await settled(
    ensurePorts(ctx, resolved.ports, resources, adopted.missing, record),
    (async () => {
      // A server whose create answer was lost: adopt it rather than make a second one (before
      // the volumes, which such a server holds). While one of its volumes is missing or still
      // being made there is none to adopt: ours is created only once all are available, and
      // holds them as long as it lives (a first call for 1,000 machines: 1,000 Nova lists fewer).
      if (!volumesUnfinished(volumes, listed.found)) {
        const existing = await findServerByName(ctx, spec.name);
        if (existing) return { existing };
      }
      return ensureVolumes(ctx, volumes, resolved.imageID, resources, record, listed.found);
    })(),
  );
  if ('existing' in serverOrVolumes) {
    state.instanceID = serverOrVolumes.existing.id;
    if (!ctx.recordsResult) await record();
    return report(ctx, serverOrVolumes.existing);
  }
  const made = serverOrVolumes;
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
  // Nothing follows: a caller that writes the result's state at once records it there.
  if (!ctx.recordsResult) await record();
  return journal.pending({
    reason: 'InstanceCreated',
    retryAfterMs: policy.initialMs,
    message: `server ${id} created`,
  });
}

/** Each port in order, its id recorded as soon as it exists; their ids. */
async function ensurePorts(
  ctx: StepContext,
  desired: readonly ResolvedPortSpec[],
  resources: ServerResources,
  missing: number | undefined,
  record: () => Promise<void>,
): Promise<string[]> {
  const portIDs: string[] = [];
  for (const [i, spec] of desired.entries()) {
    // The first port adoptPorts listed and did not find needs no second list.
    const port = await ensurePort(ctx, spec, resources.ports[i]?.id, i === missing, async (p) => {
      if (resources.ports[i]?.id === p.id) return;
      resources.ports[i] = { id: p.id };
      await record();
    });
    portIDs.push(port.id);
  }
  return portIDs;
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

/**
 * A server's ports and their trunks. Ports are found again by name + network (CAPO's rule, and the
 * fix for CAPO #1404: a port is never created twice, however often the server create fails), and
 * each port id is handed to the caller as soon as it exists. A trunk is found by its parent port.
 */
import { isNotFound, OpenStackHttpError } from '../../core/errors.ts';
import type { Port, PortCreateOpts } from '../../network/v2/ports.ts';
import type { Trunk } from '../../network/v2/trunks.ts';
import type { ServerApi } from './api.ts';
import type { StepContext } from './context.ts';
import { settled, StepFailure, type Wait } from './outcome.ts';
import { defined, union } from './resolve.ts';
import type { ResolvedPortSpec, ServerResources } from './types.ts';

/** The ports named `name` on `networkID`; a name is not unique in Neutron, so several is possible. */
async function portsNamed(api: ServerApi, spec: ResolvedPortSpec, signal: AbortSignal | undefined) {
  const found = await api.network.ports
    .list({ name: spec.name, network_id: spec.networkID }, { signal })
    .all();
  // Neutron's name filter is exact; the check keeps a cloud that disagrees from adopting a stranger.
  return found.filter((p) => p.name === spec.name && p.network_id === spec.networkID);
}

function multiple(spec: ResolvedPortSpec, found: readonly Port[]): StepFailure {
  return new StepFailure(
    'MultiplePorts',
    `${found.length} ports are named ${spec.name} on network ${spec.networkID} (${found.map((p) => p.id).join(', ')}); delete the extra ones`,
    false,
  );
}

/**
 * Extends `resources.ports` in order with the ports found by name + network, stopping at the first
 * missing one (ports are created in order, so what follows a missing port was never made). Returns
 * whether anything was added (the caller records it before going on) and the index of the port
 * listed and not found, if any (its ensurePort need not list it again).
 */
export async function adoptPorts(
  api: ServerApi,
  desired: readonly ResolvedPortSpec[],
  resources: ServerResources,
  signal?: AbortSignal,
): Promise<{ grew: boolean; missing: number | undefined }> {
  let grew = false;
  for (let i = resources.ports.length; i < desired.length; i++) {
    const spec = desired[i]!;
    const found = await portsNamed(api, spec, signal);
    if (found.length === 0) return { grew, missing: i };
    if (found.length > 1) throw multiple(spec, found);
    resources.ports.push({ id: found[0]!.id });
    grew = true;
  }
  return { grew, missing: undefined };
}

/** Neutron's create body for a resolved port (without tags: many clouds refuse them at create). */
export function portCreateBody(spec: ResolvedPortSpec): PortCreateOpts {
  const secure = !spec.disablePortSecurity;
  const profile: Record<string, unknown> = {};
  if (spec.profile?.ovsHWOffload) profile['capabilities'] = ['switchdev'];
  if (spec.profile?.trustedVF) profile['trusted'] = true;
  const body: PortCreateOpts = {
    network_id: spec.networkID,
    name: spec.name,
    ...defined({
      description: spec.description,
      admin_state_up: spec.adminStateUp,
      mac_address: spec.macAddress,
      'binding:host_id': spec.hostID,
      propagate_uplink_status: spec.propagateUplinkStatus,
    }),
  };
  if (spec.vnicType !== undefined)
    body['binding:vnic_type'] = spec.vnicType as PortCreateOpts['binding:vnic_type'];
  if (Object.keys(profile).length > 0) body['binding:profile'] = profile;
  if (spec.fixedIPs.length > 0)
    body.fixed_ips = spec.fixedIPs.map((f) => defined({ subnet_id: f.subnet, ip_address: f.ipAddress }));
  if (spec.disablePortSecurity !== undefined) body.port_security_enabled = secure;
  if (secure && spec.securityGroups.length > 0) body.security_groups = [...spec.securityGroups];
  // Neutron refuses address pairs on a port without port security.
  if (secure && spec.allowedAddressPairs?.length)
    body.allowed_address_pairs = spec.allowedAddressPairs.map(
      (p) => defined({ ip_address: p.ipAddress, mac_address: p.macAddress }) as { ip_address: string },
    );
  for (const v of spec.valueSpecs ?? []) body[v.key] = v.value;
  return body;
}

/**
 * The port of `spec`: by the recorded id, else by name + network (unless `listedMissing`: this call
 * has just listed it and found none), else created. `onPort` is called with the port as soon as
 * its id is known, before tags and trunk, so the caller records it first. Then the tags are
 * completed and, for a trunk port, the trunk (named like the port, same tags).
 */
export async function ensurePort(
  ctx: StepContext,
  spec: ResolvedPortSpec,
  recordedID: string | undefined,
  listedMissing: boolean,
  onPort: (port: Port) => Promise<void>,
): Promise<Port> {
  const { api, signal, journal } = ctx;
  let port: Port;
  if (recordedID !== undefined) {
    try {
      port = await api.network.ports.get(recordedID, { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      throw new StepFailure(
        'PortNotFound',
        `port ${recordedID} (${spec.name}) was recorded but is gone; it was deleted outside the controller`,
        true,
      );
    }
  } else {
    const found = listedMissing ? [] : await portsNamed(api, spec, signal);
    if (found.length > 1) throw multiple(spec, found);
    if (found[0]) {
      port = found[0];
    } else {
      port = await api.network.ports.create(portCreateBody(spec), { signal });
      journal.actions.push({ verb: 'create', resource: 'port', id: port.id, name: port.name });
    }
  }
  // Its id recorded beside its tags (neither needs the other; a port made and not yet recorded is
  // found again by name, and tagging twice is harmless).
  const made = port;
  const tagging = async (): Promise<Port> => {
    if (spec.tags.every((t) => made.tags.includes(t))) return made;
    const tags = union(made.tags, spec.tags);
    await api.network.tags.replace('ports', made.id, tags, { signal });
    journal.actions.push({ verb: 'tag', resource: 'port', id: made.id, name: made.name });
    return { ...made, tags };
  };
  [, port] = await settled(onPort(made), tagging());
  if (spec.trunk) await ensureTrunk(ctx, spec, port);
  return port;
}

async function ensureTrunk(ctx: StepContext, spec: ResolvedPortSpec, port: Port): Promise<Trunk> {
  const { api, signal, journal } = ctx;
  const [found] = await api.network.trunks.list({ port_id: port.id }, { signal }).all();
  let trunk: Trunk;
  if (found) {
    trunk = found;
  } else {
    if (!(await api.network.extensions.has('trunk', { signal })))
      throw new StepFailure(
        'InvalidRequest',
        `port ${spec.name} asks for a trunk, but Neutron has no trunk extension`,
        true,
      );
    trunk = await api.network.trunks.create(
      { port_id: port.id, name: spec.name, ...defined({ description: spec.description }) },
      { signal },
    );
    journal.actions.push({ verb: 'create', resource: 'trunk', id: trunk.id, name: trunk.name });
  }
  if (!spec.tags.every((t) => trunk.tags.includes(t))) {
    const tags = union(trunk.tags, spec.tags);
    await api.network.tags.replace('trunks', trunk.id, tags, { signal });
    journal.actions.push({ verb: 'tag', resource: 'trunk', id: trunk.id, name: trunk.name });
    trunk = { ...trunk, tags };
  }
  return trunk;
}

/** How many times one call re-reads after Neutron says the port became a trunk parent meanwhile. */
const TRUNK_PARENT_ATTEMPTS = 3;

const isTrunkParent = (err: unknown) =>
  OpenStackHttpError.is(err) && err.status === 409 && err.errorType === 'PortInUseAsTrunkParent';

function conflict(ctx: StepContext, what: string, err: unknown): Wait {
  return {
    reason: 'Conflict',
    retryAfterMs: ctx.policy.initialMs,
    message: `${what}: ${err instanceof Error ? err.message : String(err)}`,
  };
}

/**
 * Deletes a port and the trunk it is the parent of. The trunk's subports are handed to `onSubports`
 * before anything else happens to them (the caller records them: once detached, nothing but that
 * record leads to them), then detached, then the trunk and the port are deleted; the subports'
 * ports are `deleteSubportPorts`'s job (CAPO deletes them too: nothing else ever would). Whatever is
 * already gone is fine. A conflict (a subport still detaching, a trunk that appeared since the read)
 * is re-read a bounded number of times, then left for the next call as a Wait — never slept on.
 * Returns undefined once the port is gone.
 */
export async function deletePortAndTrunk(
  ctx: StepContext,
  portID: string,
  onSubports: (portIDs: readonly string[]) => Promise<void>,
): Promise<Wait | undefined> {
  const { api, signal, journal, policy } = ctx;
  for (let attempt = 0; attempt < TRUNK_PARENT_ATTEMPTS; attempt++) {
    const trunks = await api.network.trunks.list({ port_id: portID }, { signal }).all();
    for (const trunk of trunks) {
      const wait = await deleteTrunk(ctx, trunk, onSubports);
      if (wait) return wait;
    }
    try {
      await api.network.ports.delete(portID, { signal });
      journal.actions.push({ verb: 'delete', resource: 'port', id: portID });
      return undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      if (isTrunkParent(err)) continue;
      if (OpenStackHttpError.is(err) && err.status === 409) return conflict(ctx, `port ${portID}`, err);
      throw err;
    }
  }
  return {
    reason: 'Conflict',
    retryAfterMs: policy.initialMs,
    message: `port ${portID} keeps being a trunk parent after ${TRUNK_PARENT_ATTEMPTS} reads`,
  };
}

async function deleteTrunk(
  ctx: StepContext,
  trunk: Trunk,
  onSubports: (portIDs: readonly string[]) => Promise<void>,
): Promise<Wait | undefined> {
  const { api, signal, journal } = ctx;
  const subports = trunk.sub_ports.map((s) => s.port_id);
  if (subports.length > 0) {
    // Before the detach, and before the trunk delete (Neutron detaches them with the trunk too).
    await onSubports(subports);
    try {
      await api.network.trunks.removeSubports(
        trunk.id,
        subports.map((port_id) => ({ port_id })),
        { signal },
      );
      journal.actions.push({ verb: 'detach', resource: 'subports', id: trunk.id, name: trunk.name });
    } catch (err) {
      // 404: the trunk or a subport went meanwhile (another remover); the next read shows what is left.
      if (isNotFound(err)) return conflict(ctx, `trunk ${trunk.id} subports`, err);
      if (OpenStackHttpError.is(err) && err.status === 409)
        return conflict(ctx, `trunk ${trunk.id} subports`, err);
      throw err;
    }
  }
  try {
    await api.network.trunks.delete(trunk.id, { signal });
    journal.actions.push({ verb: 'delete', resource: 'trunk', id: trunk.id, name: trunk.name });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    // TrunkInUse (the parent is still bound), or subports added meanwhile.
    if (OpenStackHttpError.is(err) && err.status === 409) return conflict(ctx, `trunk ${trunk.id}`, err);
    throw err;
  }
  return undefined;
}

/** Adds to `resources.subports` the ids not there yet; whether it grew (the caller then records it). */
export function rememberSubports(resources: ServerResources, portIDs: readonly string[]): boolean {
  const known = new Set((resources.subports ?? []).map((s) => s.id));
  const fresh = [...new Set(portIDs)].filter((id) => !known.has(id));
  if (fresh.length === 0) return false;
  resources.subports = [...(resources.subports ?? []), ...fresh.map((id) => ({ id }))];
  return true;
}

/**
 * Deletes the ports recorded in `resources.subports`, once the server's trunks are gone (so none is
 * a subport of ours any more), and drops each from the record once it is gone — the field with the
 * last one — recording the change. One still a subport elsewhere (re-added by its owner) stays
 * recorded, and the call is left for later as a Wait. Undefined once none is left.
 */
export async function deleteSubportPorts(
  ctx: StepContext,
  resources: ServerResources,
  record: () => Promise<void>,
): Promise<Wait | undefined> {
  const { api, signal, journal } = ctx;
  const recorded = resources.subports ?? [];
  const left: { id: string }[] = [];
  let wait: Wait | undefined;
  for (const { id } of recorded) {
    try {
      await api.network.ports.delete(id, { signal });
      journal.actions.push({ verb: 'delete', resource: 'port', id });
    } catch (err) {
      if (isNotFound(err)) continue;
      if (OpenStackHttpError.is(err) && err.status === 409) {
        left.push({ id });
        wait ??= conflict(ctx, `subport ${id}`, err);
        continue;
      }
      throw err;
    }
  }
  if (left.length === recorded.length) {
    if (recorded.length === 0) delete resources.subports;
    return wait;
  }
  if (left.length > 0) resources.subports = left;
  else delete resources.subports;
  await record();
  return wait;
}

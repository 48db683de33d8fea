/** Trunks (VLAN-aware VMs): a parent port plus subports tagged with a segmentation id. */
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import { getPort, getTrunk, requireOwner } from './access.ts';
import { invalidAttr, pyRepr } from './errors.ts';
import { syncTrunk } from './ports.ts';
import { OWNER, type SubPort, type TrunkRecord } from './records.ts';
import { checkBoolean, checkString, checkUuid, type AttrMap, type Body, type Check } from './schema.ts';
import type { Actor, NeutronState } from './state.ts';

const readOnly = { post: false, put: false };

const SEGMENTATION_TYPES = ['vlan', 'inherit'];

/** neutron-lib's validate_subports: each needs a port_id and, for vlan, an id in 1..4094. */
const checkSubports: Check = (v, attr) => {
  if (!Array.isArray(v))
    throw invalidAttr(attr, `Invalid data format for subports: '${pyRepr(v)}' is not a list`);
  const ids = new Set<string>();
  const segs = new Set<string>();
  return v.map((raw: unknown) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw invalidAttr(attr, `Invalid subport details '${pyRepr(raw)}': not a dictionary`);
    }
    const sp = raw as Record<string, unknown>;
    if (sp.port_id === undefined) throw invalidAttr(attr, `A subport is missing port_id: '${pyRepr(raw)}'`);
    const portId = checkUuid(sp.port_id, attr) as string;
    if (ids.has(portId)) throw invalidAttr(attr, `Duplicate subport port_id '${portId}'`);
    ids.add(portId);
    const type = sp.segmentation_type;
    const id = sp.segmentation_id;
    if (type === undefined || id === undefined) {
      if (type === 'inherit') return { port_id: portId, segmentation_type: 'inherit', segmentation_id: 0 };
      throw invalidAttr(
        attr,
        `Invalid subport details '${pyRepr(raw)}': missing segmentation information. Must specify both segmentation_id and segmentation_type`,
      );
    }
    if (typeof type !== 'string' || !SEGMENTATION_TYPES.includes(type)) {
      throw invalidAttr(attr, `Invalid segmentation_type '${pyRepr(type)}'`);
    }
    const n =
      typeof id === 'number' ? id : typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : Number.NaN;
    if (!Number.isInteger(n) || n < 1 || n > 4094) {
      throw invalidAttr(
        attr,
        `Invalid segmentation id '${pyRepr(id)}' for subport ${portId}: must be 1 to 4094`,
      );
    }
    const key = `${type} ${n}`;
    if (segs.has(key)) throw invalidAttr(attr, `Segmentation ID '${n}' is used more than once`);
    segs.add(key);
    return { port_id: portId, segmentation_type: type, segmentation_id: n };
  });
};

export const TRUNK_ATTRS: AttrMap = {
  id: readOnly,
  name: { post: true, put: true, check: checkString(255) },
  description: { post: true, put: true, check: checkString(255) },
  admin_state_up: { post: true, put: true, check: checkBoolean },
  port_id: { post: true, put: false, required: true, check: checkUuid },
  status: readOnly,
  sub_ports: { post: true, put: false, check: checkSubports },
  tags: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
  revision_number: readOnly,
};

function trunkDisabled(id: string): SimError {
  return new SimError(409, `Trunk ${id} is currently disabled.`, { type: 'TrunkDisabled' });
}

/** Checks new subports against the cloud and the trunk, then makes them subports. */
function attachSubports(state: NeutronState, actor: Actor, trunk: TrunkRecord, subports: SubPort[]): void {
  for (const sp of subports) {
    const port = getPort(state, actor, sp.port_id);
    if (port.id === trunk.port_id || state.trunkByParent.has(port.id) || state.trunkBySubport.has(port.id)) {
      throw new SimError(409, `Port ${port.id} is in use by another trunk.`, { type: 'TrunkPortInUse' });
    }
    const clash = trunk.sub_ports.find(
      (x) => x.segmentation_type === sp.segmentation_type && x.segmentation_id === sp.segmentation_id,
    );
    if (clash && sp.segmentation_type !== 'inherit') {
      throw new SimError(
        409,
        `segmentation_type ${sp.segmentation_type} and segmentation_id ${sp.segmentation_id} already in use on trunk ${trunk.id}.`,
        { type: 'DuplicateSubPort' },
      );
    }
  }
  for (const sp of subports) {
    const port = state.ports.get(sp.port_id)!;
    state.setDevice(port, trunk.id, OWNER.trunkSubport);
    state.bump(port);
    state.trunkBySubport.set(port.id, trunk.id);
    trunk.sub_ports.push(sp);
  }
}

function detachSubport(state: NeutronState, portId: string): void {
  state.trunkBySubport.delete(portId);
  const port = state.ports.get(portId);
  if (!port) return;
  state.setDevice(port, '', '');
  port['binding:host_id'] = '';
  port['binding:vif_type'] = 'unbound';
  port['binding:vif_details'] = {};
  port.status = 'DOWN';
  state.bump(port);
}

export function createTrunk(state: NeutronState, actor: Actor, body: Body): TrunkRecord {
  const parent = getPort(state, actor, body.port_id as string);
  requireOwner(actor, parent, 'create_trunk');
  const project = state.ownerFor(actor, body.project_id, 'create_trunk');
  if (state.trunkByParent.has(parent.id) || state.trunkBySubport.has(parent.id)) {
    throw new SimError(
      409,
      `Port ${parent.id} is currently in use and is not eligible for use as a parent port.`,
      { type: 'ParentPortInUse' },
    );
  }
  state.checkQuota('trunk', project);
  const trunk: TrunkRecord = {
    ...state.standard(uuid(), project, (body.description as string | undefined) ?? ''),
    name: (body.name as string | undefined) ?? '',
    admin_state_up: (body.admin_state_up as boolean | undefined) ?? true,
    status: 'DOWN',
    port_id: parent.id,
    sub_ports: [],
  };
  attachSubports(state, actor, trunk, (body.sub_ports as SubPort[] | undefined) ?? []);
  state.trunks.insert(trunk);
  state.trunkByParent.set(parent.id, trunk.id);
  syncTrunk(state, trunk.id);
  state.changed();
  return trunk;
}

export function updateTrunk(
  state: NeutronState,
  actor: Actor,
  id: string,
  body: Body,
  ifMatch?: string,
): TrunkRecord {
  const trunk = getTrunk(state, actor, id);
  requireOwner(actor, trunk, 'update_trunk');
  state.checkRevision(trunk, ifMatch);
  for (const k of ['name', 'description', 'admin_state_up'] as const) {
    if (body[k] !== undefined) (trunk as unknown as Record<string, unknown>)[k] = body[k];
  }
  state.bump(trunk);
  syncTrunk(state, trunk.id);
  state.changed();
  return trunk;
}

export function deleteTrunk(state: NeutronState, actor: Actor, id: string, ifMatch?: string): void {
  const trunk = getTrunk(state, actor, id);
  requireOwner(actor, trunk, 'delete_trunk');
  state.checkRevision(trunk, ifMatch);
  if (!trunk.admin_state_up) throw trunkDisabled(trunk.id);
  for (const sp of trunk.sub_ports) detachSubport(state, sp.port_id);
  state.trunkByParent.delete(trunk.port_id);
  state.trunks.remove(trunk.id);
  state.changed();
}

function subportsBody(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || !('sub_ports' in body)) {
    throw invalidAttr('sub_ports', `Invalid data format for subports: '${pyRepr(body)}'`);
  }
  return body.sub_ports;
}

export function addSubports(state: NeutronState, actor: Actor, id: string, body: unknown): TrunkRecord {
  const trunk = getTrunk(state, actor, id);
  requireOwner(actor, trunk, 'add_subports');
  const subports = checkSubports(subportsBody(body), 'sub_ports') as SubPort[];
  if (!trunk.admin_state_up) throw trunkDisabled(trunk.id);
  attachSubports(state, actor, trunk, subports);
  state.bump(trunk);
  syncTrunk(state, trunk.id);
  state.changed();
  return trunk;
}

export function removeSubports(state: NeutronState, actor: Actor, id: string, body: unknown): TrunkRecord {
  const trunk = getTrunk(state, actor, id);
  requireOwner(actor, trunk, 'remove_subports');
  const raw = subportsBody(body);
  if (!Array.isArray(raw))
    throw invalidAttr('sub_ports', `Invalid data format for subports: '${pyRepr(raw)}' is not a list`);
  if (!trunk.admin_state_up) throw trunkDisabled(trunk.id);
  const ids = raw.map(
    (sp: unknown) => checkUuid((sp as { port_id?: unknown } | null)?.port_id, 'sub_ports') as string,
  );
  for (const pid of ids) {
    if (!trunk.sub_ports.some((sp) => sp.port_id === pid)) {
      throw new SimError(404, `SubPort on trunk ${trunk.id} with parent port ${pid} not found.`, {
        type: 'SubPortNotFound',
      });
    }
  }
  for (const pid of ids) detachSubport(state, pid);
  trunk.sub_ports = trunk.sub_ports.filter((sp) => !ids.includes(sp.port_id));
  state.bump(trunk);
  state.changed();
  return trunk;
}

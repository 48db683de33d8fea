/**
 * Members: /v2/lbaas/pools/{pool_id}/members, including the batch PUT that makes the pool's member
 * list what the body says (members matched by address and port keep their id).
 */
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { authorize, listScope, type Ctx } from './context.ts';
import { invalidSubresource } from './errors.ts';
import { creating, deleting, updating } from './lifecycle.ts';
import { listResponse, PROVISIONED_ATTRIBUTES } from './listing.ts';
import { StoredMember } from './member-record.ts';
import { newProvisioned, type MemberRecord, type PoolRecord } from './model.ts';
import { ProviderDriver } from './providers.ts';
import { selectOne } from './reads.ts';
import {
  bool,
  int,
  ip,
  mandatory,
  objList,
  parseObject,
  parseRoot,
  str,
  strList,
  uuidField,
  type Fields,
  type Parsed,
} from './schema.ts';
import { memberTarget, poolLocks, poolTarget } from './targets.ts';

const MEMBER_MUTABLE_FIELDS: Fields = {
  name: str(),
  admin_state_up: bool(),
  weight: int(0, 256),
  backup: bool(),
  monitor_address: ip(),
  monitor_port: int(1, 65535),
  tags: strList(),
};

export const MEMBER_CREATE_FIELDS: Fields = {
  ...MEMBER_MUTABLE_FIELDS,
  address: mandatory(ip()),
  protocol_port: mandatory(int(1, 65535)),
  subnet_id: uuidField(),
  project_id: str(),
  tenant_id: str(),
};

const BATCH_FIELDS: Fields = { members: mandatory(objList(MEMBER_CREATE_FIELDS)) };

/**
 * One copy of each member name, address and subnet id: a cluster's Nodes are members of every pool,
 * a thousand copies each otherwise. Bounded: emptied when it grows past what any cloud here holds.
 */
const strings = new Map<string, string>();
function intern<T extends string | null>(s: T): T {
  if (s === null) return s;
  const known = strings.get(s);
  if (known !== undefined) return known as T;
  if (strings.size >= 1_000_000) strings.clear();
  strings.set(s, s);
  return s;
}

export function newMember(m: Parsed, pool: PoolRecord): MemberRecord {
  const provisioned = newProvisioned(m, pool.project_id);
  return new StoredMember(pool, {
    ...provisioned,
    name: intern(provisioned.name),
    address: intern(m.address as string),
    protocol_port: m.protocol_port as number,
    weight: (m.weight as number | null) ?? 1,
    backup: (m.backup as boolean | null) ?? false,
    subnet_id: intern((m.subnet_id as string | null) ?? null),
    monitor_address: (m.monitor_address as string | null) ?? null,
    monitor_port: (m.monitor_port as number | null) ?? null,
  });
}

export function duplicateMember(address: string, port: number): SimError {
  return new SimError(
    409,
    `Another member on this pool is already using ip ${address} on protocol_port ${port}`,
  );
}

const MEMBER_ATTRIBUTES: Readonly<Record<string, (m: MemberRecord) => unknown>> = {
  ...PROVISIONED_ATTRIBUTES,
  name: (m) => m.name,
  address: (m) => m.address,
  protocol_port: (m) => m.protocol_port,
  weight: (m) => m.weight,
  backup: (m) => m.backup,
  subnet_id: (m) => m.subnet_id,
  monitor_address: (m) => m.monitor_address,
  monitor_port: (m) => m.monitor_port,
};

export function memberHandlers(ctx: Ctx) {
  const { store, life, views, cloud } = ctx;

  function checkSubnet(id: unknown): void {
    if (typeof id === 'string' && !cloud.network?.getSubnet(id)) throw invalidSubresource('Subnet', id);
  }

  return {
    list: (req: SimRequest): SimResponse => {
      const pool = store.pool(req.params.pool_id!);
      authorize(req, pool.project_id);
      const visible = listScope(req);
      return listResponse(req, {
        collection: 'members',
        items: store.membersOf(pool),
        visible,
        lookup: (id) => store.findMember(id, pool),
        view: (m) => views.member(m),
        attributes: MEMBER_ATTRIBUTES,
        tags: (m) => m.tags,
      });
    },

    get: (req: SimRequest): SimResponse => {
      const pool = store.pool(req.params.pool_id!);
      const m = store.memberIn(pool, req.params.member_id!);
      authorize(req, m.project_id);
      return { status: 200, body: { member: selectOne(views.member(m), req) } };
    },

    create: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'member', MEMBER_CREATE_FIELDS);
      const { pool, lb } = poolTarget(store, req, req.params.pool_id!);
      checkSubnet(body.subnet_id);
      life.assertPoolChildWritable(pool, lb);
      const address = body.address as string;
      const port = body.protocol_port as number;
      if (store.membersOf(pool).some((m) => m.address === address && m.protocol_port === port)) {
        throw duplicateMember(address, port);
      }
      new ProviderDriver(lb.provider).member(body);
      const member = newMember(body, pool);
      store.addMember(member);
      life.createChild(lb, poolLocks(store, pool), 'member', [member]);
      return { status: 201, body: { member: views.member(member) } };
    },

    update: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'member', MEMBER_MUTABLE_FIELDS);
      const { pool, member, lb } = memberTarget(store, req);
      life.assertPoolChildWritable(pool, lb);
      new ProviderDriver(lb.provider).member(body);
      applyMemberUpdate(member, body);
      life.updateChild(lb, poolLocks(store, pool), member);
      return { status: 200, body: { member: views.member(member) } };
    },

    remove: (req: SimRequest): SimResponse => {
      const { pool, member, lb } = memberTarget(store, req);
      life.assertPoolChildWritable(pool, lb);
      life.deleteChild(lb, poolLocks(store, pool), member, () => store.removeMember(member));
      return { status: 204 };
    },

    /**
     * PUT /pools/{id}/members: members matching an existing address+port are updated in place,
     * new ones created, the others deleted (kept with `?additive_only=true`). 202, no body.
     */
    batch: (req: SimRequest): SimResponse => {
      const body = parseObject(req.body, BATCH_FIELDS, 'members');
      const { pool, lb } = poolTarget(store, req, req.params.pool_id!);
      const wanted = body.members as Parsed[];
      const additive = ['true', '1', 'yes', 'on'].includes(
        (req.query.get('additive_only') ?? '').toLowerCase(),
      );
      for (const m of wanted) checkSubnet(m.subnet_id);
      life.assertPoolChildWritable(pool, lb);
      const driver = new ProviderDriver(lb.provider);
      for (const m of wanted) driver.member(m);

      const key = (address: unknown, port: unknown) => `${String(address)}|${String(port)}`;
      const current = new Map(store.membersOf(pool).map((m) => [key(m.address, m.protocol_port), m]));
      const wantedKeys = new Set(wanted.map((m) => key(m.address, m.protocol_port)));
      const created: MemberRecord[] = [];
      const updated: MemberRecord[] = [];
      for (const m of wanted) {
        const existing = current.get(key(m.address, m.protocol_port));
        if (existing) {
          applyMemberUpdate(existing, {
            // The batch body is a list of full member definitions: unset defaults are reapplied.
            weight: 1,
            backup: false,
            admin_state_up: true,
            ...m,
          });
          if ('subnet_id' in m) existing.subnet_id = intern((m.subnet_id as string | null) ?? null);
          updated.push(existing);
        } else {
          created.push(newMember(m, pool));
        }
      }
      const deleted = additive
        ? []
        : [...current.values()].filter((m) => !wantedKeys.has(key(m.address, m.protocol_port)));
      if (created.length + updated.length + deleted.length === 0) return { status: 202 };
      for (const m of created) store.addMember(m);
      life.write(
        lb,
        poolLocks(store, pool),
        [
          ...created.map((m) => creating(m, 'ACTIVE')),
          ...updated.map(updating),
          ...deleted.map((m) => deleting(m, () => store.removeMember(m))),
        ],
        'octavia.member.batch',
      );
      return { status: 202 };
    },
  };
}

function applyMemberUpdate(m: MemberRecord, body: Parsed): void {
  if ('name' in body) m.name = intern((body.name as string | null) ?? '');
  if ('admin_state_up' in body) m.admin_state_up = (body.admin_state_up as boolean | null) ?? true;
  if ('weight' in body) m.weight = (body.weight as number | null) ?? 1;
  if ('backup' in body) m.backup = (body.backup as boolean | null) ?? false;
  if ('monitor_address' in body) m.monitor_address = (body.monitor_address as string | null) ?? null;
  if ('monitor_port' in body) m.monitor_port = (body.monitor_port as number | null) ?? null;
  if ('tags' in body) m.tags = (body.tags as string[] | null) ?? [];
}

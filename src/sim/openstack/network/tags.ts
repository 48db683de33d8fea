/** The tag extension: /v2.0/{resources}/{id}/tags[/{tag}] on every standard-attribute resource. */
import { SimError } from '../core/errors.ts';
import type { SimResponse } from '../core/types.ts';
import { canSeeNetwork, canSeeOwned, canSeePort, canSeeSubnet } from './access.ts';
import { invalidInput, notFound, policyNotAuthorized, pyRepr } from './errors.ts';
import type { StandardAttrs } from './records.ts';
import type { Actor, NeutronState } from './state.ts';
import { canSeeSubnetPool } from './subnetpools.ts';

/** neutron's tag column is String(60). */
const MAX_TAG_LEN = 60;

interface Taggable {
  resource: string;
  find(state: NeutronState, actor: Actor, id: string): StandardAttrs | undefined;
}

const owned =
  (pick: (s: NeutronState) => { get(id: string): (StandardAttrs & { project_id: string }) | undefined }) =>
  (state: NeutronState, actor: Actor, id: string) => {
    const rec = pick(state).get(id);
    return rec && canSeeOwned(actor, rec) ? rec : undefined;
  };

const TAGGABLE: Readonly<Record<string, Taggable>> = {
  networks: {
    resource: 'network',
    find: (s, a, id) => {
      const n = s.networks.get(id);
      return n && canSeeNetwork(a, n) ? n : undefined;
    },
  },
  subnets: {
    resource: 'subnet',
    find: (s, a, id) => {
      const n = s.subnets.get(id);
      return n && canSeeSubnet(s, a, n) ? n : undefined;
    },
  },
  ports: {
    resource: 'port',
    find: (s, a, id) => {
      const p = s.ports.get(id);
      return p && canSeePort(s, a, p) ? p : undefined;
    },
  },
  routers: { resource: 'router', find: owned((s) => s.routers) },
  floatingips: { resource: 'floatingip', find: owned((s) => s.floatingIps) },
  'security-groups': { resource: 'security_group', find: owned((s) => s.securityGroups) },
  trunks: { resource: 'trunk', find: owned((s) => s.trunks) },
  subnetpools: {
    resource: 'subnetpool',
    find: (s, a, id) => {
      const p = s.subnetPools.get(id);
      return p && canSeeSubnetPool(a, p) ? p : undefined;
    },
  },
};

function target(
  state: NeutronState,
  actor: Actor,
  collection: string,
  id: string,
  write: boolean,
): StandardAttrs {
  const kind = TAGGABLE[collection];
  if (!kind) throw new SimError(404, 'The resource could not be found.', { type: 'HTTPNotFound' });
  const rec = kind.find(state, actor, id);
  if (!rec) throw notFound.tagResource(kind.resource, id);
  if (write && !actor.isAdmin && rec.project_id !== actor.projectId) {
    throw policyNotAuthorized(`rule:update_${kind.resource}_tags`);
  }
  return rec;
}

function checkTag(tag: unknown): string {
  if (typeof tag !== 'string') throw invalidInput(`'${pyRepr(tag)}' is not a valid string`);
  if (tag.length > MAX_TAG_LEN) throw invalidInput(`'${tag}' exceeds maximum length of ${MAX_TAG_LEN}`);
  return tag;
}

const sorted = (tags: string[]) => [...tags].sort();

export function getTags(state: NeutronState, actor: Actor, collection: string, id: string): SimResponse {
  return { status: 200, body: { tags: sorted(target(state, actor, collection, id, false).tags) } };
}

export function hasTag(
  state: NeutronState,
  actor: Actor,
  collection: string,
  id: string,
  tag: string,
): SimResponse {
  const rec = target(state, actor, collection, id, false);
  if (!rec.tags.includes(tag)) throw notFound.tag(tag);
  return { status: 204 };
}

export function addTag(
  state: NeutronState,
  actor: Actor,
  collection: string,
  id: string,
  tag: string,
): SimResponse {
  const rec = target(state, actor, collection, id, true);
  checkTag(tag);
  if (!rec.tags.includes(tag)) {
    rec.tags.push(tag);
    state.bump(rec);
    state.changed();
  }
  return { status: 201 };
}

export function removeTag(
  state: NeutronState,
  actor: Actor,
  collection: string,
  id: string,
  tag: string,
): SimResponse {
  const rec = target(state, actor, collection, id, true);
  if (!rec.tags.includes(tag)) throw notFound.tag(tag);
  rec.tags = rec.tags.filter((t) => t !== tag);
  state.bump(rec);
  state.changed();
  return { status: 204 };
}

export function replaceTags(
  state: NeutronState,
  actor: Actor,
  collection: string,
  id: string,
  body: unknown,
): SimResponse {
  const rec = target(state, actor, collection, id, true);
  if (typeof body !== 'object' || body === null || !('tags' in body)) throw invalidInput('Invalid tags body');
  const tags = body.tags;
  if (!Array.isArray(tags)) throw invalidInput(`'${pyRepr(tags)}' is not a list`);
  for (const t of tags) checkTag(t);
  const dups = (tags as string[]).filter((t, i) => tags.indexOf(t) !== i);
  if (dups.length > 0) throw invalidInput(`Duplicate items in the list: '${dups.join(', ')}'`);
  rec.tags = [...(tags as string[])];
  state.bump(rec);
  state.changed();
  return { status: 200, body: { tags: sorted(rec.tags) } };
}

export function clearTags(state: NeutronState, actor: Actor, collection: string, id: string): SimResponse {
  const rec = target(state, actor, collection, id, true);
  if (rec.tags.length > 0) {
    rec.tags = [];
    state.bump(rec);
    state.changed();
  }
  return { status: 204 };
}

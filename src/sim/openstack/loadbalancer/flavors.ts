/**
 * Octavia flavors (API 2.6): flavor profiles (admin only: a provider and its driver's settings) and
 * the flavors users pick by id at load balancer create (`flavor_id`), which decide its provider.
 * Flavors carry no timestamps on the wire; `created_at` is kept only to order lists as Octavia does.
 */
import { uuid } from '../core/ids.ts';
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { requireAdmin, type Ctx } from './context.ts';
import { notFound, providerNotEnabled, validation } from './errors.ts';
import { listResponse } from './listing.ts';
import { octaviaTime } from './model.ts';
import { isEnabledProvider } from './providers.ts';
import { selectOne } from './reads.ts';
import { bool, mandatory, parseRoot, str, uuidField, type Fields } from './schema.ts';

export interface FlavorProfileRecord {
  id: string;
  name: string;
  provider_name: string;
  /** A JSON object, as text (the driver's settings, e.g. `{"loadbalancer_topology": "SINGLE"}`). */
  flavor_data: string;
  created_at: string;
}

export interface FlavorRecord {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  flavor_profile_id: string;
  created_at: string;
}

const PROFILE_PUT_FIELDS: Fields = { name: str(), provider_name: str(), flavor_data: str(4096) };
const PROFILE_POST_FIELDS: Fields = {
  name: mandatory(str()),
  provider_name: mandatory(str()),
  flavor_data: mandatory(str(4096)),
};
const FLAVOR_PUT_FIELDS: Fields = { name: str(), description: str(), enabled: bool() };
const FLAVOR_POST_FIELDS: Fields = {
  ...FLAVOR_PUT_FIELDS,
  name: mandatory(str()),
  flavor_profile_id: mandatory(uuidField()),
};

/** Octavia's ObjectInUse. */
const inUse = (object: string, id: string) =>
  new SimError(409, `${object} ${id} is in use and cannot be modified.`);

/** Octavia's DisabledOption: a flavor that exists but is disabled. */
export const disabledOption = (option: string, value: string) =>
  new SimError(400, `The selected ${option} is not allowed in this deployment: ${value}`);

/** Octavia's ProviderFlavorMismatchError: the asked provider is not the flavor's. */
export const providerFlavorMismatch = (flavor: string, provider: string) =>
  new SimError(400, `Flavor '${flavor}' is not compatible with provider '${provider}'`);

function profileView(p: FlavorProfileRecord): Record<string, unknown> {
  return { id: p.id, name: p.name, provider_name: p.provider_name, flavor_data: p.flavor_data };
}

function flavorView(f: FlavorRecord, admin: boolean): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: f.id,
    name: f.name,
    description: f.description,
    enabled: f.enabled,
  };
  if (admin) view.flavor_profile_id = f.flavor_profile_id;
  return view;
}

function checkFlavorData(text: string): void {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw validation('Invalid flavor_data: not a JSON object.');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw validation('Invalid flavor_data: not a JSON object.');
}

export function flavorHandlers(ctx: Ctx) {
  const { store } = ctx;
  const profile = (id: string) => store.flavorprofiles.get(id) ?? fail('Flavor profile', id);
  const flavor = (id: string) => store.flavors.get(id) ?? fail('Flavor', id);
  const isAdmin = (req: SimRequest) => req.auth?.isAdmin === true;

  return {
    listProfiles: (req: SimRequest): SimResponse => {
      requireAdmin(req);
      return listResponse(req, {
        collection: 'flavorprofiles',
        items: store.flavorprofiles.ordered(),
        lookup: (id) => store.flavorprofiles.get(id),
        view: profileView,
        attributes: {
          id: (p) => p.id,
          name: (p) => p.name,
          provider_name: (p) => p.provider_name,
        },
      });
    },

    getProfile: (req: SimRequest): SimResponse => {
      requireAdmin(req);
      const p = profile(req.params.flavorprofile_id!);
      return { status: 200, body: { flavorprofile: selectOne(profileView(p), req) } };
    },

    createProfile: (req: SimRequest): SimResponse => {
      requireAdmin(req);
      const body = parseRoot(req.body, 'flavorprofile', PROFILE_POST_FIELDS);
      const provider = body.provider_name as string;
      if (!isEnabledProvider(provider)) throw providerNotEnabled(provider);
      checkFlavorData(body.flavor_data as string);
      const record: FlavorProfileRecord = {
        id: uuid(),
        name: body.name as string,
        provider_name: provider,
        flavor_data: body.flavor_data as string,
        created_at: octaviaTime(),
      };
      store.flavorprofiles.add(record);
      ctx.cloud.changed();
      return { status: 201, body: { flavorprofile: profileView(record) } };
    },

    updateProfile: (req: SimRequest): SimResponse => {
      requireAdmin(req);
      const body = parseRoot(req.body, 'flavorprofile', PROFILE_PUT_FIELDS);
      const p = profile(req.params.flavorprofile_id!);
      if (typeof body.provider_name === 'string') {
        if (!isEnabledProvider(body.provider_name)) throw providerNotEnabled(body.provider_name);
        p.provider_name = body.provider_name;
      }
      if (typeof body.flavor_data === 'string') {
        checkFlavorData(body.flavor_data);
        p.flavor_data = body.flavor_data;
      }
      if (typeof body.name === 'string') p.name = body.name;
      ctx.cloud.changed();
      return { status: 200, body: { flavorprofile: profileView(p) } };
    },

    removeProfile: (req: SimRequest): SimResponse => {
      requireAdmin(req);
      const p = profile(req.params.flavorprofile_id!);
      if (store.flavors.ordered().some((f) => f.flavor_profile_id === p.id))
        throw inUse('Flavor profile', p.id);
      store.flavorprofiles.delete(p.id);
      ctx.cloud.changed();
      return { status: 204 };
    },

    listFlavors: (req: SimRequest): SimResponse => {
      const admin = isAdmin(req);
      return listResponse(req, {
        collection: 'flavors',
        items: store.flavors.ordered(),
        lookup: (id) => store.flavors.get(id),
        view: (f) => flavorView(f, admin),
        attributes: {
          id: (f) => f.id,
          name: (f) => f.name,
          description: (f) => f.description,
          enabled: (f) => f.enabled,
          ...(admin ? { flavor_profile_id: (f: FlavorRecord) => f.flavor_profile_id } : {}),
        },
      });
    },

    getFlavor: (req: SimRequest): SimResponse => {
      const f = flavor(req.params.flavor_id!);
      return { status: 200, body: { flavor: selectOne(flavorView(f, isAdmin(req)), req) } };
    },

    createFlavor: (req: SimRequest): SimResponse => {
      requireAdmin(req);
      const body = parseRoot(req.body, 'flavor', FLAVOR_POST_FIELDS);
      const profileId = body.flavor_profile_id as string;
      if (!store.flavorprofiles.has(profileId)) throw validation('Invalid flavor_profile_id.');
      const record: FlavorRecord = {
        id: uuid(),
        name: body.name as string,
        description: (body.description as string | null | undefined) ?? '',
        enabled: (body.enabled as boolean | null | undefined) ?? true,
        flavor_profile_id: profileId,
        created_at: octaviaTime(),
      };
      store.flavors.add(record);
      ctx.cloud.changed();
      return { status: 201, body: { flavor: flavorView(record, true) } };
    },

    updateFlavor: (req: SimRequest): SimResponse => {
      requireAdmin(req);
      const body = parseRoot(req.body, 'flavor', FLAVOR_PUT_FIELDS);
      const f = flavor(req.params.flavor_id!);
      if (typeof body.name === 'string') f.name = body.name;
      if ('description' in body) f.description = (body.description as string | null) ?? '';
      if (typeof body.enabled === 'boolean') f.enabled = body.enabled;
      ctx.cloud.changed();
      return { status: 200, body: { flavor: flavorView(f, true) } };
    },

    removeFlavor: (req: SimRequest): SimResponse => {
      requireAdmin(req);
      const f = flavor(req.params.flavor_id!);
      if (store.loadbalancers.ordered().some((lb) => lb.flavor_id === f.id)) throw inUse('Flavor', f.id);
      store.flavors.delete(f.id);
      ctx.cloud.changed();
      return { status: 204 };
    },
  };
}

/**
 * The provider a create with `flavorId` gets, with Octavia's checks in its order: the flavor must
 * exist (else "Invalid flavor_id."), be enabled, and name the same provider as `asked`, if given.
 */
export function flavorProvider(ctx: Ctx, flavorId: string, asked: string | undefined): string {
  const f = ctx.store.flavors.get(flavorId);
  if (!f) throw validation('Invalid flavor_id.');
  if (!f.enabled) throw disabledOption('flavor', flavorId);
  const provider = ctx.store.flavorprofiles.get(f.flavor_profile_id)?.provider_name;
  if (!provider) throw validation('Invalid flavor_id.');
  if (asked !== undefined && asked !== provider) throw providerFlavorMismatch(flavorId, asked);
  return provider;
}

function fail(resource: string, id: string): never {
  throw notFound(resource, id);
}

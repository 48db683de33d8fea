/**
 * POST /servers: the request schema per microversion, the checks nova-api makes before its 202
 * (flavor, image, networks, volumes, key pair, zone, group), and the new BUILD records.
 */
import { randomBytes } from 'node:crypto';
import { SimError } from '../core/errors.ts';
import { isoSeconds, uuid } from '../core/ids.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import type { Nova } from './context.ts';
import { DEFAULT_AZ, HOSTS } from './hosts.ts';
import { asRecord, auth, json, links, projectOf } from './http.ts';
import type { Lifecycle } from './server-lifecycle.ts';
import { validateNetworks, validateSecurityGroups } from './server-networking.ts';
import type { NetworkRequest, ServerRecord } from './server-store.ts';
import { validateBlockDevices, type BlockDeviceRequest } from './server-volumes.ts';
import { POWER } from './states.ts';
import * as t from './schema.ts';

const MAX_METADATA_ITEMS = 128;

function schemaFor(nova: Nova, req: SimRequest): t.Schema {
  const at = (v: string) => nova.mv.atLeast(req, v);
  const networkItem: t.Schema = {
    type: 'object',
    properties: {
      fixed_ip: { type: 'string', oneOf: [{ format: 'ipv4' }, { format: 'ipv6' }] },
      port: { oneOf: [{ type: 'string', format: 'uuid' }, { type: 'null' }] },
      uuid: { type: 'string' },
      ...(at('2.32') ? { tag: t.tag } : {}),
    },
    additionalProperties: false,
  };
  const networks: t.Schema = at('2.37')
    ? {
        oneOf: [
          { type: 'array', items: networkItem },
          { type: 'string', enum: ['none', 'auto'] },
        ],
      }
    : { type: 'array', items: networkItem };
  const bdm: t.Schema = {
    type: 'object',
    properties: {
      source_type: { type: 'string', enum: ['volume', 'image', 'snapshot', 'blank'] },
      uuid: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[a-zA-Z0-9._-]*$' },
      image_id: t.uuid,
      destination_type: { type: 'string', enum: ['local', 'volume'] },
      guest_format: { type: 'string', maxLength: 255 },
      device_type: { type: 'string', maxLength: 255 },
      disk_bus: { type: 'string', maxLength: 255 },
      boot_index: { type: ['integer', 'string', 'null'], pattern: '^-?[0-9]+$' },
      device_name: { type: 'string', maxLength: 255, pattern: '^[a-zA-Z0-9._/-]*$' },
      volume_size: { type: ['integer', 'string'], pattern: '^[0-9]+$', minimum: 1, maximum: 2147483647 },
      delete_on_termination: t.booleanLike,
      no_device: {},
      volume_id: t.uuid,
      snapshot_id: t.uuid,
      ...(at('2.42') ? { tag: t.tag } : {}),
      ...(at('2.67') ? { volume_type: { type: ['string', 'null'], minLength: 0, maxLength: 255 } } : {}),
    },
    additionalProperties: false,
  };
  const server: t.Schema = {
    type: 'object',
    properties: {
      name: t.name,
      imageRef: {
        oneOf: [
          { type: 'string', format: 'uuid' },
          { type: 'string', maxLength: 0 },
        ],
      },
      flavorRef: { type: ['string', 'integer'], minLength: 1 },
      adminPass: { type: 'string' },
      metadata: t.metadata,
      networks,
      'OS-DCF:diskConfig': { type: 'string', enum: ['AUTO', 'MANUAL'] },
      accessIPv4: { type: 'string', format: 'ipv4' },
      accessIPv6: { type: 'string', format: 'ipv6' },
      ...(at('2.57') ? {} : { personality: { type: 'array', items: { type: 'object' } } }),
      availability_zone: t.name,
      block_device_mapping_v2: { type: 'array', items: bdm },
      block_device_mapping: { type: 'array', items: { type: 'object' } },
      config_drive: t.booleanLike,
      key_name: t.name,
      min_count: t.positiveInteger,
      max_count: t.positiveInteger,
      return_reservation_id: t.booleanLike,
      security_groups: {
        type: 'array',
        items: {
          type: 'object',
          properties: { name: { type: 'string', minLength: 1, maxLength: 255 } },
          additionalProperties: false,
        },
      },
      user_data: { type: 'string', format: 'base64', maxLength: 65535 },
      ...(at('2.19') ? { description: t.description } : {}),
      ...(at('2.52') ? { tags: { type: 'array', items: t.tag, maxItems: 50 } } : {}),
      ...(at('2.63')
        ? {
            trusted_image_certificates: {
              type: ['array', 'null'],
              minItems: 1,
              maxItems: 50,
              uniqueItems: true,
              items: { type: 'string', minLength: 1 },
            },
          }
        : {}),
      ...(at('2.74')
        ? {
            host: { type: 'string', minLength: 1, maxLength: 255 },
            hypervisor_hostname: { type: 'string', minLength: 1, maxLength: 255 },
          }
        : {}),
      ...(at('2.90')
        ? { hostname: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[a-zA-Z0-9-._]*$' } }
        : {}),
    },
    required: at('2.37') ? ['name', 'flavorRef', 'networks'] : ['name', 'flavorRef'],
    additionalProperties: false,
  };
  const hints: t.Schema = {
    type: 'object',
    properties: {
      group: t.uuid,
      different_host: {
        oneOf: [
          { type: 'string', format: 'uuid' },
          { type: 'array', items: t.uuid },
        ],
      },
      same_host: {
        oneOf: [
          { type: 'string', format: 'uuid' },
          { type: 'array', items: t.uuid },
        ],
      },
      query: { type: ['string', 'object'] },
      target_cell: t.name,
      different_cell: { type: ['string', 'array'] },
      build_near_host_ip: { type: 'string', oneOf: [{ format: 'ipv4' }, { format: 'ipv6' }] },
      cidr: { type: 'string', pattern: '^/[0-9a-f.:]+$' },
    },
    additionalProperties: true,
  };
  return {
    type: 'object',
    properties: { server, 'os:scheduler_hints': hints, 'OS-SCH-HNT:scheduler_hints': hints },
    required: ['server'],
    additionalProperties: false,
  };
}

/** nova.utils.sanitize_hostname. */
export function sanitizeHostname(name: string, fallback: string): string {
  const h = name
    .slice(0, 63)
    .replace(/[ _]/g, '-')
    .replace(/[^\w.-]+/g, '')
    .toLowerCase()
    .replace(/^[.-]+|[.-]+$/g, '');
  return h === '' ? fallback.slice(0, 63) : h;
}

/** nova.utils.generate_password: 12 characters without look-alikes. */
function generatePassword(): string {
  const symbols = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return [...randomBytes(12)].map((b) => symbols[b % symbols.length]).join('');
}

function reservationId(): string {
  const chars = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `r-${[...randomBytes(8)].map((b) => chars[b % chars.length]).join('')}`;
}

function parseNetworks(raw: unknown): NetworkRequest[] | 'auto' | 'none' {
  if (raw === 'auto' || raw === 'none') return raw;
  if (raw === undefined) return [];
  const out: NetworkRequest[] = [];
  for (const item of raw as Record<string, unknown>[]) {
    const port = typeof item['port'] === 'string' ? item['port'] : undefined;
    const fixed = typeof item['fixed_ip'] === 'string' ? item['fixed_ip'] : undefined;
    const tag = typeof item['tag'] === 'string' ? item['tag'] : null;
    if (port !== undefined) {
      if (fixed !== undefined) {
        throw new SimError(
          400,
          `Specified Fixed IP '${fixed}' cannot be used with port '${port}': the two cannot be specified together.`,
        );
      }
      out.push({ port_id: port, tag });
      continue;
    }
    const net = item['uuid'];
    if (typeof net !== 'string') throw new SimError(400, "Bad network format: missing 'uuid'");
    if (!t.isUuidLike(net))
      throw new SimError(400, `Bad networks format: network uuid is not in proper format (${net})`);
    out.push({ network_id: net, ...(fixed !== undefined ? { fixed_ip: fixed } : {}), tag });
  }
  return out;
}

function parseBdms(raw: unknown): BlockDeviceRequest[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((x: Record<string, unknown>) => {
    const boot = x['boot_index'];
    const bootIndex = boot === undefined || boot === null ? null : Number(boot);
    const size = x['volume_size'];
    const source = (x['source_type'] ??
      (x['volume_id']
        ? 'volume'
        : x['snapshot_id']
          ? 'snapshot'
          : 'image')) as BlockDeviceRequest['source_type'];
    const id = x['uuid'] ?? x['volume_id'] ?? x['snapshot_id'] ?? x['image_id'];
    return {
      source_type: source,
      destination_type: (x['destination_type'] ??
        (source === 'image' && bootIndex === 0 ? 'local' : 'volume')) as 'volume' | 'local',
      uuid: typeof id === 'string' ? id : undefined,
      volume_size: size === undefined ? undefined : Number(size),
      boot_index: bootIndex !== null && bootIndex >= 0 ? bootIndex : null,
      delete_on_termination: t.truthy(x['delete_on_termination'] ?? false),
      device_name: typeof x['device_name'] === 'string' && x['device_name'] ? x['device_name'] : undefined,
      volume_type: typeof x['volume_type'] === 'string' ? x['volume_type'] : undefined,
      tag: typeof x['tag'] === 'string' ? x['tag'] : null,
    };
  });
}

export function createServers(nova: Nova, lifecycle: Lifecycle, req: SimRequest): SimResponse {
  const { cloud } = nova;
  t.validateBody(schemaFor(nova, req), req.body);
  const body = asRecord(req.body);
  const spec = asRecord(body['server']);
  const a = auth(req);
  const projectId = projectOf(req);
  const who = { projectId, isAdmin: a.isAdmin };
  const hints = asRecord(body['os:scheduler_hints'] ?? body['OS-SCH-HNT:scheduler_hints']);

  // Flavor first, as servers.py looks it up before calling compute_api.create.
  const flavorRef = String(spec['flavorRef']);
  const flavorId = flavorRef.split('/').pop() ?? flavorRef;
  const flavor = nova.flavors.byId.get(flavorId);
  if (!flavor || !nova.flavors.visible(flavor, projectId, a.isAdmin) || flavor.disabled) {
    throw new SimError(400, `Flavor ${flavorId} could not be found.`);
  }

  const bdms = parseBdms(spec['block_device_mapping_v2']);
  const bootVolume = bdms.find((b) => b.boot_index === 0 && b.destination_type === 'volume');
  const bootImageBdm = bdms.find(
    (b) => b.boot_index === 0 && b.source_type === 'image' && b.destination_type === 'local',
  );
  const imageRef =
    typeof spec['imageRef'] === 'string' && spec['imageRef'] !== '' ? spec['imageRef'] : bootImageBdm?.uuid;
  if (!imageRef && !bootVolume) {
    throw new SimError(
      400,
      bdms.length > 0
        ? 'Block Device Mapping is Invalid: Boot sequence for the instance and image/block device mapping combination is not valid.'
        : 'Missing imageRef attribute',
    );
  }

  const minCount = Number(spec['min_count'] ?? 1);
  const maxCount = Number(spec['max_count'] ?? minCount);
  if (minCount > maxCount) throw new SimError(400, 'min_count must be <= max_count');

  // The image to boot from, or the one a boot volume is built from, must be visible and active.
  const imageToCheck = imageRef ?? (bootVolume?.source_type === 'image' ? bootVolume.uuid : undefined);
  if (imageToCheck !== undefined) {
    const image = cloud.image.getImage(imageToCheck);
    const visible =
      image &&
      (a.isAdmin ||
        image.owner === projectId ||
        image.visibility === 'public' ||
        image.visibility === 'community' ||
        image.visibility === 'shared');
    if (!image || !visible) {
      throw new SimError(
        400,
        imageRef
          ? 'Can not find requested image'
          : `Block Device Mapping is Invalid: failed to get image ${imageToCheck}.`,
      );
    }
    if (image.status !== 'active') throw new SimError(400, `Image ${image.id} is not active.`);
    if (imageRef && !bootVolume) {
      const gib = 1024 ** 3;
      if (flavor.disk === 0 && !a.isAdmin) {
        throw new SimError(403, 'Only volume-backed servers are allowed for flavors with zero disk.');
      }
      if (flavor.disk > 0 && image.size !== null && image.size > flavor.disk * gib) {
        throw new SimError(
          400,
          `Flavor's disk is too small for requested image. Flavor disk is ${flavor.disk * gib} bytes, image is ${image.size} bytes.`,
        );
      }
      if (flavor.disk > 0 && image.min_disk > flavor.disk) {
        throw new SimError(
          400,
          `Flavor's disk is smaller than the minimum size specified in image metadata. Flavor disk is ${flavor.disk * gib} bytes, minimum size is ${image.min_disk * gib} bytes.`,
        );
      }
    }
    if (image.min_ram > flavor.ram)
      throw new SimError(400, "Flavor's memory is too small for requested image.");
  }

  const networks = parseNetworks(spec['networks']);
  if (networks === 'auto') {
    // Auto-allocation needs Neutron's get-me-a-network topology, which the emulated cloud does not offer.
    throw new SimError(400, `Unable to automatically allocate a network for project ${projectId}`);
  }
  const netRequests = networks === 'none' ? [] : networks;
  validateNetworks(cloud.network, who, netRequests, maxCount);
  validateBlockDevices(cloud.volume, bdms, who, maxCount);

  let keyName: string | null = null;
  if (typeof spec['key_name'] === 'string') {
    if (!nova.keypairs.get(a.userId, spec['key_name'])) throw new SimError(400, 'Invalid key_name provided.');
    keyName = spec['key_name'];
  }

  let requestedAz: string | null = null;
  let requestedHost: string | null = null;
  if (typeof spec['availability_zone'] === 'string') {
    const [zone, host] = spec['availability_zone'].split(':', 2);
    if (zone && zone !== DEFAULT_AZ)
      throw new SimError(400, 'The requested availability zone is not available');
    requestedAz = zone || null;
    if (host !== undefined && host !== '') {
      if (!a.isAdmin)
        throw new SimError(
          403,
          "Policy doesn't allow os_compute_api:servers:create:forced_host to be performed.",
        );
      requestedHost = host;
    }
  }
  const forcedHost =
    typeof spec['host'] === 'string'
      ? spec['host']
      : typeof spec['hypervisor_hostname'] === 'string'
        ? spec['hypervisor_hostname']
        : undefined;
  if (forcedHost !== undefined) {
    if (!a.isAdmin)
      throw new SimError(
        403,
        "Policy doesn't allow compute:servers:create:requested_destination to be performed.",
      );
    requestedHost = forcedHost;
  }
  if (requestedHost !== null && !HOSTS.includes(requestedHost)) {
    throw new SimError(400, `Compute host ${requestedHost} could not be found.`);
  }

  let groupId: string | null = null;
  if (typeof hints['group'] === 'string') {
    const g = nova.groups.byId.get(hints['group']);
    if (!g || (!a.isAdmin && g.project_id !== projectId))
      throw new SimError(400, `Instance group ${hints['group']} could not be found.`);
    groupId = g.id;
  }

  const metadata = Object.fromEntries(
    Object.entries(asRecord(spec['metadata'])).map(([k, v]) => [k, String(v)]),
  );
  if (Object.keys(metadata).length > MAX_METADATA_ITEMS) {
    throw new SimError(403, `Maximum number of metadata items exceeds ${MAX_METADATA_ITEMS}`);
  }
  const securityGroups = Array.isArray(spec['security_groups'])
    ? [...new Set((spec['security_groups'] as Record<string, unknown>[]).map((g) => String(g['name'])))]
    : ['default'];
  validateSecurityGroups(cloud.network, projectId, securityGroups);

  const name = String(spec['name']);
  const reservation = reservationId();
  const adminPass = typeof spec['adminPass'] === 'string' ? spec['adminPass'] : generatePassword();
  const doomed = cloud.faults.take('error-on-create', 'nova', 'server');
  const stuck = cloud.faults.take('stuck', 'nova', 'server');
  const now = isoSeconds();
  const created: ServerRecord[] = [];
  for (let i = 0; i < maxCount; i++) {
    const id = uuid();
    const displayName = maxCount > 1 ? `${name}-${i + 1}` : name;
    const hostnameBase = typeof spec['hostname'] === 'string' ? spec['hostname'] : displayName;
    const s: ServerRecord = {
      id,
      name: displayName,
      project_id: projectId,
      user_id: a.userId,
      image_ref: bootVolume ? '' : (imageRef ?? ''),
      flavor: {
        id: flavor.id,
        name: flavor.name,
        vcpus: flavor.vcpus,
        ram: flavor.ram,
        disk: flavor.disk,
        ephemeral: flavor.ephemeral,
        swap: flavor.swap,
        extra_specs: { ...flavor.extra_specs },
      },
      metadata: { ...metadata },
      tags: Array.isArray(spec['tags']) ? [...new Set(spec['tags'] as string[])] : [],
      key_name: keyName,
      availability_zone: requestedAz,
      config_drive: t.truthy(spec['config_drive'] ?? false),
      user_data: typeof spec['user_data'] === 'string' ? spec['user_data'] : null,
      description: typeof spec['description'] === 'string' ? spec['description'] : null,
      hostname: sanitizeHostname(
        maxCount > 1 && typeof spec['hostname'] !== 'string' ? displayName : hostnameBase,
        `Server-${id}`,
      ),
      access_ip_v4: typeof spec['accessIPv4'] === 'string' ? spec['accessIPv4'] : '',
      access_ip_v6: typeof spec['accessIPv6'] === 'string' ? spec['accessIPv6'] : '',
      disk_config: spec['OS-DCF:diskConfig'] === 'AUTO' ? 'AUTO' : 'MANUAL',
      vm_state: 'building',
      task_state: 'scheduling',
      power_state: POWER.NOSTATE,
      host: null,
      requested_host: requestedHost,
      root_device_name: null,
      instance_number: nova.servers.nextInstanceNumber(),
      reservation_id: reservation,
      launch_index: i,
      created_at: now,
      updated_at: now,
      launched_at: null,
      locked_by: null,
      locked_reason: null,
      fault: null,
      ports: [],
      volumes: [],
      security_groups: securityGroups,
      pending_networks: netRequests.map((r) => ({ ...r })),
      server_group: groupId,
      trusted_image_certificates: Array.isArray(spec['trusted_image_certificates'])
        ? (spec['trusted_image_certificates'] as string[])
        : null,
      doomed,
      stuck,
    };
    nova.servers.add(s);
    if (groupId) nova.groups.byId.get(groupId)?.members.push(id);
    created.push(s);
  }
  for (const s of created) lifecycle.build(s, bdms);
  cloud.changed();

  const first = created[0]!;
  if (t.truthy(spec['return_reservation_id'] ?? false)) return json(202, { reservation_id: reservation });
  const out: Record<string, unknown> = {
    id: first.id,
    links: links(req, 'servers', first.id),
    'OS-DCF:diskConfig': first.disk_config,
    security_groups: securityGroups.map((n) => ({ name: n })),
    adminPass,
  };
  return json(202, { server: out }, { Location: `${req.baseUrl}/v2.1/servers/${first.id}` });
}

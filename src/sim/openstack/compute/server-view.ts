/** The server as Nova's views/servers.py shows it, per microversion and per caller (admin sees more). */
import { createHash } from 'node:crypto';
import type { SimRequest } from '../core/types.ts';
import type { Nova } from './context.ts';
import { DEFAULT_AZ } from './hosts.ts';
import { auth, links } from './http.ts';
import { addressesOf, securityGroupNames } from './server-networking.ts';
import type { ServerRecord } from './server-store.ts';
import { statusOf } from './states.ts';

const PROGRESS_STATUSES = new Set(['ACTIVE', 'BUILD', 'REBUILD', 'RESIZE', 'VERIFY_RESIZE', 'MIGRATING']);

export interface ShowOptions {
  /** GET /servers/{id} and 2.71+ write responses add `server_groups`; lists do not. */
  serverGroups: boolean;
  /** Before 2.75, PUT /servers/{id} answered with the base fields only. */
  minimal?: boolean;
}

function hostId(s: ServerRecord): string {
  return s.host ? createHash('sha224').update(`${s.project_id}${s.host}`).digest('hex') : '';
}

export function basicView(req: SimRequest, s: ServerRecord) {
  return { id: s.id, name: s.name, links: links(req, 'servers', s.id) };
}

export function serverView(
  nova: Nova,
  req: SimRequest,
  s: ServerRecord,
  opts: ShowOptions,
): Record<string, unknown> {
  const { mv, cloud } = nova;
  const isAdmin = auth(req).isAdmin;
  const status = statusOf(s.vm_state, s.task_state);
  const flavor = mv.atLeast(req, '2.47')
    ? {
        vcpus: s.flavor.vcpus,
        ram: s.flavor.ram,
        disk: s.flavor.disk,
        ephemeral: s.flavor.ephemeral,
        swap: s.flavor.swap,
        original_name: s.flavor.name,
        extra_specs: { ...s.flavor.extra_specs },
      }
    : { id: s.flavor.id, links: [{ rel: 'bookmark', href: `${req.baseUrl}/flavors/${s.flavor.id}` }] };
  const out: Record<string, unknown> = {
    id: s.id,
    name: s.name,
    status,
    tenant_id: s.project_id,
    user_id: s.user_id,
    metadata: { ...s.metadata },
    hostId: hostId(s),
    image: s.image_ref
      ? { id: s.image_ref, links: [{ rel: 'bookmark', href: `${req.baseUrl}/images/${s.image_ref}` }] }
      : '',
    flavor,
    created: s.created_at,
    updated: s.updated_at,
    addresses: addressesOf(cloud.network, s, !opts.minimal),
    accessIPv4: s.access_ip_v4,
    accessIPv6: s.access_ip_v6,
    links: links(req, 'servers', s.id),
    'OS-DCF:diskConfig': s.disk_config,
  };
  if ((status === 'ERROR' || status === 'DELETED') && s.fault) {
    const { details, ...fault } = s.fault;
    out['fault'] = details && (isAdmin || s.fault.code !== 500) ? { ...fault, details } : fault;
  }
  if (PROGRESS_STATUSES.has(status)) out['progress'] = 0;
  if (!opts.minimal) {
    out['OS-EXT-AZ:availability_zone'] = s.host
      ? (s.availability_zone ?? DEFAULT_AZ)
      : (s.availability_zone ?? '');
    out['config_drive'] = s.config_drive ? 'True' : '';
    out['key_name'] = s.key_name;
    out['OS-SRV-USG:launched_at'] = s.launched_at;
    out['OS-SRV-USG:terminated_at'] = null;
    const groups = securityGroupNames(cloud.network, s);
    if (groups.length > 0) out['security_groups'] = groups.map((name) => ({ name }));
    if (isAdmin) {
      out['OS-EXT-SRV-ATTR:host'] = s.host;
      out['OS-EXT-SRV-ATTR:instance_name'] = `instance-${s.instance_number.toString(16).padStart(8, '0')}`;
      out['OS-EXT-SRV-ATTR:hypervisor_hostname'] = s.host;
      if (mv.atLeast(req, '2.3')) {
        out['OS-EXT-SRV-ATTR:reservation_id'] = s.reservation_id;
        out['OS-EXT-SRV-ATTR:launch_index'] = s.launch_index;
        out['OS-EXT-SRV-ATTR:hostname'] = s.hostname;
        out['OS-EXT-SRV-ATTR:kernel_id'] = '';
        out['OS-EXT-SRV-ATTR:ramdisk_id'] = '';
        out['OS-EXT-SRV-ATTR:root_device_name'] = s.root_device_name;
        out['OS-EXT-SRV-ATTR:user_data'] = s.user_data;
      }
    } else if (mv.atLeast(req, '2.90')) {
      out['OS-EXT-SRV-ATTR:hostname'] = s.hostname;
    }
    out['OS-EXT-STS:task_state'] = s.task_state;
    out['OS-EXT-STS:vm_state'] = s.vm_state;
    out['OS-EXT-STS:power_state'] = s.power_state;
    out['os-extended-volumes:volumes_attached'] = s.volumes
      .filter((v) => v.attached)
      .map((v) =>
        mv.atLeast(req, '2.3')
          ? { id: v.volume_id, delete_on_termination: v.delete_on_termination }
          : { id: v.volume_id },
      );
    if (mv.atLeast(req, '2.16') && isAdmin) out['host_status'] = s.host ? 'UP' : '';
  }
  if (mv.atLeast(req, '2.9')) out['locked'] = s.locked_by !== null;
  if (mv.atLeast(req, '2.73')) out['locked_reason'] = s.locked_reason;
  if (mv.atLeast(req, '2.19')) out['description'] = s.description;
  if (mv.atLeast(req, '2.26')) out['tags'] = [...s.tags];
  if (mv.atLeast(req, '2.63')) out['trusted_image_certificates'] = s.trusted_image_certificates;
  if (opts.serverGroups && mv.atLeast(req, '2.71'))
    out['server_groups'] = s.server_group ? [s.server_group] : [];
  return out;
}

/** The detail list puts security_groups last, as the view builder adds them for all servers at once. */
export function detailView(nova: Nova, req: SimRequest, s: ServerRecord): Record<string, unknown> {
  const out = serverView(nova, req, s, { serverGroups: false });
  const groups = out['security_groups'];
  if (groups !== undefined) {
    delete out['security_groups'];
    out['security_groups'] = groups;
  }
  return out;
}

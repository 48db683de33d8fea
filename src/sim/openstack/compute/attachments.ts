/** os-interface (ports) and os-volume_attachments (volumes) of a server. */
import { SimError } from '../core/errors.ts';
import { isoSeconds } from '../core/ids.ts';
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import type { Nova } from './context.ts';
import { asRecord, auth, empty, json, projectOf } from './http.ts';
import { interfaceView, portInUse, releasePorts } from './server-networking.ts';
import { checkLock, findServer } from './server-routes.ts';
import type { ServerRecord, ServerVolume } from './server-store.ts';
import { nextDevice, releaseVolumes, visibleVolume, volumeUnavailable } from './server-volumes.ts';
import { checkState } from './states.ts';
import * as t from './schema.ts';

const portIdNotFound = (id: string) => new SimError(404, `Port id ${id} could not be found.`);

export function attachmentRoutes(nova: Nova): Route[] {
  const { mv, cloud } = nova;
  const touch = (s: ServerRecord) => {
    s.updated_at = isoSeconds();
    cloud.changed();
  };

  const tagOf = (s: ServerRecord, portId: string) => s.ports.find((p) => p.port_id === portId)?.tag ?? null;

  const listInterfaces = (req: SimRequest): SimResponse => {
    const s = findServer(nova, req);
    const withTag = mv.atLeast(req, '2.70');
    return json(200, {
      interfaceAttachments: cloud.network
        .portsByDevice(s.id)
        .map((p) => interfaceView(p, tagOf(s, p.id), withTag)),
    });
  };

  const showInterface = (req: SimRequest): SimResponse => {
    const s = findServer(nova, req);
    const portId = req.params['port_id']!;
    const port = cloud.network.getPort(portId);
    if (!port) throw portIdNotFound(portId);
    if (port.device_id !== s.id) {
      throw new SimError(404, `Instance ${s.id} does not have a port with id ${portId}`);
    }
    return json(200, { interfaceAttachment: interfaceView(port, tagOf(s, portId), mv.atLeast(req, '2.70')) });
  };

  const attachInterface = (req: SimRequest): SimResponse => {
    t.validateBody(
      {
        type: 'object',
        properties: {
          interfaceAttachment: {
            type: 'object',
            properties: {
              net_id: t.uuid,
              port_id: t.uuid,
              fixed_ips: {
                type: 'array',
                minItems: 1,
                maxItems: 1,
                items: {
                  type: 'object',
                  properties: {
                    ip_address: { type: 'string', oneOf: [{ format: 'ipv4' }, { format: 'ipv6' }] },
                  },
                  required: ['ip_address'],
                  additionalProperties: false,
                },
              },
              ...(mv.atLeast(req, '2.49') ? { tag: t.tag } : {}),
            },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
      req.body ?? {},
    );
    const spec = asRecord(asRecord(req.body)['interfaceAttachment']);
    const netId = typeof spec['net_id'] === 'string' ? spec['net_id'] : undefined;
    const portId = typeof spec['port_id'] === 'string' ? spec['port_id'] : undefined;
    const fixed = Array.isArray(spec['fixed_ips'])
      ? String(asRecord(spec['fixed_ips'][0])['ip_address'])
      : undefined;
    const tag = typeof spec['tag'] === 'string' ? spec['tag'] : null;
    if (netId && portId) throw new SimError(400, 'Must not input both network_id and port_id');
    if (fixed !== undefined && !netId)
      throw new SimError(400, 'Must input network_id when request IP address');
    const s = findServer(nova, req);
    checkLock(req, s);
    checkState(s, 'attach_interface', { vm: ['active', 'paused', 'stopped'] });
    const owner = `compute:${s.availability_zone ?? 'nova'}`;
    const host = s.host ?? '';
    let id: string;
    if (portId) {
      const port = cloud.network.getPort(portId);
      if (!port || (port.project_id !== s.project_id && !auth(req).isAdmin)) throw portIdNotFound(portId);
      if (port.device_id) throw portInUse(portId);
      cloud.network.updatePort(portId, { device_id: s.id, device_owner: owner, 'binding:host_id': host });
      s.ports.push({ port_id: portId, created_by_nova: false, tag });
      id = portId;
    } else if (netId) {
      const net = cloud.network.getNetwork(netId);
      if (!net) throw new SimError(404, `Network ${netId} could not be found.`);
      try {
        const port = cloud.network.createPort({
          network_id: netId,
          project_id: s.project_id,
          ...(fixed !== undefined ? { fixed_ips: [{ ip_address: fixed }] } : {}),
          device_id: s.id,
          device_owner: owner,
          'binding:host_id': host,
        });
        id = port.id;
      } catch (err) {
        if (SimError.is(err) && err.type === 'IpAddressAlreadyAllocated') {
          throw new SimError(409, `Fixed IP address ${fixed ?? ''} is already in use on instance ${s.id}.`);
        }
        if (SimError.is(err) && err.type === 'IpAddressGenerationFailure') {
          throw new SimError(400, `No fixed IP addresses available for network: ${netId}`);
        }
        if (SimError.is(err) && err.status < 500) throw new SimError(400, err.message);
        throw new SimError(500, `Failed to attach network adapter device to ${s.id}`);
      }
      s.ports.push({ port_id: id, created_by_nova: true, tag });
    } else {
      // Nova would pick the project's only network; the emulator cannot list them through NetworkApi.
      throw new SimError(
        409,
        'More than one possible network found. Specify network ID(s) to select which one(s) to connect to.',
      );
    }
    touch(s);
    const port = cloud.network.getPort(id)!;
    return json(200, { interfaceAttachment: interfaceView(port, tag, mv.atLeast(req, '2.70')) });
  };

  const detachInterface = (req: SimRequest): SimResponse => {
    const s = findServer(nova, req);
    const portId = req.params['port_id']!;
    checkLock(req, s);
    checkState(s, 'detach_interface', { vm: ['active', 'paused', 'stopped'] });
    const i = s.ports.findIndex((p) => p.port_id === portId);
    if (i < 0) throw portIdNotFound(portId);
    const [p] = s.ports.splice(i, 1);
    releasePorts(cloud.network, [p!], s.id);
    touch(s);
    return empty(202);
  };

  // Volume attachments.
  const attachmentView = (req: SimRequest, s: ServerRecord, v: ServerVolume) => ({
    ...(mv.atLeast(req, '2.89') ? {} : { id: v.volume_id }),
    serverId: s.id,
    volumeId: v.volume_id,
    device: v.device,
    ...(mv.atLeast(req, '2.70') ? { tag: v.tag } : {}),
    ...(mv.atLeast(req, '2.79') ? { delete_on_termination: v.delete_on_termination } : {}),
  });

  const findAttachment = (s: ServerRecord, volumeId: string): ServerVolume => {
    const v = s.volumes.find((x) => x.volume_id === volumeId && x.attached);
    if (!v) throw new SimError(404, `Volume ${volumeId} is not attached to instance ${s.id}`);
    return v;
  };

  const attachVolume = (req: SimRequest): SimResponse => {
    t.validateBody(
      {
        type: 'object',
        properties: {
          volumeAttachment: {
            type: 'object',
            properties: {
              volumeId: t.uuid,
              device: { type: ['string', 'null'], pattern: '(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$' },
              ...(mv.atLeast(req, '2.49') ? { tag: t.tag } : {}),
              ...(mv.atLeast(req, '2.79') ? { delete_on_termination: { type: 'boolean' } } : {}),
            },
            required: ['volumeId'],
            additionalProperties: false,
          },
        },
        required: ['volumeAttachment'],
        additionalProperties: false,
      },
      req.body,
    );
    const spec = asRecord(asRecord(req.body)['volumeAttachment']);
    const volumeId = String(spec['volumeId']);
    const s = findServer(nova, req);
    checkLock(req, s);
    checkState(s, 'attach_volume', {
      vm: ['active', 'paused', 'stopped', 'resized', 'soft_deleted', 'shelved', 'shelved_offloaded'],
    });
    const vol = visibleVolume(cloud.volume, volumeId, projectOf(req), auth(req).isAdmin);
    if (!vol) throw new SimError(404, `Volume ${volumeId} could not be found.`);
    if (vol.status !== 'available') throw volumeUnavailable(vol);
    const device = typeof spec['device'] === 'string' && spec['device'] ? spec['device'] : nextDevice(s);
    cloud.volume.attach(volumeId, s.id, device);
    const v: ServerVolume = {
      volume_id: volumeId,
      device,
      delete_on_termination: spec['delete_on_termination'] === true,
      boot_index: null,
      tag: typeof spec['tag'] === 'string' ? spec['tag'] : null,
      attached: true,
    };
    s.volumes.push(v);
    touch(s);
    return json(200, { volumeAttachment: attachmentView(req, s, v) });
  };

  const detachVolume = (req: SimRequest): SimResponse => {
    const s = findServer(nova, req);
    checkLock(req, s);
    const v = findAttachment(s, req.params['volume_id']!);
    checkState(s, 'detach_volume', {
      vm: ['active', 'paused', 'stopped', 'resized', 'soft_deleted', 'shelved', 'shelved_offloaded'],
    });
    if (v.boot_index === 0) throw new SimError(400, 'Cannot detach a root device volume');
    s.volumes = s.volumes.filter((x) => x !== v);
    releaseVolumes(cloud, [{ ...v, delete_on_termination: false }], s.id);
    touch(s);
    return empty(202);
  };

  return [
    { method: 'GET', template: '/v2.1/servers/{server_id}/os-interface', handler: listInterfaces },
    { method: 'POST', template: '/v2.1/servers/{server_id}/os-interface', handler: attachInterface },
    { method: 'GET', template: '/v2.1/servers/{server_id}/os-interface/{port_id}', handler: showInterface },
    {
      method: 'DELETE',
      template: '/v2.1/servers/{server_id}/os-interface/{port_id}',
      handler: detachInterface,
    },
    {
      method: 'GET',
      template: '/v2.1/servers/{server_id}/os-volume_attachments',
      handler: (req) => {
        const s = findServer(nova, req);
        return json(200, {
          volumeAttachments: s.volumes.filter((v) => v.attached).map((v) => attachmentView(req, s, v)),
        });
      },
    },
    { method: 'POST', template: '/v2.1/servers/{server_id}/os-volume_attachments', handler: attachVolume },
    {
      method: 'GET',
      template: '/v2.1/servers/{server_id}/os-volume_attachments/{volume_id}',
      handler: (req) => {
        const s = findServer(nova, req);
        return json(200, {
          volumeAttachment: attachmentView(req, s, findAttachment(s, req.params['volume_id']!)),
        });
      },
    },
    {
      method: 'DELETE',
      template: '/v2.1/servers/{server_id}/os-volume_attachments/{volume_id}',
      handler: detachVolume,
    },
  ];
}

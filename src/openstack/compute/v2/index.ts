/**
 * Nova v2.1 as a namespace bound to one ServiceClient: `client.compute.servers.get(id, { signal })`.
 * The first call negotiates the microversion (2.79, or the cloud's maximum if lower) for the whole
 * client. The functions are exported too, for code that holds a ServiceClient (`getServer(sc, id)`).
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { listComputeAvailabilityZones } from './availability-zones.ts';
import {
  createFlavor,
  deleteFlavor,
  findFlavorByName,
  getFlavor,
  listFlavors,
  type FlavorCreateOpts,
  type FlavorListQuery,
} from './flavors.ts';
import { attachInterface, detachInterface, listInterfaces, type InterfaceAttachOpts } from './interfaces.ts';
import {
  createKeypair,
  deleteKeypair,
  getKeypair,
  listKeypairs,
  type KeypairCreateOpts,
} from './keypairs.ts';
import { computeMicroversion } from './microversion.ts';
import {
  createServerGroup,
  deleteServerGroup,
  getServerGroup,
  listServerGroups,
  type ServerGroupCreateOpts,
} from './server-groups.ts';
import {
  deleteServerMetadataItem,
  getServerMetadata,
  replaceServerMetadata,
  updateServerMetadata,
  type Metadata,
} from './server-metadata.ts';
import {
  addServerTag,
  listServerTags,
  removeAllServerTags,
  removeServerTag,
  replaceServerTags,
  serverHasTag,
} from './server-tags.ts';
import {
  createServer,
  deleteServer,
  getServer,
  listServers,
  rebootServer,
  startServer,
  stopServer,
  updateServer,
  type SchedulerHints,
  type ServerCreateOpts,
  type ServerListQuery,
  type ServerStatus,
  type ServerUpdateOpts,
} from './servers.ts';
import {
  waitForServerActive,
  waitForServerDeleted,
  waitForServerStatus,
  type WaiterOptions,
} from './waiters.ts';
import { formatApiVersion } from '../../core/api-version.ts';

export * from './availability-zones.ts';
export * from './flavors.ts';
export * from './interfaces.ts';
export * from './keypairs.ts';
export * from './microversion.ts';
export * from './server-groups.ts';
export * from './server-metadata.ts';
export * from './server-tags.ts';
export * from './servers.ts';
export * from './waiters.ts';

export function computeV2(sc: ServiceClient) {
  return {
    client: sc,
    /** The microversion calls use, negotiated on first use: `'2.79'`, or the cloud's maximum if lower. */
    microversion: async (o?: CallOptions) => formatApiVersion(await computeMicroversion(sc, o?.signal)),
    servers: {
      /** 202 and the id; `user_data` is base64-encoded for you, `schedulerHints` go beside the server. */
      create: (server: ServerCreateOpts, o?: CallOptions & { schedulerHints?: SchedulerHints | undefined }) =>
        createServer(sc, server, o),
      get: (id: string, o?: CallOptions) => getServer(sc, id, o),
      /** `GET /servers/detail`: `name` is a regular expression. */
      list: (query?: ServerListQuery, o?: CallOptions) => listServers(sc, query, o),
      update: (id: string, update: ServerUpdateOpts, o?: CallOptions) => updateServer(sc, id, update, o),
      delete: (id: string, o?: CallOptions) => deleteServer(sc, id, o),
      start: (id: string, o?: CallOptions) => startServer(sc, id, o),
      stop: (id: string, o?: CallOptions) => stopServer(sc, id, o),
      reboot: (id: string, o?: CallOptions & { type?: 'SOFT' | 'HARD' | undefined }) =>
        rebootServer(sc, id, o),
      metadata: {
        get: (id: string, o?: CallOptions) => getServerMetadata(sc, id, o),
        /** The server ends with exactly these items. */
        replace: (id: string, metadata: Metadata, o?: CallOptions) =>
          replaceServerMetadata(sc, id, metadata, o),
        /** Sets these items, keeping the others. */
        update: (id: string, metadata: Metadata, o?: CallOptions) =>
          updateServerMetadata(sc, id, metadata, o),
        delete: (id: string, key: string, o?: CallOptions) => deleteServerMetadataItem(sc, id, key, o),
      },
      tags: {
        list: (id: string, o?: CallOptions) => listServerTags(sc, id, o),
        replace: (id: string, tags: readonly string[], o?: CallOptions) => replaceServerTags(sc, id, tags, o),
        add: (id: string, tag: string, o?: CallOptions) => addServerTag(sc, id, tag, o),
        remove: (id: string, tag: string, o?: CallOptions) => removeServerTag(sc, id, tag, o),
        removeAll: (id: string, o?: CallOptions) => removeAllServerTags(sc, id, o),
        has: (id: string, tag: string, o?: CallOptions) => serverHasTag(sc, id, tag, o),
      },
      interfaces: {
        list: (id: string, o?: CallOptions) => listInterfaces(sc, id, o),
        attach: (id: string, attach: InterfaceAttachOpts, o?: CallOptions) =>
          attachInterface(sc, id, attach, o),
        detach: (id: string, portId: string, o?: CallOptions) => detachInterface(sc, id, portId, o),
      },
      /** For scripts, tests and the CLI; controllers requeue instead (see waiters.ts). */
      waitForStatus: (id: string, status: ServerStatus, o?: WaiterOptions) =>
        waitForServerStatus(sc, id, status, o),
      /** For scripts, tests and the CLI; controllers requeue instead (see waiters.ts). */
      waitForActive: (id: string, o?: WaiterOptions) => waitForServerActive(sc, id, o),
      /** For scripts, tests and the CLI; controllers requeue instead (see waiters.ts). */
      waitForDeleted: (id: string, o?: WaiterOptions) => waitForServerDeleted(sc, id, o),
    },
    flavors: {
      list: (query?: FlavorListQuery, o?: CallOptions) => listFlavors(sc, query, o),
      get: (id: string, o?: CallOptions) => getFlavor(sc, id, o),
      /** The flavor named exactly `name`, or undefined. */
      findByName: (name: string, o?: CallOptions) => findFlavorByName(sc, name, o),
      /** Admin. */
      create: (flavor: FlavorCreateOpts, o?: CallOptions) => createFlavor(sc, flavor, o),
      /** Admin. */
      delete: (id: string, o?: CallOptions) => deleteFlavor(sc, id, o),
    },
    keypairs: {
      create: (keypair: KeypairCreateOpts, o?: CallOptions) => createKeypair(sc, keypair, o),
      get: (name: string, o?: CallOptions) => getKeypair(sc, name, o),
      list: (query?: { user_id?: string; limit?: number }, o?: CallOptions) => listKeypairs(sc, query, o),
      delete: (name: string, o?: CallOptions) => deleteKeypair(sc, name, o),
    },
    serverGroups: {
      /** `policy` is sent as `policy` from 2.64, as `policies: [policy]` before. */
      create: (opts: ServerGroupCreateOpts, o?: CallOptions) => createServerGroup(sc, opts, o),
      get: (id: string, o?: CallOptions) => getServerGroup(sc, id, o),
      list: (query?: { all_projects?: boolean; limit?: number }, o?: CallOptions) =>
        listServerGroups(sc, query, o),
      delete: (id: string, o?: CallOptions) => deleteServerGroup(sc, id, o),
    },
    availabilityZones: {
      list: (o?: CallOptions & { detail?: boolean | undefined }) => listComputeAvailabilityZones(sc, o),
    },
  };
}

export type ComputeV2 = ReturnType<typeof computeV2>;

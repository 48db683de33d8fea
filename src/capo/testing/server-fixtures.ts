/**
 * What the OpenStackServer tests share on a CapoEnv: a tenant network for machines and one for pods
 * (tagged, for a trunk port found by tag), a security group, the image and flavor to boot, an
 * OpenStackServer builder shaped like the ones the machine controller writes, bootstrap data
 * Secrets, and an admin census of what exists in the demo project.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { isNotFound, kinds } from '../../kube/index.ts';
import type { Flavor } from '../../openstack/compute/v2/flavors.ts';
import { EndpointNotFoundError } from '../../openstack/core/errors.ts';
import type { Network } from '../../openstack/network/v2/networks.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { capoKinds, type OpenStackServer, type OpenStackServerSpec } from '../api/index.ts';
import type { CapoEnv } from './env.ts';

export interface Census {
  servers: number;
  ports: number;
  trunks: number;
  volumes: number;
}

export interface ServerFixtures {
  network: Network;
  podNetwork: Network;
  flavor: Flavor;
  imageName: string;
  /** The spec of a worker: port 0 on `machines` (subnet, security group by filter), port 1 a trunk on the pods network, a 2 GiB root volume. */
  spec(overrides?: Partial<OpenStackServerSpec>): OpenStackServerSpec;
  create(name: string, overrides?: Partial<OpenStackServerSpec>): Promise<OpenStackServer>;
  /** The object, or undefined once it is gone. */
  get(name: string): Promise<OpenStackServer | undefined>;
  /** A bootstrap data Secret as Cluster API's bootstrap providers write it (key `value`). */
  bootstrapSecret(name: string, value: string): Promise<V1Secret>;
  /** Deletes the object and waits until the finalizer let it go. */
  remove(name: string, timeoutMs?: number): Promise<void>;
  census(): Promise<Census>;
}

export async function openServerFixtures(env: CapoEnv): Promise<ServerFixtures> {
  const { os, admin, api, namespace } = env;
  const network = await os.network.networks.create({ name: 'machines' });
  await os.network.subnets.create({
    network_id: network.id,
    cidr: '10.6.0.0/24',
    ip_version: 4,
    name: 'machines-v4',
  });
  const podNetwork = await os.network.networks.create({ name: 'pods' });
  await os.network.subnets.create({
    network_id: podNetwork.id,
    cidr: '10.7.0.0/24',
    ip_version: 4,
    name: 'pods-v4',
  });
  await os.network.tags.replace('networks', podNetwork.id, ['role-pods']);
  await os.network.securityGroups.create({ name: 'k8s-worker' });
  const flavor = await os.compute.flavors.get(env.boot.flavorId);
  const imageName = (await os.image.images.get(env.boot.imageId)).name ?? '';
  const project = network.project_id;

  const fx: ServerFixtures = {
    network,
    podNetwork,
    flavor,
    imageName,
    spec(overrides = {}) {
      return {
        identityRef: env.identityRef,
        image: { filter: { name: imageName } },
        flavor: flavor.name,
        ports: [
          {
            network: { filter: { name: 'machines' } },
            fixedIPs: [{ subnet: { filter: { name: 'machines-v4' } } }],
            securityGroups: [{ filter: { name: 'k8s-worker' } }],
            tags: ['primary'],
          },
          { network: { filter: { tags: ['role-pods'] } }, nameSuffix: 'pods', trunk: true },
        ],
        rootVolume: { sizeGiB: 2 },
        tags: ['cluster-test'],
        serverMetadata: [{ key: 'role', value: 'worker' }],
        ...overrides,
      };
    },
    create(name, overrides = {}) {
      return api.create(capoKinds.OpenStackServer, {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
        kind: 'OpenStackServer',
        metadata: { name, namespace },
        // JSON drops the keys an override sets to undefined.
        spec: JSON.parse(JSON.stringify(fx.spec(overrides))) as OpenStackServerSpec,
      });
    },
    async get(name) {
      try {
        return await api.get(capoKinds.OpenStackServer, { namespace, name });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    bootstrapSecret(name, value) {
      return api.create(kinds.Secret, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace, labels: { 'cluster.x-k8s.io/cluster-name': 'test' } },
        type: 'cluster.x-k8s.io/secret',
        stringData: { format: 'cloud-config', value },
      });
    },
    async remove(name, timeoutMs = 60_000) {
      try {
        await api.delete(capoKinds.OpenStackServer, { namespace, name });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      await eventually(async () => (await fx.get(name)) === undefined, {
        timeoutMs,
        intervalMs: 25,
        what: `${name} deleted`,
      });
    },
    async census() {
      return {
        servers: (await admin.compute.servers.list({ all_tenants: true, project_id: project }).all()).length,
        ports: (await admin.network.ports.list({ project_id: project }).all()).length,
        trunks: (await admin.network.trunks.list({ project_id: project }).all()).length,
        volumes: await admin.blockStorage.volumes
          .list({ all_tenants: true, project_id: project })
          .all()
          .then(
            (v) => v.length,
            // A cloud without block storage has no volumes.
            (err: unknown) => {
              if (EndpointNotFoundError.is(err)) return 0;
              throw err;
            },
          ),
      };
    },
  };
  return fx;
}

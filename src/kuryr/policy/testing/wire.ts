/**
 * A pod wired as kuryr's port code wires it, for the policy tests that run without it: the Pod
 * (scheduled on a worker), a Neutron port on the bed's pod subnet carrying the given groups, and
 * the KuryrPort whose default VIF names that port and its address.
 */
import type { V1ContainerPort, V1Pod } from '@kubernetes/client-node';
import { kinds } from '../../../kube/index.ts';
import { kuryrKinds, vifName, vifPrimitive, type KuryrPort } from '../../api/index.ts';
import type { KuryrEnv } from '../../testing/env.ts';

export interface WiredPod {
  pod: V1Pod;
  portId: string;
  ip: string;
}

export interface PodToWire {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  containerPorts?: V1ContainerPort[];
  /** The groups the port is made with (what the security-groups driver said). */
  groups: (pod: V1Pod) => Promise<string[]>;
  vlanId: number;
}

export async function wirePod(env: KuryrEnv, p: PodToWire): Promise<WiredPod> {
  const node = env.workers[0]!.name;
  const pod = await env.api.create(kinds.Pod, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: p.name, namespace: p.namespace, labels: p.labels },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox', ports: p.containerPorts ?? [] }] },
  });
  const port = await env.os.network.ports.create({
    name: `${p.namespace}/${p.name}`,
    network_id: env.net.pods.networkId,
    security_groups: await p.groups(pod),
  });
  const ip = port.fixed_ips[0]!.ip_address;
  const vif = vifPrimitive({
    id: port.id,
    address: port.mac_address,
    vifName: vifName(port.id),
    vlanId: p.vlanId,
    active: true,
    network: {
      id: env.net.pods.networkId,
      subnets: [{ cidr: env.net.pods.cidr, ips: [ip], routes: [], dns: [] }],
    },
  });
  const kp: KuryrPort = {
    apiVersion: 'openstack.org/v1',
    kind: 'KuryrPort',
    metadata: { name: p.name, namespace: p.namespace },
    spec: { podUid: pod.metadata!.uid!, podNodeName: node },
    status: { vifs: { eth0: { default: true, vif: vif as unknown as Record<string, unknown> } } },
  };
  await env.api.create(kuryrKinds.KuryrPort, kp);
  return { pod, portId: port.id, ip };
}

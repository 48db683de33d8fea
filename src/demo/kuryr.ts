/**
 * The demo's Kuryr part: the cluster's pods on Neutron, its Services on Octavia, a NetworkPolicy as
 * a security group, with `shiftstack kuryr controller` in the demo's process:
 *
 *   the installer's part (trunks on the workers' primary ports, set before the machines are made;
 *   a service subnet, a pod subnet and the pods' security group on the cluster's router) →
 *   shiftstack kuryr controller → pods in two namespaces, bound to the workers, each Running on its
 *   VIF's address (a KuryrPort, a VLAN subport of its node's trunk) → a ClusterIP and a
 *   LoadBalancer Service, each a KuryrLoadBalancer with the pods as members → a NetworkPolicy, a
 *   KuryrNetworkPolicy with its security group → (--once) the namespaces deleted, the controller
 *   stopped, the installer's objects removed.
 *
 * It runs only when this build holds the controllers of its handlers (src/kuryr/registry.ts):
 * `kuryrDemoBuilt()`. The drivers follow what is built: namespace subnets and policy security
 * groups when their areas have landed, else `[neutron_defaults] pod_subnet` and
 * `pod_security_groups` (OpenShift's defaults are the former).
 */
import type { V1NetworkPolicy, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import { kinds, type KubernetesObject, type ResourceType } from '../kube/index.ts';
import { capoKinds, CONTROL_PLANE_LABEL, type Machine, type OpenStackCluster } from '../capo/api/index.ts';
import type { Logger } from '../lib/log.ts';
import { createRegistry } from '../lib/metrics.ts';
import { loadCloudsYamlText } from '../openstack/config/clouds-yaml.ts';
import {
  defaultVif,
  KURYR_LOAD_BALANCER_CLASS,
  kuryrKinds,
  type KuryrLoadBalancer,
  type KuryrNetworkPolicy,
  type KuryrPort,
} from '../kuryr/api/index.ts';
import { buildKuryrController, type KuryrController } from '../kuryr/cmd.ts';
import { withOptions, type Handler, type KuryrOptions } from '../kuryr/options.ts';
import {
  CONTROLLER_LOADERS,
  controllersFor,
  SECURITY_GROUPS_DRIVER_LOADERS,
  SUBNETS_DRIVER_LOADERS,
} from '../kuryr/registry.ts';
import type { ClusterManifest } from './manifest.ts';
import type { Step } from './scenario.ts';
import { deleteIgnoringMissing, mustHave, until } from './waits.ts';
import type { World } from './world.ts';

export const FRONTEND = 'demo-frontend';
export const BACKEND = 'demo-backend';
export const CLUSTER_IP_SERVICE = { namespace: FRONTEND, name: 'web' } as const;
export const LOAD_BALANCER_SERVICE = { namespace: FRONTEND, name: 'web-public' } as const;
export const POLICY = { namespace: BACKEND, name: 'api-from-web' } as const;

/** What the installer made for Kuryr, the running controller, and what the steps read back. */
export interface KuryrDemoState {
  kuryr?: {
    serviceNetworkId: string;
    serviceSubnetId: string;
    podNetworkId: string;
    podSubnetId: string;
    subnetPoolId: string;
    securityGroupId: string;
    routerId: string;
    controller: KuryrController;
    stop: AbortController;
    done: Promise<void>;
    /** Takes the controller's /metrics off `shiftstack up`'s list. */
    unlist: () => void;
  };
}

/** The handlers of the demo: pods and Services always; namespaces and policies where built. */
export function demoHandlers(): Handler[] {
  const handlers: Handler[] = ['vif', 'kuryrport', 'service', 'endpoints', 'kuryrloadbalancer'];
  if (SUBNETS_DRIVER_LOADERS.namespace) handlers.push('namespace', 'kuryrnetwork');
  if (SECURITY_GROUPS_DRIVER_LOADERS.policy) handlers.push('policy', 'kuryrnetworkpolicy', 'pod_label');
  return handlers;
}

/** Whether this build holds every controller the demo's handlers need. */
export function kuryrDemoBuilt(): boolean {
  return controllersFor(demoHandlers()).every((c) => CONTROLLER_LOADERS[c] !== undefined);
}

/**
 * The installer's part on a Kuryr cluster: the workers' ports are trunk parents (OpenShift's
 * installer sets trunk support on them), so each worker's pods can be its trunk's VLAN subports.
 */
export function trunkWorkers(m: ClusterManifest): void {
  for (const o of m.objects) {
    const worker = o.metadata?.labels?.[CONTROL_PLANE_LABEL] === undefined;
    if (o.kind === 'OpenStackMachine' && worker) o.spec = { ...o.spec, trunk: true };
    if (o.kind === 'OpenStackMachineTemplate' && !o.metadata?.name?.includes('control-plane')) {
      const template = (o.spec?.template ?? {}) as { spec?: Record<string, unknown> };
      o.spec = { ...o.spec, template: { ...template, spec: { ...template.spec, trunk: true } } };
    }
  }
}

type Cached = <T extends KubernetesObject>(type: ResourceType<T>) => T[];

export function kuryrSteps(
  world: World,
  state: KuryrDemoState,
  cached: Cached,
  opts: {
    log: Logger;
    clusterName: () => string;
    /** Lists the controller's /metrics with the others while it runs (Controllers.addManager). */
    addManager?: (name: string, manager: KuryrController['manager']) => () => void;
  },
): Step[] {
  const api = world.api;
  // The Cluster API workers' Nodes: their servers' ports are the trunks (trunkWorkers); the Machine
  // API's workers beside them have none.
  const workers = () =>
    cached<Machine>(capoKinds.Machine)
      .filter((m) => m.metadata?.labels?.[CONTROL_PLANE_LABEL] === undefined && m.status?.nodeRef?.name)
      .map((m) => m.status!.nodeRef!.name!)
      .filter((name) => cached<V1Node>(kinds.Node).some((n) => n.metadata?.name === name))
      .sort();
  const pods = (namespace: string) =>
    cached<V1Pod>(kinds.Pod).filter((p) => p.metadata?.namespace === namespace);
  const handlers = demoHandlers();
  const policies = handlers.includes('policy');
  const steps: Step[] = [
    {
      name: "Kuryr: the installer's part (service and pod subnets, the pods' security group, on the cluster's router) and shiftstack kuryr controller",
      budgetMs: 30_000,
      async run(signal) {
        const os = world.demo;
        const clusterName = opts.clusterName();
        const osc = mustHave(
          cached<OpenStackCluster>(capoKinds.OpenStackCluster)[0],
          'the cluster step did not run',
        );
        const routerId = mustHave(osc.status?.router?.id, 'the cluster has no router');
        const subnetOn = async (name: string, cidr: string, extra: Record<string, unknown> = {}) => {
          const network = await os.network.networks.create({ name }, { signal });
          const subnet = await os.network.subnets.create(
            { network_id: network.id, cidr, ip_version: 4, name, ...extra },
            { signal },
          );
          await os.network.routers.addInterface(routerId, { subnet_id: subnet.id }, { signal });
          return { networkId: network.id, subnetId: subnet.id };
        };
        // As OpenShift's installer makes it for Kuryr (and the kuryr bed): twice the cluster's
        // service network (the emulator's 10.96.0.0/12), Neutron allocating from the upper half
        // only, so each load balancer's VIP can take its Service's ClusterIP.
        const services = await subnetOn(`${clusterName}-kuryr-services`, '10.96.0.0/11', {
          gateway_ip: '10.127.255.254',
          allocation_pools: [{ start: '10.112.0.1', end: '10.127.255.253' }],
        });
        // The default driver's one pod subnet, and the pool namespace subnets are cut from (OpenShift's
        // cluster network 10.128.0.0/14 with its host prefix /23), apart so the router takes both.
        const podNet = await subnetOn(`${clusterName}-kuryr-pods`, '10.200.0.0/16');
        const pool = await os.network.subnetPools.create(
          { name: `${clusterName}-kuryr-pods`, prefixes: ['10.128.0.0/14'], default_prefixlen: 23 },
          { signal },
        );
        const sg = await os.network.securityGroups.create(
          { name: `${clusterName}-kuryr-pods`, description: "the pods' default group" },
          { signal },
        );
        const [external] = await os.network.networks.list({ 'router:external': true }, { signal }).all();
        const options: KuryrOptions = withOptions({
          clusterName,
          kubernetes: {
            enabledHandlers: handlers,
            podSubnetsDriver: SUBNETS_DRIVER_LOADERS.namespace ? 'namespace' : 'default',
            podSecurityGroupsDriver: policies ? 'policy' : 'default',
            serviceSecurityGroupsDriver: policies ? 'policy' : 'default',
            controllerHa: false,
          },
          neutronDefaults: {
            podSubnet: podNet.subnetId,
            podSecurityGroups: [sg.id],
            serviceSubnet: services.subnetId,
            externalSvcNet: external?.id ?? '',
          },
          namespaceSubnet: { podSubnetPool: pool.id, podRouter: routerId },
          podVifNested: { workerNodesSubnets: (osc.status?.network?.subnets ?? []).map((s) => s.id) },
          // Free ports for the health server and the exporter: the demo runs beside other processes.
          healthServer: { port: 0 },
          prometheusExporter: { controllerExporterPort: 0 },
        });
        const { config } = await loadCloudsYamlText(
          { env: {}, homedir: world.dir, cwd: world.dir },
          { text: world.cloudsYaml('demo'), origin: 'the demo clouds.yaml', cloud: 'demo' },
        );
        const controller = await buildKuryrController(
          { options, cloud: config, host: '127.0.0.1' },
          {
            log: opts.log,
            kubeConfig: world.kubeConfig,
            registry: createRegistry({ defaultMetrics: false }),
            gracefulShutdownTimeoutMs: 5_000,
          },
          signal,
        );
        const stop = new AbortController();
        const done = controller.run(stop.signal).catch((err: unknown) => {
          if (!stop.signal.aborted) opts.log.error({ err }, 'kuryr controller stopped');
        });
        const unlist = opts.addManager?.('kuryr-controller', controller.manager) ?? (() => undefined);
        state.kuryr = {
          serviceNetworkId: services.networkId,
          serviceSubnetId: services.subnetId,
          podNetworkId: podNet.networkId,
          podSubnetId: podNet.subnetId,
          subnetPoolId: pool.id,
          securityGroupId: sg.id,
          routerId,
          controller,
          stop,
          done,
          unlist,
        };
        return `shiftstack kuryr controller running ${controller.controllers.join(', ')} (subnets: ${controller.ctx.subnets.name}, security groups: ${controller.ctx.securityGroups.name})`;
      },
    },
    {
      name: `pods in ${FRONTEND} and ${BACKEND} on Kuryr: each a VLAN subport of its worker's trunk, Running on its VIF's address`,
      budgetMs: 90_000,
      async run(signal) {
        const nodes = workers();
        if (nodes.length === 0) throw new Error('no worker Node');
        const want: [string, string, string][] = [
          [FRONTEND, 'web-0', 'web'],
          [FRONTEND, 'web-1', 'web'],
          [FRONTEND, 'web-2', 'web'],
          [BACKEND, 'api-0', 'api'],
          [BACKEND, 'api-1', 'api'],
        ];
        for (const ns of [FRONTEND, BACKEND]) {
          await api
            .create(
              kinds.Namespace,
              { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
              { signal },
            )
            .catch((err: unknown) => {
              if ((err as { code?: number }).code !== 409) throw err;
            });
        }
        for (const [i, [namespace, name, app]] of want.entries()) {
          await api.create(
            kinds.Pod,
            {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { namespace, name, labels: { app } },
              spec: {
                // Bound here: no scheduler runs in the demo.
                nodeName: nodes[i % nodes.length]!,
                containers: [{ name: app, image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }],
              },
            },
            { signal },
          );
        }
        const ready = await until(signal, `${want.length} pods Running with their IPs`, () => {
          const all = [...pods(FRONTEND), ...pods(BACKEND)];
          const running = all.filter((p) => p.status?.phase === 'Running' && p.status.podIP);
          return running.length >= want.length ? running : undefined;
        });
        const ports = cached<KuryrPort>(kuryrKinds.KuryrPort);
        const lines = ready.map((p) => {
          const kp = ports.find(
            (k) => k.metadata?.namespace === p.metadata?.namespace && k.metadata?.name === p.metadata?.name,
          );
          const vlan = defaultVif(kp?.status?.vifs)?.vif.vlanId;
          return `${p.metadata?.namespace}/${p.metadata?.name} ${p.status?.podIP} on ${p.spec?.nodeName}${vlan !== undefined ? ` VLAN ${vlan}` : ''}`;
        });
        return `${ready.length} pods Running: ${lines.join(', ')}`;
      },
    },
    {
      name: `Services ${CLUSTER_IP_SERVICE.name} (ClusterIP) and ${LOAD_BALANCER_SERVICE.name} (LoadBalancer): an Octavia load balancer each, the pods as members`,
      budgetMs: 120_000,
      async run(signal) {
        for (const [svc, type] of [
          [CLUSTER_IP_SERVICE, 'ClusterIP'],
          [LOAD_BALANCER_SERVICE, 'LoadBalancer'],
        ] as const) {
          await api.create(
            kinds.Service,
            {
              apiVersion: 'v1',
              kind: 'Service',
              metadata: { ...svc },
              spec: {
                type,
                // The demo's ccm serves the CAPO cluster's own LoadBalancer Services: kuryr's class
                // keeps it off this one (on a Kuryr cluster the ccm has load balancers off instead).
                ...(type === 'LoadBalancer' ? { loadBalancerClass: KURYR_LOAD_BALANCER_CLASS } : {}),
                selector: { app: 'web' },
                ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
              },
            },
            { signal },
          );
        }
        const members = pods(FRONTEND).length;
        const lbs = await until(signal, `both KuryrLoadBalancers with ${members} members`, () => {
          const found = [CLUSTER_IP_SERVICE, LOAD_BALANCER_SERVICE].map((s) =>
            cached<KuryrLoadBalancer>(kuryrKinds.KuryrLoadBalancer).find(
              (k) => k.metadata?.namespace === s.namespace && k.metadata?.name === s.name,
            ),
          );
          return found.every((k) => k?.status?.loadbalancer?.id && (k.status.members?.length ?? 0) >= members)
            ? (found as KuryrLoadBalancer[])
            : undefined;
        });
        const external = await until(signal, `an external IP on ${LOAD_BALANCER_SERVICE.name}`, () => {
          const s = cached<V1Service>(kinds.Service).find(
            (x) => x.metadata?.namespace === FRONTEND && x.metadata.name === LOAD_BALANCER_SERVICE.name,
          );
          return s?.status?.loadBalancer?.ingress?.[0]?.ip;
        });
        return lbs
          .map(
            (k) =>
              `${k.metadata?.name}: load balancer ${k.status?.loadbalancer?.name ?? k.status?.loadbalancer?.id} at ${k.status?.loadbalancer?.ip}, ${k.status?.members?.length} members`,
          )
          .concat(`external IP ${external}`)
          .join('; ');
      },
    },
  ];
  if (policies) {
    steps.push({
      name: `NetworkPolicy ${POLICY.namespace}/${POLICY.name}: the api pods take port 8080 from ${FRONTEND}'s web pods only, as a security group`,
      budgetMs: 60_000,
      async run(signal) {
        // Written as kubectl sends it (`from`, which the client's type spells `_from`).
        const policy = {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { ...POLICY },
          spec: {
            podSelector: { matchLabels: { app: 'api' } },
            policyTypes: ['Ingress'],
            ingress: [
              {
                from: [
                  {
                    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': FRONTEND } },
                    podSelector: { matchLabels: { app: 'web' } },
                  },
                ],
                ports: [{ protocol: 'TCP', port: 8080 as never }],
              },
            ],
          },
        } as unknown as V1NetworkPolicy;
        await api.create(kinds.NetworkPolicy, policy, { signal });
        const knp = await until(signal, `KuryrNetworkPolicy ${POLICY.name} with its security group`, () => {
          const k = cached<KuryrNetworkPolicy>(kuryrKinds.KuryrNetworkPolicy).find(
            (x) => x.metadata?.namespace === POLICY.namespace && x.metadata?.name === POLICY.name,
          );
          // Its rules written (status.podSelector comes with them): only then do the api pods take the group.
          return k?.status?.securityGroupId && k.status.podSelector && k.status.securityGroupRules.length > 0
            ? k
            : undefined;
        });
        return `security group ${knp.status?.securityGroupId} with ${knp.status?.securityGroupRules?.length ?? 0} rules`;
      },
    });
  }
  return steps;
}

/** (--once) Before the machines go: the namespaces (Kuryr releases their ports and load balancers), then the installer's part. */
export function kuryrTeardown(world: World, state: KuryrDemoState, cached: Cached): Step {
  return {
    name: `teardown: delete ${FRONTEND} and ${BACKEND} (Kuryr releases their ports and load balancers), stop the kuryr controller, remove the installer's Kuryr objects`,
    budgetMs: 120_000,
    always: true,
    async run(signal) {
      const api = world.api;
      for (const ns of [FRONTEND, BACKEND]) {
        await deleteIgnoringMissing(() => api.delete(kinds.Namespace, { name: ns }, { signal }));
      }
      await until(signal, 'the namespaces gone, with their KuryrPorts and KuryrLoadBalancers', () => {
        const left = (o: KubernetesObject) => [FRONTEND, BACKEND].includes(o.metadata?.namespace ?? '');
        return (
          !cached(kinds.Namespace).some((n) => [FRONTEND, BACKEND].includes(n.metadata?.name ?? '')) &&
          !cached(kuryrKinds.KuryrPort).some(left) &&
          !cached(kuryrKinds.KuryrLoadBalancer).some(left)
        );
      });
      const k = state.kuryr;
      if (!k) return 'namespaces deleted (the kuryr controller never started)';
      k.stop.abort(new Error('the demo is tearing down'));
      k.unlist();
      await k.done;
      const os = world.demo;
      for (const subnetId of [k.serviceSubnetId, k.podSubnetId]) {
        await deleteIgnoringMissing(() =>
          os.network.routers.removeInterface(k.routerId, { subnet_id: subnetId }, { signal }),
        );
      }
      for (const id of [k.serviceNetworkId, k.podNetworkId]) {
        await deleteIgnoringMissing(() => os.network.networks.delete(id, { signal }));
      }
      await deleteIgnoringMissing(() => os.network.securityGroups.delete(k.securityGroupId, { signal }));
      await deleteIgnoringMissing(() => os.network.subnetPools.delete(k.subnetPoolId, { signal }));
      return 'namespaces deleted, the kuryr controller stopped, its subnets, subnet pool and security group removed';
    },
  };
}

/**
 * What kuryr is told: kuryr.conf's sections and options as typed fields (camelCase of upstream's
 * names: `[vif_pool] ports_pool_min` is `vifPool.portsPoolMin`). The defaults are upstream's, with
 * OpenShift's `kuryrConfig` defaults over them (openshift/api operator/v1 KuryrConfig, and the
 * kuryr.conf the cluster-network-operator renders): namespace subnets, policy security groups,
 * pools of min 1 / max 0 / batch 3 without prepopulation. kuryr.conf is read into this by
 * src/kuryr/config; every other module only reads it.
 */

/** Upstream's handler names (`[kubernetes] enabled_handlers`). */
export const HANDLERS = [
  'vif',
  'kuryrport',
  'namespace',
  'kuryrnetwork',
  'kuryrnetwork_population',
  'service',
  'endpoints',
  'kuryrloadbalancer',
  'policy',
  'kuryrnetworkpolicy',
  'pod_label',
] as const;
export type Handler = (typeof HANDLERS)[number];

export interface KuryrOptions {
  /** Ours: names the cluster in the default owner tag (`kuryr-cluster:<name>`) and in load-balancer names. */
  clusterName: string;
  kubernetes: {
    /** `pod_vif_driver`: only `nested-vlan` (pods as trunk subports) is built. */
    podVifDriver: 'nested-vlan';
    /** `vif_pool_driver`: `nested` (pools of subports) or `noop` (a port per pod, no pool). */
    vifPoolDriver: 'nested' | 'noop';
    enabledHandlers: Handler[];
    /** `pod_subnets_driver`: `default` (`[neutron_defaults] pod_subnet`) or `namespace` (a subnet per namespace). */
    podSubnetsDriver: 'default' | 'namespace';
    /** `pod_security_groups_driver`: `default` (`[neutron_defaults] pod_security_groups`) or `policy`. */
    podSecurityGroupsDriver: 'default' | 'policy';
    serviceSecurityGroupsDriver: 'default' | 'policy';
    /** `controller_ha`: run for a Lease (ours is a Kubernetes Lease, not upstream's elector sidecar). */
    controllerHa: boolean;
    /** `port_debug`: name a taken port after its pod. */
    portDebug: boolean;
  };
  neutronDefaults: {
    /** `project`: the project pod ports, networks and load balancers are made in (the client's when empty). */
    project: string;
    /** `pod_subnet`: the pods' subnet with the default subnets driver. */
    podSubnet: string;
    podSecurityGroups: string[];
    /** `service_subnet`: where Services' load-balancer VIPs go. */
    serviceSubnet: string;
    /** `network_device_mtu`: the MTU of namespace networks; 0 = Neutron's default. */
    networkDeviceMtu: number;
    /** `resource_tags`: put on everything kuryr creates; see `ownerTags`. */
    resourceTags: string[];
    /** `external_svc_net` / `external_svc_subnet`: floating IPs of LoadBalancer Services. */
    externalSvcNet: string;
    externalSvcSubnet: string;
  };
  namespaceSubnet: {
    /** `pod_subnet_pool`: the subnet pool namespace subnets are cut from. */
    podSubnetPool: string;
    /** `pod_router`: the router each namespace subnet is attached to. */
    podRouter: string;
  };
  podVifNested: {
    /** `worker_nodes_subnets`: the subnets of the nodes' trunk-parent ports. */
    workerNodesSubnets: string[];
  };
  vifPool: {
    portsPoolMin: number;
    /** 0: no maximum. */
    portsPoolMax: number;
    portsPoolBatch: number;
    /** Seconds between recycling passes. */
    portsPoolUpdateFrequency: number;
    /** Ours (upstream's BULK_PORTS_CREATION_REQUESTS constant): bulk port creates in flight per process. */
    maxBulkCreatesInFlight: number;
  };
  octaviaDefaults: {
    /** `member_mode`: L3 (members on the VIP's subnet, routed to the pods: amphora) or L2 (on the pods' own subnets: OVN). */
    memberMode: 'L3' | 'L2';
    /** `sg_mode`: `create` a group per load balancer, or `update` the VIP port's. */
    sgMode: 'create' | 'update';
    enforceSgRules: boolean;
    /** `lbaas_activation_timeout`, seconds: beyond it a PENDING load balancer is reported, not thrown. */
    lbaasActivationTimeout: number;
    /** `timeout_client_data` / `timeout_member_data`, milliseconds; 0 = Octavia's default. */
    timeoutClientData: number;
    timeoutMemberData: number;
    /** `[kubernetes] endpoints_driver_octavia_provider`: `default`, `amphora` or `ovn`. */
    provider: string;
    /** `lb_algorithm`: the pools' algorithm (ROUND_ROBIN); the ovn provider only has SOURCE_IP_PORT. */
    lbAlgorithm: 'ROUND_ROBIN' | 'LEAST_CONNECTIONS' | 'SOURCE_IP' | 'SOURCE_IP_PORT';
    /**
     * Ours: how long endpoint changes must be quiet before a Service's members are written, in
     * milliseconds (a burst of pods is one batch member update per pool; never longer than 10×).
     */
    memberBatchWindowMs: number;
  };
  cniDaemon: {
    /** `bind_address`. */
    bindAddress: string;
    /** `vif_annotation_timeout`, seconds: how long an ADD waits for the pod's VIF. */
    vifAnnotationTimeout: number;
    /** Ours: the CNI request limit (upstream's documented 180 s), seconds. */
    cniTimeout: number;
  };
  binding: {
    /** `default_driver`: `kuryr.lib.binding.drivers.vlan` (upstream's) or `veth` (ours: a veth pair to a host bridge). */
    defaultDriver: string;
    /** `link_iface`: the trunk-parent link the VLAN sub-interfaces go on. */
    linkIface: string;
    /** Ours, for the veth binding: the host bridge pods are attached to. */
    bridge: string;
  };
  healthServer: { port: number };
  /** `[cni_health_server] port`: kuryr-daemon's probes (`/alive`, `/ready`). */
  cniHealthServer: { port: number };
  prometheusExporter: { controllerExporterPort: number; cniExporterPort: number };
}

export const VLAN_BINDING = 'kuryr.lib.binding.drivers.vlan';
export const VETH_BINDING = 'veth';

export function defaultOptions(): KuryrOptions {
  return {
    clusterName: 'kubernetes',
    kubernetes: {
      podVifDriver: 'nested-vlan',
      vifPoolDriver: 'nested',
      enabledHandlers: [
        'vif',
        'kuryrport',
        'namespace',
        'kuryrnetwork',
        'service',
        'endpoints',
        'kuryrloadbalancer',
        'policy',
        'kuryrnetworkpolicy',
        'pod_label',
      ],
      podSubnetsDriver: 'namespace',
      podSecurityGroupsDriver: 'policy',
      serviceSecurityGroupsDriver: 'policy',
      controllerHa: false,
      portDebug: false,
    },
    neutronDefaults: {
      project: '',
      podSubnet: '',
      podSecurityGroups: [],
      serviceSubnet: '',
      networkDeviceMtu: 0,
      resourceTags: [],
      externalSvcNet: '',
      externalSvcSubnet: '',
    },
    namespaceSubnet: { podSubnetPool: '', podRouter: '' },
    podVifNested: { workerNodesSubnets: [] },
    vifPool: {
      portsPoolMin: 1,
      portsPoolMax: 0,
      portsPoolBatch: 3,
      portsPoolUpdateFrequency: 20,
      maxBulkCreatesInFlight: 20,
    },
    octaviaDefaults: {
      memberMode: 'L3',
      sgMode: 'update',
      enforceSgRules: true,
      lbaasActivationTimeout: 300,
      timeoutClientData: 0,
      timeoutMemberData: 0,
      provider: 'default',
      lbAlgorithm: 'ROUND_ROBIN',
      memberBatchWindowMs: 100,
    },
    cniDaemon: { bindAddress: '127.0.0.1:5036', vifAnnotationTimeout: 60, cniTimeout: 180 },
    binding: { defaultDriver: VLAN_BINDING, linkIface: '', bridge: 'kuryr-br0' },
    healthServer: { port: 8082 },
    cniHealthServer: { port: 8090 },
    prometheusExporter: { controllerExporterPort: 9654, cniExporterPort: 9655 },
  };
}

type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends unknown[] ? T[K] : T[K] extends object ? DeepPartial<T[K]> : T[K];
};
export type KuryrOptionsOverrides = DeepPartial<KuryrOptions>;

/** The defaults with some sections' options replaced (tests, the demo). Lists are replaced whole. */
export function withOptions(
  overrides: KuryrOptionsOverrides,
  base: KuryrOptions = defaultOptions(),
): KuryrOptions {
  const out = structuredClone(base) as unknown as Record<string, unknown>;
  for (const [section, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (typeof value === 'object' && !Array.isArray(value) && value !== null) {
      out[section] = { ...(out[section] as object), ...value };
    } else out[section] = value;
  }
  return out as unknown as KuryrOptions;
}

/** Whether a handler runs. */
export function handlerEnabled(options: KuryrOptions, handler: Handler): boolean {
  return options.kubernetes.enabledHandlers.includes(handler);
}

/**
 * kuryr.conf → {@link KuryrOptions}: every group and option upstream reads, by upstream's names
 * (`kuryr_kubernetes/config.py`, the driver modules' options, kuryr-lib's `[binding]`, oslo.log's
 * `[DEFAULT]`), onto the defaults of src/kuryr/options.ts (upstream's, with OpenShift's `kuryrConfig`
 * over them). Three kinds of key:
 *
 * - implemented: read with oslo's value rules; a bad value is a problem naming `file:line`,
 *   `[group] key`, the value and the fix;
 * - upstream's but not built here ({@link IGNORED}): accepted, and named in a warning saying why it
 *   changes nothing (never silently dropped);
 * - unknown: a warning with a did-you-mean, as oslo would ignore it.
 *
 * After the values, what the enabled handlers need together is checked (a namespace subnets driver
 * needs a subnet pool and a router; Services need the service subnet; …), each problem naming the
 * option to set. `[neutron]` (the cloud) is read by neutron.ts.
 */
import { closest, ConfigError } from '../../lib/config.ts';
import { problem } from '../../openstack/config/problems.ts';
import {
  defaultOptions,
  HANDLERS,
  VETH_BINDING,
  VLAN_BINDING,
  type Handler,
  type KuryrOptions,
} from '../options.ts';
import { iniWhere, readOsloIniFiles, type IniDocument, type IniEntry } from './ini.ts';
import { NEUTRON_GROUP } from './neutron.ts';
import { GroupReader, type ReadContext } from './reader.ts';

/** Where OpenShift's manifests mount kuryr.conf (and upstream's image reads `--config-dir /etc/kuryr`). */
export const DEFAULT_CONFIG_FILE = '/etc/kuryr/kuryr.conf';

/** The service account files of an in-cluster client: `[kubernetes]` keys naming them say nothing new. */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

const KUBECONFIG_INSTEAD =
  "shiftstack reaches the API server through its kubeconfig (--kubeconfig, KUBECONFIG, ~/.kube/config, then the pod's service account)";
const LOGGING = "oslo.log's; shiftstack logs to stderr (shiftstack --log-level, --log-format)";
const ONE_PROJECT = "only upstream's default driver (every object in [neutron_defaults] project) is built";

/**
 * Upstream's options shiftstack accepts without acting on them, by group, with why. A key here is
 * named in a warning when it is set (except where noted).
 */
export const IGNORED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  DEFAULT: {
    verbose: LOGGING,
    log_file: LOGGING,
    log_dir: LOGGING,
    log_config_append: LOGGING,
    use_stderr: LOGGING,
    use_json: `${LOGGING}: use --log-format=json`,
    default_log_levels: LOGGING,
    pybasedir: "the Python package's location; nothing to find here",
    bindir: "kuryr-lib's binding executables; the bindings are built into shiftstack kuryr daemon",
    subnetpool_name_prefix: "kuryr-lib's option for libnetwork",
    deployment_type: "kuryr-lib's option for libnetwork; pods are always nested (trunk subports)",
  },
  kubernetes: {
    api_root: KUBECONFIG_INSTEAD,
    ssl_client_crt_file: KUBECONFIG_INSTEAD,
    ssl_client_key_file: KUBECONFIG_INSTEAD,
    ssl_ca_crt_file: KUBECONFIG_INSTEAD,
    ssl_verify_server_crt: KUBECONFIG_INSTEAD,
    token_file: KUBECONFIG_INSTEAD,
    controller_ha_elector_port:
      'the leader is elected on the Lease kuryr-controller by the controller itself: no elector sidecar',
    enable_manager: "the pool manager's HTTP API is not built; the pools are inspected through metrics",
    watch_retry_timeout: "shiftstack's informers re-watch and relist with back-off on their own",
    watch_connection_timeout: "shiftstack's informers re-watch and relist with back-off on their own",
    watch_read_timeout: "shiftstack's informers re-watch and relist with back-off on their own",
    nodes_subnets_driver:
      "a node's trunk is found from its Node's providerID, so the nodes' subnets are not looked up",
    multi_vif_drivers: 'one interface per pod (no additional VIFs through network attachments)',
    ingress_lbaas_driver: 'OpenShift Routes and Ingress on Octavia are not built',
    port_debug: "a taken port keeps its pool name; a pod's port is named in its KuryrPort (status.vifs)",
  },
  neutron_defaults: {
    ovs_bridge: "pods are VLAN subports of their node's trunk (nested), never plugged into OVS directly",
    subnet_mapping: 'one interface per pod (no additional VIFs through network attachments)',
  },
  pod_vif_nested: {
    rev_update_attempts: 'ports are updated with their revision checked and the reconcile retried',
  },
  vif_pool: {
    pools_vif_drivers: 'one pool driver (nested) for every pod',
    vif_pool_mapping: 'one pool driver (nested) for every pod',
  },
  octavia_defaults: {
    sg_mode:
      "load balancers keep the security group Octavia gives their VIP port: kuryr does not manage load balancers' groups yet",
  },
  cni_daemon: {
    daemon_enabled: 'the CNI plugin always hands its requests to the daemon',
    worker_num: 'the daemon serves requests on one event loop, without worker processes',
    pyroute2_timeout: 'shiftstack drives netlink with ip(8), bounded by the CNI request limit',
    docker_mode: 'the daemon enters network namespaces through their paths, as the runtime gives them',
    netns_proc_dir: 'the daemon enters network namespaces through their paths, as the runtime gives them',
    cni_failures_count: "the daemon's health reports the binding it cannot make, per request",
  },
  binding: {
    driver: "kuryr-lib's deprecated name: write default_driver",
    enabled_drivers: 'the binding is [binding] default_driver',
    veth_dst_prefix: "the interface in the pod is named by the runtime's CNI_IFNAME",
  },
  health_server: {
    max_memory_usage: 'no memory check in the health probe; set a memory limit on the pod instead',
  },
  prometheus_exporter: {},
  cni_health_server: {
    max_memory_usage: 'no memory check in the health probe; set a memory limit on the pod instead',
    cg_path: 'no memory check in the health probe; set a memory limit on the pod instead',
  },
};

/** Groups upstream reads that shiftstack does not build at all: every key in them is warned about. */
const IGNORED_GROUPS: Readonly<Record<string, string>> = {
  ingress: 'OpenShift Routes and Ingress on Octavia are not built',
  sriov: 'SR-IOV pods are not built; pods are VLAN subports',
  cache_defaults: 'the drivers cache nothing that outlives a reconcile',
  pool_manager: "the pool manager's HTTP API is not built",
  kuryr_kubernetes: "the Python package's location; nothing to find here",
  namespace_sg: 'namespace isolation by security group is not built; use NetworkPolicies',
  namespace_handler_caching: 'the drivers cache nothing that outlives a reconcile',
};

/** Upstream's handler names shiftstack does not build, and why. */
const UNBUILT_HANDLERS: Readonly<Record<string, string>> = {
  openshift_machine: "a node's trunk is found from its Node's providerID, so Machines are not watched",
  machine: "a node's trunk is found from its Node's providerID, so Machines are not watched",
  ocproute: 'OpenShift Routes on Octavia are not built',
  ingresslb: 'Ingress on Octavia is not built',
  lb: "upstream's old name of the Service handlers: use service, endpoints, kuryrloadbalancer",
  lbaasspec: "upstream's old name of the Service handlers: use service, endpoints, kuryrloadbalancer",
  kuryrnet: "upstream's old KuryrNet: use namespace, kuryrnetwork",
  kuryrnetpolicy: "upstream's old KuryrNetPolicy: use policy, kuryrnetworkpolicy",
  ingress: 'Ingress on Octavia is not built',
};

export interface KuryrConf {
  options: KuryrOptions;
  /** `[DEFAULT] debug`: upstream logs at debug level (the command's --log-level, when given, wins). */
  debug: boolean;
  /** What was accepted and changes nothing, and keys not known: one line each, naming file:line and key. */
  warnings: string[];
  /** The document read, for `[neutron]` (neutron.ts). */
  doc: IniDocument;
}

/**
 * Who reads kuryr.conf: the controller needs the options its handlers use together (a subnet pool
 * for namespace subnets, the service subnet, …); the CNI daemon reads the same file for its own
 * groups and is not refused over the controller's.
 */
export type KuryrComponent = 'controller' | 'daemon';

/** Reads and checks the files, later files winning (oslo's repeated --config-file). */
export async function loadKuryrConf(
  files: readonly string[],
  opts: { component?: KuryrComponent; signal?: AbortSignal } = {},
): Promise<KuryrConf> {
  return readKuryrConf(await readOsloIniFiles(files, opts.signal), opts.component);
}

/** kuryr.conf's options; every problem in one ConfigError carrying the warnings. */
export function readKuryrConf(doc: IniDocument, component: KuryrComponent = 'controller'): KuryrConf {
  const ctx: ReadContext = { doc, problems: [], warnings: [] };
  const d = defaultOptions();
  const o = defaultOptions();
  const readers: GroupReader[] = [];
  const group = (name: string) => {
    const r = new GroupReader(ctx, name);
    readers.push(r);
    return r;
  };

  const debug = group('DEFAULT').bool('debug', false);
  const k = group('kubernetes');
  o.clusterName = k.text('cluster_name', d.clusterName) || d.clusterName;
  o.kubernetes.podVifDriver = k.oneOf('pod_vif_driver', d.kubernetes.podVifDriver, ['nested-vlan'], {
    'neutron-vif': "pods get ports of their own on the nodes' network only in nested mode here",
    'nested-macvlan': "pods are VLAN subports of their node's trunk",
    'nested-dpdk': "pods are VLAN subports of their node's trunk",
    sriov: 'SR-IOV pods are not built',
  });
  o.kubernetes.vifPoolDriver = k.oneOf('vif_pool_driver', d.kubernetes.vifPoolDriver, ['nested', 'noop'], {
    neutron: "pools of ports on the nodes' network are for the neutron-vif driver",
    multi_pool: 'one pool driver (nested) for every pod',
  });
  o.kubernetes.podSubnetsDriver = k.oneOf('pod_subnets_driver', d.kubernetes.podSubnetsDriver, [
    'default',
    'namespace',
  ]);
  o.kubernetes.podSecurityGroupsDriver = k.oneOf(
    'pod_security_groups_driver',
    d.kubernetes.podSecurityGroupsDriver,
    ['default', 'policy'],
    { namespace: 'namespace isolation by security group is not built; use NetworkPolicies' },
  );
  o.kubernetes.serviceSecurityGroupsDriver = k.oneOf(
    'service_security_groups_driver',
    d.kubernetes.serviceSecurityGroupsDriver,
    ['default', 'policy'],
    { namespace: 'namespace isolation by security group is not built; use NetworkPolicies' },
  );
  for (const key of [
    'pod_project_driver',
    'service_project_driver',
    'namespace_project_driver',
    'network_policy_project_driver',
  ]) {
    k.oneOf(key, 'default', ['default'], { annotation: ONE_PROJECT });
  }
  k.oneOf('service_subnets_driver', 'default', ['default']);
  k.oneOf('endpoints_lbaas_driver', 'lbaasv2', ['lbaasv2']);
  k.oneOf('service_public_ip_driver', 'neutron_floating_ip', ['neutron_floating_ip']);
  k.oneOf('network_policy_driver', 'default', ['default']);
  o.octaviaDefaults.provider =
    k.text('endpoints_driver_octavia_provider', d.octaviaDefaults.provider) || 'default';
  o.kubernetes.controllerHa = k.bool('controller_ha', d.kubernetes.controllerHa);
  o.kubernetes.enabledHandlers = handlers(k, d.kubernetes.enabledHandlers);

  const n = group('neutron_defaults');
  o.neutronDefaults.project = n.text('project', d.neutronDefaults.project);
  o.neutronDefaults.podSubnet = n.text('pod_subnet', d.neutronDefaults.podSubnet);
  o.neutronDefaults.podSecurityGroups = n.list('pod_security_groups', d.neutronDefaults.podSecurityGroups);
  o.neutronDefaults.serviceSubnet = n.text('service_subnet', d.neutronDefaults.serviceSubnet);
  o.neutronDefaults.externalSvcNet = n.text('external_svc_net', d.neutronDefaults.externalSvcNet);
  o.neutronDefaults.externalSvcSubnet = n.text('external_svc_subnet', d.neutronDefaults.externalSvcSubnet);
  o.neutronDefaults.networkDeviceMtu = n.int('network_device_mtu', d.neutronDefaults.networkDeviceMtu, {
    min: 0,
    max: 65535,
    meaning: "the namespace networks' MTU (0: Neutron's default)",
  });
  o.neutronDefaults.resourceTags = n.list('resource_tags', d.neutronDefaults.resourceTags);
  o.octaviaDefaults.lbaasActivationTimeout = n.int(
    'lbaas_activation_timeout',
    d.octaviaDefaults.lbaasActivationTimeout,
    {
      min: 1,
      meaning: 'the seconds a load balancer may stay PENDING before it is reported,',
    },
  );

  const ns = group('namespace_subnet');
  o.namespaceSubnet.podSubnetPool = ns.text('pod_subnet_pool', d.namespaceSubnet.podSubnetPool);
  o.namespaceSubnet.podRouter = ns.text('pod_router', d.namespaceSubnet.podRouter);

  const pvn = group('pod_vif_nested');
  o.podVifNested.workerNodesSubnets = pvn.list('worker_nodes_subnets', d.podVifNested.workerNodesSubnets, [
    'worker_nodes_subnet',
  ]);

  const vp = group('vif_pool');
  o.vifPool.portsPoolMin = vp.int('ports_pool_min', d.vifPool.portsPoolMin, {
    min: 0,
    meaning: 'the free ports kept per pool,',
  });
  o.vifPool.portsPoolMax = vp.int('ports_pool_max', d.vifPool.portsPoolMax, {
    min: 0,
    meaning: 'the most free ports kept per pool (0: no maximum),',
  });
  o.vifPool.portsPoolBatch = vp.int('ports_pool_batch', d.vifPool.portsPoolBatch, {
    min: 1,
    meaning: 'the ports created per bulk request,',
  });
  o.vifPool.portsPoolUpdateFrequency = vp.int(
    'ports_pool_update_frequency',
    d.vifPool.portsPoolUpdateFrequency,
    {
      min: 1,
      meaning: 'the seconds between recycling passes,',
    },
  );
  o.vifPool.maxBulkCreatesInFlight = vp.int(
    'bulk_ports_creation_requests',
    d.vifPool.maxBulkCreatesInFlight,
    {
      min: 1,
      meaning: 'the bulk port creates in flight at once,',
    },
  );

  const od = group('octavia_defaults');
  o.octaviaDefaults.memberMode = od.oneOf('member_mode', d.octaviaDefaults.memberMode, ['L3', 'L2']);
  o.octaviaDefaults.enforceSgRules = od.bool('enforce_sg_rules', d.octaviaDefaults.enforceSgRules);
  o.octaviaDefaults.timeoutClientData = od.int('timeout_client_data', d.octaviaDefaults.timeoutClientData, {
    min: 0,
    meaning: "the listeners' client data timeout in milliseconds (0: Octavia's default),",
  });
  o.octaviaDefaults.timeoutMemberData = od.int('timeout_member_data', d.octaviaDefaults.timeoutMemberData, {
    min: 0,
    meaning: "the listeners' member data timeout in milliseconds (0: Octavia's default),",
  });
  o.octaviaDefaults.memberBatchWindowMs = od.int(
    'member_batch_window_ms',
    d.octaviaDefaults.memberBatchWindowMs,
    {
      min: 0,
      meaning: "the quiet milliseconds before a Service's endpoint changes become one member update,",
    },
  );
  const algorithm = od.entry('lb_algorithm');
  if (algorithm && algorithm.value !== '' && algorithm.value !== 'ROUND_ROBIN') {
    od.warn(algorithm, "ignored: pools use ROUND_ROBIN, upstream's default");
  }

  const cd = group('cni_daemon');
  o.cniDaemon.bindAddress = cd.text('bind_address', d.cniDaemon.bindAddress);
  o.cniDaemon.vifAnnotationTimeout = cd.int('vif_annotation_timeout', d.cniDaemon.vifAnnotationTimeout, {
    min: 1,
    meaning: "the seconds a CNI ADD waits for the pod's VIF,",
  });
  o.cniDaemon.cniTimeout = cd.int('cni_timeout', d.cniDaemon.cniTimeout, {
    min: 1,
    meaning: 'the seconds a CNI request may take,',
  });

  const b = group('binding');
  o.binding.defaultDriver = b.oneOf<string>(
    'default_driver',
    d.binding.defaultDriver,
    [VLAN_BINDING, VETH_BINDING],
    {
      'kuryr.lib.binding.drivers.veth': `upstream's veth binding plugs into OVS; shiftstack's veth binding (a veth pair to a host bridge) is written ${VETH_BINDING}`,
      'kuryr.lib.binding.drivers.macvlan': "pods are VLAN subports of their node's trunk",
    },
  );
  o.binding.linkIface = b.text('link_iface', d.binding.linkIface);
  o.binding.bridge = b.text('bridge', d.binding.bridge) || d.binding.bridge;

  const hs = group('health_server');
  o.healthServer.port = hs.port('port', d.healthServer.port);
  const chs = group('cni_health_server');
  o.cniHealthServer.port = chs.port('port', d.cniHealthServer.port);
  const pe = group('prometheus_exporter');
  o.prometheusExporter.controllerExporterPort = pe.port(
    'controller_exporter_port',
    d.prometheusExporter.controllerExporterPort,
  );
  o.prometheusExporter.cniExporterPort = pe.port('cni_exporter_port', d.prometheusExporter.cniExporterPort);

  // Every key that is neither read nor a known upstream option.
  const asked = new Map(readers.map((r) => [r.group, r]));
  for (const section of doc.sections) {
    if (section.name === NEUTRON_GROUP) continue; // neutron.ts reads and checks it
    const reader = asked.get(section.name) ?? new GroupReader(ctx, section.rawName);
    const groupIgnored = IGNORED_GROUPS[section.name];
    const ignored = IGNORED[section.name] ?? {};
    const known = [...reader.asked, ...Object.keys(ignored)];
    for (const entry of lastOfEach(section.entries)) {
      if (groupIgnored !== undefined) {
        reader.warn(entry, `ignored: ${groupIgnored}`);
      } else if (reader.asked.has(entry.name)) {
        continue;
      } else if (ignored[entry.name] !== undefined) {
        if (!harmless(section.name, entry)) reader.warn(entry, `ignored: ${ignored[entry.name]}`);
      } else if (!IGNORED[section.name] && !asked.has(section.name)) {
        const near = closest(section.name, [...asked.keys(), ...Object.keys(IGNORED), NEUTRON_GROUP]);
        reader.warn(
          entry,
          `[${section.rawName}] is not a group kuryr reads, ignored${near ? ` (did you mean [${near}]?)` : ''}`,
        );
      } else {
        const near = closest(entry.name, known);
        reader.warn(
          entry,
          `not an option of [${section.rawName}], ignored${near ? ` (did you mean "${near}"?)` : ''}`,
        );
      }
    }
  }

  if (component === 'controller') together(o, doc, ctx);
  if (ctx.problems.length > 0) throw new ConfigError(ctx.problems, ctx.warnings);
  return { options: o, debug, warnings: ctx.warnings, doc };
}

/** `[kubernetes] enabled_handlers`: upstream's names; one not built here is named and skipped. */
function handlers(k: GroupReader, fallback: readonly Handler[]): Handler[] {
  const entry = k.entry('enabled_handlers');
  if (!entry) return [...fallback];
  const out: Handler[] = [];
  for (const name of k.list('enabled_handlers', fallback)) {
    if ((HANDLERS as readonly string[]).includes(name)) {
      if (!out.includes(name as Handler)) out.push(name as Handler);
    } else if (UNBUILT_HANDLERS[name] !== undefined) {
      k.warn(entry, `handler ${name} skipped: ${UNBUILT_HANDLERS[name]}`);
    } else {
      const near = closest(name, HANDLERS);
      k.problem(
        entry,
        name,
        `${name} is not one of upstream's handlers`,
        `use handler names among ${HANDLERS.join(', ')}${near ? ` (did you mean "${near}"?)` : ''}`,
      );
    }
  }
  return out;
}

/**
 * Values of accepted options that ask for what shiftstack does anyway, so nothing is lost: the
 * in-cluster connection OpenShift's operator writes for `[kubernetes]`, no additional VIFs, the CNI
 * plugin handing its requests to the daemon.
 */
function harmless(group: string, entry: IniEntry): boolean {
  const v = entry.value.trim();
  if (group === 'cni_daemon' && entry.name === 'daemon_enabled') return /^(true|yes|on|1)$/i.test(v);
  if (group !== 'kubernetes') return false;
  switch (entry.name) {
    case 'multi_vif_drivers':
      return v === '' || v === 'noop';
    case 'port_debug':
      return /^(false|no|off|0)$/i.test(v);
    case 'api_root':
      return v === '';
    case 'token_file':
    case 'ssl_ca_crt_file':
      return v === '' || v.startsWith(`${SERVICE_ACCOUNT_DIR}/`);
    case 'ssl_verify_server_crt':
      return true;
    default:
      return false;
  }
}

function lastOfEach(entries: readonly IniEntry[]): IniEntry[] {
  const byName = new Map<string, IniEntry>();
  for (const e of entries) byName.set(e.name, e);
  return [...byName.values()];
}

/**
 * What options need of each other for the handlers enabled (upstream fails on these at the first
 * pod or Service; here the controller does not start). Each problem names the option to set.
 */
function together(o: KuryrOptions, doc: IniDocument, ctx: ReadContext): void {
  const file = doc.files[doc.files.length - 1] ?? 'kuryr.conf';
  const need = (group: string, key: string, text: string, fix: string) =>
    ctx.problems.push(problem(where(doc, group, key) ?? file, `[${group}] ${key}`, undefined, text, fix));
  const on = (h: Handler) => o.kubernetes.enabledHandlers.includes(h);
  const pods = on('vif') || on('kuryrport');
  if (pods && o.kubernetes.podSubnetsDriver === 'default' && !o.neutronDefaults.podSubnet) {
    need(
      'neutron_defaults',
      'pod_subnet',
      'missing: pod_subnets_driver = default puts every pod on this subnet',
      "set it to the ID of the pods' subnet, or use pod_subnets_driver = namespace with [namespace_subnet]",
    );
  }
  if ((pods || on('namespace') || on('kuryrnetwork')) && o.kubernetes.podSubnetsDriver === 'namespace') {
    if (!o.namespaceSubnet.podSubnetPool) {
      need(
        'namespace_subnet',
        'pod_subnet_pool',
        "missing: pod_subnets_driver = namespace cuts each namespace's subnet from this subnet pool",
        'set it to the ID of a Neutron subnet pool',
      );
    }
    if (!o.namespaceSubnet.podRouter) {
      need(
        'namespace_subnet',
        'pod_router',
        'missing: each namespace subnet is attached to this router',
        "set it to the ID of the router of the nodes' network",
      );
    }
  }
  if (on('kuryrnetwork_population') && o.kubernetes.podSubnetsDriver !== 'namespace') {
    need(
      'kubernetes',
      'enabled_handlers',
      'kuryrnetwork_population fills the pools of namespace networks, and pod_subnets_driver is not namespace',
      'remove kuryrnetwork_population, or set pod_subnets_driver = namespace',
    );
  }
  if (
    pods &&
    o.kubernetes.podSecurityGroupsDriver === 'default' &&
    o.neutronDefaults.podSecurityGroups.length === 0
  ) {
    need(
      'neutron_defaults',
      'pod_security_groups',
      'missing: pod_security_groups_driver = default gives every pod these groups',
      "set it to the IDs of the pods' security groups, comma-separated",
    );
  }
  if ((on('service') || on('kuryrloadbalancer')) && !o.neutronDefaults.serviceSubnet) {
    need(
      'neutron_defaults',
      'service_subnet',
      "missing: every Service's load balancer gets its VIP (the cluster IP) on this subnet",
      "set it to the ID of the subnet of the cluster's service CIDR",
    );
  }
  if (o.vifPool.portsPoolMax > 0 && o.vifPool.portsPoolMax < o.vifPool.portsPoolMin) {
    need(
      'vif_pool',
      'ports_pool_max',
      `${o.vifPool.portsPoolMax} is below ports_pool_min (${o.vifPool.portsPoolMin}): every populate would be recycled`,
      'raise it to at least ports_pool_min, or 0 for no maximum',
    );
  }
}

function where(doc: IniDocument, group: string, key: string): string | undefined {
  const section = doc.sections.find((s) => s.name === group);
  const entry = section?.entries.filter((e) => e.name === key).pop();
  return entry ? iniWhere(entry) : undefined;
}

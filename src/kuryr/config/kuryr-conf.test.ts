import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../lib/config.ts';
import { defaultOptions } from '../options.ts';
import { parseOsloIni } from './ini.ts';
import { readKuryrConf } from './kuryr-conf.ts';

/**
 * kuryr.conf as OpenShift's cluster-network-operator renders it (bindata/network/kuryr/003-config.yaml,
 * with its template values filled in), without [neutron] (neutron.test.ts).
 */
export const OPERATOR_KURYR_CONF = `[DEFAULT]
debug = false

[binding]
default_driver = kuryr.lib.binding.drivers.vlan

[cni_daemon]
daemon_enabled = true
docker_mode = true
netns_proc_dir = /host_proc
vif_annotation_timeout = 500

[ingress]
#l7_router_uuid = <None>

[kubernetes]
api_root = ""
ssl_ca_crt_file = /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
token_file = /var/run/secrets/kubernetes.io/serviceaccount/token
ssl_verify_server_crt = true
controller_ha = false
controller_ha_elector_port = 16401
watch_retry_timeout = 3600
pod_vif_driver = nested-vlan
vif_pool_driver = nested
multi_vif_drivers = noop

enabled_handlers = vif,kuryrport,service,endpoints,kuryrloadbalancer,policy,pod_label,namespace,openshift_machine,kuryrnetworkpolicy,kuryrnetwork
pod_security_groups_driver = policy
service_security_groups_driver = policy
pod_subnets_driver = namespace
nodes_subnets_driver = openshift

endpoints_driver_octavia_provider = default

[pod_vif_nested]
worker_nodes_subnets = 1b8d1b43-7b5a-4b58-a8f6-1f0e9a1f7c01

[octavia_defaults]
member_mode = L3
sg_mode = update
enforce_sg_rules = true
lb_algorithm = ROUND_ROBIN

[namespace_subnet]
pod_router = 7c3c5a1e-1a2b-4c5d-8e9f-0a1b2c3d4e5f
pod_subnet_pool = 5e2f2a44-0f4b-4f6e-9a63-7c0d3a3c2b10
[neutron_defaults]
service_subnet = 9d1c6a2b-3e4f-4a5b-8c6d-7e8f9a0b1c2d
project = ""
pod_security_groups = default
resource_tags = openshiftClusterID=ostest-7xk2p
external_svc_net = ""
network_device_mtu = 1442

[vif_pool]
ports_pool_max = 0
ports_pool_min = 1
ports_pool_batch = 3
ports_pool_update_frequency = 30

[health_server]
port = 8091

[cni_health_server]
port = 8090

[prometheus_exporter]
controller_exporter_port = 9654
cni_exporter_port = 9655
`;

function read(text: string) {
  return readKuryrConf(parseOsloIni(text, 'kuryr.conf'));
}

function problemsOf(text: string): { errors: string; warnings: string[] } {
  try {
    read(text);
  } catch (err) {
    assert.ok(ConfigError.is(err), String(err));
    return { errors: err.message, warnings: [...err.warnings] };
  }
  assert.fail('expected a ConfigError');
}

const MINIMAL = `[neutron_defaults]
service_subnet = svc
[namespace_subnet]
pod_subnet_pool = pool
pod_router = router
`;

describe('kuryr.conf → KuryrOptions', () => {
  it("reads shiftstack's own options beside upstream's", () => {
    const { options } = read(
      `${MINIMAL}[vif_pool]\nbulk_ports_creation_requests = 4\n[octavia_defaults]\nmember_batch_window_ms = 250\n`,
    );
    assert.equal(options.vifPool.maxBulkCreatesInFlight, 4);
    assert.equal(options.octaviaDefaults.memberBatchWindowMs, 250);
    assert.equal(read(MINIMAL).options.octaviaDefaults.memberBatchWindowMs, 100);
  });

  it("reads the network operator's kuryr.conf into the options upstream's names say", () => {
    const { options, warnings } = read(OPERATOR_KURYR_CONF);
    assert.deepEqual(options.kubernetes.enabledHandlers, [
      'vif',
      'kuryrport',
      'service',
      'endpoints',
      'kuryrloadbalancer',
      'policy',
      'pod_label',
      'namespace',
      'kuryrnetworkpolicy',
      'kuryrnetwork',
    ]);
    assert.equal(options.kubernetes.podSubnetsDriver, 'namespace');
    assert.equal(options.kubernetes.podSecurityGroupsDriver, 'policy');
    assert.equal(options.namespaceSubnet.podRouter, '7c3c5a1e-1a2b-4c5d-8e9f-0a1b2c3d4e5f');
    assert.equal(options.namespaceSubnet.podSubnetPool, '5e2f2a44-0f4b-4f6e-9a63-7c0d3a3c2b10');
    assert.equal(options.neutronDefaults.serviceSubnet, '9d1c6a2b-3e4f-4a5b-8c6d-7e8f9a0b1c2d');
    assert.equal(options.neutronDefaults.project, '', 'project = "" is empty: the client\'s project');
    assert.deepEqual(options.neutronDefaults.podSecurityGroups, ['default']);
    assert.deepEqual(options.neutronDefaults.resourceTags, ['openshiftClusterID=ostest-7xk2p']);
    assert.equal(options.neutronDefaults.networkDeviceMtu, 1442);
    assert.deepEqual(options.podVifNested.workerNodesSubnets, ['1b8d1b43-7b5a-4b58-a8f6-1f0e9a1f7c01']);
    assert.deepEqual(options.vifPool, { ...defaultOptions().vifPool, portsPoolUpdateFrequency: 30 });
    assert.equal(options.cniDaemon.vifAnnotationTimeout, 500);
    assert.equal(options.healthServer.port, 8091);
    assert.equal(options.cniHealthServer.port, 8090);
    assert.equal(options.prometheusExporter.controllerExporterPort, 9654);

    // Every key upstream reads and shiftstack does not act on is named, once, with why; not the
    // values that ask for what shiftstack does anyway (the in-cluster connection, no additional
    // VIFs, the daemon).
    const keys = warnings.map((w) => /key "([^"]+)"/.exec(w)?.[1]);
    assert.deepEqual(keys.sort(), [
      '[cni_daemon] docker_mode',
      '[cni_daemon] netns_proc_dir',
      '[kubernetes] controller_ha_elector_port',
      '[kubernetes] enabled_handlers',
      '[kubernetes] nodes_subnets_driver',
      '[kubernetes] watch_retry_timeout',
      '[octavia_defaults] sg_mode',
    ]);
    assert.ok(
      warnings.some((w) =>
        /kuryr\.conf:\d+: key "\[kubernetes\] enabled_handlers": handler openshift_machine skipped: .*providerID/.test(
          w,
        ),
      ),
    );
    assert.equal(read(OPERATOR_KURYR_CONF).debug, false);
    assert.equal(read(`${MINIMAL}[DEFAULT]\ndebug = True\n`).debug, true);
  });

  it("an empty file is OpenShift's defaults, and says what it lacks for the handlers enabled", () => {
    const { errors } = problemsOf('');
    assert.match(
      errors,
      /key "\[namespace_subnet\] pod_subnet_pool": missing: .* Fix: set it to the ID of a Neutron subnet pool/,
    );
    assert.match(errors, /key "\[namespace_subnet\] pod_router": missing/);
    assert.match(errors, /key "\[neutron_defaults\] service_subnet": missing/);
    const { options } = read(MINIMAL);
    assert.deepEqual(options, {
      ...defaultOptions(),
      neutronDefaults: { ...defaultOptions().neutronDefaults, serviceSubnet: 'svc' },
      namespaceSubnet: { podSubnetPool: 'pool', podRouter: 'router' },
    });
  });

  it("the CNI daemon reads the same file without the controller's requirements, bad values still refused", () => {
    const { options } = readKuryrConf(
      parseOsloIni('[cni_daemon]\nvif_annotation_timeout = 90\n', 'kuryr.conf'),
      'daemon',
    );
    assert.equal(options.cniDaemon.vifAnnotationTimeout, 90);
    assert.throws(
      () =>
        readKuryrConf(parseOsloIni('[cni_daemon]\nvif_annotation_timeout = soon\n', 'kuryr.conf'), 'daemon'),
      /"\[cni_daemon\] vif_annotation_timeout" \(value "soon"\): not a whole number/,
    );
  });

  it('every bad value in one report: file:line, [group] key, the value and the fix', () => {
    const { errors } = problemsOf(
      `${MINIMAL}[vif_pool]
ports_pool_min = five
ports_pool_batch = 0
[kubernetes]
controller_ha = maybe
pod_vif_driver = neutron-vif
pod_subnets_driver = namespac
enabled_handlers = vif,kuryrprot
[octavia_defaults]
member_mode = L4
[health_server]
port = 70000
`,
    );
    assert.match(
      errors,
      /kuryr\.conf:7: key "\[vif_pool\] ports_pool_min" \(value "five"\): not a whole number\. Fix: write a decimal number, e\.g\. ports_pool_min = 1/,
    );
    assert.match(
      errors,
      /kuryr\.conf:8: key "\[vif_pool\] ports_pool_batch" \(value "0"\): must be at least 1/,
    );
    assert.match(
      errors,
      /kuryr\.conf:10: key "\[kubernetes\] controller_ha" \(value "maybe"\): not a boolean/,
    );
    assert.match(
      errors,
      /"\[kubernetes\] pod_vif_driver" \(value "neutron-vif"\): upstream's neutron-vif is not built in shiftstack.*Fix: use nested-vlan/,
    );
    assert.match(
      errors,
      /"\[kubernetes\] pod_subnets_driver" \(value "namespac"\): not a value this option takes\. Fix: use default, namespace \(did you mean "namespace"\?\)/,
    );
    assert.match(
      errors,
      /"\[kubernetes\] enabled_handlers" \(value "kuryrprot"\): kuryrprot is not one of upstream's handlers.*did you mean "kuryrport"/,
    );
    assert.match(errors, /"\[octavia_defaults\] member_mode" \(value "L4"\).*use L3, L2/);
    assert.match(errors, /"\[health_server\] port" \(value "70000"\): must be between 0 and 65535/);
  });

  it('an unknown key or group is a warning with a did-you-mean, as oslo would ignore it', () => {
    const { warnings, options } = read(
      `${MINIMAL}[vif_pool]\nports_pool_mni = 4\n[vif_pol]\nports_pool_min = 4\n`,
    );
    assert.equal(options.vifPool.portsPoolMin, 1);
    assert.ok(
      warnings.includes(
        'kuryr.conf:7: key "[vif_pool] ports_pool_mni": not an option of [vif_pool], ignored (did you mean "ports_pool_min"?)',
      ),
      warnings.join('\n'),
    );
    assert.ok(
      warnings.some((w) =>
        /"\[vif_pol\] ports_pool_min": \[vif_pol\] is not a group kuryr reads, ignored \(did you mean \[vif_pool\]\?\)/.test(
          w,
        ),
      ),
      warnings.join('\n'),
    );
  });

  it('options that need each other: a pool maximum below its minimum, population without namespace networks', () => {
    const { errors } = problemsOf(
      `${MINIMAL}[vif_pool]\nports_pool_min = 5\nports_pool_max = 2\n[kubernetes]\npod_subnets_driver = default\npod_security_groups_driver = default\nenabled_handlers = vif,kuryrport,kuryrnetwork_population\n`,
    );
    assert.match(errors, /kuryr\.conf:8: key "\[vif_pool\] ports_pool_max": 2 is below ports_pool_min \(5\)/);
    assert.match(errors, /key "\[neutron_defaults\] pod_subnet": missing: pod_subnets_driver = default/);
    assert.match(errors, /key "\[neutron_defaults\] pod_security_groups": missing/);
    assert.match(errors, /kuryrnetwork_population fills the pools of namespace networks/);
  });

  it('later files win, as repeated --config-file; templates and deprecated names as oslo reads them', () => {
    const doc = parseOsloIni(`${MINIMAL}[vif_pool]\nports_pool_batch = 5\n[DEFAULT]\nsvc = abc\n`, 'a.conf');
    parseOsloIni(
      '[vif_pool]\nports_pool_batch = 7\n[pod_vif_nested]\nworker_nodes_subnet = s1\n[neutron_defaults]\nservice_subnet = $svc\n',
      'b.conf',
      doc,
    );
    const { options, warnings } = readKuryrConf(doc);
    assert.equal(options.vifPool.portsPoolBatch, 7);
    assert.equal(options.neutronDefaults.serviceSubnet, 'abc');
    assert.deepEqual(options.podVifNested.workerNodesSubnets, ['s1']);
    assert.ok(
      warnings.some((w) => /a\.conf:\d+: key "\[DEFAULT\] svc": not an option of \[DEFAULT\]/.test(w)),
    );
  });
});

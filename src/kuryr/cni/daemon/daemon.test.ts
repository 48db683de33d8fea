/**
 * kuryr-daemon end to end: KuryrPorts in the Kubernetes emulator, the plugin's requests over HTTP
 * (runCniPlugin: CNI_* variables and the configuration, as a runtime gives them), the veth binding
 * in real network namespaces (a node namespace plays the host, testing/netns.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../../lib/metrics.ts';
import { rootLogger } from '../../../lib/log.ts';
import { eventually } from '../../../sim/kube/testing/harness.ts';
import { kuryrKinds, type KuryrPort } from '../../api/kinds.ts';
import { Labels } from '../../api/names.ts';
import { vifPrimitive, type Vif } from '../../api/vif.ts';
import { withOptions, type KuryrOptionsOverrides } from '../../options.ts';
import { startKuryrEnv, type KuryrEnv } from '../../testing/env.ts';
import { runCniPlugin } from '../plugin.ts';
import { netnsBed, skipWithoutNetns, type NetnsBed } from '../testing/netns.ts';
import { startKuryrDaemon, type RunningDaemon } from './daemon.ts';

const NODE = 'worker-cni';

function vif(n: number, active: boolean): Vif {
  return {
    id: `0000000${n}-1111-2222-3333-444444444444`,
    address: `FA:16:3E:10:00:0${n}`,
    vifName: `tap0000000${n}-11`,
    vlanId: 200 + n,
    active,
    network: {
      id: 'net-1',
      mtu: 1450,
      subnets: [
        {
          cidr: '10.30.0.0/24',
          gateway: '10.30.0.1',
          ips: [`10.30.0.${20 + n}`],
          routes: [],
          dns: ['10.30.0.2'],
        },
      ],
    },
  };
}

function kuryrPort(name: string, uid: string): KuryrPort {
  return {
    apiVersion: 'openstack.org/v1',
    kind: 'KuryrPort',
    metadata: { name, namespace: 'default', labels: { [Labels.KuryrPortNode]: NODE } },
    spec: { podUid: uid, podNodeName: NODE },
  };
}

function conf(daemonUrl: string, cniVersion = '1.0.0'): string {
  return JSON.stringify({
    cniVersion,
    name: 'kuryr',
    type: 'kuryr-cni',
    daemon_url: daemonUrl,
    daemon_timeout: 60,
  });
}

function cniEnv(
  command: string,
  netns: string,
  pod: string,
  uid: string,
  containerId: string,
): NodeJS.ProcessEnv {
  return {
    CNI_COMMAND: command,
    CNI_CONTAINERID: containerId,
    CNI_NETNS: netns,
    CNI_IFNAME: 'eth0',
    CNI_PATH: '/opt/cni/bin',
    CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=${pod};K8S_POD_UID=${uid}`,
  };
}

describe('kuryr-daemon with the plugin, KuryrPorts in the emulator, veth binding in network namespaces', () => {
  let env: KuryrEnv;
  let daemon: RunningDaemon;
  const registry = createRegistry({ defaultMetrics: false });

  before(async () => {
    env = await startKuryrEnv({ nodes: 0 });
  });
  after(async () => {
    await daemon?.stop();
    await env?.close();
  });

  async function start(
    t: Parameters<typeof netnsBed>[0],
    vifAnnotationTimeout = 60,
    binding: KuryrOptionsOverrides['binding'] = { defaultDriver: 'veth', bridge: 'kuryrtest0' },
    prepare?: (bed: NetnsBed) => void,
  ) {
    const bed = netnsBed(t);
    prepare?.(bed);
    await daemon?.stop();
    daemon = await startKuryrDaemon({
      client: env.api,
      nodeName: NODE,
      options: withOptions({ binding, cniDaemon: { vifAnnotationTimeout } }, env.options),
      log: rootLogger().child({ test: t.name }, { level: process.env.KURYR_TEST_LOG ?? 'silent' }),
      registry,
      ip: bed.ip,
      bindAddress: '127.0.0.1:0',
      exporterPort: 0,
      healthPort: 0,
      exporterHost: '127.0.0.1',
    });
    return bed;
  }

  const running = async () =>
    (await registry.getSingleMetricAsString('shiftstack_kuryr_cni_requests')).match(
      /shiftstack_kuryr_cni_requests\{state="running"\} (\d+)/,
    )?.[1];

  it('ADD waits for the VIF by watching, binds it and answers the CNI result; CHECK passes; ADD again is idempotent; DEL removes it', async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = await start(t);
    const netns = bed.pod();
    await env.api.create(kuryrKinds.KuryrPort, kuryrPort('pod-a', 'uid-a'));
    const add = () =>
      runCniPlugin({ env: cniEnv('ADD', netns, 'pod-a', 'uid-a', 'cid-a'), stdin: conf(daemon.url) });

    const pending = add();
    // The ADD is in the daemon, waiting: nothing for it to bind yet.
    await eventually(async () => (await running()) === '1', {
      what: 'the ADD waiting in the daemon',
      timeoutMs: 20_000,
    });
    await env.api.patch(kuryrKinds.KuryrPort, { namespace: 'default', name: 'pod-a' }, 'merge', {
      status: { vifs: { eth0: { default: true, vif: vifPrimitive(vif(1, false)) } } },
    });
    await env.api.patch(kuryrKinds.KuryrPort, { namespace: 'default', name: 'pod-a' }, 'merge', {
      status: { vifs: { eth0: { default: true, vif: vifPrimitive(vif(1, true)) } } },
    });
    const outcome = await pending;
    assert.equal(outcome.exitCode, 0, outcome.stdout);
    const result = JSON.parse(outcome.stdout);
    assert.deepEqual(result, {
      cniVersion: '1.0.0',
      interfaces: [{ name: 'eth0', mac: 'fa:16:3e:10:00:01', sandbox: netns }],
      ips: [{ address: '10.30.0.21/24', gateway: '10.30.0.1', interface: 0 }],
      routes: [{ dst: '0.0.0.0/0', gw: '10.30.0.1' }],
      dns: { nameservers: ['10.30.0.2'] },
    });
    const link = await bed.ip.link('eth0', netns);
    assert.equal(link?.address, 'fa:16:3e:10:00:01');
    assert.equal(link.mtu, 1450);
    assert.deepEqual(
      (await bed.ip.addresses('eth0', netns)).map((a) => `${a.local}/${a.prefixlen}`),
      ['10.30.0.21/24'],
    );
    assert.ok((await bed.ip.routes(4, netns)).some((r) => r.dst === 'default' && r.gateway === '10.30.0.1'));

    const check = await runCniPlugin({
      env: cniEnv('CHECK', netns, 'pod-a', 'uid-a', 'cid-a'),
      stdin: JSON.stringify({ ...JSON.parse(conf(daemon.url)), prevResult: result }),
    });
    assert.deepEqual(check, { stdout: '', exitCode: 0 });

    const again = await add();
    assert.equal(again.exitCode, 0, again.stdout);
    assert.deepEqual(JSON.parse(again.stdout), result);
    assert.equal((await bed.ip.link('eth0', netns))?.ifindex, link.ifindex, 'the same interface');

    // A DEL for an older container of the pod leaves the running one alone.
    const stale = await runCniPlugin({
      env: cniEnv('DEL', netns, 'pod-a', 'uid-a', 'cid-old'),
      stdin: conf(daemon.url),
    });
    assert.equal(stale.exitCode, 0);
    assert.ok(await bed.ip.link('eth0', netns));

    const del = await runCniPlugin({
      env: cniEnv('DEL', netns, 'pod-a', 'uid-a', 'cid-a'),
      stdin: conf(daemon.url),
    });
    assert.deepEqual(del, { stdout: '', exitCode: 0 });
    assert.equal(await bed.ip.link('eth0', netns), undefined);
    const delAgain = await runCniPlugin({
      env: cniEnv('DEL', netns, 'pod-a', 'uid-a', 'cid-a'),
      stdin: conf(daemon.url),
    });
    assert.equal(delAgain.exitCode, 0, 'DEL of nothing is success');

    const failedCheck = await runCniPlugin({
      env: cniEnv('CHECK', netns, 'pod-a', 'uid-a', 'cid-a'),
      stdin: conf(daemon.url),
    });
    assert.equal(failedCheck.exitCode, 1);
    assert.match(JSON.parse(failedCheck.stdout).msg, /CHECK failed: eth0 in .*: no such interface/);

    const metrics = await registry.metrics();
    assert.match(metrics, /kuryr_cni_request_duration_seconds_count\{command="ADD",error="false"\} 2/);
    assert.match(metrics, /kuryr_cni_request_duration_seconds_count\{command="CHECK",error="true"\} 1/);
  });

  it('ADD gives up after vif_annotation_timeout with "try again later", naming what it waited for, and leaves nothing', async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = await start(t, 1);
    const netns = bed.pod();
    await env.api.create(kuryrKinds.KuryrPort, kuryrPort('pod-b', 'uid-b'));
    const outcome = await runCniPlugin({
      env: cniEnv('ADD', netns, 'pod-b', 'uid-b', 'cid-b'),
      stdin: conf(daemon.url),
    });
    assert.equal(outcome.exitCode, 1);
    const error = JSON.parse(outcome.stdout);
    assert.equal(error.code, 11);
    assert.equal(error.cniVersion, '1.0.0');
    assert.match(error.msg, /timed out after 1 s waiting for the VIF of pod default\/pod-b/);
    assert.match(error.details, /has no VIF yet/);
    assert.deepEqual(
      (await bed.ip.links(netns)).map((l) => l.ifname),
      ['lo'],
    );

    // Another pod's KuryrPort of that name (an old uid): "unknown container".
    const other = await runCniPlugin({
      env: cniEnv('ADD', netns, 'pod-b', 'uid-new', 'cid-c'),
      stdin: conf(daemon.url),
    });
    assert.equal(JSON.parse(other.stdout).code, 3);
    assert.match(JSON.parse(other.stdout).details, /is for pod uid uid-b, not uid-new/);
  });

  it("with the vlan binding on a kernel without 802.1Q, the runtime gets the kernel's answer and the fix, and the pod nothing", async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = await start(
      t,
      60,
      { defaultDriver: 'kuryr.lib.binding.drivers.vlan', linkIface: 'trunk0' },
      (b) => b.exec(b.node, ['ip', 'link', 'add', 'trunk0', 'type', 'veth', 'peer', 'name', 'trunk0p']),
    );
    const netns = bed.pod();
    await env.api.create(kuryrKinds.KuryrPort, {
      ...kuryrPort('pod-v', 'uid-v'),
      status: { vifs: { eth0: { default: true, vif: vifPrimitive(vif(3, true)) } } },
    } as unknown as KuryrPort);
    const outcome = await runCniPlugin({
      env: cniEnv('ADD', netns, 'pod-v', 'uid-v', 'cid-v'),
      stdin: conf(daemon.url),
    });
    if (bed.kernelHasVlan()) {
      process.stderr.write('vlan binding: this kernel has 802.1Q; the ADD must succeed\n');
      assert.equal(outcome.exitCode, 0, outcome.stdout);
      assert.equal((await bed.ip.linkDetails('eth0', netns))?.linkinfo?.info_data?.id, 203);
      return;
    }
    const error = JSON.parse(outcome.stdout);
    assert.equal(error.code, 999);
    assert.match(error.msg, /^vlan binding: this kernel cannot create 802\.1Q VLAN devices .*trunk0\.203/);
    assert.match(error.details, /^fix: load the 8021q kernel module .* default_driver = veth/);
    assert.deepEqual(
      (await bed.ip.links(netns)).map((l) => l.ifname),
      ['lo'],
    );
    assert.deepEqual((await bed.ip.links()).map((l) => l.ifname).sort(), ['lo', 'trunk0', 'trunk0p']);
  });

  it('serves its metrics on the exporter port and its health on the health port', async (t) => {
    if (skipWithoutNetns(t)) return;
    await start(t);
    await eventually(async () => (await fetch(`${daemon.healthUrl}/readyz`)).status === 200, {
      what: 'ready once the KuryrPorts are listed',
    });
    assert.equal((await fetch(`${daemon.healthUrl}/healthz`)).status, 200);
    assert.match(
      await (await fetch(`${daemon.exporterUrl}/metrics`)).text(),
      /kuryr_cni_request_duration_seconds/,
    );
  });
});

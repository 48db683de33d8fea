/**
 * `shiftstack kuryr daemon` and the plugin it installs, as a node runs them: the daemon as a
 * process with kuryr.conf, the plugin run from the CNI bin directory the daemon wrote it to, with
 * the runtime's CNI_* variables and the installed configuration on stdin, and the veth binding in a
 * real pod namespace. The daemon runs in the machine's own network namespace (it must reach the
 * Kubernetes emulator on loopback), so its bridge is on the host: one of its own, deleted after.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kuryrKinds, type KuryrPort } from '../../kuryr/api/kinds.ts';
import { Labels } from '../../kuryr/api/names.ts';
import { vifPrimitive } from '../../kuryr/api/vif.ts';
import { Ip } from '../../kuryr/cni/binding/ip.ts';
import { netnsBed, skipWithoutNetns } from '../../kuryr/cni/testing/netns.ts';
import { startKuryrEnv, type KuryrEnv } from '../../kuryr/testing/env.ts';
import { eventually } from '../../sim/kube/testing/harness.ts';

const NODE = 'worker-cli';
const SHIFTSTACK = join(import.meta.dirname, '../../../bin/shiftstack.js');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Runs a file as a runtime runs a CNI plugin: variables, the configuration on stdin, stdout and the exit code. */
function runPlugin(
  file: string,
  env: NodeJS.ProcessEnv,
  stdin: string,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      [],
      { env: { PATH: process.env.PATH, ...env }, timeout: 60_000 },
      (err, out) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out }),
    );
    child.stdin?.end(stdin);
  });
}

describe('shiftstack kuryr daemon, with the plugin it installs', () => {
  let env: KuryrEnv;
  before(async () => {
    env = await startKuryrEnv({ nodes: 0 });
  });
  after(async () => {
    await env?.close();
  });

  it('installs kuryr-cni and 10-kuryr.conflist, serves ADD and DEL from that plugin, probes on /alive and /ready, stops on SIGTERM', async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = netnsBed(t);
    const bridge = `kcli${randomBytes(3).toString('hex')}`;
    t.after(() => {
      try {
        execFileSync('ip', ['link', 'del', bridge], { stdio: 'pipe' });
      } catch {
        // never made
      }
    });
    const [daemonPort, metricsPort, healthPort] = [await freePort(), await freePort(), await freePort()];
    const conf = join(env.dir, 'kuryr.conf');
    await writeFile(
      conf,
      [
        '[neutron_defaults]',
        'service_subnet = svc',
        '[namespace_subnet]',
        'pod_subnet_pool = pool',
        'pod_router = router',
        '[cni_daemon]',
        `bind_address = 127.0.0.1:${daemonPort}`,
        '[binding]',
        'default_driver = veth',
        `bridge = ${bridge}`,
        '[cni_health_server]',
        `port = ${healthPort}`,
        '[prometheus_exporter]',
        `cni_exporter_port = ${metricsPort}`,
        '',
      ].join('\n'),
    );
    const bin = join(env.dir, 'opt-cni-bin');
    const netd = join(env.dir, 'etc-cni-net.d');
    const daemon = spawn(
      process.execPath,
      [
        SHIFTSTACK,
        'kuryr',
        'daemon',
        `--config-file=${conf}`,
        `--node-name=${NODE}`,
        `--kubeconfig=${env.kube.kubeconfigPath}`,
        `--cni-bin-dir=${bin}`,
        `--cni-conf-dir=${netd}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let logs = '';
    daemon.stderr.on('data', (d: Buffer) => (logs += d.toString()));
    const exited = new Promise<number | null>((resolve) => daemon.once('exit', (code) => resolve(code)));
    t.after(() => void daemon.kill('SIGKILL'));
    await eventually(
      async () =>
        (await fetch(`http://127.0.0.1:${healthPort}/ready`).catch(() => undefined))?.status === 200,
      { what: 'the daemon ready', timeoutMs: 60_000 },
    ).catch((err: Error) => assert.fail(`${err.message}\n${logs}`));

    assert.equal((await fetch(`http://127.0.0.1:${healthPort}/alive`)).status, 200);

    const conflist = JSON.parse(await readFile(join(netd, '10-kuryr.conflist'), 'utf8'));
    assert.equal(conflist.plugins[0].daemon_url, `http://127.0.0.1:${daemonPort}`);
    // What a runtime gives the plugin: its entry of the list, with the list's name and version.
    const stdin = JSON.stringify({
      cniVersion: conflist.cniVersion,
      name: conflist.name,
      ...conflist.plugins[0],
    });

    const netns = bed.pod();
    await env.api.create(kuryrKinds.KuryrPort, {
      apiVersion: 'openstack.org/v1',
      kind: 'KuryrPort',
      metadata: { name: 'web-0', namespace: 'default', labels: { [Labels.KuryrPortNode]: NODE } },
      spec: { podUid: 'uid-web', podNodeName: NODE },
      status: {
        vifs: {
          eth0: {
            default: true,
            vif: vifPrimitive({
              id: 'aaaaaaaa-1111-2222-3333-444444444444',
              address: 'fa:16:3e:20:00:01',
              vifName: 'tapaaaaaaaa-11',
              vlanId: 300,
              active: true,
              network: {
                id: 'net',
                mtu: 1450,
                subnets: [
                  { cidr: '10.40.0.0/24', gateway: '10.40.0.1', ips: ['10.40.0.9'], routes: [], dns: [] },
                ],
              },
            }),
          },
        },
      },
    } as unknown as KuryrPort);
    const cni = (command: string) => ({
      CNI_COMMAND: command,
      CNI_CONTAINERID: 'ctr-web',
      CNI_NETNS: netns,
      CNI_IFNAME: 'eth0',
      CNI_PATH: bin,
      CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_UID=uid-web',
    });
    const plugin = join(bin, 'kuryr-cni');

    const version = await runPlugin(plugin, { CNI_COMMAND: 'VERSION' }, '{"cniVersion":"1.0.0"}');
    assert.equal(version.code, 0);
    assert.ok(JSON.parse(version.out).supportedVersions.includes('1.0.0'));

    const add = await runPlugin(plugin, cni('ADD'), stdin);
    assert.equal(add.code, 0, add.out);
    assert.deepEqual(JSON.parse(add.out).ips, [
      { address: '10.40.0.9/24', gateway: '10.40.0.1', interface: 0 },
    ]);
    const ip = new Ip();
    assert.equal((await ip.link('eth0', netns))?.address, 'fa:16:3e:20:00:01');
    assert.equal((await ip.link(bridge))?.ifname, bridge, 'the bridge on the host');

    const del = await runPlugin(plugin, cni('DEL'), stdin);
    assert.deepEqual(del, { code: 0, out: '' });
    assert.equal(await ip.link('eth0', netns), undefined);

    daemon.kill('SIGTERM');
    assert.equal(await exited, 0, logs);
  });

  it('refuses to start without a node, naming where the node comes from', async () => {
    const out = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [
          join(import.meta.dirname, '../../../bin/shiftstack.js'),
          'kuryr',
          'daemon',
          '--config-file=/nonexistent.conf',
        ],
        {
          env: { PATH: process.env.PATH, HOME: env.dir, KUBECONFIG: env.kube.kubeconfigPath },
          timeout: 30_000,
        },
        (err, _out, stderr) => resolve({ code: err ? (err.code as number) : 0, err: stderr }),
      );
      child.stdin?.end();
    });
    assert.equal(out.code, 2);
    assert.match(
      out.err,
      /the node is not known\. Fix: give --node-name, or set NODE_NAME or KUBERNETES_NODE_NAME/,
    );
    assert.match(out.err, /nonexistent\.conf/);
  });
});

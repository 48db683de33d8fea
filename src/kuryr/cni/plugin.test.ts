/**
 * The plugin's side of the CNI protocol: what it answers itself (VERSION, bad variables or
 * configuration, an unreachable daemon) and how a daemon's error reaches the runtime. The daemon's
 * side, with real namespaces, is daemon/daemon.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { runCniPlugin } from './plugin.ts';
import { cniResult } from './result.ts';
import { parseCniArgs } from './spec.ts';

const ENV = {
  CNI_COMMAND: 'ADD',
  CNI_CONTAINERID: 'c1',
  CNI_NETNS: '/var/run/netns/x',
  CNI_IFNAME: 'eth0',
  CNI_PATH: '/opt/cni/bin',
  CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_UID=u1',
};

const conf = (extra: object = {}) =>
  JSON.stringify({ cniVersion: '1.0.0', name: 'kuryr', type: 'kuryr-cni', ...extra });

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function errorOf(outcome: { stdout: string; exitCode: number }) {
  assert.equal(outcome.exitCode, 1, 'a failure exits non-zero');
  return JSON.parse(outcome.stdout) as { cniVersion: string; code: number; msg: string; details?: string };
}

describe('kuryr-cni, the plugin', () => {
  it('answers VERSION itself', async () => {
    const out = await runCniPlugin({ env: { CNI_COMMAND: 'VERSION' }, stdin: '' });
    assert.equal(out.exitCode, 0);
    assert.deepEqual(JSON.parse(out.stdout), {
      cniVersion: '1.0.0',
      supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0'],
    });
  });

  it('reports bad variables and configuration with the spec codes', async () => {
    assert.equal(errorOf(await runCniPlugin({ env: {}, stdin: conf() })).code, 4);
    const noNetns = errorOf(await runCniPlugin({ env: { ...ENV, CNI_NETNS: '' }, stdin: conf() }));
    assert.deepEqual([noNetns.code, noNetns.msg], [4, 'CNI_NETNS is required for ADD']);
    const noPod = errorOf(
      await runCniPlugin({ env: { ...ENV, CNI_ARGS: 'IgnoreUnknown=1' }, stdin: conf() }),
    );
    assert.equal(noPod.code, 4);
    assert.match(noPod.msg, /K8S_POD_NAMESPACE and K8S_POD_NAME/);
    assert.equal(errorOf(await runCniPlugin({ env: ENV, stdin: '{not json' })).code, 6);
    assert.equal(errorOf(await runCniPlugin({ env: ENV, stdin: '{"cniVersion":"1.0.0"}' })).code, 7);
    const old = errorOf(await runCniPlugin({ env: ENV, stdin: conf({ cniVersion: '0.2.0' }) }));
    assert.equal(old.code, 1);
    assert.match(old.details ?? '', /0\.3\.0, 0\.3\.1, 0\.4\.0, 1\.0\.0/);
    const check = errorOf(
      await runCniPlugin({ env: { ...ENV, CNI_COMMAND: 'CHECK' }, stdin: conf({ cniVersion: '0.3.1' }) }),
    );
    assert.deepEqual([check.code, check.cniVersion], [1, '0.3.1']);
    assert.equal(errorOf(await runCniPlugin({ env: ENV, stdin: conf({ daemon_url: 'ftp://x' }) })).code, 7);
  });

  it('DEL needs no namespace (the sandbox may be gone), but still the daemon', async () => {
    const port = await closedPort();
    const out = errorOf(
      await runCniPlugin({
        env: { ...ENV, CNI_COMMAND: 'DEL', CNI_NETNS: '' },
        stdin: conf({ daemon_url: `http://127.0.0.1:${port}` }),
      }),
    );
    assert.equal(out.code, 11);
  });

  it('says "try again later" and where it looked when kuryr-daemon cannot be reached', async () => {
    const port = await closedPort();
    const out = await runCniPlugin({ env: ENV, stdin: conf({ daemon_url: `http://127.0.0.1:${port}` }) });
    const error = errorOf(out);
    assert.equal(error.code, 11);
    assert.equal(
      error.msg,
      `kuryr-daemon cannot be reached at http://127.0.0.1:${port}/addNetwork: is it running on this node?`,
    );
    assert.match(out.log ?? '', /kuryr-cni: kuryr-daemon cannot be reached/);
  });

  it("passes the daemon's error on as the runtime's error JSON, and a non-JSON answer as an internal error", async () => {
    const answers = [
      {
        status: 504,
        body: JSON.stringify({ code: 11, msg: 'timed out. Try again later.', details: 'no VIF yet' }),
      },
      { status: 502, body: '<html>bad gateway</html>' },
    ];
    const server = createServer((req, res) => {
      const a = answers.shift()!;
      req.resume();
      res.writeHead(a.status).end(a.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const first = errorOf(
        await runCniPlugin({ env: ENV, stdin: conf({ daemon_url: url, cniVersion: '0.4.0' }) }),
      );
      assert.deepEqual(first, {
        cniVersion: '0.4.0',
        code: 11,
        msg: 'timed out. Try again later.',
        details: 'no VIF yet',
      });
      const second = errorOf(await runCniPlugin({ env: ENV, stdin: conf({ daemon_url: url }) }));
      assert.equal(second.code, 999);
      assert.equal(second.msg, 'kuryr-daemon answered ADD with HTTP 502');
    } finally {
      server.close();
    }
  });

  it('writes the result in the version asked: 0.3.x and 0.4.0 name each address family, 1.0.0 does not', () => {
    const iface = {
      ifname: 'eth0',
      mac: 'fa:16:3e:00:00:01',
      addresses: [
        { ip: '10.0.0.5', prefixLength: 24, gateway: '10.0.0.1' },
        { ip: 'fd00::5', prefixLength: 64 },
      ],
      routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }],
      dns: { nameservers: [] },
    };
    assert.deepEqual(cniResult(iface, '/var/run/netns/p', '0.3.1').ips, [
      { version: '4', address: '10.0.0.5/24', gateway: '10.0.0.1', interface: 0 },
      { version: '6', address: 'fd00::5/64', interface: 0 },
    ]);
    const v1 = cniResult(iface, '/var/run/netns/p', '1.0.0');
    assert.deepEqual(v1.ips[0], { address: '10.0.0.5/24', gateway: '10.0.0.1', interface: 0 });
    assert.deepEqual(v1.interfaces, [
      { name: 'eth0', mac: 'fa:16:3e:00:00:01', sandbox: '/var/run/netns/p' },
    ]);
    assert.deepEqual(v1.dns, {});
  });

  it('reads CNI_ARGS pairs and refuses a pair without "="', () => {
    assert.deepEqual(parseCniArgs('IgnoreUnknown=1;K8S_POD_NAME=a=b;'), {
      IgnoreUnknown: '1',
      K8S_POD_NAME: 'a=b',
    });
    assert.throws(() => parseCniArgs('K8S_POD_NAME'), /not KEY=VALUE/);
  });
});

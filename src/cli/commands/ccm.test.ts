import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../main.ts';

async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['node', 'shiftstack', '--log-level', 'silent', ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    signal: new AbortController().signal,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('shiftstack ccm', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-cli-ccm-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('--help lists the upstream flags with their defaults', async () => {
    const { code, out } = await run('ccm', '--help');
    assert.equal(code, 0);
    for (const flag of [
      '--cloud-config <file>',
      '--kubeconfig <file>',
      '--cluster-name <name>',
      '--leader-elect [bool]',
      '--leader-elect-lease-duration <duration>',
      '--leader-elect-renew-deadline <duration>',
      '--leader-elect-retry-period <duration>',
      '--leader-elect-resource-name <name>',
      '--leader-elect-resource-namespace <namespace>',
      '--controllers <list>',
      '--node-monitor-period <duration>',
      '--node-status-update-frequency <duration>',
      '--secure-port <port>',
      '--bind-address <address>',
    ]) {
      assert.ok(out.includes(flag), flag);
    }
    assert.match(out, /default: "kubernetes"/);
    assert.match(out, /default: "cloud-controller-manager"/);
    assert.match(out, /default: "kube-system"/);
    assert.match(out, /default: 10258/);
    assert.match(out, /default: "5s"/);
    assert.match(out, /default: "5m0s"/);
  });

  it('a bad cloud.conf exits 2 naming the file, the key and the fix', async () => {
    const conf = join(dir, 'bad.conf');
    await writeFile(
      conf,
      '[Global]\nauth-url = https://keystone.example/v3\nusername = u\npassword = p\ntenant-name = t\n' +
        '[LoadBalancer]\nmonitor-max-retries = 20\n',
    );
    const { code, err } = await run('ccm', '--cloud-config', conf, '--secure-port', '0');
    assert.equal(code, 2);
    assert.match(err, /invalid configuration/);
    assert.ok(err.includes(`${conf}:7`), err);
    assert.match(err, /monitor-max-retries/);
    assert.match(err, /1.*10/);
  });

  it('an unknown controller, or one not built yet (route), is a usage error', async () => {
    const conf = join(dir, 'unused.conf');
    const unknown = await run('ccm', '--cloud-config', conf, '--controllers', '*,-cloud-nod');
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown controller "cloud-nod"/);
    const route = await run('ccm', '--cloud-config', conf, '--controllers', 'route');
    assert.equal(route.code, 2);
    assert.match(route.err, /route controller is not built yet/);
  });

  it('a bad duration is a usage error', async () => {
    const { code, err } = await run('ccm', '--cloud-config', 'x.conf', '--node-monitor-period', '5');
    assert.equal(code, 2);
    assert.match(err, /--node-monitor-period: "5" is not a duration/);
  });
});

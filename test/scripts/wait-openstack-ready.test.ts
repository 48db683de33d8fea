/** The CI gate that waits for a fresh cloud to schedule servers, run against the emulator's Nova. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { OpenStackClient } from '../../src/openstack/client.ts';
import { resolveCloudConfig } from '../../src/openstack/config/resolve.ts';
import { startOpenStackSim, type RunningOpenStackSim } from '../../src/sim/openstack/server.ts';
import { silentLog } from '../../src/openstack/core/testing/target.ts';

const script = join(import.meta.dirname, '../../scripts/wait-openstack-ready.ts');

describe('scripts/wait-openstack-ready', () => {
  let dir: string;
  let sim: RunningOpenStackSim;
  let admin: OpenStackClient;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-ready-'));
    sim = await startOpenStackSim({ cloudsYamlPath: join(dir, 'clouds.yaml') });
    const { config } = await resolveCloudConfig({
      env: {},
      homedir: dir,
      cwd: dir,
      siteConfigDir: join(dir, 'etc'),
      cloudsYaml: join(dir, 'clouds.yaml'),
      cloud: 'shiftstack-admin',
    });
    admin = await OpenStackClient.fromConfig(config, { log: silentLog });
  });
  after(async () => {
    await admin?.close();
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const run = (...args: string[]) =>
    promisify(execFile)(process.execPath, [script, '--retry-seconds', '0.2', ...args], {
      env: {
        ...process.env,
        OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml'),
        OS_CLOUD_ADMIN: 'shiftstack-admin',
      },
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
  const injectBuildFailures = (times: number) =>
    fetch(`${sim.url}/_sim/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'error-on-create', service: 'nova', resource: 'server', times }),
    });
  const servers = async () => (await admin.compute.servers.list({ all_tenants: true }).all()).length;

  it('retries a boot that failed until one runs, and leaves no probe behind', async () => {
    assert.equal((await injectBuildFailures(2)).status, 201);
    const r = await run();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.match(/attempt \d+: /g)?.length, 2, r.stdout);
    assert.match(r.stdout, /runs servers/);
    assert.equal(await servers(), 0);
  });

  it('gives up at its deadline with what it saw', async () => {
    assert.equal((await injectBuildFailures(1000)).status, 201);
    const r = await run('--timeout-seconds', '3');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /could not run a server in time: .*ERROR/);
    assert.equal(await servers(), 0);
  });
});

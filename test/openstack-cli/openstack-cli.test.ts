/**
 * An independent client drives the emulator: the `openstack` CLI from Debian's python3-openstackclient
 * and python3-octaviaclient (keystoneauth discovery, microversions, its own parsing of every answer).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startOpenStackSim, type RunningOpenStackSim } from '../../src/sim/openstack/server.ts';

const run = promisify(execFile);

async function cliMissing(): Promise<string | undefined> {
  try {
    await run('openstack', ['--version'], { timeout: 60_000 });
  } catch {
    return 'the openstack CLI is not installed (apt-get install python3-openstackclient python3-octaviaclient; .ci/run does)';
  }
  try {
    await run('openstack', ['loadbalancer', '--help'], { timeout: 60_000 });
  } catch {
    return 'python3-octaviaclient is not installed (apt-get install python3-octaviaclient; .ci/run does)';
  }
  return undefined;
}

const missing = await cliMissing();
if (missing) {
  console.error(`\n*** OPENSTACK CLI TEST SKIPPED: ${missing} ***\n`);
  if (process.env.CI) throw new Error(`OPENSTACK CLI TEST CANNOT RUN: ${missing}`);
}

describe('the openstack CLI against the emulator', { skip: missing }, () => {
  let sim: RunningOpenStackSim;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-cli-'));
    sim = await startOpenStackSim({ cloudsYamlPath: join(dir, 'clouds.yaml') });
  });
  after(async () => {
    await sim?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs `openstack <args> -f json` as the demo user and parses the output. */
  async function os(...args: string[]): Promise<any> {
    const jsonOut = !['delete', 'unset', 'add', 'remove', 'set'].some((verb) => args.includes(verb));
    const { stdout } = await run('openstack', [...args, ...(jsonOut ? ['-f', 'json'] : [])], {
      timeout: 120_000,
      env: {
        ...process.env,
        OS_CLIENT_CONFIG_FILE: sim.cloudsYamlPath,
        OS_CLOUD: 'shiftstack-demo',
        PYTHONWARNINGS: 'ignore',
      },
    }).catch((err: { stderr?: string; message: string }) => {
      throw new Error(`openstack ${args.join(' ')} failed: ${err.stderr ?? err.message}`);
    });
    return jsonOut && stdout.trim() ? JSON.parse(stdout) : stdout;
  }

  it('issues a token', async () => {
    const token = await os('token', 'issue');
    assert.ok(token.id);
    assert.ok(token.project_id);
  });

  it('creates, lists and deletes networks, subnets, ports, trunks, routers and floating IPs', async () => {
    const net = await os('network', 'create', 'cli-net');
    const subnet = await os(
      'subnet',
      'create',
      '--network',
      net.id,
      '--subnet-range',
      '10.42.0.0/24',
      'cli-subnet',
    );
    assert.equal(subnet.cidr, '10.42.0.0/24');
    const port = await os('port', 'create', '--network', net.id, 'cli-port');
    const subport = await os('port', 'create', '--network', net.id, 'cli-subport');
    const ports = await os('port', 'list', '--network', net.id);
    assert.deepEqual(ports.map((p: { Name: string }) => p.Name).sort(), ['cli-port', 'cli-subport']);
    const trunk = await os(
      'network',
      'trunk',
      'create',
      '--parent-port',
      port.id,
      '--subport',
      `port=${subport.id},segmentation-type=vlan,segmentation-id=100`,
      'cli-trunk',
    );
    assert.equal(trunk.name, 'cli-trunk');
    const trunks = await os('network', 'trunk', 'list');
    assert.ok(trunks.some((t: { Name: string }) => t.Name === 'cli-trunk'));

    const router = await os('router', 'create', 'cli-router');
    await os('router', 'set', '--external-gateway', 'public', router.id);
    await os('router', 'add', 'subnet', router.id, subnet.id);
    const fip = await os('floating', 'ip', 'create', '--port', subport.id, 'public');
    assert.match(fip.floating_ip_address, /^172\.24\.4\./);
    const fips = await os('floating', 'ip', 'list', '--port', subport.id);
    assert.equal(fips.length, 1);

    await os('floating', 'ip', 'delete', fip.id);
    await os('router', 'remove', 'subnet', router.id, subnet.id);
    await os('router', 'unset', '--external-gateway', router.id);
    await os('router', 'delete', router.id);
    await os('network', 'trunk', 'delete', trunk.id);
    await os('port', 'delete', port.id, subport.id);
    await os('subnet', 'delete', subnet.id);
    await os('network', 'delete', net.id);
    const left = await os('network', 'list', '--name', 'cli-net');
    assert.deepEqual(left, []);
  });

  it('creates, lists, shows and deletes a server', async () => {
    const net = await os('network', 'create', 'cli-vm-net');
    await os('subnet', 'create', '--network', net.id, '--subnet-range', '10.43.0.0/24', 'cli-vm-subnet');
    const flavors = await os('flavor', 'list');
    const images = await os('image', 'list');
    assert.ok(flavors.length > 0 && images.length > 0, 'the emulator seeds flavors and images');
    const server = await os(
      'server',
      'create',
      '--flavor',
      flavors[0].ID,
      '--image',
      images[0].ID,
      '--network',
      net.id,
      '--wait',
      'cli-vm',
    );
    assert.equal(server.status, 'ACTIVE');
    const listed = await os('server', 'list');
    assert.ok(listed.some((s: { Name: string }) => s.Name === 'cli-vm'));
    const shown = await os('server', 'show', 'cli-vm');
    assert.match(JSON.stringify(shown.addresses), /10\.43\.0\./);
    await os('server', 'delete', '--wait', server.id);
    assert.deepEqual(await os('server', 'list', '--name', 'cli-vm'), []);
    await os('network', 'delete', net.id);
  });

  it('creates a load balancer with listener, pool, member and health monitor, then cascade-deletes it', async () => {
    const net = await os('network', 'create', 'cli-lb-net');
    const subnet = await os(
      'subnet',
      'create',
      '--network',
      net.id,
      '--subnet-range',
      '10.44.0.0/24',
      'cli-lb-subnet',
    );
    const lb = await os('loadbalancer', 'create', '--vip-subnet-id', subnet.id, '--wait', '--name', 'cli-lb');
    assert.equal(lb.provisioning_status, 'ACTIVE');
    const listener = await os(
      'loadbalancer',
      'listener',
      'create',
      '--protocol',
      'TCP',
      '--protocol-port',
      '80',
      '--wait',
      '--name',
      'cli-listener',
      lb.id,
    );
    const pool = await os(
      'loadbalancer',
      'pool',
      'create',
      '--listener',
      listener.id,
      '--protocol',
      'TCP',
      '--lb-algorithm',
      'ROUND_ROBIN',
      '--wait',
      '--name',
      'cli-pool',
    );
    await os(
      'loadbalancer',
      'member',
      'create',
      '--address',
      '10.44.0.10',
      '--protocol-port',
      '8080',
      '--subnet-id',
      subnet.id,
      '--wait',
      pool.id,
    );
    await os(
      'loadbalancer',
      'healthmonitor',
      'create',
      '--type',
      'TCP',
      '--delay',
      '5',
      '--timeout',
      '3',
      '--max-retries',
      '3',
      '--wait',
      pool.id,
    );
    const shown = await os('loadbalancer', 'show', lb.id);
    assert.equal(shown.provisioning_status, 'ACTIVE');
    const members = await os('loadbalancer', 'member', 'list', pool.id);
    assert.equal(members.length, 1);
    await os('loadbalancer', 'delete', '--cascade', '--wait', lb.id);
    assert.deepEqual(await os('loadbalancer', 'list', '--name', 'cli-lb'), []);
    await os('subnet', 'delete', subnet.id);
    await os('network', 'delete', net.id);
  });
});

/**
 * Every request/response pair recorded from a real OpenStack Zed (../shared/openstack-samples) is
 * checked against the emulator: probe.py, the script that recorded them, runs unchanged against the
 * emulator and its answers are compared with the recorded ones (status, client headers, JSON shape).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startOpenStackSim, type RunningOpenStackSim } from '../../src/sim/openstack/server.ts';
import { compareSample, type Recorded } from './compare.ts';
import { KNOWN_DIFFERENCES } from './known-differences.ts';

const shared = join(import.meta.dirname, '../../../shared');
const samplesDir = join(shared, 'openstack-samples');
const probe = join(shared, 'openstack-real/probe.py');
const python = '/usr/bin/python3';
const ALL_SECTIONS = ['keystone', 'neutron', 'octavia', 'glance', 'placement', 'nova'];
/** SAMPLES_SECTIONS=neutron,nova narrows a local run to some services; CI always runs them all. */
const SECTIONS = process.env.SAMPLES_SECTIONS ? process.env.SAMPLES_SECTIONS.split(',') : ALL_SECTIONS;

const sampleFiles = existsSync(samplesDir)
  ? (await readdir(samplesDir))
      .filter((f) => f.endsWith('.json') && !f.startsWith('_') && SECTIONS.includes(f.split('_')[0]!))
      .sort()
  : [];

async function pythonReady(): Promise<string | undefined> {
  if (!existsSync(python)) return `${python} is missing`;
  try {
    await promisify(execFile)(python, ['-c', 'import requests']);
    return undefined;
  } catch {
    return 'python3-requests is missing (apt-get install python3-requests; .ci/run installs it)';
  }
}

const missing = !existsSync(probe) ? `${probe} is missing` : await pythonReady();
if (missing) {
  const message = `OPENSTACK SAMPLES NOT CHECKED: ${missing}`;
  console.error(`\n*** ${message} ***\n`);
  // In CI the prerequisites are installed by .ci/run, so their absence is a failure there.
  if (process.env.CI) throw new Error(message);
}

describe('recorded OpenStack samples replayed against the emulator', { skip: missing }, () => {
  let sim: RunningOpenStackSim;
  let outDir: string;
  let probeLog = '';

  before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'shiftstack-samples-'));
    // probe.py races its next call against the cloud's transitions, as against the real one: give
    // PENDING_*, BUILD and powering-off windows of the recorded cloud's order of magnitude.
    sim = await startOpenStackSim({
      cloudsYamlPath: join(outDir, 'clouds.yaml'),
      overrides: {
        transitions: {
          'octavia.loadbalancer.create': 800,
          'octavia.loadbalancer.update': 300,
          'octavia.loadbalancer.delete': 300,
          'octavia.child.create': 300,
          'octavia.child.update': 300,
          'octavia.child.delete': 300,
          'octavia.member.batch': 300,
          'nova.server.build': 1000,
          'nova.server.stop': 500,
          'nova.server.delete': 300,
        },
      },
    });
    const { stdout, stderr } = await promisify(execFile)(
      python,
      [
        join(import.meta.dirname, 'probe_runner.py'),
        probe,
        sim.url,
        join(outDir, 'samples'),
        samplesDir,
        ...SECTIONS,
      ],
      { timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
    );
    probeLog = `${stdout}\n${stderr}`;
  });

  after(async () => {
    await sim?.stop();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  it('ran every section of probe.py to the end', () => {
    const last =
      probeLog
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .pop() ?? '{}';
    assert.deepEqual(
      (JSON.parse(last) as { failed_sections?: string[] }).failed_sections,
      [],
      probeLog.slice(-4000),
    );
  });

  it('has the recorded samples to check', () =>
    assert.ok(sampleFiles.length >= (SECTIONS === ALL_SECTIONS ? 200 : 1), `${sampleFiles.length} samples`));

  for (const file of sampleFiles) {
    it(file, async () => {
      const recorded = JSON.parse(await readFile(join(samplesDir, file), 'utf8')) as Recorded;
      const mineText = await readFile(join(outDir, 'samples', file), 'utf8').catch(() => undefined);
      assert.ok(mineText, `the emulator run produced no ${file}; probe output:\n${probeLog.slice(-2000)}`);
      const mine = JSON.parse(mineText) as Recorded;
      const known = KNOWN_DIFFERENCES[file];
      const problems = compareSample(recorded, mine).filter((p) => !known?.paths.some((re) => re.test(p)));
      assert.deepEqual(problems, [], `${file}: ${JSON.stringify(mine.body).slice(0, 1500)}`);
    });
  }
});

/**
 * The emulator's files on disk: the state file holds every user's password and every token it
 * issued, clouds.yaml holds passwords. Both are readable by their owner only, whatever a file left
 * at the path allowed before, and their paths come back absolute.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startOpenStackSim } from './server.ts';

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

describe('startOpenStackSim files', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'shiftstack-sim-files-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('writes the state file and clouds.yaml with mode 0600, clouds.yaml even over a world-readable file', async () => {
    const stateFile = join(dir, 'state.json');
    const cloudsYaml = join(dir, 'clouds.yaml');
    // Left by an older run, or created by hand: readable by everyone.
    await writeFile(cloudsYaml, 'clouds: {}\n', { mode: 0o644 });
    const sim = await startOpenStackSim({ stateFile, cloudsYamlPath: cloudsYaml });
    await sim.stop();
    assert.equal((await modeOf(cloudsYaml)).toString(8), '600');
    assert.equal((await modeOf(stateFile)).toString(8), '600');
  });

  it('gives the clouds.yaml path back absolute when given a relative one', async () => {
    const rel = relative(process.cwd(), join(dir, 'rel', 'clouds.yaml'));
    const sim = await startOpenStackSim({ cloudsYamlPath: rel });
    await sim.stop();
    assert.ok(isAbsolute(sim.cloudsYamlPath), sim.cloudsYamlPath);
    assert.equal(sim.cloudsYamlPath, join(dir, 'rel', 'clouds.yaml'));
  });
});

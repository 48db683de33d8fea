import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { readGcfgFile } from './gcfg.ts';
import { ConfigError, loadConfigFile, parseConfig } from './config.ts';

const schema = z.strictObject({
  listen: z.strictObject({
    port: z.number().int().min(0).max(65535).describe('a TCP port, 0 to pick a free one'),
    host: z.string().default('127.0.0.1'),
  }),
  profile: z.enum(['fast', 'realistic']).default('fast'),
  auth: z.strictObject({ password: z.string(), username: z.string() }).optional(),
  url: z.url({ error: 'set it to the Keystone URL, e.g. https://keystone.example:5000/v3' }).optional(),
});

function problems(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    assert.ok(ConfigError.is(err), String(err));
    return err.problems;
  }
  assert.fail('expected a ConfigError');
}

describe('config validation', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'shiftstack-config-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('lets an aborted read go up as the abort, not as a problem of the file', async () => {
    const file = join(dir, 'cloud.conf');
    await writeFile(file, '[Global]\n');
    const signal = AbortSignal.abort(new Error('stopping'));
    for (const read of [() => loadConfigFile(file, schema, { signal }), () => readGcfgFile(file, signal)]) {
      await assert.rejects(read, (err: Error) => !ConfigError.is(err) && /stopping|abort/i.test(err.message));
    }
  });

  it('returns typed values with defaults', () => {
    const cfg = parseConfig(schema, { listen: { port: 8080 } }, 'x.yaml');
    assert.deepEqual(cfg, { listen: { port: 8080, host: '127.0.0.1' }, profile: 'fast' });
  });

  it('names the file, the key, the bad value and the fix for a wrong type', () => {
    const [p] = problems(() => parseConfig(schema, { listen: { port: 'eighty' } }, '/etc/sim.yaml'));
    assert.deepEqual(
      { file: p?.file, key: p?.key, value: p?.value },
      { file: '/etc/sim.yaml', key: 'listen.port', value: 'eighty' },
    );
    assert.match(p?.problem ?? '', /expected a number, got a string/);
    assert.match(p?.fix ?? '', /TCP port/);
  });

  it('suggests the right spelling for an unknown key and an enum value', () => {
    const ps = problems(() =>
      parseConfig(schema, { listen: { port: 1, hots: 'x' }, profile: 'realstic' }, 'c.yaml'),
    );
    const unknown = ps.find((p) => p.key === 'listen.hots');
    assert.match(unknown?.fix ?? '', /did you mean "host"/);
    const enumProblem = ps.find((p) => p.key === 'profile');
    assert.equal(enumProblem?.value, 'realstic');
    assert.match(enumProblem?.fix ?? '', /"fast", "realistic".*did you mean "realistic"/);
  });

  it('gives range and required-key fixes, and the schema’s own fix text', () => {
    const ps = problems(() => parseConfig(schema, { listen: { port: 70000 }, url: 'not a url' }, 'c.yaml'));
    assert.match(ps.find((p) => p.key === 'listen.port')?.problem ?? '', /<= 65535/);
    assert.match(ps.find((p) => p.key === 'url')?.fix ?? '', /Keystone URL/);
    const [missing] = problems(() => parseConfig(schema, {}, 'c.yaml'));
    assert.equal(missing?.key, 'listen');
    assert.match(missing?.problem ?? '', /required key is missing/);
  });

  it('never echoes a secret value', () => {
    const err = (() => {
      try {
        parseConfig(schema, { listen: { port: 1 }, auth: { password: 12345678, username: 'u' } }, 'c.yaml');
      } catch (e) {
        return e as ConfigError;
      }
    })();
    assert.ok(err);
    assert.equal(err.problems[0]?.value, '[REDACTED]');
    assert.ok(!err.message.includes('12345678'));
  });

  it('loads YAML and JSON files and reports syntax errors with their line', async () => {
    await writeFile(join(dir, 'ok.yaml'), 'listen:\n  port: 9000\nprofile: realistic\n');
    assert.equal((await loadConfigFile(join(dir, 'ok.yaml'), schema)).profile, 'realistic');
    await writeFile(join(dir, 'ok.json'), '{"listen":{"port":1}}');
    assert.equal((await loadConfigFile(join(dir, 'ok.json'), schema)).listen.port, 1);

    await writeFile(join(dir, 'bad.yaml'), 'listen:\n  port: 1\n   host: x\n');
    await assert.rejects(loadConfigFile(join(dir, 'bad.yaml'), schema), (err: unknown) => {
      assert.ok(ConfigError.is(err));
      assert.match(err.message, /bad\.yaml.*invalid YAML at line \d/);
      return true;
    });
    await assert.rejects(
      loadConfigFile(join(dir, 'missing.yaml'), schema),
      /missing\.yaml: the file does not exist\. Fix: check the path/,
    );
  });
});

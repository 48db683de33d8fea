import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { installCni, kuryrConflist, pluginWrapper } from './install.ts';

describe('the CNI files kuryr-daemon installs', () => {
  it('deploy/kuryr/10-kuryr.conflist is the configuration for the default bind_address', async () => {
    const file = JSON.parse(
      await readFile(join(import.meta.dirname, '../../../deploy/kuryr/10-kuryr.conflist'), 'utf8'),
    );
    assert.deepEqual(file, kuryrConflist());
  });

  it("writes an executable plugin that runs shiftstack kuryr cni in the daemon's mount namespace, and the configuration", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'kuryr-cni-install-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const written = await installCni({
      binDir: join(dir, 'bin'),
      confDir: join(dir, 'net.d'),
      bindAddress: '127.0.0.1:6000',
      pid: 4242,
      node: '/usr/local/bin/node',
      entry: "/app/it's/shiftstack.js",
    });
    assert.deepEqual(written, [join(dir, 'bin', 'kuryr-cni'), join(dir, 'net.d', '10-kuryr.conflist')]);
    assert.equal((await stat(written[0]!)).mode & 0o777, 0o755);
    assert.equal(
      await readFile(written[0]!, 'utf8'),
      pluginWrapper(4242, '/usr/local/bin/node', "/app/it's/shiftstack.js"),
    );
    assert.match(
      await readFile(written[0]!, 'utf8'),
      /^exec nsenter --target 4242 --mount -- '\/usr\/local\/bin\/node' '\/app\/it'\\''s\/shiftstack\.js' kuryr cni "\$@"$/m,
    );
    const conf = JSON.parse(await readFile(written[1]!, 'utf8'));
    assert.equal(conf.plugins[0].daemon_url, 'http://127.0.0.1:6000');
    assert.deepEqual(
      await installCni({ bindAddress: '127.0.0.1:6000' }),
      [],
      'nothing asked, nothing written',
    );
  });
});

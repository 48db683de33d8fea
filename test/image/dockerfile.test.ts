/**
 * The image ships what runs and nothing else (no docker here: the Dockerfile and .dockerignore are
 * read as the builder reads them). What runs is the module graph of bin/shiftstack.js — the
 * emulators included: `shiftstack sim` and `up` are product — plus the files it reads; what does
 * not is tests, test helpers, benchmarks, scripts and docs. And the upstream binary paths the
 * manifests name are there: /bin/openstack-cloud-controller-manager, /manager and
 * /machine-controller-manager.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { findImports } from '../../scripts/architecture.ts';
import { EXAMPLE_PATH } from '../../src/demo/manifest.ts';
import { ROOT, shipped } from './image.ts';

/** Every module bin/shiftstack.js loads at run time (type-only imports are erased), and the packages it needs. */
async function runtimeGraph(): Promise<{ modules: Set<string>; packages: Set<string> }> {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const queue = ['bin/shiftstack.js'];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (modules.has(file)) continue;
    modules.add(file);
    for (const imp of findImports(file, await readFile(join(ROOT, file), 'utf8'))) {
      if (imp.typeOnly || imp.specifier.startsWith('node:')) continue;
      if (imp.specifier.startsWith('.')) {
        queue.push(relative(ROOT, join(ROOT, dirname(file), imp.specifier)));
      } else {
        const parts = imp.specifier.split('/');
        packages.add(imp.specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
      }
    }
  }
  return { modules, packages };
}

describe('the image (Dockerfile, .dockerignore, image/bin)', () => {
  it('ships no tests, test helpers, benchmarks, scripts or docs', async () => {
    const { files } = await shipped();
    const unwanted = [...files].filter(
      (f) => /\.test\.ts$/.test(f) || /(^|\/)testing\//.test(f) || /^(test|bench|scripts|docs)\//.test(f),
    );
    assert.deepEqual(unwanted, []);
    assert.ok(!files.has('README.md') && !files.has('ARCHITECTURE.md'));
  });

  it('ships everything that runs: the module graph of bin/shiftstack.js (the emulators too) and what it reads', async () => {
    const { files } = await shipped();
    const { modules, packages } = await runtimeGraph();
    for (const emulator of ['src/sim/openstack/', 'src/sim/kube/']) {
      assert.ok(
        [...modules].some((m) => m.startsWith(emulator)),
        `up and sim need ${emulator}`,
      );
    }
    const missing = [...modules, relative(ROOT, EXAMPLE_PATH), 'package.json'].filter((f) => !files.has(f));
    assert.deepEqual(missing, []);
    // `npm ci --omit=dev` installs the dependencies only.
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    assert.deepEqual(
      [...packages].filter((p) => !(p in pkg.dependencies)),
      [],
      'a package imported at run time is a dependency, not a devDependency',
    );
  });

  it('has the upstream binaries where upstream manifests run them, and an entrypoint that runs them by path', async () => {
    const { copies, entrypoint } = await shipped();
    const dest = (source: string) => {
      const c = copies.find((x) => x.sources.includes(source))!;
      assert.ok(c, `${source} is copied`);
      assert.equal(c.chmod, '0755', `${source} is executable in the image`);
      return c.dest.endsWith('/') ? `${c.dest}${source.split('/').pop()}` : c.dest;
    };
    assert.equal(
      dest('image/bin/openstack-cloud-controller-manager'),
      '/bin/openstack-cloud-controller-manager',
    );
    assert.equal(dest('image/bin/manager'), '/manager');
    assert.equal(dest('image/bin/machine-controller-manager'), '/machine-controller-manager');
    assert.equal(dest('image/bin/kuryr-controller'), '/usr/local/bin/kuryr-k8s-controller');
    assert.deepEqual(entrypoint, [dest('image/bin/entrypoint')]);
    // Executable in the repository too (tests run them).
    const modes = execFileSync('git', ['ls-files', '-s', 'image/bin'], { cwd: ROOT, encoding: 'utf8' });
    for (const line of modes.trim().split('\n')) assert.match(line, /^100755 /, line);
  });
});

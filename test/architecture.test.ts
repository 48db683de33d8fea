import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkArchitecture, findImports } from '../scripts/architecture.ts';

const repoRoot = join(import.meta.dirname, '..');

async function tree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'shiftstack-arch-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

describe('dependency rule', () => {
  const roots: string[] = [];
  after(async () => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

  it('holds for this repository', async () => {
    assert.deepEqual(await checkArchitecture(repoRoot), []);
  });

  it('catches src/openstack importing a controller folder', async () => {
    const root = await tree({
      'src/openstack/client.ts': "import { x } from '../ccm/service.ts';\nexport const y = x;\n",
      'src/ccm/service.ts': 'export const x = 1;\n',
    });
    roots.push(root);
    const violations = await checkArchitecture(root);
    assert.equal(violations.length, 1);
    assert.equal(violations[0]?.file, 'src/openstack/client.ts');
    assert.equal(violations[0]?.line, 1);
    assert.match(violations[0]?.message ?? '', /src\/openstack may not import src\/ccm/);
  });

  it('catches src/kube importing a controller through a dynamic import', async () => {
    const root = await tree({
      'src/kube/manager.ts': "export const load = () => import('../capo/index.ts');\n",
      'src/capo/index.ts': 'export {};\n',
    });
    roots.push(root);
    const violations = await checkArchitecture(root);
    assert.equal(violations.length, 1);
    assert.match(violations[0]?.message ?? '', /src\/kube may not import src\/capo/);
  });

  it("lets a part import another part's published api/ folder and nothing else of it", async () => {
    const root = await tree({
      'src/mapo/machine/server.ts':
        "import type { S } from '../../capo/api/server.ts';\nimport { r } from '../../capo/controllers/server.ts';\nexport const x = (s: S) => r(s);\n",
      'src/mapo/api/kinds.ts': "import { k } from '../../capo/api/server.ts';\nexport const m = k;\n",
      'src/capo/api/server.ts': 'export type S = number;\nexport const k = 1;\n',
      'src/capo/controllers/server.ts': 'export const r = (s: number) => s;\n',
      'src/openstack/x.ts': "import { k } from '../capo/api/server.ts';\nexport const y = k;\n",
    });
    roots.push(root);
    const found = (await checkArchitecture(root)).map((v) => `${v.file}:${v.line}`).sort();
    // A controller folder stays private; an api/ folder depends on no other part; the shared layers
    // import no part at all.
    assert.deepEqual(found, [
      'src/mapo/api/kinds.ts:1',
      'src/mapo/machine/server.ts:2',
      'src/openstack/x.ts:1',
    ]);
  });

  it('catches production code importing the emulators, and allows the demo wiring and tests', async () => {
    const root = await tree({
      'src/ccm/cloud.ts':
        "import { startOpenStack } from '../sim/openstack/server.ts';\nexport const s = startOpenStack;\n",
      'src/ccm/cloud.test.ts':
        "import { startOpenStack } from '../sim/openstack/server.ts';\nexport const s = startOpenStack;\n",
      'src/cli/commands/sim.ts': "export { startOpenStack } from '../../sim/openstack/server.ts';\n",
      'src/cli/commands/version.ts':
        "import { startOpenStack } from '../../sim/openstack/server.ts';\nexport const s = startOpenStack;\n",
      'src/sim/openstack/server.ts': 'export const startOpenStack = 1;\n',
    });
    roots.push(root);
    const files = (await checkArchitecture(root)).map((v) => v.file).sort();
    assert.deepEqual(files, ['src/ccm/cloud.ts', 'src/cli/commands/version.ts']);
  });

  it('catches a production command that reaches the emulators, the demo or tests through imports the layer rule allows', async () => {
    const root = await tree({
      // The entry imports each command lazily: allowed.
      'src/cli/main.ts':
        "export const commands = [() => import('./commands/up.ts'), () => import('./commands/ccm.ts'), () => import('./commands/capo.ts'), () => import('./commands/openstack.ts')];\n",
      'src/cli/commands/up.ts':
        "import { start } from '../../sim/kube/start.ts';\nexport const up = start;\n",
      'src/cli/commands/ccm.ts': "import { parsePort } from './helpers.ts';\nexport const ccm = parsePort;\n",
      'src/cli/commands/ccm-operator.ts': 'export {};\n',
      'src/cli/commands/kuryr.ts': 'export {};\n',
      'src/cli/commands/helpers.ts': "export { up as parsePort } from './up.ts';\n",
      'src/cli/commands/capo.ts':
        "export const capo = async () => (await import('../../demo/run.ts')).run;\n",
      'src/cli/commands/openstack.ts':
        "import type { Fixture } from '../../lib/testing/fixture.ts';\nimport { redact } from '../../lib/redact.ts';\nexport const os = (f: Fixture) => redact(f);\n",
      'src/lib/redact.ts': 'export const redact = (x: unknown) => x;\n',
      'src/lib/testing/fixture.ts': 'export type Fixture = string;\n',
      'src/demo/run.ts': "export { start as run } from '../sim/kube/start.ts';\n",
      'src/sim/kube/start.ts': 'export const start = 1;\n',
    });
    roots.push(root);
    const violations = await checkArchitecture(root);
    assert.deepEqual(
      violations.map((v) => [v.file, v.line, v.specifier]),
      [
        ['src/cli/commands/helpers.ts', 1, './up.ts'],
        ['src/cli/commands/capo.ts', 1, '../../demo/run.ts'],
      ],
    );
    assert.match(
      violations[0]!.message,
      /^src\/cli\/commands\/ccm\.ts reaches the demo wiring: src\/cli\/commands\/ccm\.ts → src\/cli\/commands\/helpers\.ts → src\/cli\/commands\/up\.ts;/,
    );
    assert.match(violations[1]!.message, /^src\/cli\/commands\/capo\.ts reaches the demo \(src\/demo\)/);
  });

  it('lets the CLI entry load a demo command only lazily, and names a production command module that is gone', async () => {
    const root = await tree({
      'src/cli/main.ts': "import { up } from './commands/up.ts';\nexport const commands = [up];\n",
      'src/cli/commands/up.ts':
        "import { start } from '../../sim/kube/start.ts';\nexport const up = start;\n",
      'src/cli/commands/ccm.ts': 'export {};\n',
      'src/cli/commands/ccm-operator.ts': 'export {};\n',
      'src/cli/commands/capo.ts': 'export {};\n',
      'src/cli/commands/kuryr.ts': 'export {};\n',
      'src/sim/kube/start.ts': 'export const start = 1;\n',
    });
    roots.push(root);
    const violations = await checkArchitecture(root);
    assert.deepEqual(
      violations.map((v) => [v.file, v.specifier]),
      [
        ['src/cli/main.ts', './commands/up.ts'],
        ['src/cli/commands/openstack.ts', ''],
      ],
    );
    assert.match(violations[0]!.message, /^src\/cli\/main\.ts reaches the demo wiring/);
    assert.match(violations[1]!.message, /update PRODUCTION_COMMANDS/);
  });

  it('catches production code loading a test helper, whatever the layers allow; tests and type imports may', async () => {
    const root = await tree({
      'src/sim/openstack/server.ts':
        "import { startKillSwitch } from '../testing/kill-switch.ts';\nexport const s = startKillSwitch;\n",
      'src/sim/testing/kill-switch.ts': 'export const startKillSwitch = 1;\n',
      'src/ccm/helper.ts': "import { x } from './controllers/service.test.ts';\nexport const y = x;\n",
      'src/ccm/controllers/service.test.ts': 'export const x = 1;\n',
      'src/capo/crash.test.ts':
        "import { startKillSwitch } from '../sim/testing/kill-switch.ts';\nexport const k = startKillSwitch;\n",
      'src/capo/testing/env.ts':
        "import { startKillSwitch } from '../../sim/testing/kill-switch.ts';\nexport const k = startKillSwitch;\n",
      'src/kube/types.ts': "import type { Fake } from './testing/fake.ts';\nexport type F = Fake;\n",
      'src/kube/testing/fake.ts': 'export type Fake = 1;\n',
    });
    roots.push(root);
    const violations = await checkArchitecture(root);
    assert.deepEqual(
      violations.map((v) => [v.file, v.specifier]),
      [
        ['src/ccm/helper.ts', './controllers/service.test.ts'],
        ['src/sim/openstack/server.ts', '../testing/kill-switch.ts'],
      ],
    );
    assert.match(violations[0]!.message, /production code must not load test code/);
  });

  it('lets the emulators import client types but not client code', async () => {
    const root = await tree({
      'src/sim/a.ts': "import type { Port } from '../openstack/types.ts';\nexport type P = Port;\n",
      'src/sim/b.ts': "import { newPort } from '../openstack/types.ts';\nexport const p = newPort;\n",
      'src/openstack/types.ts': 'export interface Port { id: string }\nexport const newPort = 1;\n',
    });
    roots.push(root);
    const violations = await checkArchitecture(root);
    assert.deepEqual(
      violations.map((v) => v.file),
      ['src/sim/b.ts'],
    );
  });

  it('reports an unknown top-level folder', async () => {
    const root = await tree({ 'src/misc/x.ts': 'export {};\n' });
    roots.push(root);
    const violations = await checkArchitecture(root);
    assert.match(violations[0]?.message ?? '', /not a known layer/);
  });

  it('finds every kind of import', () => {
    const found = findImports(
      'x.ts',
      [
        "import a from './a.ts';",
        "import type { B } from './b.ts';",
        "import { type C } from './c.ts';",
        "export * from './d.ts';",
        "export type { E } from './e.ts';",
        "const f = await import('./f.ts');",
        "type G = import('./g.ts').G;",
      ].join('\n'),
    );
    assert.deepEqual(
      found.map((f) => [f.specifier, f.typeOnly]),
      [
        ['./a.ts', false],
        ['./b.ts', true],
        ['./c.ts', true],
        ['./d.ts', false],
        ['./e.ts', true],
        ['./f.ts', false],
        ['./g.ts', true],
      ],
    );
  });
});

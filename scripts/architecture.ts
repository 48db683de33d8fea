/**
 * The dependency rule of ARCHITECTURE.md, as data and a checker. `npm test` runs it over src/
 * (test/architecture.test.ts); `npm run arch` prints the violations of the working tree.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** Top-level folders of src/ and the folders each may import. */
export const LAYERS: Readonly<
  Record<string, { imports: readonly string[]; typeImports?: readonly string[] }>
> = {
  lib: { imports: [] },
  openstack: { imports: ['lib'] },
  kube: { imports: ['lib'] },
  ccm: { imports: ['lib', 'openstack', 'kube'] },
  'ccm-operator': { imports: ['lib', 'openstack', 'kube'] },
  capo: { imports: ['lib', 'openstack', 'kube'] },
  mapo: { imports: ['lib', 'openstack', 'kube'] },
  kuryr: { imports: ['lib', 'openstack', 'kube'] },
  // The emulators may name the client's wire types but never run its code: a shared bug would
  // then pass on both sides at once.
  sim: { imports: ['lib'], typeImports: ['openstack', 'kube'] },
  demo: { imports: ['lib', 'openstack', 'kube', 'ccm', 'ccm-operator', 'capo', 'mapo', 'kuryr', 'sim'] },
  cli: { imports: ['lib', 'openstack', 'kube', 'ccm', 'ccm-operator', 'capo', 'mapo', 'kuryr', 'demo'] },
};

/**
 * The parts (controllers). A part's `api/` folder is its published API (kinds, types, validation):
 * any part may import another's, as upstream MAPO vendors CAPO's API module and reads OpenShift's
 * config API; a part's controllers and everything else stay its own.
 */
export const PARTS: readonly string[] = ['ccm', 'ccm-operator', 'capo', 'mapo', 'kuryr'];

/** Whether `target` (a path from the repo root) is inside a part's published API folder. */
export function isPublishedApi(target: string): boolean {
  const [, part, folder] = target.split('/');
  return PARTS.includes(part ?? '') && folder === 'api';
}

/**
 * The demo wiring: the only non-test files outside src/sim allowed to import the emulators, because
 * they start them (`shiftstack sim …` and `shiftstack up`).
 */
export const SIM_WIRING: readonly string[] = [
  'src/cli/commands/sim.ts',
  'src/cli/commands/sim-kube.ts',
  'src/cli/commands/sim-kcm.ts',
  'src/cli/commands/up.ts',
  'src/demo/',
];

/**
 * What the binary loads for a production command: the CLI entry (its static imports; it imports a
 * command's module only when that command runs) and each production command's module with all it
 * imports, dynamic imports included. None of it may reach the emulators, the demo or test code, so
 * `shiftstack ccm` in a cluster runs no emulator code and loads none.
 */
export const CLI_ENTRY = 'src/cli/main.ts';
export const PRODUCTION_COMMANDS: readonly string[] = [
  'src/cli/commands/ccm.ts',
  'src/cli/commands/ccm-operator.ts',
  'src/cli/commands/capo.ts',
  'src/cli/commands/openstack.ts',
  'src/cli/commands/kuryr.ts',
];

export interface Violation {
  file: string;
  line: number;
  specifier: string;
  message: string;
}

export async function checkArchitecture(root: string): Promise<Violation[]> {
  const srcDir = join(root, 'src');
  const files = await listSourceFiles(srcDir);
  const violations: Violation[] = [];
  for (const file of files) {
    const rel = toPosix(relative(root, file));
    if (isTestFile(rel)) continue;
    const layer = rel.split('/')[1] ?? '';
    const rule = LAYERS[layer];
    if (!rule) {
      violations.push({
        file: rel,
        line: 1,
        specifier: '',
        message: `src/${layer} is not a known layer: add it to LAYERS in scripts/architecture.ts and to ARCHITECTURE.md`,
      });
      continue;
    }
    const text = await readFile(file, 'utf8');
    for (const imp of findImports(file, text)) {
      if (!imp.specifier.startsWith('.')) continue;
      const target = toPosix(relative(root, resolve(dirname(file), imp.specifier)));
      if (!target.startsWith('src/')) continue;
      if (!imp.typeOnly && isTestFile(target)) {
        violations.push({
          file: rel,
          line: imp.line,
          specifier: imp.specifier,
          message: `production code must not load test code (${target} is a test or lives under testing/); move what production needs out of testing/, or import only its types`,
        });
        continue;
      }
      const targetLayer = target.split('/')[1] ?? '';
      if (targetLayer === layer) continue;
      const allowed =
        rule.imports.includes(targetLayer) ||
        (PARTS.includes(layer) && isPublishedApi(target) && !isPublishedApi(rel)) ||
        (imp.typeOnly && (rule.typeImports ?? []).includes(targetLayer));
      const simWiring =
        targetLayer === 'sim' && SIM_WIRING.some((w) => rel === w || (w.endsWith('/') && rel.startsWith(w)));
      if (allowed || simWiring) continue;
      violations.push({
        file: rel,
        line: imp.line,
        specifier: imp.specifier,
        message:
          targetLayer === 'sim'
            ? `production code must not import the emulators (src/sim); reach them through a URL, a kubeconfig or a clouds.yaml`
            : `src/${layer} may not import src/${targetLayer} (allowed: ${[...rule.imports, ...(rule.typeImports ?? []).map((t) => `type-only ${t}`)].join(', ') || 'nothing in src'})`,
      });
    }
  }
  return [...violations, ...(await checkProductionReach(root))];
}

/** What a production command must never load: the emulators, the demo and its wiring, tests. */
function notForProduction(rel: string): string | undefined {
  if (rel.startsWith('src/sim/')) return 'the emulators (src/sim)';
  if (rel.startsWith('src/demo/')) return 'the demo (src/demo)';
  if (SIM_WIRING.includes(rel)) return 'the demo wiring';
  if (isTestFile(rel) || rel.startsWith('test/') || rel.startsWith('bench/')) return 'test code';
  return undefined;
}

/**
 * Walks the imports that run (not `import type`) from the CLI entry and from each production
 * command; a module listed by notForProduction that they reach is a violation, reported at the
 * import that reaches it with the chain from the start.
 */
async function checkProductionReach(root: string): Promise<Violation[]> {
  const exists = async (rel: string) =>
    readFile(join(root, rel), 'utf8').then(
      (text) => text,
      () => undefined,
    );
  // A tree without the CLI (the checker's own test trees) has nothing to walk.
  if ((await exists(CLI_ENTRY)) === undefined) return [];
  const violations: Violation[] = [];
  const starts = [
    { start: CLI_ENTRY, followDynamicAtStart: false },
    ...PRODUCTION_COMMANDS.map((start) => ({ start, followDynamicAtStart: true })),
  ];
  for (const { start, followDynamicAtStart } of starts) {
    if ((await exists(start)) === undefined) {
      violations.push({
        file: start,
        line: 1,
        specifier: '',
        message:
          'a production command module that does not exist: update PRODUCTION_COMMANDS in scripts/architecture.ts',
      });
      continue;
    }
    const via = new Map<string, string[]>([[start, [start]]]);
    const queue = [start];
    while (queue.length > 0) {
      const rel = queue.shift()!;
      const text = await exists(rel);
      if (text === undefined) continue;
      for (const imp of findImports(join(root, rel), text)) {
        if (imp.typeOnly || !imp.specifier.startsWith('.')) continue;
        // The entry imports each command's module only when that command runs.
        if (rel === start && !followDynamicAtStart && imp.dynamic) continue;
        const target = toPosix(relative(root, resolve(dirname(join(root, rel)), imp.specifier)));
        if (via.has(target)) continue;
        const chain = [...via.get(rel)!, target];
        via.set(target, chain);
        const what = notForProduction(target);
        if (what) {
          violations.push({
            file: rel,
            line: imp.line,
            specifier: imp.specifier,
            message: `${start} reaches ${what}: ${chain.join(' → ')}; import it only where the demo or a test runs, or lazily in a command that is not production`,
          });
          continue;
        }
        queue.push(target);
      }
    }
  }
  return violations;
}

interface FoundImport {
  specifier: string;
  typeOnly: boolean;
  /** An `import()` call: runs when the code reaches it, not when the module loads. */
  dynamic: boolean;
  line: number;
}

/** Static imports, re-exports, `import()` calls and `import('…')` types, from the TypeScript AST. */
export function findImports(fileName: string, text: string): FoundImport[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: FoundImport[] = [];
  const add = (literal: ts.Node, typeOnly: boolean, dynamic = false) => {
    if (!ts.isStringLiteralLike(literal)) return;
    const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1;
    found.push({ specifier: literal.text, typeOnly, dynamic, line });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const typeOnly =
        !!clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            !!clause.namedBindings &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      add(node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg) add(arg, false, true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function isTestFile(rel: string): boolean {
  return /\.test\.ts$/.test(rel) || rel.includes('/testing/');
}

async function listSourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e.isFile() && /\.(ts|mts|js|mjs)$/.test(e.name)) out.push(join(e.parentPath, e.name));
  }
  return out.sort();
}

function toPosix(p: string): string {
  return p.split(sep).join('/');
}

if (import.meta.main) {
  const violations = await checkArchitecture(process.cwd());
  for (const v of violations) console.error(`${v.file}:${v.line}: import "${v.specifier}": ${v.message}`);
  console.log(
    violations.length === 0 ? 'dependency rule: ok' : `dependency rule: ${violations.length} violation(s)`,
  );
  process.exitCode = violations.length === 0 ? 0 : 1;
}

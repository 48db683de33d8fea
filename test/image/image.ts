/**
 * The image as the builder makes it, read from the Dockerfile and .dockerignore (there is no docker
 * here): which files of the repository it holds, where the COPY instructions put them, its
 * ENTRYPOINT. test/image/*.test.ts check the file list and run upstream manifests' command lines
 * with the image's paths mapped back to the repository.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

export interface Copy {
  sources: string[];
  dest: string;
  chmod?: string;
}

/** The final stage's COPY instructions from the build context (not `--from` another stage), and its ENTRYPOINT. */
export function parseDockerfile(text: string): { copies: Copy[]; entrypoint: string[]; cmd: string[] } {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  const stages: string[][] = [];
  for (const line of lines) {
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    if (/^FROM\s/i.test(t)) stages.push([]);
    stages.at(-1)?.push(t);
  }
  const copies: Copy[] = [];
  let entrypoint: string[] = [];
  let cmd: string[] = [];
  for (const t of stages.at(-1) ?? []) {
    const [instruction = '', ...words] = t.split(/\s+/);
    if (/^ENTRYPOINT$/i.test(instruction)) entrypoint = JSON.parse(t.slice(instruction.length)) as string[];
    if (/^CMD$/i.test(instruction)) cmd = JSON.parse(t.slice(instruction.length)) as string[];
    if (!/^(COPY|ADD)$/i.test(instruction)) continue;
    const flags = words.filter((w) => w.startsWith('--'));
    if (flags.some((f) => f.startsWith('--from'))) continue;
    const paths = words.filter((w) => !w.startsWith('--'));
    const chmod = flags.find((f) => f.startsWith('--chmod='))?.slice('--chmod='.length);
    copies.push({ sources: paths.slice(0, -1), dest: paths.at(-1)!, ...(chmod ? { chmod } : {}) });
  }
  return { copies, entrypoint, cmd };
}

/** .dockerignore as Docker reads it: `**` any directories, `*` within one, a matched directory excludes what is under it. */
function dockerignore(text: string): (path: string) => boolean {
  const patterns = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  assert.ok(!patterns.some((p) => p.startsWith('!')), 'no exceptions: the matcher below does not do them');
  const regexes = patterns.map((p) => {
    const body = normalize(p)
      .replace(/^\/+/, '')
      .split('/')
      .map((seg) =>
        seg === '**'
          ? '(?:.*/)?'
          : `${seg
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '[^/]*')
              .replace(/\?/g, '[^/]')}/`,
      )
      .join('');
    return new RegExp(`^${body.replace(/\/$/, '')}$`);
  });
  return (path) => {
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (regexes.some((r) => r.test(prefix))) return true;
    }
    return false;
  };
}

function tracked(): string[] {
  return execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
}

/** The files of the context that the final image holds, by their path in the repository. */
export async function shipped(): Promise<{
  files: Set<string>;
  copies: Copy[];
  entrypoint: string[];
  cmd: string[];
}> {
  const { copies, entrypoint, cmd } = parseDockerfile(await readFile(join(ROOT, 'Dockerfile'), 'utf8'));
  const ignored = dockerignore(await readFile(join(ROOT, '.dockerignore'), 'utf8'));
  const files = new Set<string>();
  const all = tracked();
  for (const c of copies) {
    for (const source of c.sources) {
      const src = normalize(source).replace(/\/$/, '');
      for (const f of all) if ((f === src || f.startsWith(`${src}/`)) && !ignored(f)) files.add(f);
    }
  }
  return { files, copies, entrypoint, cmd };
}

/** Image path → the repository file the Dockerfile copies there. */
export async function imagePaths(): Promise<Map<string, string>> {
  const { copies } = await shipped();
  const out = new Map<string, string>();
  for (const c of copies) {
    for (const source of c.sources) {
      const dest = c.dest.endsWith('/') ? `${c.dest}${source.split('/').pop()}` : c.dest;
      out.set(dest, join(ROOT, source));
    }
  }
  return out;
}

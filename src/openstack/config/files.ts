/** Finding and reading config files, with the search order openstacksdk uses. */
import { access, readFile } from 'node:fs/promises';
import { extname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError, parseText } from '../../lib/config.ts';
import type { LoadContext } from './types.ts';

export const SITE_CONFIG_DIR = '/etc/openstack';

const SUFFIXES = ['.yaml', '.yml', '.json'];

/** `~` and `~/…` against the given home; then relative paths against the given working directory. */
export function absolutePath(path: string, ctx: LoadContext): string {
  const expanded =
    path === '~' ? ctx.homedir : path.startsWith('~/') ? join(ctx.homedir, path.slice(2)) : path;
  return isAbsolute(expanded) ? expanded : resolve(ctx.cwd, expanded);
}

/** openstacksdk's search path: the working directory, the user's config directory, the site's. */
export function configDirs(ctx: LoadContext): string[] {
  const dirs = [ctx.cwd];
  const xdg = ctx.env.XDG_CONFIG_HOME;
  if (xdg) dirs.push(join(absolutePath(xdg, ctx), 'openstack'));
  dirs.push(join(ctx.homedir, '.config', 'openstack'), ctx.siteConfigDir ?? SITE_CONFIG_DIR);
  return [...new Set(dirs)];
}

/** `clouds.yaml`, `clouds.yml`, `clouds.json` in each directory, in that order. */
export function candidates(ctx: LoadContext, base: 'clouds' | 'secure'): string[] {
  return configDirs(ctx).flatMap((dir) => SUFFIXES.map((suffix) => join(dir, base + suffix)));
}

export async function firstExisting(paths: readonly string[]): Promise<string | undefined> {
  for (const path of paths) {
    if (await exists(path)) return path;
  }
  return undefined;
}

export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Reads and parses a YAML or JSON file (JSON by the `.json` extension, as openstacksdk decides). */
export async function readDocument(path: string, signal?: AbortSignal): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, { encoding: 'utf8', ...(signal ? { signal } : {}) });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError([
      {
        file: path,
        key: '',
        value: undefined,
        problem:
          code === 'ENOENT' ? 'the file does not exist' : `the file cannot be read (${code ?? String(err)})`,
        fix:
          code === 'ENOENT'
            ? 'check the path, or create the file'
            : 'check the file permissions for the user running shiftstack',
      },
    ]);
  }
  return parseText(text, extname(path).toLowerCase() === '.json' ? 'json' : 'yaml', path);
}

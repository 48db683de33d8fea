/** Finding and reading config files, with the search order openstacksdk uses. */
import { access } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { loadConfigFile } from '../../lib/config.ts';
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

/**
 * Reads and parses a YAML or JSON file (JSON by the `.json` extension, as openstacksdk decides),
 * unvalidated: the caller reads the tree itself, to name each key in openstacksdk's words.
 */
export function readDocument(path: string, signal?: AbortSignal): Promise<unknown> {
  return loadConfigFile(path, z.unknown(), signal ? { signal } : {});
}

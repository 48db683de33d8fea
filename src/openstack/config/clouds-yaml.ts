/**
 * clouds.yaml (and secure.yaml) as openstacksdk reads them.
 *
 * File: the explicit path, else `OS_CLIENT_CONFIG_FILE`, else the first of `clouds.yaml`,
 * `clouds.yml`, `clouds.json` in the working directory, `$XDG_CONFIG_HOME/openstack`,
 * `~/.config/openstack` and `/etc/openstack`. secure.yaml: `OS_CLIENT_SECURE_FILE`, else the first
 * `secure.{yaml,yml,json}` in the same directories, deep-merged over the cloud entry (it is where
 * passwords go when clouds.yaml is shared). Cloud: the explicit name, else `OS_CLOUD`, else the only
 * cloud in the file. Keys may use `-` or `_`, and auth keys may sit beside `auth:` instead of in it,
 * as openstacksdk allows; keys inside `auth:` win.
 *
 * Unlike openstacksdk, a path named by `OS_CLIENT_CONFIG_FILE` or `OS_CLIENT_SECURE_FILE` that does not
 * exist is an error rather than silently skipped, and vendor profiles (`profile:`) are not expanded.
 */
import { parse as parseYaml } from 'yaml';
import { closest, ConfigError } from '../../lib/config.ts';
import { cloudEntryToDraft } from './clouds-entry.ts';
import type { Draft } from './draft.ts';
import { absolutePath, candidates, exists, firstExisting, readDocument } from './files.ts';
import { finalizeAfter } from './finalize.ts';
import type { Finalized } from './finalize.ts';
import type { LoadContext } from './types.ts';
import { mergeYamlNodes, toYamlNode } from './yaml-tree.ts';
import type { YamlNode } from './yaml-tree.ts';

export interface CloudsYamlOptions {
  /** clouds.yaml to read instead of searching. */
  file?: string;
  /** Cloud to use instead of `OS_CLOUD`. */
  cloud?: string;
  /** Where `cloud` was written (a cloud.conf line), so an unknown name is reported there. */
  cloudAt?: { file: string; key: string };
}

export interface CloudsYamlDraft {
  draft: Draft;
  warnings: string[];
}

/** Finds the clouds.yaml to read, or undefined when none exists anywhere on the search path. */
export async function findCloudsYaml(ctx: LoadContext, explicit?: string): Promise<string | undefined> {
  if (explicit) return mustExist(absolutePath(explicit, ctx), undefined);
  const fromEnv = ctx.env.OS_CLIENT_CONFIG_FILE;
  if (fromEnv) return mustExist(absolutePath(fromEnv, ctx), 'OS_CLIENT_CONFIG_FILE');
  return firstExisting(candidates(ctx, 'clouds'));
}

async function findSecureYaml(ctx: LoadContext): Promise<string | undefined> {
  const fromEnv = ctx.env.OS_CLIENT_SECURE_FILE;
  if (fromEnv) return mustExist(absolutePath(fromEnv, ctx), 'OS_CLIENT_SECURE_FILE');
  return firstExisting(candidates(ctx, 'secure'));
}

async function mustExist(path: string, variable: string | undefined): Promise<string> {
  if (await exists(path)) return path;
  throw new ConfigError([
    {
      file: variable ? 'environment' : path,
      key: variable ?? '',
      value: variable ? path : undefined,
      problem: 'the file does not exist',
      fix: variable
        ? `point ${variable} at an existing file, or unset it`
        : 'check the path, or create the file',
    },
  ]);
}

/** Reads clouds.yaml and secure.yaml and selects one cloud, without validating the auth method yet. */
export async function readCloudsYaml(
  ctx: LoadContext,
  options: CloudsYamlOptions = {},
): Promise<CloudsYamlDraft> {
  const file = await findCloudsYaml(ctx, options.file);
  if (!file) {
    throw new ConfigError([
      {
        file: 'clouds.yaml',
        key: '',
        value: undefined,
        problem: `no clouds.yaml found; looked for ${candidates(ctx, 'clouds').join(', ')}`,
        fix: 'create one of those files, set OS_CLIENT_CONFIG_FILE to its path, or pass the path explicitly',
      },
    ]);
  }
  const secureFile = await findSecureYaml(ctx);
  const base = cloudsOf(await readDocument(file, ctx.signal), file, true);
  const secure = secureFile ? cloudsOf(await readDocument(secureFile, ctx.signal), secureFile, false) : {};
  const names = [...new Set([...Object.keys(base), ...Object.keys(secure)])];

  const envCloud = ctx.env.OS_CLOUD || undefined;
  const name = options.cloud ?? envCloud ?? (names.length === 1 ? names[0] : undefined);
  if (name === undefined) {
    throw new ConfigError([
      {
        file,
        key: 'clouds',
        value: undefined,
        problem:
          names.length === 0
            ? 'no clouds are defined'
            : `${names.length} clouds are defined and none is selected`,
        fix:
          names.length === 0
            ? 'add an entry under clouds:, e.g. clouds: { mycloud: { auth: { auth_url: … } } }'
            : `set OS_CLOUD (or pass the cloud name) to one of: ${names.join(', ')}`,
      },
    ]);
  }
  if (!names.includes(name)) {
    const suggestion = closest(name, names);
    const at =
      options.cloud === undefined
        ? { file: 'environment', key: 'OS_CLOUD' }
        : (options.cloudAt ?? { file, key: 'clouds' });
    const selector =
      options.cloud === undefined ? 'set OS_CLOUD to' : options.cloudAt ? `set ${at.key} to` : 'choose';
    throw new ConfigError([
      {
        ...at,
        value: name,
        problem: `no cloud named "${name}" in ${file}${secureFile ? ` or ${secureFile}` : ''}; it defines ${names.join(', ') || 'none'}`,
        fix: `${selector} one of: ${names.join(', ') || '(add a cloud first)'}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`,
      },
    ]);
  }

  let entry: YamlNode = { kind: 'map', entries: new Map(), file };
  for (const [clouds, from] of [
    [base, file],
    [secure, secureFile ?? ''],
  ] as const) {
    if (clouds[name] !== undefined) entry = mergeYamlNodes(entry, toYamlNode(clouds[name], from));
  }

  const env: string[] = [];
  if (options.cloud === undefined && envCloud) env.push('OS_CLOUD');
  if (!options.file && ctx.env.OS_CLIENT_CONFIG_FILE) env.push('OS_CLIENT_CONFIG_FILE');
  if (ctx.env.OS_CLIENT_SECURE_FILE) env.push('OS_CLIENT_SECURE_FILE');
  const source = {
    kind: 'clouds.yaml' as const,
    files: secureFile ? [file, secureFile] : [file],
    cloud: name,
    env,
  };
  return cloudEntryToDraft(entry, name, file, source, ctx);
}

/** Reads, selects and validates: the cloud as a {@link CloudConfig}. */
export async function loadCloudsYaml(ctx: LoadContext, options: CloudsYamlOptions = {}): Promise<Finalized> {
  const { draft, warnings } = await readCloudsYaml(ctx, options);
  return finalizeAfter(warnings, draft, ctx.signal);
}

export interface CloudsYamlTextOptions {
  /** The clouds.yaml document itself. */
  text: string;
  /** Where it came from, for error messages (e.g. `Secret ns/name key clouds.yaml`). */
  origin: string;
  /** The entry to use. */
  cloud: string;
  /** A CA certificate (PEM) that came with it. */
  caPem?: string | undefined;
}

/**
 * A clouds.yaml held in memory (a Kubernetes Secret, as CAPO's identityRef), selected and validated
 * like a file, so the credentials never touch the disk. No secure.yaml and no search: the text is the
 * whole source.
 */
export async function loadCloudsYamlText(
  ctx: LoadContext,
  options: CloudsYamlTextOptions,
): Promise<Finalized> {
  const { text, origin, cloud } = options;
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError([
      {
        file: origin,
        key: '',
        value: undefined,
        problem: `not valid YAML: ${(err as Error).message.split('\n')[0]}`,
        fix: 'write a clouds.yaml document (clouds: followed by indented cloud entries)',
      },
    ]);
  }
  const clouds = cloudsOf(doc, origin, true);
  const names = Object.keys(clouds);
  if (clouds[cloud] === undefined) {
    const suggestion = closest(cloud, names);
    throw new ConfigError([
      {
        file: origin,
        key: 'clouds',
        value: cloud,
        problem: `no cloud named "${cloud}"; it defines ${names.join(', ') || 'none'}`,
        fix: `set cloudName to one of: ${names.join(', ') || '(add a cloud first)'}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`,
      },
    ]);
  }
  const source = { kind: 'clouds.yaml' as const, files: [origin], cloud, env: [] };
  const { draft, warnings } = cloudEntryToDraft(
    toYamlNode(clouds[cloud], origin),
    cloud,
    origin,
    source,
    ctx,
  );
  const done = await finalizeAfter(warnings, draft, ctx.signal);
  const config =
    options.caPem !== undefined
      ? { ...done.config, tls: { ...done.config.tls, caPem: options.caPem } }
      : done.config;
  return { config, warnings: done.warnings };
}

function cloudsOf(doc: unknown, file: string, required: boolean): Record<string, unknown> {
  const fail = (problem: string, fix: string): never => {
    throw new ConfigError([{ file, key: 'clouds', value: undefined, problem, fix }]);
  };
  if (doc === null || doc === undefined) {
    return required ? fail('the file is empty', 'add a clouds: map with at least one cloud') : {};
  }
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    return fail('the file is not a map', 'start the file with clouds: and indent each cloud under it');
  }
  const clouds = (doc as Record<string, unknown>).clouds;
  if (clouds === undefined) {
    return required ? fail('required key is missing', 'add a clouds: map with at least one cloud') : {};
  }
  if (clouds === null || typeof clouds !== 'object' || Array.isArray(clouds)) {
    return fail(
      'expected a map of cloud names to settings',
      'write clouds: followed by indented cloud entries',
    );
  }
  return clouds as Record<string, unknown>;
}

/**
 * OCCM's cloud.conf: the `[Global]` section (see cloud-conf-global.ts) and
 * `[Metadata] request-timeout`, which OCCM also uses as the timeout of every OpenStack API call.
 * The other sections belong to the CCM, which reads them from the same parsed document.
 *
 * With `use-clouds = true`, auth comes from clouds.yaml (`clouds-file`, else the standard search with
 * `OS_CLIENT_CONFIG_FILE` first; `cloud`, else `OS_CLOUD`) and every key set in `[Global]` wins over
 * it, as OCCM's ReadClouds does. An empty value counts as unset, as it does in OCCM.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../../lib/config.ts';
import { gcfgLast, gcfgSection, gcfgWhere, readGcfgFile } from '../../lib/gcfg.ts';
import type { GcfgDocument } from '../../lib/gcfg.ts';
import { CREDENTIAL_FIELDS } from './auth-keys.ts';
import { confKeyOf, readGlobalSection } from './cloud-conf-global.ts';
import { readCloudsYaml } from './clouds-yaml.ts';
import { processContext } from './context.ts';
import type { Draft, DraftFields, Located } from './draft.ts';
import { parseGoDuration } from './duration.ts';
import { finalizeAfter, warning } from './finalize.ts';
import type { Finalized } from './finalize.ts';
import { problem, Problems } from './problems.ts';
import type { CloudConfig, LoadContext } from './types.ts';

export interface CloudConfOptions {
  /** clouds.yaml for `use-clouds` when `[Global] clouds-file` is not set. */
  cloudsYaml?: string;
  /** Cloud for `use-clouds` when `[Global] cloud` is not set. */
  cloud?: string;
}

export interface CloudConfResult {
  cloud: CloudConfig;
  /** The whole parsed file, for the CCM's own sections. */
  document: GcfgDocument;
  warnings: string[];
}

/** Reads and validates cloud.conf; the parsed document comes back for the CCM's sections. */
export async function loadCloudConf(
  path: string,
  ctx: LoadContext = processContext(),
  options: CloudConfOptions = {},
): Promise<CloudConfResult> {
  const document = await readGcfgFile(resolve(ctx.cwd, path), ctx.signal);
  const { config, warnings } = await cloudConfigFromGcfg(document, ctx, options);
  return { cloud: config, document, warnings };
}

/** The cloud described by an already-parsed cloud.conf (so the CCM parses the file once). */
export async function cloudConfigFromGcfg(
  document: GcfgDocument,
  ctx: LoadContext,
  options: CloudConfOptions = {},
): Promise<Finalized> {
  const global = gcfgSection(document, 'Global');
  if (!global) {
    throw new ConfigError([
      problem(
        document.file,
        '[Global]',
        undefined,
        'the [Global] section is missing',
        'add a [Global] section with auth-url and credentials, or with use-clouds = true to read clouds.yaml',
      ),
    ]);
  }
  const problems = new Problems();
  const { fields, unread, useClouds, cloudsFile, cloudName, warnings } = readGlobalSection(
    document,
    global,
    ctx,
    problems,
  );
  const timeout = requestTimeout(document, problems);
  if (timeout) fields.requestTimeoutMs = timeout;
  problems.throwIfAny(warnings);

  const conf: Draft = {
    fields,
    endpointOverride: {},
    where: (field) => ({ file: document.file, key: confKeyOf(field) }),
    source: { kind: 'cloud.conf', files: [document.file], env: [] },
    unread,
  };
  if (!useClouds) {
    for (const ignored of [cloudsFile, cloudName]) {
      if (ignored) warnings.push(warning(ignored.file, ignored.key, 'ignored: use-clouds is not true'));
    }
    return finalizeAfter(warnings, conf, ctx.signal);
  }

  let clouds: Awaited<ReturnType<typeof readCloudsYaml>>;
  try {
    clouds = await readCloudsYaml(ctx, {
      file: cloudsFile?.value ?? options.cloudsYaml,
      cloud: cloudName?.value ?? options.cloud,
      cloudAt: cloudName && { file: cloudName.file, key: cloudName.key },
    });
  } catch (err) {
    throw ConfigError.withWarnings(err, warnings);
  }
  return finalizeAfter([...warnings, ...clouds.warnings], overlay(conf, clouds.draft), ctx.signal);
}

/** [Global] over clouds.yaml, key by key, as OCCM's ReadClouds does. */
function overlay(conf: Draft, clouds: Draft): Draft {
  const fields: DraftFields = { ...clouds.fields, ...conf.fields };
  // A credential written in [Global] decides the method, whatever auth_type clouds.yaml names.
  if (CREDENTIAL_FIELDS.some((field) => conf.fields[field])) delete fields.authType;
  return {
    fields,
    // A misspelt [Global] key still explains a field missing from both.
    ...(conf.unread ? { unread: conf.unread } : {}),
    endpointOverride: clouds.endpointOverride,
    // With use-clouds, clouds.yaml is where the credentials live, so that is where a missing one goes.
    where: clouds.where,
    source: {
      kind: 'cloud.conf',
      files: [...conf.source.files, ...clouds.source.files],
      ...(clouds.source.cloud !== undefined ? { cloud: clouds.source.cloud } : {}),
      env: clouds.source.env,
    },
  };
}

function requestTimeout(document: GcfgDocument, problems: Problems): Located<number> | undefined {
  const entry = gcfgLast(gcfgSection(document, 'Metadata'), 'request-timeout');
  if (!entry) return undefined;
  const file = gcfgWhere(document, entry.line);
  const key = `[Metadata] ${entry.rawName}`;
  const ms = entry.implicit ? undefined : parseGoDuration(entry.value);
  if (ms === undefined) {
    problems.add(
      file,
      key,
      entry.implicit ? undefined : entry.value,
      'not a Go duration',
      'write a duration with a unit, e.g. 60s or 1m30s',
    );
    return undefined;
  }
  if (ms <= 0) {
    problems.add(
      file,
      key,
      entry.value,
      'the timeout must be greater than 0',
      'shiftstack always bounds API calls; use e.g. 60s',
    );
    return undefined;
  }
  return { value: Math.ceil(ms), file, key };
}

/**
 * Where a shiftstack component gets its OpenStack cloud: one entry point over every source a user
 * already has.
 *
 * Precedence (the first that applies is the only source used; sources are never blended, except
 * cloud.conf with `use-clouds`, which is OCCM's own blend):
 *
 * 1. An explicit cloud.conf (OCCM's gcfg file). Its `[Global]` keys are the config. With
 *    `use-clouds = true` it reads clouds.yaml as in 2 (`clouds-file` over the `cloudsYaml` option;
 *    `cloud` over the `cloud` option over `OS_CLOUD`) and every key set in `[Global]` wins.
 *    `[Metadata] request-timeout` sets the timeout of every API call.
 * 2. clouds.yaml, when a cloud is named (the `cloud` option, else `OS_CLOUD`) or a file is given (the
 *    `cloudsYaml` option). secure.yaml is deep-merged over the entry.
 * 3. OS_* variables, when any of them holds an auth URL or a credential (OS_AUTH_URL, OS_USERNAME,
 *    OS_APPLICATION_CREDENTIAL_ID, OS_TOKEN, …; selectors such as OS_CLOUD and OS_REGION_NAME alone do
 *    not count). Like openstacksdk, variables are not mixed into a clouds.yaml cloud.
 * 4. clouds.yaml found by searching, when it holds exactly one cloud.
 *
 * clouds.yaml search: `OS_CLIENT_CONFIG_FILE` if set, else the first of clouds.yaml, clouds.yml and
 * clouds.json in the working directory, `$XDG_CONFIG_HOME/openstack`, `~/.config/openstack` and
 * `/etc/openstack`. secure.yaml: `OS_CLIENT_SECURE_FILE`, else secure.{yaml,yml,json} in the same
 * directories. Relative paths are taken from `cwd`; `~/` means `homedir` in clouds.yaml and OS_*
 * paths (openstacksdk expands it) but not in cloud.conf (OCCM does not).
 *
 * Defaults: interface `public`, TLS verification on, request timeout 60 s, no region (the catalog's
 * only region). Domains are not defaulted (openstacksdk and OCCM do not either): a user or project
 * given by name without its domain is an error whose fix says "usually Default".
 *
 * Nothing here reads `process`: the caller passes `env`, `homedir` and `cwd` (see processContext).
 */
import { ConfigError } from '../../lib/config.ts';
import { loadCloudConf } from './cloud-conf.ts';
import { findCloudsYaml, loadCloudsYaml } from './clouds-yaml.ts';
import { ENVIRONMENT, envHasCloud, loadEnvironment } from './env.ts';
import type { Finalized } from './finalize.ts';
import { warning } from './finalize.ts';
import { candidates } from './files.ts';
import type { LoadContext } from './types.ts';

export interface ResolveOptions extends LoadContext {
  /** OCCM cloud.conf to read; when set, it is the source. */
  cloudConf?: string;
  /** clouds.yaml to read instead of searching. */
  cloudsYaml?: string;
  /** clouds.yaml entry to use instead of `OS_CLOUD`. */
  cloud?: string;
}

export async function resolveCloudConfig(options: ResolveOptions): Promise<Finalized> {
  const { cloudConf, cloudsYaml, cloud, ...ctx } = options;

  if (cloudConf !== undefined) {
    const result = await loadCloudConf(cloudConf, ctx, { cloudsYaml, cloud });
    const warnings = [...result.warnings];
    if ((cloudsYaml !== undefined || cloud !== undefined) && result.cloud.source.files.length === 1) {
      warnings.push(
        warning(
          result.document.file,
          '[Global] use-clouds',
          'the clouds.yaml file or cloud name given is ignored because use-clouds is not true',
        ),
      );
    }
    return { config: result.cloud, warnings };
  }

  const fileCloud = cloud !== undefined || cloudsYaml !== undefined || Boolean(ctx.env.OS_CLOUD);
  if (fileCloud) return withEnvNotice(await loadCloudsYaml(ctx, { file: cloudsYaml, cloud }), ctx);
  if (envHasCloud(ctx.env)) return loadEnvironment(ctx);
  if (await findCloudsYaml(ctx)) return loadCloudsYaml(ctx);

  throw new ConfigError([
    {
      file: ENVIRONMENT,
      key: 'OS_CLOUD',
      value: undefined,
      problem: `no OpenStack cloud configured: no cloud.conf given, neither OS_CLOUD nor OS_AUTH_URL set, and no clouds.yaml at ${candidates(ctx, 'clouds').join(', ')}`,
      fix: 'write a clouds.yaml and set OS_CLOUD to its cloud, source an openrc file (OS_AUTH_URL, OS_USERNAME, …), or pass a cloud.conf',
    },
  ]);
}

/** A user with both OS_CLOUD and an openrc loaded should know which one won. */
function withEnvNotice(result: Finalized, ctx: LoadContext): Finalized {
  if (!envHasCloud(ctx.env)) return result;
  return {
    config: result.config,
    warnings: [
      ...result.warnings,
      warning(
        ENVIRONMENT,
        '',
        `OS_* credentials are set but not used: clouds.yaml cloud "${result.config.source.cloud ?? ''}" is the source`,
      ),
    ],
  };
}

/**
 * The CCM's whole cloud.conf, read once: `[Global]` through the OpenStack config reader (auth,
 * clouds.yaml, `[Metadata] request-timeout`), every other section here, and, when the file names one,
 * a Secret's cloud.conf laid over the file. Every problem in every section comes back in one
 * ConfigError; warnings cover what OCCM would ignore without a word.
 *
 *   const document = await readGcfgFile(path);
 *   const ref = secretRefOf(document, ctx.env);            // [Global] secret-name / secret-namespace
 *   const secret = ref && secretConf(ref, await readSecretData(ref));   // the loader's job
 *   const config = await ccmConfigFromGcfg(document, ctx, { secret });
 */
import { resolve } from 'node:path';
import { ConfigError, type ConfigProblem } from '../../lib/config.ts';
import { gcfgSection, readGcfgFile, type GcfgDocument } from '../../lib/gcfg.ts';
import { cloudConfigFromGcfg, type CloudConfOptions } from '../../openstack/config/cloud-conf.ts';
import { processContext } from '../../openstack/config/context.ts';
import { warning } from '../../openstack/config/finalize.ts';
import { Problems } from '../../openstack/config/problems.ts';
import type { CloudConfig, LoadContext } from '../../openstack/config/types.ts';
import { regionalProviderIdFromEnv } from '../../openstack/services/provider-id.ts';
import { readSecretRef, withoutCcmGlobalKeys } from './global-secret.ts';
import { readLoadBalancerClasses } from './load-balancer-class.ts';
import { readLoadBalancerSection } from './load-balancer.ts';
import { readMetadataSection } from './metadata.ts';
import { readNetworkingSection } from './networking.ts';
import { checkBlockStorageSection, checkSections, readRouteSection } from './sections.ts';
import { overlaySecretConf, singleConf, type SecretConf } from './secret-overlay.ts';
import { SectionReader, type ReadContext } from './section-reader.ts';
import type { CcmConfig, CcmSections, SecretRef } from './types.ts';

export interface CcmConfOptions extends CloudConfOptions {
  /** The cloud.conf of the Secret named by `[Global] secret-name` (see secretConf). */
  secret?: SecretConf | undefined;
}

export async function loadCcmConfig(
  path: string,
  ctx: LoadContext = processContext(),
  options: CcmConfOptions = {},
): Promise<CcmConfig> {
  const document = await readGcfgFile(resolve(ctx.cwd, path), ctx.signal);
  return ccmConfigFromGcfg(document, ctx, options);
}

/**
 * The file checked before the CCM starts, without the cluster: the whole config, or `undefined`
 * when `[Global] secret-name` names a Secret, which may complete or override any of it and is read
 * (and the result validated) when the CCM starts.
 */
export async function checkCcmConfigFile(
  path: string,
  ctx: LoadContext = processContext(),
): Promise<CcmConfig | undefined> {
  const document = await readGcfgFile(resolve(ctx.cwd, path), ctx.signal);
  if (secretRefOf(document, ctx.env)) return undefined;
  return ccmConfigFromGcfg(document, ctx);
}

export async function ccmConfigFromGcfg(
  document: GcfgDocument,
  ctx: LoadContext,
  options: CcmConfOptions = {},
): Promise<CcmConfig> {
  const layered = options.secret ? overlaySecretConf(document, options.secret) : singleConf(document);
  const problems: ConfigProblem[] = [];
  // Warnings too when something is fatal: a misspelt key (a warning) is often why a value is missing.
  const cloudWarnings: string[] = [];
  const sectionWarnings: string[] = [];
  let sections: { sections: CcmSections; warnings: string[] } | undefined;
  try {
    sections = readCcmSections(layered.document, ctx.env);
    sectionWarnings.push(...sections.warnings);
  } catch (err) {
    if (!ConfigError.is(err)) throw err;
    problems.push(...err.problems);
    sectionWarnings.push(...err.warnings);
  }
  let cloud: { config: CloudConfig; warnings: string[] } | undefined;
  try {
    cloud = await cloudConfigFromGcfg(withoutCcmGlobalKeys(layered.document), ctx, options);
    cloudWarnings.push(...cloud.warnings);
  } catch (err) {
    if (!ConfigError.is(err)) throw err;
    problems.push(...err.problems);
    cloudWarnings.push(...err.warnings);
  }
  const warnings = [...layered.warnings, ...cloudWarnings, ...sectionWarnings].map((w) =>
    layered.relocate(w),
  );
  if (problems.length > 0 || !sections || !cloud) {
    throw new ConfigError(
      problems.map((p) => layered.relocateProblem(p)),
      warnings,
    );
  }
  const env: string[] = [];
  if (ctx.env.OCCM_WAIT_LB_ACTIVE_STEPS !== undefined) {
    env.push(
      warning(
        'environment',
        'OCCM_WAIT_LB_ACTIVE_STEPS',
        'ignored: shiftstack does not wait for load balancers in a fixed number of steps',
      ),
    );
  }
  return {
    file: document.file,
    cloud: cloud.config,
    ...sections.sections,
    regionalProviderId: regionalProviderIdFromEnv(ctx.env),
    warnings: warnings.concat(env),
  };
}

/** Every section but `[Global]`'s auth keys; throws one ConfigError with every problem. */
export function readCcmSections(
  document: GcfgDocument,
  env: Readonly<Record<string, string | undefined>> = {},
): { sections: CcmSections; warnings: string[] } {
  const ctx: ReadContext = { document, problems: new Problems(), warnings: [] };
  checkSections(ctx);
  const secret = readSecretRef(ctx, env);
  const loadBalancer = readLoadBalancerSection(
    new SectionReader(ctx, gcfgSection(document, 'LoadBalancer'), '[LoadBalancer]'),
  );
  const loadBalancerClasses = readLoadBalancerClasses(ctx);
  const networking = readNetworkingSection(
    new SectionReader(ctx, gcfgSection(document, 'Networking'), '[Networking]'),
  );
  const route = readRouteSection(ctx);
  const metadata = readMetadataSection(
    new SectionReader(ctx, gcfgSection(document, 'Metadata'), '[Metadata]'),
  );
  checkBlockStorageSection(ctx);
  ctx.problems.throwIfAny(ctx.warnings);
  return {
    sections: {
      ...(secret ? { secret } : {}),
      loadBalancer,
      loadBalancerClasses,
      networking,
      route,
      metadata,
    },
    warnings: ctx.warnings,
  };
}

/**
 * The Secret the file names (`[Global] secret-name` and `secret-namespace`, else SECRET_NAME and
 * SECRET_NAMESPACE), before anything else is validated: the rest may only be complete with it.
 */
export function secretRefOf(
  document: GcfgDocument,
  env: Readonly<Record<string, string | undefined>> = {},
): SecretRef | undefined {
  const ctx: ReadContext = { document, problems: new Problems(), warnings: [] };
  const ref = readSecretRef(ctx, env);
  ctx.problems.throwIfAny();
  return ref;
}

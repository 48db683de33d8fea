/**
 * The CCM's effective cloud config, kept current: the cloud.conf file, and when its `[Global]
 * secret-name` / `secret-namespace` name a Secret, that Secret's `cloud.conf` (or the in-tree
 * provider's `clouds.conf`) laid over it. The in-tree provider read the Secret once at start; here
 * one informer (field selector `metadata.name=<name>` in its namespace) follows it, so rotating the
 * password in the Secret needs no restart:
 *
 *   const source = await CcmConfigSource.open({ path, kube, log });   // file + Secret; ConfigError if invalid
 *   const os = await rotatingClient(source, { registry, log });      // always the current credentials
 *   manager.add(source);                                             // runs the watch, on every replica
 *
 * A changed Secret is validated whole before anything changes. Valid: `current()` swaps, the
 * `onChange` listeners run (the rotating client builds its new OpenStack client there, the
 * controllers re-queue what the change concerns: every section is read again on the next
 * reconcile), then a log line and a Normal Event `CloudConfigReloaded` naming the sections, and the
 * keys only a restart applies (`restartNeeded`). Invalid (syntax, a bad value, the key missing, the
 * Secret deleted): the last valid config stays, with a log line and a Warning Event
 * `InvalidCloudConfig` on the Secret naming the key and the fix. Neither ever carries a value: the
 * Secret holds credentials. The file itself is read once, as before; changing it needs a restart.
 */
import { Buffer } from 'node:buffer';
import { resolve } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import { ConfigError, type ConfigProblem } from '../lib/config.ts';
import { readGcfgFile, type GcfgDocument } from '../lib/gcfg.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { redactText } from '../lib/redact.ts';
import {
  EventRecorder,
  Informer,
  isNotFound,
  KubeApiError,
  kinds,
  type InformerOptions,
  type KubeClient,
  type Runnable,
} from '../kube/index.ts';
import { processContext } from '../openstack/config/context.ts';
import type { LoadContext } from '../openstack/config/types.ts';
import { ccmConfigFromGcfg, secretRefOf } from './config/cloud-conf.ts';
import { secretConf, type SecretConf } from './config/secret-overlay.ts';
import type { CcmConfig, LiveConfig, SecretRef } from './config/types.ts';
import { changedSections, restartNeeded } from './secret/compare.ts';

export {
  rotatingClient,
  RotatingClient,
  type OpenStackApi,
  type RotatingClientOptions,
} from './secret/rotating-client.ts';

export const REASON_RELOADED = 'CloudConfigReloaded';
export const REASON_INVALID = 'InvalidCloudConfig';

export interface CcmConfigSourceOptions {
  /** The cloud.conf file (`--cloud-config`). */
  path: string;
  /** Reads and watches the Secret. Not closed by the source. */
  kube: KubeClient;
  log?: Logger | undefined;
  /** Where the path resolves, the environment (SECRET_NAME, OS_CCM_REGIONAL, …); the process by default. */
  loadContext?: LoadContext | undefined;
  /** Where Events go; by default a recorder of the source's own on `kube`, reporting as `cloud-controller-manager`. */
  events?: EventRecorder | undefined;
  /** Bounds the initial reads. */
  signal?: AbortSignal | undefined;
  /** Informer tuning (tests shorten the back-off). */
  informer?: Pick<InformerOptions<V1Secret>, 'backoff' | 'registry' | 'watchTimeoutSeconds' | 'clock'>;
}

/** Called after a valid new config is in place; awaited before the reload is announced. */
export type ConfigListener = (next: CcmConfig, previous: CcmConfig) => void | Promise<void>;

export class CcmConfigSource implements Runnable, LiveConfig {
  readonly name = 'cloud-config-secret';
  /** Every replica follows the Secret, so a new leader starts with the current credentials. */
  readonly needLeaderElection = false;
  /** The Secret the file names, if any. */
  readonly secret: SecretRef | undefined;
  private config: CcmConfig;
  /** The Secret text (and key) the current config was built from; a Secret update that leaves it alone is nothing to do. */
  private appliedText: string | undefined;
  private rejectedText: string | undefined;
  private readonly document: GcfgDocument;
  private readonly opts: CcmConfigSourceOptions;
  private readonly ctx: LoadContext;
  private readonly log: Logger;
  private readonly listeners = new Set<ConfigListener>();
  private readonly ownEvents: EventRecorder | undefined;
  private readonly events: EventRecorder;
  /** The newest Secret state not yet handled (`null`: deleted); handled one at a time. */
  private pending: { secret: V1Secret | null } | undefined;
  private draining: Promise<void> = Promise.resolve();

  private constructor(
    opts: CcmConfigSourceOptions,
    document: GcfgDocument,
    secret: SecretRef | undefined,
    initial: { config: CcmConfig; text: string | undefined },
  ) {
    this.opts = opts;
    this.ctx = opts.loadContext ?? processContext();
    this.log = (opts.log ?? createLogger({ level: 'silent' })).child({ component: 'cloud-config' });
    this.document = document;
    this.secret = secret;
    this.config = initial.config;
    this.appliedText = initial.text;
    this.ownEvents = opts.events
      ? undefined
      : new EventRecorder({ client: opts.kube, component: 'cloud-controller-manager', log: this.log });
    this.events = opts.events ?? this.ownEvents!;
  }

  /**
   * Reads the file and, if it names one, the Secret; throws a ConfigError (file, key, fix) when
   * the result is invalid or the Secret or its key is missing, as the in-tree provider failed init.
   * The config's warnings include the Secret's; the caller logs them, as for a file alone.
   */
  static async open(opts: CcmConfigSourceOptions): Promise<CcmConfigSource> {
    const base = opts.loadContext ?? processContext();
    const ctx: LoadContext = { ...base, signal: opts.signal ?? base.signal };
    const document = await readGcfgFile(resolve(ctx.cwd, opts.path), ctx.signal);
    const ref = secretRefOf(document, ctx.env);
    if (!ref) {
      const config = await ccmConfigFromGcfg(document, ctx);
      return new CcmConfigSource(opts, document, undefined, { config, text: undefined });
    }
    const secret = await readSecret(opts.kube, ref, ctx.signal);
    const conf = secretConf(ref, decodeData(secret));
    const config = await ccmConfigFromGcfg(document, ctx, { secret: conf });
    const source = new CcmConfigSource(opts, document, ref, {
      config: { ...config, warnings: [...conf.warnings, ...config.warnings] },
      text: textKey(conf),
    });
    source.log.info(
      { secret: refName(ref), source: conf.source },
      'cloud config read from the file and the Secret',
    );
    return source;
  }

  /** The effective config now. */
  current(): CcmConfig {
    return this.config;
  }

  /** Adds a listener for valid changes; returns its remover. */
  onChange(fn: ConfigListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Resolves once every Secret state seen so far has been handled (for tests and shutdown). */
  async settled(): Promise<void> {
    while (this.pending) await this.draining;
    await this.draining;
  }

  /** Watches the Secret until `signal` aborts; without a Secret it only waits. */
  async start(signal: AbortSignal): Promise<void> {
    const ref = this.secret;
    if (!ref) {
      await new Promise<void>((done) => {
        if (signal.aborted) done();
        else signal.addEventListener('abort', () => done(), { once: true });
      });
      return;
    }
    const informer = new Informer<V1Secret>({
      client: this.opts.kube,
      type: kinds.Secret,
      namespace: ref.namespace,
      fieldSelector: `metadata.name=${ref.name}`,
      log: this.log,
      ...this.opts.informer,
    });
    informer.addHandler({
      onAdd: (s) => this.enqueue(s),
      onUpdate: (old, s) => {
        if (old !== s) this.enqueue(s);
      },
      onDelete: () => this.enqueue(null),
    });
    try {
      await informer.start(signal);
    } finally {
      await this.settled();
      if (this.ownEvents) {
        await this.ownEvents.flush();
        this.ownEvents.close();
      }
    }
  }

  private enqueue(secret: V1Secret | null): void {
    const idle = this.pending === undefined;
    this.pending = { secret };
    if (idle) this.draining = this.draining.then(() => this.drain());
  }

  private async drain(): Promise<void> {
    while (this.pending) {
      const { secret } = this.pending;
      this.pending = undefined;
      try {
        await this.apply(secret);
      } catch (err) {
        // A failure here is ours (a listener, a file read), not the Secret's: keep the config, say so.
        this.log.error(
          { err, secret: refName(this.secret!) },
          'applying the cloud config Secret failed; the last config stays',
        );
      }
    }
  }

  private async apply(secret: V1Secret | null): Promise<void> {
    const ref = this.secret!;
    if (!secret) {
      this.reject(
        secretObject(ref),
        '',
        `the Secret ${refName(ref)} was deleted`,
        `recreate it with the cloud.conf under the key "cloud.conf" (kubectl create secret generic ${ref.name} -n ${ref.namespace} --from-file=cloud.conf)`,
      );
      return;
    }
    let conf: SecretConf & { warnings: string[] };
    try {
      conf = secretConf(ref, decodeData(secret));
    } catch (err) {
      if (!ConfigError.is(err)) throw err;
      this.rejectProblems(secret, '', err.problems);
      return;
    }
    const text = textKey(conf);
    if (text === this.appliedText) return;
    let next: CcmConfig;
    try {
      next = await ccmConfigFromGcfg(this.document, this.ctx, { secret: conf });
    } catch (err) {
      if (!ConfigError.is(err)) throw err;
      this.rejectProblems(secret, text, err.problems);
      return;
    }
    next = { ...next, warnings: [...conf.warnings, ...next.warnings] };
    const previous = this.config;
    const changed = changedSections(previous, next);
    this.appliedText = text;
    this.rejectedText = undefined;
    this.config = next;
    for (const w of next.warnings) this.log.warn(w);
    if (changed.length === 0) {
      this.log.info(
        { secret: refName(ref), source: conf.source },
        'cloud config Secret changed; the effective config is the same',
      );
      return;
    }
    for (const fn of this.listeners) await fn(next, previous);
    const what = changed.join(', ');
    const restart = restartNeeded(previous, next);
    const tail =
      restart.length > 0
        ? `; ${restart.join(' and ')} only take${restart.length > 1 ? '' : 's'} effect after a restart`
        : '';
    const message = `cloud config reloaded from ${conf.source} (changed: ${what}); the controllers use it from their next reconcile${tail}`;
    this.log.info({ secret: refName(ref), source: conf.source, changed, restartNeeded: restart }, message);
    this.events.event(secret, 'Normal', REASON_RELOADED, message.charAt(0).toUpperCase() + message.slice(1));
  }

  private rejectProblems(secret: V1Secret, text: string, problems: readonly ConfigProblem[]): void {
    const first = problems[0];
    const rest = problems.length > 1 ? ` (and ${problems.length - 1} more problems: see the log)` : '';
    const where = first?.key ? `${first.file}: key "${first.key}"` : (first?.file ?? refName(this.secret!));
    const problem = `${where}: ${first?.problem ?? 'invalid'}${rest}`;
    this.reject(secret, text, problem, first?.fix ?? 'correct the Secret', problems);
  }

  /** Keeps the current config; logs and records a Warning once per distinct bad text. */
  private reject(
    secret: V1Secret,
    text: string,
    problem: string,
    fix: string,
    problems: readonly ConfigProblem[] = [],
  ): void {
    if (text !== '' && text === this.rejectedText) return;
    this.rejectedText = text === '' ? undefined : text;
    const ref = this.secret!;
    // Values never leave: the problems are printed without them, and the text is scrubbed anyway.
    const message = redactText(`${problem}; the last valid cloud config stays in use. Fix: ${fix}`);
    this.log.warn(
      {
        secret: refName(ref),
        problems: problems.map((p) => redactText(`${p.file}: key "${p.key}": ${p.problem}. Fix: ${p.fix}`)),
      },
      message,
    );
    this.events.event(secret, 'Warning', REASON_INVALID, message);
  }
}

async function readSecret(
  kube: KubeClient,
  ref: SecretRef,
  signal: AbortSignal | undefined,
): Promise<V1Secret> {
  try {
    return await kube.get(kinds.Secret, { namespace: ref.namespace, name: ref.name }, { signal });
  } catch (err) {
    const missing = isNotFound(err);
    if (!missing && !(err instanceof KubeApiError && err.code === 403)) throw err;
    throw new ConfigError([
      {
        file: `Secret ${refName(ref)}`,
        key: '',
        value: undefined,
        problem: missing
          ? 'the Secret named by [Global] secret-name / secret-namespace does not exist'
          : 'the CCM may not read the Secret named by [Global] secret-name / secret-namespace',
        fix: missing
          ? `create it with the cloud.conf under the key "cloud.conf" (kubectl create secret generic ${ref.name} -n ${ref.namespace} --from-file=cloud.conf), or fix the names`
          : "grant the CCM's ServiceAccount get, list and watch on secrets (deploy/ccm/base/rbac.yaml)",
      },
    ]);
  }
}

function decodeData(secret: V1Secret): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
  return out;
}

function textKey(conf: SecretConf): string {
  return `${conf.source}\u0000${conf.text}`;
}

function refName(ref: SecretRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** An Event about a Secret that is gone names it by kind, namespace and name. */
function secretObject(ref: SecretRef): V1Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: ref.namespace, name: ref.name } };
}

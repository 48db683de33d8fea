/**
 * The server engine: `ensure(input)` and `remove(input)`, level-based and non-blocking — the shared
 * server path of CAPO's OpenStackServer (and through it OpenStackMachine and the bastion), and
 * later MAPO.
 *
 * Each call reads the world afresh, makes the writes of one step (a port with its tags and trunk,
 * the volumes, the server; bounded by the spec's size) and returns:
 *   Ready   — ensure: the server is ACTIVE (with its addresses); remove: nothing is left;
 *   Pending — call again after `retryAfterMs` (volumes creating, BUILD, deleting);
 *   Failed  — with `terminal`: whether calling again can help (ERROR and 400s cannot).
 * It never sleeps or polls. Whatever it creates is handed to the caller's `record` before it goes
 * on, and found again by deterministic name when a process died before recording it, so a crash
 * between any two writes leaves no duplicate and no leak:
 *
 *   const engine = new ServerEngine(client);
 *   const r = await engine.ensure({ spec, ...status }, { signal, record: (s) => patchStatus(s) });
 *   if (r.phase === 'Pending') queue.addAfter(key, r.retryAfterMs);
 *
 * Costs: create = one write per port (+1 tags, +2 trunk and its tags), one per volume, one server;
 * steady state = one GET of the server.
 */
import type { ServerApi } from './api.ts';
import { backoffPolicy, type BackoffPolicy } from './backoff.ts';
import type { EngineContext } from './context.ts';
import { ensureServer } from './ensure.ts';
import type { LookupCache } from './lookups.ts';
import { removeServer } from './remove.ts';
import { resolveServerSpec } from './resolve.ts';
import type {
  CallOptions,
  EnsureInput,
  EnsureResult,
  RemoveInput,
  RemoveResult,
  ResolvedServerSpec,
  ServerSpec,
} from './types.ts';

export interface EngineOptions {
  backoff?: Partial<BackoffPolicy> | undefined;
  /** The clock waits are measured with (tests). */
  now?: (() => number) | undefined;
  /**
   * Resolve lookups shared with the other servers of the same identity (one LookupCache per
   * identity's client: never across credentials, which may see different images and networks).
   */
  lookups?: LookupCache | undefined;
}

export class ServerEngine {
  private readonly ctx: EngineContext;

  constructor(api: ServerApi, options: EngineOptions = {}) {
    this.ctx = {
      api,
      policy: backoffPolicy(options.backoff),
      now: options.now ?? Date.now,
      lookups: options.lookups,
    };
  }

  get policy(): BackoffPolicy {
    return this.ctx.policy;
  }

  /** One step towards an ACTIVE server for `input.spec`, from the recorded state in `input`. */
  ensure(input: EnsureInput, options: CallOptions = {}): Promise<EnsureResult> {
    return ensureServer(this.ctx, input, options);
  }

  /** One step towards nothing left of the server, from the recorded state alone. */
  remove(input: RemoveInput, options: CallOptions = {}): Promise<RemoveResult> {
    return removeServer(this.ctx, input, options);
  }

  /** The lookups ensure starts with; throws DependencyError. */
  resolve(spec: ServerSpec, options: { signal?: AbortSignal | undefined } = {}): Promise<ResolvedServerSpec> {
    return resolveServerSpec(this.ctx.api, spec, options.signal, this.ctx.lookups);
  }
}

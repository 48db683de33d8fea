import { SimError } from './errors.ts';
import { uuid } from './ids.ts';
import type { ServiceName } from './types.ts';

/**
 * A request-level fault: matching requests are answered with `status` instead of being served.
 * Windows (`durationMs`), counts (`times`) and probabilities (`rate`) combine: all must allow it.
 */
export interface RequestFault {
  id: string;
  kind: 'request';
  service?: ServiceName | undefined;
  /** `POST /v2.0/ports` (method and route template) or just the method. */
  operation?: string | undefined;
  /** Regular expression tested against the path below the service prefix. */
  path?: string | undefined;
  status: number;
  message?: string | undefined;
  retryAfterSeconds?: number | undefined;
  rate?: number | undefined;
  times?: number | undefined;
  untilMs?: number | undefined;
}

/**
 * A state fault, consumed by a service at the moment it applies:
 * - `error-on-create`: the next create of `resource` ends in ERROR (server, loadbalancer, volume);
 * - `stuck`: `target` (or the next created `resource`) stays in its PENDING_* / BUILD state; an
 *   Octavia child named by `target` (a listener, pool, member or health monitor) keeps its PENDING_*
 *   while its load balancer goes back to ACTIVE, so every later write below it is a 409 (`Pool <id> is
 *   immutable and cannot be updated.`), as Octavia Zed left pools after a batch member update;
 * - `ip-conflict`: the next port creates fail with IpAddressAlreadyAllocated, as two racing bulk creates do.
 */
export interface StateFault {
  id: string;
  kind: 'error-on-create' | 'stuck' | 'ip-conflict';
  service: ServiceName;
  resource: string;
  target?: string | undefined;
  times?: number | undefined;
}

export type Fault = RequestFault | StateFault;

export type FaultSpec =
  (Omit<RequestFault, 'id' | 'untilMs'> & { durationMs?: number }) | Omit<StateFault, 'id'>;

export class Faults {
  private readonly faults = new Map<string, Fault>();
  /** Path patterns compiled once, when the fault is added, not on every request. */
  private readonly paths = new Map<string, RegExp>();
  private random: () => number;

  constructor(seed?: number) {
    this.random = seed === undefined ? Math.random : mulberry32(seed);
  }

  add(spec: FaultSpec, now = Date.now()): Fault {
    const id = uuid();
    let fault: Fault;
    if (spec.kind === 'request') {
      const { durationMs, ...rest } = spec;
      fault = { ...rest, id, ...(durationMs !== undefined ? { untilMs: now + durationMs } : {}) };
      // An invalid pattern is refused here (SyntaxError) rather than failing every later request.
      if (spec.path !== undefined) this.paths.set(id, new RegExp(spec.path));
    } else {
      fault = { ...spec, id };
    }
    this.faults.set(id, fault);
    return fault;
  }

  list(): Fault[] {
    this.prune(Date.now());
    return [...this.faults.values()];
  }

  remove(id: string): boolean {
    this.paths.delete(id);
    return this.faults.delete(id);
  }

  clear(): void {
    this.faults.clear();
    this.paths.clear();
  }

  /** The error to answer instead of serving the request, if a request fault matches. */
  checkRequest(
    service: ServiceName,
    method: string,
    template: string,
    path: string,
    now = Date.now(),
  ): SimError | undefined {
    this.prune(now);
    for (const f of this.faults.values()) {
      if (f.kind !== 'request') continue;
      if (f.service && f.service !== service) continue;
      if (f.operation && f.operation !== method && f.operation !== `${method} ${template}`) continue;
      const pattern = this.paths.get(f.id);
      if (pattern && !pattern.test(path)) continue;
      if (f.rate !== undefined && this.random() >= f.rate) continue;
      this.consume(f);
      const headers: Record<string, string> = {};
      if (f.retryAfterSeconds !== undefined) headers['Retry-After'] = String(f.retryAfterSeconds);
      return new SimError(f.status, f.message ?? defaultMessage(f.status), {
        headers,
        type: 'InjectedFault',
      });
    }
    return undefined;
  }

  /** True (and one use consumed) when a state fault of this kind applies to the resource. */
  take(kind: StateFault['kind'], service: ServiceName, resource: string, target?: string): boolean {
    for (const f of this.faults.values()) {
      if (f.kind !== kind || f.service !== service || f.resource !== resource) continue;
      if (f.target !== undefined && f.target !== target) continue;
      this.consume(f);
      return true;
    }
    return false;
  }

  /** A `stuck` fault pinned to an id stays until removed; `take` would consume it. */
  isStuck(service: ServiceName, resource: string, target: string): boolean {
    for (const f of this.faults.values()) {
      if (f.kind === 'stuck' && f.service === service && f.resource === resource && f.target === target)
        return true;
    }
    return false;
  }

  private consume(f: Fault) {
    if (f.times === undefined) return;
    f.times -= 1;
    if (f.times <= 0) this.remove(f.id);
  }

  private prune(now: number) {
    for (const f of this.faults.values()) {
      if (f.kind === 'request' && f.untilMs !== undefined && f.untilMs <= now) this.remove(f.id);
    }
  }
}

function defaultMessage(status: number): string {
  if (status === 429) return 'Rate limit exceeded (injected by the emulator).';
  if (status === 503) return 'Service Unavailable (injected by the emulator).';
  return `Injected fault ${status}.`;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

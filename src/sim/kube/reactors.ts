/**
 * Fault injection in the shape of client-go's fake reactors: `prepend(verb, resource, fn)` puts
 * a function in front of the chain; the first one that handles an action answers it with an
 * object or an error, and the store is not touched. Reactors see every request the HTTP server
 * serves, so a test can make `update leases` fail twice and watch the controller cope.
 */
import type { StatusError } from './errors.ts';
import type { Obj } from './json.ts';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface Action {
  verb: Verb;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /**
   * Reads: the form the answer takes, from the client's Accept (`partial` for
   * PartialObjectMetadata, `table`, `json`, `yaml`), so a test can see what a client asked for.
   */
  output?: 'json' | 'yaml' | 'table' | 'partial' | 'discovery';
  /** The request body (create, update; patch as text). */
  object?: Obj;
  patch?: { type: string; body: string };
}

export type ReactorResult = { handled: false } | { handled: true; object?: Obj; error?: StatusError };

export type Reactor = (action: Action) => ReactorResult;

interface Entry {
  verb: string;
  resource: string;
  fn: Reactor;
}

export class Reactors {
  private chain: Entry[] = [];

  /** Adds a reactor in front; `*` matches any verb or resource. Returns a remover. */
  prepend(verb: Verb | '*', resource: string, fn: Reactor): () => void {
    const e: Entry = { verb, resource, fn };
    this.chain.unshift(e);
    return () => {
      this.chain = this.chain.filter((x) => x !== e);
    };
  }

  clear(): void {
    this.chain = [];
  }

  /** The first handling reactor's result, or undefined to let the store answer. */
  run(action: Action): ReactorResult | undefined {
    const resource = action.subresource ? `${action.resource}/${action.subresource}` : action.resource;
    for (const e of [...this.chain]) {
      if (e.verb !== '*' && e.verb !== action.verb) continue;
      if (e.resource !== '*' && e.resource !== resource && e.resource !== action.resource) continue;
      const r = e.fn(action);
      if (r.handled) return r;
    }
    return undefined;
  }
}

/**
 * GET on a top-level Octavia collection and on one of its objects: project-scoped lists with
 * Octavia's pagination and filters, and owner-or-admin reads of one object, both with `fields=`.
 */
import type { SimRequest, SimResponse } from '../core/types.ts';
import { compareCreated, type Collection } from './collection.ts';
import { authorize, listScope } from './context.ts';
import { listResponse } from './listing.ts';
import type { Provisioned } from './model.ts';

export interface ReadSpec<T extends Provisioned> {
  /** Wire names of the list (`listeners`) and of one object's body key (`listener`). */
  collection: string;
  item: string;
  records: Collection<T>;
  /** The path parameter naming one object. */
  param: string;
  /** Looks one object up; a missing one is Octavia's 404. */
  find: (id: string) => T;
  view: (record: T) => Record<string, unknown>;
  /** Attributes usable as list filters and sort keys. */
  attributes: Readonly<Record<string, (record: T) => unknown>>;
  /**
   * The records of one load balancer, for a list filtered by `loadbalancer_id` (every controller's
   * read of its load balancer's children): found through the load balancer instead of a scan of the
   * cloud's. The filter still applies to them.
   */
  ofLoadBalancer?: (lbId: string) => readonly T[];
}

export function readHandlers<T extends Provisioned>(spec: ReadSpec<T>) {
  return {
    list: (req: SimRequest): SimResponse => {
      const visible = listScope(req);
      const lbIds = req.query.getAll('loadbalancer_id');
      const items =
        spec.ofLoadBalancer && lbIds.length === 1
          ? [...spec.ofLoadBalancer(lbIds[0]!)].sort(compareCreated)
          : spec.records.ordered();
      return listResponse(req, {
        collection: spec.collection,
        items,
        visible,
        lookup: (id) => spec.records.get(id),
        view: spec.view,
        attributes: spec.attributes,
        tags: (r) => r.tags,
      });
    },

    get: (req: SimRequest): SimResponse => {
      const record = spec.find(req.params[spec.param]!);
      authorize(req, record.project_id);
      return { status: 200, body: { [spec.item]: selectOne(spec.view(record), req) } };
    },
  };
}

/** `fields=` on a single GET keeps only the asked attributes, like on lists. */
export function selectOne(view: Record<string, unknown>, req: SimRequest): Record<string, unknown> {
  const fields = req.query
    .getAll('fields')
    .flatMap((f) => f.split(','))
    .filter(Boolean);
  if (fields.length === 0) return view;
  return Object.fromEntries(Object.entries(view).filter(([k]) => fields.includes(k)));
}

/**
 * Counting reconciles without timing: `settled` waits until a controller has reacted to every
 * event the given objects caused, so a count taken after it is final for what happened before.
 */
import type { Manager } from '../manager/manager.ts';
import type { ObjectKey, ResourceType } from '../resource.ts';

/** Reconciles of controller `name` so far (controller_runtime_reconcile_total, all results). */
export async function reconcileCount(manager: Manager, name: string): Promise<number> {
  return sample(manager, 'controller_runtime_reconcile_total', 'controller', name, true);
}

/**
 * Resolves once the manager's cache holds the API server's current version of every object in
 * `objects` (so their events have reached the controller's handlers) and controller `name` has
 * nothing queued and nothing running (so what those events queued has been reconciled). A
 * requeue still waiting out its delay is not seen: use it where the controller has none pending.
 */
export async function settled(
  manager: Manager,
  name: string,
  objects: readonly (readonly [ResourceType, ObjectKey])[],
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const intervalMs = opts.intervalMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last = await unsettled(manager, name, objects);
    if (!last) {
      // Twice, a poll apart: a handler's add and the worker's pick are microtasks apart.
      await new Promise((r) => setTimeout(r, intervalMs));
      last = await unsettled(manager, name, objects);
      if (!last) return;
    }
    if (Date.now() > deadline)
      throw new Error(`controller ${name} not settled after ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

async function unsettled(
  manager: Manager,
  name: string,
  objects: readonly (readonly [ResourceType, ObjectKey])[],
): Promise<string> {
  for (const [type, key] of objects) {
    const live = (await manager.api.get(type, key)).metadata?.resourceVersion;
    const cached = (await manager.client.get(type, key))?.metadata?.resourceVersion;
    if (live !== cached) return `${type.kind} ${key.name}: cache at ${cached}, server at ${live}`;
  }
  const depth = await sample(manager, 'workqueue_depth', 'name', name, false);
  const active = await sample(manager, 'controller_runtime_active_workers', 'controller', name, false);
  return depth > 0 || active > 0 ? `${depth} queued, ${active} reconciling` : '';
}

async function sample(
  manager: Manager,
  metric: string,
  label: string,
  value: string,
  sum: boolean,
): Promise<number> {
  const m = (await manager.registry.getMetricsAsJSON()).find((x) => x.name === metric);
  const values = (m?.values ?? []).filter((v) => String(v.labels[label]) === value);
  return sum ? values.reduce((n, v) => n + v.value, 0) : (values[0]?.value ?? 0);
}

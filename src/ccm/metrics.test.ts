import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRegistry } from '../lib/metrics.ts';
import { observeReconcile, reconcileMetrics, ReconcileOperation } from './metrics.ts';

describe('reconcile metrics', () => {
  it("exposes OCCM's names, label and buckets, counting errors", async () => {
    const registry = createRegistry({ defaultMetrics: false });
    const m = reconcileMetrics(registry);
    assert.equal(reconcileMetrics(registry).total, m.total, 'a second manager reuses them');
    await observeReconcile(m, ReconcileOperation.Ensure, () => Promise.resolve(1));
    await assert.rejects(
      observeReconcile(m, ReconcileOperation.Delete, () => Promise.reject(new Error('boom'))),
    );
    const text = await registry.metrics();
    assert.match(text, /cloudprovider_openstack_reconcile_total\{operation="loadbalancer_ensure"\} 1/);
    assert.match(text, /cloudprovider_openstack_reconcile_errors_total\{operation="loadbalancer_delete"\} 1/);
    assert.match(
      text,
      /cloudprovider_openstack_reconcile_duration_seconds_bucket\{le="1000",operation="loadbalancer_ensure"\} 1/,
    );
  });
});

/**
 * kubectl against the Kubernetes emulator: the commands our users and docs rely on, run as a
 * user runs them (the real binary, a kubeconfig, HTTPS with a bearer token).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { eventually } from '../../src/sim/kube/testing/harness.ts';
import { kubectlMissing, startKubectlEnv, type KubectlEnv } from './kubectl.ts';

const MANIFESTS = `
apiVersion: v1
kind: Namespace
metadata:
  name: demo
  labels: {team: blue}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
  labels: {app: web, tier: front}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
---
apiVersion: v1
kind: Node
metadata:
  name: worker-0
  labels: {node-role.kubernetes.io/worker: ""}
spec:
  providerID: openstack:///5a1e1b2c-0000-4000-8000-000000000000
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
              color: {type: string, default: red}
          status:
            type: object
            properties:
              phase: {type: string}
`;

const WIDGET = `
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
  namespace: demo
  labels: {tier: front}
spec:
  size: 3
`;

describe('kubectl against the emulator', { skip: kubectlMissing() }, () => {
  let env: KubectlEnv;
  const start: KubectlEnv['start'] = (args, input) => env.start(args, input);
  const kubectl = (...args: string[]) => env.kubectl(...args);
  const kubectlIn = (input: string, ...args: string[]) => env.kubectlIn(input, ...args);

  before(async () => {
    env = await startKubectlEnv();
  });
  after(async () => env.close());

  it('applies a Namespace, a LoadBalancer Service, a Node, a CRD and an instance (client-side)', async () => {
    const out = await kubectlIn(MANIFESTS, 'apply', '-f', '-');
    assert.match(out, /namespace\/demo created/);
    assert.match(out, /service\/web created/);
    assert.match(out, /node\/worker-0 created/);
    assert.match(out, /customresourcedefinition.apiextensions.k8s.io\/widgets.example.com created/);
    assert.match(await kubectlIn(WIDGET, 'apply', '-f', '-'), /widget.example.com\/w1 created/);
    const again = await kubectlIn(MANIFESTS, 'apply', '-f', '-');
    assert.match(again, /service\/web unchanged/);
    const svc = JSON.parse(await kubectl('get', 'service', 'web', '-n', 'demo', '-o', 'json'));
    assert.equal(svc.spec.type, 'LoadBalancer');
    assert.ok(svc.spec.ports[0].nodePort >= 30000);
    assert.ok(svc.spec.healthCheckNodePort >= 30000);
    assert.ok(svc.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
  });

  it('applies the same files server-side, and re-applies a changed instance', async () => {
    const out = await kubectlIn(MANIFESTS, 'apply', '--server-side', '-f', '-');
    assert.match(out, /service\/web serverside-applied/);
    assert.match(
      out,
      /customresourcedefinition.apiextensions.k8s.io\/widgets.example.com serverside-applied/,
    );
    const changed = WIDGET.replace('size: 3', 'size: 4');
    assert.match(
      await kubectlIn(changed, 'apply', '--server-side', '-f', '-'),
      /widget.example.com\/w1 serverside-applied/,
    );
    const w = parse(
      await kubectl('get', 'widget', 'w1', '-n', 'demo', '-o', 'yaml', '--show-managed-fields'),
    );
    assert.equal(w.spec.size, 4);
    assert.equal(w.spec.color, 'red', 'schema default');
    assert.ok(w.metadata.managedFields.some((m: any) => m.manager === 'kubectl' && m.operation === 'Apply'));
  });

  it('gets objects as tables, YAML and JSON', async () => {
    const table = await kubectl('get', 'widgets', '-n', 'demo');
    assert.match(table, /^NAME\s+SIZE\s*\nw1\s+4\s*$/);
    const nodes = await kubectl('get', 'nodes');
    assert.match(nodes, /NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION/);
    assert.match(nodes, /worker-0\s+Unknown\s+worker/);
    const ns = parse(await kubectl('get', 'namespace', 'demo', '-o', 'yaml'));
    assert.equal(ns.status.phase, 'Active');
    assert.equal(ns.metadata.labels.team, 'blue');
    const crd = JSON.parse(await kubectl('get', 'crd', 'widgets.example.com', '-o', 'json'));
    assert.ok(crd.status.conditions.some((c: any) => c.type === 'Established' && c.status === 'True'));
  });

  it('selects by label', async () => {
    assert.match(
      await kubectl('get', 'svc', '-n', 'demo', '-l', 'app=web', '-o', 'name'),
      /^service\/web\n$/,
    );
    assert.equal(await kubectl('get', 'svc', '-n', 'demo', '-l', 'app!=web', '-o', 'name'), '');
    assert.match(
      await kubectl('get', 'svc,widgets', '-n', 'demo', '-l', 'tier in (front)', '-o', 'name'),
      /service\/web\nwidget.example.com\/w1/,
    );
    assert.match(
      await kubectl('get', 'nodes', '-l', 'node-role.kubernetes.io/worker', '-o', 'name'),
      /node\/worker-0/,
    );
    assert.match(await kubectl('get', 'ns', '-l', '!team', '-o', 'name'), /namespace\/default/);
  });

  it('patches with --type merge, json and strategic, including --subresource=status', async () => {
    await kubectl('patch', 'widget', 'w1', '-n', 'demo', '--type', 'merge', '-p', '{"spec":{"size":5}}');
    await kubectl(
      'patch',
      'widget',
      'w1',
      '-n',
      'demo',
      '--type',
      'json',
      '-p',
      '[{"op":"replace","path":"/spec/color","value":"blue"}]',
    );
    await kubectl(
      'patch',
      'widget',
      'w1',
      '-n',
      'demo',
      '--subresource=status',
      '--type',
      'merge',
      '-p',
      '{"status":{"phase":"Ready"}}',
    );
    const w = JSON.parse(await kubectl('get', 'widget', 'w1', '-n', 'demo', '-o', 'json'));
    assert.deepEqual([w.spec.size, w.spec.color, w.status.phase], [5, 'blue', 'Ready']);
    await kubectl(
      'patch',
      'service',
      'web',
      '-n',
      'demo',
      '--type',
      'strategic',
      '-p',
      '{"spec":{"ports":[{"name":"https","port":443,"targetPort":8443}]}}',
    );
    const svc = JSON.parse(await kubectl('get', 'service', 'web', '-n', 'demo', '-o', 'json'));
    assert.deepEqual(
      svc.spec.ports.map((p: any) => p.port),
      [80, 443],
    );
    await kubectl(
      'patch',
      'node',
      'worker-0',
      '--subresource=status',
      '--type',
      'strategic',
      '-p',
      '{"status":{"conditions":[{"type":"Ready","status":"True"}],"addresses":[{"type":"InternalIP","address":"10.0.0.5"}]}}',
    );
    assert.match(
      await kubectl('get', 'nodes', '-o', 'wide'),
      /worker-0\s+Ready\s+worker\s+\S+\s+\S*\s+10\.0\.0\.5/,
    );
    const smp = await start([
      'patch',
      'widget',
      'w1',
      '-n',
      'demo',
      '--type',
      'strategic',
      '-p',
      '{"spec":{"size":6}}',
    ]).done;
    assert.notEqual(smp.code, 0, 'custom resources take no strategic merge patch');
    assert.match(smp.stderr, /application\/strategic-merge-patch\+json is not supported/);
    const invalid = await start([
      'patch',
      'widget',
      'w1',
      '-n',
      'demo',
      '--type',
      'merge',
      '-p',
      '{"spec":{"size":0}}',
    ]).done;
    assert.notEqual(invalid.code, 0);
    assert.match(
      invalid.stderr,
      /The Widget "w1" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1/,
    );
  });

  it('get -w sees updates as they happen', async () => {
    const watch = start([
      'get',
      'widget',
      'w1',
      '-n',
      'demo',
      '-w',
      '-o',
      'custom-columns=NAME:.metadata.name,SIZE:.spec.size',
      '--no-headers',
    ]);
    await eventually(() => /w1\s+5/.test(watch.output()), { what: 'the initial row' });
    await kubectl('patch', 'widget', 'w1', '-n', 'demo', '--type', 'merge', '-p', '{"spec":{"size":7}}');
    await eventually(() => /w1\s+7/.test(watch.output()), { what: 'the update' });
    const table = start(['get', 'services', '-n', 'demo', '-w']);
    await eventually(() => /web\s+LoadBalancer/.test(table.output()), { what: 'the service row' });
    await kubectl('label', 'service', 'web', '-n', 'demo', 'watched=yes');
    await eventually(
      () =>
        table
          .output()
          .split('\n')
          .filter((l) => /^web\s/.test(l)).length >= 2,
      { what: 'a second service row' },
    );
    watch.child.kill();
    table.child.kill();
  });

  it('delete of an object with a finalizer waits until the finalizer is removed', async () => {
    await kubectl(
      'patch',
      'widget',
      'w1',
      '-n',
      'demo',
      '--type',
      'merge',
      '-p',
      '{"metadata":{"finalizers":["example.com/hold"]}}',
    );
    const del = start(['delete', 'widget', 'w1', '-n', 'demo', '--timeout=20s']);
    let exited = false;
    void del.done.then(() => (exited = true));
    await eventually(async () => {
      const w = JSON.parse(await kubectl('get', 'widget', 'w1', '-n', 'demo', '-o', 'json'));
      return w.metadata.deletionTimestamp;
    });
    await sleep(500);
    assert.equal(exited, false, 'kubectl delete still waits');
    await kubectl(
      'patch',
      'widget',
      'w1',
      '-n',
      'demo',
      '--type',
      'json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    );
    const r = await del.done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /widget.example.com "w1" deleted/);
    const gone = await start(['get', 'widget', 'w1', '-n', 'demo']).done;
    assert.match(gone.stderr, /NotFound/);
  });

  it('deletes the manifests again, namespace first, and waits until everything is gone', async () => {
    const r = await start(['delete', '-f', '-', '--timeout=20s'], MANIFESTS).done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /namespace "demo" deleted/);
    assert.match(r.stdout, /service "web" deleted/);
    assert.match(r.stdout, /customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted/);
    const ns = await start(['get', 'namespace', 'demo']).done;
    assert.match(ns.stderr, /NotFound/);
    const crd = await start(['get', 'widgets', '-A']).done;
    assert.notEqual(crd.code, 0, 'the CRD no longer serves widgets');
  });
});

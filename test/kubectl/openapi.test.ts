/**
 * Export and recreate: `kubectl get … -o yaml` writes a `kind: List`, and `kubectl create -f` of
 * a List validates it client-side against `/openapi/v2` (protobuf), built-in kinds and custom
 * resources alike.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectlMissing, startKubectlEnv, type KubectlEnv } from './kubectl.ts';

const OBJECTS = `
apiVersion: v1
kind: Namespace
metadata: {name: exported, labels: {team: green}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: exported}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`;

const GIZMO = `
apiVersion: example.com/v1
kind: Gizmo
metadata: {name: g1, namespace: exported}
spec: {size: 3}
`;

describe('kubectl create -f of a List (OpenAPI v2 validation)', { skip: kubectlMissing() }, () => {
  let env: KubectlEnv;
  before(async () => {
    env = await startKubectlEnv();
  });
  after(async () => env.close());

  const listFile = async (name: string, text: string) => {
    const path = join(env.k.dir, name);
    await writeFile(path, text);
    return path;
  };

  it('recreates a namespace and a service from `kubectl get -o yaml`', async () => {
    await env.kubectlIn(OBJECTS, 'apply', '-f', '-');
    await env.kubectl('wait', '--for=condition=Established', 'crd/gizmos.example.com', '--timeout=20s');
    const exported = await env.kubectl(
      'get',
      'namespace/exported',
      'service/web',
      '-n',
      'exported',
      '-o',
      'yaml',
    );
    assert.match(exported, /^kind: List$/m);
    const path = await listFile('list.yaml', exported);
    await env.kubectl('delete', 'namespace', 'exported', '--timeout=30s');
    const out = await env.kubectl('create', '-f', path);
    assert.match(out, /namespace\/exported created/);
    assert.match(out, /service\/web created/);
    const svc = JSON.parse(await env.kubectl('get', 'service', 'web', '-n', 'exported', '-o', 'json'));
    assert.equal(svc.spec.ports[0].targetPort, 'http');
    assert.equal(svc.spec.type, 'NodePort');
  });

  it('recreates a custom resource from a List, and validates it against the CRD schema', async () => {
    await env.kubectlIn(GIZMO, 'apply', '-f', '-');
    const exported = await env.kubectl('get', 'gizmos', '-n', 'exported', '-o', 'yaml');
    const path = await listFile('gizmos.yaml', exported);
    await env.kubectl('delete', 'gizmo', 'g1', '-n', 'exported');
    assert.match(await env.kubectl('create', '-f', path), /gizmo.example.com\/g1 created/);
    assert.equal(
      await env.kubectl('get', 'gizmo', 'g1', '-n', 'exported', '-o', 'jsonpath={.spec.size}'),
      '3',
    );

    const bad = await listFile(
      'bad.yaml',
      exported.replace('size: 3', 'size: 3\n    colour: red').replace(/name: g1/, 'name: g2'),
    );
    const r = await env.start(['create', '-f', bad]).done;
    assert.notEqual(r.code, 0, 'an unknown field fails validation');
    assert.match(r.stderr, /unknown field "colour"/);
  });
});

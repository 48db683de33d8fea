/**
 * kubectl on a CRD served in two versions and converted by a webhook: discovery lists both,
 * `kubectl apply` (client- and server-side) of either version, `get <plural>.<version>.<group>`,
 * and `get -o yaml` in the preferred version.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  gadgetCRD,
  startConversionWebhook,
  urlClientConfig,
  type TestConversionWebhook,
} from '../../src/sim/kube/testing/conversion-webhook.ts';
import { kubectlMissing, startKubectlEnv, type KubectlEnv } from './kubectl.ts';

const V1 = `apiVersion: example.com/v1
kind: Gadget
metadata: {name: g-one, namespace: default}
spec: {size: 2}
`;

const V2 = (size: number) => `apiVersion: example.com/v2
kind: Gadget
metadata: {name: g-two, namespace: default}
spec:
  dimensions: {size: ${size}, unit: mm}
`;

describe('kubectl on a CRD converted by a webhook', { skip: kubectlMissing() }, () => {
  let env: KubectlEnv;
  let hook: TestConversionWebhook;
  before(async () => {
    hook = await startConversionWebhook();
    env = await startKubectlEnv();
    await env.kubectlIn(JSON.stringify(gadgetCRD(urlClientConfig(hook))), 'apply', '-f', '-');
    await env.kubectl('wait', '--for=condition=Established', 'crd/gadgets.example.com', '--timeout=20s');
  });
  after(async () => {
    await env.close();
    await hook.close();
  });

  it('discovers both versions', async () => {
    const versions = (await env.kubectl('api-versions')).split('\n');
    assert.ok(versions.includes('example.com/v1'), versions.join(' '));
    assert.ok(versions.includes('example.com/v2'), versions.join(' '));
  });

  it('applies either version and reads each object in both', async () => {
    await env.kubectlIn(V1, 'apply', '-f', '-');
    await env.kubectlIn(V2(3), 'apply', '--server-side', '-f', '-');
    const one = JSON.parse(await env.kubectl('get', 'gadgets.v2.example.com', 'g-one', '-o', 'json'));
    assert.equal(one.apiVersion, 'example.com/v2');
    assert.equal(one.spec.dimensions.size, 2);
    const two = JSON.parse(await env.kubectl('get', 'gadgets.v1.example.com', 'g-two', '-o', 'json'));
    assert.equal(two.apiVersion, 'example.com/v1');
    assert.equal(two.spec.size, 3);
    assert.equal(two.metadata.annotations['example.com/v2-unit'], 'mm');
    // A client-side apply of a change: kubectl reads v1's object, patches it in v1.
    await env.kubectlIn(V1.replace('size: 2', 'size: 5'), 'apply', '-f', '-');
    assert.equal(
      await env.kubectl('get', 'gadgets.v2.example.com', 'g-one', '-o', 'jsonpath={.spec.dimensions.size}'),
      '5',
    );
    // The same for v2, whose objects are stored as v1.
    await env.kubectlIn(V2(4), 'apply', '--server-side', '-f', '-');
    assert.equal(
      await env.kubectl('get', 'gadgets.v1.example.com', 'g-two', '-o', 'jsonpath={.spec.size}'),
      '4',
    );
  });

  it('prints the preferred version (v2) with -o yaml', async () => {
    const yaml = await env.kubectl('get', 'gadgets', '-o', 'yaml');
    assert.match(yaml, /^kind: List$/m);
    const versions = [...yaml.matchAll(/^- apiVersion: (\S+)$/gm)].map((m) => m[1]);
    assert.deepEqual(versions, ['example.com/v2', 'example.com/v2']);
    assert.match(yaml, /dimensions:\n\s+size: 5/);
  });
});

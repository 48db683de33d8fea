/**
 * Helpers for the runtime's tests. The emulator itself is started by each test file (only
 * `*.test.ts` files may reach src/sim); these helpers take what it gives: a kubeconfig path.
 */
import { createServer, type AddressInfo } from 'node:net';
import { KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { KubeClient, type KubeClientOptions } from '../client.ts';
import { resourceType, type KubernetesObject } from '../resource.ts';
import type { Condition } from '../conditions.ts';

export function kubeConfigFrom(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/**
 * The kubeconfig at `path` with its user's credential replaced by `token` (a ServiceAccount token
 * the Kubernetes emulator issued): the identity a pod running as that ServiceAccount would have.
 */
export function kubeConfigWithToken(path: string, token: string): KubeConfig {
  const base = kubeConfigFrom(path);
  const user = base.getCurrentUser();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: base.clusters,
    contexts: base.contexts,
    currentContext: base.getCurrentContext(),
    users: base.users.map((u) => (u.name === user?.name ? { name: u.name, token } : u)),
  });
  return kc;
}

/**
 * A loopback port free right now, for a server that cannot be told "any port" (a flag where 0
 * means off, as `--secure-port`).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A client without the default QPS limit, so tests are not slowed by it (unless they test it). */
export function testClient(kubeconfigPath: string, opts: KubeClientOptions = {}): KubeClient {
  return new KubeClient(kubeConfigFrom(kubeconfigPath), { qps: 0, ...opts });
}

/** A promise and its resolver: lets a test hold a reconcile in flight and release it. */
export interface Gate {
  promise: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

export interface Gadget extends KubernetesObject {
  spec?: { size?: number; color?: string };
  status?: { phase?: string; observedGeneration?: number; conditions?: Condition[] };
}

export const GADGET = resourceType<Gadget>({
  apiVersion: 'test.shiftstack.io/v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: true,
});

/**
 * A namespaced CRD with a status subresource whose conditions follow metav1.Condition's schema.
 * Written as wire JSON (`x-kubernetes-*` keys), which our client sends as is; client-node's model
 * types name those keys differently because they expect its own serializer.
 */
export function gadgetCRD(): V1CustomResourceDefinition {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.test.shiftstack.io' },
    spec: {
      group: 'test.shiftstack.io',
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { size: { type: 'integer' }, color: { type: 'string' } },
                },
                status: {
                  type: 'object',
                  properties: {
                    phase: { type: 'string' },
                    observedGeneration: { type: 'integer' },
                    conditions: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['type'],
                      items: {
                        type: 'object',
                        required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
                        properties: {
                          type: { type: 'string', maxLength: 316 },
                          status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
                          observedGeneration: { type: 'integer', minimum: 0 },
                          lastTransitionTime: { type: 'string', format: 'date-time' },
                          reason: { type: 'string', minLength: 1, maxLength: 1024 },
                          message: { type: 'string', maxLength: 32768 },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
  return crd;
}

export function configMap(
  name: string,
  namespace: string,
  data: Record<string, string> = {},
): KubernetesObject & { data: Record<string, string> } {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

/**
 * A pod's identity: it reaches the API server as its ServiceAccount (`spec.serviceAccountName`,
 * `default` when unset), with a token the runner asks the API server for (TokenRequest, as the
 * kubelet does for a pod's projected token), in a kubeconfig in the pod root that `KUBECONFIG`
 * names — the server's URL and CA from the runner's own kubeconfig, the pod's namespace as the
 * context's. Every call of the process is then authenticated and authorized (RBAC) as that
 * ServiceAccount.
 *
 * The token asked for lasts a year: what kube-apiserver gives a kubelet's pod token anyway with
 * its default `--service-account-extend-token-expiration`, and needed here because client-node
 * reads a kubeconfig's token once. No token at all when `automountServiceAccountToken` is false
 * (the pod's, else the ServiceAccount's): the process then finds no kubeconfig, as a pod without
 * its token has no credentials.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig, V1ServiceAccount } from '@kubernetes/client-node';
import { writePrivateFile } from '../../lib/private-file.ts';
import { kinds, type KubeClient } from '../../kube/index.ts';
import { kubeconfigText } from '../../sim/kube/kubeconfig.ts';

const YEAR_SECONDS = 365 * 24 * 3600;

export interface ClusterEndpoint {
  server: string;
  /** PEM of the CA that signed the server's certificate. */
  caPem: string | undefined;
}

/** The server and CA of a kubeconfig's current cluster. */
export function clusterEndpoint(kc: KubeConfig): ClusterEndpoint {
  const c = kc.getCurrentCluster();
  if (!c) throw new Error('the kubeconfig has no current cluster');
  const caPem = c.caData
    ? Buffer.from(c.caData, 'base64').toString('utf8')
    : c.caFile
      ? readFileSync(c.caFile, 'utf8')
      : undefined;
  return { server: c.server, caPem };
}

/** A token for `namespace/name` from the TokenRequest API. */
export async function requestToken(
  api: KubeClient,
  namespace: string,
  name: string,
  opts: { audiences?: string[]; expirationSeconds: number },
  signal?: AbortSignal,
): Promise<string> {
  const answer = await api.createSubresource<{ status?: { token?: string } }>(
    kinds.ServiceAccount,
    { namespace, name },
    'token',
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        expirationSeconds: opts.expirationSeconds,
        ...(opts.audiences ? { audiences: opts.audiences } : {}),
      },
    },
    { signal },
  );
  const token = answer.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} answered without a token`);
  return token;
}

/** Whether the pod gets its ServiceAccount's credentials. */
export function automount(podValue: boolean | undefined, sa: V1ServiceAccount): boolean {
  return podValue ?? sa.automountServiceAccountToken ?? true;
}

/** Writes `<root>/kubeconfig` for the ServiceAccount and returns its path. */
export async function writePodKubeconfig(
  api: KubeClient,
  cluster: ClusterEndpoint,
  root: string,
  namespace: string,
  serviceAccount: string,
  signal?: AbortSignal,
): Promise<string> {
  const token = await requestToken(
    api,
    namespace,
    serviceAccount,
    { expirationSeconds: YEAR_SECONDS },
    signal,
  );
  const path = join(root, 'kubeconfig');
  await writePrivateFile(
    path,
    kubeconfigText({
      server: cluster.server,
      token,
      ...(cluster.caPem ? { caPem: cluster.caPem } : {}),
      name: serviceAccount,
      namespace,
    }),
  );
  return path;
}

/**
 * The kubeconfig a client needs to reach the emulator: one cluster, one user with the bearer
 * token, one context, current. Written with mode 0600 (over any file at the path) because it holds a
 * credential.
 */
import { stringify } from 'yaml';
import { writePrivateFile } from '../../lib/private-file.ts';

export interface KubeconfigInput {
  server: string;
  token: string;
  /** PEM of the CA that signed the server certificate (HTTPS). */
  caPem?: string;
  /** Context, cluster and user name. */
  name?: string;
  namespace?: string;
}

export function kubeconfigText(input: KubeconfigInput): string {
  const name = input.name ?? 'shiftstack-sim';
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name,
        cluster: {
          server: input.server,
          ...(input.caPem
            ? { 'certificate-authority-data': Buffer.from(input.caPem).toString('base64') }
            : {}),
        },
      },
    ],
    users: [{ name, user: { token: input.token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: input.namespace ?? 'default' } }],
    'current-context': name,
    preferences: {},
  };
  return `# Written by shiftstack sim kube; valid while it runs at ${input.server}\n${stringify(doc)}`;
}

export async function writeKubeconfig(path: string, text: string): Promise<void> {
  await writePrivateFile(path, text);
}

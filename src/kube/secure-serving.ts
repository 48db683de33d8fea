/**
 * A component's secure port, put together as Kubernetes components do: HTTPS with the given
 * certificate (`--tls-cert-file` / `--tls-private-key-file`, read with `readServingCert`), or a
 * self-signed one made in memory at start (never written to disk); every request authenticated and
 * authorized through the API server (`delegatedAuth`) by a client of its own, so reviews never
 * queue behind the controllers' calls.
 */
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../lib/log.ts';
import { selfSignedCert, type ServingCert } from '../lib/tls-cert.ts';
import { KubeClient } from './client.ts';
import { delegatedAuth, type DelegatedAuthOptions } from './delegated-auth.ts';
import type { ServingOptions } from './manager/manager.ts';

export interface SecureServingOptions extends Pick<
  DelegatedAuthOptions,
  | 'anonymous'
  | 'alwaysAllowPaths'
  | 'tokenCacheTtlMs'
  | 'authorizedCacheTtlMs'
  | 'unauthorizedCacheTtlMs'
  | 'clock'
> {
  port: number;
  /** The listen address; '' or `0.0.0.0` is every IPv4 address. */
  host: string;
  /** The certificate to serve; a self-signed one named `commonName` without. */
  tls?: ServingCert | undefined;
  /** The self-signed certificate's common name (`shiftstack-ccm`). */
  commonName: string;
  /** Who reviews tokens, and who reviews access (the first by default). */
  authentication: KubeConfig;
  authorization?: KubeConfig | undefined;
  /** The reviewing clients' User-Agent. */
  userAgent: string;
  log?: Logger;
}

export interface SecureServing {
  /** For the Manager's `healthProbe` or `metricsServer`. */
  serving: ServingOptions;
  /** Closes the reviewing clients, once the server has stopped. */
  close(): Promise<void>;
}

const ANY_ADDRESS = new Set(['', '0.0.0.0', '::']);

/** Makes the certificate when none is given, and the guard with its reviewing clients. */
export function secureServing(opts: SecureServingOptions): SecureServing {
  const tls =
    opts.tls ??
    selfSignedCert({
      commonName: opts.commonName,
      hosts: [
        'localhost',
        hostname(),
        '127.0.0.1',
        '::1',
        ...(ANY_ADDRESS.has(opts.host) ? [] : [opts.host]),
      ],
    });
  const authentication = new KubeClient(opts.authentication, { userAgent: opts.userAgent });
  const authorization = opts.authorization
    ? new KubeClient(opts.authorization, { userAgent: opts.userAgent })
    : undefined;
  const guard = delegatedAuth({
    authentication,
    ...(authorization ? { authorization } : {}),
    anonymous: opts.anonymous,
    ...(opts.alwaysAllowPaths ? { alwaysAllowPaths: opts.alwaysAllowPaths } : {}),
    ...(opts.tokenCacheTtlMs !== undefined ? { tokenCacheTtlMs: opts.tokenCacheTtlMs } : {}),
    ...(opts.authorizedCacheTtlMs !== undefined ? { authorizedCacheTtlMs: opts.authorizedCacheTtlMs } : {}),
    ...(opts.unauthorizedCacheTtlMs !== undefined
      ? { unauthorizedCacheTtlMs: opts.unauthorizedCacheTtlMs }
      : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.log ? { log: opts.log } : {}),
  });
  return {
    serving: { port: opts.port, host: opts.host, tls, guard },
    async close() {
      await authentication.close();
      await authorization?.close();
    },
  };
}

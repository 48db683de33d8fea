/**
 * A component's secure port, put together as Kubernetes components do: HTTPS with the certificate
 * of `--tls-cert-file` / `--tls-private-key-file`, or a self-signed one made in memory at start (never
 * written to disk); every request authenticated and authorized through the API server
 * (`delegatedAuth`) by a client of its own, so reviews never queue behind the controllers' calls.
 */
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../lib/log.ts';
import { readServingCert, selfSignedCert } from '../lib/tls-cert.ts';
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
  /** Both or neither: a PEM certificate (chain) and its key. */
  certFile?: string | undefined;
  keyFile?: string | undefined;
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

/** Reads or makes the certificate and builds the guard; a bad certificate file throws `ServingCertError`. */
export async function secureServing(opts: SecureServingOptions): Promise<SecureServing> {
  const tls =
    opts.certFile && opts.keyFile
      ? await readServingCert(opts.certFile, opts.keyFile)
      : selfSignedCert({
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

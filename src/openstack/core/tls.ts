/**
 * The HTTP connection pool (an undici Agent) built from the cloud's TLS settings: a custom CA, a
 * client certificate and key, or verification turned off. Verification is on unless a user turns
 * it off (`insecure`/`verify: false`/`tls-insecure`). HTTP/1.1 only.
 */
import { readFile } from 'node:fs/promises';
import { Agent } from 'undici';
import { ConfigError } from '../../lib/config.ts';
import type { CloudConfig, TlsConfig } from '../config/types.ts';

export interface DispatcherOptions {
  /** Idle keep-alive sockets are closed after this long. */
  keepAliveTimeoutMs?: number;
  signal?: AbortSignal;
}

/** Reads the CA, certificate and key files and returns an Agent that uses them. */
export async function createDispatcher(
  config: Pick<CloudConfig, 'tls' | 'source'>,
  options: DispatcherOptions = {},
): Promise<Agent> {
  const { tls } = config;
  // Read together, reported together: every file that cannot be read, in the config's order (not
  // whichever read failed first in time), so one run names all a user has to fix.
  const reads = await Promise.allSettled([
    readPem(config, tls, 'caFile', options.signal),
    readPem(config, tls, 'certFile', options.signal),
    readPem(config, tls, 'keyFile', options.signal),
  ]);
  for (const r of reads) if (r.status === 'rejected' && !ConfigError.is(r.reason)) throw r.reason;
  const problems = reads.flatMap((r) => (r.status === 'rejected' ? (r.reason as ConfigError).problems : []));
  if (problems.length > 0) throw new ConfigError([...problems]);
  const [ca, cert, key] = reads.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
  if ((cert === undefined) !== (key === undefined)) {
    const missing = cert === undefined ? 'certFile' : 'keyFile';
    throw new ConfigError([
      {
        file: sourceFile(config),
        key: keyName(config, missing),
        value: undefined,
        problem: 'a client certificate needs both the certificate and its private key',
        fix: `set ${keyName(config, missing)} too, or remove ${keyName(config, missing === 'certFile' ? 'keyFile' : 'certFile')}`,
      },
    ]);
  }
  return new Agent({
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    // HTTP/1.1 even where a cloud's TLS front offers HTTP/2 (haproxy, Apache with mod_http2):
    // undici 8's HTTP/2 teardown can end the process with an uncaught ClientDestroyedError
    // (docs/kube-runtime.md, where the Kubernetes client met it).
    allowH2: false,
    connect: {
      rejectUnauthorized: !tls.insecure,
      ...(ca !== undefined ? { ca } : {}),
      ...(cert !== undefined ? { cert } : {}),
      ...(key !== undefined ? { key } : {}),
    },
  });
}

type FileKey = 'caFile' | 'certFile' | 'keyFile';

async function readPem(
  config: Pick<CloudConfig, 'source'>,
  tls: TlsConfig,
  which: FileKey,
  signal: AbortSignal | undefined,
): Promise<Buffer | undefined> {
  if (which === 'caFile' && tls.caPem !== undefined) return Buffer.from(tls.caPem);
  const path = tls[which];
  if (path === undefined) return undefined;
  try {
    return await readFile(path, signal ? { signal } : {});
  } catch (err) {
    if (signal?.aborted) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError([
      {
        file: sourceFile(config),
        key: keyName(config, which),
        value: path,
        problem:
          code === 'ENOENT'
            ? `the ${LABEL[which]} file does not exist`
            : `the ${LABEL[which]} file cannot be read (${code ?? String(err)})`,
        fix:
          code === 'ENOENT' ? 'check the path' : 'check the file permissions for the user running shiftstack',
      },
    ]);
  }
}

const LABEL: Record<FileKey, string> = {
  caFile: 'CA certificate',
  certFile: 'client certificate',
  keyFile: 'client key',
};

/** The key as the user wrote it in their source, so the fix points at the right line. */
function keyName(config: Pick<CloudConfig, 'source'>, which: FileKey): string {
  const { source } = config;
  switch (source.kind) {
    case 'cloud.conf':
      return `Global.${{ caFile: 'ca-file', certFile: 'cert-file', keyFile: 'key-file' }[which]}`;
    case 'clouds.yaml':
      return `clouds.${source.cloud ?? '<cloud>'}.${{ caFile: 'cacert', certFile: 'cert', keyFile: 'key' }[which]}`;
    case 'environment':
      return { caFile: 'OS_CACERT', certFile: 'OS_CERT', keyFile: 'OS_KEY' }[which];
    case 'kuryr.conf':
      return `[neutron] ${{ caFile: 'cafile', certFile: 'certfile', keyFile: 'keyfile' }[which]}`;
  }
}

function sourceFile(config: Pick<CloudConfig, 'source'>): string {
  return config.source.files[0] ?? 'environment';
}

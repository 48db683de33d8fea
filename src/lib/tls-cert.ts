/**
 * Serving certificates: a self-signed one made with node:crypto alone (an EC P-256 key and a
 * hand-encoded X.509 v3 certificate), or a PEM pair read from files. The self-signed certificate is
 * its own CA (basicConstraints CA:TRUE), so a client can trust exactly it: the Kubernetes emulator
 * puts it in its kubeconfig as `certificate-authority-data` (kubectl sends a bearer token only over
 * TLS), and the controllers' secure ports serve one from memory when no `--tls-cert-file` is given,
 * as Kubernetes components do.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseIp, type Ip } from './cidr.ts';

export interface ServingCert {
  keyPem: string;
  certPem: string;
}

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), len(content.length), content]);
}

const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const explicit = (n: number, content: Buffer) => tlv(0xa0 + n, content);
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));

/** A non-negative DER INTEGER from big-endian bytes. */
export function integer(b: Buffer): Buffer {
  // DER wants the minimal encoding: a random serial starting with 0x00 must lose it, or OpenSSL
  // refuses the certificate ("illegal padding") once in 256 runs.
  let start = 0;
  while (start < b.length - 1 && b[start] === 0) start++;
  const digits = b.subarray(start);
  // DER integers are signed: a set high bit needs a leading zero to stay positive.
  const body = (digits[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), digits]) : digits;
  return tlv(0x02, body.length > 0 ? body : Buffer.from([0]));
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [(parts[0] ?? 0) * 40 + (parts[1] ?? 0)];
  for (const p of parts.slice(2)) {
    const stack: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) stack.unshift((v & 0x7f) | 0x80);
    out.push(...stack);
  }
  return tlv(0x06, Buffer.from(out));
}

function utcTime(d: Date): Buffer {
  const p = (n: number) => String(n).padStart(2, '0');
  const s = `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  return tlv(0x17, Buffer.from(s, 'ascii'));
}

function name(cn: string): Buffer {
  return seq(set(seq(oid('2.5.4.3'), utf8(cn))));
}

/** An iPAddress name: 4 bytes for IPv4 (a mapped address too, as Go's x509 writes To4()), else 16. */
function ipBytes(ip: Ip): Buffer {
  return Buffer.from(ip.family === 4 ? ip.bytes.subarray(12) : ip.bytes);
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
}

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

export interface SelfSignedOptions {
  /** The subject's common name. */
  commonName: string;
  /** DNS names and IP addresses the certificate is valid for. */
  hosts: string[];
  now?: Date;
}

/** Creates a key and a self-signed certificate, valid for a year, for the given host names and IPs. */
export function selfSignedCert(opts: SelfSignedOptions): ServingCert {
  const now = opts.now ?? new Date();
  const hosts = [...new Set(opts.hosts)];
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const san = seq(
    ...hosts.map((h) => {
      const ip = parseIp(h);
      return ip ? tlv(0x87, ipBytes(ip)) : tlv(0x82, Buffer.from(h, 'ascii'));
    }),
  );
  const extensions = seq(
    extension('2.5.29.19', true, seq(bool(true))),
    // digitalSignature and keyCertSign.
    extension('2.5.29.15', true, bits(Buffer.from([0x84]), 2)),
    extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'), oid('1.3.6.1.5.5.7.3.2'))),
    extension('2.5.29.17', false, san),
  );
  const subject = name(opts.commonName);
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_SHA256,
    subject,
    seq(utcTime(new Date(now.getTime() - 3_600_000)), utcTime(new Date(now.getTime() + 365 * 86_400_000))),
    subject,
    spki,
    explicit(3, extensions),
  );
  const signature = sign(
    'sha256',
    tbs,
    createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' })),
  );
  const der = seq(tbs, ECDSA_SHA256, bits(signature));
  const b64 = der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trimEnd();
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certPem: `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`,
  };
}

/** A refused certificate or key file: names the file and what is wrong with it. */
export class ServingCertError extends Error {
  override readonly name = 'ServingCertError';
  readonly file: string;
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.file = file;
  }
}

/**
 * Reads a PEM certificate (chain) and its private key, as `--tls-cert-file` and
 * `--tls-private-key-file` name them; checks that the key belongs to the certificate.
 */
export async function readServingCert(certFile: string, keyFile: string): Promise<ServingCert> {
  const read = async (file: string) => {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new ServingCertError(
        file,
        `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      );
    }
  };
  // Both read at once, but the certificate's failure is the one reported when both files are
  // missing: which read fails first is up to the file system, the message should not be.
  const [certRead, keyRead] = await Promise.allSettled([read(certFile), read(keyFile)]);
  if (certRead.status === 'rejected') throw certRead.reason;
  if (keyRead.status === 'rejected') throw keyRead.reason;
  const [certPem, keyPem] = [certRead.value, keyRead.value];
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    throw new ServingCertError(certFile, 'is not a PEM certificate');
  }
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    throw new ServingCertError(keyFile, 'is not a PEM private key');
  }
  if (!cert.checkPrivateKey(key)) {
    throw new ServingCertError(keyFile, `is not the private key of the certificate in ${certFile}`);
  }
  return { certPem, keyPem };
}

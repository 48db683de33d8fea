/**
 * A bundle of PEM certificates (a CA bundle) checked the way Go reads one with `pem.Decode` and
 * `x509.ParseCertificate`: text outside the blocks (the `# Issuer` lines of a system bundle) is
 * skipped; every block must be a CERTIFICATE that parses; at least one must be there.
 */
import { X509Certificate } from 'node:crypto';

export type PemBundleCheck = { ok: true; certificates: number } | { ok: false; problem: string };

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

export function checkPemBundle(text: string): PemBundleCheck {
  let count = 0;
  let rest = text;
  for (const m of text.matchAll(BLOCK)) {
    const [whole, type] = m;
    if (type !== 'CERTIFICATE')
      return { ok: false, problem: `block ${count + 1} is a ${type}, not a CERTIFICATE` };
    try {
      new X509Certificate(whole);
    } catch {
      return { ok: false, problem: `certificate ${count + 1} does not parse` };
    }
    count++;
    rest = rest.replace(whole, '');
  }
  if (rest.includes('-----BEGIN'))
    return { ok: false, problem: `a block after certificate ${count} is not closed` };
  if (count === 0) return { ok: false, problem: 'it holds no PEM certificate' };
  return { ok: true, certificates: count };
}

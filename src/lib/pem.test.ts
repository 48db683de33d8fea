import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkPemBundle } from './pem.ts';
import { selfSignedCert } from './tls-cert.ts';

describe('checkPemBundle', () => {
  const a = selfSignedCert({ commonName: 'a', hosts: ['a'] });
  const b = selfSignedCert({ commonName: 'b', hosts: ['b'] });

  it('counts the certificates of a bundle, skipping the text between them', () => {
    assert.deepEqual(checkPemBundle(`# ACCVRAIZ1\n${a.certPem}\n# B\n${b.certPem}`), {
      ok: true,
      certificates: 2,
    });
  });

  it('refuses a bundle with no certificate, a key, a broken or an unclosed block', () => {
    const broken = a.certPem.replace(/\n[A-Za-z0-9+/]{10}/, '\nAAAAAAAAAA');
    for (const [text, problem] of [
      ['', /no PEM certificate/],
      ['just text', /no PEM certificate/],
      [a.keyPem, /block 1 is a PRIVATE KEY/],
      [`${a.certPem}${broken}`, /certificate 2 does not parse/],
      [`${a.certPem}-----BEGIN CERTIFICATE-----\nMIIB`, /a block after certificate 1 is not closed/],
    ] as const) {
      const r = checkPemBundle(text);
      assert.ok(!r.ok, text);
      assert.match(r.problem, problem);
    }
  });
});

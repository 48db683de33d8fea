import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { integer, selfSignedCert } from './tls.ts';

describe('kube emulator TLS', () => {
  it('encodes DER integers minimally, whatever the leading bytes', () => {
    const hex = (b: number[]) => integer(Buffer.from(b)).toString('hex');
    assert.equal(hex([0x00, 0x12]), '020112', 'a leading zero before a small byte goes');
    assert.equal(hex([0x00, 0x00, 0x92]), '02020092', 'a high bit keeps exactly one zero');
    assert.equal(hex([0x92]), '02020092');
    assert.equal(hex([0x00]), '020100');
  });

  it('makes certificates OpenSSL accepts, run after run', () => {
    for (let i = 0; i < 40; i++)
      assert.ok(new X509Certificate(selfSignedCert(['127.0.0.1', 'localhost']).certPem));
  });
});

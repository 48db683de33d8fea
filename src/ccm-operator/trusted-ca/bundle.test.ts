import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { selfSignedCert } from '../../lib/tls-cert.ts';
import { mergeTrustBundle } from './bundle.ts';

const pem = (cn: string) => selfSignedCert({ commonName: cn, hosts: [cn] }).certPem;

describe('the CCM trust bundle', () => {
  const system = { what: 'system', pem: `# Root\n${pem('root')}` };
  const proxy = { what: 'proxy CA', pem: pem('proxy') };
  const cloud = { what: 'cloud CA', pem: pem('cloud') };

  it('puts the cloud config’s CA, then the Proxy’s, in front of the system bundle', () => {
    assert.deepEqual(mergeTrustBundle({ system, proxy, cloudConfig: cloud }), {
      ok: true,
      bundle: `${cloud.pem}\n${proxy.pem}\n${system.pem}`,
      warnings: [],
    });
    assert.deepEqual(mergeTrustBundle({ system }), { ok: true, bundle: system.pem, warnings: [] });
  });

  it('adds a CA found in both places once', () => {
    const r = mergeTrustBundle({ system, proxy, cloudConfig: { what: 'cloud CA', pem: proxy.pem } });
    assert.ok(r.ok);
    assert.equal(r.bundle, `${proxy.pem}\n${system.pem}`);
  });

  it('leaves out an invalid source with a warning naming it, and keeps the rest', () => {
    const r = mergeTrustBundle({
      system,
      proxy: { what: 'ConfigMap openshift-config/user-ca-bundle', pem: 'garbage' },
      cloudConfig: cloud,
    });
    assert.ok(r.ok);
    assert.equal(r.bundle, `${cloud.pem}\n${system.pem}`);
    assert.deepEqual(r.warnings, [
      {
        source: 'proxy',
        message:
          'ConfigMap openshift-config/user-ca-bundle is left out of the trust bundle: it holds no PEM certificate',
      },
    ]);
  });

  it('cannot be built on an invalid system bundle', () => {
    const r = mergeTrustBundle({ system: { what: '/etc/pki/x.pem', pem: '' }, proxy });
    assert.deepEqual(r, {
      ok: false,
      problem: 'the system trust bundle (/etc/pki/x.pem): it holds no PEM certificate',
    });
  });
});

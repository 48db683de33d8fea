import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Draft } from './draft.ts';
import { finalizeDraft } from './finalize.ts';
import { findProblem, rejection, sandbox } from './testing/sandbox.ts';
import type { Sandbox } from './testing/sandbox.ts';

/** A draft whose every key is named after its field, read from `t.yaml`. */
function draft(values: Record<string, unknown>, overrides: Record<string, string> = {}): Draft {
  const fields: Record<string, unknown> = {};
  for (const [k, value] of Object.entries(values)) fields[k] = { value, file: 't.yaml', key: k };
  return {
    fields,
    endpointOverride: Object.fromEntries(
      Object.entries(overrides).map(([service, value]) => [
        service,
        { value, file: 't.yaml', key: `${service}_endpoint_override` },
      ]),
    ),
    where: (field) => ({ file: 't.yaml', key: field }),
    source: { kind: 'clouds.yaml', files: ['t.yaml'], env: [] },
  };
}

const PASSWORD = {
  authUrl: 'https://k:5000/v3',
  userId: 'u',
  password: 'pw',
  projectId: 'p',
};

describe('finalizeDraft', () => {
  let s: Sandbox;
  before(async () => (s = await sandbox()));
  after(async () => s.cleanup());

  it('applies the defaults: public interface, TLS verification, 60 s timeout', async () => {
    const { config, warnings } = await finalizeDraft(draft(PASSWORD));
    assert.deepEqual(warnings, []);
    assert.equal(config.interface, 'public');
    assert.deepEqual(config.tls, { insecure: false });
    assert.equal(config.requestTimeoutMs, 60_000);
    assert.equal(config.systemScope, false);
    assert.deepEqual(config.endpointOverride, {});
    assert.ok(!('regionName' in config) && !('username' in config));
  });

  it('rejects auth URLs that are not http(s) URLs or that point at Keystone v2.0', async () => {
    for (const [authUrl, pattern] of [
      ['keystone:5000/v3', /unsupported URL scheme/],
      ['not a url', /not a URL/],
      ['ftp://k/v3', /unsupported URL scheme "ftp:"/],
      ['https://k:5000/v2.0/', /Keystone v2\.0 endpoint/],
    ] as const) {
      const p = findProblem(await rejection(finalizeDraft(draft({ ...PASSWORD, authUrl }))), 'authUrl');
      assert.equal(p.value, authUrl);
      assert.match(p.problem, pattern);
    }
    const v2 = findProblem(
      await rejection(finalizeDraft(draft({ ...PASSWORD, authUrl: 'https://k:5000/v2.0' }))),
      'authUrl',
    );
    assert.match(v2.fix, /https:\/\/k:5000\/v3/);
  });

  it('refuses conflicting scopes and trusts with application credentials', async () => {
    const system = findProblem(
      await rejection(finalizeDraft(draft({ ...PASSWORD, systemScope: true }))),
      'systemScope',
    );
    assert.match(system.fix, /remove systemScope, or remove the project/);

    const ac = await rejection(
      finalizeDraft(
        draft({
          authUrl: 'https://k/v3',
          applicationCredentialId: 'a',
          applicationCredentialSecret: 's',
          trustId: 't',
        }),
      ),
    );
    assert.match(findProblem(ac, 'trustId').problem, /cannot be used with an application credential/);

    const missing = await rejection(
      finalizeDraft(draft({ authUrl: 'https://k/v3', authType: 'v3applicationcredential' })),
    );
    assert.match(
      findProblem(missing, 'applicationCredentialSecret').fix,
      /secret shown when the credential was created/,
    );
    assert.match(
      findProblem(missing, 'applicationCredentialId').fix,
      /applicationCredentialName with the user/,
    );
  });

  it('warns about settings that have no effect', async () => {
    const ac = await finalizeDraft(
      draft({
        authUrl: 'https://k/v3',
        applicationCredentialId: 'a',
        applicationCredentialSecret: 's',
        projectName: 'p',
      }),
    );
    assert.deepEqual(ac.warnings, [
      't.yaml: key "projectName": ignored: an application credential is always scoped to its own project',
    ]);
    const unscoped = await finalizeDraft(draft({ authUrl: 'https://k/v3', userId: 'u', password: 'p' }));
    assert.match(
      unscoped.warnings[0] ?? '',
      /t\.yaml: key "projectName": no project, domain or system scope/,
    );
  });

  it('checks TLS files exist and that a key comes with a certificate', async () => {
    const dir = s.cwd;
    const ps = await rejection(
      finalizeDraft(draft({ ...PASSWORD, caFile: `${dir}/missing-ca.pem`, keyFile: dir })),
    );
    const ca = findProblem(ps, 'caFile');
    assert.deepEqual([ca.value, ca.problem], [`${dir}/missing-ca.pem`, 'the file does not exist']);
    assert.match(findProblem(ps, 'keyFile').fix, /set certFile/);
    assert.ok(ps.some((p) => p.key === 'keyFile' && p.problem === 'not a file'));
  });

  it('validates endpoint overrides', async () => {
    const p = findProblem(
      await rejection(finalizeDraft(draft(PASSWORD, { network: 'neutron:9696' }))),
      'network_endpoint_override',
    );
    assert.match(p.fix, /https:\/\/network\.example\.com/);
  });

  it('never shows credentials embedded in a URL', async () => {
    const p = findProblem(
      await rejection(finalizeDraft(draft({ ...PASSWORD, authUrl: 'ftp://admin:hunter2@k/v3' }))),
      'authUrl',
    );
    assert.equal(p.value, 'ftp://[REDACTED]@k/v3');
  });
});

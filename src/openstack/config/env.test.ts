import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { envHasCloud, loadEnvironment } from './env.ts';
import { findProblem, rejection, sandbox } from './testing/sandbox.ts';
import type { Sandbox } from './testing/sandbox.ts';

const OPENRC = {
  OS_AUTH_URL: 'https://keystone.example:5000/v3',
  OS_USERNAME: 'alice',
  OS_PASSWORD: 'pw-from-env',
  OS_USER_DOMAIN_NAME: 'Default',
  OS_TENANT_NAME: 'ops',
  OS_PROJECT_DOMAIN_ID: 'default',
  OS_IDENTITY_API_VERSION: '3',
  OS_COMPUTE_API_VERSION: '2.79',
};

describe('OS_* environment', () => {
  let s: Sandbox;
  before(async () => (s = await sandbox()));
  after(async () => s.cleanup());

  it('reads an openrc, with legacy spellings, and records the variable names only', async () => {
    await s.write('work/ca.pem', 'pem');
    const { config, warnings } = await loadEnvironment(
      s.ctx({
        ...OPENRC,
        OS_REGION_NAME: 'RegionOne',
        OS_ENDPOINT_TYPE: 'adminURL',
        OS_CACERT: 'ca.pem',
        OS_INSECURE: 'false',
        OS_API_TIMEOUT: '30',
        OS_LOAD_BALANCER_ENDPOINT_OVERRIDE: 'https://octavia.example:9876',
        OS_PROJECT_ID: '',
      }),
    );
    assert.deepEqual(warnings, []);
    assert.deepEqual(config, {
      authUrl: 'https://keystone.example:5000/v3',
      authType: 'password',
      username: 'alice',
      password: 'pw-from-env',
      userDomainName: 'Default',
      projectName: 'ops',
      projectDomainId: 'default',
      regionName: 'RegionOne',
      systemScope: false,
      interface: 'admin',
      tls: { caFile: join(s.cwd, 'ca.pem'), insecure: false },
      endpointOverride: { 'load-balancer': 'https://octavia.example:9876' },
      requestTimeoutMs: 30_000,
      source: {
        kind: 'environment',
        files: [],
        env: [
          'OS_AUTH_URL',
          'OS_USERNAME',
          'OS_PASSWORD',
          'OS_TENANT_NAME',
          'OS_USER_DOMAIN_NAME',
          'OS_PROJECT_DOMAIN_ID',
          'OS_REGION_NAME',
          'OS_ENDPOINT_TYPE',
          'OS_CACERT',
          'OS_INSECURE',
          'OS_API_TIMEOUT',
          'OS_IDENTITY_API_VERSION',
          'OS_LOAD_BALANCER_ENDPOINT_OVERRIDE',
        ],
      },
    });
    assert.ok(!JSON.stringify(config.source).includes('pw-from-env'));
  });

  it('reads application credentials, tokens, trusts and system scope', async () => {
    const ac = await loadEnvironment(
      s.ctx({
        OS_AUTH_URL: 'https://k/v3',
        OS_AUTH_TYPE: 'v3applicationcredential',
        OS_APPLICATION_CREDENTIAL_ID: 'acid',
        OS_APPLICATION_CREDENTIAL_SECRET: 'acsecret',
      }),
    );
    assert.equal(ac.config.authType, 'v3applicationcredential');
    assert.equal(ac.config.applicationCredentialId, 'acid');

    // Without OS_AUTH_TYPE the credential present decides, as keystoneauth and gophercloud do.
    const token = await loadEnvironment(
      s.ctx({ OS_AUTH_URL: 'https://k/v3', OS_TOKEN: 'tok', OS_SYSTEM_SCOPE: 'all' }),
    );
    assert.deepEqual([token.config.authType, token.config.systemScope], ['token', true]);

    const trust = await loadEnvironment(
      s.ctx({ OS_AUTH_URL: 'https://k/v3', OS_USER_ID: 'u1', OS_PASSWORD: 'p', OS_TRUST_ID: 'tr1' }),
    );
    assert.deepEqual([trust.config.authType, trust.config.trustId], ['password', 'tr1']);
    assert.deepEqual(trust.warnings, []);
  });

  it('counts only credentials, not selectors, as an environment cloud', () => {
    assert.equal(envHasCloud({ OS_CLOUD: 'x', OS_REGION_NAME: 'r' }), false);
    assert.equal(envHasCloud({ OS_AUTH_URL: '', OS_CACERT: '/ca.pem', OS_INTERFACE: 'internal' }), false);
    assert.equal(envHasCloud({ OS_APPLICATION_CREDENTIAL_ID: 'a' }), true);
  });

  it('names the variable, the value and the fix for every bad value', async () => {
    const ps = await rejection(
      loadEnvironment(
        s.ctx({
          OS_AUTH_URL: 'keystone.example:5000',
          OS_AUTH_TYPE: 'v3oidcpassword',
          OS_INTERFACE: 'private',
          OS_INSECURE: 'maybe',
          OS_SYSTEM_SCOPE: 'project',
          OS_API_TIMEOUT: '-1',
          OS_IDENTITY_API_VERSION: '2.0',
          OS_USERNAME: 'u',
          OS_PASSWORD: 'p',
        }),
      ),
    );
    for (const p of ps) assert.equal(p.file, 'environment');
    assert.match(findProblem(ps, 'OS_AUTH_TYPE').fix, /password, v3password/);
    assert.equal(findProblem(ps, 'OS_INTERFACE').value, 'private');
    assert.match(findProblem(ps, 'OS_INSECURE').fix, /true or false/);
    assert.match(findProblem(ps, 'OS_SYSTEM_SCOPE').fix, /all/);
    assert.match(findProblem(ps, 'OS_API_TIMEOUT').fix, /seconds/);
    assert.match(findProblem(ps, 'OS_IDENTITY_API_VERSION').problem, /v2 is not supported/);
  });

  it('checks the auth method: missing pieces are named by their variables', async () => {
    const ps = await rejection(loadEnvironment(s.ctx({ OS_USERNAME: 'u', OS_PROJECT_NAME: 'p' })));
    assert.match(findProblem(ps, 'OS_AUTH_URL').fix, /Keystone v3 URL/);
    assert.match(findProblem(ps, 'OS_PASSWORD').fix, /set OS_PASSWORD/);
    assert.match(
      findProblem(ps, 'OS_USER_DOMAIN_NAME').fix,
      /OS_USER_DOMAIN_NAME \(usually "Default"\) or OS_USER_DOMAIN_ID/,
    );
    assert.match(findProblem(ps, 'OS_PROJECT_DOMAIN_NAME').fix, /OS_PROJECT_ID/);

    const ac = await rejection(
      loadEnvironment(
        s.ctx({
          OS_AUTH_URL: 'https://k/v3',
          OS_APPLICATION_CREDENTIAL_NAME: 'n',
          OS_APPLICATION_CREDENTIAL_SECRET: 's',
        }),
      ),
    );
    assert.match(findProblem(ac, 'OS_USERNAME').fix, /OS_APPLICATION_CREDENTIAL_ID instead/);

    const tok = await rejection(
      loadEnvironment(s.ctx({ OS_AUTH_URL: 'https://k/v3', OS_AUTH_TYPE: 'token' })),
    );
    assert.match(findProblem(tok, 'OS_TOKEN').fix, /set OS_TOKEN/);
  });

  it('applies OS_DEFAULT_DOMAIN_* and warns only about look-alike variables', async () => {
    const { config, warnings } = await loadEnvironment(
      s.ctx({
        OS_AUTH_URL: 'https://k/v3',
        OS_USERNAME: 'u',
        OS_PASSWORD: 'p',
        OS_PROJECT_NAME: 'ops',
        OS_DEFAULT_DOMAIN_NAME: 'Default',
        OS_PASWORD: 'typo',
        OS_CCM_REGIONAL: 'true',
        OS_SOMETHING_ELSE_ENTIRELY: 'x',
      }),
    );
    assert.deepEqual([config.userDomainName, config.projectDomainName], ['Default', 'Default']);
    assert.deepEqual(warnings, [
      'environment: key "OS_PASWORD": unknown variable, ignored (did you mean OS_PASSWORD?)',
    ]);
  });
});

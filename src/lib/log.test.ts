import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger, type LogFormat, type LogLevel } from './log.ts';
import { isSecretKey, redact, redactText } from './redact.ts';

function capture(level: LogLevel = 'trace', format: LogFormat = 'json') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { log: createLogger({ level, format, destination }), lines };
}

const SECRETS = ['hunter2-pass', 'gAAAAAB-token-value', 'appcred-s3cret', 'subject-tok-123'];

function assertNoSecret(output: string) {
  for (const s of SECRETS) assert.ok(!output.includes(s), `output leaks ${s}: ${output}`);
}

describe('log format', () => {
  it('writes a text record with its fields on one line', () => {
    const { log, lines } = capture('info', 'text');
    log.error(
      { controller: 'service', namespace: 'demo', name: 'web', status: 400, error: 'Octavia said 400' },
      'reconcile failed',
    );
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(
      lines[0]!,
      /ERROR.*reconcile failed.*"controller":"service".*"status":400.*Octavia said 400/,
    );
  });
});

describe('log redaction', () => {
  const cloudsYaml = {
    clouds: {
      openstack: {
        auth: {
          auth_url: 'https://keystone.example:5000/v3',
          username: 'admin',
          password: 'hunter2-pass',
          project_name: 'demo',
        },
        region_name: 'RegionOne',
      },
    },
  };
  const keystoneBody = {
    auth: {
      identity: {
        methods: ['application_credential'],
        application_credential: { id: 'ac-1', secret: 'appcred-s3cret' },
      },
    },
  };
  const headers = new Headers({
    'X-Auth-Token': 'gAAAAAB-token-value',
    'X-Subject-Token': 'subject-tok-123',
    Accept: 'application/json',
  });

  for (const format of ['json', 'text'] as const) {
    for (const level of ['trace', 'debug', 'info', 'error'] as const) {
      it(`never prints a secret at level ${level} (${format})`, () => {
        const { log, lines } = capture('trace', format);
        log[level]({ config: cloudsYaml }, 'loaded clouds.yaml');
        log[level]({ body: keystoneBody, headers }, 'POST /v3/auth/tokens');
        log[level]({ req: { headers: { 'x-auth-token': 'gAAAAAB-token-value' } } }, 'request');
        log[level]({ password: 'hunter2-pass', token: 'gAAAAAB-token-value' }, 'flat keys');
        log[level]('header X-Auth-Token: gAAAAAB-token-value sent; password=hunter2-pass');
        log[level]({ err: new Error('auth failed for {"password": "hunter2-pass"}') }, 'failed');
        const output = lines.join('\n');
        assert.equal(lines.filter((l) => /^\{|^\[\d/.test(l)).length, 6, output);
        assertNoSecret(output);
        assert.ok(output.includes('[REDACTED]'));
        // What is not secret stays readable.
        assert.ok(output.includes('RegionOne'));
        assert.ok(output.includes('application/json'));
      });
    }
  }

  it('redacts the whole clouds.yaml auth block', () => {
    const out = redact(cloudsYaml) as { clouds: { openstack: { auth: unknown; region_name: string } } };
    assert.equal(out.clouds.openstack.auth, '[REDACTED]');
    assert.equal(out.clouds.openstack.region_name, 'RegionOne');
  });

  it('recognises secret keys in every spelling', () => {
    for (const k of [
      'password',
      'OS_PASSWORD',
      'X-Auth-Token',
      'x-subject-token',
      'application_credential_secret',
      'applicationCredentialSecret',
      'token',
      'auth',
      'Authorization',
      'id_token',
      'OS_TOKEN',
      'OS_APPLICATION_CREDENTIAL_SECRET',
    ]) {
      assert.ok(isSecretKey(k), k);
    }
    for (const k of [
      'auth_url',
      'username',
      'project_name',
      'region_name',
      'tokenExpiresAt',
      'name',
      'secret-name',
      'secret-namespace',
      'secretRef',
      'password_file',
    ]) {
      assert.ok(!isSecretKey(k), k);
    }
  });

  it('masks secrets inside text and INI lines', () => {
    assert.equal(redactText('password = hunter2-pass'), 'password = [REDACTED]');
    assert.equal(
      redactText('application-credential-secret: appcred-s3cret'),
      'application-credential-secret: [REDACTED]',
    );
    assert.equal(redactText('{"token":"abc","name":"x"}'), '{"token":"[REDACTED]","name":"x"}');
    assert.equal(redactText('Authorization: Bearer abc.def'), 'Authorization: [REDACTED]');
  });

  it('survives cycles and deep values', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    assert.deepEqual(redact(a), { name: 'a', self: '[Circular]' });
  });

  it('honours the level', () => {
    const { log, lines } = capture('warn');
    log.info('hidden');
    log.warn('shown');
    assert.equal(lines.length, 1);
    assert.equal((JSON.parse(lines[0]!) as { level: string; msg: string }).level, 'warn');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CloudConfig } from '../config/types.ts';
import { authRequestBody, describeIdentity, tokenCacheKey } from './keystone.ts';

const base: CloudConfig = {
  authUrl: 'https://keystone.example/v3',
  authType: 'password',
  systemScope: false,
  interface: 'public',
  tls: { insecure: false },
  endpointOverride: {},
  requestTimeoutMs: 60_000,
  source: { kind: 'environment', files: [], env: [] },
};
const cfg = (over: Partial<CloudConfig>): CloudConfig => ({ ...base, ...over });

describe('Keystone auth requests', () => {
  it('sends a password user by name with its domain, scoped to a project by name', () => {
    const c = cfg({
      username: 'demo',
      password: 's3cret',
      userDomainName: 'Default',
      projectName: 'demo',
      projectDomainId: 'default',
    });
    assert.deepEqual(authRequestBody(c), {
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'demo', domain: { name: 'Default' }, password: 's3cret' } },
        },
        scope: { project: { name: 'demo', domain: { id: 'default' } } },
      },
    });
    assert.equal(describeIdentity(c), 'user demo (domain Default), project demo (domain default)');
  });

  it('sends ids as ids, and system, domain and no scope', () => {
    const byId = authRequestBody(cfg({ userId: 'u1', password: 'p', projectId: 'p1' }));
    assert.deepEqual(byId.auth.identity, {
      methods: ['password'],
      password: { user: { id: 'u1', password: 'p' } },
    });
    assert.deepEqual(byId.auth.scope, { project: { id: 'p1' } });
    assert.deepEqual(authRequestBody(cfg({ userId: 'u1', password: 'p', systemScope: true })).auth.scope, {
      system: { all: true },
    });
    assert.deepEqual(
      authRequestBody(cfg({ userId: 'u1', password: 'p', domainName: 'Default' })).auth.scope,
      {
        domain: { name: 'Default' },
      },
    );
    assert.equal(authRequestBody(cfg({ userId: 'u1', password: 'p' })).auth.scope, undefined);
  });

  it('sends application credentials by id or by name and user, never with a scope', () => {
    const byId = cfg({
      authType: 'v3applicationcredential',
      applicationCredentialId: 'ac1',
      applicationCredentialSecret: 'x',
      projectId: 'ignored',
    });
    assert.deepEqual(authRequestBody(byId), {
      auth: {
        identity: { methods: ['application_credential'], application_credential: { id: 'ac1', secret: 'x' } },
      },
    });
    const byName = cfg({
      authType: 'v3applicationcredential',
      applicationCredentialName: 'ci',
      applicationCredentialSecret: 'x',
      username: 'demo',
      userDomainId: 'default',
    });
    assert.deepEqual(authRequestBody(byName).auth.identity, {
      methods: ['application_credential'],
      application_credential: { name: 'ci', user: { name: 'demo', domain: { id: 'default' } }, secret: 'x' },
    });
    assert.equal(describeIdentity(byName), 'application credential "ci" of user demo (domain default)');
  });

  it('scopes to a trust, over any project, for password and token auth', () => {
    const trust = cfg({
      username: 'trustee',
      userDomainId: 'default',
      password: 'p',
      trustId: 't1',
      projectName: 'x',
    });
    assert.deepEqual(authRequestBody(trust).auth.scope, { 'OS-TRUST:trust': { id: 't1' } });
    const token = cfg({ authType: 'token', token: 'tok', trustId: 't1' });
    assert.deepEqual(authRequestBody(token), {
      auth: {
        identity: { methods: ['token'], token: { id: 'tok' } },
        scope: { 'OS-TRUST:trust': { id: 't1' } },
      },
    });
    assert.equal(describeIdentity(token), 'a token (auth type token), trust t1');
  });

  it('keys the token cache by a digest that changes with the secret and holds no secret', () => {
    const a = cfg({ userId: 'u1', password: 'one', projectId: 'p' });
    const key = tokenCacheKey(a);
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.equal(tokenCacheKey({ ...a }), key);
    assert.notEqual(tokenCacheKey({ ...a, password: 'two' }), key);
    assert.notEqual(tokenCacheKey({ ...a, projectId: 'q' }), key);
    assert.notEqual(tokenCacheKey({ ...a, authUrl: 'https://other/v3' }), key);
    assert.ok(!describeIdentity(a).includes('one'));
  });
});

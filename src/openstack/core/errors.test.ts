import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseErrorBody } from './error-body.ts';
import {
  AuthenticationError,
  ConnectionError,
  EndpointNotFoundError,
  ignoreNotFound,
  isConflict,
  isNotFound,
  isRateLimited,
  OpenStackHttpError,
  ResourceErrorStateError,
  WaitTimeoutError,
} from './errors.ts';

// Bodies as the real Zed services answer them (../shared/openstack-samples/).
const SAMPLES: [string, string, string | null, string, string | undefined][] = [
  [
    'keystone',
    '{"error": {"code": 404, "message": "Could not find project: 00000000000000000000000000000000.", "title": "Not Found"}}',
    'application/json',
    'Could not find project: 00000000000000000000000000000000.',
    'Not Found',
  ],
  [
    'neutron',
    '{"NeutronError": {"type": "PortNotFound", "message": "Port f001607c could not be found.", "detail": ""}}',
    'application/json',
    'Port f001607c could not be found.',
    'PortNotFound',
  ],
  [
    'nova',
    '{"itemNotFound": {"code": 404, "message": "Instance 5b7fc4d4 could not be found."}}',
    'application/json; charset=UTF-8',
    'Instance 5b7fc4d4 could not be found.',
    'itemNotFound',
  ],
  [
    'octavia',
    '{"faultcode": "Client", "faultstring": "Load Balancer 72dfa5b6 is immutable and cannot be updated.", "debuginfo": null}',
    'application/json',
    'Load Balancer 72dfa5b6 is immutable and cannot be updated.',
    'Client',
  ],
  [
    'placement',
    '{"errors": [{"status": 404, "title": "Not Found", "detail": "The resource could not be found.\\n\\n No resource provider with uuid bb2b found  ", "request_id": "req-4c3d"}]}',
    'application/json',
    'No resource provider with uuid bb2b found',
    'Not Found',
  ],
  [
    'glance json',
    '{"message": "No image found with ID 49421e39<br /><br />\\n\\n\\n", "code": "404 Not Found", "title": "Not Found"}',
    'application/json',
    'No image found with ID 49421e39',
    'Not Found',
  ],
  [
    'glance html',
    '<html>\n <head>\n  <title>409 Conflict</title>\n </head>\n <body>\n  <h1>409 Conflict</h1>\n  Image status transition from active to saving is not allowed<br /><br />\n\n\n\n </body>\n</html>',
    'text/html; charset=UTF-8',
    'Image status transition from active to saving is not allowed',
    undefined,
  ],
  ['plain text', 'upstream connect error', 'text/plain', 'upstream connect error', undefined],
];

describe('error bodies', () => {
  for (const [name, body, type, message, errorType] of SAMPLES) {
    it(`reads the ${name} format`, () => {
      const parsed = parseErrorBody(body, type);
      assert.equal(parsed.message, message);
      assert.equal(parsed.errorType, errorType);
    });
  }

  it('says nothing for an empty body and keeps long messages to one bounded line', () => {
    assert.equal(parseErrorBody('', null).message, '');
    const long = parseErrorBody(`{"NeutronError":{"type":"X","message":"${'a\\n'.repeat(2000)}"}}`, null);
    assert.ok(long.message.length <= 1001 && !long.message.includes('\n'));
  });
});

describe('OpenStackHttpError', () => {
  const err = new OpenStackHttpError({
    status: 404,
    method: 'DELETE',
    url: 'https://neutron.example/v2.0/ports/abc',
    service: 'network',
    requestId: 'req-1',
    serviceMessage: 'Port abc could not be found.',
    errorType: 'PortNotFound',
    body: { NeutronError: { type: 'PortNotFound', password: 'hunter2' } },
  });

  it('reads as one log line with the method, URL, status, kind, request id and the service message', () => {
    assert.equal(
      err.message,
      'DELETE https://neutron.example/v2.0/ports/abc → 404 NotFound (req-1): Port abc could not be found.',
    );
    assert.equal(err.kind, 'NotFound');
    assert.equal(err.serviceMessage, 'Port abc could not be found.');
  });

  it('is recognized by name, not instanceof, and by the predicates', () => {
    const lookalike = Object.assign(new Error('x'), { name: 'OpenStackHttpError', status: 409 });
    assert.ok(OpenStackHttpError.is(err) && OpenStackHttpError.is(lookalike));
    assert.ok(isNotFound(err) && !isConflict(err) && isConflict(lookalike) && !isRateLimited(err));
    assert.ok(!OpenStackHttpError.is(new Error('x')) && !OpenStackHttpError.is(null));
    assert.equal(ignoreNotFound(err), undefined);
    assert.throws(() => ignoreNotFound(lookalike), /x/);
  });

  it('redacts secrets from the body it keeps', () => {
    assert.deepEqual(err.body, { NeutronError: { type: 'PortNotFound', password: '[REDACTED]' } });
  });

  it('names every status callers branch on', () => {
    const kinds = [400, 401, 403, 404, 409, 412, 413, 429, 500, 501, 503, 418, 599, 302].map(
      (status) =>
        new OpenStackHttpError({ status, method: 'GET', url: 'u', service: 's', serviceMessage: '' }).kind,
    );
    assert.deepEqual(kinds, [
      'BadRequest',
      'Unauthorized',
      'Forbidden',
      'NotFound',
      'Conflict',
      'PreconditionFailed',
      'RequestEntityTooLarge',
      'RateLimited',
      'InternalServerError',
      'NotImplemented',
      'ServiceUnavailable',
      'ClientError',
      'ServerError',
      'UnexpectedStatus',
    ]);
  });
});

describe('semantic errors', () => {
  it('say what they are about, and carry a brand check each', () => {
    const endpoint = new EndpointNotFoundError({
      serviceType: 'network',
      interface: 'internal',
      region: 'RegionTwo',
      available: ['network (public RegionOne)'],
    });
    assert.equal(
      endpoint.message,
      'no network endpoint for interface internal, region RegionTwo; the catalog has: network (public RegionOne)',
    );
    const auth = new AuthenticationError({
      authUrl: 'https://keystone/v3',
      identity: 'user demo (domain Default)',
      status: 401,
      serviceMessage: 'The request you have made requires authentication.',
      fix: 'Fix: check the password',
    });
    assert.match(
      auth.message,
      /^authentication at https:\/\/keystone\/v3 failed for user demo .* → 401: The request you have made requires authentication\. Fix: check the password$/,
    );
    const timeout = new WaitTimeoutError({
      what: 'load balancer x to become ACTIVE',
      timeoutMs: 300_000,
      lastStatus: 'PENDING_CREATE',
    });
    assert.equal(
      timeout.message,
      'timed out after 5 min waiting for load balancer x to become ACTIVE (last status PENDING_CREATE)',
    );
    const state = new ResourceErrorStateError({
      what: 'server web-0',
      resourceId: 's1',
      status: 'ERROR',
      fault: 'No valid host was found.',
    });
    assert.equal(state.message, 'server web-0: s1 went to status ERROR: No valid host was found.');
    const conn = new ConnectionError({
      method: 'GET',
      url: 'https://x/v2.0/ports',
      service: 'network',
      code: 'ECONNRESET',
      detail: 'socket hang up',
    });
    assert.equal(conn.message, 'GET https://x/v2.0/ports: socket hang up');
    for (const [e, is] of [
      [endpoint, EndpointNotFoundError.is],
      [auth, AuthenticationError.is],
      [timeout, WaitTimeoutError.is],
      [state, ResourceErrorStateError.is],
      [conn, ConnectionError.is],
    ] as const) {
      assert.ok(is(e));
      assert.ok(!is(new Error(e.message)));
    }
  });
});

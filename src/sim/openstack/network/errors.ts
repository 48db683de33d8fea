/**
 * Neutron's exceptions, by class name and message template (neutron-lib / neutron), so the
 * emulator's errors read exactly like the real ones: `{"NeutronError": {type, message, detail}}`.
 */
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';

const err = (status: number, type: string, message: string) => new SimError(status, message, { type });

/** Python's repr of a value inside a message, as neutron-lib's `%s` of the raw input prints it. */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return `[${v.map((x) => (typeof x === 'string' ? `'${x}'` : pyRepr(x))).join(', ')}]`;
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).map(
      ([k, x]) => `'${k}': ${typeof x === 'string' ? `'${x}'` : pyRepr(x)}`,
    );
    return `{${entries.join(', ')}}`;
  }
  return JSON.stringify(v) ?? '';
}

/** A scalar's text as Python's str() gives it for the values filters and bodies carry. */
export function asText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v) ?? '';
}

export const httpBadRequest = (message: string) => err(400, 'HTTPBadRequest', message);
export const invalidInput = (message: string) =>
  err(400, 'InvalidInput', `Invalid input for operation: ${message}.`);
/** neutron-lib BadRequest: `Bad <resource> request: <msg>.` */
export const badRequest = (resource: string, msg: string) =>
  err(400, 'BadRequest', `Bad ${resource} request: ${msg}.`);
export const invalidAttr = (attr: string, reason: string) =>
  httpBadRequest(`Invalid input for ${attr}. Reason: ${reason}.`);

export const policyNotAuthorized = (rule: string) =>
  err(403, 'PolicyNotAuthorized', `${rule} is disallowed by policy`);

export const notFound = {
  network: (id: string) => err(404, 'NetworkNotFound', `Network ${id} could not be found.`),
  subnet: (id: string) => err(404, 'SubnetNotFound', `Subnet ${id} could not be found.`),
  port: (id: string) => err(404, 'PortNotFound', `Port ${id} could not be found.`),
  router: (id: string) => err(404, 'RouterNotFound', `Router ${id} could not be found.`),
  floatingip: (id: string) => err(404, 'FloatingIPNotFound', `Floating IP ${id} could not be found.`),
  securityGroup: (id: string) => err(404, 'SecurityGroupNotFound', `Security group ${id} does not exist.`),
  securityGroupRule: (id: string) =>
    err(404, 'SecurityGroupRuleNotFound', `Security group rule ${id} does not exist.`),
  trunk: (id: string) => err(404, 'TrunkNotFound', `Trunk ${id} could not be found.`),
  tag: (tag: string) => err(404, 'TagNotFound', `Tag ${tag} could not be found.`),
  tagResource: (resource: string, id: string) =>
    err(404, 'TagResourceNotFound', `Resource ${resource} ${id} could not be found.`),
};

export const ipAlreadyAllocated = (ip: string, subnetId: string) =>
  err(409, 'IpAddressAlreadyAllocated', `IP address ${ip} already allocated in subnet ${subnetId}`);
export const ipGenerationFailure = (networkId: string) =>
  err(409, 'IpAddressGenerationFailure', `No more IP addresses available on network ${networkId}.`);
export const invalidIpForSubnet = (ip: string) =>
  err(400, 'InvalidIpForSubnet', `IP address ${ip} is not a valid IP for the specified subnet.`);
export const invalidIpForNetwork = (ip: string) =>
  err(
    400,
    'InvalidIpForNetwork',
    `IP address ${ip} is not a valid IP for any of the subnets on the specified network.`,
  );
export const macInUse = (networkId: string, mac: string) =>
  err(
    409,
    'MacAddressInUse',
    `Unable to complete operation for network ${networkId}. The mac address ${mac} is in use.`,
  );
export const networkInUse = (networkId: string, portIds: string[]) =>
  err(
    409,
    'NetworkInUse',
    `Unable to complete operation on network ${networkId}. There are one or more ports still in use on the network, id for these ports is: ${portIds.join(',')}.`,
  );
export const subnetInUse = (subnetId: string) =>
  err(
    409,
    'SubnetInUse',
    `Unable to complete operation on subnet ${subnetId}: One or more ports have an IP allocation from this subnet.`,
  );
export const portInUse = (portId: string, networkId: string, deviceId: string) =>
  err(
    409,
    'PortInUse',
    `Unable to complete operation on port ${portId} for network ${networkId}. Port already has an attached device ${deviceId}.`,
  );
export const revisionConflict = (wanted: number, current: number) =>
  err(412, 'RevisionNumberConstraintFailed', `Constrained to ${wanted}, but current revision is ${current}`);
export const overQuota = (resources: string[]) =>
  err(409, 'OverQuota', `Quota exceeded for resources: ${pyRepr(resources)}.`);

/** Renders any SimError as Neutron does; authentication failures come from keystonemiddleware, in Keystone's format. */
export function renderNeutronError(
  e: SimError,
  _req: SimRequest | undefined,
  authUri: () => string,
): SimResponse {
  if (e.status === 401) {
    return {
      status: 401,
      headers: { 'WWW-Authenticate': `Keystone uri="${authUri()}"` },
      body: {
        error: {
          code: 401,
          title: 'Unauthorized',
          message: 'The request you have made requires authentication.',
        },
      },
    };
  }
  let type = e.type ?? 'HTTPInternalServerError';
  let message = e.message;
  if (e.detail === 'malformed-json') {
    type = 'HTTPBadRequest';
    message = 'Body contains invalid data';
  } else if (e.status >= 500 && type === 'HTTPInternalServerError') {
    message = 'Request Failed: internal server error while processing your request.';
  }
  return { status: e.status, body: { NeutronError: { type, message, detail: '' } } };
}

/**
 * The floating IP of a load balancer's VIP, with OCCM's rules:
 * - the floating IP is found by the VIP port (so a restarted process finds what it made);
 * - one is created already associated (one Neutron call: there is no moment where it exists
 *   unattached and could leak), from the given or the first external network with a subnet,
 *   trying the candidate subnets in turn when a subnet choice is given;
 * - a requested address (loadBalancerIP) is adopted when free, refused when attached elsewhere,
 *   created when absent (Neutron's policy often forbids that to non-admins: its 403 is reported);
 * - releasing: ours (description carries the marker) are deleted unless keep-floatingip is set;
 *   anyone else's are only detached.
 * Neutron does not lock anything the way Octavia does, so this works whatever the load balancer's
 * provisioning status, as soon as the VIP port exists.
 */
import { isIPv6 } from '../../../lib/cidr.ts';
import { OpenStackHttpError } from '../../core/errors.ts';
import type { LoadBalancer } from '../../loadbalancer/v2/loadbalancers.ts';
import type { FloatingIp, FloatingIpCreateOpts } from '../../network/v2/floating-ips.ts';
import type { LoadBalancerApi } from './api.ts';
import { refusedFloatingIpInput } from './refusal.ts';
import type { Action, CallOptions, FailedReason, FloatingIpIntent, RefusedInput, Warning } from './types.ts';

export interface FloatingIpOutcome {
  floatingIp?: FloatingIp | undefined;
  actions: Action[];
  warnings: Warning[];
  /** A problem the caller must fix (or wait out); Octavia work goes on regardless. */
  failure?:
    | {
        reason: FailedReason;
        message: string;
        /** The input of the intent Neutron's answer names (the network, the subnet, the address). */
        refused?: RefusedInput | undefined;
        cloudMessage?: string | undefined;
      }
    | undefined;
}

/** Neutron's answers meaning "this subnet has no free address": the next candidate is tried. */
const EXHAUSTED = new Set(['IpAddressGenerationFailure', 'ExternalIpAddressExhausted']);

export function isOurs(
  fip: FloatingIp,
  intent: Pick<FloatingIpIntent, 'ownedMarker' | 'ownsUndescribed'>,
): boolean {
  const description = fip.description ?? '';
  if (intent.ownsUndescribed && description === '') return true;
  return intent.ownedMarker !== '' && description.includes(intent.ownedMarker);
}

/** Deletes our floating IP (unless kept) or detaches anyone else's. */
export async function releaseFloatingIp(
  api: LoadBalancerApi,
  fip: FloatingIp,
  intent: Pick<FloatingIpIntent, 'ownedMarker' | 'keep' | 'ownsUndescribed'>,
  options: CallOptions = {},
): Promise<Action> {
  const o = { signal: options.signal };
  if (isOurs(fip, intent) && !intent.keep) {
    await api.network.floatingIps.delete(fip.id, o);
    return { verb: 'delete', resource: 'floatingip', id: fip.id, name: fip.floating_ip_address };
  }
  await api.network.floatingIps.disassociate(fip.id, o);
  return { verb: 'disassociate', resource: 'floatingip', id: fip.id, name: fip.floating_ip_address };
}

/**
 * The floating IPs on the load balancer's VIP port, read ahead: the engine starts this beside its
 * read of Octavia, so the floating IP costs no round trip of its own before the next write. A
 * failure surfaces where ensureFloatingIp awaits it (and is not left unhandled meanwhile).
 */
export function readAttached(
  api: LoadBalancerApi,
  lb: LoadBalancer,
  options: CallOptions = {},
): Promise<FloatingIp[]> | undefined {
  if (!lb.vip_port_id) return undefined;
  const read = api.network.floatingIps.list({ port_id: lb.vip_port_id }, { signal: options.signal }).all();
  read.catch(() => undefined);
  return read;
}

/** `attached`: readAttached's answer when it was started earlier; read here otherwise. */
export async function ensureFloatingIp(
  api: LoadBalancerApi,
  lb: LoadBalancer,
  intent: FloatingIpIntent,
  owned: boolean,
  options: CallOptions = {},
  attached?: Promise<FloatingIp[]>,
): Promise<FloatingIpOutcome> {
  const out: FloatingIpOutcome = { actions: [], warnings: [] };
  try {
    await ensure(api, lb, intent, owned, out, options, attached);
  } catch (err) {
    // A refusal about the floating IP (policy, quota, no route to the external network) must not
    // stop the load balancer's own reconcile: it is reported and retried. Transient failures go up.
    if (!OpenStackHttpError.is(err) || err.status >= 500 || err.status === 429) throw err;
    const said = err.serviceMessage || err.message;
    out.failure = {
      reason: err.status === 403 ? 'Forbidden' : 'FloatingIpFailed',
      message: `floating IP for load balancer ${lb.id}: ${said}`,
      refused: refusedFloatingIpInput(said, intent),
      cloudMessage: said,
    };
  }
  return out;
}

async function ensure(
  api: LoadBalancerApi,
  lb: LoadBalancer,
  intent: FloatingIpIntent,
  owned: boolean,
  out: FloatingIpOutcome,
  options: CallOptions,
  readAhead?: Promise<FloatingIp[]>,
): Promise<void> {
  const o = { signal: options.signal };
  const fips = api.network.floatingIps;
  if (!lb.vip_port_id) return;
  const attached = await (readAhead ?? fips.list({ port_id: lb.vip_port_id }, o).all());

  if (!intent.external) {
    // An internal Service releases the address it had while external; a shared load balancer's
    // address belongs to its owner.
    if (owned)
      for (const fip of attached) out.actions.push(await releaseFloatingIp(api, fip, intent, options));
    return;
  }
  if (isIPv6(lb.vip_address)) {
    out.warnings.push({
      reason: 'LoadBalancerFloatingIPSkipped',
      message: `the VIP ${lb.vip_address} is IPv6: no floating IP is used`,
    });
    return;
  }
  if (!owned) {
    out.floatingIp = attached[0];
    // Giving a shared load balancer an address would expose an owner that chose to be internal.
    if (!out.floatingIp)
      out.failure = {
        reason: 'SharedInternal',
        message: `load balancer ${lb.id} is shared and has no floating IP; an external service cannot make it public`,
      };
    return;
  }

  if (intent.address) {
    const on = attached.find((f) => f.floating_ip_address === intent.address);
    if (on) {
      out.floatingIp = on;
      return;
    }
    // Another address is on the VIP: the requested one replaces it.
    for (const fip of attached) out.actions.push(await releaseFloatingIp(api, fip, intent, options));
    const [existing] = await fips.list({ floating_ip_address: intent.address }, o).all();
    if (existing) {
      if (existing.port_id && existing.port_id !== lb.vip_port_id) {
        out.failure = {
          reason: 'FloatingIpInUse',
          message: `floating IP ${intent.address} is attached to port ${existing.port_id}, not to the VIP of load balancer ${lb.id}`,
        };
        return;
      }
      out.floatingIp = await fips.associate(existing.id, lb.vip_port_id, o);
      out.actions.push({ verb: 'associate', resource: 'floatingip', id: existing.id, name: intent.address });
      return;
    }
    const networkId = await floatingNetwork(api, intent, out, options);
    if (!networkId) return;
    await create(
      api,
      lb,
      intent,
      { floating_network_id: networkId, floating_ip_address: intent.address },
      out,
      o,
    );
    return;
  }

  if (attached[0]) {
    out.floatingIp = attached[0];
    return;
  }
  const networkId = await floatingNetwork(api, intent, out, options);
  if (!networkId) return;
  const subnets = await candidateSubnets(api, networkId, intent, options);
  if (subnets.length === 0) {
    out.failure = {
      reason: 'FloatingIpFailed',
      message: `no subnet of floating network ${networkId} matches the floating subnet setting`,
    };
    return;
  }
  for (const subnetId of subnets) {
    try {
      await create(
        api,
        lb,
        intent,
        { floating_network_id: networkId, ...(subnetId ? { subnet_id: subnetId } : {}) },
        out,
        o,
      );
      return;
    } catch (err) {
      if (!(OpenStackHttpError.is(err) && err.errorType !== undefined && EXHAUSTED.has(err.errorType)))
        throw err;
    }
  }
  out.failure = {
    reason: 'FloatingIpFailed',
    message: `no free address in the candidate subnets of floating network ${networkId}`,
  };
}

async function create(
  api: LoadBalancerApi,
  lb: LoadBalancer,
  intent: FloatingIpIntent,
  opts: FloatingIpCreateOpts,
  out: FloatingIpOutcome,
  o: CallOptions,
): Promise<void> {
  const fip = await api.network.floatingIps.create(
    { ...opts, port_id: lb.vip_port_id, description: intent.description },
    o,
  );
  out.floatingIp = fip;
  out.actions.push({ verb: 'create', resource: 'floatingip', id: fip.id, name: fip.floating_ip_address });
}

/** The configured network, or OCCM's autodetect: the first external network that has a subnet. */
async function floatingNetwork(
  api: LoadBalancerApi,
  intent: FloatingIpIntent,
  out: FloatingIpOutcome,
  options: CallOptions,
): Promise<string | undefined> {
  if (intent.networkId) return intent.networkId;
  const external = await api.network.networks
    .list({ 'router:external': true }, { signal: options.signal })
    .all();
  const found = external.find((n) => n.subnets.length > 0);
  if (!found)
    out.warnings.push({
      reason: 'LoadBalancerForcedInternal',
      message: 'no external network with a subnet was found: the load balancer stays internal',
    });
  return found?.id;
}

/** Subnet ids to try in order; `[undefined]` lets Neutron choose. */
async function candidateSubnets(
  api: LoadBalancerApi,
  networkId: string,
  intent: FloatingIpIntent,
  options: CallOptions,
): Promise<(string | undefined)[]> {
  const choice = intent.subnet;
  if (!choice) return [undefined];
  if ('id' in choice) return [choice.id];
  const subnets = await api.network.subnets
    .list({ network_id: networkId, ...choice.tags }, { signal: options.signal })
    .all();
  return subnets.filter((s) => s.ip_version === 4 && (!choice.match || choice.match(s))).map((s) => s.id);
}

/**
 * Floating IPs we created that no longer hang on anything: left behind when a load balancer was
 * deleted out of band. Found by our exact description, deleted unless kept.
 */
export async function releaseOrphanFloatingIps(
  api: LoadBalancerApi,
  intent: FloatingIpIntent,
  options: CallOptions = {},
): Promise<Action[]> {
  if (intent.keep || !intent.description.includes(intent.ownedMarker) || intent.ownedMarker === '') return [];
  const o = { signal: options.signal };
  const orphans = (await api.network.floatingIps.list({ description: intent.description }, o).all()).filter(
    (f) => !f.port_id && isOurs(f, intent),
  );
  const actions: Action[] = [];
  for (const fip of orphans) {
    await api.network.floatingIps.delete(fip.id, o);
    actions.push({ verb: 'delete', resource: 'floatingip', id: fip.id, name: fip.floating_ip_address });
  }
  return actions;
}

/**
 * The CCM's trust bundle (upstream CCCMO's trusted CA bundle controller): the CA certificates of
 * the Proxy's `trustedCA` ConfigMap and of the cloud config's `ca-bundle.pem` (where the installer
 * puts the cloud's CA, which the Proxy does not always carry), in front of the system bundle. A
 * source that is not valid PEM is left out with a warning, so the CCM still trusts the rest; an
 * invalid system bundle is a problem (nothing sensible can be built). The CCM's pod mounts the
 * result over the system trust path: the operator must bring the cloud's CA itself, because the
 * network operator's trust injection only happens once Nodes are initialized, which needs the CCM.
 */
import { checkPemBundle } from '../../lib/pem.ts';

export interface TrustSource {
  /** For messages: `ConfigMap openshift-config/user-ca-bundle key ca-bundle.crt`. */
  what: string;
  pem: string;
}

export interface TrustBundleInput {
  system: TrustSource;
  proxy?: TrustSource | undefined;
  cloudConfig?: TrustSource | undefined;
}

/** A source left out, and why. */
export interface TrustWarning {
  source: 'proxy' | 'cloudConfig';
  message: string;
}

export type TrustBundle =
  { ok: true; bundle: string; warnings: TrustWarning[] } | { ok: false; problem: string };

export function mergeTrustBundle(input: TrustBundleInput): TrustBundle {
  const system = checkPemBundle(input.system.pem);
  if (!system.ok)
    return { ok: false, problem: `the system trust bundle (${input.system.what}): ${system.problem}` };
  const warnings: TrustWarning[] = [];
  const usable = (name: TrustWarning['source']): string | undefined => {
    const source = input[name];
    if (!source) return undefined;
    const check = checkPemBundle(source.pem);
    if (check.ok) return source.pem;
    warnings.push({
      source: name,
      message: `${source.what} is left out of the trust bundle: ${check.problem}`,
    });
    return undefined;
  };
  let bundle = input.system.pem;
  const proxy = usable('proxy');
  if (proxy) bundle = `${proxy}\n${bundle}`;
  const cloud = usable('cloudConfig');
  // The installer often puts the same CA in both places: once is enough.
  if (cloud && cloud !== proxy) bundle = `${cloud}\n${bundle}`;
  return { ok: true, bundle, warnings };
}

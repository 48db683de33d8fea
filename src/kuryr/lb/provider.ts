/**
 * Octavia providers as upstream Kuryr tells them apart (controller/handlers/loadbalancer.py): the
 * default ones (`amphora`, `octavia`, or none named) and the others (`ovn`). A load balancer whose
 * recorded provider is of the other kind than the spec's is released and created again, since
 * Octavia cannot change a load balancer's provider.
 */

const DEFAULT_PROVIDERS: ReadonlySet<string> = new Set(['octavia', 'amphora']);

export function isOvn(provider: string | undefined): boolean {
  return provider === 'ovn';
}

function isDefault(provider: string | undefined): boolean {
  return !provider || DEFAULT_PROVIDERS.has(provider);
}

/** Upstream's amphora → ovn upgrade and ovn → amphora downgrade: the load balancer must be remade. */
export function providerChanged(recorded: string | undefined, wanted: string | undefined): boolean {
  if (!recorded) return false;
  return isDefault(recorded) !== isDefault(wanted);
}

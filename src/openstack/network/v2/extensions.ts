/**
 * Neutron API extensions: what this deployment's plugins add (`trunk`, `revision-if-match`,
 * `standard-attr-tag`, `fip-port-details`, …). https://docs.openstack.org/api-ref/network/v2/#extensions
 */
import type { CallOptions } from '../../core/call-options.ts';
import { raceSignal } from '../../../lib/clock.ts';
import type { ServiceClient } from '../../core/service-client.ts';

export interface Extension {
  alias: string;
  name: string;
  description: string;
  updated: string;
  links: unknown[];
}

/** `GET /v2.0/extensions` (one page: Neutron does not paginate it). */
export async function listExtensions(sc: ServiceClient, options: CallOptions = {}): Promise<Extension[]> {
  const res = await sc.request<{ extensions: Extension[] }>({
    method: 'GET',
    path: 'extensions',
    label: 'network_extension_list',
    signal: options.signal,
  });
  return res.body.extensions;
}

/**
 * The extension list read once and kept: a deployment's extensions change only with an upgrade, and a
 * controller asks `has('trunk')` on every reconcile. A failed read is not kept, so the next call asks again.
 */
export class ExtensionCache {
  private readonly sc: ServiceClient;
  private aliases: Promise<ReadonlySet<string>> | undefined;

  constructor(sc: ServiceClient) {
    this.sc = sc;
  }

  /** True when the deployment has the extension with this alias. */
  async has(alias: string, options: CallOptions = {}): Promise<boolean> {
    return (await this.all(options)).has(alias);
  }

  /** Every alias, read once. The signal bounds this caller's wait, not the shared read. */
  all(options: CallOptions = {}): Promise<ReadonlySet<string>> {
    if (!this.aliases) {
      // The shared read gets no caller's signal: one caller giving up must not fail the others.
      const read = listExtensions(this.sc).then((list) => new Set(list.map((e) => e.alias)));
      read.catch(() => {
        if (this.aliases === read) this.aliases = undefined;
      });
      this.aliases = read;
    }
    return raceSignal(this.aliases, options.signal);
  }

  /** Forgets the list (after a cloud upgrade). */
  clear(): void {
    this.aliases = undefined;
  }
}

/**
 * The Cinder microversion of a client, negotiated once: 3.42 (extending an attached volume, which
 * CSI resize needs) or the cloud's maximum if lower. Without a header Cinder answers as 3.0.
 */
import { requireApiVersion, type ApiVersion } from '../../core/api-version.ts';
import { raceSignal } from '../../core/clock.ts';
import { Pager, type Page } from '../../core/pagination.ts';
import type { ServiceClient } from '../../core/service-client.ts';

export const BLOCK_STORAGE_MICROVERSION = '3.42';

const negotiations = new WeakMap<ServiceClient, Promise<string>>();

/** The microversion calls on `sc` use: the one set on it, else negotiated once (single-flight per ServiceClient). */
export async function blockStorageMicroversion(sc: ServiceClient, signal?: AbortSignal): Promise<ApiVersion> {
  if (sc.microversion !== undefined) return requireApiVersion(sc.microversion);
  let flight = negotiations.get(sc);
  if (!flight) {
    // No caller's signal on the shared read: one caller giving up must not fail the others.
    flight = sc.negotiateMicroversion(BLOCK_STORAGE_MICROVERSION);
    negotiations.set(sc, flight);
    flight.catch(() => negotiations.delete(sc));
  }
  return requireApiVersion(await raceSignal(flight, signal));
}

/** A Pager that settles the microversion before its first page. */
export class BlockStoragePager<T> extends Pager<T> {
  private readonly sc: ServiceClient;
  private readonly signal: AbortSignal | undefined;

  constructor(options: ConstructorParameters<typeof Pager<T>>[0]) {
    super(options);
    this.sc = options.client;
    this.signal = options.signal;
  }

  override async *pages(
    options: { signal?: AbortSignal | undefined } = {},
  ): AsyncGenerator<Page<T>, void, undefined> {
    await blockStorageMicroversion(this.sc, options.signal ?? this.signal);
    yield* super.pages(options);
  }
}

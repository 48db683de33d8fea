/**
 * The KuryrLoadBalancer's parts this folder reads and writes, in upstream's spelling, as the
 * published API declares them (src/kuryr/api/kinds.ts, from kuryrloadbalancer.yaml).
 */
import type { KuryrLoadBalancer } from '../api/index.ts';

export type { KuryrLoadBalancer };
export type KlbSpec = NonNullable<KuryrLoadBalancer['spec']>;
export type KlbStatus = NonNullable<KuryrLoadBalancer['status']>;
export type KlbEndpointSlice = NonNullable<KlbSpec['endpointSlices']>[number];
export type KlbEndpoint = NonNullable<KlbEndpointSlice['endpoints']>[number];
export type KlbPort = NonNullable<KlbSpec['ports']>[number];

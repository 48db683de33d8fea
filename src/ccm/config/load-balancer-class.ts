/**
 * `[LoadBalancerClass "name"]` sections (OCCM's LBClass): named VIP, member and floating network
 * choices a Service selects with the `loadbalancer.openstack.org/class` annotation. Class names are
 * case-sensitive, as gcfg subsection names are.
 */
import { gcfgSection, gcfgSubsections, gcfgWhere } from '../../lib/gcfg.ts';
import { defined } from '../defined.ts';
import { SectionReader, type ReadContext } from './section-reader.ts';
import type { LoadBalancerClass } from './types.ts';

const KEYS = [
  'floating-network-id',
  'floating-subnet-id',
  'floating-subnet',
  'floating-subnet-tags',
  'network-id',
  'subnet-id',
  'member-subnet-id',
];

export function readLoadBalancerClasses(ctx: ReadContext): Map<string, LoadBalancerClass> {
  const nameless = gcfgSection(ctx.document, 'LoadBalancerClass');
  if (nameless) {
    ctx.problems.add(
      gcfgWhere(ctx.document, nameless.line),
      `[${nameless.rawName}]`,
      undefined,
      'a load balancer class needs a name',
      `write the header as [${nameless.rawName} "name"] and select it with the annotation loadbalancer.openstack.org/class: name`,
    );
  }
  const classes = new Map<string, LoadBalancerClass>();
  for (const section of gcfgSubsections(ctx.document, 'LoadBalancerClass')) {
    const r = new SectionReader(ctx, section, '');
    r.checkKeys(KEYS);
    const name = section.subsection!;
    classes.set(name, {
      name,
      ...defined({
        floatingNetworkId: r.text('floating-network-id'),
        floatingSubnetId: r.text('floating-subnet-id'),
        floatingSubnet: r.subnetPattern('floating-subnet'),
        floatingSubnetTags: r.text('floating-subnet-tags'),
        networkId: r.text('network-id'),
        subnetId: r.text('subnet-id'),
        memberSubnetId: r.text('member-subnet-id'),
      }),
    });
  }
  return classes;
}

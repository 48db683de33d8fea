/**
 * The sections of cloud.conf as a whole: which ones the CCM reads, the one OCCM accepts and ignores
 * (`[BlockStorage]`), and unknown ones, all reported where OCCM's `gcfg.FatalOnly` would drop them
 * silently.
 */
import { closest } from '../../lib/config.ts';
import { gcfgSection, gcfgWhere } from '../../lib/gcfg.ts';
import { warning } from '../../openstack/config/finalize.ts';
import { SectionReader, sectionLabel, type ReadContext } from './section-reader.ts';
import type { RouteOptions } from './types.ts';

const SECTIONS = [
  'Global',
  'LoadBalancer',
  'LoadBalancerClass',
  'Networking',
  'Route',
  'Metadata',
  'BlockStorage',
];

/** Warns about unknown sections and about subsections where only [LoadBalancerClass] takes them. */
export function checkSections(ctx: ReadContext): void {
  const known = SECTIONS.map((s) => s.toLowerCase());
  for (const section of ctx.document.sections) {
    const at = gcfgWhere(ctx.document, section.line);
    const label = sectionLabel(section);
    if (!known.includes(section.name)) {
      const hint = closest(section.rawName, SECTIONS);
      ctx.warnings.push(
        warning(at, '', `unknown section ${label}, ignored${hint ? ` (did you mean [${hint}]?)` : ''}`),
      );
    } else if (section.subsection !== undefined && section.name !== 'loadbalancerclass') {
      ctx.warnings.push(
        warning(
          at,
          '',
          `${label} is ignored: only [LoadBalancerClass "name"] takes a name; write [${section.rawName}]`,
        ),
      );
    }
  }
}

/** `[Route] router-id`: the Neutron router the route controller writes the pods' routes to. */
export function readRouteSection(ctx: ReadContext): RouteOptions {
  const r = new SectionReader(ctx, gcfgSection(ctx.document, 'Route'), '[Route]');
  r.checkKeys(['router-id']);
  const routerId = r.text('router-id');
  return routerId === undefined ? {} : { routerId };
}

/** `[BlockStorage]`: volumes moved to the Cinder CSI driver; OCCM ignores the section without a word. */
export function checkBlockStorageSection(ctx: ReadContext): void {
  const section = gcfgSection(ctx.document, 'BlockStorage');
  if (!section) return;
  ctx.warnings.push(
    warning(
      gcfgWhere(ctx.document, section.line),
      '',
      '[BlockStorage] is ignored: the CCM does not manage volumes (the Cinder CSI driver does); remove the section',
    ),
  );
}

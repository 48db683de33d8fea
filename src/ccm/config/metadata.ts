/**
 * `[Metadata]`: OCCM validates `search-order` at startup (CheckMetadataSearchOrder) although its node
 * code reads only the Nova and Neutron APIs, so do we. `request-timeout` is read with `[Global]`
 * (src/openstack/config/cloud-conf.ts), where it bounds every OpenStack call.
 */
import type { SectionReader } from './section-reader.ts';
import type { MetadataOptions, MetadataSource } from './types.ts';

const KEYS = ['search-order', 'request-timeout'];
const SOURCES: readonly MetadataSource[] = ['configDrive', 'metadataService'];
const FIX = 'write search-order = configDrive,metadataService (one or both, in the order to try)';

export function readMetadataSection(r: SectionReader): MetadataOptions {
  r.checkKeys(KEYS);
  const text = r.text('search-order');
  if (text === undefined) return { searchOrder: [...SOURCES] };
  const entry = r.entry('search-order')!;
  const items = text.split(',').map((s) => s.trim());
  if (items.length > 2) {
    r.problem(entry, text, 'more than 2 elements', FIX);
    return { searchOrder: [...SOURCES] };
  }
  const bad = items.find((i) => !(SOURCES as readonly string[]).includes(i));
  if (bad !== undefined) {
    r.problem(entry, text, `"${bad}" is neither configDrive nor metadataService`, FIX);
    return { searchOrder: [...SOURCES] };
  }
  return { searchOrder: items as MetadataSource[] };
}

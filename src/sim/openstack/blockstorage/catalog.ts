/** What a devstack Cinder offers besides volumes: its volume types and its one availability zone. */
import { uuid } from '../core/ids.ts';

export interface VolumeType {
  id: string;
  name: string;
  description: string | null;
  is_public: boolean;
  extra_specs: Record<string, string>;
  qos_specs_id: string | null;
}

export const AVAILABILITY_ZONE = 'nova';

/** The backend devstack's LVM driver reports; `host` of scheduled volumes. */
export const VOLUME_HOST = 'compute-0@lvmdriver-1#lvmdriver-1';

/** Extra specs only admins read (cinder's "read_sensitive" policy): they name backends. */
const SENSITIVE_SPECS = new Set(['volume_backend_name', 'RESKEY:availability_zones', 'replication_enabled']);

export function seedVolumeTypes(): VolumeType[] {
  return [
    {
      id: uuid(),
      name: '__DEFAULT__',
      description: 'Default Volume Type',
      is_public: true,
      extra_specs: {},
      qos_specs_id: null,
    },
    {
      id: uuid(),
      name: 'lvmdriver-1',
      description: null,
      is_public: true,
      extra_specs: { volume_backend_name: 'lvmdriver-1' },
      qos_specs_id: null,
    },
  ];
}

/** devstack sets `default_volume_type = lvmdriver-1`. */
export const DEFAULT_TYPE_NAME = 'lvmdriver-1';

export function volumeTypeView(t: VolumeType, isAdmin: boolean): Record<string, unknown> {
  const extraSpecs = isAdmin
    ? t.extra_specs
    : Object.fromEntries(Object.entries(t.extra_specs).filter(([k]) => !SENSITIVE_SPECS.has(k)));
  const out: Record<string, unknown> = {
    id: t.id,
    name: t.name,
    is_public: t.is_public,
    description: t.description,
    extra_specs: extraSpecs,
  };
  if (isAdmin) out.qos_specs_id = t.qos_specs_id;
  out['os-volume-type-access:is_public'] = t.is_public;
  return out;
}

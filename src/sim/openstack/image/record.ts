/** The image record Glance keeps, who is asking, and which attributes a client may write. */
import type { AuthContext } from '../core/types.ts';
import { forbidden } from './errors.ts';
import { READ_ONLY, RESERVED } from './schema.ts';

export interface ImageRecord {
  id: string;
  name: string | null;
  disk_format: string | null;
  container_format: string | null;
  visibility: string;
  size: number | null;
  virtual_size: number | null;
  status: string;
  checksum: string | null;
  protected: boolean;
  min_ram: number;
  min_disk: number;
  owner: string | null;
  os_hidden: boolean;
  os_hash_algo: string | null;
  os_hash_value: string | null;
  created_at: string;
  updated_at: string;
  tags: string[];
  /** Free-form properties (os_distro, hw_disk_bus…); Glance prints them before the base ones. */
  properties: Record<string, string>;
  /** Creation order, the tie-break of the newest-first default listing. */
  seq: number;
  /** Data was uploaded (or seeded): Glance then shows `stores`. */
  stored: boolean;
}

export interface Viewer {
  projectId: string | undefined;
  isAdmin: boolean;
}

export const viewerOf = (auth: AuthContext | undefined): Viewer => ({
  projectId: auth?.projectId,
  isAdmin: auth?.isAdmin ?? false,
});

/** Attributes a client may set on create and PATCH besides free-form properties. */
export const BASE_WRITABLE = new Set([
  'id',
  'name',
  'visibility',
  'protected',
  'os_hidden',
  'owner',
  'container_format',
  'disk_format',
  'min_ram',
  'min_disk',
  'tags',
]);

export function checkWritable(key: string): void {
  if (READ_ONLY.has(key)) throw forbidden(`Attribute '${key}' is read-only.`);
  if (RESERVED.has(key)) throw forbidden(`Attribute '${key}' is reserved.`);
}

export function unique(items: string[]): string[] {
  return [...new Set(items)];
}

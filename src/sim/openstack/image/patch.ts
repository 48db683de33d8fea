/** Glance's `application/openstack-images-v2.1-json-patch` operations on an image record. */
import { SimError } from '../core/errors.ts';
import { forbidden } from './errors.ts';
import { BASE_WRITABLE, checkWritable, unique, type ImageRecord, type Viewer } from './record.ts';
import { validateImage } from './schema.ts';

/** One RFC 6902 operation as Glance's `application/openstack-images-v2.1-json-patch` supports them. */
export function applyOperation(viewer: Viewer, img: ImageRecord, raw: unknown): void {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new SimError(400, 'Operations must be JSON objects.', { type: 'BadRequest' });
  }
  const op = raw as { op?: unknown; path?: unknown; value?: unknown };
  if (op.op !== 'add' && op.op !== 'replace' && op.op !== 'remove') {
    throw new SimError(
      400,
      `Operation objects must contain exactly one member named "add", "remove", or "replace".`,
      {
        type: 'BadRequest',
      },
    );
  }
  if (typeof op.path !== 'string') {
    throw new SimError(400, 'Unable to find `path` in operation object.', { type: 'BadRequest' });
  }
  if (!op.path.startsWith('/')) {
    throw new SimError(400, `Pointer \`${op.path}\` does not start with "/".`, { type: 'BadRequest' });
  }
  const segments = op.path
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  const attr = segments[0] ?? '';
  if (segments.length > 1 && !(attr === 'tags' && segments.length === 2)) {
    throw new SimError(400, 'Nested paths are not allowed', { type: 'BadRequest' });
  }
  checkWritable(attr);
  if (attr === 'id') throw forbidden(`Attribute 'id' is read-only.`);
  if (op.op !== 'remove' && !('value' in op)) {
    throw new SimError(400, 'Operation objects must contain a "value" member.', { type: 'BadRequest' });
  }
  if (attr === 'tags' && segments.length === 2) {
    // `/tags/-` appends one tag, as the generic JSON-patch add does.
    if (op.op !== 'add') throw new SimError(400, 'Nested paths are not allowed', { type: 'BadRequest' });
    validateImage({ tags: [op.value] });
    if (!img.tags.includes(op.value as string)) img.tags.push(op.value as string);
    return;
  }
  if (BASE_WRITABLE.has(attr)) {
    if (op.op === 'remove') throw forbidden(`Properties ${attr} cannot be removed.`);
    validateImage({ [attr]: op.value });
    if (attr === 'visibility' && op.value === 'public' && !viewer.isAdmin) {
      throw forbidden('You are not authorized to complete publicize_image action.');
    }
    if (attr === 'owner' && !viewer.isAdmin)
      throw forbidden("You are not permitted to modify 'owner' on this image.");
    if (attr === 'tags') img.tags = unique(op.value as string[]);
    else (img as unknown as Record<string, unknown>)[attr] = op.value;
    return;
  }
  const exists = Object.hasOwn(img.properties, attr);
  if (op.op === 'remove' || op.op === 'replace') {
    if (!exists) throw new SimError(409, `Property ${attr} does not exist.`, { type: 'Conflict' });
  }
  if (op.op === 'remove') {
    delete img.properties[attr];
    return;
  }
  validateImage({ [attr]: op.value });
  img.properties[attr] = op.value as string;
}

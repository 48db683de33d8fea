/**
 * The tags sub-resource of the API working group's guideline, which Neutron and Nova follow alike:
 * `<collection>/<id>/tags` (list, replace, remove all) and `…/tags/<tag>` (check, add, remove).
 * A service names the object and its metrics prefix; its own module adds what differs (Nova's
 * microversion gate). https://specs.openstack.org/openstack/api-wg/guidelines/tags.html
 */
import type { CallOptions } from './call-options.ts';
import type { ServiceClient } from './service-client.ts';

/** The object whose tags a call reads or writes. */
export interface TaggedObject {
  /** The collection path: `ports`, `security-groups`, `servers`. */
  collection: string;
  id: string;
  /** The metrics resource name; each call adds `_tag_list`, `_tag_add`, …: `port`, `server`. */
  label: string;
}

const base = (o: TaggedObject) => `${o.collection}/${encodeURIComponent(o.id)}/tags`;
const one = (o: TaggedObject, tag: string) => `${base(o)}/${encodeURIComponent(tag)}`;

export const objectTags = {
  /** `GET …/tags`. */
  async list(sc: ServiceClient, o: TaggedObject, options: CallOptions = {}): Promise<string[]> {
    const res = await sc.request<{ tags: string[] }>({
      method: 'GET',
      path: base(o),
      label: `${o.label}_tag_list`,
      signal: options.signal,
    });
    return res.body.tags;
  },

  /** `PUT …/tags` with the whole list: the object ends with exactly these tags; returns them. */
  async replace(
    sc: ServiceClient,
    o: TaggedObject,
    tags: readonly string[],
    options: CallOptions = {},
  ): Promise<string[]> {
    const res = await sc.request<{ tags: string[] }>({
      method: 'PUT',
      path: base(o),
      body: { tags },
      label: `${o.label}_tag_replace`,
      signal: options.signal,
    });
    return res.body.tags;
  },

  /** `PUT …/tags/{tag}` → 201 (added) or 204 (already there): adding a tag twice is no error. */
  async add(sc: ServiceClient, o: TaggedObject, tag: string, options: CallOptions = {}): Promise<void> {
    await sc.request({
      method: 'PUT',
      path: one(o, tag),
      label: `${o.label}_tag_add`,
      signal: options.signal,
      expect: [201, 204],
      responseType: 'bytes',
    });
  },

  /** `DELETE …/tags/{tag}`; a tag the object does not have is a 404. */
  async remove(sc: ServiceClient, o: TaggedObject, tag: string, options: CallOptions = {}): Promise<void> {
    await sc.request({
      method: 'DELETE',
      path: one(o, tag),
      label: `${o.label}_tag_delete`,
      signal: options.signal,
      expect: [204],
    });
  },

  /** `DELETE …/tags`: removes every tag. */
  async removeAll(sc: ServiceClient, o: TaggedObject, options: CallOptions = {}): Promise<void> {
    await sc.request({
      method: 'DELETE',
      path: base(o),
      label: `${o.label}_tag_delete_all`,
      signal: options.signal,
      expect: [204],
    });
  },

  /** `GET …/tags/{tag}`: true when the object has the tag (204), false when not (404). */
  async has(sc: ServiceClient, o: TaggedObject, tag: string, options: CallOptions = {}): Promise<boolean> {
    const res = await sc.request({
      method: 'GET',
      path: one(o, tag),
      label: `${o.label}_tag_get`,
      signal: options.signal,
      expect: [204, 404],
      responseType: 'bytes',
    });
    return res.status === 204;
  },
};

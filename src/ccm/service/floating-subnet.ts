/**
 * Which subnet of the floating network a load balancer's floating IP comes from (OCCM's
 * floatingSubnetSpec, `loadbalancer_subnet_match.go`): a subnet id, or a name pattern and/or a tag
 * filter, the matching subnets being tried in turn until one has a free address.
 *
 * - name pattern: a glob (`*`, `?`, `{a,b}`, `[…]`), or `~` and a regular expression; `!` first negates.
 *   The pattern must match the whole name.
 * - tags: comma-separated; `&` first means all must be present, else any; `!` first negates.
 *   They go into the subnet list query (tags, tags-any, not-tags, not-tags-any).
 */

export interface SubnetNamePattern {
  text: string;
  negate: boolean;
  regex: RegExp;
}

export interface SubnetTagFilter {
  tags: string[];
  negate: boolean;
  all: boolean;
}

export type FloatingSubnetSpec =
  { kind: 'id'; subnetId: string } | { kind: 'match'; name?: SubnetNamePattern; tags?: SubnetTagFilter };

/** Builds the spec; throws an Error with OCCM's wording when a `~regex` does not compile. */
export function floatingSubnetSpec(fields: {
  subnetId?: string | undefined;
  subnet?: string | undefined;
  tags?: string | undefined;
}): FloatingSubnetSpec | undefined {
  if (fields.subnetId) return { kind: 'id', subnetId: fields.subnetId };
  if (!fields.subnet && !fields.tags) return undefined;
  return {
    kind: 'match',
    ...(fields.subnet ? { name: subnetNamePattern(fields.subnet) } : {}),
    ...(fields.tags ? { tags: subnetTagFilter(fields.tags) } : {}),
  };
}

export function subnetNamePattern(text: string): SubnetNamePattern {
  const negate = text.startsWith('!');
  const pattern = negate ? text.slice(1) : text;
  let regex: RegExp;
  if (pattern.startsWith('~')) {
    try {
      regex = new RegExp(pattern.slice(1), 'u');
    } catch (err) {
      throw new Error(
        `invalid subnet regexp pattern ${JSON.stringify(pattern.slice(1))}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  } else {
    regex = new RegExp(globToRegExp(pattern), 'u');
  }
  return { text, negate, regex };
}

/** OCCM's regexpNameMatcher: the leftmost match must be the whole name (so "" matches when nothing does). */
export function matchesSubnetName(pattern: SubnetNamePattern, name: string): boolean {
  const found = pattern.regex.exec(name)?.[0] ?? '';
  return (found === name) !== pattern.negate;
}

export function subnetTagFilter(text: string): SubnetTagFilter {
  let rest = text;
  const negate = rest.startsWith('!');
  if (negate) rest = rest.slice(1);
  const all = rest.startsWith('&');
  if (all) rest = rest.slice(1);
  return { tags: rest.split(',').map((t) => t.trim()), negate, all };
}

/** The Neutron subnet list filter OCCM's tweakListOpts sends for a tag filter. */
export function subnetTagQuery(filter: SubnetTagFilter): Record<string, string> {
  const tags = filter.tags.join(',');
  if (filter.all) return filter.negate ? { 'not-tags-any': tags } : { tags };
  return filter.negate ? { 'not-tags': tags } : { 'tags-any': tags };
}

/** The same filter applied to a subnet in memory (OCCM's subnetTagMatcher). */
export function matchesSubnetTags(filter: SubnetTagFilter, subnetTags: readonly string[]): boolean {
  for (const tag of filter.tags) {
    const found = subnetTags.includes(tag);
    if (found && !filter.all) return !filter.negate;
    if (!found && filter.all) return filter.negate;
  }
  return filter.negate !== filter.all;
}

/** godo's Globexp, the glob dialect OCCM uses for subnet names. */
export function globToRegExp(glob: string): string {
  let re = '^';
  let inGroup = false;
  const chars = Array.from(glob);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const rest = chars.slice(i).join('');
    switch (c) {
      case '\\':
      case '$':
      case '^':
      case '+':
      case '.':
      case '(':
      case ')':
      case '=':
      case '!':
      case '|':
        re += `\\${c}`;
        break;
      case '/':
        re += '\\/';
        if (rest.startsWith('/**/')) {
          re += '(?:[.{}\\w\\-\\ ]+\\/)*';
          i += 3;
        } else if (rest === '/**') {
          re += '.*';
          i += 2;
        }
        break;
      case '?':
        re += '.';
        break;
      case '[':
      case ']':
        re += c;
        break;
      case '{':
        if (chars[i + 1] === '{') {
          re += '\\{';
          i++;
        } else {
          inGroup = true;
          re += '(';
        }
        break;
      case '}':
        if (inGroup) {
          inGroup = false;
          re += ')';
        } else {
          re += '\\}';
        }
        break;
      case ',':
        re += inGroup ? '|' : ',';
        break;
      case '*':
        if (rest.startsWith('**/')) {
          re += '(?:[.{}\\w\\-\\ ]+\\/)*';
          i += 2;
        } else {
          re += '[^/]*';
        }
        break;
      default:
        re += /[\w\s-]/u.test(c) ? c : `\\u{${c.codePointAt(0)!.toString(16)}}`;
    }
  }
  return `${re}$`;
}

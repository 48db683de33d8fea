/**
 * Nova filters servers by name with a regular expression (sqlite's REGEXP is Python's re.search;
 * the `ip` filter uses re.match). Python and JavaScript regexes differ in a few spellings; this
 * translates those so `name=^web-[0-9]+$` behaves as it does on a real cloud.
 */

const INLINE_FLAGS: Readonly<Record<string, string>> = { i: 'i', m: 'm', s: 's' };

/** Returns undefined when the pattern is not a valid regular expression. */
export function pythonRegex(pattern: string, anchoredAtStart = false): RegExp | undefined {
  let src = pattern;
  let flags = '';
  // Global inline flags at the start: (?i), (?ims)...
  const lead = /^\(\?([aiLmsux]+)\)/.exec(src);
  if (lead?.[1]) {
    for (const f of lead[1]) {
      const js = INLINE_FLAGS[f];
      if (js && !flags.includes(js)) flags += js;
    }
    src = src.slice(lead[0].length);
  }
  let out = '';
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i]!;
    if (ch === '\\') {
      const next = src[i + 1];
      if (next === undefined) return undefined;
      if (!inClass && next === 'A') out += '^';
      else if (!inClass && next === 'Z') out += '$';
      else out += ch + next;
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      out += ch;
      // A leading ']' (or '^]') is a literal in Python.
      if (src[i + 1] === '^') {
        out += '^';
        i++;
      }
      if (src[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (src.startsWith('(?P<', i)) {
      out += '(?<';
      i += 3;
      continue;
    }
    if (src.startsWith('(?P=', i)) {
      const end = src.indexOf(')', i);
      if (end < 0) return undefined;
      out += `\\k<${src.slice(i + 4, end)}>`;
      i = end;
      continue;
    }
    // Python's `$` also matches before a trailing newline.
    if (ch === '$' && !flags.includes('m')) {
      out += '(?=\\n?$)';
      continue;
    }
    out += ch;
  }
  try {
    return new RegExp(anchoredAtStart ? `^(?:${out})` : out, flags);
  } catch {
    return undefined;
  }
}

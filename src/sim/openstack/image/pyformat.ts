/**
 * Python's `repr` and `pprint.pformat(width=72)` for JSON values. Glance's schema errors are
 * jsonschema's `str(ValidationError)`, which embeds both, and clients display them verbatim.
 */

export type PyValue = null | boolean | number | string | PyValue[] | { [key: string]: PyValue };

const WIDTH = 72;

export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyFloat(value);
  if (typeof value === 'string') return pyStr(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = sortedEntries(value as Record<string, unknown>);
    return `{${entries.map(([k, v]) => `${pyStr(k)}: ${pyRepr(v)}`).join(', ')}}`;
  }
  return 'None';
}

/** `pprint.pformat(value, width=72)`: dicts sorted by key, one item a line once a container overflows. */
export function pformat(value: unknown): string {
  const out: string[] = [];
  format(value, out, 0, 0, 1);
  return out.join('');
}

function format(value: unknown, out: string[], indent: number, allowance: number, level: number): void {
  const rep = pyRepr(value);
  if (rep.length <= WIDTH - indent - allowance) {
    out.push(rep);
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    formatItems(value, out, indent, allowance + 1, level);
    out.push(']');
  } else if (value !== null && typeof value === 'object') {
    out.push('{');
    const entries = sortedEntries(value as Record<string, unknown>);
    const inner = indent + 1;
    entries.forEach(([key, item], i) => {
      const last = i === entries.length - 1;
      const keyRep = pyStr(key);
      out.push(`${keyRep}: `);
      format(item, out, inner + keyRep.length + 2, last ? allowance + 1 : 1, level + 1);
      if (!last) out.push(`,\n${' '.repeat(inner)}`);
    });
    out.push('}');
  } else if (typeof value === 'string') {
    formatString(value, out, indent, allowance, level);
  } else {
    out.push(rep);
  }
}

function formatItems(
  items: readonly unknown[],
  out: string[],
  indent: number,
  allowance: number,
  level: number,
): void {
  const inner = indent + 1;
  items.forEach((item, i) => {
    if (i > 0) out.push(`,\n${' '.repeat(inner)}`);
    format(item, out, inner, i === items.length - 1 ? allowance : 1, level + 1);
  });
}

/** pprint splits a long string into adjacent literals at whitespace; parentheses only at top level. */
function formatString(value: string, out: string[], indent: number, allowance: number, level: number): void {
  const lines = value.split(/(?<=\n)/);
  let ind = indent;
  let allow = allowance;
  if (level === 1) {
    ind += 1;
    allow += 1;
  }
  const maxWidth = WIDTH - ind;
  let maxWidth1 = maxWidth;
  const chunks: string[] = [];
  lines.forEach((line, i) => {
    const rep = pyStr(line);
    if (i === lines.length - 1) maxWidth1 -= allow;
    if (rep.length <= maxWidth1) {
      chunks.push(rep);
      return;
    }
    const parts = line.match(/\S*\s*/g)?.filter((p) => p !== '') ?? [];
    let maxWidth2 = maxWidth;
    let current = '';
    parts.forEach((part, j) => {
      const candidate = current + part;
      if (j === parts.length - 1 && i === lines.length - 1) maxWidth2 -= allow;
      if (pyStr(candidate).length > maxWidth2) {
        if (current) chunks.push(pyStr(current));
        current = part;
      } else {
        current = candidate;
      }
    });
    if (current) chunks.push(pyStr(current));
  });
  if (chunks.length === 1) {
    out.push(pyStr(value));
    return;
  }
  if (level === 1) out.push('(');
  out.push(chunks.join(`\n${' '.repeat(ind)}`));
  if (level === 1) out.push(')');
}

function sortedEntries(obj: Record<string, unknown>): [string, unknown][] {
  return Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

function pyFloat(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  const s = String(n);
  return /[.e]/.test(s) ? s.replace(/e\+?/, 'e+').replace('e+-', 'e-') : `${s}.0`;
}

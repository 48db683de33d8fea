/**
 * clusterctl's variables in a provider's files, read as `clusterctl generate cluster` and
 * `clusterctl init` read them: its simple processor hands the whole text to drone/envsubst (v2),
 * after turning the legacy spellings `${ VAR }`, `${ VAR}` and `${VAR }` into `${VAR}`.
 *
 * What envsubst does, and so what this does:
 * - `${VAR}` is the variable's value; clusterctl refuses to render while one is not set.
 * - `${VAR:=default}`, `${VAR:-default}`, `${VAR=default}` (and `:?`, `:+`, which envsubst reads the
 *   same way): the value, or the default when the value is empty or unset. A default may hold other
 *   variables (`${A:=${B}}`); those are not listed and render empty when unset, as clusterctl does.
 * - `${VAR^}`, `${VAR^^}`, `${VAR,}`, `${VAR,,}` change the case; `${#VAR}` is the length.
 * - `$$` is one `$` (so `$${HOSTNAME}` reaches the machine as `${HOSTNAME}`), `\\` is one `\` and
 *   `\/` is `/`; a `$` before anything else is text, so is a bare `$VAR`.
 * - Substrings, pattern removal and replacement (`${VAR:1}`, `${VAR%x}`, `${VAR/a/b}`) exist in
 *   envsubst but in no template we ship: they are refused here with their position, not guessed.
 */

/** A part of a parsed text: literal text, or one `${…}` expression. */
type Node = { text: string } | Expr;

interface Expr {
  /** The variable's name. */
  param: string;
  /** The operator after the name (`:=`, `:-`, `=`, `^^`, …), or `#` for `${#VAR}`; '' for `${VAR}`. */
  op: string;
  /** The default's parts, when `op` is a default operator. */
  args: Node[];
}

/** A text clusterctl would refuse to parse ("bad substitution"), with where. */
export class BadSubstitutionError extends Error {
  override readonly name = 'BadSubstitutionError';
  readonly offset: number;
  constructor(message: string, offset: number, text: string) {
    const line = text.slice(0, offset).split('\n').length;
    super(`${message} at line ${line}: ${JSON.stringify(text.slice(offset, offset + 40))}`);
    this.offset = offset;
  }
}

/** Variables a template needs that were not given (clusterctl's own message). */
export class MissingVariablesError extends Error {
  override readonly name = 'MissingVariablesError';
  readonly missing: readonly string[];
  constructor(missing: readonly string[]) {
    const sorted = [...missing].sort();
    super(
      `value for variables [${sorted.join(', ')}] is not set. Please set the value using os environment variables or the clusterctl config file`,
    );
    this.missing = sorted;
  }
}

/** One variable as `clusterctl generate cluster --list-variables` shows it. */
export interface VariableInfo {
  name: string;
  /** No default: clusterctl refuses to render without a value. */
  required: boolean;
  /** The default's text (nested variables as `${NAME}`), '' when there is none. */
  defaultValue: string;
}

const DEFAULT_OPS = new Set([':=', ':-', ':?', ':+', '=']);
const CASE_OPS = new Set(['^', '^^', ',', ',,']);

const LEGACY = /\$\{\s+[A-Za-z0-9_$]+\s+\}|\$\{\s+[A-Za-z0-9_$]+\}|\$\{[A-Za-z0-9_$]+\s+\}/g;

/** clusterctl's convertLegacyVars: `${ VAR }` → `${VAR}`. */
function convertLegacy(text: string): string {
  return text.replace(LEGACY, (m) => m.replace(/\s/g, ''));
}

const isNameChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}_-]/u.test(c);

class Parser {
  private i = 0;
  private readonly s: string;
  constructor(s: string) {
    this.s = s;
  }

  parse(): Node[] {
    const out: Node[] = [];
    let text = '';
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i]!;
      const next = s[this.i + 1];
      if (c === '$' && next === '$') {
        text += '$';
        this.i += 2;
      } else if (c === '$' && next === '{') {
        if (text) out.push({ text });
        text = '';
        this.i += 2;
        out.push(this.expr());
      } else if (c === '\\' && (next === '/' || next === '\\')) {
        text += next;
        this.i += 2;
      } else {
        text += c;
        this.i += 1;
      }
    }
    if (text) out.push({ text });
    return out;
  }

  private fail(message: string): never {
    throw new BadSubstitutionError(message, this.i, this.s);
  }

  /** After `${`: the expression up to and including its `}`. */
  private expr(): Expr {
    const s = this.s;
    if (s[this.i] === '#') {
      this.i += 1;
      return { param: this.name(), op: '#', args: this.close([]) };
    }
    const param = this.name();
    const c = s[this.i];
    if (c === undefined) this.fail('bad substitution: no closing }');
    if (c === '}') {
      this.i += 1;
      return { param, op: '', args: [] };
    }
    if (c === ':' && '=-?+'.includes(s[this.i + 1] ?? 'x'))
      return this.defaulted(param, s.slice(this.i, this.i + 2));
    if (c === '=') return this.defaulted(param, '=');
    if (c === '^' || c === ',') {
      const op = s[this.i + 1] === c ? c + c : c;
      this.i += op.length;
      return { param, op, args: this.close([]) };
    }
    if (c === ':' || c === '/' || c === '#' || c === '%') {
      this.fail(`\${${param}${c}…}: substring, pattern and replacement expressions are not supported`);
    }
    return this.fail(`bad substitution in \${${param}…}`);
  }

  private name(): string {
    const start = this.i;
    while (isNameChar(this.s[this.i])) this.i += 1;
    if (this.i === start) this.fail('bad substitution: no variable name');
    return this.s.slice(start, this.i);
  }

  private close(args: Node[]): Node[] {
    if (this.s[this.i] !== '}') this.fail('bad substitution: no closing }');
    this.i += 1;
    return args;
  }

  /** `${NAME:=…}`: the default runs to the first `}` that closes no nested `${…}`; no escapes. */
  private defaulted(param: string, op: string): Expr {
    this.i += op.length;
    const args: Node[] = [];
    const s = this.s;
    for (;;) {
      if (this.i >= s.length) this.fail('bad substitution: no closing }');
      if (s[this.i] === '}') {
        this.i += 1;
        return { param, op, args };
      }
      if (s[this.i] === '$' && s[this.i + 1] === '{') {
        this.i += 2;
        args.push(this.expr());
        continue;
      }
      const start = this.i;
      while (this.i < s.length && s[this.i] !== '}' && !(s[this.i] === '$' && s[this.i + 1] === '{')) {
        this.i += 1;
      }
      args.push({ text: s.slice(start, this.i) });
    }
  }
}

function parse(text: string): Node[] {
  return new Parser(convertLegacy(text)).parse();
}

const isExpr = (n: Node): n is Expr => 'param' in n;

function defaultText(args: readonly Node[]): string {
  return args.map((a) => (isExpr(a) ? `\${${a.param}}` : a.text)).join('');
}

/**
 * The variables of a provider file, sorted by name, as `--list-variables` reads them: only the
 * expressions at the top level, each by its first occurrence.
 */
export function listVariables(text: string): VariableInfo[] {
  const seen = new Map<string, VariableInfo>();
  for (const n of parse(text)) {
    if (!isExpr(n) || seen.has(n.param)) continue;
    const hasDefault = n.args.length > 0;
    seen.set(n.param, {
      name: n.param,
      required: !hasDefault && n.op === '',
      defaultValue: hasDefault ? defaultText(n.args) : '',
    });
  }
  return [...seen.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export type VariableValues = ReadonlyMap<string, string> | Readonly<Record<string, string>>;

function lookup(values: VariableValues): (name: string) => string | undefined {
  if (values instanceof Map) {
    const map = values as ReadonlyMap<string, string>;
    return (name) => map.get(name);
  }
  const record = values as Readonly<Record<string, string>>;
  return (name) => (Object.hasOwn(record, name) ? record[name] : undefined);
}

function render(nodes: readonly Node[], get: (name: string) => string | undefined): string {
  let out = '';
  for (const n of nodes) {
    if (!isExpr(n)) {
      out += n.text;
      continue;
    }
    const v = get(n.param) ?? '';
    if (DEFAULT_OPS.has(n.op)) out += v === '' ? render(n.args, get) : v;
    else if (n.op === '#') out += String(Buffer.byteLength(v));
    else if (CASE_OPS.has(n.op)) out += recase(v, n.op);
    else out += v;
  }
  return out;
}

function recase(v: string, op: string): string {
  const first = [...v][0] ?? '';
  switch (op) {
    case '^^':
      return v.toUpperCase();
    case ',,':
      return v.toLowerCase();
    case '^':
      return first.toUpperCase() + v.slice(first.length);
    default:
      return first.toLowerCase() + v.slice(first.length);
  }
}

/**
 * The file with every variable substituted, as clusterctl renders it: refused, naming every
 * variable, when a variable without a default has no value.
 */
export function substituteVariables(text: string, values: VariableValues): string {
  const nodes = parse(text);
  const get = lookup(values);
  // As clusterctl: a variable's first occurrence says whether it has a default.
  const first = new Map<string, Expr>();
  for (const n of nodes) if (isExpr(n) && !first.has(n.param)) first.set(n.param, n);
  const missing = [...first.values()].filter((n) => n.args.length === 0 && get(n.param) === undefined);
  if (missing.length > 0) throw new MissingVariablesError(missing.map((n) => n.param));
  return render(nodes, get);
}

/**
 * JSON patch (RFC 6902) with JSON pointers (RFC 6901): add, remove, replace, move, copy, test.
 * Failures throw {@link JsonPatchError} with evanphx/json-patch's wording; the server turns them
 * into 422 Invalid, as the real one does.
 */
import { deepEqual, isObj } from '../json.ts';
import { cloneJson } from '../../../lib/json.ts';

export class JsonPatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPatchError';
  }
}

export interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/** Validates the shape of a patch document (a 400 on failure, checked by the caller). */
export function decodeJsonPatch(doc: unknown): JsonPatchOp[] {
  if (!Array.isArray(doc))
    throw new JsonPatchError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  return doc.map((raw, i) => {
    if (!isObj(raw)) throw new JsonPatchError(`invalid operation ${i}: not an object`);
    const op = raw.op;
    const path = raw.path;
    if (typeof op !== 'string') throw new JsonPatchError(`invalid operation ${i}: missing op`);
    if (typeof path !== 'string') throw new JsonPatchError(`invalid operation ${i}: missing path`);
    const out: JsonPatchOp = { op, path };
    if (typeof raw.from === 'string') out.from = raw.from;
    if (Object.hasOwn(raw, 'value')) out.value = raw.value;
    return out;
  });
}

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw new JsonPatchError(`invalid JSON pointer: ${JSON.stringify(p)}`);
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

/** The parent container of the pointer's target and the last token. */
function locate(doc: unknown, path: string, opName: string): { parent: Container; key: string } {
  const tokens = parsePointer(path);
  if (tokens.length === 0)
    throw new JsonPatchError(
      `${opName} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`,
    );
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) {
      const i = Number(t);
      if (!/^\d+$/.test(t) || i >= cur.length) {
        throw new JsonPatchError(
          `${opName} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`,
        );
      }
      cur = cur[i];
    } else if (isObj(cur) && Object.hasOwn(cur, t)) {
      cur = cur[t];
    } else {
      throw new JsonPatchError(
        `${opName} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`,
      );
    }
  }
  if (!Array.isArray(cur) && !isObj(cur)) {
    throw new JsonPatchError(
      `${opName} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`,
    );
  }
  return { parent: cur, key: tokens[tokens.length - 1] as string };
}

function getAt(doc: unknown, path: string, opName: string): unknown {
  if (path === '') return doc;
  const { parent, key } = locate(doc, path, opName);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!/^\d+$/.test(key) || i >= parent.length) {
      throw new JsonPatchError(
        `${opName} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`,
      );
    }
    return parent[i];
  }
  if (!Object.hasOwn(parent, key)) {
    throw new JsonPatchError(
      `${opName} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`,
    );
  }
  return parent[key];
}

function addAt(doc: unknown, path: string, value: unknown): unknown {
  if (path === '') return value;
  const { parent, key } = locate(doc, path, 'add');
  if (Array.isArray(parent)) {
    const i = key === '-' ? parent.length : Number(key);
    if ((key !== '-' && !/^\d+$/.test(key)) || i > parent.length) {
      throw new JsonPatchError(`Unable to access invalid index: ${key}: invalid index referenced`);
    }
    parent.splice(i, 0, value);
  } else parent[key] = value;
  return doc;
}

function removeAt(doc: unknown, path: string, opName = 'remove'): unknown {
  const { parent, key } = locate(doc, path, opName);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!/^\d+$/.test(key) || i >= parent.length) {
      throw new JsonPatchError(`Unable to remove nonexistent key: ${key}: missing value`);
    }
    const [v] = parent.splice(i, 1);
    return v;
  }
  if (!Object.hasOwn(parent, key))
    throw new JsonPatchError(`Unable to remove nonexistent key: ${key}: missing value`);
  const v = parent[key];
  delete parent[key];
  return v;
}

/** Applies a patch to a copy of `doc`; the input is never modified. */
export function applyJsonPatch(doc: unknown, ops: JsonPatchOp[]): unknown {
  let out = cloneJson(doc);
  for (const op of ops) {
    switch (op.op) {
      case 'add':
        if (!Object.hasOwn(op, 'value')) throw new JsonPatchError('add operation has no value');
        out = addAt(out, op.path, structuredClone(op.value));
        break;
      case 'remove':
        removeAt(out, op.path);
        break;
      case 'replace': {
        if (!Object.hasOwn(op, 'value')) throw new JsonPatchError('replace operation has no value');
        if (op.path === '') {
          out = structuredClone(op.value);
          break;
        }
        getAt(out, op.path, 'replace');
        const { parent, key } = locate(out, op.path, 'replace');
        if (Array.isArray(parent)) parent[Number(key)] = structuredClone(op.value);
        else parent[key] = structuredClone(op.value);
        break;
      }
      case 'move': {
        if (op.from === undefined) throw new JsonPatchError('move operation has no from');
        const v = getAt(out, op.from, 'move');
        removeAt(out, op.from, 'move');
        out = addAt(out, op.path, v);
        break;
      }
      case 'copy': {
        if (op.from === undefined) throw new JsonPatchError('copy operation has no from');
        out = addAt(out, op.path, structuredClone(getAt(out, op.from, 'copy')));
        break;
      }
      case 'test': {
        let actual: unknown;
        try {
          actual = getAt(out, op.path, 'test');
        } catch {
          actual = undefined;
        }
        const expected = Object.hasOwn(op, 'value') ? op.value : null;
        if (!(actual === undefined ? expected === null : deepEqual(actual, expected))) {
          throw new JsonPatchError(`testing value ${op.path} failed: test failed`);
        }
        break;
      }
      default:
        throw new JsonPatchError(`Unexpected kind: ${op.op}`);
    }
  }
  return out;
}

import type { Route } from './types.ts';

interface CompiledRoute {
  route: Route;
  segments: readonly string[];
}

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

/**
 * Matches a path below a service prefix to a route template. Literal segments beat parameters at the
 * same position (`/ports/detail` before `/ports/{id}`), as the real services' routers resolve them.
 */
export class Router {
  private readonly byLength = new Map<number, CompiledRoute[]>();

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      const segments = split(route.template);
      const list = this.byLength.get(segments.length) ?? [];
      list.push({ route, segments });
      this.byLength.set(segments.length, list);
    }
    for (const list of this.byLength.values())
      list.sort((a, b) => specificity(b.segments) - specificity(a.segments));
  }

  /** Returns the match, or `methods` (those allowed on the path) when only the method is wrong. */
  match(method: string, path: string): RouteMatch | { methods: string[] } | undefined {
    const parts = split(path);
    const candidates = this.byLength.get(parts.length);
    if (!candidates) return undefined;
    const methods: string[] = [];
    for (const c of candidates) {
      const params = matchSegments(c.segments, parts);
      if (!params) continue;
      if (c.route.method === method) return { route: c.route, params };
      methods.push(c.route.method);
    }
    return methods.length > 0 ? { methods } : undefined;
  }
}

function split(path: string): string[] {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? [] : trimmed.slice(1).split('/');
}

function specificity(segments: readonly string[]): number {
  // Weight earlier literal segments more, so the first difference decides.
  return segments.reduce((acc, s, i) => acc + (s.startsWith('{') ? 0 : 2 ** (16 - i)), 0);
}

function matchSegments(
  template: readonly string[],
  parts: readonly string[],
): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const t = template[i]!;
    const p = parts[i]!;
    if (t.startsWith('{') && t.endsWith('}')) {
      if (p === '') return undefined;
      params[t.slice(1, -1)] = decodeURIComponent(p);
    } else if (t !== p) {
      return undefined;
    }
  }
  return params;
}

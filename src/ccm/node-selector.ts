/**
 * Node selectors as OCCM reads them (`[LoadBalancer] node-selector`, the
 * `loadbalancer.openstack.org/node-selector` annotation): `util.StringToMap` splits on commas, trims
 * each pair, and splits once on `=`. `key` and `key=` both mean "the label exists, any value". The key
 * itself is not trimmed after the split, so `a = b` asks for a label `a ` (with a space), which no
 * node has; parseNodeSelector keeps that behaviour and reports it.
 */
import type { NodeSelector } from './config/types.ts';

export interface ParsedNodeSelector {
  selector: NodeSelector;
  /** Pairs that cannot match any node as written, for a warning. */
  suspicious: string[];
}

export function parseNodeSelector(text: string): ParsedNodeSelector {
  const selector = new Map<string, string>();
  const suspicious: string[] = [];
  for (const raw of text.trim().split(',')) {
    const pair = raw.trim();
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (key === '') {
      if (pair !== '') suspicious.push(pair);
      continue;
    }
    const value = eq < 0 ? '' : pair.slice(eq + 1);
    if (key !== key.trim() || value !== value.trim()) suspicious.push(pair);
    selector.set(key, value);
  }
  return { selector, suspicious };
}

/** OCCM's matchNodeLabels: every key present, and equal when a value is given. No selector matches all. */
export function matchesNodeSelector(
  labels: Readonly<Record<string, string>> | undefined,
  selector: NodeSelector,
): boolean {
  if (selector.size === 0) return true;
  if (!labels || Object.keys(labels).length === 0) return false;
  for (const [key, value] of selector) {
    const actual = labels[key];
    if (actual === undefined || (value !== '' && actual !== value)) return false;
  }
  return true;
}

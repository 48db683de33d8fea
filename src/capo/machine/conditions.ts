/**
 * Cluster API v1beta1 conditions on an OpenStackMachine (`sigs.k8s.io/cluster-api/util/conditions`):
 * True carries no reason; False carries a reason and a severity (Error, Warning, Info); the
 * summary `Ready` mirrors the worst of the conditions it summarises. `lastTransitionTime` changes
 * only when the status flips, so rewriting the same condition costs no status write.
 */
import { metaTime } from '../../kube/index.ts';
import type { CapiCondition } from '../api/index.ts';

export type Severity = 'Error' | 'Warning' | 'Info';

const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const MAX_MESSAGE = 10_240;

export interface Mark {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string | undefined;
  severity?: Severity | undefined;
  message?: string | undefined;
}

/** Sets one condition as given (status, reason, severity, message). */
export function setCapiCondition(list: CapiCondition[], mark: Mark, now = Date.now()): void {
  if (mark.reason !== undefined && !REASON.test(mark.reason)) {
    throw new TypeError(`invalid condition reason ${JSON.stringify(mark.reason)}: use CamelCase`);
  }
  const i = list.findIndex((c) => c.type === mark.type);
  const existing = list[i];
  const next: CapiCondition = {
    type: mark.type,
    status: mark.status,
    lastTransitionTime:
      existing && existing.status === mark.status ? existing.lastTransitionTime : metaTime(now),
    ...(mark.severity ? { severity: mark.severity } : {}),
    ...(mark.reason ? { reason: mark.reason } : {}),
    ...(mark.message ? { message: mark.message.slice(0, MAX_MESSAGE) } : {}),
  };
  if (existing) list[i] = next;
  else list.push(next);
}

export function markTrue(list: CapiCondition[], type: string, now = Date.now()): void {
  setCapiCondition(list, { type, status: 'True' }, now);
}

export function markFalse(
  list: CapiCondition[],
  type: string,
  reason: string,
  severity: Severity,
  message: string,
  now = Date.now(),
): void {
  setCapiCondition(list, { type, status: 'False', reason, severity, message }, now);
}

export function markUnknown(
  list: CapiCondition[],
  type: string,
  reason: string,
  message: string,
  now = Date.now(),
): void {
  setCapiCondition(list, { type, status: 'Unknown', reason, message }, now);
}

/** Copies a condition (status, reason, severity, message) under another or the same type. */
export function mirror(list: CapiCondition[], from: CapiCondition, type = from.type, now = Date.now()): void {
  const status = from.status === 'True' || from.status === 'False' ? from.status : 'Unknown';
  setCapiCondition(
    list,
    {
      type,
      status,
      reason: from.reason && REASON.test(from.reason) ? from.reason : undefined,
      severity: status === 'False' ? ((from.severity as Severity | undefined) ?? 'Warning') : undefined,
      message: from.message,
    },
    now,
  );
}

export function getCapiCondition(
  list: readonly CapiCondition[] | undefined,
  type: string,
): CapiCondition | undefined {
  return list?.find((c) => c.type === type);
}

const SEVERITY_RANK: Record<string, number> = { Error: 0, Warning: 1, Info: 2 };

/**
 * conditions.SetSummary: `Ready` is True when every listed condition present is True; otherwise
 * it takes the reason and message of the worst one (False before Unknown, then by severity,
 * then in the order listed).
 */
export function setSummary(list: CapiCondition[], types: readonly string[], now = Date.now()): void {
  const present = types.map((t) => getCapiCondition(list, t)).filter((c) => c !== undefined);
  const rank = (c: CapiCondition) =>
    c.status === 'False' ? (SEVERITY_RANK[c.severity ?? 'Warning'] ?? 1) : c.status === 'True' ? 10 : 5;
  const worst = [...present].sort((a, b) => rank(a) - rank(b))[0];
  if (!worst || worst.status === 'True') {
    markTrue(list, 'Ready', now);
    return;
  }
  mirror(list, worst, 'Ready', now);
}

/**
 * Reading Service annotations with OCCM's rules (getStringFromServiceAnnotation and friends):
 * a present annotation wins even when empty; booleans are exactly `true` or `false`; integers are
 * Go's strconv.Atoi. Where OCCM logs a bad value and uses the default, we do the same and add a
 * problem, so the controller can tell the user with an Event instead of a log line nobody reads.
 */
import type { V1Service } from '@kubernetes/client-node';
import { closest } from '../../lib/config.ts';
import { ShiftstackReason } from '../events.ts';
import type { ServiceProblem } from './types.ts';
import { ANNOTATION_PREFIX, annotationField, KNOWN_OPENSTACK_ANNOTATIONS } from './annotations.ts';

export class AnnotationReader {
  readonly problems: ServiceProblem[] = [];
  private readonly annotations: Readonly<Record<string, string>>;

  constructor(service: V1Service) {
    this.annotations = service.metadata?.annotations ?? {};
  }

  has(name: string): boolean {
    return this.annotations[name] !== undefined;
  }

  /** The annotation if present (even empty), else the fallback. */
  string(name: string, fallback = ''): string {
    return this.annotations[name] ?? fallback;
  }

  /** Only `true` and `false`; anything else is reported and the fallback used. */
  bool(name: string, fallback: boolean): boolean {
    const v = this.annotations[name];
    if (v === undefined) return fallback;
    if (v === 'true' || v === 'false') return v === 'true';
    this.invalid(name, v, `not "true" or "false"`, String(fallback));
    return fallback;
  }

  /** A decimal integer (strconv.Atoi: optional sign, digits) within the range, else the fallback. */
  int(name: string, fallback: number, range: { min: number; max?: number } = { min: -Infinity }): number {
    const v = this.annotations[name];
    if (v === undefined) return fallback;
    if (!/^[+-]?\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
      this.invalid(name, v, 'not a whole number', String(fallback));
      return fallback;
    }
    const n = Number(v);
    if (n < range.min || (range.max !== undefined && n > range.max)) {
      const bounds =
        range.max === undefined ? `at least ${range.min}` : `between ${range.min} and ${range.max}`;
      this.invalid(name, v, `must be ${bounds}`, String(fallback));
      return fallback;
    }
    return n;
  }

  problem(p: ServiceProblem): void {
    this.problems.push(p);
  }

  invalid(name: string, value: string, what: string, used: string): void {
    this.problems.push({
      reason: ShiftstackReason.AnnotationInvalid,
      message: `annotation ${name}=${JSON.stringify(value)} is ${what}; using ${used}`,
      field: annotationField(name),
      fatal: false,
    });
  }

  /** `loadbalancer.openstack.org/…` annotations OCCM does not know, which it ignores silently. */
  checkUnknown(): void {
    for (const name of Object.keys(this.annotations)) {
      if (!name.startsWith(ANNOTATION_PREFIX) || KNOWN_OPENSTACK_ANNOTATIONS.includes(name)) continue;
      const hint = closest(name, KNOWN_OPENSTACK_ANNOTATIONS);
      this.problems.push({
        reason: ShiftstackReason.AnnotationInvalid,
        message: `annotation ${name} is not one the CCM reads; it has no effect${hint ? ` (did you mean ${hint}?)` : ''}`,
        field: annotationField(name),
        fatal: false,
      });
    }
  }
}

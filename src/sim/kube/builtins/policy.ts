/**
 * Objects that constrain others: ResourceQuotas (v1), PriorityClasses (scheduling.k8s.io/v1) and
 * PodDisruptionBudgets (policy/v1), stored with their defaults, validation and printer columns.
 * No quota or disruption controller runs, so their status stays as created.
 */
import { field, type FieldError } from '../errors.ts';
import { asObj, asString, type Obj } from '../json.ts';
import { CONDITIONS } from '../patch/hints.ts';
import { AGE_COLUMN, col, NAME_COLUMN } from '../table.ts';
import type { ResourceDef } from '../types.ts';
import { builtin, keepOldStatus, specGeneration, STATUS_SUBRESOURCE_HOOKS, statusOnly } from './common.ts';

/** printResourceQuota: `name: used/hard` per resource of status.hard, limits.* in the second column. */
function quotaColumn(o: Obj, limits: boolean): string {
  const status = asObj(o.status) ?? {};
  const hard = asObj(status.hard) ?? {};
  const used = asObj(status.used) ?? {};
  return Object.keys(hard)
    .sort()
    .filter((r) => (r.split('.')[0] === 'limits' && r.includes('.')) === limits)
    .map((r) => `${r}: ${asString(used[r]) ?? '0'}/${asString(hard[r]) ?? '0'}`)
    .join(', ');
}

export const resourcequotas: ResourceDef = builtin({
  resource: 'resourcequotas',
  kind: 'ResourceQuota',
  namespaced: true,
  shortNames: ['quota'],
  subresources: ['status'],
  fullColumns: [
    NAME_COLUMN,
    AGE_COLUMN,
    col('Request', (o) => quotaColumn(o, false), {
      description: 'Request represents a minimum amount of cpu/memory that a container may consume.',
    }),
    col('Limit', (o) => quotaColumn(o, true), {
      description:
        'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
    }),
  ],
  strategy: {
    statusSubresource: true,
    ...STATUS_SUBRESOURCE_HOOKS,
    prepareForCreate(_ctx, obj) {
      obj.status = {};
    },
    validate(_ctx, obj) {
      const errs: FieldError[] = [];
      const hard = asObj(asObj(obj.spec)?.hard) ?? {};
      for (const [k, v] of Object.entries(hard)) {
        const q = typeof v === 'number' ? String(v) : asString(v);
        if (!q || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+|[KMGTPE]i?|[mkMGTPE]|[munpf])?$/.test(q))
          errs.push(
            field.invalid(
              `spec.hard[${k}]`,
              v,
              "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            ),
          );
        else if (q.startsWith('-'))
          errs.push(field.invalid(`spec.hard[${k}]`, v, 'must be greater than or equal to 0'));
      }
      return errs;
    },
  },
});

/** Above this, priorities are reserved for the system classes. */
const HIGHEST_USER_PRIORITY = 1_000_000_000;
const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never'];

export const priorityclasses: ResourceDef = builtin({
  group: 'scheduling.k8s.io',
  resource: 'priorityclasses',
  kind: 'PriorityClass',
  namespaced: false,
  shortNames: ['pc'],
  fullColumns: [
    NAME_COLUMN,
    col('Value', (o) => (typeof o.value === 'number' ? o.value : 0), {
      type: 'integer',
      description: 'The value of this priority class.',
    }),
    col('Global-Default', (o) => o.globalDefault === true, {
      type: 'boolean',
      description: 'Whether this is the default priority class.',
    }),
    AGE_COLUMN,
    col('PreemptionPolicy', (o) => asString(o.preemptionPolicy) ?? '', {
      description: 'The policy for preempting pods with lower priority.',
    }),
  ],
  strategy: {
    prepareForCreate(_ctx, obj) {
      obj.preemptionPolicy ??= 'PreemptLowerPriority';
    },
    prepareForUpdate(_ctx, obj) {
      obj.preemptionPolicy ??= 'PreemptLowerPriority';
    },
    validate(_ctx, obj) {
      const errs: FieldError[] = [];
      const name = asString(asObj(obj.metadata)?.name) ?? '';
      if (name.startsWith('system-'))
        errs.push(
          field.forbidden(
            'metadata.name',
            "priority class names with 'system-' prefix are reserved for system use only",
          ),
        );
      if (typeof obj.value !== 'number') errs.push(field.required('value'));
      else if (obj.value > HIGHEST_USER_PRIORITY)
        errs.push(
          field.forbidden(
            'value',
            `maximum allowed value of a user defined priority is ${HIGHEST_USER_PRIORITY}`,
          ),
        );
      const policy = asString(obj.preemptionPolicy) ?? '';
      if (!PREEMPTION_POLICIES.includes(policy))
        errs.push(field.notSupported('preemptionPolicy', policy, PREEMPTION_POLICIES));
      return errs;
    },
    validateUpdate(_ctx, obj, old) {
      const errs: FieldError[] = [];
      if (obj.value !== old.value) errs.push(field.forbidden('value', 'may not be changed in an update.'));
      if (obj.preemptionPolicy !== old.preemptionPolicy)
        errs.push(field.invalid('preemptionPolicy', obj.preemptionPolicy, 'field is immutable'));
      return errs;
    },
  },
});

function intOrPercent(v: unknown): string {
  if (typeof v === 'number') return String(v);
  return asString(v) ?? 'N/A';
}

export const poddisruptionbudgets: ResourceDef = builtin({
  group: 'policy',
  resource: 'poddisruptionbudgets',
  kind: 'PodDisruptionBudget',
  namespaced: true,
  shortNames: ['pdb'],
  subresources: ['status'],
  hints: { 'status.conditions': CONDITIONS },
  columns: [
    col('Min Available', (o) => intOrPercent(asObj(o.spec)?.minAvailable), {
      description: 'The minimum number of pods that must be available.',
    }),
    col('Max Unavailable', (o) => intOrPercent(asObj(o.spec)?.maxUnavailable), {
      description: 'The maximum number of pods that may be unavailable.',
    }),
    col('Allowed Disruptions', (o) => asObj(o.status)?.disruptionsAllowed ?? 0, {
      type: 'integer',
      description: 'Calculated number of pods that may be disrupted at this time.',
    }),
  ],
  strategy: {
    statusSubresource: true,
    generationOf: specGeneration,
    prepareForCreate(_ctx, obj) {
      // The Go status has no omitempty on its counters: a new budget shows them all as 0.
      obj.status = { currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 0 };
    },
    prepareForUpdate(_ctx, obj, old) {
      keepOldStatus(obj, old);
    },
    prepareForStatusUpdate(_ctx, obj, old) {
      statusOnly(obj, old, true);
    },
    validate(_ctx, obj) {
      const spec = asObj(obj.spec) ?? {};
      const errs: FieldError[] = [];
      if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined)
        errs.push(field.invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
      for (const k of ['minAvailable', 'maxUnavailable']) {
        const v = spec[k];
        if (typeof v === 'number' && v < 0)
          errs.push(field.invalid(`spec.${k}`, v, 'must be greater than or equal to 0'));
        if (typeof v === 'string' && !/^\d+%$/.test(v))
          errs.push(
            field.invalid(
              `spec.${k}`,
              v,
              "a valid percent string must be a numeric string followed by an ending '%'",
            ),
          );
      }
      const policies = ['IfHealthyBudget', 'AlwaysAllow'];
      const p = asString(spec.unhealthyPodEvictionPolicy);
      if (p !== undefined && !policies.includes(p))
        errs.push(field.notSupported('spec.unhealthyPodEvictionPolicy', p, policies));
      return errs;
    },
  },
});

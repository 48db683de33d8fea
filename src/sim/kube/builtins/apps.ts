/**
 * apps/v1 Deployments and DaemonSets: storage with the real defaults, selector validation,
 * generation on spec changes, status reset on create and `/status`, and Deployment `/scale`.
 * No controller runs them (no ReplicaSets or Pods appear); see docs/sim-kube.md.
 */
import { field, type FieldError } from '../errors.ts';
import { asArray, asNumber, asObj, deepEqual, type Obj, scalarText } from '../json.ts';
import { CONDITIONS, mount, POD_SPEC_HINTS } from '../patch/hints.ts';
import { fromLabelSelectorObject, matchesLabels } from '../selectors.ts';
import { AGE_COLUMN, col, mapText } from '../table.ts';
import type { ResourceDef } from '../types.ts';
import { builtin, keepOldStatus, specGeneration, statusOnly } from './common.ts';
import { defaultPodSpec } from './core.ts';

/** Pod defaults in a workload's `spec.template` (also a CronJob's job template, through `at`). */
export function templateDefaults(obj: Obj): void {
  const template = asObj(asObj(obj.spec)?.template);
  if (!template) return;
  const spec = asObj(template.spec) ?? {};
  template.spec = spec;
  defaultPodSpec(spec);
  template.metadata ??= {};
}

function validateSelector(obj: Obj): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  if (!asObj(spec.selector)) return [field.required('spec.selector')];
  const sel = fromLabelSelectorObject(spec.selector) ?? [];
  if (sel.length === 0)
    return [field.invalid('spec.selector', spec.selector, 'empty selector is invalid for deployment')];
  const labels = asObj(asObj(asObj(spec.template)?.metadata)?.labels) ?? {};
  const strLabels: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') strLabels[k] = v;
  if (!matchesLabels(sel, strLabels)) {
    return [
      field.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
    ];
  }
  const containers = asArray(asObj(asObj(spec.template)?.spec)?.containers) ?? [];
  if (containers.length === 0) return [field.required('spec.template.spec.containers')];
  return [];
}

function selectorImmutable(obj: Obj, old: Obj): FieldError[] {
  const a = asObj(obj.spec)?.selector;
  const b = asObj(old.spec)?.selector;
  return deepEqual(a, b) ? [] : [field.invalid('spec.selector', a, 'field is immutable')];
}

function n(o: Obj, ...path: string[]): number {
  let cur: unknown = o;
  for (const p of path) cur = asObj(cur)?.[p];
  return asNumber(cur) ?? 0;
}

export const WORKLOAD_HINTS = {
  ...mount('spec.template.spec', POD_SPEC_HINTS),
  'status.conditions': CONDITIONS,
};

export function containersText(o: Obj, key: 'name' | 'image'): string {
  const cs = asArray(asObj(asObj(asObj(o.spec)?.template)?.spec)?.containers) ?? [];
  return cs.map((c) => scalarText(asObj(c)?.[key])).join(',');
}

/**
 * SetDefaults_Deployment/DaemonSet for the update strategy: an empty one (`strategy: {}`, as
 * kubectl's generators send it) is a RollingUpdate, whose missing bounds take the defaults.
 */
function rollingDefaults(
  strategy: unknown,
  bounds: { maxUnavailable: number | string; maxSurge: number | string },
): Obj {
  const s = asObj(strategy) ?? {};
  s.type ??= 'RollingUpdate';
  if (s.type === 'RollingUpdate') {
    const r = asObj(s.rollingUpdate) ?? {};
    r.maxUnavailable ??= bounds.maxUnavailable;
    r.maxSurge ??= bounds.maxSurge;
    s.rollingUpdate = r;
  }
  return s;
}

export const deployments: ResourceDef = builtin({
  group: 'apps',
  resource: 'deployments',
  kind: 'Deployment',
  namespaced: true,
  shortNames: ['deploy'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  hints: { ...WORKLOAD_HINTS, 'spec.strategy': { patchStrategy: ['retainKeys'] } },
  scale: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.spec.selector',
  },
  columns: [
    col('Ready', (o) => `${n(o, 'status', 'readyReplicas')}/${n(o, 'spec', 'replicas')}`, {
      description: 'Number of the pod with ready state',
    }),
    col('Up-to-date', (o) => n(o, 'status', 'updatedReplicas'), {
      type: 'integer',
      description:
        'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
    }),
    col('Available', (o) => n(o, 'status', 'availableReplicas'), {
      type: 'integer',
      description:
        'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
    }),
    AGE_COLUMN,
    col('Containers', (o) => containersText(o, 'name'), {
      priority: 1,
      description: 'Names of each container in the template.',
    }),
    col('Images', (o) => containersText(o, 'image'), {
      priority: 1,
      description: 'Images referenced by each container in the template.',
    }),
    col('Selector', (o) => mapText(asObj(asObj(o.spec)?.selector)?.matchLabels), {
      priority: 1,
      description:
        'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
    }),
  ],
  strategy: {
    statusSubresource: true,
    generationOf: specGeneration,
    prepareForCreate(_ctx, obj) {
      const spec = asObj(obj.spec) ?? {};
      obj.spec = spec;
      spec.replicas ??= 1;
      spec.strategy = rollingDefaults(spec.strategy, { maxUnavailable: '25%', maxSurge: '25%' });
      spec.revisionHistoryLimit ??= 10;
      spec.progressDeadlineSeconds ??= 600;
      templateDefaults(obj);
      obj.status = {};
    },
    prepareForUpdate(_ctx, obj, old) {
      keepOldStatus(obj, old);
      templateDefaults(obj);
    },
    prepareForStatusUpdate(_ctx, obj, old) {
      statusOnly(obj, old, true);
    },
    validate: (_ctx, obj) => {
      const errs = validateSelector(obj);
      const r = asObj(obj.spec)?.replicas;
      if (typeof r === 'number' && r < 0)
        errs.push(field.invalid('spec.replicas', r, 'must be greater than or equal to 0'));
      return errs;
    },
    validateUpdate: (_ctx, obj, old) => selectorImmutable(obj, old),
  },
});

export const daemonsets: ResourceDef = builtin({
  group: 'apps',
  resource: 'daemonsets',
  kind: 'DaemonSet',
  namespaced: true,
  shortNames: ['ds'],
  categories: ['all'],
  subresources: ['status'],
  hints: WORKLOAD_HINTS,
  columns: [
    col('Desired', (o) => n(o, 'status', 'desiredNumberScheduled'), {
      type: 'integer',
      description: 'The total number of nodes that should be running the daemon pod.',
    }),
    col('Current', (o) => n(o, 'status', 'currentNumberScheduled'), {
      type: 'integer',
      description:
        'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.',
    }),
    col('Ready', (o) => n(o, 'status', 'numberReady'), {
      type: 'integer',
      description:
        'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.',
    }),
    col('Up-to-date', (o) => n(o, 'status', 'updatedNumberScheduled'), {
      type: 'integer',
      description: 'The total number of nodes that are running updated daemon pod',
    }),
    col('Available', (o) => n(o, 'status', 'numberAvailable'), {
      type: 'integer',
      description:
        'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)',
    }),
    col('Node Selector', (o) => mapText(asObj(asObj(asObj(o.spec)?.template)?.spec)?.nodeSelector), {
      description: 'NodeSelector is a selector which must be true for the pod to fit on a node.',
    }),
    AGE_COLUMN,
  ],
  strategy: {
    statusSubresource: true,
    generationOf: specGeneration,
    prepareForCreate(_ctx, obj) {
      const spec = asObj(obj.spec) ?? {};
      obj.spec = spec;
      spec.updateStrategy = rollingDefaults(spec.updateStrategy, { maxUnavailable: 1, maxSurge: 0 });
      spec.revisionHistoryLimit ??= 10;
      templateDefaults(obj);
      obj.status = {
        currentNumberScheduled: 0,
        numberMisscheduled: 0,
        desiredNumberScheduled: 0,
        numberReady: 0,
      };
    },
    prepareForUpdate(_ctx, obj, old) {
      keepOldStatus(obj, old);
      templateDefaults(obj);
    },
    prepareForStatusUpdate(_ctx, obj, old) {
      statusOnly(obj, old, true);
    },
    validate: (_ctx, obj) => validateSelector(obj),
    validateUpdate: (_ctx, obj, old) => selectorImmutable(obj, old),
  },
});

/**
 * batch/v1 Jobs and CronJobs: storage with the real defaults (SetDefaults_Job, SetDefaults_CronJob),
 * the generated selector and pod labels of a Job, the restart-policy and schedule rules, and the
 * printer columns. No controller runs them: Jobs start no Pods, CronJobs create no Jobs.
 */
import { field, type FieldError } from '../errors.ts';
import { asObj, asString, metaOf, type Obj } from '../json.ts';
import { mount, POD_SPEC_HINTS } from '../patch/hints.ts';
import { AGE_COLUMN, col, humanDuration, mapText } from '../table.ts';
import type { ResourceDef } from '../types.ts';
import { containersText, templateDefaults, WORKLOAD_HINTS } from './apps.ts';
import { builtin, keepOldStatus, specGeneration, statusOnly } from './common.ts';

const CONTROLLER_UID = 'batch.kubernetes.io/controller-uid';
const JOB_NAME = 'batch.kubernetes.io/job-name';
const RESTART_POLICIES = ['OnFailure', 'Never'];

function jobSpecDefaults(spec: Obj): void {
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.podReplacementPolicy ??= 'TerminatingOrFailed';
}

/**
 * The Job strategy's generateSelector: unless `manualSelector`, the selector is the Job's uid and
 * the pod template carries it and the Job's name (the real strategy does this in Validate, once
 * the uid exists).
 */
function generateSelector(job: Obj): void {
  const spec = asObj(job.spec) ?? {};
  if (spec.manualSelector === true) return;
  const m = metaOf(job);
  const uid = asString(m.uid) ?? '';
  const name = asString(m.name) ?? '';
  const template = asObj(spec.template) ?? {};
  const tm = asObj(template.metadata) ?? {};
  template.metadata = tm;
  tm.labels = {
    ...(asObj(tm.labels) ?? {}),
    [CONTROLLER_UID]: uid,
    [JOB_NAME]: name,
    'controller-uid': uid,
    'job-name': name,
  };
  spec.selector ??= { matchLabels: { [CONTROLLER_UID]: uid } };
}

function validateJobTemplate(path: string, template: unknown): FieldError[] {
  const podSpec = asObj(asObj(template)?.spec) ?? {};
  const errs: FieldError[] = [];
  const policy = asString(podSpec.restartPolicy);
  if (!policy || !RESTART_POLICIES.includes(policy))
    errs.push(field.notSupported(`${path}.spec.restartPolicy`, policy ?? '', RESTART_POLICIES));
  const containers = podSpec.containers;
  if (!Array.isArray(containers) || containers.length === 0)
    errs.push(field.required(`${path}.spec.containers`));
  return errs;
}

function jobStatusText(o: Obj): string {
  const conditions = (asObj(o.status)?.conditions as unknown[] | undefined) ?? [];
  const isTrue = (type: string) =>
    conditions.some((c) => asObj(c)?.type === type && asObj(c)?.status === 'True');
  if (isTrue('Complete')) return 'Complete';
  if (isTrue('Failed')) return 'Failed';
  if (asObj(o.spec)?.suspend === true) return 'Suspended';
  if (isTrue('FailureTarget')) return 'FailureTarget';
  if (isTrue('SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

function jobCompletions(o: Obj): string {
  const spec = asObj(o.spec) ?? {};
  const succeeded =
    typeof asObj(o.status)?.succeeded === 'number' ? (asObj(o.status)?.succeeded as number) : 0;
  if (typeof spec.completions === 'number') return `${succeeded}/${spec.completions}`;
  const parallelism = typeof spec.parallelism === 'number' ? spec.parallelism : 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function jobDuration(o: Obj, now: number): string {
  const status = asObj(o.status) ?? {};
  const start = Date.parse(asString(status.startTime) ?? '');
  if (Number.isNaN(start)) return '';
  const end = Date.parse(asString(status.completionTime) ?? '');
  return humanDuration((Number.isNaN(end) ? now : end) - start);
}

export const jobs: ResourceDef = builtin({
  group: 'batch',
  resource: 'jobs',
  kind: 'Job',
  namespaced: true,
  categories: ['all'],
  subresources: ['status'],
  hints: WORKLOAD_HINTS,
  columns: [
    col('Status', jobStatusText, { description: 'Status of the job.' }),
    col('Completions', jobCompletions, { description: 'The completion status of the job.' }),
    col('Duration', jobDuration, { description: 'Time required to complete the job.' }),
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
      description: 'Selector for pods created by the job.',
    }),
  ],
  strategy: {
    statusSubresource: true,
    generationOf: specGeneration,
    prepareForCreate(_ctx, obj) {
      const spec = asObj(obj.spec) ?? {};
      obj.spec = spec;
      jobSpecDefaults(spec);
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
    validate(_ctx, obj) {
      generateSelector(obj);
      const spec = asObj(obj.spec) ?? {};
      const errs = validateJobTemplate('spec.template', spec.template);
      for (const k of ['parallelism', 'completions', 'backoffLimit']) {
        const v = spec[k];
        if (typeof v === 'number' && v < 0)
          errs.push(field.invalid(`spec.${k}`, v, 'must be greater than or equal to 0'));
      }
      return errs;
    },
    validateUpdate(_ctx, obj, old) {
      const errs: FieldError[] = [];
      const a = asObj(obj.spec) ?? {};
      const b = asObj(old.spec) ?? {};
      for (const k of ['completions', 'selector', 'template'] as const) {
        if (JSON.stringify(a[k]) !== JSON.stringify(b[k]) && !(k === 'template' && b.suspend === true))
          errs.push(field.invalid(`spec.${k}`, a[k], 'field is immutable'));
      }
      return errs;
    },
  },
});

/** A five-field cron schedule, an `@every`/`@hourly`… macro; what robfig/cron accepts, roughly. */
function validSchedule(s: string): boolean {
  if (/^@(yearly|annually|monthly|weekly|daily|midnight|hourly)$/.test(s)) return true;
  if (/^@every\s+\S+$/.test(s)) return true;
  const fields = s
    .replace(/^(CRON_)?TZ=\S+\s+/, '')
    .trim()
    .split(/\s+/);
  return fields.length === 5 && fields.every((f) => /^[\d*?,/\-A-Za-z]+$/.test(f));
}

function jobTemplateOf(o: Obj): Obj {
  return asObj(asObj(o.spec)?.jobTemplate) ?? {};
}

export const cronjobs: ResourceDef = builtin({
  group: 'batch',
  resource: 'cronjobs',
  kind: 'CronJob',
  namespaced: true,
  shortNames: ['cj'],
  categories: ['all'],
  subresources: ['status'],
  hints: mount('spec.jobTemplate.spec.template.spec', POD_SPEC_HINTS),
  columns: [
    col('Schedule', (o) => asString(asObj(o.spec)?.schedule) ?? '', {
      description: 'The schedule in Cron format.',
    }),
    col('Timezone', (o) => asString(asObj(o.spec)?.timeZone) ?? '<none>', {
      description: 'The time zone the schedule is interpreted in.',
    }),
    col('Suspend', (o) => (asObj(o.spec)?.suspend === true ? 'True' : 'False'), {
      description: 'Whether later executions are suspended.',
    }),
    col('Active', (o) => (asObj(o.status)?.active as unknown[] | undefined)?.length ?? 0, {
      type: 'integer',
      description: 'Number of running jobs.',
    }),
    col(
      'Last Schedule',
      (o, now) => {
        const t = Date.parse(asString(asObj(o.status)?.lastScheduleTime) ?? '');
        return Number.isNaN(t) ? '<none>' : humanDuration(now - t);
      },
      { description: 'The last time the job was successfully scheduled.' },
    ),
    AGE_COLUMN,
    col('Containers', (o) => containersText(jobTemplateOf(o), 'name'), {
      priority: 1,
      description: 'Names of each container in the template.',
    }),
    col('Images', (o) => containersText(jobTemplateOf(o), 'image'), {
      priority: 1,
      description: 'Images referenced by each container in the template.',
    }),
    col('Selector', (o) => mapText(asObj(asObj(jobTemplateOf(o).spec)?.selector)?.matchLabels), {
      priority: 1,
      description: 'Selector for the jobs created by the cron job.',
    }),
  ],
  strategy: {
    statusSubresource: true,
    generationOf: specGeneration,
    prepareForCreate(_ctx, obj) {
      const spec = asObj(obj.spec) ?? {};
      obj.spec = spec;
      spec.concurrencyPolicy ??= 'Allow';
      spec.suspend ??= false;
      spec.successfulJobsHistoryLimit ??= 3;
      spec.failedJobsHistoryLimit ??= 1;
      templateDefaults(jobTemplateOf(obj));
      obj.status = {};
    },
    prepareForUpdate(_ctx, obj, old) {
      keepOldStatus(obj, old);
      templateDefaults(jobTemplateOf(obj));
    },
    prepareForStatusUpdate(_ctx, obj, old) {
      statusOnly(obj, old, true);
    },
    validate(_ctx, obj) {
      const spec = asObj(obj.spec) ?? {};
      const errs: FieldError[] = [];
      const schedule = asString(spec.schedule) ?? '';
      if (!schedule) errs.push(field.required('spec.schedule'));
      else if (!validSchedule(schedule))
        errs.push(field.invalid('spec.schedule', schedule, 'unparseable cron schedule'));
      const policies = ['Allow', 'Forbid', 'Replace'];
      const policy = asString(spec.concurrencyPolicy) ?? '';
      if (!policies.includes(policy))
        errs.push(field.notSupported('spec.concurrencyPolicy', policy, policies));
      errs.push(
        ...validateJobTemplate('spec.jobTemplate.spec.template', asObj(jobTemplateOf(obj).spec)?.template),
      );
      return errs;
    },
  },
});

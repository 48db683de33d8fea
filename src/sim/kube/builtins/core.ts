/**
 * Core/v1 kinds other than Service: Namespace, Node, Pod, ConfigMap, Secret, ServiceAccount,
 * Endpoints and Event (also served as events.k8s.io/v1 over the same storage). Defaults,
 * status handling, validation and table columns follow the real registry strategies for the
 * fields our controllers read and write.
 */
import { apiErrors, field, type FieldError } from '../errors.ts';
import { asArray, asNumber, asObj, asString, deepEqual, meta, metaOf, nameOf, type Obj } from '../json.ts';
import { CONDITIONS, keyed, mount, POD_SPEC_HINTS } from '../patch/hints.ts';
import { AGE_COLUMN, col, since } from '../table.ts';
import type { ResourceDef } from '../types.ts';
import {
  builtin,
  dns1123Label,
  keepOldStatus,
  qualifiedName,
  STATUS_SUBRESOURCE_HOOKS,
  statusOnly,
  str,
} from './common.ts';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

function validateConfigKeys(path: string, data: unknown, errs: FieldError[]): void {
  for (const k of Object.keys(asObj(data) ?? {})) {
    if (!CONFIG_KEY.test(k) || k.length > 253) errs.push(field.invalid(`${path}[${k}]`, k, CONFIG_KEY_MSG));
  }
}

function immutableData(obj: Obj, old: Obj, keys: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  for (const k of keys) {
    if (!deepEqual(obj[k] ?? {}, old[k] ?? {})) {
      errs.push(field.forbidden(k, 'field is immutable when `immutable` is set'));
    }
  }
  if (obj.immutable !== true)
    errs.push(field.forbidden('immutable', 'field is immutable when `immutable` is set'));
  return errs;
}

/* ---------------------------------------------------------------- namespaces */

function namespacePhase(o: Obj): string {
  return asString(asObj(o.status)?.phase) ?? '';
}

export const namespaces: ResourceDef = builtin({
  resource: 'namespaces',
  kind: 'Namespace',
  namespaced: false,
  shortNames: ['ns'],
  subresources: ['status', 'finalize'],
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  hints: { 'status.conditions': CONDITIONS },
  fields: { 'status.phase': str('status', 'phase') },
  columns: [col('Status', namespacePhase, { description: 'The status of the namespace' }), AGE_COLUMN],
  strategy: {
    statusSubresource: true,
    returnDeletedObject: true,
    nameRule: 'label',
    prepareForCreate(_ctx, obj) {
      obj.status = { phase: 'Active' };
      const spec = asObj(obj.spec) ?? {};
      const fin = asArray(spec.finalizers) ?? [];
      spec.finalizers = fin.includes('kubernetes') ? fin : [...fin, 'kubernetes'];
      obj.spec = spec;
      namespaceNameLabel(obj);
    },
    prepareForUpdate(_ctx, obj, old) {
      keepOldStatus(obj, old);
      // spec.finalizers change only through /finalize.
      obj.spec = structuredClone(old.spec ?? {});
      namespaceNameLabel(obj);
    },
    prepareForStatusUpdate(_ctx, obj, old) {
      statusOnly(obj, old, true);
    },
    gracefulDelete(ctx, obj) {
      const m = metaOf(obj);
      const specFin = asArray(asObj(obj.spec)?.finalizers) ?? [];
      if (m.deletionTimestamp) return obj;
      if (specFin.length === 0 && (asArray(m.finalizers) ?? []).length === 0) return undefined;
      const next = structuredClone(obj);
      meta(next).deletionTimestamp = ctx.now;
      meta(next).deletionGracePeriodSeconds = 0;
      next.status = { ...(asObj(next.status) ?? {}), phase: 'Terminating' };
      return next;
    },
  },
});

/** The immutable `kubernetes.io/metadata.name` label every namespace carries since 1.21. */
function namespaceNameLabel(obj: Obj): void {
  const m = meta(obj);
  m.labels = { ...(asObj(m.labels) ?? {}), 'kubernetes.io/metadata.name': nameOf(obj) };
}

/* --------------------------------------------------------------------- nodes */

function nodeStatus(o: Obj): string {
  const ready = (asArray(asObj(o.status)?.conditions) ?? []).map(asObj).find((c) => c?.type === 'Ready');
  let s = ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown';
  if (asObj(o.spec)?.unschedulable === true) s += ',SchedulingDisabled';
  return s;
}

function nodeRoles(o: Obj): string {
  const roles: string[] = [];
  for (const [k, v] of Object.entries(asObj(metaOf(o).labels) ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) roles.push(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role' && typeof v === 'string') roles.push(v);
  }
  return roles.length ? roles.sort().join(',') : '<none>';
}

function nodeAddress(type: string): (o: Obj) => string {
  return (o) => {
    const a = (asArray(asObj(o.status)?.addresses) ?? []).map(asObj).find((x) => x?.type === type);
    return asString(a?.address) ?? '<none>';
  };
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export const nodes: ResourceDef = builtin({
  resource: 'nodes',
  kind: 'Node',
  namespaced: false,
  shortNames: ['no'],
  subresources: ['status'],
  hints: {
    'status.conditions': CONDITIONS,
    'status.addresses': keyed('type', ['type']),
    'spec.podCIDRs': { patchStrategy: ['merge'], list: { type: 'set' } },
  },
  fields: { 'spec.unschedulable': (o) => String(asObj(o.spec)?.unschedulable === true) },
  columns: [
    col('Status', nodeStatus, { description: 'The status of the node' }),
    col('Roles', nodeRoles, { description: 'The roles of the node' }),
    AGE_COLUMN,
    col('Version', str('status', 'nodeInfo', 'kubeletVersion'), {
      description: 'Kubelet Version reported by the node.',
    }),
    col('Internal-IP', nodeAddress('InternalIP'), {
      priority: 1,
      description: 'List of internal IPs for the node.',
    }),
    col('External-IP', nodeAddress('ExternalIP'), {
      priority: 1,
      description: 'List of external IPs for the node.',
    }),
    col('OS-Image', (o) => str('status', 'nodeInfo', 'osImage')(o) || '<unknown>', {
      priority: 1,
      description: 'OS image reported by the node.',
    }),
    col('Kernel-Version', (o) => str('status', 'nodeInfo', 'kernelVersion')(o) || '<unknown>', {
      priority: 1,
      description: 'Kernel version reported by the node.',
    }),
    col('Container-Runtime', (o) => str('status', 'nodeInfo', 'containerRuntimeVersion')(o) || '<unknown>', {
      priority: 1,
      description: 'Container runtime version reported by the node.',
    }),
  ],
  strategy: {
    statusSubresource: true,
    allowCreateOnUpdate: false,
    ...STATUS_SUBRESOURCE_HOOKS,
    validate(_ctx, obj) {
      const errs: FieldError[] = [];
      (asArray(asObj(obj.spec)?.taints) ?? []).forEach((t, i) => {
        const taint = asObj(t) ?? {};
        const p = `spec.taints[${i}]`;
        const key = asString(taint.key) ?? '';
        if (!key) errs.push(field.required(`${p}.key`));
        else errs.push(...qualifiedName(`${p}.key`, key));
        const effect = asString(taint.effect) ?? '';
        if (!effect) errs.push(field.required(`${p}.effect`));
        else if (!TAINT_EFFECTS.includes(effect))
          errs.push(field.notSupported(`${p}.effect`, effect, TAINT_EFFECTS));
      });
      return errs;
    },
    validateUpdate(_ctx, obj, old) {
      const before = asString(asObj(old.spec)?.providerID) ?? '';
      const after = asString(asObj(obj.spec)?.providerID) ?? '';
      if (before && before !== after) {
        return [
          field.forbidden(
            'spec.providerID',
            'node updates may not change providerID except from "" to valid',
          ),
        ];
      }
      return [];
    },
  },
});

/* ---------------------------------------------------------------------- pods */

function defaultContainers(list: unknown): void {
  for (const c of asArray(list) ?? []) {
    const ctr = asObj(c);
    if (!ctr) continue;
    ctr.terminationMessagePath ??= '/dev/termination-log';
    ctr.terminationMessagePolicy ??= 'File';
    if (ctr.imagePullPolicy === undefined) {
      const image = asString(ctr.image) ?? '';
      const tagged = /:[^/]+$/.test(image.split('@')[0] ?? '');
      ctr.imagePullPolicy = !tagged || image.endsWith(':latest') ? 'Always' : 'IfNotPresent';
    }
    ctr.resources ??= {};
    for (const p of asArray(ctr.ports) ?? []) {
      const port = asObj(p);
      if (port) port.protocol ??= 'TCP';
    }
  }
}

/** Pod spec defaults (SetDefaults_PodSpec and the admission plugins that always run). */
export function defaultPodSpec(spec: Obj): void {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.securityContext ??= {};
  spec.schedulerName ??= 'default-scheduler';
  spec.enableServiceLinks ??= true;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  spec.priority ??= 0;
  spec.serviceAccountName ??= 'default';
  spec.serviceAccount ??= spec.serviceAccountName;
  defaultContainers(spec.containers);
  defaultContainers(spec.initContainers);
}

function qosClass(spec: Obj): string {
  const containers = (asArray(spec.containers) ?? []).map(asObj).filter((c): c is Obj => !!c);
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const r = asObj(c.resources) ?? {};
    const req = asObj(r.requests) ?? {};
    const lim = asObj(r.limits) ?? {};
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const res of ['cpu', 'memory']) {
      if (lim[res] === undefined || (req[res] !== undefined && req[res] !== lim[res])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** Fields of a pod's spec that may change after creation (ValidatePodUpdate). */
function mutablePodSpec(spec: Obj): Obj {
  const copy = structuredClone(spec);
  delete copy.activeDeadlineSeconds;
  delete copy.tolerations;
  delete copy.terminationGracePeriodSeconds;
  for (const k of ['containers', 'initContainers']) {
    for (const c of asArray(copy[k]) ?? []) {
      const ctr = asObj(c);
      if (ctr) delete ctr.image;
    }
  }
  return copy;
}

function podReady(o: Obj): string {
  const statuses = asArray(asObj(o.status)?.containerStatuses) ?? [];
  const total = (asArray(asObj(o.spec)?.containers) ?? []).length;
  const ready = statuses.filter((s) => asObj(s)?.ready === true).length;
  return `${ready}/${total}`;
}

function podStatus(o: Obj): string {
  if (metaOf(o).deletionTimestamp) return 'Terminating';
  return asString(asObj(o.status)?.reason) ?? asString(asObj(o.status)?.phase) ?? 'Unknown';
}

function podRestarts(o: Obj): number {
  let n = 0;
  for (const s of asArray(asObj(o.status)?.containerStatuses) ?? [])
    n += asNumber(asObj(s)?.restartCount) ?? 0;
  return n;
}

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];

export const pods: ResourceDef = builtin({
  resource: 'pods',
  kind: 'Pod',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  subresources: ['status', 'eviction'],
  hints: {
    ...mount('spec', POD_SPEC_HINTS),
    'status.conditions': CONDITIONS,
    'status.podIPs': keyed('ip'),
    'status.hostIPs': keyed('ip'),
  },
  fields: {
    'spec.nodeName': str('spec', 'nodeName'),
    'spec.restartPolicy': str('spec', 'restartPolicy'),
    'spec.schedulerName': str('spec', 'schedulerName'),
    'spec.serviceAccountName': str('spec', 'serviceAccountName'),
    'spec.hostNetwork': (o) => String(asObj(o.spec)?.hostNetwork === true),
    'status.phase': str('status', 'phase'),
    'status.podIP': str('status', 'podIP'),
    'status.nominatedNodeName': str('status', 'nominatedNodeName'),
  },
  columns: [
    col('Ready', podReady, {
      description: 'The aggregate readiness state of this pod for accepting traffic.',
    }),
    col('Status', podStatus, { description: 'The aggregate status of the containers in this pod.' }),
    col('Restarts', podRestarts, {
      type: 'string',
      description:
        'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    }),
    AGE_COLUMN,
    col('IP', (o) => str('status', 'podIP')(o) || '<none>', {
      priority: 1,
      description:
        'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
    }),
    col('Node', (o) => str('spec', 'nodeName')(o) || '<none>', {
      priority: 1,
      description: 'Name of the Node this Pod is bound to.',
    }),
    col('Nominated Node', (o) => str('status', 'nominatedNodeName')(o) || '<none>', {
      priority: 1,
      description: 'Name of the Node this Pod is nominated to.',
    }),
    col('Readiness Gates', () => '<none>', { priority: 1, description: 'Readiness gates of the pod.' }),
  ],
  strategy: {
    statusSubresource: true,
    returnDeletedObject: true,
    prepareForCreate(_ctx, obj) {
      const spec = asObj(obj.spec) ?? {};
      obj.spec = spec;
      defaultPodSpec(spec);
      obj.status = { phase: 'Pending', qosClass: qosClass(spec) };
    },
    ...STATUS_SUBRESOURCE_HOOKS,
    validate(_ctx, obj) {
      const errs: FieldError[] = [];
      const spec = asObj(obj.spec) ?? {};
      const containers = asArray(spec.containers) ?? [];
      if (containers.length === 0) errs.push(field.required('spec.containers'));
      const names = new Set<string>();
      containers.forEach((c, i) => {
        const ctr = asObj(c) ?? {};
        const p = `spec.containers[${i}]`;
        const name = asString(ctr.name) ?? '';
        if (!name) errs.push(field.required(`${p}.name`));
        else {
          errs.push(...dns1123Label(`${p}.name`, name));
          if (names.has(name)) errs.push(field.duplicate(`${p}.name`, name));
          names.add(name);
        }
        if (!asString(ctr.image)) errs.push(field.required(`${p}.image`));
      });
      const rp = asString(spec.restartPolicy);
      if (rp && !RESTART_POLICIES.includes(rp))
        errs.push(field.notSupported('spec.restartPolicy', rp, RESTART_POLICIES));
      return errs;
    },
    validateUpdate(_ctx, obj, old) {
      if (deepEqual(mutablePodSpec(asObj(obj.spec) ?? {}), mutablePodSpec(asObj(old.spec) ?? {}))) return [];
      return [
        field.forbidden(
          'spec',
          'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
        ),
      ];
    },
  },
});

/* ---------------------------------------------------------------- configmaps */

export const configmaps: ResourceDef = builtin({
  resource: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
  shortNames: ['cm'],
  columns: [
    col(
      'Data',
      (o) => Object.keys(asObj(o.data) ?? {}).length + Object.keys(asObj(o.binaryData) ?? {}).length,
      { type: 'integer', description: 'Data contains the configuration data.' },
    ),
  ],
  strategy: {
    prepareForCreate: (_ctx, obj) => checkBase64(obj, 'binaryData'),
    prepareForUpdate: (_ctx, obj) => checkBase64(obj, 'binaryData'),
    validate(_ctx, obj) {
      const errs: FieldError[] = [];
      validateConfigKeys('data', obj.data, errs);
      validateConfigKeys('binaryData', obj.binaryData, errs);
      for (const [k, v] of Object.entries(asObj(obj.data) ?? {})) {
        if (typeof v !== 'string') errs.push(field.invalid(`data[${k}]`, v, 'must be a string'));
        if (asObj(obj.binaryData)?.[k] !== undefined)
          errs.push(field.invalid(`data[${k}]`, k, 'duplicate of key present in binaryData'));
      }
      return errs;
    },
    validateUpdate(_ctx, obj, old) {
      return immutableData(obj, old, ['data', 'binaryData']);
    },
  },
});

/* ------------------------------------------------------------------- secrets */

export function isBase64(s: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0;
}

/** Secret data is `[]byte` on the real server: anything not base64 fails decoding with a 400. */
function checkBase64(obj: Obj, field: string): void {
  for (const v of Object.values(asObj(obj[field]) ?? {})) {
    if (typeof v !== 'string' || !isBase64(v)) {
      const kind = asString(obj.kind) ?? 'Secret';
      throw apiErrors.badRequest(
        `${kind} in version "v1" cannot be handled as a ${kind}: illegal base64 data at input byte 0`,
      );
    }
  }
}

function mergeStringData(obj: Obj): void {
  checkBase64(obj, 'data');
  const sd = asObj(obj.stringData);
  if (sd) {
    const data = asObj(obj.data) ?? {};
    for (const [k, v] of Object.entries(sd))
      data[k] = Buffer.from(typeof v === 'string' ? v : String(v as number), 'utf8').toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
}

export const secrets: ResourceDef = builtin({
  resource: 'secrets',
  kind: 'Secret',
  namespaced: true,
  fields: { type: str('type') },
  columns: [
    col('Type', str('type'), { description: 'The type of the secret' }),
    col('Data', (o) => Object.keys(asObj(o.data) ?? {}).length, {
      type: 'integer',
      description: 'The number of data keys in the secret',
    }),
  ],
  strategy: {
    prepareForCreate(_ctx, obj) {
      obj.type ??= 'Opaque';
      mergeStringData(obj);
    },
    prepareForUpdate(_ctx, obj) {
      obj.type ??= 'Opaque';
      mergeStringData(obj);
    },
    validate(_ctx, obj) {
      const errs: FieldError[] = [];
      validateConfigKeys('data', obj.data, errs);
      const data = asObj(obj.data) ?? {};
      const type = asString(obj.type) ?? 'Opaque';
      if (type === 'kubernetes.io/tls') {
        for (const k of ['tls.crt', 'tls.key'])
          if (data[k] === undefined) errs.push(field.required(`data[${k}]`));
      }
      if (
        type === 'kubernetes.io/service-account-token' &&
        !asObj(metaOf(obj).annotations)?.['kubernetes.io/service-account.name']
      ) {
        errs.push(field.required('metadata.annotations[kubernetes.io/service-account.name]'));
      }
      return errs;
    },
    validateUpdate(_ctx, obj, old) {
      const errs = immutableData(obj, old, ['data']);
      if (asString(obj.type) !== asString(old.type))
        errs.push(field.invalid('type', obj.type, 'field is immutable'));
      return errs;
    },
  },
});

/* ----------------------------------------------------------- serviceaccounts */

export const serviceaccounts: ResourceDef = builtin({
  resource: 'serviceaccounts',
  kind: 'ServiceAccount',
  namespaced: true,
  shortNames: ['sa'],
  subresources: ['token'],
  hints: { secrets: keyed('name') },
  columns: [
    col('Secrets', (o) => (asArray(o.secrets) ?? []).length, {
      type: 'integer',
      description: 'The number of secrets referenced by the service account',
    }),
  ],
  strategy: { returnDeletedObject: true },
});

/* ----------------------------------------------------------------- endpoints */

function endpointsText(o: Obj): string {
  const out: string[] = [];
  for (const s of asArray(o.subsets) ?? []) {
    const subset = asObj(s) ?? {};
    const ports = (asArray(subset.ports) ?? []).map((p) => asNumber(asObj(p)?.port));
    for (const a of asArray(subset.addresses) ?? []) {
      const ip = asString(asObj(a)?.ip) ?? '';
      if (ports.length === 0) out.push(ip);
      for (const p of ports) out.push(`${ip}:${p ?? ''}`);
    }
  }
  if (out.length === 0) return '<none>';
  return out.length > 3 ? `${out.slice(0, 3).join(',')} + ${out.length - 3} more...` : out.join(',');
}

export const endpoints: ResourceDef = builtin({
  resource: 'endpoints',
  kind: 'Endpoints',
  singular: 'endpoints',
  namespaced: true,
  shortNames: ['ep'],
  columns: [col('Endpoints', endpointsText, { description: 'Endpoints of the service' })],
  strategy: { allowCreateOnUpdate: true },
});

/* -------------------------------------------------------------------- events */

function eventObject(o: Obj): string {
  const io = asObj(o.involvedObject) ?? {};
  return `${(asString(io.kind) ?? '').toLowerCase()}/${asString(io.name) ?? ''}`;
}

function lastSeen(o: Obj, now: number): string {
  const ts = o.lastTimestamp ?? o.eventTime ?? metaOf(o).creationTimestamp;
  return since(ts, now);
}

const EVENT_FIELD = (...p: string[]) => str(...p);

/**
 * The API server's rule tying an Event's namespace to its subject's (ValidateEventCreate): a
 * namespaced subject's Events live in its namespace; a cluster-scoped subject's (a Node's) in
 * `default` — or, for new-style events with an eventTime, also `kube-system`.
 */
function eventNamespaceErrors(obj: Obj, subjectPath: 'involvedObject' | 'regarding'): FieldError[] {
  const eventNs = asString(metaOf(obj).namespace) ?? '';
  const subjectNs = asString(asObj(obj.involvedObject)?.namespace) ?? '';
  const allowed = subjectNs ? [subjectNs] : obj.eventTime ? ['default', 'kube-system'] : ['', 'default'];
  if (allowed.includes(eventNs)) return [];
  return [field.invalid(`${subjectPath}.namespace`, subjectNs, 'does not match event.namespace')];
}

const eventFields: Record<string, (o: Obj) => string> = {
  'involvedObject.kind': EVENT_FIELD('involvedObject', 'kind'),
  'involvedObject.namespace': EVENT_FIELD('involvedObject', 'namespace'),
  'involvedObject.name': EVENT_FIELD('involvedObject', 'name'),
  'involvedObject.uid': EVENT_FIELD('involvedObject', 'uid'),
  'involvedObject.apiVersion': EVENT_FIELD('involvedObject', 'apiVersion'),
  'involvedObject.resourceVersion': EVENT_FIELD('involvedObject', 'resourceVersion'),
  'involvedObject.fieldPath': EVENT_FIELD('involvedObject', 'fieldPath'),
  reason: EVENT_FIELD('reason'),
  reportingComponent: EVENT_FIELD('reportingComponent'),
  source: EVENT_FIELD('source', 'component'),
  type: EVENT_FIELD('type'),
};

export const events: ResourceDef = builtin({
  resource: 'events',
  kind: 'Event',
  namespaced: true,
  shortNames: ['ev'],
  fields: eventFields,
  fullColumns: [
    col('Last Seen', lastSeen, { description: 'Time when this Event was last seen' }),
    col('Type', str('type'), {
      description: 'Type of this event (Normal, Warning), new types could be added in the future.',
    }),
    col('Reason', str('reason'), { description: 'The reason this event was generated' }),
    col('Object', eventObject, { description: 'The object that this event is about' }),
    col('Subobject', str('involvedObject', 'fieldPath'), {
      priority: 1,
      description: 'The subobject that this event is about',
    }),
    col('Source', (o) => str('source', 'component')(o) || str('reportingComponent')(o), {
      priority: 1,
      description: 'The component reporting this event',
    }),
    col('Message', str('message'), {
      description: 'A human-readable description of the status of this operation.',
    }),
    col('First Seen', (o, now) => since(o.firstTimestamp ?? o.eventTime, now), {
      priority: 1,
      description: 'The time at which the event was first recorded',
    }),
    col('Count', (o) => asNumber(o.count) ?? 1, {
      type: 'integer',
      priority: 1,
      description: 'The number of times this event has occurred',
    }),
    col('Name', (o) => nameOf(o), { priority: 1, description: 'Name of the event' }),
  ],
  strategy: {
    allowCreateOnUpdate: true,
    validate: (_ctx, obj) => eventNamespaceErrors(obj, 'involvedObject'),
  },
});

/** events.k8s.io/v1 field names ↔ core/v1 (the storage form). */
const EVENT_RENAMES: [string, string][] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

function rename(o: Obj, pairs: [string, string][]): Obj {
  const out: Obj = {};
  const map = new Map(pairs);
  for (const [k, v] of Object.entries(o)) out[map.get(k) ?? k] = v;
  return out;
}

export const eventsV1: ResourceDef = builtin({
  group: 'events.k8s.io',
  resource: 'events',
  kind: 'Event',
  namespaced: true,
  shortNames: ['ev'],
  storageKey: '/events',
  fields: {},
  fullColumns: events.columns,
  toStorage: (o) => ({ ...rename(o, EVENT_RENAMES), apiVersion: 'v1' }),
  fromStorage: (o) => ({
    ...rename(
      o,
      EVENT_RENAMES.map(([a, b]) => [b, a]),
    ),
    apiVersion: 'events.k8s.io/v1',
  }),
  strategy: {
    allowCreateOnUpdate: true,
    validate(_ctx, obj) {
      // The API server's legacy rules, on every write: a new-style Event (with an eventTime) names
      // who reported it and why.
      const errs: FieldError[] = [];
      if (obj.eventTime) {
        for (const [wire, stored] of [
          ['reportingController', 'reportingComponent'],
          ['reportingInstance', 'reportingInstance'],
          ['action', 'action'],
          ['reason', 'reason'],
        ] as const) {
          if (!asString(obj[stored])) errs.push(field.required(wire));
        }
      }
      errs.push(...eventNamespaceErrors(obj, 'regarding'));
      return errs;
    },
    validateCreate(_ctx, obj) {
      // ValidateEventCreate's strict rules for events.k8s.io/v1: the structured fields are
      // required and the core/v1 compatibility fields (deprecated* here) must be unset — so a
      // recorder cannot fill lastTimestamp through this API; only core/v1 Events carry it.
      const errs: FieldError[] = [];
      if (!obj.eventTime) errs.push(field.required('eventTime'));
      const type = asString(obj.type);
      if (type !== 'Normal' && type !== 'Warning')
        errs.push(field.invalid('type', '', `has invalid value: ${type ?? ''}`));
      for (const stored of ['firstTimestamp', 'lastTimestamp']) {
        if (obj[stored]) errs.push(field.invalid(stored, '', 'needs to be unset'));
      }
      if (asNumber(obj.count)) errs.push(field.invalid('count', '', 'needs to be unset'));
      const source = asObj(obj.source);
      if (asString(source?.component) || asString(source?.host))
        errs.push(field.invalid('source', '', 'needs to be unset'));
      return errs;
    },
    validateUpdate(_ctx, obj, old) {
      // ValidateEventUpdate for events.k8s.io/v1: only the series (and metadata) may change.
      const errs: FieldError[] = [];
      for (const stored of EVENT_IMMUTABLE) {
        if (!deepEqual(obj[stored] ?? null, old[stored] ?? null))
          errs.push(field.invalid(stored, obj[stored] ?? '', 'field is immutable'));
      }
      return errs;
    },
  },
});

/** What an events.k8s.io/v1 update may not change (storage names). */
const EVENT_IMMUTABLE = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
];

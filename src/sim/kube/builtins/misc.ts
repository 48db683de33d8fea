/**
 * Leases (coordination.k8s.io/v1), EndpointSlices (discovery.k8s.io/v1) and NetworkPolicies
 * (networking.k8s.io/v1): storage with their defaults and the validation controllers trip over.
 */
import { field, type FieldError } from '../errors.ts';
import { asArray, asNumber, asObj, asString, type Obj } from '../json.ts';
import { col, mapText } from '../table.ts';
import type { ResourceDef } from '../types.ts';
import { builtin, specGeneration } from './common.ts';

export const leases: ResourceDef = builtin({
  group: 'coordination.k8s.io',
  resource: 'leases',
  kind: 'Lease',
  namespaced: true,
  columns: [
    col('Holder', (o) => asString(asObj(o.spec)?.holderIdentity) ?? '', {
      description: 'The holder of the lease',
    }),
  ],
  strategy: {
    validate(_ctx, obj) {
      const errs: FieldError[] = [];
      const spec = asObj(obj.spec) ?? {};
      const d = asNumber(spec.leaseDurationSeconds);
      if (d !== undefined && d <= 0)
        errs.push(field.invalid('spec.leaseDurationSeconds', d, 'must be greater than 0'));
      const t = asNumber(spec.leaseTransitions);
      if (t !== undefined && t < 0)
        errs.push(field.invalid('spec.leaseTransitions', t, 'must be greater than or equal to 0'));
      return errs;
    },
  },
});

const ADDRESS_TYPES = ['IPv4', 'IPv6', 'FQDN'];

function withoutMeta(o: Obj): unknown {
  const { metadata: _m, ...rest } = o;
  return rest;
}

function slicePorts(o: Obj): string {
  const ps = (asArray(o.ports) ?? []).map((p) => asNumber(asObj(p)?.port)).filter((p) => p !== undefined);
  return ps.length ? ps.join(',') : '<unset>';
}

function sliceEndpoints(o: Obj): string {
  const addrs: string[] = [];
  for (const e of asArray(o.endpoints) ?? [])
    for (const a of asArray(asObj(e)?.addresses) ?? []) if (typeof a === 'string') addrs.push(a);
  if (addrs.length === 0) return '<unset>';
  return addrs.length > 3 ? `${addrs.slice(0, 3).join(',')} + ${addrs.length - 3} more...` : addrs.join(',');
}

export const endpointslices: ResourceDef = builtin({
  group: 'discovery.k8s.io',
  resource: 'endpointslices',
  kind: 'EndpointSlice',
  namespaced: true,
  columns: [
    col('AddressType', (o) => asString(o.addressType) ?? '', {
      description: 'The IP protocol for this slice',
    }),
    col('Ports', slicePorts, { description: 'The ports for this slice' }),
    col('Endpoints', sliceEndpoints, { description: 'First 3 endpoints for this slice' }),
  ],
  strategy: {
    generationOf: withoutMeta,
    validate(_ctx, obj) {
      const errs: FieldError[] = [];
      const t = asString(obj.addressType);
      if (!t) errs.push(field.required('addressType'));
      else if (!ADDRESS_TYPES.includes(t)) errs.push(field.notSupported('addressType', t, ADDRESS_TYPES));
      (asArray(obj.endpoints) ?? []).forEach((e, i) => {
        const addrs = asArray(asObj(e)?.addresses) ?? [];
        if (addrs.length === 0)
          errs.push(field.required(`endpoints[${i}].addresses`, 'must contain at least 1 address'));
      });
      return errs;
    },
    validateUpdate(_ctx, obj, old) {
      return asString(obj.addressType) === asString(old.addressType)
        ? []
        : [field.invalid('addressType', obj.addressType, 'field is immutable')];
    },
  },
});

export const networkpolicies: ResourceDef = builtin({
  group: 'networking.k8s.io',
  resource: 'networkpolicies',
  kind: 'NetworkPolicy',
  namespaced: true,
  shortNames: ['netpol'],
  columns: [
    col(
      'Pod-Selector',
      (o) => {
        const t = mapText(asObj(asObj(o.spec)?.podSelector)?.matchLabels);
        return t === '<none>' ? '<none>' : t;
      },
      { description: 'The label selector of the pods this policy applies to' },
    ),
  ],
  strategy: {
    generationOf: specGeneration,
    prepareForCreate(_ctx, obj) {
      defaultPolicy(obj);
    },
    prepareForUpdate(_ctx, obj) {
      defaultPolicy(obj);
    },
    validate(_ctx, obj) {
      const spec = asObj(obj.spec);
      if (!spec || !asObj(spec.podSelector)) return [field.required('spec.podSelector')];
      const errs: FieldError[] = [];
      (asArray(spec.policyTypes) ?? []).forEach((t, i) => {
        if (t !== 'Ingress' && t !== 'Egress')
          errs.push(field.notSupported(`spec.policyTypes[${i}]`, t, ['Ingress', 'Egress']));
      });
      return errs;
    },
  },
});

function defaultPolicy(obj: Obj): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  if (spec.policyTypes === undefined) {
    spec.policyTypes = spec.egress !== undefined ? ['Ingress', 'Egress'] : ['Ingress'];
  }
  for (const dir of ['ingress', 'egress']) {
    for (const rule of asArray(spec[dir]) ?? []) {
      for (const p of asArray(asObj(rule)?.ports) ?? []) {
        const port = asObj(p);
        if (port) port.protocol ??= 'TCP';
      }
    }
  }
}

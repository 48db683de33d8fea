/**
 * Leases (coordination.k8s.io/v1), EndpointSlices (discovery.k8s.io/v1), NetworkPolicies and
 * Ingresses (networking.k8s.io/v1): storage with their defaults and the validation controllers
 * trip over.
 */
import { field, type FieldError } from '../errors.ts';
import { asArray, asNumber, asObj, asString, type Obj } from '../json.ts';
import { col, mapText } from '../table.ts';
import type { ResourceDef } from '../types.ts';
import { builtin, specGeneration, STATUS_SUBRESOURCE_HOOKS } from './common.ts';

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

/** printIngress's HOSTS: the rules' hosts (`*` for none), the first four and a count of the rest. */
function ingressHosts(o: Obj): string {
  const hosts = (asArray(asObj(o.spec)?.rules) ?? []).map((r) => asString(asObj(r)?.host) || '*');
  if (hosts.length === 0) return '*';
  return hosts.length > 4 ? `${hosts.slice(0, 4).join(',')} + ${hosts.length - 4} more...` : hosts.join(',');
}

function ingressAddress(o: Obj): string {
  const lb = asArray(asObj(asObj(asObj(o.status)?.loadBalancer))?.ingress) ?? [];
  return lb
    .map((i) => asString(asObj(i)?.ip) || asString(asObj(i)?.hostname) || '')
    .filter(Boolean)
    .join(',');
}

const PATH_TYPES = ['Exact', 'Prefix', 'ImplementationSpecific'];

function validateBackend(path: string, backend: unknown): FieldError[] {
  const b = asObj(backend);
  if (!b) return [field.required(path)];
  const svc = asObj(b.service);
  const res = asObj(b.resource);
  if (svc && res) return [field.invalid(path, '', 'cannot set both resource and service backends')];
  if (res) return [];
  if (!svc) return [field.invalid(path, '', 'resource or service backend is required')];
  const errs: FieldError[] = [];
  if (!asString(svc.name)) errs.push(field.required(`${path}.service.name`));
  const port = asObj(svc.port) ?? {};
  if (port.name === undefined && port.number === undefined)
    errs.push(field.required(`${path}.service.port`, 'port name or number is required'));
  if (port.name !== undefined && port.number !== undefined)
    errs.push(field.invalid(`${path}.service.port`, port, 'cannot set both port name & port number'));
  return errs;
}

export const ingresses: ResourceDef = builtin({
  group: 'networking.k8s.io',
  resource: 'ingresses',
  kind: 'Ingress',
  namespaced: true,
  shortNames: ['ing'],
  subresources: ['status'],
  columns: [
    col('Class', (o) => asString(asObj(o.spec)?.ingressClassName) ?? '<none>', {
      description: 'The name of the IngressClass resource that should be used for this Ingress.',
    }),
    col('Hosts', ingressHosts, {
      description: 'Hosts that incoming requests are matched against before the ingress rule',
    }),
    col('Address', ingressAddress, {
      description: 'Address is a list containing ingress points for the load-balancer',
    }),
    col('Ports', (o) => ((asArray(asObj(o.spec)?.tls) ?? []).length ? '80, 443' : '80'), {
      description: 'Ports of TLS configurations that open',
    }),
  ],
  strategy: {
    statusSubresource: true,
    generationOf: specGeneration,
    ...STATUS_SUBRESOURCE_HOOKS,
    prepareForCreate(_ctx, obj) {
      obj.status = {};
    },
    validate(_ctx, obj) {
      const spec = asObj(obj.spec) ?? {};
      const errs: FieldError[] = [];
      const rules = asArray(spec.rules) ?? [];
      if (spec.defaultBackend === undefined && rules.length === 0)
        errs.push(field.invalid('spec.rules', [], 'either `defaultBackend` or `rules` must be specified'));
      if (spec.defaultBackend !== undefined)
        errs.push(...validateBackend('spec.defaultBackend', spec.defaultBackend));
      rules.forEach((r, i) => {
        const paths = asArray(asObj(asObj(r)?.http)?.paths) ?? [];
        paths.forEach((p, j) => {
          const at = `spec.rules[${i}].http.paths[${j}]`;
          const po = asObj(p) ?? {};
          const t = asString(po.pathType);
          if (!t) errs.push(field.required(`${at}.pathType`, 'pathType must be specified'));
          else if (!PATH_TYPES.includes(t)) errs.push(field.notSupported(`${at}.pathType`, t, PATH_TYPES));
          errs.push(...validateBackend(`${at}.backend`, po.backend));
        });
      });
      return errs;
    },
  },
});

/**
 * OpenStackMachine and OpenStackMachineTemplate, v1beta1 ↔ v1beta2 (CAPO main
 * `api/v1beta1/conversion.go`): flavor/flavorID ↔ the flavor param, disablePortSecurity ↔
 * enablePortSecurity on ports (spec and resolved), and the status changes of ./status.ts. The
 * machine spec conversions also serve the bastion of an OpenStackCluster.
 */
import { type Carry, isObj, type Json } from './carry.ts';
import { mapObjects, renameNegated, updateObject } from './fields.ts';
import { conditionsDown, conditionsUp, deprecatedStatusDown, deprecatedStatusUp } from './status.ts';

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';

export function portUp(p: Json): Json {
  renameNegated(p, 'disablePortSecurity', 'enablePortSecurity');
  return p;
}

export function portDown(p: Json): Json {
  renameNegated(p, 'enablePortSecurity', 'disablePortSecurity');
  return p;
}

export function resolvedUp(r: Json): Json {
  r.ports = mapObjects(r.ports, portUp);
  if (r.ports === undefined) delete r.ports;
  return r;
}

export function resolvedDown(r: Json): Json {
  r.ports = mapObjects(r.ports, portDown);
  if (r.ports === undefined) delete r.ports;
  return r;
}

/**
 * flavorID becomes `flavor.id`, else flavor becomes `flavor.filter.name`. When both are set (the
 * ID wins, as in v1beta1) the name is kept for the way back.
 */
export function machineSpecUp(spec: Json, carry: Carry, path: string): Json {
  const { flavor, flavorID } = spec;
  delete spec.flavor;
  delete spec.flavorID;
  const v1beta1 = {
    ...(flavor !== undefined ? { flavor } : {}),
    ...(flavorID !== undefined ? { flavorID } : {}),
  };
  if (nonEmpty(flavorID)) spec.flavor = { id: flavorID };
  else if (nonEmpty(flavor)) spec.flavor = { filter: { name: flavor } };
  else {
    const taken = carry.take(`${path}.flavor`);
    if (taken !== undefined) spec.flavor = taken;
  }
  const plain = nonEmpty(flavorID) ? flavor === undefined : nonEmpty(flavor) && flavorID === undefined;
  if (!plain && Object.keys(v1beta1).length > 0) carry.keep(`${path}.flavor`, v1beta1);
  if (spec.ports !== undefined) spec.ports = mapObjects(spec.ports, portUp);
  return spec;
}

export function machineSpecDown(spec: Json, carry: Carry, path: string): Json {
  const f = spec.flavor;
  delete spec.flavor;
  const id = isObj(f) ? f.id : undefined;
  const name = isObj(f) && isObj(f.filter) ? f.filter.name : undefined;
  if (nonEmpty(id)) spec.flavorID = id;
  else if (nonEmpty(name)) spec.flavor = name;
  else if (f !== undefined) carry.keep(`${path}.flavor`, f);
  const taken = carry.take(`${path}.flavor`);
  if (isObj(taken)) {
    const agrees = nonEmpty(id)
      ? taken.flavorID === id
      : nonEmpty(name)
        ? taken.flavor === name
        : f === undefined || !isObj(f) || (id === undefined && name === undefined);
    if (agrees) {
      delete spec.flavor;
      delete spec.flavorID;
      if (taken.flavor !== undefined) spec.flavor = taken.flavor;
      if (taken.flavorID !== undefined) spec.flavorID = taken.flavorID;
    }
  }
  if (spec.ports !== undefined) spec.ports = mapObjects(spec.ports, portDown);
  return spec;
}

export function openStackMachineUp(o: Json, carry: Carry): void {
  updateObject(o, 'spec', (s) => machineSpecUp(s, carry, 'spec'));
  updateObject(o, 'status', (s) => {
    deprecatedStatusUp(s, carry);
    conditionsUp(s, carry, 'status.conditions');
    updateObject(s, 'resolved', resolvedUp);
    updateObject(s, 'acceptedSpec', (a) => machineSpecUp(a, carry, 'status.acceptedSpec'));
    return s;
  });
}

export function openStackMachineDown(o: Json, carry: Carry): void {
  updateObject(o, 'spec', (s) => machineSpecDown(s, carry, 'spec'));
  updateObject(o, 'status', (s) => {
    conditionsDown(s, carry, 'status.conditions');
    deprecatedStatusDown(s, carry);
    updateObject(s, 'resolved', resolvedDown);
    updateObject(s, 'acceptedSpec', (a) => machineSpecDown(a, carry, 'status.acceptedSpec'));
    return s;
  });
}

function templateSpec(o: Json, f: (spec: Json) => Json): void {
  updateObject(o, 'spec', (s) => {
    updateObject(s, 'template', (t) => {
      updateObject(t, 'spec', f);
      return t;
    });
    return s;
  });
}

export function openStackMachineTemplateUp(o: Json, carry: Carry): void {
  templateSpec(o, (s) => machineSpecUp(s, carry, 'spec.template.spec'));
  updateObject(o, 'status', (s) => {
    conditionsUp(s, carry, 'status.conditions');
    return s;
  });
}

export function openStackMachineTemplateDown(o: Json, carry: Carry): void {
  templateSpec(o, (s) => machineSpecDown(s, carry, 'spec.template.spec'));
  updateObject(o, 'status', (s) => {
    conditionsDown(s, carry, 'status.conditions');
    return s;
  });
}

export { templateSpec };

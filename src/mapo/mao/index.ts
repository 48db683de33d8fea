/**
 * The machine-api-operator's own controllers around the Machine API — MachineSet, nodelink and
 * machine-drain — for clusters where no machine-api-operator runs: plain Kubernetes and the demo.
 * On OpenShift the machine-api-operator runs them itself, so `shiftstack mapo` registers these
 * only with `--act-as-machine-api-operator`, as capo's `--act-as-cluster-api-core` stands in
 * for Cluster API core. See docs/mapo.md#the-machine-api-operators-controllers.
 */
import type { Manager } from '../../kube/index.ts';
import { registerDrainController, type DrainControllerOptions } from './drain.ts';
import { registerMachineSetController, type MachineSetControllerOptions } from './machineset.ts';
import { registerNodelinkController, type NodelinkControllerOptions } from './nodelink.ts';

export {
  DRAIN_CONTROLLER,
  DRAINABLE,
  DRAINED,
  DrainBlockedError,
  DrainEventReasons,
  DrainReasons,
} from './drain.ts';
export { BURST_REPLICAS, MACHINESET_CONTROLLER, MachineSetEventReasons } from './machineset.ts';
export { AmbiguousMachineError, NODELINK_CONTROLLER } from './nodelink.ts';
export type { DrainControllerOptions, MachineSetControllerOptions, NodelinkControllerOptions };

export interface MachineAPIOperatorOptions {
  machineSet?: MachineSetControllerOptions;
  nodelink?: NodelinkControllerOptions;
  drain?: DrainControllerOptions;
}

/** Registers the MachineSet (`machineset`), nodelink (`nodelink`) and drain (`machine-drain`) controllers on `mgr`. */
export function registerMachineAPIOperatorControllers(
  mgr: Manager,
  opts: MachineAPIOperatorOptions = {},
): void {
  registerMachineSetController(mgr, opts.machineSet);
  registerNodelinkController(mgr, opts.nodelink);
  registerDrainController(mgr, opts.drain);
}

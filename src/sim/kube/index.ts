/** The Kubernetes API emulator: see docs/sim-kube.md. */
export { KubeEmulator, type KubeEmulatorOptions } from './emulator.ts';
export { startKubeSim, type RunningKubeSim, type StartKubeSimOptions } from './start.ts';
export { StatusError, apiErrors, type Status } from './errors.ts';
export type { Action, Reactor, ReactorResult, Verb } from './reactors.ts';
export { kubeconfigText } from './kubeconfig.ts';

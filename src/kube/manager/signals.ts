/**
 * SIGTERM/SIGINT → an AbortSignal for `Manager.start` (controller-runtime's
 * `SetupSignalHandler`): the first signal starts a graceful stop; a second one exits at once with
 * status 1, for the operator who does not want to wait (kube-rs `shutdown_on_signal`).
 */

export interface SignalSource {
  on(event: NodeJS.Signals, fn: () => void): unknown;
  off(event: NodeJS.Signals, fn: () => void): unknown;
}

export interface ShutdownSignal {
  signal: AbortSignal;
  /** Removes the handlers (tests; a process that exits anyway need not call it). */
  dispose(): void;
}

export function shutdownSignal(
  opts: { signals?: NodeJS.Signals[]; source?: SignalSource; exit?: (code: number) => void } = {},
): ShutdownSignal {
  const signals = opts.signals ?? ['SIGTERM', 'SIGINT'];
  const source = opts.source ?? process;
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const controller = new AbortController();
  const handler = (name: NodeJS.Signals) => () => {
    if (controller.signal.aborted) {
      exit(1);
      return;
    }
    controller.abort(new Error(`received ${name}: shutting down`));
  };
  const handlers = signals.map((s) => [s, handler(s)] as const);
  for (const [s, h] of handlers) source.on(s, h);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const [s, h] of handlers) source.off(s, h);
    },
  };
}

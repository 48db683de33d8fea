/**
 * The demo's progress view. On a terminal: a few lines redrawn in place under the log (the step
 * running and for how long, what exists of each kind, what is waiting on OpenStack and since
 * when, the API calls made so far), with ANSI codes only. Elsewhere (a pipe, CI, tests): plain log
 * lines, and the status as one line every `plainEveryMs` when it changed.
 */

/** One kind of object and how its members stand: `Machines 5 (2 provisioning, 3 running)`. */
export interface KindLine {
  kind: string;
  count: number;
  /** Phase → count, in display order. */
  phases: [string, number][];
}

/** Something OpenStack is still working on: `LB kube_service_… PENDING_CREATE` since `since`. */
export interface Waiting {
  what: string;
  state: string;
  since: number;
}

export interface ProgressState {
  kinds: KindLine[];
  waiting: Waiting[];
  /** Requests the emulator served, per service (keystone, nova, …). */
  openstack: Record<string, number>;
  /** Requests the Kubernetes API server served. */
  kube: number;
}

export interface ProgressOptions {
  write: (text: string) => void;
  /** Redraw in place (a terminal) or print plain lines. */
  tty: boolean;
  /** Terminal width, for cutting lines instead of wrapping them (a wrapped line breaks the redraw). */
  columns?: number;
  redrawMs?: number;
  plainEveryMs?: number;
  now?: () => number;
}

const ESC = '\u001b[';
const CLEAR_LINE = `${ESC}2K`;
const UP = (n: number) => (n > 0 ? `${ESC}${n}A` : '');
const DIM = (s: string) => `${ESC}2m${s}${ESC}0m`;
const BOLD = (s: string) => `${ESC}1m${s}${ESC}0m`;

export class Progress {
  private readonly opts: Required<Omit<ProgressOptions, 'columns'>> & { columns: number };
  private probe: (() => ProgressState) | undefined;
  private step: { name: string; started: number } | undefined;
  private drawn = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastPlain = '';
  private lastPlainAt = 0;
  private readonly started: number;

  constructor(opts: ProgressOptions) {
    this.opts = {
      redrawMs: 250,
      plainEveryMs: 5_000,
      now: () => performance.now(),
      columns: 100,
      ...opts,
    };
    this.started = this.opts.now();
  }

  /** Starts the periodic redraw (terminal) or status lines (plain) from `probe`. */
  start(probe: () => ProgressState): void {
    this.probe = probe;
    this.stopTimer();
    const every = this.opts.tty ? this.opts.redrawMs : Math.min(this.opts.plainEveryMs, 1_000);
    this.timer = setInterval(() => this.tick(), every);
    this.timer.unref();
  }

  /** Stops redrawing and leaves the last view on screen (terminal) or prints nothing more. */
  stop(): void {
    this.stopTimer();
    if (this.opts.tty) this.clear();
    this.probe = undefined;
  }

  /** A step begins: named in the live view, and logged. */
  begin(name: string): void {
    this.step = { name, started: this.opts.now() };
    this.log(`▸ ${name}`);
  }

  /** A step ends; `detail` says what it showed. */
  done(detail: string): void {
    const s = this.step;
    const took = s ? ` (${seconds(this.opts.now() - s.started)})` : '';
    this.step = undefined;
    this.log(`  ✓ ${detail}${took}`);
  }

  /** A line of the log: above the live view on a terminal. */
  log(line: string): void {
    if (!this.opts.tty) {
      this.opts.write(`${line}\n`);
      return;
    }
    this.clear();
    this.opts.write(`${line}\n`);
    this.draw();
  }

  /** One redraw (terminal) or status line if due (plain); the timer calls it. */
  tick(): void {
    if (!this.probe) return;
    if (this.opts.tty) {
      this.clear();
      this.draw();
      return;
    }
    const line = plainStatus(this.probe(), this.opts.now());
    const now = this.opts.now();
    if (line !== this.lastPlain && now - this.lastPlainAt >= this.opts.plainEveryMs) {
      this.lastPlain = line;
      this.lastPlainAt = now;
      this.opts.write(`  [${seconds(now - this.started).padStart(6)}] ${line}\n`);
    }
  }

  private draw(): void {
    if (!this.probe) return;
    const now = this.opts.now();
    const lines = liveView(
      this.probe(),
      now,
      this.step && { ...this.step, elapsed: now - this.step.started },
    );
    const width = Math.max(20, this.opts.columns - 1);
    this.opts.write(lines.map((l) => `${cut(l, width)}\n`).join(''));
    this.drawn = lines.length;
  }

  private clear(): void {
    if (this.drawn === 0) return;
    let out = UP(this.drawn);
    for (let i = 0; i < this.drawn; i++) out += `${CLEAR_LINE}\n`;
    this.opts.write(out + UP(this.drawn));
    this.drawn = 0;
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The terminal view: a handful of lines. */
export function liveView(s: ProgressState, now: number, step?: { name: string; elapsed: number }): string[] {
  const lines: string[] = [];
  lines.push(step ? `${BOLD('…')} ${step.name} ${DIM(seconds(step.elapsed))}` : DIM('…'));
  const kinds = s.kinds.filter((k) => k.count > 0 || k.phases.length > 0);
  for (let i = 0; i < kinds.length; i += 2) {
    lines.push(
      `  ${kinds
        .slice(i, i + 2)
        .map(kindText)
        .join('  ·  ')}`,
    );
  }
  lines.push(`  ${DIM('waiting on OpenStack:')} ${waitingText(s.waiting, now, 4) || 'nothing'}`);
  lines.push(`  ${DIM('API calls:')} ${callsText(s)}`);
  return lines;
}

/** The plain view: one line (the calls per service are in the live view and the final summary). */
export function plainStatus(s: ProgressState, now: number): string {
  const kinds = s.kinds.filter((k) => k.count > 0).map(kindText);
  const waiting = waitingText(s.waiting, now, 3);
  const openstack = Object.values(s.openstack).reduce((a, b) => a + b, 0);
  return [
    kinds.join(' · ') || 'no objects yet',
    waiting ? `waiting on OpenStack: ${waiting}` : '',
    `API calls: OpenStack ${openstack} · Kubernetes ${s.kube}`,
  ]
    .filter(Boolean)
    .join(' | ');
}

export function kindText(k: KindLine): string {
  const phases = k.phases.filter(([, n]) => n > 0).map(([p, n]) => `${n} ${p}`);
  return `${k.kind} ${k.count}${phases.length > 0 ? ` (${phases.join(', ')})` : ''}`;
}

/** `LB kube_service_x PENDING_CREATE 12 s, 2 more` — the longest waits first. */
export function waitingText(waiting: readonly Waiting[], now: number, max: number): string {
  const sorted = [...waiting].sort((a, b) => a.since - b.since);
  const shown = sorted
    .slice(0, max)
    .map((w) => `${w.what} ${w.state} ${Math.max(0, Math.floor((now - w.since) / 1000))} s`);
  if (sorted.length > max) shown.push(`${sorted.length - max} more`);
  return shown.join(', ');
}

export function callsText(s: ProgressState): string {
  const services = Object.entries(s.openstack)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = services.reduce((sum, [, n]) => sum + n, 0);
  const detail = services.map(([name, n]) => `${name} ${n}`).join(', ');
  return `OpenStack ${total}${detail ? ` (${detail})` : ''} · Kubernetes ${s.kube}`;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Cuts a line to `width` visible characters (ANSI codes take no room). */
function cut(line: string, width: number): string {
  let visible = 0;
  let out = '';
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\u001b') {
      const end = line.indexOf('m', i);
      if (end > 0) {
        out += line.slice(i, end + 1);
        i = end;
        continue;
      }
    }
    if (visible >= width) {
      out += '…';
      break;
    }
    out += line[i];
    visible++;
  }
  return out + (out.includes('\u001b') ? `${ESC}0m` : '');
}

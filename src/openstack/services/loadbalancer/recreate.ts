/**
 * When a load balancer Octavia put in ERROR is deleted and created again (the engine's `Failed`
 * with `recreate`): at once the first time, then at most once per window for the same owner (a
 * Service, a cluster), so a cloud that fails every create is not asked for a new load balancer on
 * every retry; in between, the failure is reported and retried with the queue's back-off.
 *
 * The window is read on the caller's clock (the manager's), as every other wait of a controller.
 * It is kept in memory: a restarted process may recreate once more at once, which is the rule for
 * a first recreate anyway.
 */
import type { Clock } from '../../../lib/clock.ts';

interface OwnerRecreate {
  /** When the last recreate began. */
  at: number;
  /** Its delete is under way. */
  removing: boolean;
}

export class RecreateWindow {
  private readonly clock: Pick<Clock, 'now'>;
  private readonly windowMs: number;
  private readonly owners = new Map<string, OwnerRecreate>();

  constructor(clock: Pick<Clock, 'now'>, windowMs: number) {
    this.clock = clock;
    this.windowMs = windowMs;
  }

  /**
   * Whether the owner's load balancer in ERROR may be recreated now: the first time, or once the
   * window since the last one has passed. When it may, its delete begins (`removing`).
   */
  begin(owner: string): boolean {
    const now = this.clock.now();
    const last = this.owners.get(owner);
    if (last && now - last.at < this.windowMs) return false;
    this.owners.set(owner, { at: now, removing: true });
    return true;
  }

  /** A recreate's delete is under way: call remove until the load balancer is gone. */
  removing(owner: string): boolean {
    return this.owners.get(owner)?.removing ?? false;
  }

  /** The delete is over: the next pass creates again (the window still counts from `begin`). */
  removed(owner: string): void {
    const o = this.owners.get(owner);
    if (o) o.removing = false;
  }

  /** The owner is gone, or its load balancer deleted for good. */
  forget(owner: string): void {
    this.owners.delete(owner);
  }
}

/**
 * Server creates sent and not answered yet, so that an ensure call need not hold its caller (a
 * controller's worker) while Nova answers: its create takes ~0.4 s on a real cloud, nearly half
 * of a machine's worker time, and 100 machines behind 10 workers waited for each other's creates.
 *
 * The call that creates starts the request here and returns (Pending, InstanceCreating); the
 * answer wakes the caller's object, and the next call takes it (the server's id, recorded then, or
 * the failure, reported as the create's own would be). While it is unanswered, a call for the same
 * object makes no request at all, and a removal waits for it (a server landing after its ports
 * were deleted would be leaked).
 *
 * In memory only, and nothing of it needs to survive a restart: a process that dies with a create
 * in flight leaves at worst a server nobody recorded, which the next call adopts by name (as
 * before, when the process died between the create and its record).
 */
export type CreateAnswer = { id: string } | { error: unknown };

interface Flight {
  answer?: CreateAnswer;
}

export class InFlightCreates {
  private readonly flights = new Map<string, Flight>();

  /** Sends `create` for `key` (the caller's object); `answered` once it has an answer or failed. */
  start(key: string, create: () => Promise<string>, answered: () => void): void {
    const flight: Flight = {};
    this.flights.set(key, flight);
    create()
      .then(
        (id) => {
          flight.answer = { id };
        },
        (error: unknown) => {
          flight.answer = { error };
        },
      )
      .finally(answered);
  }

  /** `flying` while unanswered; the answer once (then forgotten); undefined when none was sent. */
  take(key: string): CreateAnswer | 'flying' | undefined {
    const flight = this.flights.get(key);
    if (!flight) return undefined;
    if (!flight.answer) return 'flying';
    this.flights.delete(key);
    return flight.answer;
  }

  /** Creates unanswered (tests, metrics). */
  get size(): number {
    let n = 0;
    for (const f of this.flights.values()) if (!f.answer) n++;
    return n;
  }
}

/** What a caller hands the engine to create without waiting: the table, its object's key, its wake-up. */
export interface AsyncCreate {
  creates: InFlightCreates;
  key: string;
  answered: () => void;
}

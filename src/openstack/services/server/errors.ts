/**
 * A lookup the spec asks for cannot be done: a filter matched nothing or several objects, or the
 * spec itself cannot be resolved (a port without a network). The caller shows it as a condition
 * (CAPO's DependencyFailed); nothing has been created when it is thrown.
 */
export type DependencyProblem = 'NotFound' | 'Ambiguous' | 'Invalid';

export class DependencyError extends Error {
  override readonly name = 'DependencyError';
  /** `image`, `flavor`, `server group`, `network`, `subnet`, `security group`, `port`. */
  readonly resource: string;
  readonly problem: DependencyProblem;
  /** The ids of every match of an ambiguous filter. */
  readonly ids: readonly string[];
  /**
   * Only an edit of the spec can help (Invalid). NotFound and Ambiguous are not: the missing
   * network may be created, the duplicate image deleted.
   */
  readonly terminal: boolean;

  constructor(resource: string, problem: DependencyProblem, message: string, ids: readonly string[] = []) {
    super(message);
    this.resource = resource;
    this.problem = problem;
    this.ids = ids;
    this.terminal = problem === 'Invalid';
  }

  static is(this: void, err: unknown): err is DependencyError {
    return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'DependencyError';
  }

  /** Exactly one of `ids`, or the error saying what `what` (a filter, described) matched. */
  static exactlyOne(resource: string, what: string, ids: readonly string[]): string {
    if (ids.length === 1) return ids[0]!;
    if (ids.length === 0) throw new DependencyError(resource, 'NotFound', `no ${resource} matches ${what}`);
    throw new DependencyError(
      resource,
      'Ambiguous',
      `${ids.length} ${resource}s match ${what} (${ids.join(', ')}); make the filter match exactly one, or use the id`,
      ids,
    );
  }
}

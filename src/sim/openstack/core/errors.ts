/**
 * An error raised inside an emulated service. Each service renders it in its own wire format
 * (Keystone `{"error": …}`, Neutron `{"NeutronError": …}`, Nova `{"itemNotFound": …}`, Octavia
 * `{"faultcode": …}`, Glance HTML-ish messages), so stores throw this and never build bodies.
 */
export class SimError extends Error {
  override readonly name = 'SimError';
  readonly status: number;
  /** The service's machine-readable error type, e.g. Neutron's `PortNotFound`; Nova's fault name is derived from the status when absent. */
  readonly type: string | undefined;
  readonly detail: string | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: number,
    message: string,
    options: { type?: string; detail?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = status;
    this.type = options.type;
    this.detail = options.detail;
    this.headers = options.headers;
  }

  static is(err: unknown): err is SimError {
    return err instanceof Error && err.name === 'SimError' && typeof (err as SimError).status === 'number';
  }
}

export const badRequest = (message: string, type?: string) =>
  new SimError(400, message, type ? { type } : {});
export const notFound = (message: string, type?: string) => new SimError(404, message, type ? { type } : {});
export const conflict = (message: string, type?: string) => new SimError(409, message, type ? { type } : {});
export const forbidden = (message: string, type?: string) => new SimError(403, message, type ? { type } : {});

export const REASONS: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  300: 'Multiple Choices',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

/** The Keystone v3 auth methods shiftstack speaks. A trust is a scope of `password` or `token`, not a method. */
export type AuthType = 'password' | 'v3applicationcredential' | 'token';

/** Which catalog endpoint to use for every service. */
export type EndpointInterface = 'public' | 'internal' | 'admin';

export interface TlsConfig {
  caFile?: string;
  /** The CA itself, when it came with the credentials rather than as a file (CAPO's Secret key `cacert`); wins over caFile. */
  caPem?: string;
  certFile?: string;
  keyFile?: string;
  /** Skip server certificate verification. Off unless a user turns it on. */
  insecure: boolean;
}

/** Where a config came from, for `whoami` and logs. File paths and variable names only, never values. */
export interface ConfigSource {
  /** `kuryr.conf`: its `[neutron]` group (src/kuryr/config/neutron.ts). */
  kind: 'cloud.conf' | 'clouds.yaml' | 'environment' | 'kuryr.conf';
  /** Every file read, in the order read (cloud.conf, then clouds.yaml, then secure.yaml). */
  files: string[];
  /** The clouds.yaml entry used, if any. */
  cloud?: string;
  /** The OS_* variables that supplied values (names only). */
  env: string[];
}

/**
 * One cloud, normalized from clouds.yaml, OS_* variables or OCCM's cloud.conf and validated: the auth
 * method is complete, URLs parse, and names that Keystone needs a domain for have one.
 * Unset optional strings are absent rather than empty.
 */
export interface CloudConfig {
  authUrl: string;
  authType: AuthType;
  username?: string;
  userId?: string;
  password?: string;
  userDomainName?: string;
  userDomainId?: string;
  projectName?: string;
  projectId?: string;
  projectDomainName?: string;
  projectDomainId?: string;
  /** Domain scope (only when no project is given; with a project, they fill in the user and project domains). */
  domainName?: string;
  domainId?: string;
  systemScope: boolean;
  applicationCredentialId?: string;
  applicationCredentialName?: string;
  applicationCredentialSecret?: string;
  token?: string;
  trustId?: string;
  regionName?: string;
  interface: EndpointInterface;
  tls: TlsConfig;
  /** Service type (`network`, `load-balancer`, `compute`, …) to endpoint URL, bypassing the catalog. */
  endpointOverride: Record<string, string>;
  requestTimeoutMs: number;
  source: ConfigSource;
}

/**
 * What loading needs from the process, passed in so that tests (and embedders) never depend on the
 * real environment or home directory.
 */
export interface LoadContext {
  env: Readonly<Record<string, string | undefined>>;
  homedir: string;
  cwd: string;
  /** The system-wide config directory; `/etc/openstack` unless a test points it elsewhere. */
  siteConfigDir?: string;
  signal?: AbortSignal;
}

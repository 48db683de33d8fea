/**
 * Where the emulator deliberately answers differently from the recorded test cloud, and why.
 * Each entry names the sample and the comparison problems it excuses (matched as regular expressions).
 * The recorded cloud runs Octavia and Neutron without agents or amphorae; the emulator follows
 * what a production cloud answers, as docs/sim-openstack.md explains.
 */
export const KNOWN_DIFFERENCES: Readonly<Record<string, { paths: RegExp[]; reason: string }>> = {};

/**
 * The emulator's serving certificate: self-signed (src/lib/tls-cert.ts), valid for the loopback
 * names and the host it listens on. HTTPS matters beyond realism: kubectl sends a kubeconfig's
 * bearer token only over TLS, and the certificate goes into the kubeconfig as
 * `certificate-authority-data`, so clients verify the server instead of skipping verification.
 */
import { selfSignedCert as make, type ServingCert } from '../../lib/tls-cert.ts';

export type { ServingCert } from '../../lib/tls-cert.ts';

export function selfSignedCert(hosts: string[], now = new Date()): ServingCert {
  return make({ commonName: 'shiftstack-sim-kube', hosts, now });
}

/** Server records and their indexes. Records are plain JSON so the state file can hold them as they are. */
import type { ServerView } from '../core/contracts.ts';
import type { HostUsage, ProjectUsage } from './hosts.ts';
import { asRecord } from './http.ts';
import { statusOf } from './states.ts';

/** The flavor as it was when the server booted (instance.flavor), shown embedded from 2.47. */
export interface EmbeddedFlavor {
  id: string;
  name: string;
  vcpus: number;
  ram: number;
  disk: number;
  ephemeral: number;
  swap: number;
  extra_specs: Record<string, string>;
}

export interface ServerPort {
  port_id: string;
  /** Ports Nova created are deleted with the server; pre-created ones are only unbound. */
  created_by_nova: boolean;
  tag: string | null;
}

export interface ServerVolume {
  volume_id: string;
  device: string;
  delete_on_termination: boolean;
  boot_index: number | null;
  tag: string | null;
  /** Nova-created volumes wait for Cinder to finish creating them before they are attached. */
  attached: boolean;
}

/** One entry of `networks`, kept until the compute host allocates it during the build. */
export interface NetworkRequest {
  network_id?: string;
  port_id?: string;
  fixed_ip?: string;
  tag: string | null;
}

export interface ServerFault {
  code: number;
  message: string;
  created: string;
  details?: string;
}

export interface ServerRecord {
  id: string;
  name: string;
  project_id: string;
  user_id: string;
  /** '' when booted from a volume. */
  image_ref: string;
  flavor: EmbeddedFlavor;
  metadata: Record<string, string>;
  tags: string[];
  key_name: string | null;
  /** The zone asked for at create; the host's zone once scheduled. */
  availability_zone: string | null;
  config_drive: boolean;
  user_data: string | null;
  description: string | null;
  hostname: string;
  access_ip_v4: string;
  access_ip_v6: string;
  disk_config: 'MANUAL' | 'AUTO';
  vm_state: string;
  task_state: string | null;
  power_state: number;
  host: string | null;
  /** Forced host (`az:host` or 2.74 `host`), honoured by the scheduler. */
  requested_host: string | null;
  root_device_name: string | null;
  instance_number: number;
  reservation_id: string;
  launch_index: number;
  created_at: string;
  updated_at: string;
  launched_at: string | null;
  locked_by: 'admin' | 'owner' | null;
  locked_reason: string | null;
  fault: ServerFault | null;
  ports: ServerPort[];
  volumes: ServerVolume[];
  /** Security group names asked for at create, applied to the ports Nova creates. */
  security_groups: string[];
  /** Networks still to allocate (the build allocates them on the host), or null once done. */
  pending_networks: NetworkRequest[] | null;
  server_group: string | null;
  trusted_image_certificates: string[] | null;
  /** Set by the `error-on-create` fault: the build fails at spawn with this fault. */
  doomed: boolean;
  /** Set by the `stuck` fault: the build never leaves scheduling. */
  stuck: boolean;
}

export class ServerStore {
  /** Insertion order is creation order, which Nova's default sort (created_at desc) reverses. */
  readonly byId = new Map<string, ServerRecord>();
  private instanceSeq = 0;

  nextInstanceNumber(): number {
    return ++this.instanceSeq;
  }

  add(s: ServerRecord): void {
    this.byId.set(s.id, s);
  }

  remove(id: string): void {
    this.byId.delete(id);
  }

  view(id: string): ServerView | undefined {
    const s = this.byId.get(id);
    return (
      s && { id: s.id, name: s.name, project_id: s.project_id, status: statusOf(s.vm_state, s.task_state) }
    );
  }

  hostUsage(host: string): HostUsage {
    const u: HostUsage = { vcpus: 0, memory_mb: 0, local_gb: 0, running_vms: 0, servers: [] };
    for (const s of this.byId.values()) {
      if (s.host !== host) continue;
      u.vcpus += s.flavor.vcpus;
      u.memory_mb += s.flavor.ram;
      u.local_gb += s.flavor.disk + s.flavor.ephemeral;
      u.running_vms += 1;
      u.servers.push({ uuid: s.id, name: s.name });
    }
    return u;
  }

  projectUsage(projectId: string): Omit<ProjectUsage, 'serverGroups'> {
    const u = { instances: 0, cores: 0, ram: 0 };
    for (const s of this.byId.values()) {
      if (s.project_id !== projectId) continue;
      u.instances += 1;
      u.cores += s.flavor.vcpus;
      u.ram += s.flavor.ram;
    }
    return u;
  }

  snapshot(): unknown {
    return { seq: this.instanceSeq, servers: [...this.byId.values()] };
  }

  restore(data: unknown): void {
    const d = asRecord(data);
    this.byId.clear();
    for (const s of (d['servers'] as ServerRecord[] | undefined) ?? []) this.byId.set(s.id, s);
    this.instanceSeq = typeof d['seq'] === 'number' ? d['seq'] : this.byId.size;
  }
}

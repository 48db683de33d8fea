/**
 * The KuryrLoadBalancer's fields this folder reads and writes, in upstream's spelling
 * (kubernetes_crds/kuryr_crds/kuryrloadbalancer.yaml).
 */
import type { KubernetesObject } from '../../kube/index.ts';

export interface KlbEndpoint {
  addresses?: string[];
  conditions?: { ready?: boolean };
  hostname?: string;
  targetRef?: { kind?: string; name?: string; namespace?: string; resourceVersion?: string; uid?: string };
  topology?: Record<string, unknown>;
}

export interface KlbEndpointSlice {
  endpoints?: KlbEndpoint[];
  ports?: { name?: string; port: number; protocol?: string }[];
}

export interface KlbPort {
  name?: string;
  port: number;
  protocol: string;
  targetPort: string;
}

export interface KlbSpec {
  endpointSlices?: KlbEndpointSlice[];
  ip?: string;
  lb_ip?: string;
  ports?: KlbPort[];
  project_id?: string;
  security_groups_ids?: string[];
  subnet_id?: string;
  type?: string;
  provider?: string;
  timeout_client_data?: number;
  timeout_member_data?: number;
}

export interface KlbStatus {
  loadbalancer?: {
    id: string;
    ip: string;
    name: string;
    port_id: string;
    project_id: string;
    provider: string;
    security_groups: string[];
    subnet_id: string;
  };
  listeners?: {
    id: string;
    loadbalancer_id: string;
    name: string;
    port: number;
    project_id: string;
    protocol: string;
    timeout_client_data?: number;
    timeout_member_data?: number;
  }[];
  pools?: {
    id: string;
    listener_id: string;
    loadbalancer_id: string;
    name: string;
    project_id: string;
    protocol: string;
  }[];
  members?: {
    id: string;
    ip: string;
    name: string;
    pool_id: string;
    port: number;
    project_id: string;
    subnet_id: string;
  }[];
  service_pub_ip_info?: { ip_id: string; ip_addr: string; alloc_method: string };
}

export interface KuryrLoadBalancer extends KubernetesObject {
  spec?: KlbSpec;
  status?: KlbStatus;
}

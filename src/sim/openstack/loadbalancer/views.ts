/**
 * Wire shapes of Octavia's responses, key for key in the order the real API prints them
 * (../shared/openstack-samples/octavia_*). The "full" variants are those of the single-call
 * (fully populated) load balancer create, which nest children instead of listing their ids.
 */
import type {
  HealthMonitorRecord,
  L7PolicyRecord,
  L7RuleRecord,
  ListenerRecord,
  LoadBalancerRecord,
  MemberRecord,
  PoolRecord,
} from './model.ts';
import type { OperatingStatuses } from './status.ts';
import type { OctaviaStore } from './store.ts';

type Json = Record<string, unknown>;

const ids = (list: readonly string[]) => list.map((id) => ({ id }));

/** The nested children of a "full" view: those of `list` still in the store, rendered with `view`. */
function present<T>(
  list: readonly string[],
  from: { get(id: string): T | undefined },
  view: (r: T) => Json,
): Json[] {
  return list.flatMap((id) => {
    const record = from.get(id);
    return record ? [view(record)] : [];
  });
}

export class Views {
  private readonly store: OctaviaStore;
  private readonly status: OperatingStatuses;

  constructor(store: OctaviaStore, status: OperatingStatuses) {
    this.store = store;
    this.status = status;
  }

  loadbalancer(lb: LoadBalancerRecord): Json {
    return {
      id: lb.id,
      name: lb.name,
      description: lb.description,
      provisioning_status: lb.provisioning_status,
      operating_status: this.status.loadbalancer(lb),
      admin_state_up: lb.admin_state_up,
      project_id: lb.project_id,
      created_at: lb.created_at,
      updated_at: lb.updated_at,
      vip_address: lb.vip_address,
      vip_port_id: lb.vip_port_id,
      vip_subnet_id: lb.vip_subnet_id,
      vip_network_id: lb.vip_network_id,
      additional_vips: lb.additional_vips.map((v) => ({ ...v })),
      listeners: ids(lb.listener_ids),
      pools: ids(lb.pool_ids),
      provider: lb.provider,
      flavor_id: lb.flavor_id,
      vip_qos_policy_id: lb.vip_qos_policy_id,
      tags: [...lb.tags],
      availability_zone: lb.availability_zone,
      tenant_id: lb.project_id,
    };
  }

  /** The POST response: children in full first, as LoadBalancerFullResponse renders them. */
  loadbalancerFull(lb: LoadBalancerRecord): Json {
    const { listeners: _l, pools: _p, ...rest } = this.loadbalancer(lb);
    return {
      listeners: present(lb.listener_ids, this.store.listeners, (l) => this.listenerFull(l)),
      pools: present(lb.pool_ids, this.store.pools, (p) => this.poolFull(p)),
      ...rest,
    };
  }

  listener(l: ListenerRecord): Json {
    return {
      id: l.id,
      name: l.name,
      description: l.description,
      provisioning_status: l.provisioning_status,
      operating_status: this.status.listener(l),
      admin_state_up: l.admin_state_up,
      protocol: l.protocol,
      protocol_port: l.protocol_port,
      connection_limit: l.connection_limit,
      default_tls_container_ref: l.default_tls_container_ref,
      sni_container_refs: [...l.sni_container_refs],
      project_id: l.project_id,
      default_pool_id: l.default_pool_id,
      l7policies: ids(l.l7policy_ids),
      insert_headers: { ...l.insert_headers },
      created_at: l.created_at,
      updated_at: l.updated_at,
      loadbalancers: [{ id: l.loadbalancer_id }],
      timeout_client_data: l.timeout_client_data,
      timeout_member_connect: l.timeout_member_connect,
      timeout_member_data: l.timeout_member_data,
      timeout_tcp_inspect: l.timeout_tcp_inspect,
      tags: [...l.tags],
      client_ca_tls_container_ref: l.client_ca_tls_container_ref,
      client_authentication: l.client_authentication,
      client_crl_container_ref: l.client_crl_container_ref,
      allowed_cidrs: l.allowed_cidrs ? [...l.allowed_cidrs] : null,
      tls_ciphers: l.tls_ciphers,
      tls_versions: l.tls_versions ? [...l.tls_versions] : null,
      alpn_protocols: l.alpn_protocols ? [...l.alpn_protocols] : null,
      tenant_id: l.project_id,
    };
  }

  private listenerFull(l: ListenerRecord): Json {
    const { l7policies: _p, loadbalancers: _lbs, ...rest } = this.listener(l);
    return {
      l7policies: present(l.l7policy_ids, this.store.l7policies, (p) => this.l7policyFull(p)),
      ...rest,
    };
  }

  pool(p: PoolRecord): Json {
    const out: Json = {
      id: p.id,
      name: p.name,
      description: p.description,
      provisioning_status: p.provisioning_status,
      operating_status: this.status.pool(p),
      admin_state_up: p.admin_state_up,
      protocol: p.protocol,
      lb_algorithm: p.lb_algorithm,
      session_persistence: p.session_persistence ? { ...p.session_persistence } : null,
      project_id: p.project_id,
      loadbalancers: [{ id: p.loadbalancer_id }],
      listeners: this.store.listenersOfPool(p).map((l) => ({ id: l.id })),
      created_at: p.created_at,
      updated_at: p.updated_at,
    };
    // WSME leaves an unset attribute out: a pool without a monitor has no healthmonitor_id key.
    if (p.healthmonitor_id) out.healthmonitor_id = p.healthmonitor_id;
    Object.assign(out, {
      members: this.store.membersOf(p).map((m) => ({ id: m.id })),
      tags: [...p.tags],
      tls_container_ref: p.tls_container_ref,
      ca_tls_container_ref: p.ca_tls_container_ref,
      crl_container_ref: p.crl_container_ref,
      tls_enabled: p.tls_enabled,
      tls_ciphers: p.tls_ciphers,
      tls_versions: p.tls_versions ? [...p.tls_versions] : null,
      alpn_protocols: p.alpn_protocols ? [...p.alpn_protocols] : null,
      tenant_id: p.project_id,
    });
    return out;
  }

  /**
   * PoolFullResponse drops `loadbalancers` and `healthmonitor_id`, nests the members, and prints
   * `healthmonitor: null` even when the pool has one (Octavia tests the unset response attribute
   * instead of the model's monitor, so the nested monitor never appears).
   */
  private poolFull(p: PoolRecord): Json {
    const { loadbalancers: _lbs, healthmonitor_id: _hm, members: _m, ...rest } = this.pool(p);
    return {
      members: this.store.membersOf(p).map((m) => this.member(m)),
      healthmonitor: null,
      ...rest,
    };
  }

  member(m: MemberRecord): Json {
    return {
      id: m.id,
      name: m.name,
      operating_status: this.status.member(m),
      provisioning_status: m.provisioning_status,
      admin_state_up: m.admin_state_up,
      address: m.address,
      protocol_port: m.protocol_port,
      weight: m.weight,
      backup: m.backup,
      subnet_id: m.subnet_id,
      project_id: m.project_id,
      created_at: m.created_at,
      updated_at: m.updated_at,
      monitor_address: m.monitor_address,
      monitor_port: m.monitor_port,
      tags: [...m.tags],
      tenant_id: m.project_id,
    };
  }

  healthmonitor(hm: HealthMonitorRecord): Json {
    return {
      id: hm.id,
      name: hm.name,
      type: hm.type,
      delay: hm.delay,
      timeout: hm.timeout,
      max_retries: hm.max_retries,
      max_retries_down: hm.max_retries_down,
      http_method: hm.http_method,
      url_path: hm.url_path,
      expected_codes: hm.expected_codes,
      admin_state_up: hm.admin_state_up,
      project_id: hm.project_id,
      pools: [{ id: hm.pool_id }],
      provisioning_status: hm.provisioning_status,
      operating_status: this.status.healthmonitor(hm),
      created_at: hm.created_at,
      updated_at: hm.updated_at,
      tags: [...hm.tags],
      http_version: hm.http_version,
      domain_name: hm.domain_name,
      tenant_id: hm.project_id,
    };
  }

  l7policy(p: L7PolicyRecord): Json {
    return {
      listener_id: p.listener_id,
      description: p.description,
      admin_state_up: p.admin_state_up,
      rules: ids(p.rule_ids),
      created_at: p.created_at,
      provisioning_status: p.provisioning_status,
      updated_at: p.updated_at,
      redirect_http_code: p.redirect_http_code,
      redirect_pool_id: p.redirect_pool_id,
      redirect_prefix: p.redirect_prefix,
      redirect_url: p.redirect_url,
      action: p.action,
      position: p.position,
      project_id: p.project_id,
      id: p.id,
      operating_status: this.l7OperatingStatus(p),
      name: p.name,
      tags: [...p.tags],
      tenant_id: p.project_id,
    };
  }

  private l7policyFull(p: L7PolicyRecord): Json {
    const { rules: _r, ...rest } = this.l7policy(p);
    return {
      rules: present(p.rule_ids, this.store.l7rules, (r) => this.l7rule(r)),
      ...rest,
    };
  }

  l7rule(r: L7RuleRecord): Json {
    return {
      created_at: r.created_at,
      compare_type: r.compare_type,
      provisioning_status: r.provisioning_status,
      invert: r.invert,
      admin_state_up: r.admin_state_up,
      updated_at: r.updated_at,
      value: r.value,
      key: r.key,
      project_id: r.project_id,
      type: r.type,
      id: r.id,
      operating_status: this.l7OperatingStatus(r),
      tags: [...r.tags],
      tenant_id: r.project_id,
    };
  }

  private l7OperatingStatus(r: L7PolicyRecord | L7RuleRecord): string {
    if (r._forced_operating_status) return r._forced_operating_status;
    if (
      !r.admin_state_up ||
      r.provisioning_status === 'PENDING_CREATE' ||
      r.provisioning_status === 'ERROR'
    ) {
      return 'OFFLINE';
    }
    return 'ONLINE';
  }
}

/**
 * N Cluster API machines created at once through the capo controllers, end to end: the Kubernetes
 * emulator with the CRDs of deploy/capo/crds, the OpenStack emulator on its realistic profile
 * (Nova BUILD, Cinder and Octavia times and per-call latencies, scaled by TIME_SCALE), and the
 * OpenStackCluster, OpenStackMachine and OpenStackServer controllers in-process (Cluster API core
 * stood in for while the cluster is made, as in the tests; see below for the machines).
 *
 * First one OpenStackCluster of examples/capo/cluster.yaml (managed subnet, API load balancer, no
 * bastion) is made ready. Then, for each CONCURRENCY (the machine and server controllers'
 * workers; CAPO's default is 10), a fresh controller process (its own token cache) and N
 * Machine + OpenStackMachine + bootstrap Secret triples created together — 3 control-plane
 * machines (m1.medium, API load-balancer members), the rest workers (m1.small, a root volume);
 * measured: Keystone token requests (CAPO #1647 asked one per reconcile; one per identity is the
 * aim), Nova, Neutron, Cinder and Octavia calls (the emulator's /_sim/stats) per machine, writes
 * and reads, the reconciles, the time until every OpenStackMachine is ready with a providerID
 * (wall, and unscaled = wall / TIME_SCALE, the time a real cloud of those figures would take),
 * p50/p90 of the per-machine time to ready; where each machine's time went (bench/lib/capo-timeline.ts:
 * the median gap between consecutive steps, the cloud's from the emulator's status journal, the
 * controllers' from watching the objects), the workers' busy and queued time, CPU per machine, the
 * event-loop delay and the load average; then the deletion of every Machine and what it cost,
 * what was left in the cloud, and the heap. The controllers' waits are CAPO's intervals scaled
 * like the cloud. Prints a table; asserts nothing. The scenario and the measuring are in bench/lib
 * (capo-scenario.ts, machines.ts), shared with bench/mapo-machines.ts, which runs this scenario
 * beside its own.
 *
 * capo runs on a worker thread of its own (bench/lib/capo-thread.ts), the emulators on the bench's;
 * CAPO_THREAD=0 puts all three on one event loop, as before. While the machines are made, Cluster
 * API core's part (the Machines' status) is left to its own process, as deployed: the bench plays
 * it only as far as owning each OpenStackMachine by its Machine; CLUSTER_API_CORE=1 has the machine
 * controller stand in for it (actAsClusterAPICore). KUBE_QPS sets capo's --kube-api-qps (burst
 * 1.5×); 0, the default, lifts the client's limit (CAPO's default of 20 would hold 100 machines'
 * ~17 requests each for 85 s). The bench's own client opens its connections before the clock
 * starts (WARM=0: not).
 *
 *   node --expose-gc bench/capo-machines.ts     TIME_SCALE=0.2 N=100 CONCURRENCY=10 (or 1,10,50)
 */
import { printCapoMachines, runCapoMachines } from './lib/capo-scenario.ts';

/**
 * Below ~0.1 a 2-core machine becomes the bottleneck (the emulators and controllers share it) and
 * the unscaled figures grow with it: at 0.05, 100 machines took ≈ 113 unscaled seconds, at 0.2 ≈ 38.
 */
const SCALE = Number(process.env.TIME_SCALE ?? 0.2);
const N = Number(process.env.N ?? 100);
const CONCURRENCY = (process.env.CONCURRENCY ?? '10').split(',').map(Number);

const run = await runCapoMachines({
  n: N,
  scale: SCALE,
  concurrency: CONCURRENCY,
  thread: process.env.CAPO_THREAD !== '0',
  clusterAPICore: process.env.CLUSTER_API_CORE === '1',
  kubeApiQps: Number(process.env.KUBE_QPS ?? 0),
  warmClient: process.env.WARM !== '0',
});
printCapoMachines(run);
console.log(`\nwhole run: ${(run.wallMs / 1000).toFixed(1)} s wall`);

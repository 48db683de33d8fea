"""Runs ../shared/openstack-real/probe.py (the script that recorded ../shared/openstack-samples from a
real OpenStack) against the shiftstack emulator, so the emulator answers the very same calls.

    python3 probe_runner.py <probe.py> <emulator base URL> <samples out dir> <recorded dir> <section>...

What differs from a run against the real cloud:
- the endpoints: one emulator port with a prefix per service;
- the SQL statement probe.py uses to force a stuck noop load balancer to ERROR becomes a call to the
  emulator's admin API;
- the recorded cloud had no flavor before the probe made one; the emulator seeds m1.tiny, so it is
  removed before the nova section to make probe.py take the same path;
- samples recorded by an earlier probe.py that the current one no longer produces are replayed from
  their recorded request when it names no object id.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import traceback

import requests

probe_path, base, out_dir, recorded_dir, *sections = sys.argv[1:]
os.environ["SAMPLES_DIR"] = out_dir
spec = importlib.util.spec_from_file_location("probe", probe_path)
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)

probe.KS = base + "/identity"
probe.EP.update({
    "keystone": base + "/identity",
    "neutron": base + "/networking",
    "octavia": base + "/load-balancer",
    "glance": base + "/image",
    "placement": base + "/placement",
    "nova": base + "/compute",
})

_real_run = subprocess.run


def _run(args, *a, **kw):
    if args and args[0] == "mysql":
        m = re.search(r"provisioning_status='(\w+)' WHERE id='([0-9a-f-]+)'", " ".join(args))
        if m:
            requests.post(f"{base}/_sim/state/octavia/loadbalancer/{m.group(2)}",
                          json={"provisioning_status": m.group(1)}, timeout=10)
            return subprocess.CompletedProcess(args, 0)
    return _real_run(args, *a, **kw)


subprocess.run = _run

failed = []
for section in sections:
    print(f"===== {section}", flush=True)
    try:
        if section == "nova":
            requests.delete(f"{base}/compute/v2.1/flavors/1", headers={"X-Auth-Token": probe.token("admin")}, timeout=10)
        getattr(probe, section)()
    except Exception:  # a failing section must not hide the others' samples
        traceback.print_exc()
        failed.append(section)
# Recorded samples without a counterpart: replay the recorded request when it names no object id.
service_of = {"keystone": "keystone", "neutron": "neutron", "octavia": "octavia", "glance": "glance",
              "placement": "placement", "nova": "nova"}
for name in sorted(os.listdir(recorded_dir)):
    if name.startswith("_") or not name.endswith(".json") or os.path.exists(os.path.join(out_dir, name)):
        continue
    svc = name.split("_")[0]
    if svc not in sections or "{id}" in name:
        continue
    rec = json.load(open(os.path.join(recorded_dir, name)))
    req = rec["request"]
    path = "/" + req["url"].split("/", 3)[3] if req["url"].count("/") >= 3 else "/"
    variant = name[:-5].split("__", 1)[1] if "__" in name else None
    extra = {k: v for k, v in (req.get("headers") or {}).items() if k.lower() not in ("accept", "content-type", "x-auth-token")}
    who = None if "X-Auth-Token" not in (req.get("headers") or {}) else "admin"
    print(f"replaying {name}", flush=True)
    probe.call(service_of[svc], req["method"], path, req.get("body"), who=who, headers=extra, variant=variant)

print(json.dumps({"failed_sections": failed}), flush=True)

#!/usr/bin/env python3
"""The in-cluster half measured on a real API server (../shared/k8s: kube-apiserver v1.24).

    python3 bench/cluster.py            # needs etcd (apt-get install etcd-server etcd-client)

It builds the release binaries, starts the control plane in a fresh state directory, runs
kudo-webhook and kudo-manager on this machine (as the end-to-end suite does) and `kudo init`
pointing at them, then measures:

1. LIST of N Instances stored as v1beta1, read as v1beta2 (one conversion per object, through
   the webhook) against the same LIST read as v1beta1 (no conversion);
2. 50 concurrent `kudo update --instance` processes on 50 different parameters of one Instance,
   with the manager running: how many land, p50/p99 of their wall time;
3. 200 Instances, each updated once: time until every plan is COMPLETE, against a bare
   server-side-apply loop of the ConfigMaps those plans write; the manager's peak RSS.
4. (`BENCH_PARTS=delete`, issue 38 finding 6) N_DELETE Instances (500) created at once and
   deleted during their plans: time until every one is gone, the most connections the manager
   held to the API server, and the warning and error lines it logged. Run it with
   `KUDO_BENCH_CONCURRENCY=0` (no limit, as before `--concurrency`) and without (the default).

5. (`BENCH_PARTS=rollout`, issue 48) N_ROLLOUT Instances (1,000) of the fleet fixture, moved
   by `kudo rollout start` in exponential waves (5, 10, 20, ... 100 %) to a version under which
   the 37th Instance in rollout order never becomes ready (`--progress-deadline 45s`): the time
   from that failure (its upgrade plus the deadline) to `Halted`, how many Instances beyond the
   halted wave ever ran the new version (their revisions), the time until the failed Instance
   is back on the old version and COMPLETE, and the manager's RSS. The control plane runs with
   fake kubelets (`FAKE_KUBELET=1`) for this part, so Deployments become ready.

6. (`BENCH_PARTS=drift`, issue 49) N_DRIFT Instances (1,000) of the configs fixture (a
   ConfigMap and a Secret each), the manager with `--drift-interval 60s`: once every object has
   been checked once, the API server's own request counters (`apiserver_request_total`) for
   those kinds over the next interval, by verb: what drift costs in steady state, nothing
   changing; and the manager's `kudo_manager_drift_unchanged_total` (objects not dry-run).

7. (`BENCH_PARTS=scale`, issue 49) N_SCALE Instances (10,000) of `bench/fixtures/three` (a
   ConfigMap, a Secret and a Service each, server-side applied), created raw by 32 clients: the
   time from the last write until every deploy is COMPLETE, the manager's RSS once settled,
   the time from a parameter change on one Instance to its plan starting (50 changes, one at a
   time, while all exist: p50, p99, max), and with `--drift-interval 60s` the API server's
   requests for those kinds over a minute of steady state.

   The API server's requests during the deploy (`apiserver_request_total`, every client's)
   are counted by verb and resource, per Instance.

   With `faults` too (`BENCH_PARTS=scale,faults`; `BENCH_FAULTS=restart` for the first one
   only), then: the API server, etcd and the
   controllers stopped and started again under those Instances (the manager's RSS peak, plans
   started again, its requests in the second minute after), and every Instance given at once a
   value its template makes a label value the API server refuses (each plan FATAL_ERROR: the
   time until all are, the largest status, the manager's RSS peak, the log it wrote, and its
   requests over a minute once all failed).

8. (`BENCH_PARTS=admission`, issue 49 item 5) N_ADMISSION Instances (10,000) of
   `bench/fixtures/three`, created raw by 32 clients, no manager running; then one Instance
   write at a time (a merge patch of one parameter) in three configurations of the same API
   server, interleaved in ADMISSION_ROUNDS rounds (8) so that noise hits them alike: kudo's
   mutating and validating webhooks as `kudo init` registers them, the same configurations
   pointed at the no-op webhook (`webhook/examples/noop.rs`: kudo-webhook's server answering
   `allowed` without reading the Instance), and no webhooks. Before each round's samples the
   API server is seen calling the configuration's server, and only it. Per configuration:
   p50/p90/p99 of ADMISSION_SAMPLES sequential writes (800), the throughput of 16 writers,
   and where the time goes (the API server's `apiserver_admission_webhook_admission_duration_
   seconds` and each webhook server's own handling time); kudo / no-op is the ratio that
   issue 49 asks to keep at most 1.5.

9. (`BENCH_PARTS=deployments`, issue 49 item 6) N_DEPLOY Instances (1,000) of
   `bench/fixtures/deployment` (one Deployment each; fake kubelets), one in ten with a
   container in CrashLoopBackOff: the time until the healthy ones are COMPLETE, the manager's
   RSS, and over a minute while the failing ones wait: the API server's requests for Pods,
   ReplicaSets, Deployments and Events, and the bytes of its Pod and Event lists (every
   client's: the fake kubelets list Pods too). A look lists ReplicaSets once and Pods once
   as metadata, so full Pod lists are LIST pods less LIST replicasets.

10. (`BENCH_PARTS=floor`, issue 49 item 6, run alone: it stops the manager) the floor of
   `scale`'s deploy time: N_SCALE Instances created raw the same way, then the requests the
   manager sends for each deploy (its finalizer, the image policy's GET, a ControllerRevision
   and its outcome, the three objects, the status, two Events: copied from the first
   Instance's real deploy)
   sent by FLOOR_CLIENTS (32) clients at once with no manager running. The time from the last
   create until every write is answered is what this API server admits; `scale`'s time from
   the last write until every deploy is COMPLETE is the manager's, for the same writes.

`KUDO_BENCH_BIN=target/debug` uses other binaries than the release build (not built then).
Ports (to run beside another control plane): `BENCH_API_PORT` (26443),
`BENCH_ETCD_CLIENT_PORT` (33790), `BENCH_ETCD_PEER_PORT` (33800), `BENCH_WEBHOOK_PORT` (19443;
the no-op webhook takes the next one), `BENCH_METRICS_PORT` (19080, the manager's metrics).

Results are printed as JSON and written to target/kudo-bench/cluster.json. Nothing here is a
timed test: it reports what it measured.
"""

import concurrent.futures
import json
import os
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("KUDO_SHARED_DIR", ROOT.parent / "shared"))
BIN = Path(os.environ["KUDO_BENCH_BIN"]).resolve() if os.environ.get("KUDO_BENCH_BIN") else ROOT / "target" / "release"
N_DELETE = int(os.environ.get("N_DELETE", "500"))
# The manager's --concurrency (unset: its default).
CONCURRENCY = os.environ.get("KUDO_BENCH_CONCURRENCY")
OUT = ROOT / "target" / "kudo-bench"
N_LIST = int(os.environ.get("N_LIST", "1000"))
N_INSTANCES = int(os.environ.get("N_INSTANCES", "200"))
N_CONCURRENT = 50
N_ROLLOUT = int(os.environ.get("N_ROLLOUT", "1000"))
# The Instance (1-based, in rollout order) whose new version never becomes ready.
FAIL_AT = 37
ROLLOUT_DEADLINE_S = 45
N_DRIFT = int(os.environ.get("N_DRIFT", "1000"))
N_SCALE = int(os.environ.get("N_SCALE", "10000"))
N_DEPLOY = int(os.environ.get("N_DEPLOY", "1000"))
# Which faults `BENCH_PARTS=scale,faults` runs: restart (the API server), failing (every
# Instance refused at once).
FAULTS = set(os.environ.get("BENCH_FAULTS", "restart,failing").split(","))
# How many clients send the floor's writes at once (BENCH_PARTS=floor).
FLOOR_CLIENTS = int(os.environ.get("FLOOR_CLIENTS", "32"))
N_ADMISSION = int(os.environ.get("N_ADMISSION", "10000"))
ADMISSION_ROUNDS = int(os.environ.get("ADMISSION_ROUNDS", "8"))
# Sequential writes per configuration (over all rounds), and writes of the 16 writers per round.
ADMISSION_SAMPLES = int(os.environ.get("ADMISSION_SAMPLES", "800"))
ADMISSION_BURST = 400
API_PORT = os.environ.get("BENCH_API_PORT", "26443")
ETCD_CLIENT_PORT = os.environ.get("BENCH_ETCD_CLIENT_PORT", "33790")
ETCD_PEER_PORT = os.environ.get("BENCH_ETCD_PEER_PORT", "33800")
WEBHOOK_PORT = int(os.environ.get("BENCH_WEBHOOK_PORT", "19443"))
METRICS_PORT = int(os.environ.get("BENCH_METRICS_PORT", "19080"))
NOOP_PORT = WEBHOOK_PORT + 1
DRIFT_INTERVAL_S = 60
# Which parts to run (comma-separated): list, concurrent, many (the default), and delete,
# rollout, drift, scale, admission.
PARTS = set(os.environ.get("BENCH_PARTS", "list,concurrent,many").split(","))


def run(*args, **kw):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))}: exit {p.returncode}: {p.stderr[-800:]}")
    return p


class Cluster:
    def __init__(self, kubeconfig):
        self.kubeconfig = kubeconfig
        text = Path(kubeconfig).read_text()
        self.server = text.split("server: ")[1].split()[0]
        self.token = text.split("token: ")[1].split()[0]
        ca = text.split("certificate-authority: ")[1].split()[0]
        self.ctx = ssl.create_default_context(cafile=ca)

    def request(self, method, path, body=None, content_type="application/json"):
        data = None if body is None else json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=300) as r:
                return json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            e.msg = f"{e.msg}: {method} {path}: {e.read()[:600].decode(errors='replace')}"
            raise

    def apply(self, path, obj):
        return self.request(
            "PATCH", path + "?fieldManager=bench&force=true", obj, "application/apply-patch+yaml"
        )


def kudo(cluster, *args):
    return run(BIN / "kudo", *args, "--kubeconfig", cluster.kubeconfig)


def start_daemons(cluster, logs):
    host = "127.0.0.1"
    port = WEBHOOK_PORT
    certs = Path(logs)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
        "/CN=bench-ca", "-keyout", certs / "ca.key", "-out", certs / "ca.pem")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
        "-keyout", certs / "tls.key", "-out", certs / "tls.csr")
    (certs / "san.ext").write_text("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", certs / "tls.csr", "-CA", certs / "ca.pem", "-CAkey",
        certs / "ca.key", "-CAcreateserial", "-days", "2", "-extfile", certs / "san.ext", "-out",
        certs / "tls.crt")
    webhook = subprocess.Popen(
        [BIN / "kudo-webhook", "--listen", f"{host}:{port}", "--tls-cert", certs / "tls.crt",
         "--tls-key", certs / "tls.key", "--kubeconfig", cluster.kubeconfig],
        stdout=open(certs / "webhook.log", "w"), stderr=subprocess.STDOUT)
    concurrency = ["--concurrency", CONCURRENCY] if CONCURRENCY is not None else []
    if "drift" in PARTS or "scale" in PARTS:
        concurrency += ["--drift-interval", f"{DRIFT_INTERVAL_S}s"]
    # Admission alone needs no manager: no plan runs, only the writes are measured.
    manager = None if PARTS == {"admission"} else subprocess.Popen(
        [BIN / "kudo-manager", "--kubeconfig", cluster.kubeconfig, "--metrics-addr",
         f"127.0.0.1:{METRICS_PORT}", *concurrency],
        stdout=open(certs / "manager.log", "w"), stderr=subprocess.STDOUT)
    kudo(cluster, "init", "--wait", "--webhook-url", f"https://{host}:{port}", "--ca-bundle",
         certs / "ca.pem")
    return webhook, manager


def peak_rss_mib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def wait_complete(cluster, ns, names, timeout=900):
    deadline = time.time() + timeout
    pending = set(names)
    while pending and time.time() < deadline:
        items = cluster.request("GET", f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances")["items"]
        for i in items:
            st = i.get("status", {})
            active = st.get("activePlan", {}).get("name")
            gen = i["metadata"].get("generation")
            if (active and st.get("planStatus", {}).get(active, {}).get("status") == "COMPLETE"
                    and st.get("observedGeneration") == gen):
                pending.discard(i["metadata"]["name"])
        time.sleep(0.2)
    return not pending


def list_conversion(cluster):
    """N Instances stored as v1beta1 (created before kudo's v1beta2 storage), then listed."""
    ns = "bench-list"
    cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    items = []
    for i in range(N_LIST):
        items.append({"apiVersion": "kudo.dev/v1beta1", "kind": "Instance",
                      "metadata": {"name": f"old-{i:04}", "namespace": ns},
                      "spec": {"operatorVersion": {"name": "e2e-configs-0.1.0"},
                               "parameters": {"replicas": str(1 + i % 5), "clusterName": "c"}}})
    return ns, items


def timed(f, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def connections(pid, port):
    """Established TCP connections of process `pid` to 127.0.0.1:`port`."""
    out = subprocess.run(["ss", "-Htnp", "state", "established", "dst", f"127.0.0.1:{port}"],
                         capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if f"pid={pid}," in line)


def log_lines(path, levels=("WARN", "ERROR")):
    text = Path(path).read_text(errors="replace")
    return sum(1 for line in text.splitlines() if any(f" {lvl} " in line for lvl in levels))


def delete_during_plans(cluster, pkg, manager, state):
    """N_DELETE Instances created at once, deleted while their plans run (issue 38, 6)."""
    ns = "bench-delete"
    cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    kudo(cluster, "install", pkg, "--instance", "seed", "-n", ns, "--wait")
    ov = cluster.request("GET", f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances/seed")[
        "spec"]["operatorVersion"]
    names = [f"d{i:03}" for i in range(N_DELETE)]
    log = Path(state) / "manager.log"
    warnings_before = log_lines(log)
    port = int(cluster.server.rsplit(":", 1)[1])
    peak = [0]
    stop = [False]

    def sample():
        while not stop[0]:
            peak[0] = max(peak[0], connections(manager.pid, port))
            time.sleep(0.2)

    sampler = concurrent.futures.ThreadPoolExecutor(1).submit(sample)
    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda n: cluster.request(
            "POST", f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances",
            {"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
             "metadata": {"name": n, "namespace": ns},
             "spec": {"operatorVersion": ov, "parameters": {}}}), names))
    created_s = time.perf_counter() - t
    time.sleep(2)  # plans under way
    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda n: cluster.request(
            "DELETE", f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances/{n}"), names))
    deadline = time.time() + 900
    left = len(names)
    while time.time() < deadline:
        items = cluster.request("GET", f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances")["items"]
        left = sum(1 for i in items if i["metadata"]["name"] != "seed")
        if left == 0:
            break
        time.sleep(0.5)
    deleted_s = time.perf_counter() - t
    stop[0] = True
    sampler.result()
    return {
        "instances": N_DELETE,
        "manager_concurrency": CONCURRENCY if CONCURRENCY is not None else "default",
        "created_s": round(created_s, 2),
        "all_deleted": left == 0,
        "delete_to_gone_s": round(deleted_s, 2),
        "manager_peak_api_connections": peak[0],
        "manager_warn_error_lines": log_lines(log) - warnings_before,
        "manager_log_bytes": log.stat().st_size,
    }


def rss_now_mib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def rfc3339(text):
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def rollout_halt(cluster, manager):
    """N_ROLLOUT Instances moved in exponential waves; the FAIL_AT-th fails (issue 48, 5)."""
    ns = "bench-rollout"
    fleet = ROOT / "tests" / "fixtures" / "e2e" / "fleet"
    cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    names = [f"r{i:04}" for i in range(N_ROLLOUT)]
    failing = names[FAIL_AT - 1]
    kudo(cluster, "install", fleet / "v1", "--instance", names[0], "-n", ns, "--wait")
    path = f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances"
    first = cluster.request("GET", f"{path}/{names[0]}")
    ov = first["spec"]["operatorVersion"]
    cluster.request("PATCH", f"{path}/{names[0]}", {"metadata": {"labels": {"fleet": "bench"}}},
                    "application/merge-patch+json")
    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda n: cluster.request("POST", path, {
            "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            # The label `kudo install` (and KUDO) put on an Instance: what a Rollout selects by.
            "metadata": {"name": n, "namespace": ns,
                         "labels": {"fleet": "bench", "kudo.dev/operator": "e2e-fleet"}},
            "spec": {"operatorVersion": ov,
                     "parameters": {"ready": "false" if n == failing else "true"}}}), names[1:]))
    assert wait_complete(cluster, ns, names, timeout=1800), "the installs did not complete"
    deployed_s = time.perf_counter() - t
    rss_deployed = rss_now_mib(manager.pid)
    waves = "5,10,20,40,80,160,320,640,100%"
    t = time.perf_counter()
    kudo(cluster, "rollout", "start", "bench", fleet / "v2", "-n", ns, "-l", "fleet=bench",
         "--waves", waves, "--progress-deadline", f"{ROLLOUT_DEADLINE_S}s")
    start_s = time.perf_counter() - t
    rollouts = f"/apis/kudo.dev/v1beta2/namespaces/{ns}/rollouts/bench"
    deadline = time.time() + 1800
    status = {}
    while time.time() < deadline:
        status = cluster.request("GET", rollouts).get("status", {})
        if status.get("phase") in ("Halted", "Completed", "Refused"):
            break
        time.sleep(0.2)
    halted_at = time.time()
    assert status.get("phase") == "Halted", f"the rollout did not halt: {status.get('phase')}"
    members = status["instances"]
    order = [m["name"] for m in members]
    bad = next(m for m in members if m["name"] == failing)
    failed_at = rfc3339(bad["upgradedAt"]) + ROLLOUT_DEADLINE_S
    halted_wave = bad["wave"]
    later = {m["name"] for m in members if m["wave"] > halted_wave}
    # Every revision of the namespace: did any Instance of a later wave ever run the target?
    revisions = cluster.request("GET", f"/apis/apps/v1/namespaces/{ns}/controllerrevisions")
    ran_new = set()
    for r in revisions["items"]:
        inst = r["metadata"].get("labels", {}).get("kudo.dev/revision-of")
        if (r.get("data") or {}).get("operatorVersion", {}).get("name") != ov["name"]:
            ran_new.add(inst)
    items = cluster.request("GET", path)["items"]
    moved_later = {i["metadata"]["name"] for i in items
                   if i["metadata"]["name"] in later
                   and i["spec"]["operatorVersion"]["name"] != ov["name"]}
    # Until the failed Instance is back on the old version and COMPLETE.
    back_s = None
    while time.time() < halted_at + 900:
        i = cluster.request("GET", f"{path}/{failing}")
        st = i.get("status", {})
        active = st.get("activePlan", {}).get("name")
        if (i["spec"]["operatorVersion"]["name"] == ov["name"]
                and st.get("planStatus", {}).get(active, {}).get("status") == "COMPLETE"
                and st.get("observedGeneration") == i["metadata"]["generation"]):
            back_s = time.time() - halted_at
            break
        time.sleep(0.2)
    return {
        "instances": N_ROLLOUT,
        "waves": waves,
        "selected": len(members),
        "failing_instance": failing,
        "failing_position_in_order": order.index(failing) + 1,
        "halted_wave": halted_wave,
        "progress_deadline_s": ROLLOUT_DEADLINE_S,
        "deploy_all_s": round(deployed_s, 1),
        "kudo_rollout_start_s": round(start_s, 2),
        "failure_to_halted_s": round(halted_at - failed_at, 2),
        "instances_beyond_halted_wave_that_ran_new_version": len(ran_new & later),
        "instances_beyond_halted_wave_moved": len(moved_later),
        "instances_upgraded": sum(1 for m in members if m.get("upgradedAt")),
        "halted_to_failed_back_complete_s": None if back_s is None else round(back_s, 2),
        "failed_member_state": bad["state"],
        "manager_rss_after_deploy_mib": round(rss_deployed, 1),
        "manager_rss_mib": round(rss_now_mib(manager.pid), 1),
        "manager_peak_rss_mib": round(peak_rss_mib(manager.pid), 1),
    }


def api_requests(cluster, resources, subresource=False):
    """apiserver_request_total of `resources`, summed by (verb, resource, dry_run), or by
    (verb, resource/subresource, dry_run) with `subresource`."""
    req = urllib.request.Request(cluster.server + "/metrics")
    req.add_header("Authorization", f"Bearer {cluster.token}")
    with urllib.request.urlopen(req, context=cluster.ctx, timeout=60) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels_text, value = line[len("apiserver_request_total{"):].rsplit("} ", 1)
        labels = dict(kv.split("=", 1) for kv in labels_text.split(",") if "=" in kv)
        labels = {k: v.strip('"') for k, v in labels.items()}
        if labels.get("resource") not in resources:
            continue
        resource = labels["resource"]
        if subresource and labels.get("subresource"):
            resource += "/" + labels["subresource"]
        key = (labels.get("verb"), resource, labels.get("dry_run", ""))
        out[key] = out.get(key, 0) + float(value)
    return out


# What a deploy writes and reads: kudo's kinds, the objects of bench/fixtures/three, and what
# kube-controller-manager makes of a Service.
DEPLOY_KINDS = {"instances", "configmaps", "secrets", "services", "events", "controllerrevisions",
                "endpoints", "endpointslices", "leases", "operatorversions"}


def requests_between(before, after, per):
    """The requests counted between two `api_requests` readings, by 'VERB resource[ dryRun]',
    and the same per Instance (`per` of them)."""
    delta = {f"{v} {r}{' dryRun' if d else ''}": round(after[k] - before.get(k, 0))
             for k in after for (v, r, d) in [k] if after[k] - before.get(k, 0) > 0}
    return {"by_verb": dict(sorted(delta.items())), "total": sum(delta.values()),
            "per_instance": round(sum(delta.values()) / per, 2)}


def manager_counter(name):
    with urllib.request.urlopen(f"http://127.0.0.1:{METRICS_PORT}/metrics", timeout=30) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0


def drift_requests(cluster, pkg):
    """N_DRIFT Instances, nothing changing: what drift asks the API server (issue 49)."""
    ns = "bench-drift"
    cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    names = [f"d{i:04}" for i in range(N_DRIFT)]
    kudo(cluster, "install", pkg, "--instance", names[0], "-n", ns, "--wait")
    path = f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances"
    ov = cluster.request("GET", f"{path}/{names[0]}")["spec"]["operatorVersion"]
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda n: cluster.request("POST", path, {
            "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            "metadata": {"name": n, "namespace": ns, "labels": {"kudo.dev/operator": "e2e-configs"}},
            "spec": {"operatorVersion": ov, "parameters": {}}}), names[1:]))
    assert wait_complete(cluster, ns, names, timeout=1800), "the installs did not complete"
    # Every Instance checked once (its objects dry-run: nothing recorded yet), then measured.
    time.sleep(DRIFT_INTERVAL_S + 10)
    kinds = {"configmaps", "secrets"}
    before, unchanged_before = api_requests(cluster, kinds), manager_counter(
        "kudo_manager_drift_unchanged_total")
    t = time.perf_counter()
    time.sleep(DRIFT_INTERVAL_S)
    window = time.perf_counter() - t
    after, unchanged_after = api_requests(cluster, kinds), manager_counter(
        "kudo_manager_drift_unchanged_total")
    delta = {f"{v} {r}{' dryRun' if d else ''}": round(after[k] - before.get(k, 0))
             for k in after for (v, r, d) in [k] if after[k] - before.get(k, 0) > 0}
    total = sum(delta.values())
    objects = 2 * N_DRIFT
    return {
        "instances": N_DRIFT,
        "objects": objects,
        "drift_interval_s": DRIFT_INTERVAL_S,
        "window_s": round(window, 1),
        "requests_in_window_by_verb": delta,
        "requests_per_s": round(total / window, 2),
        "objects_not_dry_run_in_window": round(unchanged_after - unchanged_before),
        "before_issue_49_requests_per_s": round(2 * objects / DRIFT_INTERVAL_S, 2),
    }


def instances(cluster, ns):
    """The Instances of `ns`, listed in pages of 2,000."""
    cont = ""
    while True:
        page = cluster.request(
            "GET", f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances?limit=2000"
            + (f"&continue={cont}" if cont else ""))
        yield from page["items"]
        cont = page["metadata"].get("continue")
        if not cont:
            return


def active_status(i):
    """The status of the plan Instance `i` runs for its generation (None: none yet)."""
    st = i.get("status", {})
    active = st.get("activePlan", {}).get("name")
    if active and st.get("observedGeneration") == i["metadata"].get("generation"):
        return st.get("planStatus", {}).get(active, {}).get("status")
    return None


def count_complete(cluster, ns):
    """Instances of `ns` whose plan is COMPLETE for their generation, and how many there are."""
    done, total = 0, 0
    for i in instances(cluster, ns):
        total += 1
        done += active_status(i) == "COMPLETE"
    return done, total


def create_raw(cluster, ns, names):
    """names[1:] created raw (32 clients), of the OperatorVersion names[0] (installed) runs, with
    the `kudo.dev/operator` label a Rollout selects by: the Instances' path and the seconds."""
    path = f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances"
    ov = cluster.request("GET", f"{path}/{names[0]}")["spec"]["operatorVersion"]
    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda n: cluster.request("POST", path, {
            "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            "metadata": {"name": n, "namespace": ns, "labels": {"kudo.dev/operator": "bench-three"}},
            "spec": {"operatorVersion": ov, "parameters": {}}}), names[1:]))
    return path, time.perf_counter() - t


def scale(cluster, manager):
    """N_SCALE Instances of three objects each on one manager (issue 49, 6)."""
    ns = "bench-scale"
    pkg = ROOT / "bench" / "fixtures" / "three"
    cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    names = [f"s{i:05}" for i in range(N_SCALE)]
    kudo(cluster, "install", pkg, "--instance", names[0], "-n", ns, "--wait")
    deploy_before = api_requests(cluster, DEPLOY_KINDS, subresource=True)
    path, written_s = create_raw(cluster, ns, names)
    t_last = time.perf_counter()
    deadline = time.time() + 3600
    done = 0
    while time.time() < deadline:
        done, total = count_complete(cluster, ns)
        if done == N_SCALE:
            break
        # Each look lists every Instance: sparingly, or the API server spends its time on it.
        time.sleep(15)
    complete_after_last_write_s = time.perf_counter() - t_last
    deploy = requests_between(deploy_before, api_requests(cluster, DEPLOY_KINDS, subresource=True),
                              N_SCALE - 1)
    time.sleep(30)
    rss_settled = rss_now_mib(manager.pid)
    # A parameter change on one Instance at a time: until its plan starts (the run of the new
    # generation in status.activePlan).
    latencies = []
    for k in range(50):
        n = names[(k * 197) % N_SCALE]
        before = cluster.request("GET", f"{path}/{n}")["metadata"]["generation"]
        t = time.perf_counter()
        cluster.request("PATCH", f"{path}/{n}", {"spec": {"parameters": {"setting": f"v{k}"}}},
                        "application/merge-patch+json")
        want = f"deploy-g{before + 1}"
        while time.perf_counter() - t < 120:
            st = cluster.request("GET", f"{path}/{n}").get("status", {})
            if st.get("activePlan", {}).get("uid") == want:
                break
            time.sleep(0.02)
        latencies.append(time.perf_counter() - t)
    # Drift in steady state: every object checked once already (the settle above is shorter
    # than an interval, so wait out one), then a minute of the API server's counters.
    time.sleep(DRIFT_INTERVAL_S)
    quiet = quiet_requests(cluster, DRIFT_INTERVAL_S, {"configmaps", "secrets", "services"})
    # Drift found: another writer changes one Instance's ConfigMap (a `kubectl edit`), and the
    # time until that Instance's Drifted condition says so.
    n = names[N_SCALE // 3]
    t = time.perf_counter()
    cluster.request("PATCH", f"/api/v1/namespaces/{ns}/configmaps/{n}-config",
                    {"data": {"setting": "edited"}}, "application/merge-patch+json")
    detected_s = None
    while time.perf_counter() - t < 3 * DRIFT_INTERVAL_S:
        conditions = cluster.request("GET", f"{path}/{n}").get("status", {}).get("conditions", [])
        if any(c["type"] == "Drifted" and c["status"] == "True" for c in conditions):
            detected_s = time.perf_counter() - t
            break
        time.sleep(0.5)
    return {
        "instances": N_SCALE,
        "objects": 3 * N_SCALE,
        "all_complete": done == N_SCALE,
        "writes_s": round(written_s, 1),
        "writes_per_s": round((N_SCALE - 1) / written_s, 1),
        "last_write_to_all_complete_s": round(complete_after_last_write_s, 1),
        "deploy_requests": deploy,
        "manager_rss_settled_mib": round(rss_settled, 1),
        "manager_peak_rss_mib": round(peak_rss_mib(manager.pid), 1),
        "change_to_plan_start_p50_s": round(pct(latencies, 50), 3),
        "change_to_plan_start_p99_s": round(pct(latencies, 99), 3),
        "change_to_plan_start_max_s": round(max(latencies), 3),
        "drift_interval_s": DRIFT_INTERVAL_S,
        "drift_requests_in_window": quiet["by_verb"],
        "drift_requests_per_s": quiet["per_s"],
        "drift_detected_after_an_edit_s": None if detected_s is None else round(detected_s, 1),
    }


def floor(cluster, manager):
    """The API server's own rate for a deploy's writes (issue 49, 6: the deploy of `scale` is
    measured against it). The manager deploys the first Instance of `bench/fixtures/three` and
    is stopped; what that deploy wrote (its status, ControllerRevision, Events and the three
    objects) is the sample. Then N_SCALE - 1 Instances are created raw as `scale` creates them,
    and for each, by FLOOR_CLIENTS clients at once, the requests the manager sends for a
    deploy, in its order, as its field manager: the finalizer (a JSON patch through both
    webhooks), the GET of the image policy (none: 404), the ControllerRevision, an Event, the
    three objects (server-side apply), the revision's outcome (a merge patch), the status
    COMPLETE (server-side apply), an Event. The time from the last create until every request
    is answered is the floor."""
    ns = "bench-floor"
    pkg = ROOT / "bench" / "fixtures" / "three"
    cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    names = [f"s{i:05}" for i in range(N_SCALE)]
    kudo(cluster, "install", pkg, "--instance", names[0], "-n", ns, "--wait")
    time.sleep(5)
    manager.terminate()
    manager.wait(timeout=60)
    first = names[0]
    path = f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances"
    seed = cluster.request("GET", f"{path}/{first}")
    uid = seed["metadata"]["uid"]

    def clean(obj):
        meta = obj["metadata"]
        for k in ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation",
                  "selfLink"):
            meta.pop(k, None)
        obj.pop("status", None)
        return obj

    done_status = seed["status"]
    objects = []
    for kind, api in (("ConfigMap", "/api/v1"), ("Secret", "/api/v1"), ("Service", "/api/v1")):
        plural = kind.lower() + "s"
        for o in cluster.request("GET", f"{api}/namespaces/{ns}/{plural}")["items"]:
            if o["metadata"].get("labels", {}).get("app.kubernetes.io/managed-by") == "kudo":
                o = clean(o)
                o.update({"apiVersion": "v1", "kind": kind})
                if kind == "Service":
                    # Headless, as the fixture's (clusterIP None): the rest as the template says.
                    o["spec"] = {k: v for k, v in o["spec"].items()
                                 if k in ("clusterIP", "selector", "ports")}
                objects.append((f"{api}/namespaces/{ns}/{plural}", o))
    revisions = [clean(r) for r in cluster.request(
        "GET", f"/apis/apps/v1/namespaces/{ns}/controllerrevisions")["items"]]
    events = [clean(e) for e in cluster.request(
        "GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]][:2]
    assert len(objects) == 3 and revisions and len(events) == 2, (objects, revisions, events)
    revision = revisions[0]
    outcome = {"metadata": {"annotations": revision["metadata"].get("annotations", {})}}

    def like(sample, n, new_uid):
        return json.loads(json.dumps(sample).replace(first, n).replace(uid, new_uid))

    created = {}

    def create(n):
        created[n] = cluster.request("POST", path, {
            "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            "metadata": {"name": n, "namespace": ns, "labels": {"kudo.dev/operator": "bench-three"}},
            "spec": {"operatorVersion": seed["spec"]["operatorVersion"], "parameters": {}}})

    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        list(pool.map(create, names[1:]))
    written_s = time.perf_counter() - t
    before = api_requests(cluster, DEPLOY_KINDS, subresource=True)

    def status(n, st):
        cluster.request("PATCH", f"{path}/{n}/status?fieldManager=kudo-manager&force=true",
                        {"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
                         "metadata": {"name": n, "namespace": ns}, "status": st},
                        "application/apply-patch+yaml")

    def deploy(n):
        inst_uid = created[n]["metadata"]["uid"]
        cluster.request("PATCH", f"{path}/{n}", [
            {"op": "test", "path": "/metadata/resourceVersion",
             "value": created[n]["metadata"]["resourceVersion"]},
            {"op": "add", "path": "/metadata/finalizers", "value": ["kudo.dev/cleanup"]}],
            "application/json-patch+json")
        try:
            cluster.request("GET", "/api/v1/namespaces/kudo-system/configmaps/kudo-image-policy")
        except urllib.error.HTTPError as e:
            if e.code != 404:
                raise
        rev = like(revision, n, inst_uid)
        cluster.request("POST", f"/apis/apps/v1/namespaces/{ns}/controllerrevisions", rev)
        cluster.request("POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events",
                        like(events[0], n, inst_uid))
        for api, o in objects:
            o = like(o, n, inst_uid)
            cluster.request("PATCH", f"{api}/{o['metadata']['name']}?fieldManager=kudo-manager"
                            "&force=true", o, "application/apply-patch+yaml")
        cluster.request("PATCH", f"/apis/apps/v1/namespaces/{ns}/controllerrevisions/"
                        f"{rev['metadata']['name']}", outcome, "application/merge-patch+json")
        status(n, like(done_status, n, inst_uid))
        cluster.request("POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events",
                        like(events[1], n, inst_uid))

    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(FLOOR_CLIENTS) as pool:
        list(pool.map(deploy, names[1:]))
    floor_s = time.perf_counter() - t
    return {
        "instances": N_SCALE,
        "clients": FLOOR_CLIENTS,
        "writes_s": round(written_s, 1),
        "writes_per_s": round((N_SCALE - 1) / written_s, 1),
        "every_deploy_written_after_the_last_create_s": round(floor_s, 1),
        "requests": requests_between(before, api_requests(cluster, DEPLOY_KINDS, subresource=True),
                                     N_SCALE - 1),
    }


def prometheus(text, name):
    """{labels: value} of the samples of metric `name` in Prometheus text."""
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            head, value = line.rsplit(" ", 1)
            labels = head[len(name):].strip("{}")
            key = tuple(sorted(tuple(kv.split("=", 1)) for kv in labels.split(",") if "=" in kv))
            out[tuple((k, v.strip('"')) for k, v in key)] = float(value)
    return out


def get_text(url, ctx, token=None):
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, context=ctx, timeout=60) as r:
        return r.read().decode()


class Writer:
    """One keep-alive connection to the API server: a write's time is the server's, not that of
    a TLS handshake per request (urllib opens a connection per request)."""

    def __init__(self, cluster):
        import http.client
        import urllib.parse
        u = urllib.parse.urlparse(cluster.server)
        self.conn = http.client.HTTPSConnection(u.hostname, u.port, context=cluster.ctx,
                                                timeout=60)
        self.token = cluster.token

    def patch(self, path, body):
        """(HTTP status, seconds, the answer when it is not 200) of one merge patch."""
        data = json.dumps(body).encode()
        t = time.perf_counter()
        self.conn.request("PATCH", path, data, {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/merge-patch+json"})
        r = self.conn.getresponse()
        answer = r.read()
        took = time.perf_counter() - t
        return r.status, took, None if r.status == 200 else answer.decode(errors="replace")


def admission_cost(cluster, state):
    """One Instance write through kudo's webhooks, a no-op webhook's, none (issue 49, 5)."""
    ns = "bench-admission"
    pkg = ROOT / "bench" / "fixtures" / "three"
    cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    names = [f"a{i:05}" for i in range(N_ADMISSION)]
    # No manager runs: `kudo install` only writes the Operator, its Version and the Instance.
    kudo(cluster, "install", pkg, "--instance", names[0], "-n", ns)
    path, created_s = create_raw(cluster, ns, names)
    count = 0
    cont = ""
    while True:  # every Instance is there (in pages)
        page = cluster.request("GET", f"{path}?limit=5000" + (f"&continue={cont}" if cont else ""))
        count += len(page["items"])
        cont = page["metadata"].get("continue")
        if not cont:
            break
    assert count == N_ADMISSION, f"{count} Instances, not {N_ADMISSION}"

    # The configurations `kudo init` registered, kept to be put back and re-pointed.
    kinds = {"mutating": "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
             "validating": "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"}
    registered = {}
    for kind, base in kinds.items():
        for o in cluster.request("GET", base)["items"]:
            if any("/admit/instance/" in w["clientConfig"].get("url", "") for w in o["webhooks"]):
                registered[kind] = o
    assert set(registered) == set(kinds), f"kudo init registered {sorted(registered)}"
    kudo_url = f"https://127.0.0.1:{WEBHOOK_PORT}"
    noop_url = f"https://127.0.0.1:{NOOP_PORT}"

    def configure(url):
        """kudo's configurations calling `url` (same paths, rules, failurePolicy, timeout), or
        none at all (`url` None)."""
        for kind, base in kinds.items():
            obj = json.loads(json.dumps(registered[kind]))
            name = obj["metadata"]["name"]
            live = None
            try:
                live = cluster.request("GET", f"{base}/{name}")
            except urllib.error.HTTPError as e:
                if e.code != 404:
                    raise
            if url is None:
                if live:
                    cluster.request("DELETE", f"{base}/{name}")
                continue
            for w in obj["webhooks"]:
                w["clientConfig"]["url"] = w["clientConfig"]["url"].replace(kudo_url, url)
            meta = obj["metadata"]
            for k in ("uid", "creationTimestamp", "managedFields", "generation"):
                meta.pop(k, None)
            if live:
                meta["resourceVersion"] = live["metadata"]["resourceVersion"]
                cluster.request("PUT", f"{base}/{name}", obj)
            else:
                meta.pop("resourceVersion", None)
                cluster.request("POST", base, obj)

    webhook_ctx = ssl.create_default_context(cafile=str(Path(state) / "ca.pem"))
    servers = {"kudo": WEBHOOK_PORT, "noop": NOOP_PORT}
    for port in servers.values():  # both serve
        deadline = time.time() + 30
        while True:
            try:
                get_text(f"https://127.0.0.1:{port}/healthz", webhook_ctx)
                break
            except OSError:
                assert time.time() < deadline, f"nothing serves on {port}"
                time.sleep(0.1)

    def server_metrics():
        """Per server: {endpoint: (answers, seconds handling them)} of the Instance webhooks."""
        out = {}
        for who, port in servers.items():
            text = get_text(f"https://127.0.0.1:{port}/metrics", webhook_ctx)
            counts = prometheus(text, "kudo_webhook_request_duration_seconds_count")
            sums = prometheus(text, "kudo_webhook_request_duration_seconds_sum")
            out[who] = {dict(k)["endpoint"]: (counts[k], sums.get(k, 0.0)) for k in counts}
        return out

    def answers(m, who):
        return sum(n for e, (n, _) in m[who].items() if e in ("mutate", "validate"))

    def settled():
        """The servers' metrics once kudo-webhook's conversions have stopped: each write also
        has the API server convert the Instance for its v1beta1 watch cache, through kudo's
        /convert, after answering; that work is left to finish, not to fall in the next
        window."""
        m = server_metrics()
        while True:
            time.sleep(0.3)
            again = server_metrics()
            if again["kudo"].get("convert") == m["kudo"].get("convert"):
                return again
            m = again

    def apiserver_webhooks():
        """{webhook name: (calls, seconds)} as the API server timed its admission calls."""
        text = get_text(cluster.server + "/metrics", cluster.ctx, cluster.token)
        counts = prometheus(text, "apiserver_admission_webhook_admission_duration_seconds_count")
        sums = prometheus(text, "apiserver_admission_webhook_admission_duration_seconds_sum")
        out = {}
        for k, n in counts.items():
            name = dict(k).get("name", "")
            if "instances." in name and dict(k).get("operation") == "UPDATE":
                c, s_ = out.get(name, (0.0, 0.0))
                out[name] = (c + n, s_ + sums.get(k, 0.0))
        return out

    writer = Writer(cluster)
    errors = {"kudo": 0, "noop": 0, "none": 0}
    last_error = {}
    k_write = [0]

    def write(w, config, n, count=True):
        """One write (a new value each time: an unchanged object is not written); an answer
        other than 200 counts as an error of `config`."""
        k_write[0] += 1
        status, took, answer = w.patch(f"{path}/{n}",
                                       {"spec": {"parameters": {"setting": f"v{k_write[0]}"}}})
        if status != 200 and count:
            errors[config] += 1
            last_error[config] = f"{status}: {answer[:400]}"
        return took

    def wait_for(config):
        """Until the API server calls `config`'s server on every write and the other never
        (3 writes in a row), the configuration being picked up asynchronously."""
        seen = 0
        deadline = time.time() + 60
        while seen < 3:
            assert time.time() < deadline, f"the API server did not take up {config}"
            before = server_metrics()
            write(writer, config, names[0], count=False)
            after = server_metrics()
            got = {who: answers(after, who) - answers(before, who) for who in servers}
            want = {who: 2 if who == config else 0 for who in servers}
            seen = seen + 1 if got == want else 0
            time.sleep(0.05)

    configs = {"kudo": kudo_url, "noop": noop_url, "none": None}
    sequential = {c: [] for c in configs}
    burst = {c: [] for c in configs}
    burst_s = {c: 0.0 for c in configs}
    seen_by = {c: {who: 0.0 for who in servers} for c in configs}
    conversions = {c: 0.0 for c in configs}
    handled = {c: {who: [0.0, 0.0] for who in servers} for c in configs}
    called = {c: {} for c in configs}
    per_round = max(1, ADMISSION_SAMPLES // ADMISSION_ROUNDS)
    per_writer = ADMISSION_BURST // 16
    writers = [Writer(cluster) for _ in range(16)]
    load = [os.getloadavg()[0]]
    for r in range(ADMISSION_ROUNDS):
        order = list(configs)[r % 3:] + list(configs)[:r % 3]
        for config in order:
            configure(configs[config])
            wait_for(config)
            for i in range(10):  # warm: the API server's connections to the new server
                write(writer, config, names[(i * 7919) % N_ADMISSION])
            m0, a0 = settled(), apiserver_webhooks()
            for i in range(per_round):
                n = names[((r * per_round + i) * 197) % N_ADMISSION]
                sequential[config].append(write(writer, config, n))
            a1, m1 = apiserver_webhooks(), settled()
            for who in servers:
                seen_by[config][who] += answers(m1, who) - answers(m0, who)
                conversions[config] += (m1[who].get("convert", (0, 0))[0]
                                        - m0[who].get("convert", (0, 0))[0])
                for e in ("mutate", "validate"):
                    n1, s1 = m1[who].get(e, (0, 0))
                    n0, s0 = m0[who].get(e, (0, 0))
                    handled[config][who][0] += n1 - n0
                    handled[config][who][1] += s1 - s0
            for name, (c1, s1) in a1.items():
                c0, s0 = a0.get(name, (0.0, 0.0))
                c, s_ = called[config].get(name, (0.0, 0.0))
                called[config][name] = (c + c1 - c0, s_ + s1 - s0)
            # 16 writers at once, each on Instances of its own.
            base = r * ADMISSION_BURST

            def one(j):
                return [write(writers[j], config,
                              names[((base + j + 16 * i) * 31) % N_ADMISSION])
                        for i in range(per_writer)]

            t = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(16) as pool:
                for times in pool.map(one, range(16)):
                    burst[config].extend(times)
            burst_s[config] += time.perf_counter() - t
        load.append(os.getloadavg()[0])
        print(f"round {r + 1}/{ADMISSION_ROUNDS}: " + ", ".join(
            f"{c} p50 {1000 * statistics.median(sequential[c]):.2f} ms" for c in configs),
            flush=True)
    configure(kudo_url)  # as `kudo init` left it

    def ms(seconds):
        return round(1000 * seconds, 2)

    out = {"instances": N_ADMISSION, "created_s": round(created_s, 1), "rounds": ADMISSION_ROUNDS,
           "write": "merge patch of spec.parameters.setting on one Instance"}
    for c in configs:
        xs = sequential[c]
        out[c] = {
            "samples": len(xs),
            "errors": errors[c],
            "last_error": last_error.get(c),
            "p50_ms": ms(pct(xs, 50)), "p90_ms": ms(pct(xs, 90)), "p99_ms": ms(pct(xs, 99)),
            "mean_ms": ms(statistics.mean(xs)),
            "reviews_answered_by": {who: round(v) for who, v in seen_by[c].items()},
            "conversion_reviews_per_write": round(conversions[c] / len(xs), 2),
            "server_handling_mean_ms": {
                who: ms(s_ / n) for who, (n, s_) in handled[c].items() if n},
            "apiserver_webhook_call_mean_ms": {
                name: ms(s_ / n) for name, (n, s_) in called[c].items() if n},
            "writers_16_per_s": round(len(burst[c]) / burst_s[c], 1),
            "writers_16_p50_ms": ms(pct(burst[c], 50)),
            "writers_16_p99_ms": ms(pct(burst[c], 99)),
        }
    for p in (50, 90, 99):
        k, n, z = (out[c][f"p{p}_ms"] for c in ("kudo", "noop", "none"))
        out[f"kudo_over_noop_p{p}"] = round(k / n, 3)
        out[f"webhooks_only_p{p}_ms"] = {"kudo": round(k - z, 2), "noop": round(n - z, 2)}
    out["kudo_over_noop_writers_16"] = round(
        out["noop"]["writers_16_per_s"] / out["kudo"]["writers_16_per_s"], 3)
    out["goal_at_most_1_5x"] = {
        f"p{p}": out[f"kudo_over_noop_p{p}"] <= 1.5 for p in (50, 90, 99)}
    out["load_average_per_round"] = [round(x, 2) for x in load]
    # What the webhook servers answered but 200, and the API server's failed webhook calls.
    text = {who: get_text(f"https://127.0.0.1:{port}/metrics", webhook_ctx)
            for who, port in servers.items()}
    out["webhook_answers_not_200"] = {
        who: {f"{dict(k)['endpoint']} {dict(k)['code']}": round(v) for k, v in
              prometheus(text[who], "kudo_webhook_requests_total").items()
              if dict(k).get("code") != "200"} for who in servers}
    log = Path(state) / "k8s" / "logs" / "kube-apiserver.log"
    failed = [line for line in log.read_text(errors="replace").splitlines()
              if "failed calling webhook" in line.lower()]
    out["apiserver_failed_webhook_calls_logged"] = len(failed)
    out["apiserver_failed_webhook_call_last"] = failed[-1][:400] if failed else None
    return out


def clear_peak(pid):
    """Resets the process's VmHWM to its RSS now (Linux: `5 > /proc/PID/clear_refs`)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def plans_logged(log, what):
    return sum(1 for line in open(log, errors="replace") if f"{what} " in line and "instance=" in line)


def count_failed(cluster, ns):
    """Instances of `ns` whose active plan is FATAL_ERROR for their generation, and the largest
    status (bytes of JSON)."""
    failed, largest = 0, 0
    for i in instances(cluster, ns):
        largest = max(largest, len(json.dumps(i.get("status", {}))))
        failed += active_status(i) == "FATAL_ERROR"
    return failed, largest


QUIET_KINDS = {"instances", "configmaps", "secrets", "services", "events", "controllerrevisions",
               "leases", "operatorversions"}


def quiet_requests(cluster, seconds, kinds=QUIET_KINDS):
    """What the API server answered for `kinds` (kudo's and the objects it applies) over
    `seconds` in which the benchmark sends nothing: requests per second, by verb and resource."""
    before = api_requests(cluster, kinds)
    t = time.perf_counter()
    time.sleep(seconds)
    window = time.perf_counter() - t
    after = api_requests(cluster, kinds)
    delta = {f"{v} {r}{' dryRun' if d else ''}": round(after[k] - before.get(k, 0))
             for k in after for (v, r, d) in [k] if after[k] - before.get(k, 0) > 0}
    return {"window_s": round(window, 1), "by_verb": delta,
            "per_s": round(sum(delta.values()) / window, 2)}


def faults(cluster, manager, env, state):
    """After `scale` (issue 49, faults): the API server restarted under N_SCALE Instances, then
    every Instance failing at once (a value its template turns into a label value the API
    server refuses: 422, the step FATAL_ERROR)."""
    ns = "bench-scale"
    path = f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances"
    log = Path(state) / "manager.log"
    out = {}
    # 1. The API server (etcd, the controllers) stopped and started again.
    started = plans_logged(log, "plan started")
    clear_peak(manager.pid)
    t = time.perf_counter()
    run(SHARED / "k8s" / "stop.sh", env=env)
    run(SHARED / "k8s" / "start.sh", env=env)
    restart_s = time.perf_counter() - t
    time.sleep(60)
    quiet = quiet_requests(cluster, 60)
    done, total = count_complete(cluster, ns)
    out["apiserver_restart"] = {
        "restart_s": round(restart_s, 1),
        "manager_running": manager.poll() is None,
        "manager_rss_peak_mib": round(peak_rss_mib(manager.pid), 1),
        "manager_rss_after_mib": round(rss_now_mib(manager.pid), 1),
        "plans_started_again": plans_logged(log, "plan started") - started,
        "still_complete": done,
        "of": total,
        "requests_minute_2": quiet,
    }
    print(json.dumps(out), flush=True)
    if "failing" not in FAULTS:
        return out
    # 2. Every Instance refused at once.
    log_bytes = log.stat().st_size
    warns = log_lines(log)
    clear_peak(manager.pid)
    names = [f"s{i:05}" for i in range(N_SCALE)]
    before = api_requests(cluster, DEPLOY_KINDS, subresource=True)
    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda n: cluster.request(
            "PATCH", f"{path}/{n}", {"spec": {"parameters": {"setting": "not a label value!"}}},
            "application/merge-patch+json"), names))
    written_s = time.perf_counter() - t
    t_last = time.perf_counter()
    failed, largest = 0, 0
    deadline = time.time() + 3600
    while time.time() < deadline:
        failed, largest = count_failed(cluster, ns)
        if failed == N_SCALE:
            break
        time.sleep(15)
    all_failed_s = time.perf_counter() - t_last
    failing = requests_between(before, api_requests(cluster, DEPLOY_KINDS, subresource=True),
                               N_SCALE)
    time.sleep(30)
    quiet = quiet_requests(cluster, 60)
    out["all_failing"] = {
        "patches_s": round(written_s, 1),
        "all_fatal": failed == N_SCALE,
        "failed": failed,
        "last_patch_to_all_fatal_s": round(all_failed_s, 1),
        "requests_until_all_fatal": failing,
        "largest_status_bytes": largest,
        "manager_rss_peak_mib": round(peak_rss_mib(manager.pid), 1),
        "manager_rss_after_mib": round(rss_now_mib(manager.pid), 1),
        "manager_log_mib": round((log.stat().st_size - log_bytes) / 2**20, 1),
        "manager_log_warn_error_lines": log_lines(log) - warns,
        "requests_after_all_failed": quiet,
    }
    return out


def response_bytes(cluster, resource, verb):
    """apiserver_response_sizes_sum of `verb` on `resource`: the bytes it answered."""
    req = urllib.request.Request(cluster.server + "/metrics")
    req.add_header("Authorization", f"Bearer {cluster.token}")
    with urllib.request.urlopen(req, context=cluster.ctx, timeout=60) as r:
        text = r.read().decode()
    total = 0.0
    for line in text.splitlines():
        if (line.startswith("apiserver_response_sizes_sum{") and f'resource="{resource}"' in line
                and f'verb="{verb}"' in line):
            total += float(line.rsplit(" ", 1)[1])
    return total


def deployments(cluster, manager):
    """N_DEPLOY Instances of one Deployment each, one in ten with a container in
    CrashLoopBackOff (issue 49, 6): the health path, and what looking at the waiting ones costs."""
    ns = "bench-deploy"
    pkg = ROOT / "bench" / "fixtures" / "deployment"
    cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    names = [f"w{i:04}" for i in range(N_DEPLOY)]
    failing = {n for i, n in enumerate(names) if i % 10 == 5}
    kudo(cluster, "install", pkg, "--instance", names[0], "-n", ns, "--wait")
    path = f"/apis/kudo.dev/v1beta2/namespaces/{ns}/instances"
    ov = cluster.request("GET", f"{path}/{names[0]}")["spec"]["operatorVersion"]
    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda n: cluster.request("POST", path, {
            "apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
            "metadata": {"name": n, "namespace": ns},
            "spec": {"operatorVersion": ov, "parameters": {"fail": n in failing}}}), names[1:]))
    written_s = time.perf_counter() - t
    t_last = time.perf_counter()
    healthy = N_DEPLOY - len(failing)
    done = 0
    deadline = time.time() + 1800
    while time.time() < deadline:
        done, _ = count_complete(cluster, ns)
        if done >= healthy:
            break
        time.sleep(10)
    complete_s = time.perf_counter() - t_last
    time.sleep(30)
    rss = rss_now_mib(manager.pid)
    kinds = {"pods", "replicasets", "deployments", "events"}
    before = api_requests(cluster, kinds)
    bytes_before = response_bytes(cluster, "pods", "LIST")
    event_bytes_before = response_bytes(cluster, "events", "LIST")
    t = time.perf_counter()
    time.sleep(60)
    window = time.perf_counter() - t
    after = api_requests(cluster, kinds)
    pod_bytes = response_bytes(cluster, "pods", "LIST") - bytes_before
    event_bytes = response_bytes(cluster, "events", "LIST") - event_bytes_before
    delta = {f"{v} {r}": round(after[k] - before.get(k, 0))
             for k in after for (v, r, d) in [k] if after[k] - before.get(k, 0) > 0}
    waiting = cluster.request("GET", f"{path}/{sorted(failing)[0]}").get("status", {})
    step = waiting.get("planStatus", {}).get("deploy", {}).get("phases", [{}])[0].get("steps", [{}])[0]
    return {
        "instances": N_DEPLOY,
        "failing": len(failing),
        "writes_s": round(written_s, 1),
        "last_write_to_healthy_complete_s": round(complete_s, 1),
        "healthy_complete": done,
        "manager_rss_mib": round(rss, 1),
        "manager_peak_rss_mib": round(peak_rss_mib(manager.pid), 1),
        "window_s": round(window, 1),
        "requests_in_window": delta,
        "requests_per_s": round(sum(delta.values()) / window, 2),
        "pod_list_kib_per_s": round(pod_bytes / 1024 / window, 1),
        "event_list_kib_per_s": round(event_bytes / 1024 / window, 1),
        "a_waiting_step": {"status": step.get("status"), "message": step.get("message", "")[:300]},
    }


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("KUDO_BENCH_BIN"):
        subprocess.run(["cargo", "build", "--release", "--workspace", "--bins", "--locked"],
                       cwd=ROOT, check=True)
        if "admission" in PARTS:
            subprocess.run(["cargo", "build", "--release", "--locked", "-p", "kudo-webhook",
                            "--example", "noop"], cwd=ROOT, check=True)
    # A SIGTERM stops the control plane too (the `finally` below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print("built; starting the control plane", flush=True)
    state = tempfile.mkdtemp(prefix="kudo-bench-")
    # Ports of its own, so that it never meets a development or CI control plane.
    env = dict(os.environ, K8S_RUN_DIR=f"{state}/k8s", API_PORT=API_PORT,
               ETCD_CLIENT_PORT=ETCD_CLIENT_PORT, ETCD_PEER_PORT=ETCD_PEER_PORT)
    if "rollout" in PARTS or "deployments" in PARTS:
        env["FAKE_KUBELET"] = "1"
    results = {}
    webhook = manager = noop = None
    try:
        started = run(SHARED / "k8s" / "start.sh", env=env).stdout
        kubeconfig = started.strip().split("=", 1)[1]
        cluster = Cluster(kubeconfig)
        pkg = ROOT / "tests" / "fixtures" / "e2e" / "configs"
        webhook, manager = start_daemons(cluster, state)
        # 1. kudo's installation; then storage moved back to v1beta1 while N Instances are
        # created (as a KUDO installation left them), and forward again by `kudo init`.
        if "list" in PARTS:
            ns, items = list_conversion(cluster)
            kudo(cluster, "install", pkg, "--instance", "seed", "-n", ns, "--wait")
            crds = ["instances.kudo.dev"]
            for name in crds:
                crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
                live = cluster.request("GET", crd_path)
                for v in live["spec"]["versions"]:
                    v["storage"] = v["name"] == "v1beta1"
                cluster.request("PUT", crd_path, live)
            time.sleep(2)
            t = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(16) as pool:
                list(pool.map(lambda o: cluster.request(
                    "POST", f"/apis/kudo.dev/v1beta1/namespaces/{ns}/instances", o), items))
            results["create_v1beta1_instances_s"] = round(time.perf_counter() - t, 2)
            kudo(cluster, "init", "--webhook-url", f"https://127.0.0.1:{WEBHOOK_PORT}",
                 "--ca-bundle", Path(state) / "ca.pem")
            time.sleep(2)
            path = f"/apis/kudo.dev/{{}}/namespaces/{ns}/instances"
            cluster.request("GET", path.format("v1beta2"))  # warm
            conv = timed(lambda: cluster.request("GET", path.format("v1beta2")), 10)
            plain = timed(lambda: cluster.request("GET", path.format("v1beta1")), 10)
            typed = cluster.request("GET", path.format("v1beta2"))["items"]
            untyped = sum(1 for i in typed if isinstance(i["spec"].get("parameters", {}).get("replicas"), str))
            results["list"] = {
                "objects": len(typed),
                "v1beta2_converted_p50_s": round(statistics.median(conv), 3),
                "v1beta1_unconverted_p50_s": round(statistics.median(plain), 3),
                "ratio": round(statistics.median(conv) / statistics.median(plain), 2),
                "values_left_untyped": untyped,
            }
            print(json.dumps(results), flush=True)

        # 2. 50 concurrent updates of one Instance, with the manager running.
        if "concurrent" in PARTS:
            ns2 = "bench-concurrent"
            cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns2}})
            kudo(cluster, "install", pkg, "--instance", "many", "-n", ns2, "--wait")

            def one(i):
                t = time.perf_counter()
                p = subprocess.run([BIN / "kudo", "update", "--instance", "many", "-n", ns2, "-p",
                                    f"settings/k{i % 20:02}=v{i}" if i < 20 else f"replicas={i}",
                                    "--kubeconfig", kubeconfig], capture_output=True, text=True)
                return p.returncode, time.perf_counter() - t, p.stderr[-300:]

            # 20 settings and the replicas: distinct parameters for 21 of them; the other 29
            # race on replicas (the same parameter: the last writer wins).
            with concurrent.futures.ThreadPoolExecutor(N_CONCURRENT) as pool:
                outcomes = list(pool.map(one, range(N_CONCURRENT)))
            landed = sum(1 for c, _, _ in outcomes if c == 0)
            times = [d for _, d, _ in outcomes]
            results["concurrent_updates"] = {
                "updates": N_CONCURRENT,
                "succeeded": landed,
                "p50_s": round(pct(times, 50), 3),
                "p99_s": round(pct(times, 99), 3),
                "failures": [e for c, _, e in outcomes if c != 0][:3],
            }
            print(json.dumps(results["concurrent_updates"]), flush=True)

        # 3. N instances each updated once: until COMPLETE, against a bare SSA loop.
        if "many" in PARTS:
            ns3 = "bench-many"
            cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns3}})
            names = [f"i{i:03}" for i in range(N_INSTANCES)]
            # The first install creates the Operator and OperatorVersion; the others find them.
            kudo(cluster, "install", pkg, "--instance", names[0], "-n", ns3)
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda n: kudo(cluster, "install", pkg, "--instance", n, "-n", ns3),
                              names[1:]))
            assert wait_complete(cluster, ns3, names), "the installs did not complete"
            rss_before = peak_rss_mib(manager.pid)
            t = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda n: kudo(cluster, "update", "--instance", n, "-n", ns3, "-p",
                                             "replicas=3"), names))
            issued_s = time.perf_counter() - t
            done = wait_complete(cluster, ns3, names)
            kudo_s = time.perf_counter() - t
            # The same updates sent raw (one merge patch each, 8 threads, the bare loop's
            # client): what the in-cluster half (admission, the manager) costs without 200
            # CLI processes starting, reading their kubeconfig and opening connections.
            t = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda n: cluster.request(
                    "PATCH", f"/apis/kudo.dev/v1beta2/namespaces/{ns3}/instances/{n}",
                    {"spec": {"parameters": {"replicas": 4}}}, "application/merge-patch+json"),
                    names))
            raw_issued_s = time.perf_counter() - t
            ctx = ssl.create_default_context(cafile=str(Path(state) / "ca.pem"))
            with urllib.request.urlopen(f"https://127.0.0.1:{WEBHOOK_PORT}/metrics",
                                        context=ctx) as r:
                (OUT / "webhook-metrics.txt").write_bytes(r.read())
            raw_done = wait_complete(cluster, ns3, names)
            raw_s = time.perf_counter() - t
            t = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda n: cluster.apply(
                    f"/api/v1/namespaces/{ns3}/configmaps/{n}-bare",
                    {"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": f"{n}-bare", "namespace": ns3},
                     "data": {"replicas": "3", "clusterName": "e2e"}}), names))
            bare_s = time.perf_counter() - t
            # The same Instances applied bare (server-side apply, 8 threads): the cost of the
            # objects themselves through the API server (a CRD write, kudo's admission, the
            # conversion for the v1beta1 watch cache), with no plan run and no CLI.
            t = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda n: cluster.apply(
                    f"/apis/kudo.dev/v1beta2/namespaces/{ns3}/instances/{n}",
                    {"apiVersion": "kudo.dev/v1beta2", "kind": "Instance",
                     "metadata": {"name": n, "namespace": ns3},
                     "spec": {"parameters": {"clusterName": "e2e"}}}), names))
            bare_instances_s = time.perf_counter() - t
            results["many_instances"] = {
                "instances": N_INSTANCES,
                "all_complete": done,
                "kudo_update_to_complete_s": round(kudo_s, 2),
                "of_which_the_cli_updates_s": round(issued_s, 2),
                "manager_peak_rss_before_updates_mib": round(rss_before, 1),
                "bare_ssa_loop_s": round(bare_s, 2),
                "throughput_vs_bare": round(bare_s / kudo_s, 3),
                "raw_patches_to_complete_s": round(raw_s, 2),
                "of_which_the_raw_patches_s": round(raw_issued_s, 2),
                "raw_all_complete": raw_done,
                "raw_throughput_vs_bare": round(bare_s / raw_s, 3),
                "bare_instance_ssa_loop_s": round(bare_instances_s, 2),
                "throughput_vs_bare_instances": round(bare_instances_s / kudo_s, 3),
                "raw_throughput_vs_bare_instances": round(bare_instances_s / raw_s, 3),
                "manager_peak_rss_mib": round(peak_rss_mib(manager.pid), 1),
                "webhook_peak_rss_mib": round(peak_rss_mib(webhook.pid), 1),
            }
        if "rollout" in PARTS:
            results["rollout_halt"] = rollout_halt(cluster, manager)
            print(json.dumps(results["rollout_halt"]), flush=True)
        if "deployments" in PARTS:
            results["deployments"] = deployments(cluster, manager)
            print(json.dumps(results["deployments"]), flush=True)
        if "scale" in PARTS:
            results["scale"] = scale(cluster, manager)
            print(json.dumps(results["scale"]), flush=True)
            if "faults" in PARTS:
                results["faults"] = faults(cluster, manager, env, state)
                print(json.dumps(results["faults"]), flush=True)
        if "floor" in PARTS:
            # Run alone: it stops the manager.
            results["floor"] = floor(cluster, manager)
            print(json.dumps(results["floor"]), flush=True)
        if "drift" in PARTS:
            results["drift_requests"] = drift_requests(cluster, pkg)
            print(json.dumps(results["drift_requests"]), flush=True)
        if "delete" in PARTS:
            results["delete_during_plans"] = delete_during_plans(cluster, pkg, manager, state)
            print(json.dumps(results["delete_during_plans"]), flush=True)
        if "admission" in PARTS:
            # The floor: kudo-webhook's server, same certificate, answering `allowed` unread.
            noop = subprocess.Popen(
                [BIN / "examples" / "noop", "--listen", f"127.0.0.1:{NOOP_PORT}", "--tls-cert",
                 Path(state) / "tls.crt", "--tls-key", Path(state) / "tls.key"],
                stdout=open(Path(state) / "noop.log", "w"), stderr=subprocess.STDOUT)
            results["admission"] = admission_cost(cluster, state)
            print(json.dumps(results["admission"]), flush=True)
    finally:
        for p in (webhook, manager, noop):
            if p:
                p.terminate()
        subprocess.run([SHARED / "k8s" / "stop.sh", "--clean"], env=env)
    (OUT / "cluster.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    sys.exit(main())

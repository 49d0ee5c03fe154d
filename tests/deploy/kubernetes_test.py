"""deploy/kubernetes/ (run by test_kubernetes.sh): every manifest parses; the kustomization lists
every file; the Deployment's flags, FFTBLOOM_* variables (over the image's ENV from the
Dockerfile), port, probe paths, kernel folder, user and writable folders agree with the daemon
(its option table, --check-config, its OpenAPI paths) and with each other (Service, PDB,
ScaledObject selectors and names, the grace period against preStop and the drain, the scaling
threshold against the readiness high-water mark); then the daemon runs with that configuration
(without the warm-up, minutes on llvmpipe) on the ConfigMap's kernels laid out as the kubelet mounts
them, and every probe path, the kernels and the metric the ScaledObject queries are checked on
it."""
import glob
import math
import os
import re
import shutil
import subprocess

import yaml

from deploylib import (DAEMON, ROOT, TMP, Daemon, check, check_flags_and_env, default, dockerfile_env,
                       finish, free_port, openapi_paths, options, parse_dockerfile)

K8S = os.path.join(ROOT, "deploy", "kubernetes")


def load():
    docs = {}
    for path in sorted(glob.glob(os.path.join(K8S, "*.yaml"))):
        try:
            items = [d for d in yaml.safe_load_all(open(path)) if d]
        except yaml.YAMLError as e:
            check("%s parses" % os.path.basename(path), False, e)
            continue
        check("%s parses (%s)" % (os.path.basename(path), ", ".join(d.get("kind", "?")
                                                                     for d in items)), items)
        docs[os.path.basename(path)] = items
    return docs


def by_kind(docs, kind):
    return [d for items in docs.values() for d in items if d.get("kind") == kind]


def effective_env(container):
    """The image's ENV (Dockerfile runtime stage) overlaid with the container's env."""
    instrs = parse_dockerfile(os.path.join(ROOT, "Dockerfile"))
    env = dockerfile_env(instrs, max(s for s, *_ in instrs))
    for e in container.get("env", []):
        check("env %s has a literal value" % e["name"], "value" in e, e)
        env[e["name"]] = str(e.get("value", ""))
    return env


def arg_value(args, name, env):
    flag = "--" + name
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return env.get(options()[name]["env"], default(name))


def probe_port(probe, ports):
    p = probe["httpGet"]["port"]
    return ports.get(p) if isinstance(p, str) else p


def main():
    docs = load()
    kust = docs.pop("kustomization.yaml")[0]
    listed = set(kust.get("resources", []))
    check("the kustomization lists every manifest (%s)" % ", ".join(sorted(listed)),
          listed == set(docs), set(docs) ^ listed)
    gen = {g["name"]: g for g in kust.get("configMapGenerator", [])}
    for g in gen.values():
        for f in g.get("files", []):
            check("configMapGenerator %s: %s exists" % (g["name"], f),
                  os.path.isfile(os.path.join(K8S, f.split("=")[-1])))
    ns = by_kind(docs, "Namespace")
    check("the namespace exists and is the kustomization's",
          ns and ns[0]["metadata"]["name"] == kust.get("namespace"))

    dep = by_kind(docs, "Deployment")
    check("one Deployment", len(dep) == 1)
    dep = dep[0]
    spec, pod = dep["spec"], dep["spec"]["template"]
    labels = pod["metadata"]["labels"]
    sel = spec["selector"]["matchLabels"]
    check("the Deployment's selector matches its pods", sel.items() <= labels.items())
    (c,) = pod["spec"]["containers"]
    check("the image is the kustomization's (%s)" % c["image"],
          c["image"] in [i["name"] for i in kust.get("images", [])])
    env = effective_env(c)
    args = [str(a) for a in c.get("args", [])]
    check("the container's command is the image's (args only)", "command" not in c)
    check_flags_and_env("Deployment", args, env)
    port = int(arg_value(args, "port", env))
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    check("containerPort %s is the daemon's port %d" % (list(ports.values()), port),
          list(ports.values()) == [port])
    check("one GPU per pod: nvidia.com/gpu 1 and the daemon on its device 0 (--gpus %s)" %
          arg_value(args, "gpus", env),
          str(c["resources"]["limits"].get("nvidia.com/gpu")) == "1" and
          str(c["resources"].get("requests", {}).get("nvidia.com/gpu", "1")) == "1" and
          arg_value(args, "gpus", env) == "0")
    check("cpu and memory requests", {"cpu", "memory"} <= set(c["resources"].get("requests", {})))
    tls = bool(arg_value(args, "tls-cert", env))
    paths = openapi_paths()
    want = {"livenessProbe": "/healthz", "readinessProbe": "/readyz", "startupProbe": "/readyz"}
    for name, path in want.items():
        p = c.get(name)
        ok = p and p["httpGet"]["path"] == path and path in paths and \
            probe_port(p, ports) == port and \
            p["httpGet"].get("scheme", "HTTP") == ("HTTPS" if tls else "HTTP")
        check("%s: GET %s on the daemon's port (a path it serves)" % (name, path), ok, p)
    sp = c["startupProbe"]
    budget = sp.get("periodSeconds", 10) * sp.get("failureThreshold", 3)
    check("the startup probe allows %d s for the warm-up (>= 120)" % budget, budget >= 120)
    pre = c["lifecycle"]["preStop"]["exec"]["command"]
    sleep = int(pre[1]) if pre[0] in ("/bin/sleep", "sleep") else -1
    check("preStop waits (%s) before SIGTERM, with the base image's sleep" % pre,
          sleep > 0 and os.path.isfile("/bin/sleep"))
    drain = float(arg_value(args, "drain-timeout", env))
    grace = pod["spec"]["terminationGracePeriodSeconds"]
    check("terminationGracePeriodSeconds %d >= preStop %d + drain %g + 5" % (grace, sleep, drain),
          grace >= sleep + drain + 5)
    instrs = parse_dockerfile(os.path.join(ROOT, "Dockerfile"))
    user = [r for s, i, r, _ in instrs if i == "USER"][-1].split(":")[0]
    sc = pod["spec"].get("securityContext", {})
    check("runs as the image's user %s, not root" % user,
          str(sc.get("runAsUser")) == user and sc.get("runAsNonRoot") is True)
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in pod["spec"].get("volumes", [])}
    ro = c.get("securityContext", {}).get("readOnlyRootFilesystem")
    for name in ("program-cache", "fft-wisdom"):
        d = os.path.dirname(arg_value(args, name, env))
        check("--%s lies on a writable volume (%s)" % (name, d),
              d in mounts and not mounts[d].get("readOnly") or not ro, mounts.keys())
    kdir = arg_value(args, "kernel-dir", env)
    m = mounts.get(kdir)
    cm = vols.get(m["name"], {}).get("configMap", {}).get("name") if m else None
    check("--kernel-dir %s is the mounted ConfigMap %s (made by the kustomization)" % (kdir, cm),
          cm in gen)
    ann = pod["metadata"].get("annotations", {})
    check("Prometheus scrapes the daemon's port and /metrics",
          ann.get("prometheus.io/port") == str(port) and ann.get("prometheus.io/path") in paths)

    (svc,) = by_kind(docs, "Service")
    check("the Service selects the pods", svc["spec"]["selector"].items() <= labels.items())
    tp = svc["spec"]["ports"][0]["targetPort"]
    check("the Service targets the daemon's port (%s)" % tp,
          (ports.get(tp) if isinstance(tp, str) else tp) == port)
    (pdb,) = by_kind(docs, "PodDisruptionBudget")
    check("the PodDisruptionBudget selects the pods",
          pdb["spec"]["selector"]["matchLabels"].items() <= labels.items())
    (so,) = by_kind(docs, "ScaledObject")
    check("the ScaledObject scales the Deployment",
          so["spec"]["scaleTargetRef"]["name"] == dep["metadata"]["name"])
    trig = so["spec"]["triggers"][0]
    query, thr = trig["metadata"]["query"], float(trig["metadata"]["threshold"])
    metric = re.findall(r"\b(fftbloom_[a-z_]+)", query)
    qsize = int(arg_value(args, "queue-size", env))
    hw = int(arg_value(args, "queue-high-water", env))
    high = math.ceil(qsize * hw / 100)
    check("it scales on fftbloom_queue_depth (prometheus trigger): %s" % query,
          trig["type"] == "prometheus" and metric == ["fftbloom_queue_depth"])
    check("its target %g per pod is below the readiness high-water mark %d (%d%% of %d)" %
          (thr, high, hw, qsize), 0 < thr < high)
    mn = so["spec"].get("minReplicaCount", 0)
    mu = pdb["spec"].get("maxUnavailable", 0)
    check("at least one pod stays while the PDB lets one go (min %d, maxUnavailable %s)" %
          (mn, mu), isinstance(mu, int) and mn > mu)

    # the configuration on a real daemon, the ConfigMap's kernels as the kubelet lays them out
    kroot = os.path.join(TMP, "kernels")
    data = os.path.join(kroot, "..2026_01_01_00_00_00.000000001")
    os.makedirs(data)
    names = []
    for f in gen[cm]["files"]:
        key, _, src = f.rpartition("=")
        key = key or os.path.basename(src)
        shutil.copy(os.path.join(K8S, src), os.path.join(data, key))
        names.append(os.path.splitext(key)[0])
    os.symlink(os.path.basename(data), os.path.join(kroot, "..data"))
    for key in os.listdir(data):
        os.symlink(os.path.join("..data", key), os.path.join(kroot, key))
    cache = os.path.join(TMP, "cache")
    os.makedirs(cache)
    run_env = dict(env)
    # no warm-up here: the manifest's 1080p and 2160p plans take minutes on llvmpipe
    run_env.update({"FFTBLOOM_PORT": str(free_port()), "FFTBLOOM_WARM_SIZES": "",
                    "FFTBLOOM_PROGRAM_CACHE": os.path.join(cache, "programs"),
                    "FFTBLOOM_FFT_WISDOM": os.path.join(cache, "fft-wisdom")})
    run_args = [kroot if a == kdir else a for a in args]
    d = Daemon([DAEMON] + run_args, env=run_env, name="k8s")
    try:
        d.wait_log(r"ready: 1 GPU thread", 60)
        for name, path in want.items():
            st, _, body = d.req("GET", path)
            check("%s %s answers 200 on the running daemon" % (name, path), st == 200, (st, body))
        st, _, body = d.req("GET", "/v1/kernels")
        got = sorted(k["name"] for k in yaml.safe_load(body)["kernels"]) if st == 200 else None
        check("the ConfigMap's kernels are registered through --kernel-dir (%s)" % got,
              got == sorted(names))
        st, _, body = d.req("GET", "/metrics")
        text = body.decode()
        check("the daemon exports the scaled-on metric as a gauge",
              "# TYPE fftbloom_queue_depth gauge" in text and
              re.search(r"^fftbloom_queue_depth \d+$", text, re.M))
    finally:
        rc = d.stop()
    check("exits 0 on SIGTERM", rc == 0, (rc, d.log()[-1500:]))

    kubectl = shutil.which("kubectl")
    if kubectl:  # not on CI; where it is, kustomize must build the base
        r = subprocess.run([kubectl, "kustomize", K8S], capture_output=True, text=True)
        built = list(yaml.safe_load_all(r.stdout)) if r.returncode == 0 else []
        cms = [b["metadata"]["name"] for b in built if b and b["kind"] == "ConfigMap"]
        check("kubectl kustomize builds the base, the kernels ConfigMap referenced by its "
              "generated name", r.returncode == 0 and len(cms) == 1 and cms[0] in r.stdout and
              r.stdout.count(cms[0]) >= 2, r.stderr[-500:])
    else:
        print("     kubectl not installed: kustomize build not tried")
    finish()


main()

"""The units under a real systemd (`make systemd-check`; not part of `make test`: it needs root
and systemd-nspawn, which CI machines may not allow). Boots this machine's /usr in a container
(systemd-nspawn --volatile=yes: a fresh tmpfs root, /usr read-only, nothing written to the
host), with systemd/fftbloomd.service and fftbloomd.socket as shipped except ExecStart= (the
built binary, mounted at /opt/fftbloom) and the socket's port (a free one), and checks on
llvmpipe: socket activation, the API key from LoadCredential=, READY=1 only after the warm-up,
STATUS=, the sandbox letting a bloom run, a clean stop (STOPPING=1, exit 0), the caches making
the next start fast, and the watchdog: with WatchdogSec=2 and --heartbeat-timeout 1 (a drop-in),
a job that holds the GPU thread for seconds gets the service killed and restarted."""
import os
import re
import shutil
import subprocess
import time

import numpy as np

from deploylib import DAEMON, ROOT, TMP, check, finish, free_port

KEY = "k3y-%d" % os.getpid()


def sh(*argv, check_rc=False, timeout=60):
    r = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    if check_rc and r.returncode:
        raise RuntimeError("%s: %s" % (argv, r.stderr))
    return r


def curl(port, path, data=None, key=None, timeout=120):
    argv = ["curl", "-s", "-m", str(timeout), "-o", os.path.join(TMP, "body"), "-w",
            "%{http_code}", "http://127.0.0.1:%d%s" % (port, path)]
    if key:
        argv += ["-H", "Authorization: Bearer " + key]
    if data:
        argv += ["--data-binary", "@" + data]
    return sh(*argv, timeout=timeout + 5).stdout.strip()


class Container:
    def __init__(self, units, opt, etc):
        self.log = open(os.path.join(TMP, "console.log"), "wb")
        self.p = subprocess.Popen(
            ["systemd-nspawn", "-D", "/", "--volatile=yes", "--register=no", "--keep-unit",
             "--machine=fftbloom-%d" % os.getpid(), "-b", "--console=passive",
             "--bind-ro=%s:/run/systemd/system" % units, "--bind-ro=%s:/opt/fftbloom" % opt,
             "--bind-ro=%s:/etc/fftbloomd" % etc,
             "systemd.unit=fftbloom-check.target", "systemd.firstboot=off"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.leader = None
        end = time.time() + 60
        while time.time() < end and self.leader is None and self.p.poll() is None:
            r = sh("pgrep", "-x", "-P", str(self.p.pid), "systemd")
            pids = r.stdout.split()
            if pids:
                self.leader = pids[0]
            time.sleep(0.2)

    def run(self, *argv, timeout=60):
        return sh("nsenter", "-t", self.leader, "-a", *argv, timeout=timeout)

    def show(self, unit, *props):
        r = self.run("systemctl", "show", unit, "--no-pager", *["-p" + p for p in props])
        return dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)

    def journal(self, unit):
        return self.run("journalctl", "-u", unit, "--no-pager", "-o", "cat").stdout

    def wait_state(self, unit, key, want, timeout):
        end = time.time() + timeout
        while time.time() < end:
            if self.show(unit, key).get(key) == want:
                return True
            time.sleep(0.25)
        return False

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()  # nspawn halts the container
            try:
                self.p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.p.terminate()  # a second SIGTERM ends it at once
                self.p.wait(timeout=30)
        self.log.close()


def main():
    if not check("running as root with systemd-nspawn (make deps-systemd)",
                 os.geteuid() == 0 and shutil.which("systemd-nspawn") is not None):
        finish()
    port = free_port()
    units, opt, etc = (os.path.join(TMP, d) for d in ("units", "opt", "etc"))
    for d in (units, opt, etc):
        os.makedirs(d)
    shutil.copy(DAEMON, os.path.join(opt, "fftbloomd"))
    svc = open(os.path.join(ROOT, "systemd/fftbloomd.service")).read()
    svc = svc.replace("ExecStart=/usr/local/bin/fftbloomd", "ExecStart=/opt/fftbloom/fftbloomd")
    open(os.path.join(units, "fftbloomd.service"), "w").write(svc)
    sock = open(os.path.join(ROOT, "systemd/fftbloomd.socket")).read()
    sock = re.sub(r"^ListenStream=.*$", "ListenStream=127.0.0.1:%d" % port, sock, flags=re.M)
    open(os.path.join(units, "fftbloomd.socket"), "w").write(sock)
    os.makedirs(os.path.join(units, "fftbloomd.service.d"))
    open(os.path.join(units, "fftbloomd.service.d", "check.conf"), "w").write(
        "[Service]\nEnvironment=FFTBLOOM_WARM_SIZES=64x48,100x80\n")
    # A volatile /etc has no render group (udev makes it on real hosts); SupplementaryGroups=
    # needs it.
    open(os.path.join(units, "fftbloom-groups.service"), "w").write(
        "[Unit]\nBefore=fftbloomd.service\n[Service]\nType=oneshot\n"
        "ExecStart=/usr/sbin/groupadd -f -r render\nExecStart=/usr/sbin/groupadd -f -r video\n")
    open(os.path.join(units, "fftbloom-check.target"), "w").write(
        "[Unit]\nRequires=basic.target\nAfter=basic.target\n"
        "Wants=fftbloom-groups.service fftbloomd.socket\n")
    with open(os.path.join(etc, "api-key"), "w") as f:
        f.write(KEY + "\n")
    os.chmod(os.path.join(etc, "api-key"), 0o600)

    c = Container(units, opt, etc)
    try:
        if not check("the container boots", c.leader is not None and
                     c.wait_state("fftbloom-check.target", "ActiveState", "active", 60),
                     open(os.path.join(TMP, "console.log")).read()[-2000:]):
            return
        t0 = time.time()
        st = curl(port, "/healthz")
        check("the first connection to the socket starts the service, which answers /healthz",
              st == "200", st)
        check("/v1/ without the key: 401; with the credential's key: 200",
              (curl(port, "/v1/info"), curl(port, "/v1/info", key=KEY)) == ("401", "200"))
        s = c.show("fftbloomd.service", "SubState", "StatusText")
        print("     while warming up: %s" % s)
        ready = c.wait_state("fftbloomd.service", "SubState", "running", 600)
        j = c.journal("fftbloomd.service")
        warmed, started = j.find("warmed 100x80"), j.find("Started fftbloomd.service")
        print("     ready %.1f s after the first connection" % (time.time() - t0))
        check("systemd calls it started only after the warm-up (READY=1)",
              ready and s.get("SubState") == "start" and 0 <= warmed < started, j[-1500:])
        s = c.show("fftbloomd.service", "StatusText", "WatchdogTimestamp")
        check("STATUS= reaches systemd: %s" % s.get("StatusText"),
              s.get("StatusText", "").startswith("ready on http://127.0.0.1:%d" % port))
        check("the watchdog is fed", s.get("WatchdogTimestamp", "") != "")
        img = os.path.join(TMP, "in.jpg")
        sh("convert", "-size", "96x64", "plasma:", img, check_rc=True)
        st = curl(port, "/v1/bloom?kernel_preset=gaussian:sigma=3", data=img, key=KEY)
        check("a bloom runs inside the sandbox (seccomp, device policy, read-only system)",
              st == "200", (st, c.journal("fftbloomd.service")[-1500:]))
        r = c.run("sh", "-c", "ls /var/cache/private/fftbloomd/programs | wc -l; "
                  "wc -c < /var/lib/private/fftbloomd/fft-wisdom")
        n = r.stdout.split()
        check("programs in CacheDirectory=, wisdom in StateDirectory= (%s programs, %s bytes)" %
              tuple(n[:2] + [None] * (2 - len(n))), len(n) == 2 and int(n[0]) > 0 and int(n[1]) > 0)
        c.run("systemctl", "stop", "fftbloomd.service", timeout=90)
        s = c.show("fftbloomd.service", "Result", "ExecMainStatus")
        j = c.journal("fftbloomd.service")
        check("systemctl stop: the drain, exit 0 (Result=%s, status %s)" %
              (s.get("Result"), s.get("ExecMainStatus")),
              s.get("Result") == "success" and s.get("ExecMainStatus") == "0" and
              "stopped after" in j)
        t0 = time.time()
        st = curl(port, "/healthz")
        ready = c.wait_state("fftbloomd.service", "SubState", "running", 120)
        m = re.findall(r"ready: 1 GPU thread up and warmed ([0-9.]+) s", c.journal("fftbloomd.service"))
        print("     second start: ready %s s after start (first: %s s)" %
              (m[-1] if m else "?", m[0] if m else "?"))
        check("socket-activated again; the caches make it ready sooner",
              st == "200" and ready and len(m) >= 2 and float(m[-1]) < float(m[0]))

        # the watchdog, end to end: a GPU thread silent longer than the heartbeat timeout
        c.run("mkdir", "-p", "/etc/systemd/system/fftbloomd.service.d")
        c.run("sh", "-c", "printf '[Service]\\nWatchdogSec=2\\nEnvironment="
              "FFTBLOOM_HEARTBEAT_TIMEOUT=1\\n' > /etc/systemd/system/fftbloomd.service.d/wd.conf")
        c.run("systemctl", "daemon-reload")
        c.run("systemctl", "restart", "fftbloomd.service", timeout=120)
        c.wait_state("fftbloomd.service", "SubState", "running", 120)
        before = int(c.show("fftbloomd.service", "NRestarts").get("NRestarts", "-1"))
        a = (np.random.default_rng().random((960, 1280, 3)) * 2 + 0.01).astype("<f4")
        big = os.path.join(TMP, "big.pfm")
        open(big, "wb").write(b"PF\n1280 960\n-1.0\n" + a[::-1].tobytes())
        curl(port, "/v1/bloom?format=pfm", data=big, key=KEY)  # killed under it: no answer
        time.sleep(4)
        after = int(c.show("fftbloomd.service", "NRestarts").get("NRestarts", "-1"))
        j = c.journal("fftbloomd.service")
        check("a silent GPU thread starves the watchdog: systemd kills and restarts the service "
              "(restarts %d -> %d)" % (before, after),
              after == before + 1 and "watchdog not fed" in j and "Watchdog timeout" in
              c.run("journalctl", "--no-pager", "-o", "cat").stdout, j[-1500:])
        check("and it comes back", c.wait_state("fftbloomd.service", "SubState", "running", 120))
    finally:
        c.stop()
    finish()


main()

"""The systemd units (run by test_units.sh): `systemd-analyze verify` finds nothing to say about
them (its warnings fail the test too), `systemd-analyze security --offline=true` rates each
service at 2.5 or below, and their content agrees with the daemon: every flag and FFTBLOOM_*
variable is in its option table and accepted by --check-config, Type=notify with a watchdog,
the API key as a credential, the GPU device nodes allowed and not hidden, the stop timeout longer
than the drain, the socket unit with the one socket the daemon serves."""
import os
import re
import shlex
import shutil
import subprocess

from deploylib import (BUILD, DAEMON, ROOT, TMP, check, check_flags_and_env, default, finish)

UNIT_DIR = os.path.join(ROOT, "systemd")
SERVICES = ["fftbloomd.service", "fftbloomd@.service"]
MAX_EXPOSURE = 2.5


def parse_unit(path):
    """{section: [(key, value), ...]} with continuation lines joined."""
    out, sec, cur = {}, None, ""
    for line in open(path).read().split("\n"):
        s = line.strip()
        if not cur and (not s or s[0] in "#;"):
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        s = cur + s
        cur = ""
        if s.startswith("["):
            sec = s.strip("[]")
            out.setdefault(sec, [])
        elif "=" in s:
            k, v = s.split("=", 1)
            out[sec].append((k.strip(), v.strip()))
    return out


def values(unit, sec, key):
    return [v for k, v in unit.get(sec, []) if k == key]


def last(unit, sec, key):
    v = values(unit, sec, key)
    return v[-1] if v else None


def seconds(text):
    m = re.fullmatch(r"(\d+)(s|min)?", text or "")
    if not m:
        return None
    return int(m.group(1)) * (60 if m.group(2) == "min" else 1)


def unit_env(unit):
    """Environment= assignments with systemd's specifiers filled in as for a system service."""
    env = {}
    for v in values(unit, "Service", "Environment"):
        for tok in shlex.split(v):
            k, _, val = tok.partition("=")
            env[k] = (val.replace("%C", "/var/cache").replace("%S", "/var/lib")
                      .replace("%d", "/run/credentials/x").replace("%i", "0"))
    return env


def main():
    # Copies whose ExecStart= is the built binary: verify checks that the command exists.
    work = os.path.join(TMP, "units")
    os.makedirs(work)
    for f in os.listdir(UNIT_DIR):
        text = open(os.path.join(UNIT_DIR, f)).read()
        open(os.path.join(work, f), "w").write(text.replace("/usr/local/bin/fftbloomd", DAEMON))

    if not check("systemd-analyze is installed (Makefile DEPS_TEST: systemd)",
                 shutil.which("systemd-analyze") is not None):
        finish()
    names = ["fftbloomd.service", "fftbloomd.socket", "fftbloomd@0.service"]
    r = subprocess.run(["systemd-analyze", "verify"] + names, cwd=work, capture_output=True,
                       text=True)
    said = (r.stdout + r.stderr).strip()
    check("systemd-analyze verify %s: exit 0 and nothing to say" % " ".join(names),
          r.returncode == 0 and not said, said)
    # a broken unit is noticed (the check above can fail)
    bad = os.path.join(work, "broken.service")
    open(bad, "w").write(open(os.path.join(work, "fftbloomd.service")).read()
                         .replace("[Service]", "[Service]\nNoSuchSetting=1"))
    r = subprocess.run(["systemd-analyze", "verify", "broken.service"], cwd=work,
                       capture_output=True, text=True)
    check("systemd-analyze verify reports an unknown setting",
          "NoSuchSetting" in r.stdout + r.stderr)
    os.unlink(bad)

    for name in ["fftbloomd.service", "fftbloomd@0.service"]:
        r = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager", name],
                           cwd=work, capture_output=True, text=True)
        m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout + r.stderr)
        score = float(m.group(1)) if m else float("nan")
        print("     %s: exposure %.1f (at most %.1f)" % (name, score, MAX_EXPOSURE))
        check("systemd-analyze security %s: exposure <= %.1f" % (name, MAX_EXPOSURE),
              score <= MAX_EXPOSURE, (r.stdout + r.stderr)[-3000:])

    drain = float(default("drain-timeout"))
    for name in SERVICES:
        u = parse_unit(os.path.join(UNIT_DIR, name))
        where = "systemd/%s" % name
        check("%s: Type=notify, NotifyAccess=main" % where,
              last(u, "Service", "Type") == "notify" and
              last(u, "Service", "NotifyAccess") == "main")
        wd = seconds(last(u, "Service", "WatchdogSec"))
        check("%s: WatchdogSec set (%s s)" % (where, wd), wd is not None and wd > 0)
        check("%s: restarted when the watchdog fires" % where,
              last(u, "Service", "Restart") in ("on-failure", "on-watchdog", "on-abnormal",
                                               "always"))
        stop = seconds(last(u, "Service", "TimeoutStopSec"))
        check("%s: TimeoutStopSec %s > drain-timeout %g + 5 s" % (where, stop, drain),
              stop is not None and stop >= drain + 5)
        check("%s: systemctl reload sends SIGHUP (the daemon reloads --kernel-dir)" % where,
              last(u, "Service", "ExecReload") == "/bin/kill -HUP $MAINPID")
        check("%s: KillSignal=SIGTERM (the drain)" % where,
              last(u, "Service", "KillSignal") in (None, "SIGTERM"))
        check("%s: the API key is a credential named api-key" % where,
              any(v.startswith("api-key:") for v in values(u, "Service", "LoadCredential")))
        allow = values(u, "Service", "DeviceAllow")
        check("%s: the GPU device nodes are allowed (%s)" % (where, allow),
              "char-drm rw" in allow and "char-nvidia* rw" in allow and
              last(u, "Service", "DevicePolicy") in ("closed", "strict", None))
        check("%s: PrivateDevices= does not hide them" % where,
              last(u, "Service", "PrivateDevices") in (None, "no", "false"))
        check("%s: DynamicUser with the render and video groups" % where,
              last(u, "Service", "DynamicUser") == "yes" and
              set((last(u, "Service", "SupplementaryGroups") or "").split()) >= {"render",
                                                                                "video"})
        env = unit_env(u)
        cache, state = last(u, "Service", "CacheDirectory"), last(u, "Service", "StateDirectory")
        pc, wi = env.get("FFTBLOOM_PROGRAM_CACHE", ""), env.get("FFTBLOOM_FFT_WISDOM", "")
        cache = (cache or "").replace("%i", "0")
        state = (state or "").replace("%i", "0")
        check("%s: the program cache lies in CacheDirectory= (%s)" % (where, pc),
              cache and os.path.dirname(pc) == "/var/cache/" + cache)
        dc = env.get("FFTBLOOM_DRIVER_CACHE", "")
        check("%s: the GL driver's cache lies in CacheDirectory= (%s)" % (where, dc),
              cache and os.path.dirname(dc) == "/var/cache/" + cache)
        check("%s: the FFT wisdom lies in StateDirectory= (%s)" % (where, wi),
              state and os.path.dirname(wi) == "/var/lib/" + state)
        argv = shlex.split(last(u, "Service", "ExecStart").replace("%i", "0"))
        check("%s: ExecStart= runs /usr/local/bin/fftbloomd (make install rewrites it)" % where,
              argv[0] == "/usr/local/bin/fftbloomd", argv)
        check_flags_and_env(where, argv[1:], env)
        if "@" in name:
            check("%s: each instance on its GPU, sharing the port (--gpus %%i --reuse-port)" % where,
                  "--gpus" in argv and argv[argv.index("--gpus") + 1] == "0" and
                  "--reuse-port" in argv)

    s = parse_unit(os.path.join(UNIT_DIR, "fftbloomd.socket"))
    ls = values(s, "Socket", "ListenStream")
    check("fftbloomd.socket: one ListenStream= (fftbloomd serves one socket): %s" % ls,
          len(ls) == 1 and not values(s, "Socket", "ListenDatagram") and
          last(s, "Socket", "Accept") in (None, "no", "false"))
    check("fftbloomd.socket: listens on the daemon's default port %s" % default("port"),
          ls and ls[0].rsplit(":", 1)[-1] == default("port"))
    finish()


main()

"""fftbloomd fast by default (run by test_fast.sh), over real HTTP: with no --program-cache and
--fft-wisdom it persists both under $HOME/.cache/fftbloom (made 0700); a cache directory that
cannot be made only warns; none keeps everything in memory; a new size's first request runs the
built-in FFT choice at once (nothing measured before its answer) and its shapes are measured in
idle time (--fft-idle-tune on: llvmpipe is a software renderer, where auto does not measure),
their lines reach the wisdom file, the plan switches to the winners, and the answers before and
after the switch agree within float tolerance; after a warm-up, a smaller and a larger new size
are answered at once on the plan already built (X-Borrowed-Plan; the larger in tiles of it),
their own plans are built in idle time (/v1/info, /metrics), and the answers on them agree with
the borrowed ones; --borrow-plans=false builds a new size's plan at once; --spare-plans builds
plans in idle time after start, which the first frame of a new size borrows (none with auto on
a software renderer). Prints "SCRIPT: N passed, N failed" last."""
import json
import os
import re
import subprocess
import stat
import threading
import time

import numpy as np

import http_test as H

TOL = 1e-5
# no spare plans: on a GPU the first (1920x1080) is built before ready, and every size here
# would borrow it (a software renderer builds none)
NO_SPARE = ("--spare-plans", "")


def daemon(*args, env=None):
    """H.Daemon with idle work done in its own process: --compile-mode parallel (through the
    environment) unless --compile-thread picks the mode. This script checks idle work within a
    process, which a GPU's default (process) moves into a successor (compile_test.py)."""
    e = dict(env or {})
    if "--compile-thread" not in args:
        e.setdefault("FFTBLOOM_COMPILE_MODE", "parallel")
    return H.Daemon(*args, env=e)


def clean_env(home):
    env = {"HOME": home, "XDG_CACHE_HOME": "", "CACHE_DIRECTORY": ""}
    return env


def info_gpu(d):
    st, _, body = d.req("GET", "/v1/info")
    return json.loads(body)["gpus"][0] if st == 200 else {}


def wisdom_lines(path):
    try:
        with open(path) as f:
            return [l for l in f if "|" in l]
    except OSError:
        return []


def wisdom_key(line):
    """A wisdom line's key (gles/wisdom.h): n, components, adjacent, half, count_log2, and the
    ends' field (io), 0 where the line has none."""
    f = line.strip().split("|")
    return tuple(f[1:7]) + (f[14] if len(f) > 14 else "0",)


def bloom(d, png):
    q = "threshold=0.3&intensity=0.9&kernel_preset=gaussian:sigma=3&format=pfm"
    t0 = time.time()
    st, h, body = d.req("POST", "/v1/bloom?" + q, body=png)
    return st, h, body, time.time() - t0


def test_cache_dir_and_idle_measuring():
    home = os.path.join(H.TMP, "home")
    os.makedirs(home)
    d = daemon("--fft-idle-tune", "on", env=clean_env(home))
    cache = os.path.join(home, ".cache", "fftbloom")
    wpath = os.path.join(cache, "fft-wisdom")
    try:
        g = info_gpu(d)
        H.check("cache directory made 0700", os.path.isdir(cache)
                and stat.S_IMODE(os.stat(cache).st_mode) == 0o700, cache)
        # without an API key /v1/info is public and shows no paths: the wisdom file as <path>
        H.check("/v1/info names a wisdom file (as <path>: no key) and the built-in rules",
                "file <path>" in g.get("fft_wisdom", "") and wpath not in g.get("fft_wisdom", "")
                and "built-in rules" in g.get("fft_wisdom", ""), g)
        H.check("start-up log says where FFT choices come from",
                "FFT choices from file " + wpath in d.log(), d.log()[-1500:])
        # a size never seen: answered at once on the built-in choice
        png = H.png_bytes(H.rand8(56, 80))
        st, h, first, t_first = bloom(d, png)
        log_at_answer = d.log()
        H.check("new size answered", st == 200, (st, first[:200]))
        H.check("nothing measured before the new size's answer",
                "FFT wisdom: n=" not in log_at_answer, log_at_answer[-2000:])
        t = H.timings(h)
        print("     first request of a new size: %.3f s (Server-Timing %s)" % (t_first, t))
        # idle time: the queued shapes are measured and the plan switches
        deadline = time.time() + 240
        g = info_gpu(d)
        while time.time() < deadline and (g.get("fft_shapes_pending", 1) > 0
                                           or g.get("fft_shapes_measured_idle", 0) == 0
                                           or g.get("caches", {}).get("plan_entries") is None):
            time.sleep(0.5)
            g = info_gpu(d)
        print("     after idle: %d shapes measured, %d pending" %
              (g.get("fft_shapes_measured_idle", 0), g.get("fft_shapes_pending", -1)))
        H.check("idle time measured the new size's shapes", g.get("fft_shapes_measured_idle", 0) > 0
                and g.get("fft_shapes_pending") == 0, g)
        lines = wisdom_lines(wpath)
        H.check("the wisdom file got the shapes' lines", len(lines) >= g.get("fft_shapes_measured_idle", 1),
                (len(lines), g))
        while time.time() < deadline and "rebuilt with measured FFT shapes" not in d.log():
            time.sleep(0.2)
        H.check("plan rebuilt with the winners in idle time (logged)",
                "rebuilt with measured FFT shapes" in d.log(), d.log()[-2000:])
        st2, h2, second, _ = bloom(d, png)
        H.check("same size after the switch answered", st2 == 200, (st2, second[:200]))
        if st == 200 and st2 == 200:
            H.close_enough("answer after the plan switched == before", H.read_pfm(second),
                           H.read_pfm(first), TOL)
        progs = os.path.join(cache, "programs")
        n = len(os.listdir(progs)) if os.path.isdir(progs) else 0
        H.check("program binaries persisted in the cache directory", n > 0, progs)
    finally:
        d.stop("default cache directory")
    # a second daemon on the same HOME reads the measured shapes
    d = daemon(env=clean_env(home))
    try:
        g = info_gpu(d)
        H.check("a restart reads the persisted wisdom",
                "(%d shapes)" % len({wisdom_key(l) for l in wisdom_lines(wpath)})
                in g.get("fft_wisdom", ""), g.get("fft_wisdom"))
    finally:
        d.stop("restart on the same cache directory")


def test_unwritable_and_none():
    # HOME under a regular file: no directory can be made there (root included)
    f = os.path.join(H.TMP, "not-a-dir")
    open(f, "w").close()
    d = daemon(env=clean_env(f))
    try:
        st, _, body, _ = bloom(d, H.png_bytes(H.rand8(40, 40)))
        H.check("no cache directory: requests still answered", st == 200, (st, body[:200]))
        log = d.log()
        H.check("no cache directory: one warning", log.count("no cache directory") == 1, log[-2000:])
        g = info_gpu(d)
        H.check("no cache directory: no wisdom file", not g.get("fft_wisdom", "").startswith("file"), g)
    finally:
        d.stop("unwritable cache directory")
    home = os.path.join(H.TMP, "home-none")
    os.makedirs(home)
    d = daemon("--program-cache", "none", "--fft-wisdom", "none", env=clean_env(home))
    try:
        st, _, body, _ = bloom(d, H.png_bytes(H.rand8(40, 40)))
        H.check("none: answered", st == 200, (st, body[:200]))
        H.check("none: nothing written to HOME", not os.path.exists(os.path.join(home, ".cache")),
                os.listdir(home))
        g = info_gpu(d)
        # a GPU with wisdom shipped for its renderer uses that too (no file either way)
        H.check("none: wisdom from the built-in rules (and what ships for this GPU)",
                g.get("fft_wisdom") == "built-in rules" or
                re.fullmatch(r"shipped for .* \+ built-in rules", g.get("fft_wisdom", "")), g)
    finally:
        d.stop("none")


def same_answer(name, got, ref, tol=TOL, abs_tol=1e-4):
    """rel L2 within tol and max abs within abs_tol times the reference's largest value (two
    float32 runs of O(1) values: each a few 1e-5 off at worst); NaN fails both."""
    H.close_enough(name, got, ref, tol)
    if got is not None and got.shape == ref.shape:
        mx = float(np.abs(got - ref).max())
        lim = abs_tol * max(1.0, float(np.abs(ref).max()))
        H.check(name + ": max abs", mx <= lim, "max_abs %g (tol %g)" % (mx, lim))


def test_borrowed_plans(extra=()):
    q = "/v1/convolve?kernel_preset=gaussian:sigma=3&method=fft&format=pfm"
    sizes = {"smaller": (70, 100), "larger": (200, 300)}  # (h, w), after a 120x160 warm-up
    imgs = {n: H.png_bytes(H.rand8(*hw)) for n, hw in sizes.items()}
    d = daemon("--program-cache", "none", "--fft-wisdom", "none", *NO_SPARE, *extra)
    try:
        st, h, _ = d.req("POST", q, body=H.png_bytes(H.rand8(120, 160)))
        H.check("warm-up size answered on its own plan", st == 200 and "x-borrowed-plan" not in h,
                (st, h))
        progs = info_gpu(d).get("programs", {}).get("misses")
        first = {}
        for n, png in imgs.items():
            st, h, body = d.req("POST", q, body=png)
            print("     %s new size: X-Borrowed-Plan %s, X-Tiles %s, Server-Timing %s" % (
                n, h.get("x-borrowed-plan"), h.get("x-tiles"), H.timings(h)))
            H.check("%s new size answered on a borrowed plan (X-Borrowed-Plan)" % n,
                    st == 200 and "x" in h.get("x-borrowed-plan", ""), (st, h, body[:200]))
            H.check("%s new size: tiled only when larger" % n,
                    ("x-tiles" in h) == (n == "larger"), h)
            first[n] = H.read_pfm(body) if st == 200 else None
        g = info_gpu(d)
        H.check("no program compiled for the new sizes' answers",
                g.get("programs", {}).get("misses") == progs, (progs, g.get("programs")))
        deadline = time.time() + 120
        while time.time() < deadline and (g.get("caches", {}).get("plans_built_idle", 0) < 2
                                           or g.get("caches", {}).get("plans_wanted", 1) > 0):
            time.sleep(0.3)
            g = info_gpu(d)
        c = g.get("caches", {})
        print("     after idle: %s plans borrowed, %s built in idle time, %s wanted" % (
            c.get("plans_borrowed"), c.get("plans_built_idle"), c.get("plans_wanted")))
        H.check("/v1/info: two frames borrowed, their two plans built in idle time, none held "
                "back (room in --max-plans)",
                c.get("plans_borrowed") == 2 and c.get("plans_built_idle") == 2
                and c.get("plans_wanted") == 0 and c.get("plans_held_back") == 0, c)
        H.check("/v1/info uploads.staging_bytes: the float frames came in through the mapped "
                "buffer, kept at the largest frame staged (the 120x160 warm-up's RGBA at least)",
                g.get("uploads", {}).get("staging_bytes", 0) >= 120 * 160 * 16, g.get("uploads"))
        H.check("/metrics: fftbloom_plans_borrowed_total, fftbloom_plans_built_idle_total and "
                "fftbloom_plans_held_back_total",
                d.metric("fftbloom_plans_borrowed_total") == 2
                and d.metric("fftbloom_plans_built_idle_total") == 2
                and d.metric("fftbloom_plans_held_back_total") == 0)
        H.check("idle builds logged", d.log().count("built in idle time") == 2, d.log()[-2000:])
        steps = [int(m) for m in re.findall(r"built in idle time \((\d+) steps", d.log())]
        H.check("each idle build took a step a program (several steps), so a request waits for "
                "one compile at most", len(steps) == 2 and min(steps) > 1, steps)
        for n, png in imgs.items():
            st, h, body = d.req("POST", q, body=png)
            H.check("%s size again: on its own plan (no X-Borrowed-Plan, no X-Tiles)" % n,
                    st == 200 and "x-borrowed-plan" not in h and "x-tiles" not in h, (st, h))
            if st == 200 and first[n] is not None:
                same_answer("%s size: borrowed answer vs its own plan's" % n, first[n],
                            H.read_pfm(body).astype(np.float64))
        if "--compile-thread" in extra:
            n = d.log().count("on the compile thread")
            H.check("--compile-thread on: the idle builds' programs compiled on the compile "
                    "thread (%d)" % n, n > 2 and "no compile thread" not in d.log(),
                    d.log()[-2000:])
    finally:
        d.stop("borrowed plans daemon" + (" (compile thread)" if extra else ""))
    if extra:
        return
    d = daemon("--program-cache", "none", "--fft-wisdom", "none", "--borrow-plans=false")
    try:
        d.req("POST", q, body=H.png_bytes(H.rand8(120, 160)))
        st, h, _ = d.req("POST", q, body=imgs["smaller"])
        c = info_gpu(d).get("caches", {})
        H.check("--borrow-plans=false: a new size runs on its own plan at once",
                st == 200 and "x-borrowed-plan" not in h and c.get("plans_borrowed") == 0
                and c.get("plan_entries") == 2, (st, h, c))
    finally:
        d.stop("no borrowing daemon")


class Load:
    """n clients POSTing body to q on d until stop(); each answer's (time, status) in done."""

    def __init__(self, d, q, body, n=3):
        self.stopped = False
        self.done = []

        def client():
            while not self.stopped:
                try:
                    st, _, _ = d.req("POST", q, body=body)
                except Exception:  # noqa
                    st = None
                self.done.append((time.time(), st))
        self.ts = [threading.Thread(target=client) for _ in range(n)]
        for t in self.ts:
            t.start()

    def gaps(self, t0, t1):
        """The gaps between answers that came from t0 to t1."""
        return [b[0] - a[0] for a, b in zip(self.done, self.done[1:]) if t0 <= a[0] <= t1]

    def stop(self):
        self.stopped = True
        for t in self.ts:
            t.join()


def test_wanted_plan_under_load():
    # a new size arriving while other frames keep the GPU thread busy (never 0.5 s idle) still
    # gets its own plan, a program a second between the jobs, while the load goes on
    q = "/v1/convolve?kernel_preset=gaussian:sigma=3&method=fft&format=pfm"
    d = daemon("--program-cache", "none", "--fft-wisdom", "none", "--fft-idle-tune", "off",
               "--max-per-ip", "100", *NO_SPARE)
    ld = None
    try:
        load = H.png_bytes(H.rand8(120, 160))
        st, h, _ = d.req("POST", q, body=load)
        H.check("warm-up size on its own plan", st == 200 and "x-borrowed-plan" not in h, st)
        ld = Load(d, q, load)
        time.sleep(1)
        new = H.png_bytes(H.rand8(70, 100))
        st, h, _ = d.req("POST", q, body=new)
        H.check("the new size under load runs on a borrowed plan", st == 200 and
                "x-borrowed-plan" in h, (st, h))
        t0 = time.time()
        c = {}
        while time.time() < t0 + 120:
            c = info_gpu(d).get("caches", {})
            if c.get("plans_built_idle", 0) >= 1:
                break
            time.sleep(0.5)
        t_built = time.time()
        n_during = sum(1 for t, s in ld.done if t0 <= t <= t_built)
        gaps = ld.gaps(t0, t_built)
        print("     own plan built %.1f s after the new size, under load: %d answers meanwhile, "
              "longest gap between answers %.2f s" % (t_built - t0, n_during, max(gaps or [0])))
        H.check("its own plan built while the load went on (no 0.5 s without an answer)",
                c.get("plans_built_idle") == 1 and c.get("plans_wanted") == 0 and n_during > 0
                and max(gaps or [9]) < 0.5, (c, n_during, max(gaps or [9])))
        st, h, _ = d.req("POST", q, body=new)
        H.check("the new size then on its own plan", st == 200 and "x-borrowed-plan" not in h,
                (st, h))
        # a size whose frame borrows a plan whole at little cost (padded 128x168 on the load's
        # 140x180, 1.17x the area: BLOOM_BORROW_WHOLE_COST 1.5) waits for idle time: nothing is
        # compiled for it while the load goes on
        near = H.png_bytes(H.rand8(110, 150))
        st, h, _ = d.req("POST", q, body=near)
        H.check("a near size under load runs on a borrowed plan, whole",
                st == 200 and "x-borrowed-plan" in h and "x-tiles" not in h, (st, h))
        misses = info_gpu(d).get("programs", {}).get("misses")
        time.sleep(3)
        g = info_gpu(d)
        c = g.get("caches", {})
        print("     near size under load, 3 s later: %s wanted, %s urgent, %s built in idle time, "
              "program misses %s -> %s" % (c.get("plans_wanted"), c.get("plans_urgent"),
                                          c.get("plans_built_idle"),
                                          misses, g.get("programs", {}).get("misses")))
        H.check("its plan waits for idle time under load (wanted, not urgent, no compile)",
                c.get("plans_wanted") == 1 and c.get("plans_urgent") == 0
                and c.get("plans_built_idle") == 1
                and g.get("programs", {}).get("misses") == misses, (c, g.get("programs")))
        ld.stop()
        H.check("every load request answered 200", all(s == 200 for _, s in ld.done),
                [s for _, s in ld.done if s != 200][:5])
        deadline = time.time() + 120
        while time.time() < deadline and (c.get("plans_built_idle", 0) < 2
                                           or c.get("plans_wanted", 1) > 0):
            time.sleep(0.3)
            c = info_gpu(d).get("caches", {})
        H.check("once the load stops, the near size's plan is built in idle time",
                c.get("plans_built_idle") == 2 and c.get("plans_wanted") == 0, c)
        st, h, _ = d.req("POST", q, body=near)
        H.check("the near size then on its own plan", st == 200 and "x-borrowed-plan" not in h,
                (st, h))
    finally:
        if ld:
            ld.stop()
        d.stop("load daemon")


def test_plan_load_wait():
    # --plan-load-wait: once a load has gone on that long without a 0.5 s pause, a size that
    # borrowed a plan whole at little cost gets its own plan between the load's jobs
    q = "/v1/convolve?kernel_preset=gaussian:sigma=3&method=fft&format=pfm"
    d = daemon("--program-cache", "none", "--fft-wisdom", "none", "--fft-idle-tune", "off",
               "--max-per-ip", "100", "--plan-load-wait", "2", *NO_SPARE)
    ld = None
    try:
        load = H.png_bytes(H.rand8(120, 160))
        st, _, _ = d.req("POST", q, body=load)
        H.check("warm-up size answered", st == 200, st)
        ld = Load(d, q, load)
        near = H.png_bytes(H.rand8(110, 150))  # padded 1.17x under the load's plan
        st, h, _ = d.req("POST", q, body=near)
        t0 = time.time()
        H.check("the near size runs on a borrowed plan, whole",
                st == 200 and "x-borrowed-plan" in h and "x-tiles" not in h, (st, h))
        c = {}
        while time.time() < t0 + 120:
            c = info_gpu(d).get("caches", {})
            if c.get("plans_built_idle", 0) >= 1:
                break
            time.sleep(0.2)
        t_built = time.time()
        gaps = ld.gaps(t0, t_built)
        print("     near size's plan built %.1f s after it came, the load going on (longest gap "
              "between answers %.2f s)" % (t_built - t0, max(gaps or [0])))
        H.check("its plan built between the load's jobs once the load had gone on 2 s",
                c.get("plans_built_idle") == 1 and c.get("plans_wanted") == 0
                and max(gaps or [9]) < 0.5 and t_built - t0 > 1.0, (c, max(gaps or [9])))
        st, h, _ = d.req("POST", q, body=near)
        H.check("the near size then on its own plan", st == 200 and "x-borrowed-plan" not in h,
                (st, h))
        ld.stop()
        H.check("every load request answered 200", all(s == 200 for _, s in ld.done),
                [s for _, s in ld.done if s != 200][:5])
    finally:
        if ld:
            ld.stop()
        d.stop("plan-load-wait daemon")


def test_spare_plans():
    # --spare-plans: plans built in idle time after start, before any frame, that the first
    # frame of a new size borrows at once; auto builds none on a software renderer; a bad list
    # stops the start
    q = "/v1/convolve?kernel_preset=gaussian:sigma=3&method=fft&format=pfm"
    d = daemon("--program-cache", "none", "--fft-wisdom", "none", "--fft-idle-tune", "off",
               "--spare-plans", "300x200,64x48")
    try:
        deadline = time.time() + 120
        c = info_gpu(d).get("caches", {})
        while time.time() < deadline and (c.get("plans_built_idle", 0) < 2
                                           or c.get("plans_wanted", 1) > 0):
            time.sleep(0.3)
            c = info_gpu(d).get("caches", {})
        H.check("/v1/info: the two spare plans built in idle time, none wanted",
                c.get("plans_built_idle") == 2 and c.get("plans_wanted") == 0
                and c.get("plan_entries") == 2, c)
        H.check("spare plans logged", "spare plans queued" in d.log()
                and "300x200, 64x48" in d.log(), d.log()[-2000:])
        png = H.png_bytes(H.rand8(180, 250))
        st, h, body = d.req("POST", q, body=png)
        print("     first frame of 250x180: X-Borrowed-Plan %s, Server-Timing %s" % (
            h.get("x-borrowed-plan"), H.timings(h)))
        H.check("the first frame of a new size borrows a spare plan whole",
                st == 200 and "x" in h.get("x-borrowed-plan", "") and "x-tiles" not in h,
                (st, h, body[:200]))
        first = H.read_pfm(body) if st == 200 else None
        deadline = time.time() + 120
        while time.time() < deadline and info_gpu(d).get("caches", {}).get("plans_wanted", 1):
            time.sleep(0.3)
        st, h, body = d.req("POST", q, body=png)
        H.check("the same size again: its own plan", st == 200 and "x-borrowed-plan" not in h,
                (st, h))
        if st == 200 and first is not None:
            same_answer("250x180: answer on the spare plan vs its own plan's", first,
                        H.read_pfm(body).astype(np.float64))
    finally:
        d.stop("spare plans daemon")
    d = daemon("--program-cache", "none", "--fft-wisdom", "none", "--fft-idle-tune", "off")
    try:
        time.sleep(1.5)
        g = info_gpu(d)
        c = g.get("caches", {})
        H.check("--spare-plans auto on a software renderer: none queued or built",
                not g.get("software_renderer") or (c.get("plans_wanted") == 0
                                                   and c.get("plans_built_idle") == 0), (g, c))
    finally:
        d.stop("auto spare plans daemon")
    # skipped, logged, never a failed start: a plan past --gpu-frame-memory (300x200 with the
    # default 255-pixel kernel takes about 20 MB, 64x48 8 MB), one with no room left in
    # --max-plans, and every one with --borrow-plans off
    for args, want_built, want_log in (
            (("--gpu-frame-memory", "10M", "--spare-plans", "300x200,64x48"), 1,
             "spare plans skipped: 300x200 (past --max-side or the frame memory)"),
            (("--max-plans", "1", "--spare-plans", "64x48,80x60"), 1,
             "spare plans skipped: 80x60 (no room in --max-plans)"),
            (("--borrow-plans=false", "--spare-plans", "64x48"), 0,
             "--spare-plans ignored: --borrow-plans is off")):
        d = daemon("--program-cache", "none", "--fft-wisdom", "none", "--fft-idle-tune", "off",
                   *args)
        try:
            deadline = time.time() + 120
            c = info_gpu(d).get("caches", {})
            while time.time() < deadline and c.get("plans_built_idle", 0) < want_built:
                time.sleep(0.3)
                c = info_gpu(d).get("caches", {})
            time.sleep(0.5)
            c = info_gpu(d).get("caches", {})
            st, _, _ = d.req("GET", "/readyz")
            H.check("%s: ready, %d spare plan built, the rest logged" % (" ".join(args), want_built),
                    st == 200 and c.get("plans_built_idle") == want_built
                    and want_log in d.log(), (st, c, d.log()[-1500:]))
        finally:
            d.stop("spare plans " + args[0])
    for bad, what in (("12x", "is not WxH"), ("70000x10", "outside"),
                      (",".join(["8x8"] * 9), "more than 8 sizes")):
        r = subprocess.run([H.DAEMON, "--spare-plans", bad, "--port", "0"], capture_output=True,
                           text=True, timeout=60)
        H.check("--spare-plans %.20s: refused at start, naming the option and why" % bad,
                r.returncode != 0 and "spare-plans: " in r.stderr and what in r.stderr,
                (r.returncode, r.stderr[-500:]))


def test_driver_cache():
    # the GL driver's shader disk cache goes to driver/ in the cache directory unless the
    # environment names the driver's folder; --driver-cache names one over it, none leaves it
    home = os.path.join(H.TMP, "home-driver")
    os.makedirs(home)
    folder = os.path.join(home, ".cache", "fftbloom", "driver")
    q = "/v1/convolve?kernel_preset=gaussian:sigma=2&method=fft&format=pfm"
    png = H.png_bytes(H.rand8(40, 56))
    env = clean_env(home)
    env.update({"MESA_SHADER_CACHE_DIR": "", "__GL_SHADER_DISK_CACHE_PATH": ""})
    d = daemon("--log-level", "debug", env=env)
    try:
        st, _, _ = d.req("POST", q, body=png)
        H.check("a request answered", st == 200, st)
        log = d.log()
        H.check("auto: both drivers' variables point at driver/ in the cache directory",
                "__GL_SHADER_DISK_CACHE_PATH=%s\n" % folder in log
                and "MESA_SHADER_CACHE_DIR=%s\n" % folder in log, log[-1500:])
        H.check("driver/ made 0700", os.path.isdir(folder)
                and stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder)
        deadline = time.time() + 20
        files = []
        while time.time() < deadline and not files:
            files = [f for _, _, fs in os.walk(folder) for f in fs]
            time.sleep(0.2)
        print("     driver/ holds %d files after one request" % len(files))
        H.check("the driver wrote its cache there", len(files) > 0, folder)
    finally:
        d.stop("driver cache daemon")
    own = os.path.join(H.TMP, "drivers-own")
    named = os.path.join(H.TMP, "driver-named")
    env2 = clean_env(home)
    env2.update({"MESA_SHADER_CACHE_DIR": own, "__GL_SHADER_DISK_CACHE_PATH": own})
    for args, want, what in ((("--log-level", "debug"), own, "auto keeps the environment's folder"),
                             (("--log-level", "debug", "--driver-cache", named), named,
                              "a folder named over the environment's"),
                             (("--log-level", "debug", "--driver-cache", "none"), None,
                              "none leaves the driver alone"),
                             (("--log-level", "debug", "--program-cache", "none"), None,
                              "auto with no program cache leaves the driver alone")):
        d = daemon(*args, env=env2)
        try:
            st, _, _ = d.req("POST", q, body=png)
            log = d.log()
            if want:
                ok = ("MESA_SHADER_CACHE_DIR=%s" % want in log
                      and "__GL_SHADER_DISK_CACHE_PATH=%s" % want in log)
            else:
                ok = "GL driver's shader cache" not in log
            H.check("--driver-cache: " + what, st == 200 and ok, log[-1500:])
        finally:
            d.stop("driver cache daemon (%s)" % what)


def test_borrowed_plans_compile_thread():
    # the same with idle work's compiles on a thread of their own (auto leaves it off on a
    # software renderer): the plans come the same way, their programs from that thread
    test_borrowed_plans(("--compile-thread", "on", "--log-level", "debug"))


def main():
    H.run_script((test_cache_dir_and_idle_measuring, test_unwritable_and_none, test_driver_cache,
                  test_borrowed_plans, test_borrowed_plans_compile_thread,
                  test_wanted_plan_under_load, test_plan_load_wait, test_spare_plans))


if __name__ == "__main__":
    main()

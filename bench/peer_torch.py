#!/usr/bin/env python3
"""Peers for `fftbloom bench` on the GPU machine, measured in the same run: PyTorch/cuFFT
torch.fft.fft2 (complex64) at the FFT sizes; the bloom as cuFFT does it (4-channel float32
rfft2, times a cached kernel spectrum, irfft2) at fftbloom's padded sizes and at the plain frame
sizes; and the device's copy bandwidth (a large device-to-device copy, bytes read + written).
Median of CUDA-event timings after warm-up, three input sets rotated. JSON lines on stdout.

usage: peer_torch.py [HxW ...] [--from BENCH.jsonl]: the padded bloom sizes to measure, given as
HxW or read from the "padded" (WxH) of the bloom lines of fftbloom bench's output."""
import json
import sys

import torch


def timed(fn, inputs, runs=50, warmup=5):
    for i in range(warmup):
        fn(inputs[i % len(inputs)])
    torch.cuda.synchronize()
    times = []
    for i in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(inputs[i % len(inputs)])
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def main():
    dev = torch.device("cuda")
    print(json.dumps({"workload": "device", "peer": "torch", "torch": torch.__version__,
                      "gpu": torch.cuda.get_device_name(), "cuda": torch.version.cuda}))
    # copy bandwidth
    n = 1 << 28  # 1 GiB of float32
    src = torch.rand(n, device=dev)
    dst = torch.empty_like(src)
    ms = timed(lambda s: dst.copy_(s), [src], runs=20)
    print(json.dumps({"workload": "copy", "peer": "torch", "bytes": 2 * 4 * n, "ms": ms,
                      "gb_per_s": 2 * 4 * n / ms / 1e6}))
    del src, dst
    for h, w in [(1024, 1024), (1080, 1920), (2048, 2048), (4096, 4096), (1350, 2187)]:
        xs = [torch.randn(h, w, dtype=torch.complex64, device=dev) for _ in range(3)]
        ms = timed(lambda x: torch.fft.fft2(x), xs)
        print(json.dumps({"workload": "fft", "peer": "cufft", "size": f"{h}x{w}", "forward_ms": ms}))
    # bloom: rfft2 * K, irfft2, 4 channels, K cached; sizes are H x W
    sizes = [(1080, 1920, "1080p frame"), (2160, 3840, "2160p frame")]
    padded, args = [], sys.argv[1:]
    while args:
        arg = args.pop(0)
        if arg == "--from":
            for line in open(args.pop(0)):
                d = json.loads(line)
                if d.get("workload") == "bloom":
                    w, h = (int(v) for v in d["padded"].split("x"))
                    padded.append((h, w))
        else:
            padded.append(tuple(int(v) for v in arg.split("x")))
    for h, w in sorted(set(padded)):
        sizes.append((h, w, "padded"))
    for h, w, label in sizes:
        imgs = [torch.rand(4, h, w, device=dev) for _ in range(3)]
        k = torch.fft.rfft2(torch.rand(4, h, w, device=dev))
        ms = timed(lambda x: torch.fft.irfft2(torch.fft.rfft2(x) * k, s=(h, w)), imgs)
        print(json.dumps({"workload": "bloom", "peer": "cufft", "label": label, "size": f"{h}x{w}",
                          "ms": ms}))


if __name__ == "__main__":
    main()

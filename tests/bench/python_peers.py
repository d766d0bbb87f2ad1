#!/usr/bin/env python3
"""Worker of tests/bench/bench.py that runs the Python BM3D packages: the
authors' CPU reference `bm3d` and, on a CUDA GPU, `bm3d-cupy` and
`bm3d-triton` (all from PyPI, installed by the benchmark only).

It reads one request a line on stdin, a JSON object
  {"method": "bm3d" | "bm3d-cupy" | "bm3d-triton", "input": raw file,
   "output": raw file or null, "width": W, "height": H, "channels": 1 | 3,
   "frames": N, "sigma": strength in 8-bit units, "repeat": R}
denoises the N frames of 8-bit samples (gray, or packed RGB), writes them
rounded to 8 bits, then denoises the first frame R more times, and answers
one line
  {"ms": [milliseconds of each of the N + R runs], "peak_mb": MB or null}
Each run's time is a wall clock time from the 8-bit frame in host memory to
the 8-bit result in host memory, the GPU synchronised. The first run of a
process includes the GPU packages' compilation: bench.py leaves it out.
An error is answered {"error": "..."}; the worker goes on.
"""

import json
import sys
import time

import numpy as np


def bm3d_reference():
    import bm3d

    def run(frame, sigma):
        if frame.ndim == 3:
            return bm3d.bm3d_rgb(frame, sigma)
        return bm3d.bm3d(frame, sigma)
    return run, lambda: None


def bm3d_cupy():
    import cupy as cp
    from bm3d_cupy import bm3d_gpu
    peak = [0]

    def run(frame, sigma):
        z = cp.asarray(frame, dtype=cp.float32) / 255.0
        out = cp.asnumpy(bm3d_gpu(z, sigma / 255.0)) * 255.0
        cp.cuda.Device().synchronize()
        peak[0] = max(peak[0], cp.get_default_memory_pool().total_bytes())
        return out
    return run, lambda: peak[0]


def bm3d_triton():
    import torch
    from bm3d_triton import denoise

    def run(frame, sigma):
        t = torch.from_numpy(np.ascontiguousarray(frame)).cuda().float() / 255.0
        t = t[None, None] if t.ndim == 2 else t.permute(2, 0, 1)[None]
        out = denoise(t, sigma=sigma / 255.0, two_step=True)[0]
        out = out[0] if frame.ndim == 2 else out.permute(1, 2, 0)
        out = (out * 255.0).cpu().numpy()
        torch.cuda.synchronize()
        return out
    return run, lambda: torch.cuda.max_memory_allocated()


LOADERS = {"bm3d": bm3d_reference, "bm3d-cupy": bm3d_cupy, "bm3d-triton": bm3d_triton}


def serve(req, methods):
    if req["method"] not in methods:
        methods[req["method"]] = LOADERS[req["method"]]()
    run, peak = methods[req["method"]]
    w, h, c, n = req["width"], req["height"], req["channels"], req["frames"]
    shape = (h, w) if c == 1 else (h, w, c)
    data = np.fromfile(req["input"], dtype=np.uint8)
    frames = data[:n * w * h * c].reshape((n,) + shape).astype(np.float32)
    times, outs = [], []
    for i in range(n + req.get("repeat", 0)):
        t0 = time.perf_counter()
        out = run(frames[i if i < n else 0], float(req["sigma"]))
        out = np.clip(np.rint(out), 0, 255).astype(np.uint8)
        times.append((time.perf_counter() - t0) * 1000.0)
        if i < n:
            outs.append(out)
    if req.get("output"):
        np.stack(outs).tofile(req["output"])
    p = peak()
    return {"ms": times, "peak_mb": p / 1e6 if p is not None else None}


def main():
    methods = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = serve(json.loads(line), methods)
        except Exception as e:  # answered, so that the benchmark goes on
            answer = {"error": "%s: %s" % (type(e).__name__, e)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()

"""Threads and memory: several kernels from several threads at once give
the serial results, and a loop of compiles and runs does not grow."""
import concurrent.futures
import gc

import numpy as np

import bfsync

KERNELS = [("examples/matmul.bfk", {"M": 2, "N": 1, "K": 2}), ("examples/softmax.bfk", {"R": 3}),
           ("examples/rmsnorm.bfk", {"R": 2}), ("examples/layernorm.bfk", None)]


def _params(root, path, params):
    if params is not None:
        return params
    for line in (root / path).read_text().splitlines():  # the file's first `// params:` line
        if line.startswith("// params:"):
            return {n: int(v) for n, v in (w.split("=") for w in line.split(":", 1)[1].split())}
    return {}


def test_threads_on_different_kernels(root):
    jobs = [(path, _params(root, path, params), sync, exec_) for path, params in KERNELS
            for sync in ("barrier-free", "barrier") for exec_ in ("threads", "sim")]

    def one(job):
        path, params, sync, exec_ = job
        k = bfsync.compile_file(root / path)
        r = k.run(params=params, sync=sync, exec=exec_, seed=11)
        return r.ok, {n: a.copy() for n, a in r.outputs.items()}, r.waits

    serial = [one(j) for j in jobs]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(one, jobs * 2))
    for i, (ok, outputs, waits) in enumerate(parallel):
        s_ok, s_outputs, s_waits = serial[i % len(jobs)]
        assert ok and s_ok and waits == s_waits
        for name in outputs:
            np.testing.assert_array_equal(outputs[name], s_outputs[name])


def test_threads_share_one_kernel(root):
    k = bfsync.compile_file(root / "examples/matmul.bfk")
    want = k.run(M=2, N=2, K=2).outputs["C"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda s: k.run(M=2, N=2, K=2, sync=s), ["barrier-free", "barrier"] * 4))
    for r in results:
        assert r.ok
        np.testing.assert_array_equal(r.outputs["C"], want)


def _rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def test_a_thousand_compiles_do_not_grow(root):
    text = (root / "examples/flash_attention.bfk").read_text()
    bad = text.replace("kernel", "kernal", 1)
    for _ in range(100):  # warm up the allocator
        bfsync.compile(text)
    gc.collect()
    before = _rss_kb()
    for i in range(1000):
        k = bfsync.compile(text)
        del k
        try:
            bfsync.compile(bad)
        except bfsync.KernelError:
            pass
    gc.collect()
    grown = _rss_kb() - before
    assert grown < 8 * 1024, "RSS grew by %d KiB over 1000 compiles" % grown


def test_runs_do_not_grow(root):
    k = bfsync.compile_file(root / "examples/matmul.bfk")
    for _ in range(20):
        k.run(M=1, N=1, K=1)
    gc.collect()
    before = _rss_kb()
    for _ in range(200):
        k.run(M=1, N=1, K=1)
        try:
            k.run(M=1, N=1)
        except bfsync.UsageError:
            pass
    gc.collect()
    grown = _rss_kb() - before
    assert grown < 8 * 1024, "RSS grew by %d KiB over 200 runs" % grown

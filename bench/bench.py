#!/usr/bin/env python3
"""bench.py: the benchmark suite behind `make bench`.

bfsync's claim is that exact, barrier-free synchronization beats a barrier
at every loop-iteration boundary, and comes close to the limit no scheme
can beat (the ideal: the same streams, exact dependences, zero sync cost).
This script measures that claim reproducibly and writes it down:

  1. Per kernel (the examples at their `// bench:` sizes, plus the
     sync-bound kernels of bench/kernels/), on the deterministic cycle
     simulator with the given target: cycles for barrier, barrier-free and
     the ideal; reduction (1 - bf/barrier), speedup (barrier/bf), bf/ideal;
     waits executed, redundant waits and bookkeeping operations executed
     (the last two from the oracle, `bfsync verify --json`).
  2. Sensitivity: the same with every synchronization cost of the target
     (semaphore latency, wait, bookkeeping and barrier cost) zeroed, halved
     and doubled, in modified copies of the target file; at zero cost
     barrier-free must equal the ideal unless a wait is later than needed.
  3. Why barrier-free is above the ideal: its cycles with each cost zeroed
     in turn, and the cycles saved by dropping, one at a time, each wait
     the oracle proves redundant (the test-only --mutate=drop:K, used as a
     measuring tool; results are still compared).
  4. What a second DMA queue changes: the ML kernels with their stores
     moved to `dma1`, on the target plus `dma1 = dma`. One in-order queue
     carrying both loads and stores serializes iterations whatever the
     synchronization, which caps what any scheme can gain.
  5. One SVG timeline per kernel from the simulator's traces
     (`bfsync timeline`).
  6. Compile side: bfsync compile (parse + transform + emit) and tcc on the
     emitted C, for generated kernels and plain straight-line kernels of
     1k, 10k and 100k instructions, in both sync modes: CPU seconds (median
     of a few runs) with the growth per 10x, bytes of C per instruction and
     peak memory per instruction, against issue 9's goals.
     --compile-only (`make bench-compile`) measures only this and keeps
     the other sections of results.json; --resources-only (`make
     bench-resources`) likewise for the resources table (issue 12), which
     then names the commit it was measured at.
  7. Threads executor: wall-clock barrier / barrier-free, measured in the
     same `bfsync run --sync=both` process, median over repeats; and the
     uncontended-wait and wake-up costs from bench/wait_cost.c.

Everything is a subprocess call of the bfsync binary under test, so the
figures are what a user gets from the command line. Simulator runs go two
at a time (their cycles do not depend on the host); timed runs go alone.
Outputs: results.json (every figure), results.md (the tables, with the
exact commands, the target and the date) and svg/<kernel>.svg.

usage: bench.py --bfsync PATH --target FILE --out DIR --rusage BIN [--wait-cost BIN]
                [--repeat N] [--threads-repeat N] [--quick] [--compile-only] [--resources-only]
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ML_KERNELS = ("matmul", "softmax", "layernorm", "attention", "mlp", "conv", "residual")
SYNC_KERNELS = ("pingpong", "chain", "deepnest")
SYNC_COST_KEYS = ("sem_latency", "wait_cost", "bookkeep_cost", "barrier_cost")
SENSITIVITY_FACTORS = (0.0, 0.5, 2.0)  # 0: no sync cost at all, to tell cost from lost overlap
GAP_KEYS = ("sem_latency", "wait_cost", "bookkeep_cost")  # what barrier-free pays; barriers it has none
SIM_JOBS = 2  # simulator runs in parallel: their cycles do not depend on the host
GEN_SIZES = (1000, 10000, 100000)
GEN_SEED = 1
TARGETS = {"bf_over_ideal_max": 1.05, "bf_over_ideal_median": 1.02, "ml_reduction_min": 0.10,
           "sync_speedup_min": 3.3,
           # issue 9: compile + tcc of 100,000 barrier-free instructions in 1 s of CPU, at most 11x per
           # 10x instructions (both sync modes), 250 bytes of C per instruction on generated kernels,
           # 1 KB of peak memory per instruction (from 10,000 instructions up: below, the fixed
           # cost of the process dominates)
           "compile_cpu_100k_max": 1.0, "compile_growth_max": 11.0, "c_bytes_per_instr_max": 250.0,
           "peak_bytes_per_instr_max": 1024.0}


def run(cmd, **kw):
    """Run cmd; return stdout, raising with its stderr on failure."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    return p.stdout


def json_lines(text):
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")]


def bench_params(path):
    """The NAME=VALUE pairs of the kernel's `// bench:` line."""
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*//\s*bench:\s*(.*)", line)
            if m:
                return m.group(1).split()
    raise RuntimeError("%s has no // bench: line" % path)


def param_args(params):
    args = []
    for kv in params:
        args += ["-p", kv]
    return args


def kernel_list(root):
    """(name, path, class) for every benchmark kernel."""
    kernels = [(n, os.path.join(root, "examples", n + ".bfk"), "ml") for n in ML_KERNELS]
    kernels += [(n, os.path.join(root, "examples", n + ".bfk"), "sync") for n in SYNC_KERNELS]
    extra = os.path.join(root, "bench", "kernels")
    for f in sorted(os.listdir(extra)) if os.path.isdir(extra) else []:
        if f.endswith(".bfk"):
            kernels.append((f[:-4], os.path.join(extra, f), "sync"))
    return kernels


# ---- the simulator side

def sim_runs(bfsync, path, params, target, sync, trace=None, extra=()):
    """The JSON objects of one `bfsync run --exec=sim` (one per sync mode)."""
    cmd = [bfsync, "run", path] + param_args(params) + ["--exec=sim", "--target", target,
                                                        "--sync=" + sync, "--json"] + list(extra)
    if trace:
        cmd += ["--trace", trace]
    return {o["sync"]: o for o in json_lines(run(cmd))}


def oracle_counts(bfsync, path, params, sync):
    out = run([bfsync, "verify", path] + param_args(params) + ["--sync=" + sync, "--schedules", "1", "--json"])
    return json_lines(out)[-1]


def ratios(barrier, bf, ideal):
    """The figures of issue 5, and the headroom: the reduction the ideal would give."""
    return {"reduction": 1.0 - bf / barrier if barrier else None,
            "speedup": barrier / bf if bf else None,
            "bf_over_ideal": bf / ideal if ideal else None,
            "ideal_reduction": 1.0 - ideal / barrier if barrier and ideal else None}


def scaled_target(src, factor, dst, keys=SYNC_COST_KEYS):
    """Copy the target file with the synchronization costs named in keys times factor.

    Costs are integers of cycles; a scaled value is rounded to the nearest
    integer but, for a factor above zero, never below 1 when the original
    was positive, so halving a 1-cycle cost leaves it at 1."""
    key = re.compile(r"^(\s*)(%s)(\s*=\s*)([0-9.]+)(.*)$" % "|".join(keys))
    with open(src) as f, open(dst, "w") as g:
        g.write("# %s with the synchronization costs scaled by %g (bench/bench.py)\n" % (os.path.basename(src), factor))
        for line in f:
            m = key.match(line)
            if m:
                old = float(m.group(4))
                new = max(int(round(old * factor)), 1 if old > 0 and factor > 0 else 0)
                line = "%s%s%s%d%s\n" % (m.group(1), m.group(2), m.group(3), new, m.group(5))
            g.write(line)


def measure_kernel(bfsync, root, tmp, target, name, path, cls, svg_dir):
    params = bench_params(path)
    entry = {"kernel": name, "class": cls, "params": params,
             "source": os.path.relpath(path, root)}
    trace = os.path.join(tmp, "%s.json" % name)  # both modes, one process each
    objs = sim_runs(bfsync, path, params, target, "both", trace)
    b, f = objs["barrier"], objs["barrier-free"]
    entry["cycles"] = {"barrier": b["cycles"], "barrier_free": f["cycles"], "ideal": f["ideal_cycles"]}
    entry.update(ratios(b["cycles"], f["cycles"], f["ideal_cycles"]))
    entry["outputs_match"] = bool(b["outputs_match"] and f["outputs_match"])
    entry["engines"] = {"barrier": b.get("engines"), "barrier_free": f.get("engines")}
    verify = {s: oracle_counts(bfsync, path, params, s) for s in ("barrier", "barrier-free")}
    for key, src in (("waits", "waits"), ("redundant", "redundant"), ("bookkeeping", "bookkeeping"),
                     ("subsumed", "subsumed"), ("instructions", "instructions")):
        entry[key] = {"barrier": verify["barrier"].get(src), "barrier_free": verify["barrier-free"].get(src)}
    entry["redundant_wait_nodes"] = verify["barrier-free"].get("redundant_waits", [])
    entry["waits_executed_sim"] = {"barrier": b.get("waits_executed"), "barrier_free": f.get("waits_executed")}
    svg = os.path.join(svg_dir, name + ".svg")
    title = "%s (%s), %s: barrier %s vs barrier-free %s cycles, ideal %s" % (
        name, " ".join(params), os.path.basename(target), format(b["cycles"], ","),
        format(f["cycles"], ","), cyc(f["ideal_cycles"]))
    run([bfsync, "timeline", trace, "--cycles", "--target", target, "--title", title, "-o", svg])
    entry["svg"] = os.path.relpath(svg, os.path.dirname(svg_dir))
    return entry


def scaled_point(bfsync, target, path, params=None):
    o = sim_runs(bfsync, path, params or bench_params(path), target, "both")
    b, f, ideal = o["barrier"]["cycles"], o["barrier-free"]["cycles"], o["barrier-free"]["ideal_cycles"]
    return dict(cycles={"barrier": b, "barrier_free": f, "ideal": ideal}, **ratios(b, f, ideal))


def sensitivity(bfsync, tmp, target, kernels, pool):
    """Per factor and kernel: cycles, reduction and speedup with scaled sync costs."""
    result = {}
    for factor in SENSITIVITY_FACTORS:
        t = os.path.join(tmp, "sync-x%g.target" % factor)
        scaled_target(target, factor, t)
        points = pool.map(lambda k: scaled_point(bfsync, t, k[1]), kernels)
        result["%g" % factor] = dict(zip((k[0] for k in kernels), points))
    return result


def drop_savings(bfsync, target, entry, path):
    """Cycles saved by dropping each wait the oracle found redundant in every execution.

    This uses the test-only --mutate=drop:K switch as a measuring tool: the
    oracle has shown the wait implied by happens-before, so dropping it
    keeps the kernel correct (the run still compares its outputs)."""
    params, base = entry["params"], entry["cycles"]["barrier_free"]
    saved = {}
    for k in entry["redundant_wait_nodes"]:
        o = sim_runs(bfsync, path, params, target, "barrier-free", extra=["--mutate=drop:%d" % k])["barrier-free"]
        if not o["outputs_match"]:
            raise RuntimeError("%s: dropping redundant wait %d changed the results" % (entry["kernel"], k))
        saved[str(k)] = base - o["cycles"]
    return saved


def gap_point(bfsync, targets, path):
    """Barrier-free cycles with each synchronization cost zeroed in turn."""
    params = bench_params(path)
    return {key: sim_runs(bfsync, path, params, t, "barrier-free")["barrier-free"]["cycles"] for key, t in targets.items()}


def gap_attribution(bfsync, tmp, target, kernels, pool):
    """Per kernel: how much of barrier-free's gap to the ideal each sync cost accounts for."""
    targets = {}
    for key in GAP_KEYS:
        targets[key] = os.path.join(tmp, "no-%s.target" % key)
        scaled_target(target, 0.0, targets[key], (key,))
    points = pool.map(lambda k: gap_point(bfsync, targets, k[1]), kernels)
    return dict(zip((k[0] for k in kernels), points))


# ---- the paper's benchmark suite (issue 10)

# (kernel, file, the paper's barrier-free / barrier latency on one Trainium2
# NeuronCore). FlashAttention and the 3-loop tiled matmul are the examples.
PAPER = (
    ("AddManyLoop", "bench/paper/add_many_loop.bfk", 0.30),
    ("AdamW", "bench/paper/adamw.bfk", 0.74),
    ("RMSNorm", "bench/paper/rmsnorm.bfk", 0.57),
    ("FlashAttention", "examples/attention.bfk", 0.86),
    ("tiled_matmul (3 loops)", "examples/matmul.bfk", 0.90),
    ("tiled_matmul, K unrolled", "bench/paper/matmul_k_unrolled.bfk", 0.55),
    ("MoE (8 experts, top-2)", "bench/paper/moe.bfk", 0.88),
)


def target_value(target, key):
    """The largest value of key over the target's engine kinds (0 when unset)."""
    pattern = re.compile(r"^\s*%s\s*=\s*([0-9.]+)" % key)
    values = [float(m.group(1)) for m in map(pattern.match, open(target)) if m]
    return max(values) if values else 0.0


def wait_excess(trace_path, wait_cycles):
    """The waits of a barrier-free trace, grouped by the op they precede.
    ideal_sync charges one wait per instruction that must wait, so every wait
    of a group beyond one spends wait_cost it does not charge; the group's
    longest stands for the one it charges. Returns the totals (waits, ops
    they precede) and, per wait (the engine that waits, the source line, the
    counter waited on), how often it ran, how often beside a longer wait
    before the same op, and the cycles those executions spent: an upper
    bound on what each costs the makespan (only the critical path counts)."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    # the barrier-free process of a --sync=both trace (the only one otherwise)
    pids = [e["pid"] for e in events if e.get("name") == "process_name" and "barrier-free" in e["args"]["name"]]
    pid = pids[0] if pids else 1
    lanes = {e["tid"]: e["args"]["name"] for e in events
             if e.get("name") == "thread_name" and e["pid"] == pid}
    by_lane = {}
    for e in events:
        if e.get("ph") == "X" and e["pid"] == pid:
            by_lane.setdefault(e["tid"], []).append(e)
    groups, totals = {}, {"waits": 0, "ops": 0}
    for tid, evs in by_lane.items():
        evs.sort(key=lambda e: e["ts"])
        pending = []
        for e in evs + [None]:
            if e is not None and e["name"] == "wait":
                pending.append(e)
                continue
            if pending:
                totals["waits"] += len(pending)
                totals["ops"] += 1
                longest = max(pending, key=lambda w: w["dur"])
                for w in pending:
                    key = (lanes.get(tid, str(tid)), w["args"]["line"], w["args"]["engine"])
                    g = groups.setdefault(key, {"runs": 0, "beside": 0})
                    g["runs"] += 1
                    g["beside"] += w is not longest
            pending = []
    rows = [{"engine": engine, "line": line, "on": on, "runs": g["runs"], "beside": g["beside"],
             "excess": int(g["beside"] * wait_cycles)} for (engine, line, on), g in groups.items()]
    rows.sort(key=lambda r: -r["excess"])
    return totals, rows


def paper_suite(bfsync, root, tmp, target, pool):
    wait_cycles = target_value(target, "wait_cost")

    def one(entry):
        name, rel, paper = entry
        path = os.path.join(root, rel)
        params = bench_params(path)
        trace = os.path.join(tmp, "paper-%s.json" % re.sub(r"[^a-z0-9]+", "_", name.lower()))
        o = sim_runs(bfsync, path, params, target, "both", trace)
        b, f = o["barrier"], o["barrier-free"]
        counts = oracle_counts(bfsync, path, params, "barrier-free")
        late = counts["late_explained"]
        row = {"kernel": name, "path": rel, "params": params, "paper": paper,
               "barrier": b["cycles"], "barrier_free": f["cycles"], "ideal": f["ideal_cycles"],
               "ratio": f["cycles"] / b["cycles"], "bf_over_ideal": f["cycles"] / f["ideal_cycles"],
               "ideal_sync": f["ideal_sync_cycles"], "bf_over_ideal_sync": f["cycles"] / f["ideal_sync_cycles"],
               "match": b["outputs_match"] and f["outputs_match"], "late_explained": late}
        # the gap by cause: every sync cost at 0 leaves what is not synchronization
        zero = os.path.join(tmp, "paper-zero.target")
        free = sim_runs(bfsync, path, params, zero, "barrier-free")["barrier-free"]
        row["bf_over_ideal_at_zero_sync"] = free["cycles"] / free["ideal_cycles"]
        no_wait = sim_runs(bfsync, path, params, os.path.join(tmp, "paper-no-wait.target"), "barrier-free")["barrier-free"]
        row["bf_over_ideal_sync_no_wait_cost"] = no_wait["cycles"] / no_wait["ideal_sync_cycles"]
        totals, waits = wait_excess(trace, wait_cycles)
        row["waits"], row["waited_ops"], row["redundant"] = waits[:3], totals["ops"], counts["redundant"]
        row["waits_executed"] = totals["waits"]
        return row
    scaled_target(target, 0.0, os.path.join(tmp, "paper-zero.target"), SYNC_COST_KEYS + ("device_read",))
    scaled_target(target, 0.0, os.path.join(tmp, "paper-no-wait.target"), ("wait_cost",))
    return list(pool.map(one, PAPER))



# ---- the paper's table on a Trainium2 model (issue 23)

TRN2 = "targets/trn2.target"
# (kernel, file, the paper's loops and its barrier-free, manual and unrolled
# latency / barrier on one trn2 NeuronCore; None: not given)
PAPER_TABLE = (
    ("AddManyLoop", "bench/paper/add_many_loop.bfk", 1, 0.30, 0.22, 0.04),
    ("AdamW, 1M elements", "bench/paper/adamw.bfk", 1, 0.74, 0.76, 0.76),
    ("RMSNorm, 32768 x 8192", "bench/paper/rmsnorm.bfk", 1, 0.57, 0.56, 0.56),
    ("FlashAttention, sequence 8192", "bench/paper/flash_attention.bfk", 2, 0.86, 0.88, 0.70),
    ("tiled_matmul, 2048^3", "bench/paper/tiled_matmul.bfk", 3, 0.90, 0.71, 0.39),
    ("tiled_matmul, K unrolled", "bench/paper/matmul_k_unrolled.bfk", 2, 0.55, 0.61, 0.55),
    ("MoE, 2048 tokens, 8 experts, top-2", "bench/paper/moe.bfk", 1, 0.88, 0.79, None),
)
# MoE's expert token counts in tiles of 128 (--input C): 4096 routed rows
# (2048 tokens, top-2) in a skewed routing; assumed, the paper gives none.
MOE_COUNTS = (6, 2, 5, 3, 4, 4, 7, 1)
TABLE_MODES = ("barrier", "paper", "barrier-free", "unrolled")
# the sequencer's synchronization costs set to 0 (comma: together), to see what each costs barrier-free
SEQUENCER_FREE = ("bookkeep_cost", "wait_cost", "bookkeep_cost,wait_cost")


def paper_params(path):
    """The NAME=VALUE pairs of the kernel's `// paper:` line (the paper's size)."""
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*//\s*paper:\s*(.*)", line)
            if m:
                return m.group(1).split()
    raise RuntimeError("%s has no // paper: line" % path)


def write_counts(path, counts):
    """counts as an int32 [len, 1] .npy file (the format numpy writes)."""
    header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d, 1), }" % len(counts)
    header += " " * (63 - len(header)) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
                + struct.pack("<%di" % len(counts), *counts))


def mode_built(bfsync, sync):
    """Whether this bfsync's run accepts --sync=sync (paper and unrolled are
    built in transform/ by another issue): its --help's --sync line names it."""
    p = subprocess.run([bfsync, "run", "--help"], capture_output=True, text=True)
    m = re.search(r"^\s*--sync\b.*?(?=^\s*--(?!sync))", p.stdout, re.M | re.S)  # the option and its continuation lines
    return m is not None and re.search(r"\b%s\b" % re.escape(sync), m.group(0)) is not None


def timing_run(bfsync, path, params, sync, extra, target=TRN2):
    """One `run --exec=sim --timing-only` (on trn2): its JSON, wall seconds and peak MB (bench/rusage)."""
    cmd = [bfsync, "run", path] + param_args(params) + ["--exec=sim", "--timing-only", "--target", target,
                                                        "--sync=" + sync, "--json"] + list(extra)
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.perf_counter()
        p = subprocess.run([RUSAGE] + cmd, stdout=out, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError("%s failed: %s" % (" ".join(cmd), p.stderr[-2000:]))
        out.seek(0)
        o = json_lines(out.read())[0]
    return o, wall, int(p.stderr.strip().splitlines()[-1].split()[1]) / 1024.0


def engine_code_bytes(c_text):
    """Bytes of each engine's function in emitted C: {engine: bytes}."""
    sizes, name, start = {}, None, 0
    for m in re.finditer(r"^static void bf_engine_(\w+)\(.*$|^}$", c_text, re.M):
        if m.group(1):
            name, start = m.group(1), m.start()
        elif name:
            sizes[name] = m.end() - start
            name = None
    return sizes


def code_size(bfsync, tmp, path, params, sync, extra):
    """Each engine's emitted C in bytes for sync ({engine: bytes}), or the
    first line of compile's error (unrolled: for these parameters and device
    integers, which compile may not take)."""
    out = os.path.join(tmp, "code-%s-%s.c" % (os.path.basename(path)[:-4], sync))
    cmd = [bfsync, "compile", path, "--sync=" + sync, "-o", out]
    if sync == "unrolled":  # unrolled for the given parameters
        cmd += param_args(params) + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        if sync == "barrier-free":
            raise RuntimeError("%s failed: %s" % (" ".join(cmd), p.stderr[-2000:]))
        first = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0]
        return first if len(first) <= 100 else first[:97] + "..."
    with open(out) as f:
        return engine_code_bytes(f.read())


def paper_table(bfsync, root, tmp, pool):
    built = {m: m in ("barrier", "barrier-free") or mode_built(bfsync, m) for m in TABLE_MODES}
    counts = os.path.join(tmp, "moe_counts.npy")
    write_counts(counts, MOE_COUNTS)
    # trn2 with the sequencer's costs free, one at a time and together
    free = {k: os.path.join(tmp, "trn2-no-%s.target" % k.replace(",", "-")) for k in SEQUENCER_FREE}
    for k, dst in free.items():
        scaled_target(os.path.join(root, TRN2), 0.0, dst, tuple(k.split(",")))

    def one(entry):
        name, rel, loops, p_bf, p_manual, p_unrolled = entry
        path = os.path.join(root, rel)
        params = paper_params(path)
        extra = ["--input", "C=" + counts] if rel.endswith("moe.bfk") else []
        row = {"kernel": name, "path": rel, "params": params, "loops": loops,
               "paper": {"barrier_free": p_bf, "manual": p_manual, "unrolled": p_unrolled},
               "cycles": {}, "sim_seconds": {}, "sim_peak_mb": {}, "waits": {}, "bookkeeping": {}}
        for m in TABLE_MODES:
            if not built[m]:
                row["cycles"][m] = None
                continue
            o, wall, mb = timing_run(bfsync, path, params, m, extra)
            row["cycles"][m], row["sim_seconds"][m], row["sim_peak_mb"][m] = o["cycles"], wall, mb
            row["waits"][m], row["bookkeeping"][m] = o["waits_executed"], o["bookkeeping"]
            if m == "barrier-free":
                row["ideal_sync"], row["ideal"] = o["ideal_sync_cycles"], o["ideal_cycles"]
                row["engines"] = o["engines"]
        base = row["cycles"]["barrier"]
        row["ratio"] = {m: (c / base if c is not None else None) for m, c in row["cycles"].items()}
        row["ratio"]["ideal_sync"] = row["ideal_sync"] / base
        row["code"] = {m: code_size(bfsync, tmp, path, params, m, extra) if built[m] else None
                       for m in ("barrier-free", "unrolled")}
        row["bf_free"] = {k: timing_run(bfsync, path, params, "barrier-free", extra, t)[0]["cycles"] / base
                          for k, t in free.items()}
        return row
    return {"built": built, "moe_counts": list(MOE_COUNTS), "rows": list(pool.map(one, PAPER_TABLE))}


def md_ratio(x, built=True):
    return "n/a (mode not built)" if not built else "-" if x is None else "%.2f" % x


def md_err(ours, paper):
    return "-" if ours is None or paper is None else "%+.2f" % (ours - paper)


def kb(n):
    return "%.1f KB" % (n / 1024.0) if n < 1024 * 1024 else "%.2f MB" % (n / 1048576.0)


def md_paper_table(t):
    built = t["built"]
    out = ["| kernel (paper's size) | loops | paper bf | paper manual | paper unrolled | barrier | paper mode |"
           " barrier-free | unrolled | ideal_sync | paper mode - paper bf | bf - paper bf | unrolled - paper |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in t["rows"]:
        p, q = r["paper"], r["ratio"]
        out.append("| %s (%s) | %d | %s | %s | %s | 1.00 | %s | %s | %s | %s | %s | %s | %s |" % (
            r["kernel"], " ".join(r["params"]), r["loops"], md_ratio(p["barrier_free"]), md_ratio(p["manual"]),
            md_ratio(p["unrolled"]), md_ratio(q["paper"], built["paper"]), md_ratio(q["barrier-free"]),
            md_ratio(q["unrolled"], built["unrolled"]), md_ratio(q["ideal_sync"]),
            md_err(q["paper"] if built["paper"] else None, p["barrier_free"]),
            md_err(q["barrier-free"], p["barrier_free"]), md_err(q["unrolled"], p["unrolled"])))
    out += ["", "| kernel | barrier cycles | barrier-free cycles | waits (bf) | bookkeeping ops (bf) |"
            " simulated in (s, slowest mode) | peak memory (MB) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in t["rows"]:
        c = r["cycles"]
        out.append("| %s | %s | %s | %s | %s | %.2f | %.0f |" % (
            r["kernel"], cyc(c["barrier"]), cyc(c["barrier-free"]), cyc(r["waits"]["barrier-free"]),
            cyc(r["bookkeeping"]["barrier-free"]), max(r["sim_seconds"].values()), max(r["sim_peak_mb"].values())))
    out += ["", "What the in-order sequencers' synchronization costs barrier-free: bf/barrier on trn2, then with"
            " `bookkeep_cost` (the register instructions), `wait_cost` (the wait instructions) or both set to 0"
            " on every engine (the barrier baseline keeps the target's costs), and ideal_sync beside them.", "",
            "| kernel | bf/barrier | bookkeeping free | waits free | both free | ideal_sync |",
            "|---|---:|---:|---:|---:|---:|"]
    for r in t["rows"]:
        f = r["bf_free"]
        out.append("| %s | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
            r["kernel"], r["ratio"]["barrier-free"], f["bookkeep_cost"], f["wait_cost"], f["bookkeep_cost,wait_cost"],
            r["ratio"]["ideal_sync"]))
    out += ["", "| kernel | barrier-free code, largest engine | barrier-free, all engines | unrolled, largest"
            " engine | unrolled, all engines | unrolled / barrier-free (all) |", "|---|---:|---:|---:|---:|---:|"]
    for r in t["rows"]:
        bf, un = r["code"]["barrier-free"], r["code"]["unrolled"]
        cells = [kb(max(bf.values())), kb(sum(bf.values()))]
        if isinstance(un, dict):
            cells += [kb(max(un.values())), kb(sum(un.values())), "%.1fx" % (sum(un.values()) / sum(bf.values()))]
        elif un:
            cells += ["compile failed: %s" % un.replace("|", "/")] + ["-"] * 2
        else:
            cells += ["n/a (mode not built)"] * 3
        out.append("| %s | %s |" % (r["kernel"], " | ".join(cells)))
    return out


def md_paper_goals(t):
    rows, built = t["rows"], t["built"]

    def verdict(ok):
        return "**met**" if ok else "**missed**"
    bf_hit = [r for r in rows if abs(r["ratio"]["barrier-free"] - r["paper"]["barrier_free"]) <= 0.10]
    lines = ["- barrier-free/barrier within 0.10 of the paper: %s, within on %d of %d (%s)" % (
        verdict(len(bf_hit) == len(rows)), len(bf_hit), len(rows),
        "; ".join("%s %+.2f" % (r["kernel"], r["ratio"]["barrier-free"] - r["paper"]["barrier_free"])
                  for r in rows))]
    if built["paper"]:  # the paper's barrier-free column measures the paper's scheme, which paper mode models
        pm_hit = [r for r in rows if abs(r["ratio"]["paper"] - r["paper"]["barrier_free"]) <= 0.10]
        lines.append("- paper mode (the paper's scheme)/barrier within 0.10 of the paper's barrier-free: %s, within"
                     " on %d of %d (%s)" % (verdict(len(pm_hit) == len(rows)), len(pm_hit), len(rows), "; ".join(
                         "%s %+.2f" % (r["kernel"], r["ratio"]["paper"] - r["paper"]["barrier_free"]) for r in rows)))
    for mode, key, goal in (("unrolled", "unrolled", "unrolled/barrier within 0.10 of the paper"),):
        if not built[mode]:
            lines.append("- %s: not measured (--sync=%s is not built in this tree)" % (goal, mode))
        else:
            have = [r for r in rows if r["paper"][key] is not None]
            hit = [r for r in have if abs(r["ratio"][mode] - r["paper"][key]) <= 0.10]
            lines.append("- %s: %s, within on %d of %d (%s)" % (goal, verdict(len(hit) == len(have)), len(hit), len(have),
                         "; ".join("%s %+.2f" % (r["kernel"], r["ratio"][mode] - r["paper"][key]) for r in have)))
    if built["paper"]:
        ok = [r for r in rows if r["cycles"]["barrier-free"] <= r["cycles"]["paper"]]
        lines.append("- barrier-free at or below --sync=paper: %s, on %d of %d" % (verdict(len(ok) == len(rows)), len(ok), len(rows)))
    else:
        lines.append("- barrier-free at or below --sync=paper: not measured (--sync=paper is not built in this tree)")
    if built["unrolled"]:
        have = [r for r in rows if r["paper"]["unrolled"] is not None]
        ok = [r for r in have if r["cycles"]["barrier-free"] <= 1.10 * r["cycles"]["unrolled"]]
        lines.append("- barrier-free within 1.10x of unrolled: %s, on %d of %d (%s)" % (
            verdict(len(ok) == len(have)), len(ok), len(have),
            "; ".join("%s %.3fx" % (r["kernel"], r["cycles"]["barrier-free"] / r["cycles"]["unrolled"]) for r in have)))
        for name in ("RMSNorm", "FlashAttention"):
            r = next(r for r in rows if r["kernel"].startswith(name))
            un = r["code"]["unrolled"]
            if not isinstance(un, dict):
                lines.append("- code size, %s: unrolled did not compile (%s): **missed**" % (name, un))
                continue
            x = sum(un.values()) / sum(r["code"]["barrier-free"].values())
            lines.append("- code size, %s: unrolled %.1fx barrier-free (goal >= 50x): %s" % (name, x, verdict(x >= 50)))
    else:
        lines.append("- barrier-free within 1.10x of unrolled, and code size >= 50x smaller than unrolled: not"
                     " measured (--sync=unrolled is not built in this tree)")
    slow = max(max(r["sim_seconds"].values()) for r in rows)
    big = max(max(r["sim_peak_mb"].values()) for r in rows)
    lines.append("- every paper kernel at its paper size simulates (timing only) in under 30 s and 1 GB: %s"
                 " (slowest run %.2f s, largest peak %.0f MB)" % (verdict(slow < 30 and big < 1024), slow, big))
    return lines


def md_paper(rows):
    out = ["| kernel | params | barrier | barrier-free | ideal | ideal_sync | paper bf/barrier | bfsync bf/barrier |"
           " goal (<= paper) | bf/ideal | bf/ideal_sync (goal <= 1.02) | late explained | match |",
           "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|"]
    for r in rows:
        out.append("| %s | %s | %s | %s | %s | %s | %.2f | %.2f | %s | %.3f | %.3f %s | %d | %s |" % (
            r["kernel"], " ".join(r["params"]), cyc(r["barrier"]), cyc(r["barrier_free"]), cyc(r["ideal"]),
            cyc(r["ideal_sync"]), r["paper"], r["ratio"], "met" if r["ratio"] <= r["paper"] else "**missed**",
            r["bf_over_ideal"], r["bf_over_ideal_sync"], "met" if r["bf_over_ideal_sync"] <= 1.02 else "**missed**",
            r["late_explained"], "yes" if r["match"] else "**no**"))
    return out


def md_paper_gap(rows):
    out = ["| kernel | bf/ideal_sync | bf/ideal, every sync cost 0 | bf/ideal_sync, wait_cost 0 |"
           " waits / instructions they precede / redundant |"
           " waits beside a longer one before the same instruction (engine: line <- counter: runs, beside, cycles) |",
           "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        if r["bf_over_ideal_sync"] <= 1.02:
            continue
        waits = "; ".join("%s: %d <- %s: %d, %d, %s" % (w["engine"], w["line"], w["on"], w["runs"], w["beside"],
                                                         cyc(w["excess"])) for w in r["waits"] if w["beside"])
        out.append("| %s | %.3f | %.3f | %.3f | %s / %s / %s | %s |" % (
            r["kernel"], r["bf_over_ideal_sync"], r["bf_over_ideal_at_zero_sync"],
            r["bf_over_ideal_sync_no_wait_cost"], cyc(r["waits_executed"]), cyc(r["waited_ops"]),
            cyc(r["redundant"]), waits or "none"))
    return out


# ---- calibration against documented trn1 timings (issue 10)

# NKI "Dynamic Loops" deep dive, "Iterations Do Not Overlap": 64 iterations of
# a [128, 2048] fp32 load -> activation -> tensor_scalar -> store on trn1.
# targets/trn1.target fits its DMA bandwidth to the first form and its
# barrier cost to the second; the third is the check.
CALIBRATION = (
    ("iterations overlap (unrolled)", "stream", "barrier-free", 64, 7.5, "fit: dma_bytes_per_cycle"),
    ("drain + barrier + semaphore reset every iteration", "stream", "barrier", 64, 17.9, "fit: barrier_cost"),
    ("four tiles per barrier", "stream4", "barrier", 64, 10.2, "check"),
)
CALIBRATION_GOAL = 0.20


def calibration(bfsync, root, target):
    rows = []
    for form, kernel, sync, tiles, documented, role in CALIBRATION:
        path = os.path.join(root, "bench", "calibration", kernel + ".bfk")
        o = sim_runs(bfsync, path, bench_params(path), target, sync)[sync]
        us = o["ns"] / 1000.0 / tiles
        rows.append({"form": form, "kernel": kernel, "sync": sync, "documented_us": documented,
                     "simulated_us": us, "error": us / documented - 1.0, "role": role,
                     "params": bench_params(path)})
    return rows


def sim_speed(bfsync, root, repeat):
    """Wall time of the simulator against the threads executor on pingpong at
    10^6 iterations (issue 9: 100 s against 1.9 s before the fibers)."""
    path = os.path.join(root, "examples", "pingpong.bfk")
    walls = {}
    for exec_ in ("sim", "threads"):
        cmd = [bfsync, "run", path, "-p", "N=1000000", "--exec=" + exec_, "--sync=barrier-free", "--json"]
        walls[exec_] = median_times(cmd, repeat)[0]
    return {"command": "bfsync run examples/pingpong.bfk -p N=1000000 --exec=sim|threads --sync=barrier-free",
            "sim_s": walls["sim"], "threads_s": walls["threads"], "ratio": walls["sim"] / walls["threads"]}


# ---- compile side

def count_instructions(path):
    """Static instructions: the statements of the kernel body that are not declarations."""
    n = 0
    with open(path) as f:
        for line in f:
            code = line.split("//")[0].strip()
            if code and not re.match(r"(hbm|sbuf|psum)\b", code):
                n += code.count(";")
    return n


RUSAGE = None  # the built bench/rusage binary (main sets it)


def timed(cmd):
    """(wall seconds, CPU seconds, peak resident KB) of the command alone, through bench/rusage:
    CPU time is what the growth is judged on, since the wall clock of a shared 2-core host moves
    with whatever else runs; and a child forked from this interpreter would start with its
    resident pages as the peak memory."""
    t0 = time.perf_counter()
    p = subprocess.run([RUSAGE] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    lines = p.stderr.strip().splitlines()
    if p.returncode != 0 or not lines:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), p.stderr[-2000:]))
    cpu, peak_kb = lines[-1].split()
    return wall, float(cpu), int(peak_kb)


def median_times(cmd, runs):
    samples = [timed(cmd) for _ in range(runs)]
    return (statistics.median(w for w, _, _ in samples), statistics.median(c for _, c, _ in samples),
            max(m for _, _, m in samples))


def compile_point(bfsync, root, tcc, src, runs, sync, target=None):
    out_c = src[:-4] + ".c"
    row = {"instructions": count_instructions(src), "runs": runs, "sync": sync}
    target_args = ["--target", target] if target else []
    row["check_wall_s"], row["check_cpu_s"], _ = median_times([bfsync, "check", src], runs)
    row["compile_wall_s"], row["compile_cpu_s"], row["compile_peak_kb"] = median_times(
        [bfsync, "compile", "--sync=" + sync] + target_args + [src, "-o", out_c], runs)
    row["tcc_wall_s"], row["tcc_cpu_s"], row["tcc_peak_kb"] = median_times(
        [tcc, "-c", "-I", os.path.join(root, "runtime"), out_c, "-o", out_c + ".o"], runs)
    row["c_bytes"] = os.path.getsize(out_c)
    row["total_cpu_s"] = row["compile_cpu_s"] + row["tcc_cpu_s"]
    row["total_wall_s"] = row["compile_wall_s"] + row["tcc_wall_s"]
    row["c_bytes_per_instr"] = row["c_bytes"] / max(1, row["instructions"])
    row["peak_bytes_per_instr"] = 1024.0 * max(row["compile_peak_kb"], row["tcc_peak_kb"]) / max(1, row["instructions"])
    os.remove(out_c)
    os.remove(out_c + ".o")
    return row


def plain_kernel(path, n):
    """A plain straight-line kernel of n instructions: act, dve and pool in turn on two tiles,
    each depending on the one before (one wait per instruction, no loop, no tracking)."""
    ops = ("act: exp b, a;", "dve: add a, a, b;", "pool: scale b, b, 0.5;")
    with open(path, "w") as f:
        f.write("kernel plain(N: int) {\n  hbm in X: f32[4, 4];\n  hbm out Y: f32[4, 4];\n"
                "  sbuf a: f32[4, 4];\n  sbuf b: f32[4, 4];\n  dma: load a, X[0, 0];\n")
        for i in range(n - 2):
            f.write("  %s\n" % ops[i % 3])
        f.write("  dma: store Y[0, 0], a;\n}\n")


def with_growth(rows):
    for prev, cur in zip(rows, rows[1:]):
        cur["time_ratio"] = cur["total_cpu_s"] / max(prev["total_cpu_s"], 1e-3)
        cur["instr_ratio"] = cur["instructions"] / prev["instructions"]
        cur["growth_per_10x"] = cur["time_ratio"] * 10.0 / cur["instr_ratio"]
    return rows


def one_queue_target(src, dst):
    """The target with its DMA queues dma1, dma2, ... removed: one DMA engine, as before the
    16-queue trn1, to tell the cost of many producer engines from the rest."""
    with open(src) as f, open(dst, "w") as out:
        for line in f:
            if not re.match(r"\s*dma([1-9][0-9]*)\s*=", line):
                out.write(line)


def compile_side(bfsync, root, tmp, repeat, quick, target):
    """bfsync compile and tcc over kernels of growing size, in both sync modes: the generated
    kernels (`bfsync gen`, every feature) and plain straight-line ones, on the target; and the
    generated ones barrier-free on the target with one DMA queue. One run at 100k."""
    tcc = shutil.which("tcc")
    series = {}
    one_queue = os.path.join(tmp, "one-queue.target")
    one_queue_target(target, one_queue)
    for kind, sync, tgt in [(k, s, None) for k in ("gen", "plain") for s in ("barrier-free", "barrier")] + \
            [("gen", "barrier-free", one_queue)]:
        rows = []
        for size in GEN_SIZES:
            if quick and size >= 100000 and kind == "gen":  # minutes and gigabytes; plain takes seconds
                continue
            src = os.path.join(tmp, "%s%d.bfk" % (kind, size))
            if not os.path.exists(src):
                if kind == "gen":
                    with open(src, "w") as f:
                        f.write(run([bfsync, "gen", "--seed", str(GEN_SEED), "--size", str(size)]))
                else:
                    plain_kernel(src, size)
            label = kind if tgt is None else kind + ", 1 DMA queue"
            if tgt is not None:  # the generator pins some transfers to queues dmaN: unpin them
                one = src[:-4] + "-1q.bfk"
                with open(src) as f, open(one, "w") as out:
                    out.write(re.sub(r"\bdma[0-9]+(\s*[:{])", r"dma\1", f.read()))
                src = one
            step("  compile %s %d (%s)" % (label, size, sync))
            rows.append(dict(size=size, kernel=label, **compile_point(
                bfsync, root, tcc, src, 1 if size >= 100000 else repeat, sync, tgt)))
        series["%s/%s" % (label, sync)] = with_growth(rows)
    return series


# ---- threads executor

def threads_side(bfsync, kernels, repeat):
    rows = []
    for name, path, cls in kernels:
        params = bench_params(path)
        walls = {"barrier": [], "barrier-free": []}
        ratio = []
        for _ in range(repeat):
            o = {x["sync"]: x for x in json_lines(run([bfsync, "run", path] + param_args(params) + ["--sync=both", "--json"]))}
            walls["barrier"].append(o["barrier"]["wall_ns"])
            walls["barrier-free"].append(o["barrier-free"]["wall_ns"])
            ratio.append(o["barrier"]["wall_ns"] / o["barrier-free"]["wall_ns"])
        rows.append({"kernel": name, "class": cls, "repeats": repeat,
                     "barrier_ms": statistics.median(walls["barrier"]) / 1e6,
                     "barrier_free_ms": statistics.median(walls["barrier-free"]) / 1e6,
                     "speedup": statistics.median(ratio), "speedup_min": min(ratio), "speedup_max": max(ratio)})
    return rows


def wait_cost(binary):
    if not binary:
        return None
    return json_lines(run([binary]))[-1]


# ---- the summary against the targets of issue 5

def summary(entries, compile_series):
    bfi = [e["bf_over_ideal"] for e in entries if e["bf_over_ideal"] is not None]
    ml = [e["reduction"] for e in entries if e["class"] == "ml"]
    sync = [e["speedup"] for e in entries if e["class"] == "sync"]
    return {
        "bf_over_ideal_max": max(bfi) if bfi else None,
        "bf_over_ideal_median": statistics.median(bfi) if bfi else None,
        "ml_reduction_min": min(ml) if ml else None,
        "ml_reduction_median": statistics.median(ml) if ml else None,
        "sync_speedup_min": min(sync) if sync else None,
        "sync_speedup_median": statistics.median(sync) if sync else None,
        "compile": compile_summary(compile_series),
        "met": {
            "bf_over_ideal_max": bool(bfi) and max(bfi) <= TARGETS["bf_over_ideal_max"],
            "bf_over_ideal_median": bool(bfi) and statistics.median(bfi) <= TARGETS["bf_over_ideal_median"],
            "ml_reduction_min": bool(ml) and min(ml) >= TARGETS["ml_reduction_min"],
            "sync_speedup_min": bool(sync) and min(sync) >= TARGETS["sync_speedup_min"],
        },
    }


# ---- results.md

def pct(x):
    return "n/a" if x is None else "%.1f%%" % (100 * x)


def cyc(x):
    return "n/a" if x is None else format(x, ",")


def num(x, fmt="%.2f"):
    return "n/a" if x is None else fmt % x


def md_kernel_table(entries):
    out = ["| kernel | class | params | barrier | barrier-free | ideal | reduction | speedup | bf/ideal |"
           " ideal reduction | waits b / bf | redundant b / bf | bookkeeping bf | match |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for e in entries:
        c = e["cycles"]
        out.append("| %s | %s | %s | %s | %s | %s | %s | %sx | %s | %s | %s / %s | %s / %s | %s | %s |" % (
            e["kernel"], e["class"], " ".join(e["params"]), format(c["barrier"], ","), format(c["barrier_free"], ","),
            cyc(c["ideal"]), pct(e["reduction"]), num(e["speedup"]), num(e["bf_over_ideal"], "%.3f"),
            pct(e["ideal_reduction"]),
            e["waits"]["barrier"], e["waits"]["barrier_free"], e["redundant"]["barrier"], e["redundant"]["barrier_free"],
            e["bookkeeping"]["barrier_free"], "yes" if e["outputs_match"] else "NO"))
    return out


def md_sensitivity(entries, sens):
    """One column per factor (x1 is the main table): reduction / speedup, and bf/ideal at x0."""
    keys = sorted(list(sens) + ["1"], key=float)
    out = ["| kernel | " + " | ".join("sync costs x%s" % k for k in keys) + " | bf/ideal at x0 |",
           "|---|" + "---:|" * (len(keys) + 1)]
    for e in entries:
        point = lambda k: e if k == "1" else sens[k][e["kernel"]]
        cells = ["%s / %sx" % (pct(point(k)["reduction"]), num(point(k)["speedup"])) for k in keys]
        zero = sens.get("0", {}).get(e["kernel"])
        cells.append(num(zero["bf_over_ideal"], "%.3f") if zero else "n/a")
        out.append("| %s | %s |" % (e["kernel"], " | ".join(cells)))
    return out


def md_gap(entries, gap, sens):
    out = ["| kernel | bf - ideal | saved without sem_latency | without wait_cost | without bookkeep_cost |"
           " left at x0 (all zero) | saved by dropping redundant waits (each alone) |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for e in entries:
        c, g = e["cycles"], gap[e["kernel"]]
        if c["ideal"] is None:
            continue
        share = lambda v: "%s (%s)" % (format(v, ","), pct(v / (c["barrier_free"] - c["ideal"])) if c["barrier_free"] > c["ideal"] else "-")
        zero = sens.get("0", {}).get(e["kernel"], {}).get("cycles", {})
        left = zero.get("barrier_free", c["barrier_free"]) - zero.get("ideal", c["ideal"])
        drops = ", ".join("#%s: %s" % (k, format(v, ",")) for k, v in e["redundant_drop_saved"].items()) or "none"
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            e["kernel"], format(c["barrier_free"] - c["ideal"], ","),
            share(c["barrier_free"] - g["sem_latency"]), share(c["barrier_free"] - g["wait_cost"]),
            share(c["barrier_free"] - g["bookkeep_cost"]), format(left, ","), drops))
    return out


def md_calibration(rows):
    out = ["| form (us per tile) | kernel, sync | documented | simulated | error | role |",
           "|---|---|---:|---:|---:|---|"]
    for r in rows:
        out.append("| %s | %s, %s | %.1f | %.2f | %+.1f%% | %s |" % (
            r["form"], r["kernel"], r["sync"], r["documented_us"], r["simulated_us"], 100 * r["error"], r["role"]))
    worst = max(abs(r["error"]) for r in rows)
    out += ["", "Worst error %.1f%% against the goal of +-%d%%: %s." % (
        100 * worst, 100 * CALIBRATION_GOAL, "met" if worst <= CALIBRATION_GOAL else "**missed**")]
    return out


def md_compile(series):
    out = ["| kernel | sync | instructions | bfsync compile (s) | tcc (s) | compile + tcc (s) | per 10x |"
           " C bytes | C bytes / instr | peak memory (MB) | peak bytes / instr | runs |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, rows in series.items():
        for r in rows:
            out.append("| %s | %s | %d | %.2f | %.2f | %.2f | %s | %s | %.0f | %.1f | %.0f | %d |" % (
                r["kernel"], r["sync"], r["instructions"], r["compile_cpu_s"], r["tcc_cpu_s"], r["total_cpu_s"],
                "n/a" if "growth_per_10x" not in r else "%.2fx" % r["growth_per_10x"],
                format(r["c_bytes"], ","), r["c_bytes_per_instr"],
                max(r["compile_peak_kb"], r["tcc_peak_kb"]) / 1024.0, r["peak_bytes_per_instr"], r["runs"]))
    return out


def compile_summary(series):
    """The compile goals of issue 9, for the generated kernels and for the plain ones apart:
    the worst row of each family (the C bytes goal is the generated kernels')."""
    rows = [r for rs in series.values() for r in rs]
    s = {}
    for family in ("gen", "plain"):
        fam = [r for r in rows if r["kernel"].split(",")[0] == family]
        big = [r for r in fam if r["instructions"] >= 100000 and r["sync"] == "barrier-free"]
        f = {"compile_cpu_100k_max": max((r["total_cpu_s"] for r in big), default=None),
             "compile_growth_max": max((r["growth_per_10x"] for r in fam if "growth_per_10x" in r), default=None),
             "c_bytes_per_instr_max": max((r["c_bytes_per_instr"] for r in fam), default=None),
             "peak_bytes_per_instr_max": max((r["peak_bytes_per_instr"] for r in fam if r["instructions"] >= 10000),
                                             default=None)}
        f["met"] = {k: f[k] is not None and f[k] <= TARGETS[k] for k in
                    ("compile_cpu_100k_max", "compile_growth_max", "c_bytes_per_instr_max", "peak_bytes_per_instr_max")}
        s[family] = f
    return s


def md_threads(rows):
    out = ["| kernel | barrier (ms) | barrier-free (ms) | barrier / bf, median | min .. max |", "|---|---:|---:|---:|---:|"]
    for r in rows:
        out.append("| %s | %.1f | %.1f | %.2fx | %.2f .. %.2f |" % (
            r["kernel"], r["barrier_ms"], r["barrier_free_ms"], r["speedup"], r["speedup_min"], r["speedup_max"]))
    return out


def md_targets(s):
    def line(what, value, goal, met):
        return "| %s | %s | %s | %s |" % (what, value, goal, "met" if met else "**short**")
    m = s["met"]
    return ["| target (issue 5) | measured | goal | |", "|---|---:|---:|---|",
            line("bf/ideal, worst kernel", num(s["bf_over_ideal_max"], "%.3f"), "<= 1.05", m["bf_over_ideal_max"]),
            line("bf/ideal, median", num(s["bf_over_ideal_median"], "%.3f"), "<= 1.02", m["bf_over_ideal_median"]),
            line("ML reduction, worst kernel", pct(s["ml_reduction_min"]), ">= 10%", m["ml_reduction_min"]),
            line("sync-bound speedup, worst kernel", num(s["sync_speedup_min"]) + "x", ">= 3.3x", m["sync_speedup_min"])]


def md_compile_targets(c):
    def cell(f, key, fmt, suffix=""):
        v = c[f][key]
        return "%s%s (%s)" % (num(v, fmt), suffix if v is not None else "",
                              "met" if c[f]["met"][key] else "**short**") if v is not None else "not run"
    def line(what, key, fmt, goal, suffix=""):
        return "| %s | %s | %s | %s |" % (what, cell("gen", key, fmt, suffix), cell("plain", key, fmt, suffix), goal)
    return ["| target (issue 9) | generated kernels, worst | plain kernels, worst | goal |", "|---|---:|---:|---:|",
            line("compile + tcc, 100,000 barrier-free instructions (CPU s)", "compile_cpu_100k_max", "%.2f", "< 1.00"),
            line("growth per 10x instructions, worst series", "compile_growth_max", "%.2f", "<= 11x", "x"),
            line("C bytes per instruction (the goal is the generated kernels')", "c_bytes_per_instr_max", "%.0f",
                 "<= 250"),
            line("peak memory per instruction, 10,000 instructions or more (bytes)", "peak_bytes_per_instr_max",
                 "%.0f", "<= 1024")]


# ---- resources (issue 12): what each engine needs beside the paper's figures

# The paper's per-engine registers for kernels with 1, 2 and 3 nested loops,
# and its semaphore range (4-13; 19 for FlashAttention).
PAPER_REGISTERS = {1: 4, 2: 8, 3: 11}
PAPER_SEMAPHORES = "4-13 (19 for FlashAttention)"


def paper_registers_target(target, registers, dst):
    """The target file with `registers = N` in every [kind] section: the
    paper's register figure as a hard limit, met with values in scratch."""
    with open(target) as f, open(dst, "w") as g:
        for line in f:
            g.write(line)
            if re.match(r"\s*\[kind \w+\]", line):
                g.write("registers = %d   # the paper's figure (bench/bench.py)\n" % registers)
    return dst


def resources_json(bfsync, target, path, params=()):
    return json.loads(run([bfsync, "compile", path, "--resources", "--json", "--target", target] + param_args(params)))


def resources_point(bfsync, target, tmp, name, path, simulate):
    """`bfsync compile --resources --json` at the kernel's bench sizes; then,
    on the target with the paper's registers for its loop depth, what is in
    scratch and (simulate) the barrier-free cycles with and without."""
    params = bench_params(path)
    r = resources_json(bfsync, target, path, params)
    engines = r["engines"]
    instructions = sum(e.get("instructions", 0) for e in engines)
    bookkeeping = sum(e.get("bookkeeping", 0) for e in engines)
    depth = max(e["loop_depth"] for e in engines)
    row = {"kernel": name, "loop_depth": depth,
           "registers": max(e["registers"] for e in engines),
           "registers_by_engine": {e["engine"]: e["registers"] for e in engines},
           "counters": r["counters"],
           "semaphores": sum(e["semaphores"] for e in engines),
           "semaphores_per_engine": max(e["semaphores"] for e in engines),
           "scratch_bytes": max(int(e["scratch_bytes"]) if e["scratch_bytes"].isdigit() else -1 for e in engines),
           "bookkeeping_per_instruction": bookkeeping / instructions if instructions else 0.0,
           "paper_registers": PAPER_REGISTERS.get(depth)}
    if row["paper_registers"]:
        limited = paper_registers_target(target, row["paper_registers"],
                                         os.path.join(tmp, "regs-%s.target" % re.sub(r"[^a-z0-9]+", "_", name.lower())))
        p = subprocess.run([bfsync, "compile", path, "--resources", "--json", "--target", limited],
                           capture_output=True, text=True)
        if p.returncode == 0:
            fitted = json.loads(p.stdout)["engines"]
            row["fitted_registers"] = max(e["registers"] for e in fitted)
            row["spilled"] = sum(e["spilled"] for e in fitted)
        else:
            row["fitted_error"] = p.stderr.strip().splitlines()[0]
        if simulate and p.returncode == 0:
            free = sim_runs(bfsync, path, params, target, "barrier-free")["barrier-free"]
            paid = sim_runs(bfsync, path, params, limited, "barrier-free")["barrier-free"]
            row.update(cycles=free["cycles"], fitted_cycles=paid["cycles"], spills=paid["spills"])
    return row


def resources_side(bfsync, root, target, tmp, kernels, pool):
    """Every benchmark kernel, and the paper's (simulated with its registers)."""
    paper = [(n, os.path.join(root, p)) for n, p, _ in PAPER]
    todo = [(n, p, False) for n, p, _ in kernels] + [(n, p, True) for n, p in paper]
    rows = list(pool.map(lambda k: resources_point(bfsync, target, tmp, k[0], k[1], k[2]), todo))
    # a paper kernel that is also a benchmark kernel: one row, with the cycles
    by_path = {}
    for (n, p, sim), row in zip(todo, rows):
        if p in by_path and sim:
            by_path[p].update({k: v for k, v in row.items() if k in ("cycles", "fitted_cycles", "spills")},
                              paper_kernel=n)
        elif p not in by_path:
            by_path[p] = dict(row, paper_kernel=n if sim else None)
    return list(by_path.values())


def md_resources(rows):
    L = ["| kernel | loops | registers (max engine) | paper registers | with the paper's registers: max, values in scratch |"
         " cycles, all in registers | cycles, with scratch | scratch ops | counters (kernel) | waits on counters (all engines) |"
         " per engine | scratch bytes (max engine) | bookkeeping / instruction |",
         "|---|---|---|---|---|---:|---:|---:|---|---|---|---|---|"]
    for r in rows:
        paper = r["paper_registers"]
        mark = "" if paper is None or r["registers"] <= paper else " (above)"
        if "fitted_registers" in r:
            fit = "%d, %d" % (r["fitted_registers"], r["spilled"])
        elif "fitted_error" in r:
            fit = "refused: " + r["fitted_error"]
        else:
            fit = "-"
        if "fitted_cycles" in r:
            cyc = ("{:,}".format(r["cycles"]), "{:,} (+%.2f%%)".format(r["fitted_cycles"]) %
                   (100.0 * (r["fitted_cycles"] - r["cycles"]) / r["cycles"]), "{:,}".format(r["spills"]))
        else:
            cyc = ("-", "-", "-")
        L.append("| %s | %d | %d%s | %s | %s | %s | %s | %s | %d | %d | %d | %s | %.2f |" % (
            r["kernel"] if not r.get("paper_kernel") or r["paper_kernel"] == r["kernel"] else
            "%s (the paper's %s)" % (r["kernel"], r["paper_kernel"]),
            r["loop_depth"], r["registers"], mark, paper if paper is not None else "-", fit, cyc[0], cyc[1], cyc[2],
            r["counters"], r["semaphores"], r["semaphores_per_engine"],
            r["scratch_bytes"] if r["scratch_bytes"] >= 0 else "symbolic", r["bookkeeping_per_instruction"]))
    return L


def write_markdown(path, res):
    L = ["# bfsync benchmark results", "",
         "Generated by `make bench` (bench/run.sh, bench/bench.py) on %s; do not edit by hand." % res["date"], "",
         "- bfsync: `%s` (git %s)" % (res["bfsync"], res["git"]),
         "- target: `%s` (the cost model, docs/targets.md)" % res["target"],
         "- host: %s" % res["host"]["description"], "",
         "## Targets", ""] + md_targets(res["summary"]) + [""] + md_compile_targets(res["summary"]["compile"]) + [
        "", "## Cycles on the simulator", "",
        "Per kernel and sync mode: `%s`. Redundant waits and bookkeeping operations: `%s`. "
        "Reduction = 1 - bf/barrier, speedup = barrier/bf; ideal = the same streams with exact dependences and"
        " zero synchronization cost (no scheme can beat it). Waits and redundant waits are dynamic counts." %
        (res["commands"]["sim"], res["commands"]["verify"]), ""] + md_kernel_table(res["kernels"]) + [
        "", "Timelines: " + ", ".join("[%s](%s)" % (e["kernel"], e["svg"]) for e in res["kernels"]) + ".",
        "", "## Sensitivity to the synchronization costs", "",
        "The target's `%s` scaled on every engine (rounded to whole cycles, never below 1 but at x0): `%s`. "
        "Each cell: reduction / speedup. At x0 synchronization is free, so what is left between barrier-free and "
        "the ideal is overlap the waits give away (a wait later than needed, or a conservative dependence), not"
        " their cost." % (", ".join(SYNC_COST_KEYS), res["commands"]["sensitivity"]), ""] + md_sensitivity(res["kernels"], res["sensitivity"])
    L += ["", "## Where barrier-free loses to the ideal", "",
          "Barrier-free cycles minus the ideal, and how many of those cycles go away when one synchronization cost"
          " of the target is set to 0 (the others unchanged): `%s`. The shares need not add up to 100%%: the costs"
          " overlap on the critical path. \"Left at x0\" is what is left with every cost at 0: a positive value"
          " would be overlap lost to waits that are later than needed. The last column drops, one at a time, each"
          " wait the oracle found redundant in every execution (`--mutate=drop:K`, K the wait's index in"
          " `bfsync verify --json`'s `redundant_waits`), and gives the cycles that saves: what removing it in the"
          " transform would buy." % res["commands"]["gap"], ""]
    L += md_gap(res["kernels"], res["gap"], res["sensitivity"])
    if "paper_table" in res:
        L += ["", "## The paper's table on a Trainium2 model", "",
              "The paper's seven kernels at the paper's sizes (bench/paper/*.bfk, `// paper:` lines) on"
              " `targets/trn2.target`, simulated in timing-only mode: `%s`. Every ratio is latency over bfsync's"
              " barrier baseline (1.00: a drain, an all-engine handshake and a semaphore reset at every loop entry"
              " and iteration boundary, the paper's baseline); \"paper mode\" is `--sync=paper` (the paper's own"
              " allocation) and unrolled `--sync=unrolled`, each \"n/a (mode not built)\" until this bfsync has"
              " it; ideal_sync is the oracle's bound for exact counter waits. The paper's columns are its"
              " measurements on one trn2 NeuronCore. MoE's token counts (tiles of 128 per expert, read from device"
              " memory) are %s. trn2.target has one value fitted to the paper, `barrier_cost`, to AddManyLoop's"
              " barrier-free/barrier; every other row is a check. The paper's barrier-free column measures the"
              " paper's own scheme, which paper mode models, so it is compared with paper mode as well as with"
              " bfsync's barrier-free. docs/performance.md, \"The paper's table on trn2\", discusses every miss." % (res["commands"]["paper_table"], " ".join(map(str, res["paper_table"]["moe_counts"])))
              + (" Measured at git %s on %s (`make bench-paper`), apart from the other sections."
                 % (res["paper_table_measured"]["git"], res["paper_table_measured"]["date"])
                 if "paper_table_measured" in res else ""),
              ""] + md_paper_table(res["paper_table"]) + ["", "Goals:", ""] + md_paper_goals(res["paper_table"])
    L += ["", "## The paper's benchmark suite", "",
          "The seven kernels the paper measured on one Trainium2 NeuronCore, written as a Trainium kernel writer"
          " would (multi-buffered, `dma:` spread over the queues), simulated on the target above: `%s`. The paper's"
          " column is its barrier-free / barrier latency; the goal is bfsync's at most the paper's. bf/ideal is"
          " against the zero-cost ideal; ideal_sync charges what every counter scheme with exact thresholds pays"
          " (each cross-engine dependence its semaphore latency; each instruction that must wait, a need not"
          " implied by happens-before when every instruction waits for exactly its needs, one wait, stalled or"
          " not; each engine each device integer it depends on once, read in its idle time; `ideal_sync_cycles`"
          " in `bfsync run --exec=sim --json`); \"late explained\" counts waits the oracle found later than needed"
          " because hbm is tracked as a whole there (`bfsync verify` at the bench parameters)." %
          res["commands"]["sim"], ""] + md_paper(res["paper"])
    L += ["", "Where bf/ideal_sync is above 1.02: the same run with every synchronization cost at 0 (sem_latency,"
          " wait_cost, bookkeep_cost, barrier_cost, device_read), whose bf/ideal is what is not synchronization"
          " (the ideal's DMA term is a bound, not a schedule); with wait_cost alone at 0; the waits the barrier-free"
          " trace (`--trace`) executed, the instructions they precede, and the executed waits the oracle finds"
          " implied already (`redundant` in `bfsync verify --json`); and the three waits that spend most wait cost"
          " ideal_sync does not charge: it charges one wait per instruction that must wait, so every wait beside a"
          " longer one before the same instruction (waits on several counters that one wait cannot test) is"
          " uncharged. Their cycles are an upper bound on what each costs: only those on the critical path"
          " count.", ""] + md_paper_gap(res["paper"])
    L += ["", "## Calibration against documented trn1 timings", "",
          "The NKI \"Dynamic Loops\" deep dive times 64 iterations of a [128, 2048] fp32 load -> activation ->"
          " tensor_scalar -> store on trn1 in three forms (bench/calibration/*.bfk; docs/performance.md,"
          " \"Calibration\"). Two figures of the target are fitted to the first two forms, so those errors only"
          " show the fit's rounding and what the model adds beyond it; the third form is the check: `%s`." %
          res["commands"]["calibration"], ""] + md_calibration(res["calibration"])
    s = res["sim_speed"]
    if s:
        L += ["", "## Simulator speed", "",
              "`%s`, median wall seconds of %d runs: simulator %.2f s, threads executor %.2f s, ratio %.2f"
              " (the simulator runs the engines as coroutines on one thread; docs/runtime.md)." % (
                  s["command"], s["repeats"], s["sim_s"], s["threads_s"], s["ratio"])]
    L += ["", "## Resources per engine", "",
          "`%s` at each kernel's bench sizes, the benchmark kernels and the paper's (docs/algorithm.md, section"
          " 7.4): registers are an engine's loop counts and computed bounds, its bookkeeping scalars and `known`"
          " guards (shared by live range), a last-read count per counter it waits on (32-bit counters) and its"
          " temporaries, all in registers; the paper's are 4, 8 and 11 for kernels with 1, 2 and 3 loops"
          " (\"above\" marks a kernel over them). \"With the paper's registers\": the same target with every"
          " kind's `registers` set to the paper's figure, met by keeping values in on-chip scratch (the most"
          " any engine then needs, and how many values are in scratch); for the paper's kernels, the"
          " barrier-free cycles on the simulator with everything in registers and with scratch, whose loads"
          " and stores (scratch ops) cost a bookkeeping operation each. Counters: the engines' counters some"
          " engine waits on (the kernel's semaphores: one per engine, shared by every loop) beside the paper's"
          " %s; waits on counters: the (engine, counter) pairs, summed over the engines; per engine: the most"
          " counters one engine waits on, what a kind's `semaphores` limits. Bookkeeping per instruction is"
          " every engine's bookkeeping operations over every engine's instructions, measured by the oracle."
          % (res["commands"]["resources"], PAPER_SEMAPHORES)
          + (" Measured at git %s on %s (`make bench-resources`), apart from the other sections."
             % (res["resources_measured"]["git"], res["resources_measured"]["date"]) if "resources_measured" in res else ""),
          ""]
    L += md_resources(res["resources"])
    L += ["", "## Compile time", "",
          "Kernels: `bfsync gen --seed %d --size N` (gen: every feature, loops, tracking) and a plain"
          " straight-line kernel of N instructions (plain: act, dve, pool in turn, each waiting for the one"
          " before). `%s` (parse + transform + emit) and `%s` (what the JIT does with libtcc), in both sync"
          " modes. CPU seconds (user + system) of each command, median of the runs shown; the growth is the CPU"
          " time of compile + tcc per 10x instructions; peak memory is the larger peak resident set of the"
          " two commands (their own ru_maxrss, measured by bench/rusage.c)." %
          (GEN_SEED, res["commands"]["compile"], res["commands"]["tcc"]), ""]
    L += md_compile(res["compile"])
    L += ["", "## Threads executor (wall clock, %s)" % res["host"]["description"], "",
          "`%s`, repeated %d times; medians; the ratio is taken within each run, then the median of the ratios"
          " (and the spread). Host load average (1 min) when this started: %.1f, when it ended: %.1f; on 2 cores"
          " anything else running moves these figures, the simulator's cycles above do not." % (
              res["commands"]["threads"], res["threads"][0]["repeats"] if res["threads"] else 0,
              res["host"]["load_before_threads"], res["host"]["load_after_threads"]), ""] + md_threads(res["threads"])
    if res["wait_cost"]:
        L += ["", "Uncontended wait and wake-up (bench/wait_cost.c): `%s`" % json.dumps(res["wait_cost"])]
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def host_description():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%d cores, %s" % (os.cpu_count() or 0, cpu)


def git_rev(root):
    try:
        return run(["git", "-C", root, "describe", "--always", "--dirty"]).strip()
    except (RuntimeError, OSError):
        return "unknown"


def step(what):
    print("bench: " + what, file=sys.stderr, flush=True)


def compile_only(args, root, res):
    """`make bench-compile`: the compile side measured again, the rest of results.json kept."""
    path = os.path.join(args.out, "results.json")
    with open(path) as f:
        old = json.load(f)
    with tempfile.TemporaryDirectory(prefix="bfsync-bench-") as tmp:
        step("compile time (1k, 10k, 100k%s instructions)" % (" plain" if args.quick else ""))
        compile_series = compile_side(args.bfsync, root, tmp, args.repeat, args.quick, args.target)
    for key in ("date", "bfsync", "git", "host", "commands", "targets"):
        old[key] = res[key] if key != "host" else dict(old.get("host", {}), **res["host"])
    old["compile"] = compile_series
    old["summary"] = summary(old["kernels"], compile_series)
    with open(path, "w") as f:
        json.dump(old, f, indent=1)
        f.write("\n")
    write_markdown(os.path.join(args.out, "results.md"), old)
    step("wrote %s (compile section; the others from %s)" % (os.path.join(args.out, "results.md"), path))


def resources_only(args, root, res, kernels):
    """`make bench-resources`: the resources table measured again, the rest of results.json kept."""
    path = os.path.join(args.out, "results.json")
    with open(path) as f:
        old = json.load(f)
    with tempfile.TemporaryDirectory(prefix="bfsync-bench-") as tmp, ThreadPoolExecutor(SIM_JOBS) as pool:
        step("resources per engine")
        old["resources"] = resources_side(args.bfsync, root, args.target, tmp, kernels, pool)
    old["resources_measured"] = {"date": res["date"], "git": res["git"]}
    old["commands"]["resources"] = res["commands"]["resources"]
    with open(path, "w") as f:
        json.dump(old, f, indent=1)
        f.write("\n")
    write_markdown(os.path.join(args.out, "results.md"), old)
    step("wrote %s (resources section; the others from %s)" % (os.path.join(args.out, "results.md"), path))


def paper_only(args, root, res):
    """`make bench-paper`: the paper's table on trn2 measured again, the rest of results.json kept."""
    path = os.path.join(args.out, "results.json")
    with open(path) as f:
        old = json.load(f)
    with tempfile.TemporaryDirectory(prefix="bfsync-bench-") as tmp, ThreadPoolExecutor(SIM_JOBS) as pool:
        step("the paper's table on trn2, at the paper's sizes (timing only)")
        old["paper_table"] = paper_table(args.bfsync, root, tmp, pool)
    old["paper_table_measured"] = {"date": res["date"], "git": res["git"]}
    old["commands"]["paper_table"] = res["commands"]["paper_table"]
    with open(path, "w") as f:
        json.dump(old, f, indent=1)
        f.write("\n")
    write_markdown(os.path.join(args.out, "results.md"), old)
    step("wrote %s (the paper's table; the others from %s)" % (os.path.join(args.out, "results.md"), path))


def main():
    ap = argparse.ArgumentParser(description="bfsync benchmark suite")
    ap.add_argument("--bfsync", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--out", required=True, help="directory for results.md, results.json and svg/")
    ap.add_argument("--wait-cost", help="the built bench/wait_cost binary")
    ap.add_argument("--rusage", required=True, help="the built bench/rusage binary")
    ap.add_argument("--repeat", type=int, default=3, help="runs per median of the compile times")
    ap.add_argument("--threads-repeat", type=int, default=5, help="runs per median of the threads executor")
    ap.add_argument("--quick", action="store_true", help="skip the generated kernels' 100k-instruction compile")
    ap.add_argument("--resources-only", action="store_true",
                    help="measure only the resources table; the other sections are kept from results.json")
    ap.add_argument("--paper-only", action="store_true",
                    help="measure only the paper's table on trn2; the other sections are kept from results.json")
    ap.add_argument("--compile-only", action="store_true",
                    help="measure only the compile side; the other sections are kept from results.json")
    args = ap.parse_args()
    global RUSAGE
    RUSAGE = args.rusage
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    svg_dir = os.path.join(args.out, "svg")
    os.makedirs(svg_dir, exist_ok=True)
    kernels = kernel_list(root)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "bfsync": args.bfsync, "git": git_rev(root), "target": os.path.relpath(args.target, root),
           "host": {"description": host_description(), "cores": os.cpu_count()},
           "commands": {
               "sim": "bfsync run KERNEL -p ... --exec=sim --target %s --sync=barrier|barrier-free --json --trace T.json"
                      % os.path.relpath(args.target, root),
               "verify": "bfsync verify KERNEL -p ... --sync=barrier|barrier-free --schedules 1 --json",
               "sensitivity": "bfsync run KERNEL -p ... --exec=sim --target SCALED.target --sync=both --json",
               "gap": "bfsync run KERNEL -p ... --exec=sim --target NO-COST.target --sync=barrier-free --json",
               "calibration": "bfsync run bench/calibration/KERNEL.bfk -p N=... --exec=sim --sync=... --json",
               "compile": "bfsync compile --sync=SYNC GEN.bfk -o GEN.c",
               "tcc": "tcc -c -I runtime GEN.c",
               "threads": "bfsync run KERNEL -p ... --sync=both --json",
               "resources": "bfsync compile KERNEL -p ... --resources --json",
               "paper_table": "bfsync run bench/paper/KERNEL.bfk -p ...(// paper:) --exec=sim --timing-only"
                              " --target targets/trn2.target --sync=MODE --json"},
           "targets": TARGETS}
    if args.compile_only:
        compile_only(args, root, res)
        return
    if args.resources_only:
        resources_only(args, root, res, kernels)
        return
    if args.paper_only:
        paper_only(args, root, res)
        return
    with tempfile.TemporaryDirectory(prefix="bfsync-bench-") as tmp:
        with ThreadPoolExecutor(SIM_JOBS) as pool:
            step("simulating %s" % " ".join(k[0] for k in kernels))
            res["kernels"] = list(pool.map(
                lambda k: measure_kernel(args.bfsync, root, tmp, args.target, k[0], k[1], k[2], svg_dir), kernels))
            step("sensitivity (sync costs x%s)" % ", x".join("%g" % f for f in SENSITIVITY_FACTORS))
            res["sensitivity"] = sensitivity(args.bfsync, tmp, args.target, kernels, pool)
            step("barrier-free without each redundant wait")
            savings = pool.map(lambda ek: drop_savings(args.bfsync, args.target, ek[0], ek[1][1]),
                               zip(res["kernels"], kernels))
            for e, saved in zip(res["kernels"], savings):
                e["redundant_drop_saved"] = saved
            step("barrier-free with each sync cost zeroed")
            res["gap"] = gap_attribution(args.bfsync, tmp, args.target, kernels, pool)
            step("resources per engine")
            res["resources"] = resources_side(args.bfsync, root, args.target, tmp, kernels, pool)
            step("the paper's seven kernels")
            res["paper"] = paper_suite(args.bfsync, root, tmp, args.target, pool)
            step("the paper's table on trn2, at the paper's sizes (timing only)")
            res["paper_table"] = paper_table(args.bfsync, root, tmp, pool)
        step("calibration against the documented trn1 timings")
        res["calibration"] = calibration(args.bfsync, root, args.target)
        step("simulator speed against the threads executor")
        res["sim_speed"] = dict(sim_speed(args.bfsync, root, args.repeat), repeats=args.repeat)
        step("compile time (1k, 10k, 100k%s instructions)" % (" plain" if args.quick else ""))
        res["compile"] = compile_side(args.bfsync, root, tmp, args.repeat, args.quick, args.target)
        step("threads executor")
        res["host"]["load_before_threads"] = os.getloadavg()[0]
        res["threads"] = threads_side(args.bfsync, kernels, args.threads_repeat)
        res["host"]["load_after_threads"] = os.getloadavg()[0]
        res["wait_cost"] = wait_cost(args.wait_cost)
    res["summary"] = summary(res["kernels"], res["compile"])
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    write_markdown(os.path.join(args.out, "results.md"), res)
    step("wrote %s" % os.path.join(args.out, "results.md"))


if __name__ == "__main__":
    main()

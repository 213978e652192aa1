#!/usr/bin/env bash
# sim.sh: the cycle simulator and the target files, through bfsync run.
#
# 1. Malformed target files (tests/bad_targets/NAME.target) are rejected
#    with positioned errors, exit 1: stderr must equal NAME.err (UPDATE=1
#    rewrites the golden files; review the diff).
# 2. Hand-computed makespans: each tests/sim/*.bfk states, in `// expect:`
#    lines, the cycles of barrier, barrier-free and the ideal on
#    tests/sim/round.target (or the line's target=FILE, such as
#    tests/sim/round_pipe.target, whose DMA queues overlap transfers),
#    worked out in its header comment; the oracle (bfsync verify --target)
#    passes them too.
# 3. The built-in target is targets/trn1.target: the same run with and
#    without --target targets/trn1.target gives the same figures.
# 4. Every example at its first `// params:` line, both sync modes, on the
#    simulator: results equal the reference, two runs give identical
#    cycles and per-engine figures, and the ideal is never above either;
#    ideal <= ideal_sync <= barrier-free cycles, there and on every kernel
#    with a `// bench:` line (the paper's seven) at its bench sizes.
#    QUICK=1 (the sanitizer pass) takes every third example and leaves
#    out the bench sizes (minutes each under the sanitizers).
# 5. The trace is in simulated time; a raised threshold deadlocks and is
#    reported as one; a missing target file is an error.
set -euo pipefail
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
export BFSYNC
status=0

# ---- 1. Bad target files.
for target in tests/bad_targets/*.target; do
  golden=${target%.target}.err
  set +e
  "$BFSYNC" run tests/sim/pipe.bfk -p N=1 --exec=sim --target "$target" >/dev/null 2>/tmp/sim_sh_err.$$
  rc=$?
  set -e
  if [ "$rc" != 1 ]; then
    echo "FAIL: $target: exit $rc, expected 1"
    status=1
  fi
  if [ "${UPDATE:-}" = 1 ]; then
    cp /tmp/sim_sh_err.$$ "$golden"
  elif ! diff -u "$golden" /tmp/sim_sh_err.$$; then
    echo "FAIL: $target: diagnostics differ from $golden (UPDATE=1 regenerates)"
    status=1
  fi
done
rm -f /tmp/sim_sh_err.$$

# ---- 2-5.
python3 - <<'EOF' || status=1
import glob, json, os, subprocess, sys, tempfile

bfsync = os.environ["BFSYNC"]
failures = []

def run(path, params, extra=()):
    args = [bfsync, "run", path, "--exec=sim", "--json"] + list(extra)
    for p in params:
        args += ["-p", p]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    objs = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return r.returncode, objs, " ".join(args), r.stderr

def fail(what, cmd, err=""):
    failures.append(f"{what}\n    {cmd}\n    " + err.strip().replace("\n", "\n    "))

def timing(o):
    return {k: o[k] for k in ("sync", "cycles", "ideal_cycles", "engines", "waits_executed",
                              "instructions", "bookkeeping", "barriers", "outputs_match")}

# 2. Hand-computed makespans.
for path in sorted(glob.glob("tests/sim/*.bfk")):
    for line in open(path):
        if not line.startswith("// expect:"):
            continue
        fields = line.split(":", 1)[1].split()
        params = [f for f in fields if f.split("=")[0] not in ("barrier", "barrier-free", "ideal", "target")]
        want = dict(f.split("=") for f in fields if f not in params)
        target = want.get("target", "tests/sim/round.target")
        for sync in ("barrier-free", "barrier"):
            args = [bfsync, "verify", path, "--sync=" + sync, "--target", target]
            for p in params:
                args += ["-p", p]
            r = subprocess.run(args, capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                fail(f"verify: exit {r.returncode}", " ".join(args), r.stdout + r.stderr)
        rc, objs, cmd, err = run(path, params, ["--sync=both", "--target", target])
        if rc != 0 or len(objs) != 2:
            fail(f"exit {rc}, {len(objs)} objects", cmd, err)
            continue
        for o in objs:
            if not o["outputs_match"]:
                fail("results differ from the reference", cmd)
            if o["cycles"] != int(want[o["sync"]]):
                fail(f"{o['sync']}: {o['cycles']} cycles, computed by hand {want[o['sync']]}", cmd)
            if o["ideal_cycles"] != int(want["ideal"]):
                fail(f"ideal: {o['ideal_cycles']} cycles, computed by hand {want['ideal']}", cmd)

# 3. The built-in target is the shipped file.
base = ("examples/softmax.bfk", ["R=3"])
rc1, builtin, cmd1, err1 = run(*base, ["--sync=both"])
rc2, loaded, cmd2, err2 = run(*base, ["--sync=both", "--target", "targets/trn1.target"])
if rc1 or rc2 or [timing(o) for o in builtin] != [timing(o) for o in loaded]:
    fail("the built-in target differs from targets/trn1.target", cmd1 + "\n    " + cmd2, err1 + err2)

# 4. Every example: results, determinism, the ideal.
def first_params(path):
    for line in open(path):
        if line.startswith("// params:"):
            return line.split(":", 1)[1].split()
    return []

examples = sorted(glob.glob("examples/*.bfk"))
# the sanitizer pass (QUICK=1): every third example, no bench sizes; the release pass all
quick = os.environ.get("QUICK")
for path in examples[::3] if quick else examples:
    params = first_params(path)
    rc, first, cmd, err = run(path, params, ["--sync=both"])
    if rc != 0 or len(first) != 2:
        fail(f"exit {rc}, {len(first)} objects", cmd, err)
        continue
    rc, second, _, err = run(path, params, ["--sync=both"])
    if rc != 0 or [timing(o) for o in first] != [timing(o) for o in second]:
        fail("two runs differ", cmd, err)
    for o in first:
        if not o["outputs_match"]:
            fail(f"{o['sync']}: results differ from the reference", cmd)
        if o["ideal_cycles"] is None or o["ideal_cycles"] > o["cycles"]:
            fail(f"{o['sync']}: ideal {o['ideal_cycles']} above {o['cycles']} cycles", cmd)
        if o["sync"] == "barrier-free" and not o["ideal_cycles"] <= o["ideal_sync_cycles"] <= o["cycles"]:
            fail(f"ideal_sync {o['ideal_sync_cycles']} not between the ideal and {o['cycles']} cycles", cmd)
        trn1 = {"pe", "act", "dve", "pool"} | {f"dma{q}" for q in range(16)}  # 16 DMA queues
        if o["cycles"] <= 0 or set(o["engines"]) != trn1:
            fail(f"{o['sync']}: cycles {o['cycles']}, engines {sorted(o['engines'])}", cmd)
        for name, e in o["engines"].items():
            if e["busy"] + e["stall"] > o["cycles"]:
                fail(f"{o['sync']}: engine {name} busy + stall above the makespan", cmd)

# The bench sizes of the paper's kernels, where ideal_sync is the goal's yardstick.
def bench_params(path):
    for line in open(path):
        if line.startswith("// bench:"):
            return line.split(":", 1)[1].split()
    return None

benched = [p for p in sorted(glob.glob("bench/paper/*.bfk")) + examples if bench_params(p) is not None]
for path in [] if quick else benched:
    rc, objs, cmd, err = run(path, bench_params(path))
    if rc != 0 or len(objs) != 1:
        fail(f"exit {rc}, {len(objs)} objects", cmd, err)
    elif not objs[0]["ideal_cycles"] <= objs[0]["ideal_sync_cycles"] <= objs[0]["cycles"]:
        fail(f"ideal_sync {objs[0]['ideal_sync_cycles']} not between the ideal {objs[0]['ideal_cycles']} "
             f"and {objs[0]['cycles']} cycles", cmd)

# 5. The trace in simulated time (round.target: 1 GHz, so 1 cycle = 1 ns).
with tempfile.TemporaryDirectory() as tmp:
    trace = os.path.join(tmp, "t.json")
    rc, objs, cmd, err = run("tests/sim/pipe.bfk", ["N=2"], ["--target", "tests/sim/round.target", "--trace", trace])
    if rc != 0:
        fail(f"trace run: exit {rc}", cmd, err)
    else:
        events = [e for e in json.load(open(trace))["traceEvents"] if e["ph"] == "X"]
        end = max(e["ts"] + e["dur"] for e in events)
        if abs(end - 0.524) > 1e-9:
            fail(f"trace ends at {end} us, the run took 524 cycles = 0.524 us", cmd)
        waits = [(e["args"]["engine"], e["ts"], e["dur"]) for e in events if e["name"] == "wait" and e["tid"] == 0]
        if waits[:1] != [("dma", 0.0, 0.123)]:
            fail(f"act's first wait should be 0..123 cycles on dma's counter, got {waits[:1]}", cmd)

rc, objs, cmd, err = run("tests/sim/pipe.bfk", ["N=2"], ["--mutate=raise:1"])
if rc != 1 or "deadlock: every unfinished engine is blocked" not in err or "waits for" not in err:
    fail(f"a raised threshold: exit {rc}, expected a deadlock report", cmd, err)
rc, objs, cmd, err = run("tests/sim/pipe.bfk", ["N=2"], ["--target", "tests/sim/no_such.target"])
if rc != 1 or "cannot open target file tests/sim/no_such.target" not in err:
    fail(f"a missing target file: exit {rc}", cmd, err)

for f in failures:
    print("FAIL:", f)
print(f"sim.sh: {len(examples[::3] if quick else examples)} examples, "
      f"{0 if quick else len(benched)} at bench sizes, {len(failures)} failures")
sys.exit(1 if failures else 0)
EOF
exit $status

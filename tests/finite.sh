#!/usr/bin/env bash
# finite.sh: finite hardware (issue 12): narrow counters and the machine's
# semaphores and registers.
#
# 1. Every example at each of its `// params:` lines verifies on targets
#    with 8- and 16-bit counters (targets/trn1_c8.target, trn1_c16.target)
#    and the default trn1 (32 bits), and runs with --sync=both --jitter
#    --check at its first line on the narrow targets, matching the
#    reference with 0 races.
# 2. The window is kept by back-pressure: on 8-bit counters two minimized
#    campaign seeds verify, each with an op held; on 4-bit counters
#    (targets/trn1_c4.target) a producer that would run 2^4 or more past
#    what a busy consumer last saw is held (docs/algorithm.md, section 7):
#    the oracle finds no read outside the window and counts the held op,
#    the simulator holds it too and passes, and the threads executor
#    passes; so does algorithm.md 7.3's kernel, whose consumer completes
#    nothing before its wait. (A window the protocol failed to keep fails
#    the run: tests/unit/test_sim.c, test_counter_window_held.)
# 3. `compile --resources`: the table and the JSON (per engine: semaphores,
#    registers and their limits, scratch, bookkeeping per instruction with
#    -p); a target whose semaphores or registers are too few is refused
#    with an error naming the engine and the shortfall (exit 1), never a
#    barrier; usage errors exit 2.
# No golden files: UPDATE=1 changes nothing here.
set -euo pipefail
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
export BFSYNC

python3 - <<'EOF'
import glob, json, os, re, subprocess, tempfile

bfsync = os.environ["BFSYNC"]
failures = []

def param_sets(path):
    return [l.split(":", 1)[1].split() for l in open(path) if l.startswith("// params:")] or [[]]

def pargs(params):
    return [a for kv in params for a in ("-p", kv)]

def run(args):
    return subprocess.run([bfsync] + args, capture_output=True, text=True, timeout=600)

# 1. The examples on 8, 16 and 32 bits.
for path in sorted(glob.glob("examples/*.bfk")):
    for bits in ("c8", "c16", None):
        target = ["--target", "targets/trn1_%s.target" % bits] if bits else []
        for params in param_sets(path):
            r = run(["verify", path, "--json"] + pargs(params) + target)
            if r.returncode != 0 or json.loads(r.stdout)["window"] != 0:
                failures.append("verify %s %s %s: %s" % (path, params, bits, (r.stdout + r.stderr).strip()[-300:]))
        if bits:
            r = run(["run", path, "--sync=both", "--jitter", "--check", "--json"] + pargs(param_sets(path)[0]) + target)
            if r.returncode != 0:
                failures.append("run %s %s: %s" % (path, bits, r.stderr.strip()[-300:]))

# 2. Back-pressure: dve waits once, after act has run 2 + 3 * 3 * 2 = 20
# ops, more than 2^4 - 1 past dve's knowledge, while dve is busy with its
# long fill of c; 7.3's kernel: dve waits at once.
window_kernels = {"overrun": """kernel overrun(N: int) {
  sbuf a: f32[1, 1];
  sbuf b[2]: f32[1, 1];
  sbuf c: f32[128, 4096];
  dve: fill c, 1;
  act: fill b[0], 1;
  act: fill b[1], 1;
  for i in 0 .. N {
    for j in 0 .. N {
      act: fill a, 1;
      act: scale b[j % 2], b[j % 2], 2;
    }
  }
  dve: fill b[0], 1;
}
""", "section73": """kernel section73(N: int) {
  sbuf a: f32[1, 1];
  sbuf b[2]: f32[1, 1];
  act: fill b[0], 1;
  act: fill b[1], 1;
  for i in 0 .. N {
    for j in 0 .. N {
      act: fill a, 1;
      act: scale b[j % 2], b[j % 2], 2;
    }
  }
  dve: fill b[0], 1;
}
"""}
# Two seeds of the 8-bit campaign at --scale 5, minimized: a consumer
# (dma0; pool) that waits once, after its producer (dve) ran 437 (450)
# ops in a loop the consumer skips; the oracle found the window broken
# before back-pressure.
seed_kernels = {"seed3": ("""kernel gen3(N: int, M: int, K: int) {
  hbm out Y: f32[(N + M + K + 2) * 4, (N + M + K + 2) * 4];
  hbm inout W: f32[N + M + K + 2, (N + M + K + 2) * 4];
  sbuf t2: f32[4, 4];
  sbuf c0: f32[1, 4];

  dve {
    for v4 in 0 .. N - 4 {
      for v5 in 0 .. K {
        for v6 in v4 .. K {
          max c0, c0, 0.25;
        }
      }
    }
  }
  dma: store W[N, 0], c0;
  dma: store Y[0, 0], t2;
}
""", ["N=20", "M=10", "K=15"]), "seed10": ("""kernel gen10(N: int) {
  hbm out Y: f32[(N + 2) * 4, (N + 2) * 4];
  sbuf t3: f32[4, 4];
  sbuf c0[3]: f32[1, 4];

  if (N == 2 || N > 2) {
    for v0 in 0 .. N - 4 {
      for v1 in 0 .. N {
        for v2 in v0 .. N {
          dve: max c0[(v0 + v2) % 3], c0[v0 % 3], 0.5;
        }
      }
    }
  }
  for v5 in 1 .. N {
    pool: sub c0[v5 % 3], c0[v5 % 3], 0.25;
  }
  dma3 {
    for v6 in 0 .. N - 4 {
      store Y[v6, 0], t3;
    }
  }
}
""", ["N=10"])}
with tempfile.TemporaryDirectory() as tmp:
    for name, (text, params) in seed_kernels.items():
        k = os.path.join(tmp, name + ".bfk")
        open(k, "w").write(text)
        r = run(["verify", k, "--json", "--target", "targets/trn1_c8.target"] + pargs(params))
        v = json.loads(r.stdout) if r.returncode == 0 else {}
        if v.get("window") != 0 or v.get("backpressure_held", 0) < 1:
            failures.append("8-bit %s verify: %s" % (name, (r.stdout + r.stderr)[-300:]))
    c4 = ["--target", "targets/trn1_c4.target"]
    for name, text in window_kernels.items():
        k = os.path.join(tmp, name + ".bfk")
        open(k, "w").write(text)
        for n in ("3", "5"):
            r = run(["verify", k, "-p", "N=" + n, "--json"] + c4)
            v = json.loads(r.stdout) if r.returncode == 0 else {}
            if v.get("window") != 0 or v.get("backpressure_pairs", 0) < 1 or (name == "overrun" and v.get("backpressure_held", 0) < 1):
                failures.append("4-bit %s N=%s verify: %s" % (name, n, (r.stdout + r.stderr)[-300:]))
            for ex in ("sim", "threads"):
                r = run(["run", k, "-p", "N=" + n, "--exec=" + ex, "--sync=both", "--check", "--json"] +
                        (["--jitter"] if ex == "threads" else []) + c4)
                if r.returncode != 0 or "\"races\": 0" not in r.stdout:
                    failures.append("4-bit %s N=%s %s: %s" % (name, n, ex, (r.stdout + r.stderr)[-300:]))
                elif name == "overrun" and ex == "sim" and '"backpressure_held": 0' in r.stdout.splitlines()[-1]:
                    failures.append("4-bit overrun N=%s: the simulator held no op: %s" % (n, r.stdout))

    # 3. --resources.
    r = run(["compile", "examples/matmul.bfk", "--resources", "--json", "-p", "M=2", "-p", "N=2", "-p", "K=3"])
    res = json.loads(r.stdout) if r.returncode == 0 else {}
    engines = {e["engine"]: e for e in res.get("engines", [])}
    keys = ["semaphores", "semaphores_limit", "registers", "registers_limit", "loop_depth", "bookkeeping_scalars", "shared_registers", "last_read",
            "guards", "temporaries", "scratch_bytes", "bookkeeping_per_instruction"]
    if not {"pe", "act", "dve", "pool"} <= set(engines) or any(x not in e for e in engines.values() for x in keys):
        failures.append("--resources --json: %s" % (r.stdout + r.stderr))
    else:
        pe = engines["pe"]
        # pe waits on act, dve and the dma queues that load its operands: a
        # guard per counter, 3 loop levels.
        if pe["semaphores"] < 3 or pe["guards"] != pe["semaphores"] or (pe["loop_depth"], pe["semaphores_limit"]) != (3, 0):
            failures.append("--resources pe: %s" % pe)
        if pe["registers"] != pe["loop_registers"] + pe["shared_registers"] + pe["last_read"] + pe["temporaries"]:
            failures.append("--resources registers do not add up: %s" % pe)
        # 32-bit counters: a last-read count per counter waited on; nothing spilled without a limit.
        if pe["last_read"] != pe["semaphores"] or pe["spilled"] != 0 or pe["min_registers"] > pe["registers"]:
            failures.append("--resources last read / spilled: %s" % pe)
        if not pe["bookkeeping_per_instruction"] or engines["pool"]["bookkeeping_per_instruction"] is not None:
            failures.append("--resources bookkeeping per instruction: %s" % res)
    r = run(["compile", "examples/softmax.bfk", "--resources"])
    if r.returncode != 0 or not re.search(r"^dve\s+\d+\s+\d+\s+1\s", r.stdout, re.M) or re.search(r"^dma15\s", r.stdout, re.M):
        failures.append("--resources table: %s" % (r.stdout + r.stderr))
    small = os.path.join(tmp, "small.target")
    text = open("targets/trn1.target").read()
    text = re.sub(r"^\[kind pe\].*$", "[kind pe]\nsemaphores = 1\nregisters = 4", text, count=1, flags=re.M)
    open(small, "w").write(text)
    for cmd in (["compile", "examples/matmul.bfk"], ["run", "examples/matmul.bfk", "-p", "M=1", "-p", "N=1", "-p", "K=1"]):
        r = run(cmd + ["--target", small])
        if (r.returncode != 1 or not re.search(r"engine pe waits on \d+ counters, but the target's pe engines can wait on 1", r.stderr)
                or not re.search(r"engine pe needs \d+ registers even with \d+ values in scratch .* but the target gives it 4 \(registers\)", r.stderr)):
            failures.append("too few semaphores/registers (%s): %s" % (cmd[0], r.stderr))
    for bad in (["--json"], ["-p", "M=1"], ["--resources", "--explain"], ["--resources", "-o", os.path.join(tmp, "x")]):
        r = run(["compile", "examples/matmul.bfk"] + bad)
        if r.returncode != 2:
            failures.append("compile %s: exit %d, not 2" % (" ".join(bad), r.returncode))

for f in failures[:20]:
    print("finite.sh: FAIL", f)
print("finite.sh: %d failures" % len(failures))
raise SystemExit(1 if failures else 0)
EOF

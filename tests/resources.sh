#!/usr/bin/env bash
# resources.sh: what each engine needs of the machine, and fitting it
# (issue 12; transform/resources.c, docs/algorithm.md section 7.4).
#
# 1. Golden: `bfsync compile --resources --json` at the first `// params:`
#    line of every example and of bench/paper's kernels, on trn1, equals
#    tests/golden/resources/NAME.json (UPDATE=1 rewrites; review the diff).
#    Every engine's registers add up from their parts, and with 32-bit
#    counters it keeps a last-read count per counter it waits on.
#    QUICK=1 (the sanitizer pass) takes every third kernel in 1 and 3.
# 2. Hand-counted kernels (tests/resources/*.bfk): each states its expected
#    counts in `// expect ENGINE KEY=VALUE ...` lines.
# 3. Fitting by scratch: on trn1 with the paper's registers per engine (4,
#    8, 11 for kernels nesting 1, 2, 3 loops), each paper kernel (bench/
#    paper, attention, matmul) fits with values in scratch: every engine at
#    most the limit, `verify` exact, `run --sync=both --check` on
#    the simulator and on threads (with --jitter) matching with 0 races, both charging
#    scratch operations (spills > 0; the simulator's cycles at least those
#    without the limit: a charge off the critical path costs no cycle), and
#    the C compiling with gcc -Werror -pedantic. And the campaign's
#    generated kernels on 7 registers per engine (every one spills; on 6,
#    some instructions' 4 temporaries and 3 loop registers do not fit): the
#    oracle, threads, the simulator and gcc, 0 failures.
# 4. Too small: a limit below what scratch can reach (registers) and too
#    few semaphores are refused by compile, verify and run with an error
#    naming the engine, the resource, what it needs and the limit (exit 1),
#    never a barrier; a 64-bit target keeps no last-read count.
set -euo pipefail
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
export BFSYNC

python3 - <<'EOF'
import glob, json, os, re, subprocess, tempfile

bfsync = os.environ["BFSYNC"]
update = os.environ.get("UPDATE") == "1"
golden_dir = "tests/golden/resources"
failures = []

def run(args):
    return subprocess.run([bfsync] + args, capture_output=True, text=True)

def first_params(path):
    for l in open(path):
        if l.startswith("// params:"):
            return [a for kv in l.split(":", 1)[1].split() for a in ("-p", kv)]
    return []

def limited_target(path, name, lines):
    """trn1 with `lines` added to every [kind] section."""
    text = open("targets/trn1.target").read().replace("name = trn1", "name = " + name, 1)
    text = re.sub(r"^(\[kind \w+\].*)$", lambda m: m.group(1) + "\n" + lines, text, flags=re.M)
    open(path, "w").write(text)
    return path

def adds_up(e):
    return e["registers"] == e["loop_registers"] + e["shared_registers"] + e["last_read"] + e["temporaries"]

tmp = tempfile.mkdtemp()
os.makedirs(golden_dir, exist_ok=True)

# 1. Golden --resources --json.
paper = sorted(glob.glob("bench/paper/*.bfk")) + ["examples/attention.bfk", "examples/matmul.bfk"]
# the sanitizer pass (QUICK=1): every third kernel in 1 and 3; the release pass all
quick = os.environ.get("QUICK")
kernels = sorted(glob.glob("examples/*.bfk")) + sorted(glob.glob("bench/paper/*.bfk"))
for k in kernels[::3] if quick else kernels:
    name = os.path.basename(k)[:-4] + (".paper" if k.startswith("bench/paper/") else "")
    r = run(["compile", k, "--resources", "--json"] + first_params(k))
    if r.returncode != 0:
        failures.append("compile --resources %s: %s" % (k, r.stderr[-300:]))
        continue
    golden = os.path.join(golden_dir, name + ".json")
    if update:
        open(golden, "w").write(r.stdout)
    elif not os.path.exists(golden):
        failures.append("%s is missing (run make test-update)" % golden)
    elif open(golden).read() != r.stdout:
        failures.append("--resources of %s differs from %s" % (k, golden))
    for e in json.loads(r.stdout)["engines"]:
        if not adds_up(e) or e["last_read"] != e["semaphores"] or e["spilled"] or e["min_registers"] > e["registers"]:
            failures.append("%s %s: %s" % (k, e["engine"], e))

# 2. Hand-counted kernels.
for k in sorted(glob.glob("tests/resources/*.bfk")):
    expects = [l.split()[2:] for l in open(k) if l.startswith("// expect ")]
    target = [a for l in open(k) if l.startswith("// target: ") for a in ("--target", l.split(":", 1)[1].strip())]
    r = run(["compile", k, "--resources", "--json"] + target)
    engines = {e["engine"]: e for e in json.loads(r.stdout)["engines"]} if r.returncode == 0 else {}
    if not expects or not engines:
        failures.append("%s: no expectations or no output: %s" % (k, r.stderr[-300:]))
    for engine, *pairs in expects:
        for kv in pairs:
            key, value = kv.split("=")
            if str(engines.get(engine, {}).get(key)) != value:
                failures.append("%s: %s %s = %s, expected %s" % (k, engine, key, engines.get(engine, {}).get(key), value))

# 3. The paper's kernels fit the paper's registers with values in scratch.
paper_registers = {1: 4, 2: 8, 3: 11}
for k in paper[::3] if quick else paper:
    base = json.loads(run(["compile", k, "--resources", "--json"]).stdout)
    limit = paper_registers[max(e["loop_depth"] for e in base["engines"])]
    target = limited_target(os.path.join(tmp, "paper%d.target" % limit), "trn1_paper%d" % limit, "registers = %d" % limit)
    r = run(["compile", k, "--resources", "--json", "--target", target])
    fitted = json.loads(r.stdout)["engines"] if r.returncode == 0 else []
    if (not fitted or any(e["registers"] > limit or not adds_up(e) for e in fitted)
            or not any(e["spilled"] for e in fitted)):
        failures.append("%s on %d registers: %s" % (k, limit, (r.stdout + r.stderr)[-400:]))
        continue
    r = run(["verify", k, "--json", "--target", target] + first_params(k))
    v = json.loads(r.stdout) if r.returncode == 0 else {}
    if v.get("late", 1) != 0 or v.get("races", 1) != 0 or v.get("deadlocks", 1) != 0:
        failures.append("verify %s on %d registers: %s" % (k, limit, (r.stdout + r.stderr)[-300:]))
    cycles = {}
    for ex, tgt in (("sim", target), ("sim", None), ("threads", target)):
        r = run(["run", k, "--exec=" + ex, "--sync=both", "--check", "--json"] + (["--jitter"] if ex == "threads" else []) +
                first_params(k) +
                (["--target", tgt] if tgt else []))
        lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()] if r.returncode == 0 else []
        if len(lines) != 2 or any(not o["outputs_match"] or o.get("races") != 0 for o in lines):
            failures.append("run %s --exec=%s (%s): %s" % (k, ex, tgt, (r.stdout + r.stderr)[-300:]))
            continue
        bf = next(o for o in lines if o["sync"] == "barrier-free")
        if tgt and not bf["spills"]:
            failures.append("run %s --exec=%s on %d registers charged no scratch operation" % (k, ex, limit))
        if ex == "sim":
            cycles[tgt] = bf["cycles"]
    if len(cycles) == 2 and cycles[target] < cycles[None]:
        failures.append("%s: %d cycles with scratch, %d without" % (k, cycles[target], cycles[None]))
    c = os.path.join(tmp, "k.c")
    r = run(["compile", k, "--target", target, "-o", c])
    g = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Iruntime", "-c", c,
                        "-o", os.path.join(tmp, "k.o")], capture_output=True, text=True)
    if r.returncode != 0 or g.returncode != 0 or "bfrt_spill" not in open(c).read():
        failures.append("gcc %s on %d registers: %s" % (k, limit, (r.stderr + g.stderr)[-400:]))

seven = limited_target(os.path.join(tmp, "seven.target"), "trn1_r7", "registers = 7")
spilled = 0
for seed in range(1, 4):
    g = run(["gen", "--seed", str(seed)])
    kernel = os.path.join(tmp, "gen%d.bfk" % seed)
    open(kernel, "w").write(g.stdout)
    r = run(["compile", kernel, "--resources", "--json", "--target", seven])
    spilled += sum(e["spilled"] for e in json.loads(r.stdout)["engines"]) if r.returncode == 0 else 0
r = run(["campaign", "--from", "1", "--count", "10", "--target", seven, "--regress", os.path.join(tmp, "regress"),
         "--no-minimize", "--json"])
summary = json.loads(r.stdout.splitlines()[-1]) if r.returncode == 0 else {}
if not spilled or summary.get("failures") != 0 or summary.get("kernels") != 10:
    failures.append("campaign on 7 registers (%d values spilled in seeds 1-3): %s" % (spilled, (r.stdout + r.stderr)[-400:]))

# 4. Too small: refused, naming the engine, the resource, the need and the limit.
tiny = limited_target(os.path.join(tmp, "tiny.target"), "tiny", "registers = 2\nsemaphores = 1")
for cmd in (["compile", "examples/matmul.bfk"], ["verify", "examples/matmul.bfk"] + first_params("examples/matmul.bfk"),
            ["run", "examples/matmul.bfk"] + first_params("examples/matmul.bfk")):
    r = run(cmd + ["--target", tiny])
    if (r.returncode != 1
            or not re.search(r"error: engine pe needs \d+ registers even with \d+ values in scratch \(3 loop counts", r.stderr)
            or not re.search(r"but the target gives it 2 \(registers\)", r.stderr)
            or not re.search(r"error: engine pe waits on \d+ counters, but the target's pe engines can wait on 1 \(semaphores\)", r.stderr)
            or "barrier" in r.stderr):
        failures.append("too small (%s): exit %d: %s" % (cmd[0], r.returncode, r.stderr[-500:]))
r = run(["compile", "tests/sim/pipe.bfk", "--resources", "--json", "--target", "tests/sim/round.target"])
if (r.returncode != 0 or any(e["last_read"] for e in json.loads(r.stdout)["engines"])
        or not any(e["semaphores"] for e in json.loads(r.stdout)["engines"])):
    failures.append("64-bit counters keep last-read counts: %s" % (r.stdout + r.stderr)[-300:])

for f in failures[:20]:
    print("resources.sh: FAIL", f)
print("resources.sh: %d failures" % len(failures))
raise SystemExit(1 if failures else 0)
EOF

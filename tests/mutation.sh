#!/usr/bin/env bash
# mutation.sh: mutation testing of the synchronization, judged twice.
#
# For every example (at up to four of its `// params:` lines) and random kernels
# (`bfsync gen`), every wait K of the barrier-free streams is mutated:
#  - drop:K and lower:K must be killed: by `bfsync verify` (a race by
#    happens-before) and, independently, by `bfsync run --check --jitter`
#    (the runtime's race checker, or results that differ), unless the
#    unmutated oracle runs show the mutant equivalent: at every parameter
#    set, every execution of that wait already implied by happens-before or
#    by the other waits before the same instruction, or the wait never
#    executed. A mutant is killed at the first set that kills it. A mutant
#    that verify kills where the oracle called it equivalent is an oracle bug.
#  - raise:K must be flagged late or deadlock by verify, unless the wait
#    never executed, or its threshold was below its instruction's need
#    (then the raised one is still not late): those are counted apart.
# The score is killed / non-equivalent mutants; it must be 100%, and the
# equivalent mutants are listed by kernel and wait. QUICK=1 (the sanitizer
# pass): three examples at their first set, no random kernels, verify only. UPDATE=1 skips it.
set -euo pipefail
if [[ -n ${UPDATE:-} ]]; then echo "mutation.sh: no golden files to update"; exit 0; fi
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
export BFSYNC QUICK=${QUICK:-}

python3 - <<'PY'
import concurrent.futures, glob, json, os, subprocess, sys, tempfile

bfsync = os.environ["BFSYNC"]
quick = bool(os.environ.get("QUICK"))
tmp = tempfile.mkdtemp()
failures = []

def pargs(params):
    return [a for p in params for a in ("-p", p)]

def verify(path, params, extra=()):
    r = subprocess.run([bfsync, "verify", path, "--json", *pargs(params), *extra],
                       capture_output=True, text=True, timeout=300)
    lines = r.stdout.strip().splitlines()
    return r.returncode, (json.loads(lines[-1]) if lines else None)

def run_check(path, params, mutation):
    r = subprocess.run([bfsync, "run", path, "--check", "--jitter", "--json", *pargs(params),
                        "--mutate=" + mutation], capture_output=True, text=True, timeout=300)
    lines = r.stdout.strip().splitlines()
    d = json.loads(lines[-1]) if lines else {}
    return r.returncode != 0 and (d.get("races", 0) > 0 or d.get("outputs_match") is False or not d)

def judge(path, sets, kind, k, with_run):
    """(verdict, killed_by_verify, killed_by_run), over every parameter set
    in turn: killed at the first set that kills it; equivalent only if the
    wait is implied or unexecuted at every set."""
    executed = False
    for params, base in sets:
        rc, d = verify(path, params, ["--mutate=%s:%d" % (kind, k)])
        if d is None:
            return f"no JSON from verify --mutate={kind}:{k} (exit {rc})", False, False
        unexecuted = k in base["unexecuted_waits"]
        executed |= not unexecuted
        if kind == "raise":
            if d["late"] + d["late_explained"] + d["deadlocks"] > 0:
                return "killed", True, False
            continue
        implied = unexecuted or k in base["implied_waits"]
        by_verify = rc == 1 and d["races"] > 0
        if by_verify and implied:
            return f"oracle inconsistent at {params}: verify kills a mutant of a wait it called implied", True, False
        by_run = (by_verify or not implied) and with_run and run_check(path, params, f"{kind}:{k}")
        if by_verify or by_run:
            return "killed", by_verify, by_run
        if not implied:
            if k in base.get("fallback_waits", []):
                return "conservative", False, False
            return f"{kind}:{k} survived at {params} although the wait was not implied", False, False
    if kind == "raise" and executed:
        return "loose", False, False  # threshold below its need everywhere: raising it is still exact
    return "equivalent", False, False

def param_sets(path):
    sets = [line.split(":", 1)[1].split() for line in open(path) if line.startswith("// params:")]
    return sets or [[]]

kernels = sorted(glob.glob("examples/*.bfk"))
if quick:
    kernels = kernels[:3]
else:
    for seed in (11, 22, 33, 44, 55, 66):
        path = f"{tmp}/gen{seed}.bfk"
        with open(path, "w") as f:
            subprocess.run([bfsync, "gen", "--seed", str(seed), "--size", "16"], stdout=f, check=True)
        kernels.append(path)

jobs = []
tally = {}
equivalents = []
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for path in kernels:
        sets = []
        for params in param_sets(path)[:1 if quick else 4]:
            rc, base = verify(path, params)
            if rc != 0 or base is None:
                failures.append(f"{path} {params}: the unmutated kernel fails verify")
            else:
                sets.append((params, base))
        if not sets:
            continue
        for k in range(sets[0][1]["wait_nodes"]):
            for kind in ("drop", "lower", "raise"):
                jobs.append((path, kind, k, pool.submit(judge, path, sets, kind, k, not quick)))
    by = {"verify": 0, "run": 0}
    for path, kind, k, fut in jobs:
        verdict, v, r = fut.result()
        by["verify"] += v and kind != "raise"
        by["run"] += r
        key = (kind == "raise", verdict)
        if verdict in ("killed", "equivalent", "loose", "conservative"):
            tally[key] = tally.get(key, 0) + 1
            if verdict == "equivalent" and kind != "raise":
                equivalents.append(f"{os.path.basename(path)}:{kind}:{k}")
        else:
            failures.append(f"{path}: {verdict}")

def t(raise_, verdict):
    return tally.get((raise_, verdict), 0)

killed, equiv, cons = t(False, "killed"), t(False, "equivalent"), t(False, "conservative")
nonequiv = killed + cons + sum(1 for f in failures if "survived" in f)
print(f"mutation: {len(kernels)} kernels, {len(jobs)} mutants")
print(f"  drop/lower: {killed + equiv + cons} mutants, killed {killed} (verify {by['verify']}, "
      f"run --check {by['run']}), equivalent {equiv}, conservative {cons}")
score = 100.0 * killed / nonequiv if nonequiv else 100.0
print(f"  mutation score (drop/lower): {killed}/{nonequiv} = {score:.1f}%")
print(f"  raise: killed {t(True, 'killed')} (late or deadlock), never executed {t(True, 'equivalent')}, "
      f"threshold below need {t(True, 'loose')}")
print("  equivalent (implied or never executed): " + (", ".join(equivalents) or "none"))
for f in failures:
    print("FAIL:", f)
subprocess.run(["rm", "-rf", tmp])
sys.exit(1 if failures else 0)
PY

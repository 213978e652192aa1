#!/usr/bin/env bash
# verify.sh: the exactness oracle over every kernel we have, and against
# deliberately broken synchronization.
#
# 1. Every examples/*.bfk and tests/kernels/*.bfk at each of its
#    `// params:` lines: barrier-free must show 0 races, 0 unexplained late
#    waits, 0 deadlocks (exit 0); barrier must show 0 races and 0 deadlocks.
# 2. Mutants of every example at its first parameter set: for every wait K,
#    `--mutate=drop:K` and `lower:K` must be caught (races, exit 1) unless
#    the unmutated run showed the wait equivalent (every execution already
#    implied by happens-before or by the other waits before the same
#    instruction, or never executed); `raise:K` must be caught
#    as late or deadlock unless the wait never executed or its threshold was
#    below what its instruction needed (then raising it is still exact).
# 3. The command line: usage errors exit 2; the JSON has the keys of issue 3.
# No golden files: UPDATE=1 changes nothing here.
set -euo pipefail
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
export BFSYNC

python3 - <<'EOF'
import glob, json, os, subprocess, sys

bfsync = os.environ["BFSYNC"]
failures = []
KEYS = ["kernel", "sync", "params", "instructions", "waits", "races", "early", "late",
        "late_explained", "redundant", "bookkeeping", "deadlocks"]

def param_sets(path):
    sets = [line.split(":", 1)[1].split() for line in open(path) if line.startswith("// params:")]
    return sets or [[]]

def verify(path, params, sync, extra=()):
    args = [bfsync, "verify", path, "--sync=" + sync, "--json"]
    for p in params:
        args += ["-p", p]
    args += list(extra)
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    lines = r.stdout.strip().splitlines()
    data = json.loads(lines[-1]) if lines else None
    return r.returncode, data, " ".join(args), r.stderr

def fail(what, cmd, err=""):
    failures.append(f"{what}\n    {cmd}\n    " + err.strip().replace("\n", "\n    "))

def check_kernels():
    kernels = sorted(glob.glob("examples/*.bfk")) + sorted(glob.glob("tests/kernels/*.bfk"))
    runs = 0
    for path in kernels:
        for params in param_sets(path):
            for sync in ("barrier-free", "barrier"):
                runs += 1
                rc, d, cmd, err = verify(path, params, sync)
                if d is None:
                    fail(f"no JSON (exit {rc})", cmd, err)
                    continue
                missing = [k for k in KEYS if k not in d]
                if missing:
                    fail(f"JSON lacks {missing}", cmd)
                bad = d["races"] or d["deadlocks"] or d.get("mismatches", 0)
                if sync == "barrier-free":
                    bad = bad or d["late"] or rc != 0
                if bad:
                    fail(f"{sync}: races {d['races']} late {d['late']} deadlocks {d['deadlocks']} "
                         f"exit {rc}", cmd, err)
    print(f"verify: {runs} runs over {len(kernels)} kernels")

def mutant_verdict(kind, k, base, d, rc):
    """killed | equivalent | a failure message"""
    if kind == "raise":
        if d["late"] + d["late_explained"] + d["deadlocks"] > 0:
            return "killed"
        if k in base["unexecuted_waits"]:
            return "equivalent"
        return "raised wait not flagged late: its threshold was never tight"
    implied = k in base["implied_waits"] or k in base["unexecuted_waits"]
    caught = d["races"] > 0 and rc == 1
    if caught and implied:
        return "oracle inconsistent: a wait it called implied was needed"
    if caught:
        return "killed"
    if implied:
        return "equivalent"
    return f"{kind} mutant survived although the wait was not implied"

def check_mutants():
    tally = {"killed": 0, "equivalent": 0}
    total = 0
    for path in sorted(glob.glob("examples/*.bfk")):
        params = param_sets(path)[0]
        rc, base, cmd, err = verify(path, params, "barrier-free")
        if base is None or rc != 0:
            fail("mutation baseline fails", cmd, err)
            continue
        for k in range(base["wait_nodes"]):
            for kind in ("drop", "lower", "raise"):
                total += 1
                rc, d, cmd, err = verify(path, params, "barrier-free", ["--mutate=%s:%d" % (kind, k)])
                if d is None:
                    fail(f"mutant gave no JSON (exit {rc})", cmd, err)
                    continue
                verdict = mutant_verdict(kind, k, base, d, rc)
                if verdict in tally:
                    tally[verdict] += 1
                else:
                    fail(verdict, cmd, err)
    print(f"verify: mutants {total}, killed {tally['killed']}, equivalent {tally['equivalent']}")

def check_cli():
    example = sorted(glob.glob("examples/*.bfk"))[0]
    for args in (["verify"], ["verify", example, "--bogus"], ["verify", example, "--schedules", "0"],
                 ["verify", example, "--sync=sideways"], ["verify", example, "-p", "NOPE=1"],
                 ["verify", example, "--mutate=flip:0"]):
        r = subprocess.run([bfsync] + args, capture_output=True, text=True, timeout=60)
        if r.returncode != 2:
            fail(f"usage error exited {r.returncode}", " ".join(args), r.stderr)
    r = subprocess.run([bfsync, "verify", "--help"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or "--schedules" not in r.stdout:
        fail("verify --help", "bfsync verify --help")

check_cli()
check_kernels()
check_mutants()
for f in failures:
    print("FAIL:", f)
print(f"verify: {len(failures)} failures")
sys.exit(1 if failures else 0)
EOF

#!/usr/bin/env bash
# run-main.sh: the body of `make run`, the main job. Runs the default
# example, examples/matmul.bfk (a double-buffered tiled matmul), at its
# first `// params:` set with both sync modes, on real threads and, when
# the simulator is built, on the cycle simulator; prints one table: whether
# the results match the sequential reference bit for bit, the waits
# executed, the time, and the cycles (with the ideal no synchronization
# scheme can beat). Exit status 1 if any result differs.
# Usage: run-main.sh path/to/bfsync
set -euo pipefail
cd "$(dirname "$0")/.."
bfsync=${1:-build/bfsync}
kernel=examples/matmul.bfk
params=$(sed -n 's|^// params:||p' "$kernel" | head -1)
args=$(echo "$params" | sed 's/\([A-Za-z_][A-Za-z0-9_]*=\)/-p \1/g')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

status=0
# shellcheck disable=SC2086
"$bfsync" run "$kernel" $args --sync=both --exec=threads --json >"$tmp/threads.json" || status=1
# shellcheck disable=SC2086
"$bfsync" run "$kernel" $args --sync=both --exec=sim --json >"$tmp/sim.json" 2>"$tmp/sim.err" || true

python3 - "$kernel" "$params" "$tmp/threads.json" "$tmp/sim.json" "$tmp/sim.err" <<'PY'
import json, sys
kernel, params, threads, sim, sim_err = sys.argv[1:]
rows = [json.loads(l) for f in (threads, sim) for l in open(f) if l.strip()]
print("bfsync run %s (%s): barrier baseline vs barrier-free" % (kernel, params.strip()))
print("%-8s %-13s %-6s %8s %12s %10s %10s" % ("exec", "sync", "match", "waits", "time", "cycles", "ideal"))
for r in rows:
    sim = r["exec"] == "sim"
    cycles = str(r["cycles"]) if sim else "-"
    ideal = str(r["ideal_cycles"]) if sim and r.get("ideal_cycles") is not None else "-"
    print("%-8s %-13s %-6s %8d %9.3f ms %10s %10s" % (r["exec"], r["sync"], "yes" if r["outputs_match"] else "NO",
                                                    r["waits_executed"], r["wall_ns"] / 1e6, cycles, ideal))
if not any(r["exec"] == "sim" for r in rows):
    err = open(sim_err).read().strip().splitlines()
    print("sim: not run (%s)" % (err[-1] if err else "no output"))
PY
exit $status

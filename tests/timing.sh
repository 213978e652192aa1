#!/usr/bin/env bash
# timing.sh: `bfsync run --exec=sim --timing-only` (issue 23).
#
# 1. On every example at each of its `// params:` lines, in every sync
#    mode run accepts, the timing-only run reports exactly the data-
#    executing simulator's figures: cycles, waits, instructions,
#    bookkeeping, barriers, back-pressure holds and every engine's busy and
#    stall cycles. Its JSON says timing_only true and outputs_match null,
#    and its table says that nothing was checked numerically.
# 2. Device integers are still read: MoE's counts from --input give the
#    same cycles as the checked run with that input, and different cycles
#    from the seeded counts.
# 3. A size whose data the checked run refuses (too large for this
#    machine) runs in timing-only mode, within 1 GB of memory.
# 4. Usage errors (exit 2): without --exec=sim, with --check or --output,
#    --input of a float tensor; --max-steps bounds the simulated
#    instructions (exit 1, naming the limit).
set -uo pipefail
source "$(dirname "$0")/lib.sh"

param_sets() { sed -n 's|^// params:||p' "$1" | sed 's/\([A-Za-z_][A-Za-z0-9_]*=\)/-p \1/g'; }

# The sync modes this bfsync runs (paper and unrolled once built).
modes=(barrier barrier-free)
sync_help=$("$BFSYNC" run --help | awk '/^ *--sync/ {on = 1; print; next} on && /^ *--/ {on = 0} on')
for m in paper unrolled; do
  grep -qw -- "$m" <<<"$sync_help" && modes+=("$m")
done

# ---- 1. Every example, every parameter set, every mode.
compare='
import json, sys
data, timing = (json.loads(open(f).read()) for f in sys.argv[1:3])
keys = ["cycles", "waits_executed", "instructions", "bookkeeping", "barriers", "backpressure_held", "spills",
        "engines", "ideal_cycles", "ideal_sync_cycles"]
bad = [k for k in keys if data[k] != timing[k]]
assert not bad, "differ: " + ", ".join("%s %s vs %s" % (k, data[k], timing[k]) for k in bad)
assert data["outputs_match"] is True and data["timing_only"] is False, data
assert timing["outputs_match"] is None and timing["timing_only"] is True, timing
'
runs=0
examples=(examples/*.bfk)
# the sanitizer pass (QUICK=1): four examples; the release pass every one
[[ -n ${QUICK:-} ]] && examples=(examples/matmul.bfk examples/moe.bfk examples/pipeline.bfk examples/softmax.bfk)
for f in "${examples[@]}"; do
  while read -r params; do
    for m in "${modes[@]}"; do
      # shellcheck disable=SC2086
      if ! "$BFSYNC" run "$f" $params --exec=sim --sync="$m" --json >"$tmp/data.json" 2>"$tmp/err"; then
        fail "$f $params --sync=$m: the checked run failed: $(head -2 "$tmp/err")"
        continue
      fi
      # shellcheck disable=SC2086
      if ! "$BFSYNC" run "$f" $params --exec=sim --sync="$m" --json --timing-only >"$tmp/timing.json" 2>"$tmp/err"; then
        fail "$f $params --sync=$m --timing-only failed: $(head -2 "$tmp/err")"
        continue
      fi
      python3 -c "$compare" "$tmp/data.json" "$tmp/timing.json" 2>"$tmp/err" ||
        fail "$f $params --sync=$m: $(tail -1 "$tmp/err")"
      runs=$((runs + 1))
    done
  done < <(param_sets "$f")
done
[ "$runs" -ge 40 ] || fail "only $runs example runs were compared"
"$BFSYNC" run examples/softmax.bfk -p R=2 --exec=sim --timing-only >"$tmp/out" 2>&1 || fail "softmax --timing-only table run"
grep -q "nothing was checked numerically" "$tmp/out" || fail "the table does not say that nothing was checked"

# ---- 2. Device integers are read.
printf "import struct\nh=\"{'descr': '<i4', 'fortran_order': False, 'shape': (8, 1), }\"\nh=h+' '*(63-len(h))+'\\\\n'\nopen('%s/c.npy','wb').write(b'\\\\x93NUMPY\\\\x01\\\\x00'+struct.pack('<H',len(h))+h.encode()+struct.pack('<8i',4,0,1,3,0,2,4,1))\n" "$tmp" | python3
cyc() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["cycles"])' "$1"; }
"$BFSYNC" run examples/moe.bfk --exec=sim --json --input C="$tmp/c.npy" >"$tmp/d.json" 2>"$tmp/err" || fail "moe --input: $(head -2 "$tmp/err")"
"$BFSYNC" run examples/moe.bfk --exec=sim --json --input C="$tmp/c.npy" --timing-only >"$tmp/t.json" 2>"$tmp/err" ||
  fail "moe --input --timing-only: $(head -2 "$tmp/err")"
"$BFSYNC" run examples/moe.bfk --exec=sim --json --timing-only >"$tmp/s.json" 2>/dev/null
[ "$(cyc "$tmp/d.json")" = "$(cyc "$tmp/t.json")" ] || fail "moe with --input C: timing-only cycles differ from the checked run's"
[ "$(cyc "$tmp/t.json")" != "$(cyc "$tmp/s.json")" ] || fail "moe: the counts from --input did not change the timing-only cycles"

# ---- 3. A size the checked run cannot hold.
if "$BFSYNC" run examples/rmsnorm.bfk -p R=262144 --exec=sim >/dev/null 2>"$tmp/err"; then
  fail "rmsnorm R=262144: the checked run was expected to refuse the size"
fi
grep -q "the run needs" "$tmp/err" || fail "rmsnorm R=262144: no size message: $(head -1 "$tmp/err")"
# peak resident memory of the child, in KB (python's getrusage: no extra package)
python3 - "$BFSYNC" >"$tmp/kb" 2>"$tmp/time" <<'PY' || fail "rmsnorm R=262144 --timing-only failed: $(head -2 "$tmp/time")"
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], "run", "examples/rmsnorm.bfk", "-p", "R=262144", "--exec=sim", "--timing-only"],
                   stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r.returncode)
PY
kb=$(cat "$tmp/kb")
[ "${kb:-0}" -lt 1048576 ] 2>/dev/null || fail "rmsnorm R=262144 --timing-only used ${kb} KB (limit 1 GB)"

# ---- 4. Usage errors and the instruction bound.
expect() {
  local want=$1 text=$2
  shift 2
  "$BFSYNC" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [ "$got" = "$want" ] || fail "bfsync $*: exit $got, expected $want"
  grep -qF -- "$text" "$tmp/err" || fail "bfsync $*: stderr lacks '$text': $(head -2 "$tmp/err")"
}
expect 2 "give --exec=sim" run examples/softmax.bfk --timing-only
expect 2 "--check and --output" run examples/softmax.bfk --exec=sim --timing-only --check
expect 2 "--check and --output" run examples/softmax.bfk --exec=sim --timing-only --output Y="$tmp/y.npy"
expect 2 "only i32 tensors take inputs" run examples/moe.bfk --exec=sim --timing-only --input X="$tmp/c.npy"
expect 1 "instructions (the run's limit)" run examples/softmax.bfk -p R=64 --exec=sim --timing-only --max-steps 10

finish "$runs example runs, timing-only = data-executing cycles"

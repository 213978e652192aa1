#!/usr/bin/env bash
# hostile.sh: kernels from hostile testing (issue 9) that must stop with a
# clear error, never a signal, a hang or an internal error.
#
# Each tests/hostile/NAME.bfk has `// params:` lines, one `// error:` line,
# one `// line:` line and at most one `// args:` line (more options). At every parameter set, `bfsync verify` (both
# sync modes) and `bfsync run` (both modes, threads with --check, then
# --exec=sim) must exit 1 with a message containing the error text and
# naming the line (FILE:LINE:COL: from verify, "line LINE:" from run).
# Then a kernel of 150,000 straight-line ops must run. Kernels that must pass go to
# tests/regress/ instead. No golden files: UPDATE=1 skips it.
set -u
if [[ -n ${UPDATE:-} ]]; then echo "hostile.sh: no golden files to update"; exit 0; fi
cd "$(dirname "$0")/.."
: "${BFSYNC:?BFSYNC must name the bfsync binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 runs=0

expect_error() { # want, line, command...
  local want=$1 line=$2 status; shift 2
  timeout 60 "$BFSYNC" "$@" >"$tmp/out" 2>"$tmp/err"
  status=$?
  runs=$((runs + 1))
  if [[ $status != 1 ]]; then
    echo "hostile.sh: FAIL: bfsync $* exited $status, not 1: $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  elif ! grep -qF -- "$want" "$tmp/err"; then
    echo "hostile.sh: FAIL: bfsync $*: no '$want' in: $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  elif ! grep -qE -- "(:$line:[0-9]+: error|line $line:)" "$tmp/err"; then
    echo "hostile.sh: FAIL: bfsync $*: the error does not name line $line: $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  elif grep -q "internal error" "$tmp/err"; then
    echo "hostile.sh: FAIL: bfsync $*: internal error: $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  fi
}

for k in tests/hostile/*.bfk; do
  want=$(sed -n 's|^// error: ||p' "$k" | head -1)
  line=$(sed -n 's|^// line: ||p' "$k" | head -1)
  read -r -a extra < <(sed -n 's|^// args: ||p' "$k" | head -1; echo)
  [[ -n $want && -n $line ]] || { echo "hostile.sh: FAIL: $k has no '// error:' or '// line:' line"; failures=$((failures + 1)); continue; }
  while IFS= read -r set; do
    args=()
    for kv in $set; do args+=(-p "$kv"); done
    args+=("${extra[@]}")
    for sync in barrier-free barrier; do
      expect_error "$want" "$line" verify "$k" "${args[@]}" --sync=$sync
      expect_error "$want" "$line" run "$k" "${args[@]}" --sync=$sync --check
      expect_error "$want" "$line" run "$k" "${args[@]}" --sync=$sync --exec=sim
    done
  done < <(sed -n 's|^// params:||p' "$k")
done

# 150,000 straight-line ops on one engine: the engine function's stack
# once grew with every op (a compound literal each) and overflowed.
python3 - "$tmp/long.bfk" <<'PY'
import sys
# (max, not add: 150,000 f32 additions drift 1.6e-3 from the exact sum, which
# the f64 reference rightly reports; this test is about the stack.)
body = "\n".join("  dve: max a, a, b;" for _ in range(150000))
open(sys.argv[1], "w").write("kernel long_line(N: int) {\n  hbm in X: f32[4, 4];\n  hbm out Y: f32[4, 4];\n"
    "  sbuf a: f32[4, 4];\n  sbuf b: f32[4, 4];\n  dma: load a, X[0, 0];\n  dma: load b, X[0, 0];\n" + body +
    "\n  dma: store Y[0, 0], a;\n}\n")
PY
runs=$((runs + 1))
if ! timeout 120 "$BFSYNC" run "$tmp/long.bfk" -p N=1 >"$tmp/out" 2>"$tmp/err"; then
  echo "hostile.sh: FAIL: 150,000 straight-line ops: $(tail -c 300 "$tmp/err")"
  failures=$((failures + 1))
fi

# Conditionals in a row: the emitted C grows linearly with them (it once
# doubled with each, so 32 never finished compiling).
runs=$((runs + 1))
if ! timeout 60 "$BFSYNC" compile tests/kernels/branch_chain.bfk -o "$tmp/chain.c" 2>"$tmp/err"; then
  echo "hostile.sh: FAIL: compile of 32 conditionals in a row: $(tail -c 300 "$tmp/err")"
  failures=$((failures + 1))
elif (( $(wc -c <"$tmp/chain.c") > 1000000 )); then
  echo "hostile.sh: FAIL: 32 conditionals in a row compile to $(wc -c <"$tmp/chain.c") bytes of C"
  failures=$((failures + 1))
fi

# Memory follows the live state in run too: the f64 reference once took
# an arena block per instruction (266 bytes each, 2.4 GB at 9 million).
# On the simulator, which keeps a completion stamp per op, ideal_sync's
# clocks (transform/oracle.c) must not add one per instruction (about 180
# bytes each on trn1): at most 200 bytes per iteration of pingpong in all.
runs=$((runs + 1))
if ! python3 - "$BFSYNC" <<'PY'
import os, subprocess, sys
def peak_kb(n, *extra):
    cmd = [sys.argv[1], "run", "examples/pingpong.bfk", "-p", f"N={n}", "--sync=barrier-free", *extra]
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if status:
        sys.exit(f"{' '.join(cmd)} failed")
    return usage.ru_maxrss
small, large = peak_kb(10000), peak_kb(200000)
if large >= 2 * small:
    sys.exit(f"run's memory grows with the dynamic instructions: {small} KB at N=10000, {large} KB at N=200000")
small, large = peak_kb(10000, "--exec=sim", "--json"), peak_kb(100000, "--exec=sim", "--json")
if (large - small) * 1024 >= 200 * (100000 - 10000):
    sys.exit(f"run --exec=sim's memory grows by more than 200 bytes per iteration: {small} KB at N=10000, {large} KB at N=100000")
PY
then
  failures=$((failures + 1))
fi

# The default --max-steps stops 2^64 iterations too, in seconds, and the
# limit's own bounds are usage errors.
expect_error "more than the 100000000 steps" 77 verify tests/hostile/deep_loops.bfk -p N=2 --schedules 1
for bad in 0 -1 9223372036854775808 x; do
  runs=$((runs + 1))
  "$BFSYNC" run tests/hostile/deep_loops.bfk -p N=2 --max-steps "$bad" >/dev/null 2>"$tmp/err"
  status=$?
  if [[ $status != 2 ]] || ! grep -q -- "--max-steps" "$tmp/err"; then
    echo "hostile.sh: FAIL: --max-steps $bad exited $status: $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  fi
done

echo "hostile.sh: $runs runs"
[[ $failures == 0 ]] || { echo "hostile.sh: $failures failures"; exit 1; }
echo "hostile.sh: ok"

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

# `// params:` lines: --all-params runs every one (it once ran the first 64
# and dropped the rest without a word); a bad line is an error of the
# kernel file, at the line, exit 1; and --output or --trace, which keep one
# run, are refused when several lines would each overwrite them.
{
  for n in $(seq 0 65); do echo "// params: N=$n"; done
  printf 'kernel lines(N: int) {\n  hbm in X: f32[1, 1];\n  hbm out Y: f32[1, 1];\n  sbuf a: f32[1, 1];\n'
  printf '  dma: load a, X[0, 0];\n  for i in 0 .. N { act: mul a, a, 0.5; }\n  dma: store Y[0, 0], a;\n}\n'
} >"$tmp/lines.bfk"
runs=$((runs + 1))
"$BFSYNC" run "$tmp/lines.bfk" --all-params --json >"$tmp/out" 2>"$tmp/err"
if [[ $? != 0 || $(grep -c '"kernel"' "$tmp/out") != 66 ]]; then
  echo "hostile.sh: FAIL: --all-params ran $(grep -c '"kernel"' "$tmp/out") of 66 \`// params:\` lines: $(head -c 300 "$tmp/err")"
  failures=$((failures + 1))
fi
printf '// params: N=1 N=2\n' | cat - "$tmp/lines.bfk" >"$tmp/twice.bfk"
for all in "" --all-params; do
  expect_error "in this \`// params:\` line: parameter 'N' given twice" 1 run "$tmp/twice.bfk" $all
  grep -q "^ *\^~~~~~~$" "$tmp/err" || { echo "hostile.sh: FAIL: no caret under the bad \`// params:\` line"; failures=$((failures + 1)); }
done
for keep in "--output Y=$tmp/y.npy" "--trace $tmp/t.json"; do
  runs=$((runs + 1))
  "$BFSYNC" run "$tmp/lines.bfk" --all-params $keep >/dev/null 2>"$tmp/err"
  status=$?
  if [[ $status != 2 ]] || ! grep -q -- "--all-params runs the 66 lines" "$tmp/err"; then
    echo "hostile.sh: FAIL: --all-params $keep exited $status: $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  fi
done

# A tile of more slots than the oracle tracks (4,194,304 tile slots and
# tensor tiles in all) on a target without [limits] to stop it first:
# verify aborted with "internal error: oracle: bookkeeping array of length
# ..." (or blamed a 1 x 1 tensor); now an error at the tile. run, whose
# ideal-cycles column uses the oracle, runs it with "-" there.
cat >"$tmp/slots.bfk" <<'K'
kernel oracle_slots(N: int) {
  hbm in X: f32[1, 1];
  hbm out Y: f32[1, 1];
  sbuf x[4194305]: f32[1, 1];
  sbuf y: f32[1, 1];
  dma: load y, X[0, 0];
  for i in 0 .. N {
    act: exp x[i * 7919 % 4194305], y;
    dma1: store Y[0, 0], x[i * 7919 % 4194305];
  }
}
K
expect_error "tile 'x' is too large for the oracle to track: its 4194305 slots of 1 cells take it past 4194304 tile and tensor cells in all" 4 \
  verify "$tmp/slots.bfk" -p N=2 --target tests/sim/round.target
runs=$((runs + 1))
if ! "$BFSYNC" run "$tmp/slots.bfk" N=2 --target tests/sim/round.target --exec=sim --sync=both >"$tmp/out" 2>"$tmp/err" ||
  ! grep -qE "^barrier-free +yes .* - " "$tmp/out"; then
  echo "hostile.sh: FAIL: run --exec=sim of a tile the oracle cannot track: $(head -c 300 "$tmp/err")"
  failures=$((failures + 1))
fi

# An option is never ignored without a word: each that goes with one form
# of a command only is a usage error with the other, and so is a second
# value for a one-valued option (these ran, ignoring one of them); and a
# campaign on a target without the engines its kernels name is refused
# (it reported every kernel as a failure).
for bad in "campaign --count 1 --dry-run" "campaign --count 1 --instructions 2" "campaign --count 1 --engines core" \
  "campaign --exhaustive --from 5 --dry-run" "campaign --exhaustive --no-minimize --dry-run" \
  "campaign --exhaustive --mutate=drop:0 --dry-run" "run examples/softmax.bfk --exec=sim --jitter" \
  "compile examples/softmax.bfk --emit=ir --explain" "compile examples/softmax.bfk --header --sync=barrier" \
  "compile examples/softmax.bfk --header --emit=ir" "compile examples/softmax.bfk --resources --emit=ir" \
  "compile examples/softmax.bfk -o $tmp/a.c -o $tmp/b.c" "run examples/softmax.bfk --seed 1 --seed=2" \
  "verify examples/softmax.bfk -p R=1 --sync=barrier --sync=barrier-free" "ops extra" \
  "campaign --count 2 --size 5 --target tests/sim/round.target" \
  "campaign --exhaustive --instructions 1 --target tests/sim/round.target"; do
  runs=$((runs + 1))
  "$BFSYNC" $bad >/dev/null 2>"$tmp/err"
  status=$?
  if [[ $status != 2 ]] || ! grep -qE "go with|not with|simulator's times|given twice|takes no FILE|which target round lacks" "$tmp/err"; then
    echo "hostile.sh: FAIL: bfsync $bad exited $status: $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  fi
done

# Names of any length reach every output whole: a 300-character kernel name
# once broke the JSON of run --sync=both --trace (a 256-byte buffer cut the
# name it searched for), and timeline refused the trace's long names.
sed "s/kernel softmax/kernel $(printf 'k%.0s' {1..300})/" examples/softmax.bfk >"$tmp/long_name.bfk"
runs=$((runs + 1))
if ! "$BFSYNC" run "$tmp/long_name.bfk" R=1 --sync=both --trace "$tmp/long.json" >/dev/null 2>"$tmp/err" ||
  ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/long.json" 2>>"$tmp/err" ||
  ! "$BFSYNC" timeline "$tmp/long.json" -o "$tmp/long.svg" 2>>"$tmp/err"; then
  echo "hostile.sh: FAIL: a trace of a kernel with a 300-character name: $(tail -c 300 "$tmp/err")"
  failures=$((failures + 1))
fi

# A title that is not UTF-8 (given, or the trace's file name by default)
# is drawn with '?' for its bad bytes: it once made the SVG malformed XML.
"$BFSYNC" run examples/softmax.bfk R=1 --trace "$tmp/$(printf 'bad\xff.json')" >/dev/null
for title in --title="$(printf 'a\xffb \xed\xa0\x80 <&>')" ""; do
  runs=$((runs + 1))
  if ! "$BFSYNC" timeline "$tmp/$(printf 'bad\xff.json')" -o "$tmp/t.svg" ${title:+"$title"} 2>"$tmp/err" ||
    ! python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/t.svg" 2>>"$tmp/err"; then
    echo "hostile.sh: FAIL: timeline with a title that is not UTF-8 (${title:-the file name}): $(tail -c 300 "$tmp/err")"
    failures=$((failures + 1))
  fi
done

# A loop with an empty body still runs its iterations: verify counts them
# toward --max-steps as run's reference does (verify skipped them and said
# ok where run stopped).
printf 'kernel empty_loop(N: int) {\n  sbuf t: f32[1, 1];\n  for i in 0 .. N {\n  }\n  dve: fill t, 1.0;\n}\n' >"$tmp/empty_loop.bfk"
expect_error "more than the 100000000 steps" 3 verify "$tmp/empty_loop.bfk" -p N=4611686018427387904
expect_error "more than the 100000000 steps" 3 run "$tmp/empty_loop.bfk" -p N=4611686018427387904

# gen writes no kernel larger than the commands read (256 MiB): its --size
# limit once allowed 10,000,000 instructions, some 730 MB. (3 s; not under QUICK.)
if [[ -z ${QUICK:-} ]]; then
  runs=$((runs + 1))
  bytes=$("$BFSYNC" gen --seed 18446744073709551615 --size 2000000 | wc -c)
  if (( bytes > 256 * 1024 * 1024 )); then
    echo "hostile.sh: FAIL: gen --size 2000000 writes $bytes bytes, over the 256 MiB a kernel file may have"
    failures=$((failures + 1))
  fi
  expect_usage() { "$BFSYNC" "$@" >/dev/null 2>&1; [[ $? == 2 ]] || { echo "hostile.sh: FAIL: bfsync $* is not a usage error"; failures=$((failures + 1)); }; }
  expect_usage gen --seed 1 --size 2000001
fi

echo "hostile.sh: $runs runs"
[[ $failures == 0 ]] || { echo "hostile.sh: $failures failures"; exit 1; }
echo "hostile.sh: ok"

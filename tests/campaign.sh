#!/usr/bin/env bash
# campaign.sh: the CI differential campaign and the regression kernels.
#
# 1. `bfsync campaign` over 300 random kernels (seeds 1..300, size 12): the
#    oracle, threads with jitter and the race checker, the simulator, and
#    gcc on every seed (the two sync modes in turn), every result compared
#    bit for bit with the reference and within bounds with the f64
#    reference (as many f64 checks as runs). All must pass; a failing seed is
#    minimized into tests/regress/seed-S.bfk, to be committed with the fix.
# 2. The campaign must catch a broken synchronization: with the test-only
#    --mutate=drop:0 some seeds fail, exit 1, and are minimized into a
#    scratch directory as kernels that still check and still fail.
#    The proof's validator checks every kernel's barrier-free C when
#    build/proof/bfcheck is built (BFCHECK), and rejects none.
# 3. The command line: usage errors, --help, the JSON keys.
# 4. Every tests/regress/*.bfk at each `// params:` line: verify (both sync
#    modes) and run --sync=both --jitter --check. A kernel marked
#    `// status: open` reproduces a known, unfixed bug: it must still fail
#    (reported, not fatal); when it passes, the marker must go.
# QUICK=1 (the sanitizer pass): 40 seeds, gcc on every 10th. No golden
# files: UPDATE=1 skips it.
set -euo pipefail
if [[ -n ${UPDATE:-} ]]; then echo "campaign.sh: no golden files to update"; exit 0; fi
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

count=300 gcc_every=1
[[ -n ${QUICK:-} ]] && count=40 gcc_every=10
echo "campaign: $count seeds, gcc every $gcc_every"
if ! "$BFSYNC" campaign --from 1 --count $count --gcc-every $gcc_every >"$scratch/summary" 2>"$scratch/log"; then
  echo "FAIL: the CI campaign failed; the failing seeds are minimized into tests/regress/seed-S.bfk:"
  cat "$scratch/summary" "$scratch/log"
  failures=$((failures + 1))
fi
grep -E "kernels|waits checked|ragged|failures|sim exceptions|time" "$scratch/summary" || true
# Ragged stores make waits the ragged fallback explains (harness/check.c
# accepts those and no other): the CI seeds must meet some.
ragged=$(sed -n 's/^  late, by a fallback *\([0-9]*\) .*/\1/p' "$scratch/summary")
[[ -n $ragged && $ragged -gt 0 ]] || { echo "FAIL: no late wait of the ragged fallback in the CI campaign"; failures=$((failures + 1)); }
grep -q "kernels               $count\$" "$scratch/summary" || { echo "FAIL: not $count kernels"; failures=$((failures + 1)); }
# Every run that matched the reference bit for bit was compared with the f64
# reference too: as many f64 checks as thread, simulator and gcc runs.
runs=$(sed -n 's/^  thread runs *\([0-9]*\) .*gcc runs \([0-9]*\), sim runs \([0-9]*\)$/\1 + \2 + \3/p' "$scratch/summary")
f64=$(sed -n 's/^  f64 checks *\([0-9]*\) .*/\1/p' "$scratch/summary")
if [[ -z $runs || -z $f64 ]] || (($(($runs)) == 0 || f64 != $(($runs)))); then
  echo "FAIL: $f64 f64 checks for $runs runs"; failures=$((failures + 1))
fi
# The proof's validator ran on every kernel's barrier-free C (the path
# `bfsync verify` takes) when its checker is built: none rejected, each
# kernel checked or counted as skipped (above the checker's bound, a
# gather or a strided region, outside the model, or waits that use a
# conservative fallback).
read -r vchecked vrejected vskipped < <(sed -n 's/^  proof validator *\([0-9]*\) kernels checked, \([0-9]*\) rejected, \([0-9]*\) skipped.*/\1 \2 \3/p' "$scratch/summary")
if [[ -x ${BFCHECK:-build/proof/bfcheck} ]]; then
  if [[ -z ${vchecked:-} ]] || ((vrejected != 0 || vchecked + vskipped != count || vchecked == 0)); then
    echo "FAIL: the proof validator checked ${vchecked:-?} and skipped ${vskipped:-?} of $count kernels, rejected ${vrejected:-?}"
    failures=$((failures + 1))
  fi
  echo "proof validator: $vchecked kernels checked, $vskipped skipped (above its bound, outside the model, or a fallback)"
fi
# A checker that rejects everything fails every kernel at the validator
# stage: the campaign's call can fail (seeds 4 and 5 are inside the model:
# no stride, gather or fallback).
printf '#!/bin/sh\necho "bfcheck: rejected (a stand-in checker)"\nexit 1\n' >"$scratch/reject.sh"
chmod +x "$scratch/reject.sh"
if BFSYNC_BFCHECK=$scratch/reject.sh "$BFSYNC" campaign --from 4 --count 2 --gcc-every 0 --json --regress "$scratch/none" >"$scratch/rejected" 2>/dev/null; then
  echo "FAIL: the campaign passed with a checker that rejects every kernel"; failures=$((failures + 1))
fi
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["validator_checks"] == 2 and d["validator_failures"] == 2 and d["failures"] == 2, d
' "$scratch/rejected" || { echo "FAIL: a rejecting checker is not counted: $(cat "$scratch/rejected")"; failures=$((failures + 1)); }

mkdir "$scratch/mutants"
if "$BFSYNC" campaign --from 1 --count 6 --gcc-every 0 --mutate=drop:0 --regress "$scratch/mutants" \
    >"$scratch/mutant-summary" 2>&1; then
  echo "FAIL: the campaign did not catch dropped waits"
  failures=$((failures + 1))
fi
minimized=("$scratch"/mutants/seed-*.bfk)
if [[ ! -e ${minimized[0]} ]]; then
  echo "FAIL: no minimized kernel for the failing mutant seeds"
  failures=$((failures + 1))
else
  for f in "${minimized[@]}"; do
    params=$(grep -m1 '^// params:' "$f" | cut -d: -f2-)
    args=(); for p in $params; do args+=(-p "$p"); done
    "$BFSYNC" check "$f" || { echo "FAIL: $f does not check"; failures=$((failures + 1)); }
    # the campaign's seed also made the device integers (C) the failure was found with
    seed=${f##*/seed-}; seed=${seed%.bfk}
    if "$BFSYNC" verify "$f" "${args[@]}" --seed "$seed" --mutate=drop:0 >/dev/null 2>&1; then
      echo "FAIL: $f no longer fails under --mutate=drop:0"; failures=$((failures + 1))
    fi
  done
  echo "mutant campaign: caught, ${#minimized[@]} kernels minimized (largest $(wc -l "${minimized[@]}" | sort -n | tail -2 | head -1 | awk '{print $1}') lines)"
fi

# The command line: usage errors exit 2, --help 0, --json has its keys.
for bad in "--count 0" "--bogus" "--jobs 999" "--mutate=flip:0" "--size" "--instructions 4 --exhaustive"; do
  # shellcheck disable=SC2086
  if "$BFSYNC" campaign $bad >/dev/null 2>&1; then status=0; else status=$?; fi
  [[ $status == 2 ]] || { echo "FAIL: bfsync campaign $bad exited $status, not 2"; failures=$((failures + 1)); }
done
"$BFSYNC" campaign --help | grep -q -- "--gcc-every" || { echo "FAIL: campaign --help"; failures=$((failures + 1)); }
"$BFSYNC" campaign --from 7 --count 2 --gcc-every 0 --json | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
keys = ["kernels", "instructions", "oracle_waits", "thread_waits", "schedules", "failures", "sim_exceptions", "f64_checks",
        "late_fallback", "validator_checks", "validator_failures", "validator_skips", "seconds"]
assert all(k in d for k in keys) and d["kernels"] == 2 and d["failures"] == 0, d
' || { echo "FAIL: campaign --json"; failures=$((failures + 1)); }

# Regression kernels.
regress_one() { # file, params...: 0 when everything passes
  local f=$1; shift
  local args=(); for p in "$@"; do args+=(-p "$p"); done
  local sync
  for sync in barrier-free barrier; do # the emitted C passes gcc -Werror, as in the campaign
    "$BFSYNC" compile "$f" --sync=$sync -o "$scratch/regress.c" 2>/dev/null &&
      gcc -std=c99 -Wall -Wextra -Werror -Iruntime -c "$scratch/regress.c" -o "$scratch/regress.o" 2>/dev/null || return 1
  done
  "$BFSYNC" verify "$f" "${args[@]}" --sync=barrier-free >/dev/null 2>&1 &&
    "$BFSYNC" verify "$f" "${args[@]}" --sync=barrier >/dev/null 2>&1 &&
    "$BFSYNC" run "$f" "${args[@]}" --sync=both --jitter --check >/dev/null 2>&1
}
nregress=0
for f in tests/regress/*.bfk; do
  [[ -e $f ]] || continue
  open=0; grep -q '^// status: open' "$f" && open=1
  while IFS= read -r line; do
    nregress=$((nregress + 1))
    # shellcheck disable=SC2086
    if regress_one "$f" ${line#// params:}; then
      [[ $open == 1 ]] && { echo "FAIL: $f ($line) passes now: remove its '// status: open' line"; failures=$((failures + 1)); }
    elif [[ $open == 1 ]]; then
      echo "known bug (open): $f ($line)"
    else
      echo "FAIL: regression $f ($line)"; failures=$((failures + 1))
    fi
  done < <(grep '^// params:' "$f" || echo "// params:")
done
echo "regression kernels: $nregress runs"

[[ $failures == 0 ]] || { echo "campaign.sh: $failures failures"; exit 1; }
echo "campaign.sh: ok"

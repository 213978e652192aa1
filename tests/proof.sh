#!/usr/bin/env bash
# proof.sh: the check of what runs against the Coq proof (docs/proof.md).
#
# build/proof/bfcheck (from `make proof`) rebuilds the kernel as a value
# of the Coq model (reads and writes from runtime/ops.def's table, not from
# deps.c), interprets the C that bfsync emits (the code `bfsync run`
# JITs), compares every op and operand with the model's trace, and runs
# the extracted validator on exactly the emitted waits: its acceptance
# makes them exact by theorem (never early, never late, no deadlock;
# Validate.v, Extract.v).
# 1. Every examples/*.bfk and tests/kernels/*.bfk at each of its
#    `// params:` lines, and PROOF_COUNT generated kernels (`bfsync gen`,
#    seeds from PROOF_FROM), each through `bfsync verify --json`, the path
#    the campaign and users take: the validator must say exact. Device
#    integers take verify's values (bfsync run's defaults for --seed 1);
#    parameters at both ends of the 64-bit range are checked like any.
#    Views, element slices and ragged tails are in the model; gathers by
#    run-time index and strided regions are not yet, and their runs are
#    counted apart, as are runs above the checker's instance bound and runs
#    whose waits use a conservative fallback (late by design, named by
#    `compile --explain`; the validator takes exact waits only).
# 2. The check can fail: the emitted C with one wait raised by 1, one
#    lowered by 1, one op dropped, one operand changed must each be
#    rejected (exit 1), and so must a view's start moved by one and a
#    ragged extent clipped to one less; dropping each wait of matmul in turn, the validator
#    must reject some drops (those no other wait implies); bad input is a
#    usage error (exit 2). tests/proof_mutation.sh breaks bfsync itself.
# 3. check_assumptions.sh rejects a development with an assumption, or
#    with a theorem that Assumptions.v does not list.
# 4. The runtime's bfrt_counter_extend equals the extracted extend of
#    Narrow.v (proved exact in the window) on edge and random cases.
# Defaults: 300 generated kernels of `bfsync gen`'s default size (QUICK=1,
# the sanitizer pass: 60). The long run: PROOF_COUNT=3000 bash
# tests/proof.sh; PROOF_SIZE=200 makes larger kernels. No golden files.
set -u
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
BFCHECK=${BFCHECK:-build/proof/bfcheck}
COUNT=${PROOF_COUNT:-300}
[[ -n ${QUICK:-} ]] && COUNT=${PROOF_COUNT:-60}
FROM=${PROOF_FROM:-1}
SIZE=${PROOF_SIZE:-40}
[[ -x $BFSYNC ]] || { echo "proof.sh: FAIL: $BFSYNC is not an executable" >&2; exit 1; }
[[ -x $BFCHECK ]] || { echo "proof.sh: FAIL: $BFCHECK is missing: run make proof" >&2; exit 1; }
export BFSYNC_BFCHECK=$BFCHECK
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 kernels=0 waits=0 exact=0 device=0 skipped=0 unwrapped=0 gathers=0 strided=0 fallbacks=0

fail() {
  echo "proof.sh: FAIL: $*" >&2
  failures=$((failures + 1))
}

# check FILE PARAMS...: verify one run; the validator must say exact.
check() {
  local file=$1 kv args=()
  shift
  for kv in "$@"; do args+=(-p "$kv"); done
  "$BFSYNC" verify "$file" "${args[@]}" --schedules 1 --json >"$tmp/out" 2>"$tmp/err"
  local status=$? json
  json=$(tail -1 "$tmp/out")
  # a run above the checker's instance limit (harness/proof_check.h) is
  # counted, and so is one with a gather by run-time index or a strided
  # region, the forms outside the model (transform/ir_dump.c,
  # ir_dump_outside), and one whose waits use a conservative fallback
  if [[ $status == 0 && $json == *'"validator": "skipped"'* ]]; then
    case $json in
    *'"validator_detail": "gathers'*) gathers=$((gathers + 1)) ;;
    *'"validator_detail": "strided'*) strided=$((strided + 1)) ;;
    *'"validator_detail": "its waits use a conservative fallback'*) fallbacks=$((fallbacks + 1)) ;;
    *) skipped=$((skipped + 1)) ;;
    esac
    return
  fi
  if [[ $status != 0 || $json != *'"validator": "exact"'* ]]; then
    fail "$file $*: verify exited $status: $(sed -n 's/.*"validator": "\([a-z-]*\)".*"validator_detail": \(.*\)}$/\1: \2/p' <<<"$json") $(head -3 "$tmp/err")"
    return
  fi
  kernels=$((kernels + 1))
  [[ $json == *'"device": {'* ]] && device=$((device + 1))
  [[ $json == *' unwrapped yes"'* ]] && unwrapped=$((unwrapped + 1))
  read -r w e < <(sed -n 's/.*"validator_detail": "instances [0-9]* waits \([0-9]*\) exact \([0-9]*\) .*/\1 \2/p' <<<"$json")
  waits=$((waits + ${w:-0})) exact=$((exact + ${e:-0}))
}

for f in examples/*.bfk tests/kernels/*.bfk; do
  while read -r params; do
    # shellcheck disable=SC2086
    check "$f" $params
  done < <(sed -n 's#^// params:##p' "$f")
done

for seed in $(seq "$FROM" $((FROM + COUNT - 1))); do
  "$BFSYNC" gen --seed "$seed" --size "$SIZE" >"$tmp/gen.bfk" || { fail "gen --seed $seed"; continue; }
  # shellcheck disable=SC2046
  check "$tmp/gen.bfk" $("$BFSYNC" gen --seed "$seed" --size "$SIZE" --params)
done

# 2. Broken code must be caught.
"$BFSYNC" compile --emit=proof examples/matmul.bfk >"$tmp/m.dump" || fail "compile --emit=proof matmul"
"$BFSYNC" compile examples/matmul.bfk >"$tmp/m.c" || fail "compile matmul"
expect() {
  local want=$1 what=$2
  shift 2
  "$BFCHECK" "$@" >/dev/null 2>&1
  local got=$?
  [[ $got == "$want" ]] || fail "$what: bfcheck exited $got, expected $want"
}
P=(M=2 N=2 K=3)
expect 0 "matmul as emitted" "$tmp/m.dump" "$tmp/m.c" "${P[@]}"
sed '0,/bf_known, /s//bf_known, 1 + /' "$tmp/m.c" >"$tmp/raised.c"
expect 1 "a wait raised by 1" "$tmp/m.dump" "$tmp/raised.c" "${P[@]}"
sed '0,/bf_known, /s//bf_known, -1 + /' "$tmp/m.c" >"$tmp/lowered.c"
expect 1 "a wait lowered by 1" "$tmp/m.dump" "$tmp/lowered.c" "${P[@]}"
sed '0,/^ *bf_op_[a-z]*(.*);$/{/^ *bf_op_[a-z]*(.*);$/d}' "$tmp/m.c" >"$tmp/dropped.c"
expect 1 "an op dropped" "$tmp/m.dump" "$tmp/dropped.c" "${P[@]}"
sed '0,/BF_TILE_\([A-Za-z0-9_]*\), \([^,]*\)/s//BF_TILE_\1, 1 + \2/' "$tmp/m.c" >"$tmp/operand.c"
expect 1 "an operand's slot changed" "$tmp/m.dump" "$tmp/operand.c" "${P[@]}"
# A view's start and a ragged extent as the C computes them are operands
# too: views.bfk with its first view one row lower, ragged.bfk with its
# first clipped extent one smaller, are each rejected.
"$BFSYNC" compile --emit=proof tests/kernels/views.bfk >"$tmp/v.dump" || fail "compile --emit=proof views"
"$BFSYNC" compile tests/kernels/views.bfk >"$tmp/v.c" || fail "compile views"
expect 0 "views as emitted" "$tmp/v.dump" "$tmp/v.c" N=2 C=0
sed '0,/^\( *bf_op_v[a-z]*(bf_cx, BFRT_[A-Z_]*, [0-9]*, BF_TILE_[A-Za-z0-9_]*, [^,]*, \)/s//\11 + /' "$tmp/v.c" >"$tmp/view.c"
expect 1 "a view's first row moved" "$tmp/v.dump" "$tmp/view.c" N=2 C=0
"$BFSYNC" compile --emit=proof tests/kernels/ragged.bfk >"$tmp/r.dump" || fail "compile --emit=proof ragged"
"$BFSYNC" compile tests/kernels/ragged.bfk >"$tmp/r.c" || fail "compile ragged"
expect 0 "ragged as emitted" "$tmp/r.dump" "$tmp/r.c" N=300
sed '0,/: 128)), 0, 16, BF_TILE_x/s//: 127)), 0, 16, BF_TILE_x/' "$tmp/r.c" >"$tmp/clip.c"
expect 1 "a ragged extent clipped to one less" "$tmp/r.dump" "$tmp/clip.c" N=300
rejected=0
nwaits=$(grep -c '^ *bf_wait' "$tmp/m.c")
for i in $(seq 1 "$nwaits"); do
  awk -v i="$i" '/^ *bf_wait/ { if (++n == i) next } { print }' "$tmp/m.c" >"$tmp/drop.c"
  "$BFCHECK" "$tmp/m.dump" "$tmp/drop.c" "${P[@]}" >"$tmp/out" 2>&1 || { grep -q 'validated no' "$tmp/out" && rejected=$((rejected + 1)); }
done
((rejected > 0)) || fail "dropping any one of matmul's $nwaits waits passed the validator"
expect 2 "a missing parameter" "$tmp/m.dump" "$tmp/m.c" M=2 N=2
expect 2 "an unknown parameter" "$tmp/m.dump" "$tmp/m.c" "${P[@]}" Q=1
expect 2 "a truncated dump" <(head -c 200 "$tmp/m.dump") "$tmp/m.c" "${P[@]}"
expect 2 "a truncated C file" "$tmp/m.dump" <(head -c 3000 "$tmp/m.c") "${P[@]}"
expect 2 "no arguments"
# verify reports the validator, and fails on its rejection
"$BFSYNC" verify examples/matmul.bfk -p M=2 -p N=2 -p K=3 --json >"$tmp/out" 2>&1 &&
  grep -q '"validator": "exact"' "$tmp/out" || fail "verify matmul: no exact verdict: $(tail -c 300 "$tmp/out")"
BFSYNC_BFCHECK=/nonexistent "$BFSYNC" verify examples/matmul.bfk -p M=2 -p N=2 -p K=3 --json >"$tmp/out" 2>&1 &&
  grep -q '"validator": "unavailable"' "$tmp/out" || fail "verify without the checker: $(tail -c 300 "$tmp/out")"
printf '#!/bin/sh\necho "bfcheck: cannot read it" >&2\nexit 2\n' >"$tmp/broken" && chmod +x "$tmp/broken"
BFSYNC_BFCHECK=$tmp/broken "$BFSYNC" verify examples/matmul.bfk -p M=2 -p N=2 -p K=3 --json >"$tmp/out" 2>&1 &&
  fail "verify passed with a checker that cannot read its input"
grep -q '"validator": "error", "validator_waits": -1, "validator_detail": "cannot read it"' "$tmp/out" ||
  fail "verify with a broken checker: $(tail -c 300 "$tmp/out")"
"$BFSYNC" verify examples/matmul.bfk -p M=2 -p N=2 -p K=3 --sync=barrier --json >"$tmp/out" 2>&1 &&
  grep -q '"validator": "not-applicable"' "$tmp/out" || fail "verify --sync=barrier: $(tail -c 300 "$tmp/out")"
"$BFSYNC" verify examples/matmul.bfk -p M=16 -p N=16 -p K=16 --schedules 1 --json >"$tmp/out" 2>&1 &&
  grep -q '"validator": "skipped", "validator_waits": -1, "validator_detail": "12800 instances' "$tmp/out" ||
  fail "verify above the checker's limit: $(tail -c 300 "$tmp/out")"
# On 4-bit counters matmul's engines run more than 2^4 ops: still exact,
# and outside Pipeline.pipeline_narrow_unwrapped, which bfcheck says.
"$BFSYNC" verify examples/matmul.bfk -p M=4 -p N=4 -p K=4 --target targets/trn1_c4.target --schedules 1 --json >"$tmp/out" 2>&1 &&
  grep -q '"validator": "exact".* unwrapped no"' "$tmp/out" || fail "verify on 4-bit counters: $(tail -c 300 "$tmp/out")"
# 3. The assumption check fails on an assumption or an unlisted theorem.
mkdir -p "$tmp/axiom"
printf 'Variable v : False.\nTheorem t : False. Proof. exact v. Qed.\nPrint Assumptions t.\n' >"$tmp/axiom/Assumptions.v"
bash proof/check_assumptions.sh "$tmp/axiom" >/dev/null 2>&1 && fail "check_assumptions.sh accepted an assumption"
printf 'Theorem t : True. Proof. exact I. Qed.\nPrint Assumptions t.\n' >"$tmp/axiom/Assumptions.v"
bash proof/check_assumptions.sh "$tmp/axiom" >/dev/null 2>&1 || fail "check_assumptions.sh rejected a closed theorem"
printf 'Theorem u : True. Proof. exact I. Qed.\n' >"$tmp/axiom/Extra.v"
bash proof/check_assumptions.sh "$tmp/axiom" >/dev/null 2>&1 && fail "check_assumptions.sh accepted a theorem Assumptions.v does not list"

# 4. The runtime's bfrt_counter_extend agrees with the proof's extend
#    (Narrow.v) at every width 1 .. 60, at the window's edges and at
#    random points in it; a wrong result is caught.
cat >"$tmp/extend.c" <<'C'
#include <inttypes.h>
#include <stdio.h>
#include "bfrt_kernel.h"
static uint64_t state = 88172645463325252u;
static uint64_t next(void) { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state; }
static void one(int bits, int64_t seen, int64_t count) {
  int64_t raw = (int64_t)((uint64_t)count & ((UINT64_C(1) << bits) - 1));
  printf("%d %" PRId64 " %" PRId64 " %" PRId64 "\n", bits, seen, raw, bfrt_counter_extend(seen, raw, bits));
}
int main(void) {
  for (int bits = 1; bits <= 60; bits++) {
    int64_t span = (INT64_C(1) << bits) - 1, seens[] = {0, 1, span, span + 1, INT64_C(123456789012345) % (INT64_C(1) << 59)};
    for (int i = 0; i < 5; i++) { one(bits, seens[i], seens[i]); one(bits, seens[i], seens[i] + span); one(bits, seens[i], seens[i] + span / 2); }
    for (int i = 0; i < 100; i++) {
      int64_t seen = (int64_t)(next() >> 5);
      one(bits, seen, seen + (int64_t)(next() & (uint64_t)span));
    }
  }
  return 0;
}
C
if ${CC:-cc} -std=c11 -Iruntime -o "$tmp/extend" "$tmp/extend.c" 2>"$tmp/err" && "$tmp/extend" >"$tmp/extend.txt"; then
  "$BFCHECK" --extend <"$tmp/extend.txt" >"$tmp/out" 2>&1 || fail "bfrt_counter_extend and the proof's extend disagree: $(head -3 "$tmp/out")"
  extend_cases=$(awk '{print $2}' "$tmp/out")
  awk 'NR == 7 { $4 = $4 + 1 } { print }' "$tmp/extend.txt" | "$BFCHECK" --extend >/dev/null 2>&1 &&
    fail "bfcheck --extend accepted a wrong extension"
else
  fail "the extend test program: $(head -3 "$tmp/err")"
fi

echo "proof.sh: $kernels kernel runs validated exact ($COUNT generated kernels of size $SIZE; $device with device integers; $unwrapped with no counter reaching 2^B), $skipped skipped as above the checker's instance limit, $gathers as gathers and $strided as strided (outside the model), $fallbacks as using a conservative fallback; of $waits emitted waits, $exact equal to the extracted need; $rejected of matmul's $nwaits single-wait drops rejected; bfrt_counter_extend equal to the proof's extend on ${extend_cases:-0} cases"
if ((failures)); then
  echo "proof.sh: $failures failure(s)" >&2
  exit 1
fi

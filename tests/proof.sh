#!/usr/bin/env bash
# proof.sh: the differential test between the Coq proof and bfsync
# (docs/proof.md).
#
# build/proof/bfcheck (from `make proof`) runs the threshold function
# extracted from Coq on the kernel of `bfsync compile --emit=proof` and
# compares it with every wait bfsync's streams evaluate, then runs the
# extracted validator on those waits (dropped ones included), whose
# acceptance makes the machine running them sound and deadlock-free by
# theorem (Validate.v).
# 1. Every examples/*.bfk and tests/kernels/*.bfk at each of its
#    `// params:` lines, and PROOF_COUNT generated kernels (`bfsync gen`,
#    seeds from PROOF_FROM): every wait must agree, exit 0.
# 2. The check can fail: a dump with one wait raised by 1, one lowered by
#    1, and one op dropped must each be rejected (exit 1); dropping each
#    wait of matmul in turn, the validator must reject some drops (those
#    no other wait implies); bad input is a usage error (exit 2).
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 kernels=0 waits=0 exact=0 conservative=0 outside=0 wrapping=0

fail() {
  echo "proof.sh: FAIL: $*" >&2
  failures=$((failures + 1))
}

# check FILE PARAMS...: compile, run the extracted checker, tally its waits.
check() {
  local file=$1 kv
  shift
  # The model's integers are unbounded and bfsync's wrap at 64 bits: a run
  # whose parameters reach 2^62 (tests of the wrapping ends) can wrap where
  # the model does not, so it is counted, not checked.
  for kv in "$@"; do
    if (( ${kv#*=} >= 1 << 62 || ${kv#*=} <= -(1 << 62) )); then
      wrapping=$((wrapping + 1))
      return
    fi
  done
  if ! "$BFSYNC" compile --emit=proof "$file" >"$tmp/k.dump" 2>"$tmp/err"; then
    # outside the proof's model (device integers): counted, not checked
    if grep -q "the proof's model has no" "$tmp/err"; then outside=$((outside + 1)); return; fi
    fail "$file: compile --emit=proof failed: $(head -1 "$tmp/err")"
    return
  fi
  if "$BFCHECK" "$tmp/k.dump" "$@" >"$tmp/out" 2>"$tmp/err"; then
    kernels=$((kernels + 1))
    read -r w e c < <(awk '{print $5, $7, $9}' "$tmp/out")
    waits=$((waits + w)) exact=$((exact + e)) conservative=$((conservative + c))
  else
    fail "$file $*: $(head -3 "$tmp/err")"
  fi
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

# 2. Broken dumps must be caught.
"$BFSYNC" compile --emit=proof examples/matmul.bfk >"$tmp/good.dump" || fail "compile matmul"
expect() {
  local want=$1 what=$2
  shift 2
  "$BFCHECK" "$@" >/dev/null 2>&1
  local got=$?
  [[ $got == "$want" ]] || fail "$what: bfcheck exited $got, expected $want"
}
expect 0 "matmul as compiled" "$tmp/good.dump" M=2 N=2 K=3
sed '0,/wait \([0-9]*\) 0 /s//wait \1 0 add k 1 /' "$tmp/good.dump" >"$tmp/raised.dump"
expect 1 "a wait raised by 1" "$tmp/raised.dump" M=2 N=2 K=3
sed '0,/wait \([0-9]*\) 0 /s//wait \1 0 add k -1 /' "$tmp/good.dump" >"$tmp/lowered.dump"
expect 1 "a wait lowered by 1" "$tmp/lowered.dump" M=2 N=2 K=3
sed '0,/^ *op [0-9]*$/{/^ *op [0-9]*$/d}' "$tmp/good.dump" >"$tmp/dropped.dump"
expect 1 "an op dropped" "$tmp/dropped.dump" M=2 N=2 K=3
rejected=0
nwaits=$(grep -c '^ *wait' "$tmp/good.dump")
for i in $(seq 1 "$nwaits"); do
  awk -v i="$i" '/^ *wait/ { if (++n == i) next } { print }' "$tmp/good.dump" >"$tmp/drop.dump"
  "$BFCHECK" "$tmp/drop.dump" M=2 N=2 K=3 >"$tmp/out" 2>&1 || { grep -q 'validated no' "$tmp/out" && rejected=$((rejected + 1)); }
done
((rejected > 0)) || fail "dropping any one of matmul's $nwaits waits passed the validator"
expect 2 "a missing parameter" "$tmp/good.dump" M=2 N=2
expect 2 "an unknown parameter" "$tmp/good.dump" M=2 N=2 K=3 Q=1
expect 2 "a truncated dump" <(head -c 200 "$tmp/good.dump") M=2 N=2 K=3
expect 2 "no arguments"

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

echo "proof.sh: $kernels kernel runs validated ($COUNT generated kernels of size $SIZE); of $waits waits, $exact equal to the extracted need and $conservative conservative fallbacks above it; $outside runs outside the proof's model (device integers, views and slices, min and max) and $wrapping with parameters of 2^62 or more (64-bit wrapping), not checked; $rejected of matmul's $nwaits single-wait drops rejected; bfrt_counter_extend equal to the proof's extend on ${extend_cases:-0} cases"
if ((failures)); then
  echo "proof.sh: $failures failure(s)" >&2
  exit 1
fi

#!/usr/bin/env bash
# exhaustive.sh: every kernel of the small scope (at most 2 instructions
# over every engine of the default target, pe and dma with an hbm tensor
# included, and dma1, a transfer pinned to a second queue; at most 2
# loops or conditionals (with or without else) nested or not, bounds from
# N or the outer variable, conditions on N or a loop variable, tiles with 1 or
# 2 slots), and the views scope (the same at 2 instructions without pe, on
# tiles of 2 partitions each reference all of a slot or one row of it: 0, 1
# or a loop variable's parity, with H's matching element slices: disjoint,
# adjacent, nested and moving regions; the grammar and the canonical forms
# are described in harness/exhaustive.c), judged by the oracle at N = 0..3
# under both sync modes. Every one must pass, and the counts are checked
# so the scope cannot shrink unnoticed. The scopes and their CPU (release
# build, measured 2026-12-02 at load 20 to 30): all 2 (84,448 kernels,
# 18 s) and views all 2 (441,968, 111 s), so about 65 s with 2 jobs on a
# quiet 2-core host; QUICK=1 (the sanitizer pass): act, dve and pool only,
# core 2 (13,986, 3 s) and views core 2 (137,232, 34 s).
# FULL=1 (`make exhaustive`): every engine at 3 instructions, and views all
# 2. (The core scope at 3 instructions, 1,723,086 kernels, ran in every
# release pass before the views scope and took 270 s; it is in FULL's.)
# No golden files: UPDATE=1 skips it.
set -euo pipefail
if [[ -n ${UPDATE:-} ]]; then echo "exhaustive.sh: no golden files to update"; exit 0; fi
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
scopes=("all 2 84448" "all 2 441968 --views")
[[ -n ${QUICK:-} ]] && scopes=("core 2 13986" "core 2 137232 --views")
[[ -n ${FULL:-} ]] && scopes=("all 3 16504468" "all 2 441968 --views")
for scope in "${scopes[@]}"; do
  read -r engines instructions expected views <<<"$scope"
  # shellcheck disable=SC2086
  out=$("$BFSYNC" campaign --exhaustive --engines "$engines" --instructions "$instructions" $views --schedules 1 --json)
  echo "$engines $instructions $views: $out"
  python3 - "$out" "$expected" "$engines $views" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
want, scope = int(sys.argv[2]), sys.argv[3]
assert d["kernels"] == want, f"exhaustive ({scope}): {d['kernels']} kernels, expected {want}"
assert d["oracle_checks"] == 8 * want, "exhaustive: not 8 oracle checks per kernel"
assert d["failures"] == 0 and not d["crashed"], "exhaustive: failures"
print(f"exhaustive.sh: ok, {scope}: {want} kernels, {d['oracle_checks']} oracle checks")
PY
done

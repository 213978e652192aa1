#!/usr/bin/env bash
# transform.sh: the synchronization transforms, end to end.
#
# 1. Golden IR: `bfsync compile --emit=ir` of every feature kernel
#    (tests/kernels/*.bfk) and every example, in both sync modes, must equal
#    tests/golden/ir/NAME.SYNC.ir; UPDATE=1 rewrites the golden files (review
#    the diff before committing). --explain must list one provenance entry
#    per wait of the IR. For the kernels in EXPLAINED, the whole --explain
#    (barrier-free) must equal tests/golden/explain/NAME.explain: which
#    positions are closed forms through branches and which running counts,
#    and why.
# 2. The oracle: `bfsync verify` at each `// params:` line of every kernel,
#    both modes: no race, no deadlock, and for barrier-free no late wait
#    that no fallback explains (QUICK=1: the first set only). The examples
#    must need no fallback.
set -u
source "$(dirname "$0")/lib.sh"
GOLDEN=tests/golden/ir

kernels=(tests/kernels/*.bfk examples/*.bfk)
mkdir -p "$GOLDEN"

for k in "${kernels[@]}"; do
  name=$(basename "$k" .bfk)
  for sync in barrier-free barrier; do
    golden="$GOLDEN/$name.$sync.ir"
    if ! "$BFSYNC" compile --emit=ir --sync="$sync" "$k" >"$tmp/out.ir" 2>"$tmp/err"; then
      fail "compile --emit=ir --sync=$sync $k exited non-zero: $(head -3 "$tmp/err")"
      continue
    fi
    golden "$tmp/out.ir" "$golden" "IR of $k ($sync)"
    waits=$(grep -c '^ *wait ' "$tmp/out.ir")
    "$BFSYNC" compile --explain --sync="$sync" "$k" >"$tmp/explain" 2>&1 \
      || fail "compile --explain --sync=$sync $k exited non-zero"
    explained=$(grep -c ': wait ' "$tmp/explain")
    [[ $waits == "$explained" ]] || fail "$k ($sync): $waits waits but $explained explained"
  done
  if [[ $k == examples/* ]] && grep -q 'fallback' "$tmp/explain"; then
    fail "$k uses a fallback"
  fi
done

EXPLAINED=(tests/kernels/closed_counts.bfk tests/kernels/closed_residues.bfk examples/pipeline.bfk)
mkdir -p tests/golden/explain
for k in "${EXPLAINED[@]}"; do
  golden="tests/golden/explain/$(basename "$k" .bfk).explain"
  "$BFSYNC" compile --explain "$k" >"$tmp/explain" 2>&1 || fail "compile --explain $k exited non-zero"
  golden "$tmp/explain" "$golden" "--explain of $k"
done

# The oracle, once `bfsync verify` exists.
if "$BFSYNC" verify --help >/dev/null 2>&1; then
  for k in "${kernels[@]}"; do
    mapfile -t sets < <(sed -n 's|^// params:||p' "$k")
    [[ ${#sets[@]} -gt 0 ]] || sets=("")
    [[ ${QUICK:-} == 1 ]] && sets=("${sets[0]}") # the sanitizer pass: first set only
    for set in "${sets[@]}"; do
      args=()
      for kv in $set; do args+=(-p "$kv"); done
      for sync in barrier-free barrier; do
        echo "$sync $k [$set] $("$BFSYNC" verify "$k" "${args[@]}" --sync="$sync" --json 2>&1 | tail -1)"
      done
    done
  done >"$tmp/verify.log"
  # One python for all runs: each line is the run, then its JSON.
  python3 - "$tmp/verify.log" <<'EOF' || fail "bfsync verify found problems (above)"
import json, sys
bad = 0
for line in open(sys.argv[1]):
    head, brace, rest = line.partition("{")
    try:
        d = json.loads(brace + rest)
    except ValueError:
        d = None
    if d is None or d["races"] or d["deadlocks"] or (head.startswith("barrier-free") and d["late"]):
        print("transform.sh: verify: " + line.strip(), file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
EOF
else
  echo "transform.sh: bfsync verify not available; oracle checks skipped" >&2
fi

finish

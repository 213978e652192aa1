#!/bin/bash
# check_assumptions.sh DIR: after the development compiled in DIR, fail
# unless no source admits anything, Assumptions.v lists every `Theorem` of
# the development, and `Print Assumptions` answers "Closed under the
# global context" for each theorem it lists.
set -u
dir=$1
if grep -nwE 'Admitted|admit|Axiom|Axioms|Parameter|Conjecture' "$dir"/*.v; then
  echo "proof: FAIL: the lines above admit or assume something" >&2
  exit 1
fi
unlisted=0
for f in "$dir"/*.v; do
  m=$(basename "$f" .v)
  [[ $m == Assumptions ]] && continue
  while read -r t; do
    grep -qx "Print Assumptions $m\.$t\." "$dir/Assumptions.v" || { echo "proof: FAIL: $m.$t is not in Assumptions.v" >&2; unlisted=1; }
  done < <(sed -n 's/^Theorem \([A-Za-z0-9_]*\).*/\1/p' "$f")
done
((unlisted)) && exit 1
(cd "$dir" && coqc -q -Q . BF Assumptions.v) >"$dir/assumptions.txt" || exit 1
want=$(grep -c '^Print Assumptions' "$dir/Assumptions.v")
closed=$(grep -cx 'Closed under the global context' "$dir/assumptions.txt")
if [[ $closed != "$want" ]] || [[ $(wc -l <"$dir/assumptions.txt") != "$want" ]]; then
  cat "$dir/assumptions.txt" >&2
  echo "proof: FAIL: $closed of $want main theorems are closed under the global context" >&2
  exit 1
fi
echo "proof: $want main theorems, each closed under the global context"

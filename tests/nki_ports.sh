#!/usr/bin/env bash
# nki_ports.sh: the ports of real NKI kernels (examples/nki/*.bfk, each
# naming its source in its header) at every one of their `// params:` lines
# (a ragged size and a zero-trip size among them):
#  - verify: exit 0 and, from --json, races 0, early 0, late 0, deadlocks 0;
#  - run --sync=both --jitter --check on threads, and --sync=both --check on
#    the simulator (which takes no jitter): exit 0, every mode 'match yes',
#    races 0;
#  - tests/nki_ports_math.py: each port's output against its source's
#    function computed in Python doubles (ragged sizes; the causal mask).
# A port that cannot be written faithfully says so in its header; this test
# holds it to exactness and to its source's function. No golden files:
# UPDATE=1 skips it.
set -u
if [[ -n ${UPDATE:-} ]]; then echo "nki_ports.sh: no golden files to update"; exit 0; fi
: "${BFSYNC:?BFSYNC must name the bfsync binary}"
BFSYNC=$(cd "$(dirname "$BFSYNC")" && pwd)/$(basename "$BFSYNC")
export BFSYNC
cd "$(dirname "$0")/.."
failures=0
fail() {
  echo "nki_ports.sh: FAIL: $*" >&2
  failures=$((failures + 1))
}
ports=(examples/nki/*.bfk)
# the sanitizer pass (QUICK=1) runs three ports, the release pass all of them
[[ -n ${QUICK:-} ]] && (($# == 0)) && set -- examples/nki/rmsnorm.bfk examples/nki/layernorm.bfk examples/nki/cumsum.bfk
(($#)) && ports=("$@") # a few ports only (and no nki_ports_math.py): bash tests/nki_ports.sh FILE...
[[ -e ${ports[0]} ]] || { echo "nki_ports.sh: FAIL: no examples/nki/*.bfk" >&2; exit 1; }
for k in "${ports[@]}"; do
  grep -q '^// params:' "$k" || fail "$k has no // params: line"
  grep -Eq 'aws-neuron/nki-(samples|library)' "$k" || fail "$k does not name its source"
  while IFS= read -r line; do
    read -ra kv <<<"${line#// params:}"
    args=()
    for a in "${kv[@]}"; do args+=(-p "$a"); done
    what="$k ${kv[*]}"
    out=$("$BFSYNC" verify "$k" "${args[@]}" --json 2>&1) || fail "verify $what: exit $?: $(tail -3 <<<"$out")"
    json=$(tail -1 <<<"$out")
    for key in races early late deadlocks; do
      grep -q "\"$key\": 0[,}]" <<<"$json" || fail "verify $what: $key is not 0: $json"
    done
    for exec in "--jitter" "--exec=sim"; do
      out=$("$BFSYNC" run "$k" "${args[@]}" --sync=both --check $exec 2>&1) || fail "run $exec $what: exit $?: $(tail -3 <<<"$out")"
      [[ $(grep -Ec '^(barrier|barrier-free) +yes ' <<<"$out") == 2 ]] || fail "run $exec $what: not 'match yes' in both modes: $out"
      grep -E '^(barrier|barrier-free) ' <<<"$out" | grep -vq 'races 0$' && fail "run $exec $what: races: $out"
    done
  done < <(grep '^// params:' "$k")
done
(($#)) || python3 tests/nki_ports_math.py || fail "a port does not compute its source's function (nki_ports_math.py)"
if ((failures)); then echo "nki_ports.sh: $failures failure(s)"; exit 1; fi
echo "nki_ports.sh: ok (${#ports[@]} ports)"

#!/usr/bin/env bash
# run.sh BIN SECONDS CORPUS: fuzz the frontend for SECONDS with the libFuzzer
# binary BIN, seeded from examples/, tests/bad/ and tests/kernels/ (read
# only); new inputs go to CORPUS. On a crash, a leak, a hang (10 s per
# input) or a broken fmt round trip it exits 1 with the reproducer in
# BIN's directory under artifacts/; reproduce with `BIN FILE`. Prints the
# number of executions.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$1 seconds=$2 corpus=$3
mkdir -p "$corpus"
artifacts="$(dirname "$bin")/artifacts/"
mkdir -p "$artifacts"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
"$bin" -max_total_time="$seconds" -timeout=10 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$artifacts" "$corpus" examples tests/bad tests/kernels >"$log" 2>&1 || status=$?
execs=$(grep -o 'number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
echo "fuzz: $execs executions in ${seconds}s, corpus $(ls "$corpus" | wc -l) inputs"
if [[ $status != 0 ]]; then
  grep -E "ERROR|SUMMARY|fuzz:|Test unit written" "$log" | head -20
  echo "fuzz: FAILED (exit $status); reproducers in $artifacts"
  exit 1
fi

#!/usr/bin/env bash
# fuzz.sh: a short libFuzzer run over the frontend in CI (30 s; the long
# run is `make fuzz SECONDS=...`, see docs/correctness.md). The harness is
# tests/fuzz/fuzz_frontend.c, built by clang with ASan and UBSan. Skipped
# in the sanitizer pass (QUICK=1: the harness is sanitized already) and,
# with a message, only when clang's libFuzzer is missing after `make deps`.
# No golden files: UPDATE=1 skips it.
set -euo pipefail
if [[ -n ${UPDATE:-} ]]; then echo "fuzz.sh: no golden files to update"; exit 0; fi
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
if [[ -n ${QUICK:-} ]]; then
  echo "fuzz.sh: skipped in the sanitizer pass (the fuzz target is ASan+UBSan already)"
  exit 0
fi
if ! command -v clang >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz.sh: SKIPPED: clang or its libFuzzer runtime (libclang-rt-14-dev) is not installed; run make deps"
  exit 0
fi
make --no-print-directory BUILD="$BUILD" "$BUILD/fuzz/fuzz_frontend" >/dev/null
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
bash tests/fuzz/run.sh "$BUILD/fuzz/fuzz_frontend" "${FUZZ_SECONDS:-30}" "$corpus/corpus"

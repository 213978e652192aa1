#!/usr/bin/env bash
# host.sh: examples/host built the way its README says, against a fresh
# `make install PREFIX=...` in a temporary prefix: bfsync compile, gcc with
# pkg-config --cflags --libs bfrt, then the program runs and checks itself.
# Env: BUILD (the build dir to install from).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The sanitizer build (make test-asan) installs an instrumented libbfrt.a.
san_flags=""
if nm "$BUILD/libbfrt.a" 2>/dev/null | grep __asan >/dev/null; then san_flags="-fsanitize=address,undefined"; fi
make --no-print-directory -s install BUILD="$BUILD" ${san_flags:+SAN=1 OPT=-O1} PREFIX="$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; echo "FAIL: make install" >&2; exit 1; }
for f in bin/bfsync include/bfrt.h include/ops.def lib/libbfrt.a lib/pkgconfig/bfrt.pc; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: make install did not install $f" >&2; exit 1; }
done

mkdir -p "$tmp/out"
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" make --no-print-directory -s -C examples/host \
  BFSYNC="$tmp/prefix/bin/bfsync" OUT="$tmp/out" CFLAGS="-O2 $san_flags" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; echo "FAIL: building examples/host" >&2; exit 1; }
grep -q "const bfrt_kernel bfk_softmax" "$tmp/out/softmax.c" || { echo "FAIL: no descriptor in softmax.c" >&2; exit 1; }

"$tmp/out/host" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log" >&2; echo "FAIL: examples/host/host" >&2; exit 1; }
grep -q "instructions" "$tmp/run.log" && grep -q ": ok$" "$tmp/run.log" ||
  { cat "$tmp/run.log" >&2; echo "FAIL: host output" >&2; exit 1; }
echo "host.sh: ok"

#!/usr/bin/env bash
# host.sh: bfsync installed and embedded, the way a user does it.
#
# 1. `make install PREFIX=...` into a temporary prefix installs bfsync, the
#    headers under include/bfsync/, libbfrt.a and bfrt.pc.
# 2. The installed bfsync runs a kernel with the source tree hidden (a
#    tmpfs over it in a private mount namespace, when unshare allows; the
#    prefix is also moved, so no build-time path can be used).
# 3. examples/host is built as its README says (bfsync compile, gcc with
#    pkg-config --cflags --libs bfrt), runs and checks itself.
#    Then again on the simulator with targets/trn1.target loaded through
#    bfrt_costs_load, and with a malformed target file (positioned error).
# 4. Three kernels in one program: softmax in both sync modes and matmul,
#    linked as emitted (tests/host_two.c), the two modes equal bit for bit.
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
for f in bin/bfsync include/bfsync/bfrt.h include/bfsync/bfrt_kernel.h include/bfsync/bfrt_cost.h \
  include/bfsync/ops.def lib/libbfrt.a lib/pkgconfig/bfrt.pc; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: make install did not install $f" >&2; exit 1; }
done
grep -q "bfrt_costs {" "$tmp/prefix/include/bfsync/bfrt.h" &&
  { echo "FAIL: the host header bfrt.h exposes the cost model" >&2; exit 1; }

# ---- The installed bfsync without the source tree.
mv "$tmp/prefix" "$tmp/moved"
cp examples/softmax.bfk "$tmp/k.bfk"
run_installed="'$tmp/moved/bin/bfsync' run '$tmp/k.bfk' -p R=2 --sync=both"
hidden="moved prefix"
if unshare -rm true 2>/dev/null; then
  src=$(pwd)
  run_installed="mount -t tmpfs none '$src' && [ ! -e '$src/runtime' ] && cd / && $run_installed"
  hidden="source tree hidden, $hidden"
  run_installed="unshare -rm sh -c \"$run_installed\""
fi
eval "$run_installed" >"$tmp/installed.log" 2>&1 ||
  { cat "$tmp/installed.log" >&2; echo "FAIL: installed bfsync run ($hidden)" >&2; exit 1; }
grep -q "barrier-free .*yes" "$tmp/installed.log" ||
  { cat "$tmp/installed.log" >&2; echo "FAIL: installed bfsync run output" >&2; exit 1; }
mv "$tmp/moved" "$tmp/prefix"

# ---- examples/host against the installed runtime.
mkdir -p "$tmp/out"
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" make --no-print-directory -s -C examples/host \
  BFSYNC="$tmp/prefix/bin/bfsync" OUT="$tmp/out" CFLAGS="-O2 $san_flags" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; echo "FAIL: building examples/host" >&2; exit 1; }
grep -q "const bfrt_kernel bfk_softmax_barrier_free" "$tmp/out/softmax.c" ||
  { echo "FAIL: no descriptor in softmax.c" >&2; exit 1; }
"$tmp/out/host" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log" >&2; echo "FAIL: examples/host/host" >&2; exit 1; }
grep -q "instructions" "$tmp/run.log" && grep -q ": ok$" "$tmp/run.log" ||
  { cat "$tmp/run.log" >&2; echo "FAIL: host output" >&2; exit 1; }

# The same host on the simulator, its cost model loaded from a target file;
# a malformed one is a positioned error the library hands back, exit 1.
"$tmp/out/host" targets/trn1.target >"$tmp/sim.log" 2>&1 || { cat "$tmp/sim.log" >&2; echo "FAIL: host on the simulator" >&2; exit 1; }
grep -q "simulated on targets/trn1.target: [1-9][0-9]* cycles" "$tmp/sim.log" && grep -q ": ok$" "$tmp/sim.log" ||
  { cat "$tmp/sim.log" >&2; echo "FAIL: host simulator output" >&2; exit 1; }
printf 'name = t\nclock_ghz = 1.4\n[engines]\npe = pe\n[kind pe]\noverhead = -3\n' >"$tmp/bad.target"
status=0; "$tmp/out/host" "$tmp/bad.target" >"$tmp/bad.log" 2>&1 || status=$?
[ "$status" = 1 ] && grep -q "bad.target:6:12: error: expected a non-negative integer" "$tmp/bad.log" ||
  { cat "$tmp/bad.log" >&2; echo "FAIL: a malformed target file in the host (status $status)" >&2; exit 1; }

# ---- Three kernels, two of them one kernel in both modes, in one program.
cflags=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags bfrt)
libs=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --libs bfrt)
"$tmp/prefix/bin/bfsync" compile examples/softmax.bfk --sync=barrier-free -o "$tmp/sf.c"
"$tmp/prefix/bin/bfsync" compile examples/softmax.bfk --sync=barrier -o "$tmp/sb.c"
"$tmp/prefix/bin/bfsync" compile examples/matmul.bfk -o "$tmp/mm.c"
# shellcheck disable=SC2086
gcc -std=c99 -Wall -Wextra -Werror $san_flags $cflags -I. -o "$tmp/two" tests/host_two.c "$tmp/sf.c" "$tmp/sb.c" \
  "$tmp/mm.c" $libs 2>"$tmp/two.log" || { cat "$tmp/two.log" >&2; echo "FAIL: linking three kernels into one host" >&2; exit 1; }
"$tmp/two" >"$tmp/two.out" 2>&1 || { cat "$tmp/two.out" >&2; echo "FAIL: host_two" >&2; exit 1; }
echo "host.sh: ok ($hidden; three kernels in one host)"

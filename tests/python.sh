#!/usr/bin/env bash
# python.sh: the Python module (docs/python.md).
#
# 1. The pytest suite tests/python/ against $BUILD/libbfsync.so, imported as
#    the docs say: PYTHONPATH=python from the source tree.
# 2. `make install PREFIX=...` into a temporary prefix, then `import bfsync`
#    from PREFIX/lib/python3/site-packages with nothing else set (the
#    library found relative to the package, the runtime headers relative to
#    the library), and the README's three lines run there.
# Python: the first of python3, /usr/bin/python3 that has numpy and pytest
# (Debian's python3-numpy and python3-pytest, in `make deps`).
# Under a sanitizer build the library needs the sanitizer runtimes first in
# the process: they are preloaded (leak checks off: the interpreter's own
# allocations are not ours to free; a small quarantine, so that what ASan
# holds back does not read as growth in the memory tests).
set -u
source "$(dirname "$0")/lib.sh"
BUILD=$(cd "$BUILD" && pwd)

PYTHON=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import numpy, pytest' 2>/dev/null; then
    PYTHON=$p
    break
  fi
done
if [ -z "$PYTHON" ]; then
  echo "python.sh: FAIL: no python3 with numpy and pytest (make deps installs python3-numpy python3-pytest)" >&2
  exit 1
fi
lib=$BUILD/libbfsync.so
[ -f "$lib" ] || { echo "python.sh: FAIL: $lib is missing (make)" >&2; exit 1; }

preload=
if nm -D "$lib" | grep -q "__asan_init"; then
  for rt in libasan.so libubsan.so; do preload="$preload $(gcc -print-file-name=$rt)"; done
  # a 4 MiB quarantine (not 256): the memory tests measure the resident size
  export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:quarantine_size_mb=4 UBSAN_OPTIONS=halt_on_error=1
fi

# ---- 1. The suite.
LD_PRELOAD=$preload BFSYNC_LIB=$lib PYTHONPATH=python "$PYTHON" -m pytest -q -p no:cacheprovider tests/python \
  || fail "the pytest suite tests/python failed"

# ---- 2. Installed.
if [ -z "$preload" ]; then
  if make --no-print-directory -s install PREFIX="$tmp/prefix" BUILD="$(realpath --relative-to=. "$BUILD")" \
      >"$tmp/install.log" 2>&1; then
    cp examples/matmul.bfk "$tmp/"
    (cd "$tmp" && env -u BFSYNC_LIB PYTHONPATH="$tmp/prefix/lib/python3/site-packages" "$PYTHON" -c '
import bfsync
r = bfsync.compile_file("matmul.bfk").run(M=2, N=2, K=3)
print(r.match, r.waits, r.outputs["C"].shape)
assert bfsync.__file__.startswith("'"$tmp"'/prefix/"), bfsync.__file__
') >"$tmp/installed.out" 2>&1 || fail "import bfsync from the installed prefix: $(cat "$tmp/installed.out")"
    grep -qx "True [0-9]* (128, 128)" "$tmp/installed.out" || fail "the README lines printed: $(cat "$tmp/installed.out")"
  else
    fail "make install PREFIX=... failed: $(tail -5 "$tmp/install.log")"
  fi
fi

finish

# lib.sh: what the script tests share. A script sources it first,
#   source "$(dirname "$0")/lib.sh"
# and is then at the top of the tree, with BFSYNC the absolute path of the
# binary under test (build/bfsync unless given), BUILD its build folder, a
# scratch folder $tmp removed on exit, failures=0, and:
#   fail MESSAGE...         count a failure, said with the script's name;
#   expect_status N ARGS... run bfsync ARGS, stdout in $tmp/out and stderr
#                           in $tmp/err, within TEST_TIMEOUT seconds (300);
#                           a failure unless it exits N (a hang is one);
#   expect_stderr TEXT      a failure unless $tmp/err has TEXT;
#   golden OUT GOLDEN WHAT  with UPDATE=1 write OUT to GOLDEN, else a
#                           failure (with the diff) where they differ;
#   finish [NOTE]           "NAME: ok (NOTE)", exit 0; or the count, exit 1.
SCRIPT=$(basename "$0")
BFSYNC=${BFSYNC:-build/bfsync}
BFSYNC=$(cd "$(dirname "$BFSYNC")" && pwd)/$(basename "$BFSYNC")
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "$SCRIPT: FAIL: $*" >&2
  failures=$((failures + 1))
}

expect_status() {
  local want=$1
  shift
  timeout "${TEST_TIMEOUT:-300}" "$BFSYNC" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "bfsync $* exited $got, expected $want"
    sed 's/^/    /' "$tmp/err" | head -5 >&2
    return 1
  fi
}

expect_stderr() {
  grep -qF -- "$1" "$tmp/err" || { fail "stderr lacks '$1':"; sed 's/^/    /' "$tmp/err" | head -5 >&2; }
}

golden() {
  if [[ ${UPDATE:-} == 1 ]]; then
    cp "$1" "$2"
  elif [[ ! -f $2 ]]; then
    fail "$2 is missing (run make test-update)"
  elif ! diff -u "$2" "$1" >"$tmp/diff"; then
    fail "$3 differs from $2:"
    head -40 "$tmp/diff" >&2
  fi
}

finish() {
  if ((failures)); then
    echo "$SCRIPT: $failures failure(s)" >&2
    exit 1
  fi
  echo "$SCRIPT: ok${1:+ ($1)}"
  exit 0
}

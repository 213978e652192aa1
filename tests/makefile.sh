#!/usr/bin/env bash
# makefile.sh: the Makefile's own promises, from `make -n` (nothing built).
#
# 1. `all` derives the narrow-counter targets from targets/trn1.target when
#    it changes (NARROW_TARGETS must be defined before `all` names it).
# 2. `make check` runs the unit tests and CHECK_SCRIPTS, each timed, and
#    every script it names exists.
# 3. .ci/timed prints the part's time, and keeps its exit status.
# No golden files: UPDATE=1 changes nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
failures=0
fail() { echo "makefile.sh: FAIL: $*"; failures=$((failures + 1)); }
build=${BUILD:-build}

derive=$(make -n all BUILD="$build" -W targets/trn1.target 2>/dev/null)
for bits in 4 8 16; do
  grep -q "awk -v bits=$bits -f targets/narrow.awk" <<<"$derive" ||
    fail "make all does not derive targets/trn1_c$bits.target from a changed trn1.target"
done
plan=$(make -n check BUILD="$build" 2>/dev/null)
grep -q "test-unit" <<<"$plan" || fail "make check runs no unit tests"
scripts=$(make -s --no-print-directory -f Makefile -f - print-check-scripts <<<'print-check-scripts: ; @echo $(CHECK_SCRIPTS)' 2>/dev/null)
[[ -n $scripts ]] || fail "CHECK_SCRIPTS is empty"
for s in $scripts; do [[ -f $s ]] || fail "make check names $s, which does not exist"; done

out=$(bash .ci/timed part sh -c 'exit 3')
status=$?
[[ $status == 3 ]] || fail ".ci/timed exited $status, not the command's 3"
[[ $out =~ ^==\ part:\ [0-9]+\.[0-9]\ s\ \(FAILED,\ exit\ 3\)$ ]] || fail ".ci/timed printed '$out'"
[[ $(bash .ci/timed ok true) =~ ^==\ ok:\ [0-9]+\.[0-9]\ s$ ]] || fail ".ci/timed of a passing part"

if ((failures)); then
  echo "makefile.sh: $failures failure(s)"
  exit 1
fi
echo "makefile.sh: ok"

#!/usr/bin/env bash
# diagnostics.sh: --diagnostics-format=json and sarif (docs/diagnostics.md).
#
# 1. Golden files: for each case below, bfsync's standard error and exit
#    status with --diagnostics-format=json and =sarif must equal
#    tests/golden/diagnostics/CASE.{json,sarif} (UPDATE=1 rewrites them;
#    review the diff). The cases cover every command that reports kernel
#    errors (check, fmt, compile, verify, run), notes as children, a
#    warning, a file that cannot be read, a target file's errors, a
#    run-time error, and a tab and multi-byte characters before the caret.
# 2. Every output parses as JSON; every SARIF output passes
#    tests/sarif_check.py (SARIF 2.1.0's required properties and types);
#    the checker itself rejects a broken log.
# 3. The text format is unchanged (the same bytes as without the option),
#    a usage error stays text with status 2, and a clean kernel gives [].
set -u
source "$(dirname "$0")/lib.sh"
golden=tests/golden/diagnostics
mkdir -p "$golden"

# name | the command line after bfsync (the format option is appended)
cases=(
  "check_notes|check tests/bad/engines.bfk"
  "check_names|check tests/bad/names.bfk"
  "check_columns|check tests/diagnostics/columns.bfk"
  "check_missing|check tests/diagnostics/no_such_file.bfk"
  "check_two_files|check tests/bad/empty.bfk tests/bad/constants.bfk"
  "check_target|check --target tests/bad_targets/duplicate.target examples/chain.bfk"
  "fmt_error|fmt tests/bad/hbm_direction.bfk"
  "compile_error|compile tests/bad/unwritten.bfk"
  "verify_error|verify tests/bad/declarations.bfk -p N=1"
  "run_warning_and_error|run tests/bad_run/uninit.bfk"
  "run_bounds|run tests/bad_run/store_oob.bfk"
  "compile_clean|compile examples/chain.bfk -o $tmp/chain.c"
)

sarifs=()
for c in "${cases[@]}"; do
  name=${c%%|*}
  args=${c#*|}
  for format in json sarif; do
    # shellcheck disable=SC2086
    "$BFSYNC" $args --diagnostics-format=$format >/dev/null 2>"$tmp/$name.$format"
    status=$?
    if ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/$name.$format" 2>/dev/null; then
      fail "$name: --diagnostics-format=$format is not JSON:"
      head -5 "$tmp/$name.$format" >&2
    fi
    if [ "$format" = sarif ]; then
      cp "$tmp/$name.$format" "$tmp/$name.raw.sarif"
      sarifs+=("$tmp/$name.raw.sarif")
    fi
    echo "exit status: $status" >>"$tmp/$name.$format"
    # the temporary folder's name is not part of the golden
    sed -i "s|$tmp|TMP|g" "$tmp/$name.$format"
    golden "$tmp/$name.$format" "$golden/$name.$format" "$name: --diagnostics-format=$format"
  done
done
for g in "$golden"/*; do
  base=$(basename "$g")
  found=0
  for c in "${cases[@]}"; do [ "${c%%|*}" = "${base%.*}" ] && found=1; done
  [ $found = 1 ] || fail "$g belongs to no case"
done

# ---- 2. SARIF 2.1.0 structure, and the checker can fail.
python3 tests/sarif_check.py "${sarifs[@]}" || fail "SARIF output fails tests/sarif_check.py"
python3 - "$tmp/check_notes.raw.sarif" "$tmp/broken.sarif" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["runs"][0]["results"][0]["level"] = "fatal"
del doc["runs"][0]["tool"]["driver"]["name"]
doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
json.dump(doc, open(sys.argv[2], "w"))
PY
python3 tests/sarif_check.py "$tmp/broken.sarif" >"$tmp/broken.out"
[ $? = 1 ] && [ "$(wc -l <"$tmp/broken.out")" = 3 ] || fail "sarif_check.py misses a broken log: $(cat "$tmp/broken.out")"
# notes are children (json) and related locations (sarif)
python3 - "$tmp/check_notes.json" "$tmp/check_notes.sarif" <<'PY' || fail "notes are not attached to their error"
import json, sys
strip = lambda p: json.loads("\n".join(open(p).read().splitlines()[:-1]))
j, s = strip(sys.argv[1]), strip(sys.argv[2])
assert any(c["kind"] == "note" for d in j for c in d["children"]), j
assert all(d["kind"] != "note" for d in j)
results = s["runs"][0]["results"]
assert sum(len(r["relatedLocations"]) for r in results) == sum(len(d["children"]) for d in j)
assert len(results) == len(j)
PY

# ---- 3. Text unchanged; usage errors stay text.
for bad in tests/bad/engines.bfk tests/bad/names.bfk; do
  "$BFSYNC" check "$bad" 2>"$tmp/plain" >/dev/null
  "$BFSYNC" check "$bad" --diagnostics-format=text 2>"$tmp/text" >/dev/null
  cmp -s "$tmp/plain" "$tmp/text" || fail "--diagnostics-format=text changes the text of $bad"
done
"$BFSYNC" check --diagnostics-format=xml examples/chain.bfk 2>"$tmp/err"
[ $? = 2 ] && grep -q "must be text, json or sarif" "$tmp/err" || fail "a bad --diagnostics-format is not a usage error: $(cat "$tmp/err")"
"$BFSYNC" check --diagnostics-format=json examples/chain.bfk 2>"$tmp/err"
[ $? = 0 ] && [ "$(tr -d ' \n' <"$tmp/err")" = "[]" ] || fail "a clean kernel should give [] on standard error: $(cat "$tmp/err")"

finish

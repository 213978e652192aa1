#!/usr/bin/env bash
# layers.sh: the layers include only downward (docs/layers.md).
#
# The folders, bottom up: util, runtime, target, frontend, transform,
# backend, harness, driver (dsl/, the grammar, sits with the frontend).
# A file may include a header of its own layer or of a lower one, never of
# a higher one; the runtime includes nothing of the compiler but util/
# (its private headers it names without a folder, as "rt.h"). Every
# quoted include of every .c, .h, .l and .y file is checked; a header that
# names no folder must be in the including file's own folder or runtime/
# (which -Iruntime finds). No golden files: UPDATE=1 changes nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
layers=(util runtime target frontend transform backend harness driver)
rank() { # folder -> its layer's number, or nothing
  local i
  for i in "${!layers[@]}"; do [[ ${layers[$i]} == "$1" ]] && { echo "$i"; return; }; done
  [[ $1 == dsl ]] && echo 3 # the grammar is the frontend's
}
failures=0
checked=0
for f in $(find util runtime target frontend transform backend harness driver dsl -type f \
             \( -name '*.c' -o -name '*.h' -o -name '*.l' -o -name '*.y' \) | sort); do
  dir=${f%%/*}
  own=$(rank "$dir")
  while IFS= read -r inc; do
    checked=$((checked + 1))
    if [[ $inc != */* ]]; then
      [[ -e $dir/$inc || -e runtime/$inc || $inc == parser.h || $inc == lexer.h ]] ||
        { echo "layers.sh: FAIL: $f includes \"$inc\", in no folder it may name"; failures=$((failures + 1)); }
      continue
    fi
    to=$(rank "${inc%%/*}")
    if [[ -z $to ]]; then
      [[ $inc == dsl/* ]] || { echo "layers.sh: FAIL: $f includes \"$inc\", of no layer"; failures=$((failures + 1)); }
    elif ((to > own)); then
      echo "layers.sh: FAIL: $f ($dir) includes \"$inc\", of the higher layer ${inc%%/*}"
      failures=$((failures + 1))
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done
((checked > 100)) || { echo "layers.sh: FAIL: only $checked includes seen"; failures=$((failures + 1)); }
if ((failures)); then
  echo "layers.sh: $failures failure(s)"
  exit 1
fi
echo "layers.sh: ok ($checked includes, none upward)"

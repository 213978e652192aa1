#!/usr/bin/env bash
# editors.sh: the editor grammars under editors/ load and know the language.
#
#  - the TextMate grammar (editors/vscode, also used by VS Code) is valid
#    JSON whose every regex compiles, and its patterns match every keyword
#    of util/keywords.def (the lexer's list), every op of runtime/ops.def, the engines and numbers;
#  - the Vim syntax file loads in vim without an error, names every keyword
#    and op, and vim gives the expected highlight group in a kernel line.
# No golden files: UPDATE=1 skips nothing, there is nothing to regenerate.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

sed -n 's/^KEYWORD("\([a-z0-9]*\)".*/\1/p' util/keywords.def | sort -u >"$tmp/keywords"
sed -n 's/^OP([A-Z_]*, *"\([a-z_]*\)".*/\1/p' runtime/ops.def | sort -u >"$tmp/ops"
[ -s "$tmp/keywords" ] && [ -s "$tmp/ops" ] || fail "could not read the keywords or the ops"

python3 - "$tmp/keywords" "$tmp/ops" <<'PY' || fail "the TextMate grammar"
import json, re, sys
g = json.load(open("editors/vscode/syntaxes/bfk.tmLanguage.json"))
json.load(open("editors/vscode/package.json"))
json.load(open("editors/vscode/language-configuration.json"))
scopes = {}
def walk(p):
    for key in ("match", "begin", "end"):
        if key in p:
            scopes.setdefault(p.get("name", ""), []).append(re.compile(p[key]))
    for q in p.get("patterns", []):
        walk(q)
for item in g["repository"].values():
    walk(item)
def scope_of(text, word):
    """The scope whose pattern matches exactly word within text."""
    at = text.index(word)
    for name, rxs in scopes.items():
        for rx in rxs:
            for m in rx.finditer(text):
                if m.start() == at and m.end() == at + len(word):
                    return name
    return None
bad = []
for kw in open(sys.argv[1]).read().split():
    s = scope_of(kw + " ", kw)
    if not s or not (s.startswith("keyword") or s.startswith("storage")): bad.append("keyword " + kw)
for op in open(sys.argv[2]).read().split():
    if scope_of("  dve: " + op + " d, s;", op) != "support.function.op.bfk": bad.append("op " + op)
for eng in ("pe", "act", "dve", "pool", "dma", "dma1"):
    if scope_of("  " + eng + ": copy d, s;", eng) != "entity.name.tag.engine.bfk": bad.append("engine " + eng)
for num, kind in (("1e-5", "float"), ("0.5", "float"), ("2.5E+2", "float"), ("42", "integer")):
    if scope_of("x, " + num + ";", num) != "constant.numeric.%s.bfk" % kind: bad.append("number " + num)
if scope_of("a // note", "// note") != "comment.line.double-slash.bfk": bad.append("comment")
if bad:
    sys.exit("not highlighted: " + ", ".join(bad))
PY

vim_file=editors/vim/syntax/bfk.vim
for word in $(cat "$tmp/keywords" "$tmp/ops"); do
  grep -qE "^syn keyword bfk[A-Za-z]+( [a-z0-9_]+)* $word( |$)" "$vim_file" || fail "$vim_file does not name '$word'"
done
if command -v vim >/dev/null; then
  printf 'kernel k() {\n  dve: gelu y, x;\n  act: add y, y, 1e-5;  // c\n}\n' >"$tmp/k.bfk"
  # vim -es exits non-zero when a command fails; the probes write what vim highlights.
  vim -Nu NONE -i NONE -es -c "set rtp^=$PWD/editors/vim" -c 'filetype on' -c 'syntax on' \
      -c "edit $tmp/k.bfk" \
      -c "call writefile([&filetype, synIDattr(synID(1, 1, 1), 'name'), synIDattr(synID(2, 3, 1), 'name'),
                          synIDattr(synID(2, 8, 1), 'name'), synIDattr(synID(3, 19, 1), 'name'),
                          synIDattr(synID(3, 26, 1), 'name')], '$tmp/probe')" -c 'qa!' </dev/null >/dev/null 2>&1 ||
    fail "vim could not load $vim_file"
  want=$'bfk\nbfkKeyword\nbfkEngine\nbfkOp\nbfkFloat\nbfkComment'
  [ "$(cat "$tmp/probe" 2>/dev/null)" = "$want" ] ||
    fail "vim highlights the probe kernel as: $(tr '\n' ' ' <"$tmp/probe" 2>/dev/null), not: $(echo "$want" | tr '\n' ' ')"
else
  echo "editors.sh: vim not found, the Vim file was only read"
fi

finish

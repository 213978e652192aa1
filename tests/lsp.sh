#!/usr/bin/env bash
# lsp.sh: `bfsync lsp`, the language server (docs/lsp.md), driven by
# tests/lsp_session.py over JSON-RPC on its standard input and output:
#   session    initialize, open (diagnostics), change, hover, definition,
#              inlay hints (checked against compile --explain), every prefix
#              of a kernel as if typed, close, shutdown, exit; utf-8 positions
#   malformed  broken framing and JSON, bad requests, a message over the
#              limit, hostile documents: answered or skipped, server alive
#   limits     the per-request time limit on a large kernel
# Then editors/vscode/lsp.js, the VS Code extension's client, under Node.
# Each part runs under `timeout`, so a hang fails the test instead of
# stalling it.
set -u
: "${BFSYNC:?BFSYNC must name the bfsync binary}"
BFSYNC=$(cd "$(dirname "$BFSYNC")" && pwd)/$(basename "$BFSYNC")
cd "$(dirname "$0")/.."
failures=0
for part in session malformed limits; do
  if ! timeout 300 python3 tests/lsp_session.py "$BFSYNC" $part; then
    echo "lsp.sh: FAIL: $part" >&2
    failures=$((failures + 1))
  fi
done
# the VS Code extension's client (editors/vscode/lsp.js) under plain Node,
# when Node is installed (the extension needs nothing else)
if command -v node >/dev/null; then
  for js in editors/vscode/extension.js editors/vscode/lsp.js; do
    node --check "$js" || { echo "lsp.sh: FAIL: $js does not parse" >&2; failures=$((failures + 1)); }
  done
  timeout 120 node tests/lsp_node.js "$BFSYNC" examples/softmax.bfk || failures=$((failures + 1))
else
  echo "lsp.sh: node is not installed; the VS Code client is not exercised"
fi
"$BFSYNC" lsp --bogus >/dev/null 2>&1
[ $? = 2 ] || { echo "lsp.sh: FAIL: a bad option is not a usage error" >&2; failures=$((failures + 1)); }
if [ $failures -gt 0 ]; then
  echo "lsp.sh: $failures failure(s)" >&2
  exit 1
fi
echo "lsp.sh: ok"

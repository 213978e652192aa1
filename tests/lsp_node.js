// lsp_node.js: editors/vscode/lsp.js, the VS Code extension's protocol
// client, against `bfsync lsp` under plain Node (tests/lsp.sh): initialize,
// open a kernel with an error, its diagnostics, hover, inlay hints,
// shutdown. usage: node tests/lsp_node.js BFSYNC KERNEL.bfk
"use strict";
const fs = require("fs");
const assert = require("assert");
const { LspConnection } = require("../editors/vscode/lsp.js");

async function main() {
  const [bfsync, kernel] = process.argv.slice(2);
  let published = null;
  const got = new Promise((resolve) => { published = resolve; });
  const c = new LspConnection(bfsync, ["lsp"], (method, params) => {
    if (method === "textDocument/publishDiagnostics") published(params);
  });
  const init = await c.request("initialize", { processId: process.pid, rootUri: null, capabilities: {} });
  assert(init.capabilities.inlayHintProvider);
  c.notify("initialized", {});
  const text = fs.readFileSync(kernel, "utf8");
  const uri = "file://" + fs.realpathSync(kernel);
  c.notify("textDocument/didOpen", { textDocument: { uri, languageId: "bfk", version: 1,
                                                     text: text.replace("dve: rowmax", "dve: rowmix") } });
  const d = await got;
  assert(d.diagnostics.length > 0 && /rowmix/.test(d.diagnostics[0].message), JSON.stringify(d));
  c.notify("textDocument/didChange", { textDocument: { uri, version: 2 }, contentChanges: [{ text }] });
  const line = text.split("\n").findIndex((l) => l.includes("dve: rowmax"));
  const h = await c.request("textDocument/hover", { textDocument: { uri },
    position: { line, character: text.split("\n")[line].indexOf("rowmax") } });
  assert(/\*\*rowmax\*\*/.test(h.contents.value), JSON.stringify(h));
  const hints = await c.request("textDocument/inlayHint", { textDocument: { uri },
    range: { start: { line: 0, character: 0 }, end: { line: 1000, character: 0 } } });
  assert(hints.length > 0 && hints.every((x) => /wait /.test(x.label)), JSON.stringify(hints));
  await c.stop();
  console.log("lsp_node.js: ok");
}

main().catch((e) => { console.error("lsp_node.js: FAIL:", e.message); process.exit(1); });

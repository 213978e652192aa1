// extension.js: bfsync kernels in VS Code through `bfsync lsp` (docs/lsp.md):
// diagnostics as you type, hover, go to definition, and the waits bfsync
// inserts shown as inlay hints before each instruction. The protocol client
// is lsp.js (no npm packages). Settings: bfsync.path (the bfsync command),
// bfsync.sync (the sync mode whose waits the hints show).
"use strict";
const vscode = require("vscode");
const { LspConnection } = require("./lsp.js");

let connection = null;

function toRange(r) {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

function severity(s) {
  return s === 1 ? vscode.DiagnosticSeverity.Error : s === 2 ? vscode.DiagnosticSeverity.Warning
                                                      : vscode.DiagnosticSeverity.Information;
}

async function activate(context) {
  const config = vscode.workspace.getConfiguration("bfsync");
  const diagnostics = vscode.languages.createDiagnosticCollection("bfsync");
  context.subscriptions.push(diagnostics);
  connection = new LspConnection(config.get("path", "bfsync"), ["lsp"], (method, params) => {
    if (method !== "textDocument/publishDiagnostics") return;
    const uri = vscode.Uri.parse(params.uri);
    diagnostics.set(uri, params.diagnostics.map((d) => {
      const item = new vscode.Diagnostic(toRange(d.range), d.message, severity(d.severity));
      item.source = "bfsync";
      item.relatedInformation = (d.relatedInformation || []).map((r) =>
        new vscode.DiagnosticRelatedInformation(new vscode.Location(vscode.Uri.parse(r.location.uri),
                                                                    toRange(r.location.range)), r.message));
      return item;
    }));
  });
  await connection.request("initialize", {
    processId: process.pid, rootUri: null, capabilities: {},
    initializationOptions: { sync: config.get("sync", "barrier-free") },
  });
  connection.notify("initialized", {});

  const isKernel = (doc) => doc.languageId === "bfk";
  const open = (doc) => isKernel(doc) && connection.notify("textDocument/didOpen", {
    textDocument: { uri: doc.uri.toString(), languageId: "bfk", version: doc.version, text: doc.getText() },
  });
  vscode.workspace.textDocuments.forEach(open);
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument(open),
    vscode.workspace.onDidChangeTextDocument((e) => isKernel(e.document) && connection.notify(
      "textDocument/didChange", { textDocument: { uri: e.document.uri.toString(), version: e.document.version },
                                  contentChanges: [{ text: e.document.getText() }] })),
    vscode.workspace.onDidCloseTextDocument((doc) => isKernel(doc) && connection.notify(
      "textDocument/didClose", { textDocument: { uri: doc.uri.toString() } })),
    vscode.languages.registerHoverProvider("bfk", {
      async provideHover(doc, pos) {
        const h = await connection.request("textDocument/hover", {
          textDocument: { uri: doc.uri.toString() }, position: { line: pos.line, character: pos.character } });
        return h ? new vscode.Hover(new vscode.MarkdownString(h.contents.value), h.range && toRange(h.range)) : null;
      },
    }),
    vscode.languages.registerDefinitionProvider("bfk", {
      async provideDefinition(doc, pos) {
        const loc = await connection.request("textDocument/definition", {
          textDocument: { uri: doc.uri.toString() }, position: { line: pos.line, character: pos.character } });
        return loc ? new vscode.Location(vscode.Uri.parse(loc.uri), toRange(loc.range)) : null;
      },
    }),
    vscode.languages.registerInlayHintsProvider("bfk", {
      async provideInlayHints(doc, range) {
        const hints = await connection.request("textDocument/inlayHint", {
          textDocument: { uri: doc.uri.toString() },
          range: { start: { line: range.start.line, character: range.start.character },
                   end: { line: range.end.line, character: range.end.character } } });
        return (hints || []).map((h) => {
          const hint = new vscode.InlayHint(new vscode.Position(h.position.line, h.position.character), h.label);
          hint.tooltip = h.tooltip;
          hint.paddingRight = h.paddingRight;
          return hint;
        });
      },
    }));
}

function deactivate() {
  return connection ? connection.stop() : undefined;
}

module.exports = { activate, deactivate };

// lsp.js: a minimal Language Server Protocol client over a child process's
// standard input and output (Content-Length framing, JSON-RPC 2.0), with no
// dependency beyond Node itself, so the extension needs nothing downloaded.
// extension.js connects it to VS Code; tests/lsp.sh runs it against
// `bfsync lsp` under plain Node.
"use strict";
const { spawn } = require("child_process");

class LspConnection {
  constructor(command, args, onNotification, onExit) {
    this.nextId = 1;
    this.pending = new Map();
    this.buffer = Buffer.alloc(0);
    this.onNotification = onNotification;
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.on("data", (chunk) => this.receive(chunk));
    this.child.stderr.on("data", () => {}); // the server's log; not the protocol
    this.child.on("error", (e) => this.fail(e));
    this.child.on("exit", (code) => {
      this.fail(new Error("bfsync lsp exited with status " + code));
      if (onExit) onExit(code);
    });
  }

  fail(error) {
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }

  write(message) {
    const body = Buffer.from(JSON.stringify(message), "utf8");
    this.child.stdin.write("Content-Length: " + body.length + "\r\n\r\n");
    this.child.stdin.write(body);
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.write({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method, params) {
    this.write({ jsonrpc: "2.0", method, params });
  }

  receive(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      const header = this.buffer.slice(0, end).toString("ascii");
      const match = /content-length:\s*(\d+)/i.exec(header);
      if (!match) {
        this.buffer = this.buffer.slice(end + 4);
        continue;
      }
      const length = Number(match[1]);
      if (this.buffer.length < end + 4 + length) return;
      const message = JSON.parse(this.buffer.slice(end + 4, end + 4 + length).toString("utf8"));
      this.buffer = this.buffer.slice(end + 4 + length);
      this.dispatch(message);
    }
  }

  dispatch(message) {
    if (message.id !== undefined && message.method === undefined) {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    } else if (message.method && message.id === undefined && this.onNotification) {
      this.onNotification(message.method, message.params);
    }
  }

  async stop() {
    try {
      await this.request("shutdown", null);
      this.notify("exit", null);
    } catch (e) {
      this.child.kill();
    }
  }
}

module.exports = { LspConnection };

#!/usr/bin/env python3
"""lsp_session.py: a scripted JSON-RPC session with `bfsync lsp` (tests/lsp.sh).

Standard library only. Starts the server, speaks the Language Server
Protocol to it over its standard input and output with Content-Length
framing, and checks every answer:

  session     initialize (utf-16, then a second server with utf-8), open a
              kernel with errors (diagnostics with ranges, notes as related
              information), change it to a good kernel (no diagnostics),
              hover on an op, an engine, a tensor, a loop variable,
              definition of a tile and a loop variable, inlay hints (the
              waits bfsync --explain lists, before their instructions),
              a `// target:` line found and missing,
              a file mid-edit at every prefix of a kernel, close, shutdown,
              exit with status 0
  malformed   bad framing, bad JSON, a request without a method, unknown
              methods, requests before initialize, bad params, a message
              over the size limit, an unknown document, NUL bytes, deep
              nesting: each answered or skipped, the server alive after
  limits      a per-request time limit that a large kernel exceeds: an
              error reply, and the server answers the next request

usage: lsp_session.py BFSYNC (session|malformed|limits)
"""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Server:
    def __init__(self, bfsync, env=None):
        self.p = subprocess.Popen([bfsync, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=dict(os.environ, **(env or {})))
        self.next_id = 0
        self.notifications = []

    def raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        body = json.dumps(obj).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def read(self):
        length = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise EOFError("the server closed its output")
            line = line.strip()
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        assert length is not None, "a message without Content-Length"
        return json.loads(self.p.stdout.read(length))

    def request(self, method, params=None):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        return self.answer(self.next_id)

    def answer(self, id_):
        while True:
            m = self.read()
            if "id" in m and "method" not in m and m["id"] == id_:
                return m
            self.notifications.append(m)

    def notify(self, method, params=None):
        self.send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    def diagnostics(self, uri):
        """The next publishDiagnostics for uri (after a notification that causes one)."""
        while True:
            for i, m in enumerate(self.notifications):
                if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
                    del self.notifications[i]
                    return m["params"]
            self.notifications.append(self.read())

    def close(self):
        self.p.stdin.close()
        status = self.p.wait(timeout=30)
        return status, self.p.stderr.read().decode()


def initialize(s, encodings=None):
    caps = {"general": {"positionEncodings": encodings}} if encodings else {}
    r = s.request("initialize", {"processId": None, "rootUri": None, "capabilities": caps})
    s.notify("initialized")
    return r["result"]


def pos_of(text, needle, nth=0, utf16=True):
    """The protocol position of the nth occurrence of needle in text."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at)
    col_text = text[text.rfind("\n", 0, at) + 1:at]
    col = len(col_text.encode("utf-16-le")) // 2 if utf16 else len(col_text.encode())
    return {"line": line, "character": col}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def session(bfsync):
    s = Server(bfsync)
    result = initialize(s)
    caps = result["capabilities"]
    check(caps["positionEncoding"] == "utf-16" and caps["hoverProvider"] and caps["definitionProvider"]
          and caps["inlayHintProvider"] and caps["textDocumentSync"]["change"] == 1, result)
    check(result["serverInfo"]["name"] == "bfsync", result)

    good = open(os.path.join(ROOT, "examples", "softmax.bfk"), encoding="utf-8").read()
    uri = "file://" + os.path.join(ROOT, "examples", "softmax.bfk").replace(" ", "%20")
    # an error with a note, and a multi-byte character before it on its line
    bad = good.replace("sbuf y[2]: f32[32, 96];", "sbuf x: f32[32, 96]; /* é€😀 */ sbuf y[2]: f32[32, 96];")
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "bfsync", "version": 1,
                                                       "text": bad}})
    d = s.diagnostics(uri)
    check(d["version"] == 1 and d["diagnostics"], d)
    first = d["diagnostics"][0]
    check(first["severity"] == 1 and first["source"] == "bfsync" and "duplicate" in first["message"], first)
    check(first["range"]["start"] == pos_of(bad, "x: f32[32, 96]; /*"), (first["range"], pos_of(bad, "x: f32[32, 96]; /*")))
    check(first["relatedInformation"] and first["relatedInformation"][0]["location"]["uri"] == uri, first)

    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                        "contentChanges": [{"text": good}]})
    d = s.diagnostics(uri)
    check(d["version"] == 2 and d["diagnostics"] == [], d)

    def hover(needle, nth=0):
        return s.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos_of(good, needle, nth)})

    h = hover("rowmax m")["result"]
    v = h["contents"]["value"]
    check(h["contents"]["kind"] == "markdown" and "**rowmax**" in v and "engines: dve, pool" in v
          and "cost class: reduce" in v and "accuracy class: exact" in v, h)
    check(h["range"]["start"] == pos_of(good, "rowmax m"), h)
    h = hover("dve: rowmax")["result"]
    check("engine **dve**" in h["contents"]["value"] and "rowmax" in h["contents"]["value"], h)
    h = hover("X[r, 0]")["result"]
    check("hbm tensor" in h["contents"]["value"] and "hbm in X: f32[R * 32, 96];" in h["contents"]["value"], h)
    h = hover("r % 2]", 0)["result"]
    check("loop variable" in h["contents"]["value"] and "for r in 0 .. R" in h["contents"]["value"], h)
    check(s.request("textDocument/hover", {"textDocument": {"uri": uri},
                                           "position": {"line": 0, "character": 1}})["result"] is None, "comment")

    def definition(needle, nth=0):
        return s.request("textDocument/definition", {"textDocument": {"uri": uri},
                                                     "position": pos_of(good, needle, nth)})["result"]

    loc = definition("m[r % 2], x")
    check(loc["uri"] == uri and loc["range"]["start"] == pos_of(good, "m[2]: f32"), loc)
    loc = definition("r % 2]", 3)
    check(loc["range"]["start"] == pos_of(good, "r in 0 .. R"), loc)
    loc = definition("R * 32", 0)
    check(loc["range"]["start"] == pos_of(good, "R: int"), loc)

    lines = good.count("\n") + 1
    hints = s.request("textDocument/inlayHint", {"textDocument": {"uri": uri},
                                                 "range": {"start": {"line": 0, "character": 0},
                                                           "end": {"line": lines, "character": 0}}})["result"]
    explain = subprocess.run([bfsync, "compile", "--explain", os.path.join(ROOT, "examples", "softmax.bfk")],
                             capture_output=True, text=True, check=True).stdout
    waits = [l for l in explain.splitlines() if ": wait " in l]
    labels = "; ".join(h["label"] for h in hints)
    check(labels.count("wait ") == len(waits), (labels, waits))
    for w in waits:  # "act line 29: wait dve >= r * 4 + 1"
        engine_line, _, wait = w.partition(": ")
        line = int(engine_line.split()[-1])
        check(any(h["position"]["line"] == line - 1 and wait in h["label"] for h in hints), (w, hints))
    check(all(h["tooltip"] and h["paddingRight"] for h in hints), hints)
    for q in [l for l in explain.splitlines() if " -> dma" in l]:  # "// line 26: dma: load -> dma0 (...)"
        line, queue = int(q.split()[2].rstrip(":")), q.split("-> ")[1].split()[0]
        check(any(h["position"]["line"] == line - 1 and h["label"].startswith("on " + queue) for h in hints), (q, hints))
    some = s.request("textDocument/inlayHint", {"textDocument": {"uri": uri},
                                                "range": {"start": {"line": 28, "character": 0},
                                                          "end": {"line": 29, "character": 0}}})["result"]
    check(0 < len(some) < len(hints) and all(h["position"]["line"] == 28 for h in some), some)

    # a file mid-edit: every prefix of the kernel, typed a few bytes at a time
    for version, cut in enumerate(range(0, len(good) + 1, 7), start=3):
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                            "contentChanges": [{"text": good[:cut]}]})
        d = s.diagnostics(uri)
        check(d["version"] == version, d)
        if cut % 49 == 0:
            mid = {"line": good[:cut].count("\n"), "character": 0}
            for m in ("textDocument/hover", "textDocument/definition"):
                check("result" in s.request(m, {"textDocument": {"uri": uri}, "position": mid}), m)
            check("result" in s.request("textDocument/inlayHint", {"textDocument": {"uri": uri},
                                        "range": {"start": {"line": 0, "character": 0}, "end": mid}}), "hints")
    # an incremental change, though the server asks for whole texts
    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 1000},
                                        "contentChanges": [{"text": good},
                                                           {"range": {"start": {"line": 0, "character": 0},
                                                                      "end": {"line": 0, "character": 2}},
                                                            "text": "kernel"}]})
    d = s.diagnostics(uri)
    # "// softmax.bfk: ..." became "kernel softmax.bfk: ...": the '.' after the name is wrong
    check(d["diagnostics"] and d["diagnostics"][0]["range"]["start"] == {"line": 0, "character": 14}, d)

    # a `// target:` line, relative to the document's folder: found, then missing
    turi = "file://" + os.path.join(ROOT, "examples", "with%20target.bfk")
    s.notify("textDocument/didOpen", {"textDocument": {"uri": turi, "version": 1,
                                                       "text": "// target: ../targets/trn1_c8.target\n" + good}})
    check(s.diagnostics(turi)["diagnostics"] == [], "a target line")
    missing = "// target: ../targets/none.target\n" + good
    s.notify("textDocument/didChange", {"textDocument": {"uri": turi, "version": 2},
                                        "contentChanges": [{"text": missing}]})
    d = s.diagnostics(turi)["diagnostics"]
    check(len(d) == 1 and "cannot open target file" in d[0]["message"] and d[0]["severity"] == 1
          and d[0]["range"]["start"] == pos_of(missing, "../targets/none"), d)
    s.notify("textDocument/didClose", {"textDocument": {"uri": turi}})
    s.diagnostics(turi)

    s.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    check(s.diagnostics(uri)["diagnostics"] == [], "close clears the diagnostics")
    check(s.request("textDocument/hover", {"textDocument": {"uri": uri},
                                           "position": {"line": 0, "character": 0}})["result"] is None, "closed")
    check(s.request("shutdown")["result"] is None, "shutdown")
    s.notify("exit")
    status, err = s.close()
    check(status == 0, "exit after shutdown: status %d, %s" % (status, err))

    # utf-8 positions when the client offers them
    s = Server(bfsync)
    check(initialize(s, ["utf-8", "utf-16"])["capabilities"]["positionEncoding"] == "utf-8", "utf-8")
    s.notify("textDocument/didOpen", {"textDocument": {"uri": "untitled:1", "version": 1, "text": bad}})
    first = s.diagnostics("untitled:1")["diagnostics"][0]
    check(first["range"]["start"] == pos_of(bad, "x: f32[32, 96]; /*", utf16=False), first)
    s.notify("exit")
    status, _ = s.close()
    check(status == 1, "exit without shutdown: status 1, got %d" % status)


def malformed(bfsync):
    s = Server(bfsync)
    check(s.request("textDocument/hover", {})["error"]["code"] == -32002, "before initialize")
    initialize(s)
    s.raw(b"Content-Length: 5\r\n\r\n{\"a\":")                 # truncated JSON
    check(s.read()["error"]["code"] == -32700, "parse error")
    s.raw(b"Content-Length: 2\r\n\r\n[]")                      # not an object
    check(s.read()["error"]["code"] == -32600, "invalid request")
    s.raw(b"Content-Length: 0\r\n\r\n")                         # empty body
    check(s.read()["error"]["code"] == -32700, "empty body")
    s.raw(b"Content-Type: x\r\n\r\n")                           # no length: skipped
    s.raw(b"Content-Length: abc\r\n\r\n")                       # bad length: skipped
    s.raw(b"X" * 5000 + b"\r\n\r\n")                            # a header line over the limit: skipped
    s.raw(b"Content-Length: 25\r\n\r\n{\"id\": 7, \"x\": \"a\\u0000\"}")  # NUL in a string
    check(s.read()["error"]["code"] == -32700, "a NUL")
    deep = b"[" * 10000 + b"]" * 10000
    s.raw(b"Content-Length: %d\r\n\r\n" % len(deep) + deep)
    check(s.read()["error"]["code"] == -32700, "deep nesting")
    big = 17 << 20
    s.raw(b"Content-Length: %d\r\n\r\n" % big + b" " * big)  # over the limit: read and dropped
    check("limit" in s.read()["error"]["message"], "too large")
    check(s.request("no/such/method")["error"]["code"] == -32601, "unknown method")
    s.notify("no/such/notification")
    s.notify("$/cancelRequest", {"id": 1})
    r = s.request("textDocument/hover", {"textDocument": {"uri": "file:///nowhere.bfk"}, "position": "x"})
    check(r["error"]["code"] == -32602, r)
    r = s.request("textDocument/inlayHint", {"textDocument": {"uri": "file:///nowhere.bfk"}})
    check(r["error"]["code"] == -32602, r)
    r = s.request("textDocument/definition", {"textDocument": {"uri": "file:///nowhere.bfk"},
                                              "position": {"line": 0, "character": 0}})
    check(r["result"] is None, r)
    s.send({"jsonrpc": "2.0", "id": "str-id", "method": "shutdown"})
    check(s.answer("str-id")["result"] is None, "a string id echoed")
    # hostile documents: binary, a NUL-free control soup, positions far outside the text
    for i, text in enumerate(["\x01\x02\xff" * 100, "kernel k(" * 1000, "{" * 100000, ""]):
        uri = "untitled:%d" % i
        s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "version": 1, "text": text}})
        check("diagnostics" in s.diagnostics(uri), uri)
        r = s.request("textDocument/hover", {"textDocument": {"uri": uri},
                                             "position": {"line": 10**9, "character": 10**9}})
        check("result" in r, r)
    s.notify("exit")
    status, err = s.close()
    check(status == 0, "status %d: %s" % (status, err))
    check("skipped" in err, err)


def limits(bfsync):
    """A kernel too large to transform in 1 s: the inlay hint request fails
    with the limit named, and the server goes on."""
    body = "".join("  act: exp x%d, x%d;\n  dve: add x%d, x%d, x%d;\n" % (i % 8, (i + 1) % 8, (i + 2) % 8, i % 8,
                                                                       (i + 3) % 8) for i in range(40000))
    decls = "".join("  sbuf x%d: f32[4, 4];\n" % i for i in range(8))
    text = "kernel big(N: int) {\n%s%s}\n" % (decls, body)
    s = Server(bfsync, {"BFSYNC_LSP_TIMEOUT": "1"})
    initialize(s)
    t0 = time.time()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": "untitled:big", "version": 1, "text": text}})
    d = s.diagnostics("untitled:big")  # in time, or one diagnostic naming the limit
    over = [x for x in d["diagnostics"] if "more than 1 s" in x["message"]]
    check(not over or (len(d["diagnostics"]) == 1 and over[0]["range"]["start"] == {"line": 0, "character": 0}), d)
    r = s.request("textDocument/inlayHint", {"textDocument": {"uri": "untitled:big"},
                                             "range": {"start": {"line": 0, "character": 0},
                                                       "end": {"line": 10**6, "character": 0}}})
    check("error" in r and "more than 1 s" in r["error"]["message"], r)
    check(time.time() - t0 < 20, "the limit held")
    check(s.request("shutdown")["result"] is None, "alive after the limit")
    s.notify("exit")
    check(s.close()[0] == 0, "exit")


if __name__ == "__main__":
    bfsync, what = sys.argv[1], sys.argv[2]
    {"session": session, "malformed": malformed, "limits": limits}[what](bfsync)
    print("lsp_session.py %s: ok" % what)

/* cmd_lsp.c: `bfsync lsp`, a language server over standard input and
 * output (docs/lsp.md): JSON-RPC 2.0 messages framed by Content-Length
 * headers, as the Language Server Protocol has them.
 *
 *   read a message -> parse it (util/json.h's reader, into a small tree)
 *   -> initialize | shutdown | exit | didOpen | didChange | didClose
 *      (diagnostics published) | hover | definition | inlayHint
 *   -> the answer, written with util/json.h's writer
 *
 * The server never trusts its input or the compiler with its own life.
 * A header line, a message and the open documents are bounded (limits
 * below; a message over the limit is read and dropped with an error
 * reply). Malformed framing is skipped, malformed JSON answered with a
 * parse error, a request of the wrong shape with invalid params. Every
 * answer that runs the compiler (driver/lsp_analysis.c) is computed in a
 * child process with an address-space limit and an alarm, and the reply is
 * read through a pipe with a cap: a kernel that takes too long, eats too
 * much memory or hits a bfsync bug costs that one answer (an error reply,
 * or a diagnostic saying why the file was not analyzed), never the
 * server. The documents live only in the server; a child sees them as
 * they were when it was forked. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver/args.h"
#include "driver/commands.h"
#include "driver/lsp.h"
#include "transform/ir.h"

enum {
  MAX_HEADER_LINE = 1024,
  MAX_HEADERS = 32,
  MAX_MESSAGE = 16 << 20,           /* bytes of one message's body */
  MAX_DOCS = 256,                   /* open documents */
  MAX_KEY = 256,                    /* bytes of an object key */
  MAX_REPLY = 64 << 20,             /* bytes of one answer from a child */
  DEFAULT_TIMEOUT = 10,             /* seconds per answer */
  DEFAULT_MEMORY_MIB = 2048,        /* address space of a child */
};
#define MAX_DOC_BYTES ((size_t)256 << 20) /* all open documents together */

static const char usage_text[] =
    "usage: bfsync lsp [--stdio]\n\n"
    "A language server for .bfk files on standard input and output (the Language\n"
    "Server Protocol): diagnostics as you type, hover on ops, engines and names,\n"
    "go to definition, and inlay hints showing the waits bfsync inserts before each\n"
    "instruction (docs/lsp.md). Each answer is computed with a time limit\n"
    "(BFSYNC_LSP_TIMEOUT seconds, default 10) and a memory limit (BFSYNC_LSP_MEMORY\n"
    "MiB, default 2048).\n"
    "  --stdio   accepted for editors that pass it; standard input is the only transport\n";

/* ---- JSON values: the reader's pull interface, into a tree per message. */

typedef struct Jv {
  char kind; /* 'o' object, 'a' array, 's' string, 'n' number, 't' true, 'f' false, 'z' null */
  double number;
  const char *string;
  int n;
  const char **keys; /* objects */
  struct Jv **items;
  size_t raw_begin, raw_end; /* the value's text (an id is echoed as it came) */
} Jv;

/* The bytes of the string literal at text[pos] up to its closing quote:
 * at least its decoded length. */
static size_t literal_len(const char *text, size_t pos, size_t len) {
  size_t i = pos + 1;
  while (i < len && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
  return i - pos;
}

static Jv *jv_parse(JsonReader *j, Arena *a) {
  Jv *v = ARENA_NEW(a, Jv);
  char c = json_peek(j);
  v->raw_begin = json_offset(j);
  v->kind = c == '{' ? 'o' : c == '[' ? 'a' : c == '"' ? 's' : c == 't' ? 't' : c == 'f' ? 'f' : c == 'n' ? 'z' : 'n';
  int cap = 0, key_cap = 0;
  bool first = true;
  if (c == '{' && !json_object(j)) {
    char key[MAX_KEY];
    while (json_member(j, &first, key, sizeof key) == 1) {
      v->keys = arena_grow(a, v->keys, sizeof *v->keys, v->n, &key_cap);
      v->items = arena_grow(a, v->items, sizeof *v->items, v->n, &cap);
      v->keys[v->n] = arena_strndup(a, key, strlen(key));
      if (!(v->items[v->n++] = jv_parse(j, a))) return NULL;
    }
  } else if (c == '[' && !json_array(j)) {
    while (json_element(j, &first) == 1) {
      v->items = arena_grow(a, v->items, sizeof *v->items, v->n, &cap);
      if (!(v->items[v->n++] = jv_parse(j, a))) return NULL;
    }
  } else if (c == '"') {
    size_t size = literal_len(j->text, j->pos, j->len) + 1;
    char *buf = arena_alloc(a, size);
    if (!json_string(j, buf, size, "a string")) v->string = buf;
  } else if (c == 't' || c == 'f' || c == 'n') {
    json_skip(j);
  } else {
    json_number(j, &v->number, "a number");
  }
  v->raw_end = j->pos;
  return j->failed ? NULL : v;
}

static const Jv *jv_get(const Jv *o, const char *key) {
  for (int i = 0; o && o->kind == 'o' && i < o->n; i++)
    if (!strcmp(o->keys[i], key)) return o->items[i];
  return NULL;
}

static const Jv *jv_path(const Jv *o, const char *a, const char *b) { return jv_get(jv_get(o, a), b); }
static const char *jv_string(const Jv *v) { return v && v->kind == 's' ? v->string : NULL; }

static bool jv_int(const Jv *v, int64_t *out) {
  if (!v || v->kind != 'n' || v->number < 0 || v->number > 1e15 || v->number != (double)(int64_t)v->number)
    return false;
  *out = (int64_t)v->number;
  return true;
}

/* ---- The server. */

typedef struct Server {
  FILE *in, *out;
  LspConfig config;
  LspDoc docs[MAX_DOCS];
  int ndocs;
  size_t doc_bytes;
  bool initialized, shutdown;
  int timeout;       /* seconds per answer */
  int64_t memory;    /* bytes of a child's address space */
} Server;

static void send_message(Server *s, const char *json, size_t n) {
  fprintf(s->out, "Content-Length: %zu\r\n\r\n", n);
  fwrite(json, 1, n, s->out);
  fflush(s->out);
}

/* A message built with a writer: open, fill, send. */
typedef struct Reply {
  char *text;
  size_t len;
  FILE *f;
  JsonWriter w;
} Reply;

static JsonWriter *reply_open(Reply *r) {
  r->text = NULL;
  r->f = open_memstream(&r->text, &r->len);
  if (!r->f) bug("out of memory");
  jw_init(&r->w, r->f, false);
  jw_object(&r->w);
  jw_key_string(&r->w, "jsonrpc", "2.0");
  return &r->w;
}

static void reply_send(Server *s, Reply *r) {
  jw_close(&r->w);
  fclose(r->f);
  send_message(s, r->text, r->len);
  free(r->text);
}

static void write_id(JsonWriter *w, const char *body, const Jv *id) {
  jw_key(w, "id");
  if (id && (id->kind == 'n' || id->kind == 's')) jw_raw(w, body + id->raw_begin, id->raw_end - id->raw_begin);
  else jw_null(w);
}

static void reply_error(Server *s, const char *body, const Jv *id, int code, const char *message) {
  Reply r;
  JsonWriter *w = reply_open(&r);
  write_id(w, body, id);
  jw_key(w, "error");
  jw_object(w);
  jw_key_int(w, "code", code);
  jw_key_string(w, "message", message);
  jw_close(w);
  reply_send(s, &r);
}

/* A result that is already JSON. */
static void reply_result(Server *s, const char *body, const Jv *id, const char *json, size_t n) {
  Reply r;
  JsonWriter *w = reply_open(&r);
  write_id(w, body, id);
  jw_key(w, "result");
  jw_raw(w, json, n);
  reply_send(s, &r);
}

/* ---- Answers from a child process. */

typedef enum TaskKind { TASK_DIAGNOSTICS, TASK_HOVER, TASK_DEFINITION, TASK_HINTS } TaskKind;

static void task_child(const Server *s, TaskKind kind, const LspDoc *d, LspPos a, LspPos b, int fd) {
#ifndef __SANITIZE_ADDRESS__ /* ASan's shadow memory is terabytes of address space */
  struct rlimit rl = {(rlim_t)s->memory, (rlim_t)s->memory};
  setrlimit(RLIMIT_AS, &rl);
#endif
  signal(SIGALRM, SIG_DFL);
  alarm((unsigned)s->timeout);
  FILE *f = fdopen(fd, "w");
  if (!f) _exit(3);
  JsonWriter w;
  jw_init(&w, f, false);
  switch (kind) {
  case TASK_DIAGNOSTICS: lsp_diagnostics(&s->config, d, &w); break;
  case TASK_HOVER: lsp_hover(&s->config, d, a, &w); break;
  case TASK_DEFINITION: lsp_definition(&s->config, d, a, &w); break;
  case TASK_HINTS: lsp_inlay_hints(&s->config, d, a, b, &w); break;
  }
  _exit(fclose(f) ? 3 : 0);
}

/* The answer's JSON (malloc'ed) in *json, or NULL with why. */
static char *run_task(Server *s, TaskKind kind, const LspDoc *d, LspPos a, LspPos b, size_t *len, char *why,
                      size_t whysize) {
  int fds[2];
  if (pipe(fds)) {
    snprintf(why, whysize, "cannot make a pipe: %s", strerror(errno));
    return NULL;
  }
  fflush(s->out);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    task_child(s, kind, d, a, b, fds[1]);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    snprintf(why, whysize, "cannot start a process: %s", strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  bool over = false;
  for (ssize_t got; buf && !over;) {
    if (n == cap) {
      char *bigger = cap < MAX_REPLY ? realloc(buf, cap * 2) : NULL;
      if (!bigger) {
        over = true;
        kill(pid, SIGKILL);
        break;
      }
      buf = bigger, cap *= 2;
    }
    got = read(fds[0], buf + n, cap - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += (size_t)got;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (buf && !over && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    *len = n;
    return buf;
  }
  free(buf);
  if (over || !buf) snprintf(why, whysize, "the answer is larger than %d MiB", MAX_REPLY >> 20);
  else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    snprintf(why, whysize, "bfsync took more than %d s on this file (the per-request limit)", s->timeout);
  else
    snprintf(why, whysize, "bfsync failed on this file (%s %d): over the %" PRId64 " MiB memory limit, or a bfsync bug",
             WIFSIGNALED(status) ? "signal" : "status", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
             s->memory >> 20);
  return NULL;
}

/* ---- Documents. */

static LspDoc *doc_find(Server *s, const char *uri) {
  for (int i = 0; uri && i < s->ndocs; i++)
    if (!strcmp(s->docs[i].uri, uri)) return &s->docs[i];
  return NULL;
}

static int hex(char c) { return c >= '0' && c <= '9' ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1; }

/* The file a file:// uri names (percent-decoded), else the uri. */
static char *uri_path(const char *uri) {
  bool file = !strncmp(uri, "file://", 7);
  const char *from = file ? uri + 7 : uri;
  char *path = malloc(strlen(from) + 1), *o = path;
  if (!path) return NULL;
  for (const char *p = from; *p; p++) {
    if (file && p[0] == '%' && hex(p[1]) >= 0 && hex(p[2]) >= 0 && (hex(p[1]) || hex(p[2]))) {
      *o++ = (char)(hex(p[1]) * 16 + hex(p[2]));
      p += 2;
    } else {
      *o++ = *p;
    }
  }
  *o = 0;
  return path;
}

static void doc_free(LspDoc *d) {
  free(d->uri);
  free(d->path);
  free(d->text);
}

static void publish(Server *s, const LspDoc *d) {
  char why[256];
  size_t len;
  char *json = run_task(s, TASK_DIAGNOSTICS, d, (LspPos){0, 0}, (LspPos){0, 0}, &len, why, sizeof why);
  Reply r;
  JsonWriter *w = reply_open(&r);
  jw_key_string(w, "method", "textDocument/publishDiagnostics");
  jw_key(w, "params");
  if (json) {
    jw_raw(w, json, len);
  } else {
    jw_object(w);
    jw_key_string(w, "uri", d->uri);
    jw_key_int(w, "version", d->version);
    jw_key(w, "diagnostics");
    jw_array(w);
    jw_object(w);
    jw_key(w, "range"); /* the top of the file */
    jw_object(w);
    for (int i = 0; i < 2; i++) {
      jw_key(w, i ? "end" : "start");
      jw_object(w);
      jw_key_int(w, "line", 0);
      jw_key_int(w, "character", 0);
      jw_close(w);
    }
    jw_close(w);
    jw_key_int(w, "severity", 1);
    jw_key_string(w, "source", "bfsync");
    jw_key_string(w, "message", why);
    jw_close(w);
    jw_close(w);
    jw_close(w);
  }
  reply_send(s, &r);
  free(json);
}

/* Store text as the document's, within the limits; the reason otherwise. */
static const char *doc_set(Server *s, LspDoc *d, const char *text) {
  size_t len = strlen(text);
  if (s->doc_bytes - d->len + len > MAX_DOC_BYTES) return "the open documents would be over 256 MiB together";
  char *copy = malloc(len + 1);
  if (!copy) return "out of memory";
  memcpy(copy, text, len + 1);
  s->doc_bytes = s->doc_bytes - d->len + len;
  free(d->text);
  d->text = copy;
  d->len = len;
  return NULL;
}

static void did_open(Server *s, const Jv *params) {
  const Jv *td = jv_get(params, "textDocument");
  const char *uri = jv_string(jv_get(td, "uri")), *text = jv_string(jv_get(td, "text"));
  int64_t version = 0;
  if (!uri || !text) return;
  jv_int(jv_get(td, "version"), &version);
  LspDoc *d = doc_find(s, uri);
  if (!d) {
    if (s->ndocs == MAX_DOCS) {
      fprintf(stderr, "bfsync lsp: %s not opened: %d documents are open, the limit\n", uri, MAX_DOCS);
      return;
    }
    d = &s->docs[s->ndocs];
    *d = (LspDoc){.uri = strdup(uri), .path = uri_path(uri)};
    if (!d->uri || !d->path) {
      doc_free(d);
      return;
    }
    s->ndocs++;
  }
  const char *why = doc_set(s, d, text);
  if (why) fprintf(stderr, "bfsync lsp: %s not updated: %s\n", uri, why);
  d->version = version;
  publish(s, d);
}

/* One change: the whole text, or (if the client sends ranges anyway) a
 * range replaced. NULL, or why it was not applied. */
static const char *apply_change(Server *s, LspDoc *d, const Jv *change) {
  const char *text = jv_string(jv_get(change, "text"));
  const Jv *range = jv_get(change, "range");
  if (!text) return "a change without text";
  if (!range) return doc_set(s, d, text);
  LspPos a, b;
  if (!jv_int(jv_path(range, "start", "line"), &a.line) || !jv_int(jv_path(range, "start", "character"), &a.character) ||
      !jv_int(jv_path(range, "end", "line"), &b.line) || !jv_int(jv_path(range, "end", "character"), &b.character))
    return "a change with a malformed range";
  size_t from = lsp_offset(&s->config, d, a), to = lsp_offset(&s->config, d, b);
  if (to < from) to = from;
  size_t n = strlen(text), len = d->len - (to - from) + n;
  char *joined = malloc(len + 1);
  if (!joined) return "out of memory";
  memcpy(joined, d->text, from);
  memcpy(joined + from, text, n);
  memcpy(joined + from + n, d->text + to, d->len - to);
  joined[len] = 0;
  const char *why = doc_set(s, d, joined);
  free(joined);
  return why;
}

static void did_change(Server *s, const Jv *params) {
  const Jv *td = jv_get(params, "textDocument"), *changes = jv_get(params, "contentChanges");
  LspDoc *d = doc_find(s, jv_string(jv_get(td, "uri")));
  if (!d || !changes || changes->kind != 'a') return;
  for (int i = 0; i < changes->n; i++) {
    const char *why = apply_change(s, d, changes->items[i]);
    if (why) fprintf(stderr, "bfsync lsp: %s: change not applied: %s\n", d->uri, why);
  }
  jv_int(jv_get(td, "version"), &d->version);
  publish(s, d);
}

static void did_close(Server *s, const Jv *params) {
  LspDoc *d = doc_find(s, jv_string(jv_path(params, "textDocument", "uri")));
  if (!d) return;
  Reply r;
  JsonWriter *w = reply_open(&r);
  jw_key_string(w, "method", "textDocument/publishDiagnostics");
  jw_key(w, "params");
  jw_object(w);
  jw_key_string(w, "uri", d->uri);
  jw_key(w, "diagnostics");
  jw_raw(w, "[]", 2);
  jw_close(w);
  reply_send(s, &r);
  s->doc_bytes -= d->len;
  doc_free(d);
  *d = s->docs[--s->ndocs];
}

/* ---- Requests. */

static void initialize(Server *s, const char *body, const Jv *id, const Jv *params) {
  const Jv *encodings = jv_path(jv_get(params, "capabilities"), "general", "positionEncodings");
  for (int i = 0; encodings && encodings->kind == 'a' && i < encodings->n; i++)
    if (jv_string(encodings->items[i]) && !strcmp(encodings->items[i]->string, "utf-8")) s->config.utf8 = true;
  const char *sync = jv_string(jv_path(params, "initializationOptions", "sync"));
  s->config.sync = sync && !strcmp(sync, "barrier") ? SYNC_BARRIER : SYNC_BARRIER_FREE;
  s->initialized = true;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) bug("out of memory");
  JsonWriter w;
  jw_init(&w, f, false);
  jw_object(&w);
  jw_key(&w, "capabilities");
  jw_object(&w);
  jw_key_string(&w, "positionEncoding", s->config.utf8 ? "utf-8" : "utf-16");
  jw_key(&w, "textDocumentSync");
  jw_object(&w);
  jw_key(&w, "openClose");
  jw_bool(&w, true);
  jw_key_int(&w, "change", 1); /* the whole text each time */
  jw_close(&w);
  jw_key(&w, "hoverProvider");
  jw_bool(&w, true);
  jw_key(&w, "definitionProvider");
  jw_bool(&w, true);
  jw_key(&w, "inlayHintProvider");
  jw_bool(&w, true);
  jw_close(&w);
  jw_key(&w, "serverInfo");
  jw_object(&w);
  jw_key_string(&w, "name", "bfsync");
  jw_key_string(&w, "version", BFSYNC_VERSION);
  jw_close(&w);
  jw_close(&w);
  fclose(f);
  reply_result(s, body, id, text, len);
  free(text);
}

static bool read_pos(const Jv *v, LspPos *p) {
  return jv_int(jv_get(v, "line"), &p->line) && jv_int(jv_get(v, "character"), &p->character);
}

/* hover, definition, inlayHint: the document's answer from a child. */
static void document_request(Server *s, const char *body, const Jv *id, const Jv *params, TaskKind kind) {
  LspDoc *d = doc_find(s, jv_string(jv_path(params, "textDocument", "uri")));
  LspPos a = {0, 0}, b = {0, 0};
  bool ok = kind == TASK_HINTS ? read_pos(jv_path(params, "range", "start"), &a) &&
                                     read_pos(jv_path(params, "range", "end"), &b)
                               : read_pos(jv_get(params, "position"), &a);
  if (!ok) {
    reply_error(s, body, id, -32602, kind == TASK_HINTS ? "expected params.range {start, end}"
                                                         : "expected params.position {line, character}");
    return;
  }
  if (!d) {
    reply_result(s, body, id, kind == TASK_HINTS ? "[]" : "null", kind == TASK_HINTS ? 2 : 4);
    return;
  }
  char why[256];
  size_t len;
  char *json = run_task(s, kind, d, a, b, &len, why, sizeof why);
  if (json) reply_result(s, body, id, json, len);
  else reply_error(s, body, id, -32603, why);
  free(json);
}

/* One message; false after `exit`. */
static bool handle(Server *s, const char *body, size_t len) {
  Arena *a = arena_new();
  JsonReader j;
  json_init(&j, "message", body, len);
  Jv *msg = jv_parse(&j, a);
  if (msg && json_end(&j)) msg = NULL;
  const Jv *id = jv_get(msg, "id"), *params = jv_get(msg, "params");
  const char *method = jv_string(jv_get(msg, "method"));
  bool request = id != NULL, go_on = true;
  if (!msg) {
    reply_error(s, body, NULL, -32700, j.error);
  } else if (!method) {
    if (!jv_get(msg, "result") && !jv_get(msg, "error")) /* a response to us is ignored */
      reply_error(s, body, msg->kind == 'o' ? id : NULL, -32600, "a request needs a method");
  } else if (!strcmp(method, "exit")) {
    go_on = false;
  } else if (!strcmp(method, "initialize")) {
    initialize(s, body, id, params);
  } else if (!s->initialized) {
    if (request) reply_error(s, body, id, -32002, "the server is not initialized");
  } else if (!strcmp(method, "shutdown")) {
    s->shutdown = true;
    reply_result(s, body, id, "null", 4);
  } else if (!strcmp(method, "textDocument/didOpen")) {
    did_open(s, params);
  } else if (!strcmp(method, "textDocument/didChange")) {
    did_change(s, params);
  } else if (!strcmp(method, "textDocument/didClose")) {
    did_close(s, params);
  } else if (request && !strcmp(method, "textDocument/hover")) {
    document_request(s, body, id, params, TASK_HOVER);
  } else if (request && !strcmp(method, "textDocument/definition")) {
    document_request(s, body, id, params, TASK_DEFINITION);
  } else if (request && !strcmp(method, "textDocument/inlayHint")) {
    document_request(s, body, id, params, TASK_HINTS);
  } else if (request) {
    reply_error(s, body, id, -32601, "method not found");
  } /* other notifications (initialized, didSave, $/cancelRequest, ...) need nothing */
  arena_free(a);
  return go_on;
}

/* ---- Framing. */

/* A header line into buf (without CR LF); -1 at the end of input, -2 when
 * longer than the limit (the rest of the line dropped). */
static int header_line(FILE *in, char *buf) {
  int n = 0, c;
  bool long_line = false;
  while ((c = fgetc(in)) != EOF && c != '\n') {
    if (n < MAX_HEADER_LINE) buf[n++] = (char)c;
    else long_line = true;
  }
  if (c == EOF && n == 0) return -1;
  if (n && buf[n - 1] == '\r') n--;
  buf[n] = 0;
  return long_line ? -2 : n;
}

/* The next message's body (malloc'ed) into *body: 1, or 0 at the end of
 * input, or -1 after a malformed header (already reported on stderr; the
 * server goes on with the next header). A body over MAX_MESSAGE is read
 * and dropped: -2, its size in *len. */
static int read_message(FILE *in, char **body, size_t *len) {
  char line[MAX_HEADER_LINE + 1];
  int64_t length = -1;
  bool bad = false;
  for (int headers = 0;; headers++) {
    int n = header_line(in, line);
    if (n == -1) return 0;
    if (n == 0) {
      if (headers == 0) continue; /* blank lines between messages */
      break;
    }
    if (n == -2 || headers >= MAX_HEADERS) bad = true;
    else if (!strncasecmp(line, "Content-Length:", 15)) {
      char *end;
      errno = 0;
      long long v = strtoll(line + 15, &end, 10);
      while (*end == ' ' || *end == '\t') end++;
      if (errno || v < 0 || *end || end == line + 15) bad = true;
      else length = v;
    }
  }
  if (bad || length < 0) {
    fprintf(stderr, "bfsync lsp: a message without a valid Content-Length header; skipped\n");
    return -1;
  }
  *len = (size_t)length;
  if (length > MAX_MESSAGE) {
    char sink[4096];
    for (int64_t left = length; left > 0;) {
      size_t got = fread(sink, 1, left < (int64_t)sizeof sink ? (size_t)left : sizeof sink, in);
      if (!got) return 0;
      left -= (int64_t)got;
    }
    return -2;
  }
  char *b = malloc((size_t)length + 1);
  if (!b) return -1;
  if (fread(b, 1, (size_t)length, in) != (size_t)length) {
    free(b);
    return 0;
  }
  b[length] = 0;
  *body = b;
  return 1;
}

static int env_limit(const char *name, int64_t fallback, int64_t max) {
  const char *v = getenv(name);
  char *end;
  long long n = v ? strtoll(v, &end, 10) : 0;
  return v && *v && !*end && n > 0 && n <= max ? (int)n : (int)fallback;
}

int cmd_lsp(int argc, char **argv) {
  bool stdio = false;
  const ArgSpec specs[] = {{.name = "--stdio", .kind = ARG_FLAG, .dest = &stdio}, {0}};
  Arena *arena = arena_new();
  CommandLine cl = {"lsp", usage_text, specs, 0, 0, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  arena_free(arena);
  if (status >= 0) return status;
  static Server s; /* the documents: too many for the stack */
  s = (Server){.in = stdin, .out = stdout};
  s.timeout = env_limit("BFSYNC_LSP_TIMEOUT", DEFAULT_TIMEOUT, 3600);
  s.memory = (int64_t)env_limit("BFSYNC_LSP_MEMORY", DEFAULT_MEMORY_MIB, 1 << 20) << 20;
  signal(SIGPIPE, SIG_IGN); /* an editor gone away is an end of input, not a signal */
  for (;;) {
    char *body = NULL;
    size_t len = 0;
    int got = read_message(s.in, &body, &len);
    if (got == 0) break;
    if (got == -2) {
      char why[128];
      snprintf(why, sizeof why, "a message of %zu bytes is over the %d MiB limit", len, MAX_MESSAGE >> 20);
      reply_error(&s, "", NULL, -32600, why);
    }
    bool go_on = got != 1 || handle(&s, body, len);
    free(body);
    if (!go_on || ferror(s.out)) break;
  }
  for (int i = 0; i < s.ndocs; i++) doc_free(&s.docs[i]);
  return s.shutdown ? 0 : 1;
}

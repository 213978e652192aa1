/* lsp_analysis.c: what the language server knows about a document, from
 * the compiler itself (docs/lsp.md).
 *
 *   diagnostics  parse -> check, every record of the Diag's sink (the
 *                records --diagnostics-format renders), notes as related
 *                information
 *   hover        an op: its entry of the op table (ops_describe); an
 *                engine: the ops it runs; a name: its declaration
 *   definition   a name's declaration: the innermost enclosing loop of that
 *                variable, else the kernel's parameter, constant, tensor or
 *                tile of that name
 *   inlay hints  transform_sync -> ir_validate, then every wait (and
 *                barrier) of every engine's stream shown before the
 *                instruction it guards, with its threshold and provenance:
 *                what `bfsync compile --explain` lists
 *
 * Each runs on a fresh program of the document's text, in a child process
 * the server started (driver/cmd_lsp.c), so nothing here needs to bound
 * its own time or memory, and nothing here is kept between requests.
 * Positions are converted between byte offsets and the protocol's lines
 * and UTF-16 (or, when negotiated, UTF-8) characters here only. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "driver/commands.h"
#include "driver/lsp.h"
#include "frontend/program.h"
#include "runtime/ops.h"
#include "transform/ir.h"
#include "transform/sync.h"
#include "util/utf8.h"

/* ---- Positions. */

/* The bytes of the character at s (1 for a byte that starts none). */
static size_t char_bytes(const char *s, size_t avail) {
  int n = (unsigned char)*s >= 0x80 ? utf8_length((const unsigned char *)s, avail) : 1;
  return n ? (size_t)n : 1;
}

static LspPos pos_of(const LspConfig *c, const LspDoc *d, size_t offset) {
  if (offset > d->len) offset = d->len;
  LspPos pos = {0, 0};
  size_t start = 0;
  for (size_t i = 0; i < offset; i++)
    if (d->text[i] == '\n') pos.line++, start = i + 1;
  for (size_t i = start; i < offset;) {
    size_t n = char_bytes(d->text + i, d->len - i);
    pos.character += c->utf8 ? (int64_t)n : n == 4 ? 2 : 1;
    i += n;
  }
  return pos;
}

size_t lsp_offset(const LspConfig *c, const LspDoc *d, LspPos pos) {
  size_t i = 0;
  for (int64_t line = 0; line < pos.line && i < d->len; i++)
    if (d->text[i] == '\n') line++;
  for (int64_t ch = 0; ch < pos.character && i < d->len && d->text[i] != '\n';) {
    size_t n = char_bytes(d->text + i, d->len - i);
    ch += c->utf8 ? (int64_t)n : n == 4 ? 2 : 1;
    i += n;
  }
  return i;
}

static void write_pos(JsonWriter *w, LspPos p) {
  jw_object(w);
  jw_key_int(w, "line", p.line);
  jw_key_int(w, "character", p.character);
  jw_close(w);
}

static void write_range(const LspConfig *c, const LspDoc *d, JsonWriter *w, size_t begin, size_t end) {
  jw_object(w);
  jw_key(w, "start");
  write_pos(w, pos_of(c, d, begin));
  jw_key(w, "end");
  write_pos(w, pos_of(c, d, end));
  jw_close(w);
}

/* ---- Programs. */

/* The document parsed and (when it parses) checked, its diagnostics in
 * sink; NULL only when it is too large to be a kernel. */
static Program *analyze(const LspDoc *d, DiagSink *sink) {
  if (d->len >= MAX_SOURCE_BYTES) return NULL;
  Program *p = program_new(d->path, d->text, d->len, NULL, NULL);
  p->diag.sink = sink;
  p->diag.warn = 1;
  /* the target line's file errors are printed, not recorded: read them back */
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (!out) bug("out of memory");
  int bad_target = program_use_target_line(p, out);
  fclose(out);
  if (bad_target) {
    /* the error at the `// target:` line, which the reader's note marks */
    Span at = {0, 0};
    DiagRecord *last = sink->n ? &sink->items[sink->n - 1] : NULL;
    if (last && !strcmp(last->kind, "note") && last->parent < 0) {
      at = (Span){last->begin, last->end};
      free(last->message);
      free(last->path);
      sink->n--;
    }
    const char *msg = text ? text : "";
    if (!strncmp(msg, ERROR_PREFIX, strlen(ERROR_PREFIX))) msg += strlen(ERROR_PREFIX);
    diag_error(&p->diag, at, "%.*s", (int)strcspn(msg, "\n"), msg);
  }
  free(text);
  if (bad_target) return p;
  parse(p);
  if (!p->diag.errors && p->kernel) check(p);
  return p;
}

static bool checked(const Program *p) { return p && p->kernel && !p->diag.errors; }

/* ---- Diagnostics. */

static int severity(const char *kind) { return !strcmp(kind, "error") ? 1 : !strcmp(kind, "warning") ? 2 : 3; }

static void write_diagnostic(const LspConfig *c, const LspDoc *d, JsonWriter *w, const DiagSink *s, int i) {
  const DiagRecord *r = &s->items[i];
  jw_object(w);
  jw_key(w, "range");
  write_range(c, d, w, r->begin, r->end > r->begin ? r->end : r->begin);
  jw_key_int(w, "severity", severity(r->kind));
  jw_key_string(w, "source", "bfsync");
  jw_key_string(w, "message", r->message);
  jw_key(w, "relatedInformation");
  jw_array(w);
  for (int n = i + 1; n < s->n && s->items[n].parent == i; n++) {
    jw_object(w);
    jw_key(w, "location");
    jw_object(w);
    jw_key_string(w, "uri", d->uri);
    jw_key(w, "range");
    write_range(c, d, w, s->items[n].begin, s->items[n].end);
    jw_close(w);
    jw_key_string(w, "message", s->items[n].message);
    jw_close(w);
  }
  jw_close(w);
  jw_close(w);
}

void lsp_diagnostics(const LspConfig *c, const LspDoc *d, JsonWriter *w) {
  DiagSink sink = {0};
  Program *p = analyze(d, &sink);
  jw_object(w);
  jw_key_string(w, "uri", d->uri);
  jw_key_int(w, "version", d->version);
  jw_key(w, "diagnostics");
  jw_array(w);
  if (!p) {
    jw_object(w);
    jw_key(w, "range");
    write_range(c, d, w, 0, 0);
    jw_key_int(w, "severity", 1);
    jw_key_string(w, "source", "bfsync");
    jw_key_string(w, "message", "the file is larger than 256 MiB, the limit for a kernel file");
    jw_close(w);
  }
  for (int i = 0; i < sink.n; i++)
    if (sink.items[i].parent < 0) write_diagnostic(c, d, w, &sink, i);
  jw_close(w);
  jw_close(w);
  program_free(p);
  diag_sink_free(&sink);
}

/* ---- What is at an offset. */

static bool inside(Span s, size_t at) { return at >= s.begin && at < s.end + (s.end == s.begin); }

/* The instruction or block whose op or engine name covers at, innermost. */
static const Stmt *stmt_at(const Stmt *s, size_t at, bool *on_engine) {
  for (; s; s = s->next) {
    if (s->kind == ST_INSTR && s->op_name && inside(s->op_span, at)) return *on_engine = false, s;
    if ((s->kind == ST_INSTR || s->kind == ST_BLOCK) && s->engine_name && inside(s->engine_span, at))
      return *on_engine = true, s;
    if (s->kind == ST_FOR || s->kind == ST_BLOCK || s->kind == ST_IF) {
      const Stmt *in = stmt_at(s->body, at, on_engine);
      if (!in && s->kind == ST_IF) in = stmt_at(s->orelse, at, on_engine);
      if (in) return in;
    }
  }
  return NULL;
}

/* The innermost `for` of variable name[0, n) whose statement covers at. */
static const Stmt *loop_of(const Stmt *s, const char *name, size_t n, size_t at) {
  for (; s; s = s->next) {
    if (!inside(s->span, at) || s->kind == ST_INSTR) continue;
    const Stmt *in = loop_of(s->body, name, n, at);
    if (!in && s->kind == ST_IF) in = loop_of(s->orelse, name, n, at);
    if (in) return in;
    if (s->kind == ST_FOR && s->var && strlen(s->var) == n && !memcmp(s->var, name, n)) return s;
  }
  return NULL;
}

typedef struct Decl {
  Span span;        /* its name */
  const char *what; /* "parameter", "loop variable", ... */
} Decl;

static bool is_name_char(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

#define NAME_IS(x) (strlen(x) == n && !memcmp((x), name, n))

/* The declaration of the identifier at `at`, and the identifier's span. */
static bool decl_at(const Program *p, size_t at, Decl *decl, Span *word) {
  const char *t = p->src.text;
  size_t b = at, e = at;
  while (b > 0 && is_name_char(t[b - 1])) b--;
  while (e < p->src.len && is_name_char(t[e])) e++;
  if (b == e || isdigit((unsigned char)t[b])) return false;
  const char *name = t + b;
  size_t n = e - b;
  *word = (Span){(uint32_t)b, (uint32_t)e};
  const Kernel *k = p->kernel;
  const Stmt *loop = loop_of(k->body, name, n, at);
  if (loop) return *decl = (Decl){loop->var_span, "loop variable"}, true;
  for (int i = 0; i < k->nparams; i++)
    if (NAME_IS(k->params[i].name)) return *decl = (Decl){k->params[i].span, "parameter"}, true;
  for (int i = 0; i < k->nconsts; i++)
    if (NAME_IS(k->consts[i].name)) return *decl = (Decl){k->consts[i].span, "constant"}, true;
  for (int i = 0; i < k->ntensors; i++)
    if (NAME_IS(k->tensors[i].name)) return *decl = (Decl){k->tensors[i].span, "hbm tensor"}, true;
  for (int i = 0; i < k->ntiles; i++)
    if (NAME_IS(k->tiles[i].name))
      return *decl = (Decl){k->tiles[i].span, k->tiles[i].mem == MEM_PSUM ? "psum tile" : "sbuf tile"}, true;
  return false;
}

/* The source line holding offset, cut to 200 bytes. */
static void write_line_of(FILE *out, const Program *p, size_t offset) {
  size_t b = offset, e = offset;
  while (b > 0 && p->src.text[b - 1] != '\n') b--;
  while (e < p->src.len && p->src.text[e] != '\n' && e - b < 200) e++;
  while (b < e && (p->src.text[b] == ' ' || p->src.text[b] == '\t')) b++;
  fwrite(p->src.text + b, 1, e - b, out);
}

/* ---- Hover. */

static void engine_hover(FILE *out, const Target *t, const char *name) {
  for (int e = 0; e < t->nengines; e++) {
    if (strcmp(t->engines[e].name, name)) continue;
    fprintf(out, "engine **%s** of target %s; runs:", name, t->name);
    for (int op = 0; op < BFRT_NOPS; op++)
      if (target_can_run(t, e, op) && (op == 0 || strcmp(op_info(op)->name, op_info(op - 1)->name)))
        fprintf(out, " %s", op_info(op)->name);
    fputc('\n', out);
    return;
  }
  fprintf(out, "no engine **%s** in target %s\n", name, t->name);
}

void lsp_hover(const LspConfig *c, const LspDoc *d, LspPos at, JsonWriter *w) {
  DiagSink sink = {0};
  Program *p = analyze(d, &sink);
  size_t offset = lsp_offset(c, d, at);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (!out) bug("out of memory");
  Span range = {0, 0};
  bool on_engine = false, any = false;
  const Stmt *s = p && p->kernel ? stmt_at(p->kernel->body, offset, &on_engine) : NULL;
  Decl decl;
  if (s && on_engine) {
    engine_hover(out, p->target, s->engine_name);
    range = s->engine_span, any = true;
  } else if (s) {
    int op = s->op >= 0 && s->op < BFRT_NOPS && checked(p) ? s->op : op_lookup(s->op_name);
    if (op >= 0) ops_describe(p->target, op, out);
    else fprintf(out, "no op **%s** (`bfsync ops` lists them)\n", s->op_name);
    range = s->op_span, any = true;
  } else if (p && p->kernel && decl_at(p, offset, &decl, &range)) {
    fprintf(out, "%s, line %d:\n\n```bfsync\n", decl.what, line_of(p, decl.span));
    write_line_of(out, p, decl.span.begin);
    fputs("\n```\n", out);
    any = true;
  }
  fclose(out);
  if (!any) {
    jw_null(w);
  } else {
    jw_object(w);
    jw_key(w, "contents");
    jw_object(w);
    jw_key_string(w, "kind", "markdown");
    jw_key(w, "value");
    jw_string(w, text);
    jw_close(w);
    jw_key(w, "range");
    write_range(c, d, w, range.begin, range.end);
    jw_close(w);
  }
  free(text);
  program_free(p);
  diag_sink_free(&sink);
}

/* ---- Definition. */

void lsp_definition(const LspConfig *c, const LspDoc *d, LspPos at, JsonWriter *w) {
  DiagSink sink = {0};
  Program *p = analyze(d, &sink);
  Decl decl;
  Span word;
  if (p && p->kernel && decl_at(p, lsp_offset(c, d, at), &decl, &word)) {
    jw_object(w);
    jw_key_string(w, "uri", d->uri);
    jw_key(w, "range");
    write_range(c, d, w, decl.span.begin, decl.span.end);
    jw_close(w);
  } else {
    jw_null(w);
  }
  program_free(p);
  diag_sink_free(&sink);
}

/* ---- Inlay hints: the waits before each instruction. */

typedef struct Hints {
  const LspConfig *c;
  const LspDoc *d;
  const Program *p;
  JsonWriter *w;
  size_t from, to;
  char *label, *tooltip; /* the waits pending before the stream's next op */
  size_t label_len, tooltip_len;
  FILE *lf, *tf;
} Hints;

static void pending_open(Hints *h) {
  h->lf = open_memstream(&h->label, &h->label_len);
  h->tf = open_memstream(&h->tooltip, &h->tooltip_len);
  if (!h->lf || !h->tf) bug("out of memory");
}

static const char *engine_of(const Program *p, int e) { return p->target->engines[e].name; }

/* Whether `dma:` transfers go to DMA queues (frontend/queues.c): the
 * target has DMA engines but none called "dma". */
static bool dma_queues(const Target *t) {
  for (int e = 0; e < t->nengines; e++)
    if (!strcmp(t->engines[e].name, "dma")) return false;
  return true;
}

/* The op the pending waits guard: one hint at its instruction, if in
 * range; on a DMA queue, the queue first. */
static void flush_hint(Hints *h, int engine, const IrNode *op) {
  if (h->p->target->engines[engine].kind == BFRT_KIND_DMA && dma_queues(h->p->target)) {
    fflush(h->lf);
    char *waits = h->label_len ? strdup(h->label) : NULL;
    rewind(h->lf);
    fprintf(h->lf, "on %s%s%s", engine_of(h->p, engine), waits ? "; " : "", waits ? waits : "");
    free(waits);
    fprintf(h->tf, "a `dma:` transfer, on the queue %s (round robin in program order)\n", engine_of(h->p, engine));
  }
  fclose(h->lf);
  fclose(h->tf);
  size_t at = op->instr->span.begin;
  if (h->label_len && at >= h->from && at <= h->to) {
    jw_object(h->w);
    jw_key(h->w, "position");
    write_pos(h->w, pos_of(h->c, h->d, at));
    jw_key(h->w, "label");
    jw_string(h->w, h->label);
    jw_key(h->w, "tooltip");
    jw_string(h->w, h->tooltip);
    jw_key(h->w, "paddingRight");
    jw_bool(h->w, true);
    jw_close(h->w);
  }
  free(h->label);
  free(h->tooltip);
  pending_open(h);
}

static void hint_nodes(Hints *h, const IrStream *s, int engine, const IrNode *n) {
  for (; n; n = n->next) {
    if (n->kind == IR_WAIT) {
      fprintf(h->lf, "%swait %s >= ", ftell(h->lf) ? "; " : "", engine_of(h->p, n->engine));
      ir_print_expr(h->p, s, n->threshold, h->lf);
      fprintf(h->tf, "%s waits for %s >= ", engine_of(h->p, engine), engine_of(h->p, n->engine));
      ir_print_expr(h->p, s, n->threshold, h->tf);
      if (n->why) {
        fprintf(h->tf, " (%s from line", n->why->kind);
        for (int i = 0; i < n->why->nproducers; i++) fprintf(h->tf, "%s %d", i ? "," : "", n->why->producer_lines[i]);
        fprintf(h->tf, "; %s)", n->why->distance);
        if (n->why->fallback) fprintf(h->tf, "; fallback: %s", n->why->fallback);
      }
      fputc('\n', h->tf);
    } else if (n->kind == IR_BARRIER) {
      fprintf(h->lf, "%sbarrier", ftell(h->lf) ? "; " : "");
      fprintf(h->tf, "%s meets every engine at a barrier\n", engine_of(h->p, engine));
    } else if (n->kind == IR_OP && n->instr) {
      flush_hint(h, engine, n);
    } else if (n->kind == IR_LOOP || n->kind == IR_IF) {
      hint_nodes(h, s, engine, n->body);
      if (n->kind == IR_IF) hint_nodes(h, s, engine, n->orelse);
    }
  }
}

void lsp_inlay_hints(const LspConfig *c, const LspDoc *d, LspPos from, LspPos to, JsonWriter *w) {
  DiagSink sink = {0};
  Program *p = analyze(d, &sink);
  jw_array(w);
  if (checked(p)) {
    transform_sync(p, (SyncMode)c->sync);
    if (!p->diag.errors) {
      ir_validate(p);
      Hints h = {c, d, p, w, lsp_offset(c, d, from), lsp_offset(c, d, to), NULL, NULL, 0, 0, NULL, NULL};
      for (int e = 0; e < p->ir->nengines; e++) {
        pending_open(&h);
        hint_nodes(&h, &p->ir->streams[e], e, p->ir->streams[e].body);
        fclose(h.lf); /* waits after the last op guard nothing */
        fclose(h.tf);
        free(h.label);
        free(h.tooltip);
      }
    }
  }
  jw_close(w);
  program_free(p);
  diag_sink_free(&sink);
}

/* diag.c: printing user errors the way compilers and editors agree on.
 *
 *   file:line:col: error: message
 *     the source line
 *     ^~~~
 *
 * Positions are byte offsets until a message is printed. The source line is
 * echoed safely: control bytes, NUL bytes and malformed UTF-8 print as '?',
 * tabs are kept (and echoed in the caret line so the caret stays aligned),
 * and a very long line is shown as a window around the caret. Messages are
 * capped in length so a 100,000-character name cannot flood the terminal.
 * After max_errors errors the rest are counted but not printed; warnings
 * likewise, and only for programs that ask for them (d->warn). An error
 * with no position goes through error_print, the one writer of the
 * "bfsync: error: " prefix.
 *
 * A Diag with a sink also records each diagnostic it reports as data
 * (DiagRecord: kind, message, the span's caret and finish positions, a
 * note's parent), for --diagnostics-format, the library and the language
 * server; with no out it prints nothing. */
#include "util/diag.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum {
  DEFAULT_MAX_ERRORS = 20,
  MAX_MESSAGE = 400,  /* bytes of a message before it is cut with "..." */
  LINE_WINDOW = 160,  /* bytes of a long source line shown around the caret */
  LEAD_CONTEXT = 60,  /* of which this many before the caret */
};

static uint32_t clamp_offset(const Source *src, uint32_t offset) {
  return offset > src->len ? (uint32_t)src->len : offset;
}

/* 0-based line number of offset. */
static uint32_t line_index(const Source *src, uint32_t offset) {
  if (!src->line_starts) {
    uint32_t n = 0;
    for (const char *p = src->text; (p = memchr(p, '\n', (size_t)(src->text + offset - p))); p++)
      n++;
    return n;
  }
  uint32_t lo = 0, hi = src->nlines; /* the last line starting at or before offset */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (src->line_starts[mid] <= offset) lo = mid;
    else hi = mid;
  }
  return lo;
}

static uint32_t line_start_of(const Source *src, uint32_t offset) {
  if (src->line_starts) return src->line_starts[line_index(src, offset)];
  uint32_t start = offset;
  while (start > 0 && src->text[start - 1] != '\n') start--;
  return start;
}

void source_position(const Source *src, uint32_t offset, int *line, int *col) {
  offset = clamp_offset(src, offset);
  *line = (int)line_index(src, offset) + 1;
  *col = (int)(offset - line_start_of(src, offset)) + 1;
}

int source_line(const Source *src, uint32_t offset) {
  int line, col;
  source_position(src, offset, &line, &col);
  return line;
}

Span span_join(Span a, Span b) {
  Span s = {a.begin < b.begin ? a.begin : b.begin, a.end > b.end ? a.end : b.end};
  return s;
}

int utf8_length(const unsigned char *s, size_t avail) {
  int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
  if (!n || (size_t)n > avail) return 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) return 0; /* overlong, surrogate */
  if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))) return 0; /* overlong, > U+10FFFF */
  return n;
}

/* Print text[from, to) safely; returns the display width of each byte via
 * widths (1 for a byte that starts a printed character, 0 otherwise). */
static void echo_bytes(FILE *out, const unsigned char *text, uint32_t from, uint32_t to,
                       unsigned char *widths) {
  for (uint32_t i = from; i < to;) {
    unsigned char c = text[i];
    int n = c >= 0x80 ? utf8_length(text + i, to - i) : 1;
    if (c == '\t' || (c >= 0x20 && c < 0x7f) || n > 1) {
      fwrite(text + i, 1, (size_t)n, out);
    } else {
      fputc('?', out);
      n = 1;
    }
    for (int k = 0; k < n; k++) widths[i - from + (uint32_t)k] = k == 0;
    i += (uint32_t)n;
  }
}

static void show_line(FILE *out, const Source *src, Span span) {
  uint32_t caret = clamp_offset(src, span.begin);
  uint32_t start = line_start_of(src, caret);
  const char *nl = memchr(src->text + start, '\n', src->len - start);
  uint32_t end = nl ? (uint32_t)(nl - src->text) : (uint32_t)src->len;
  if (end > start && src->text[end - 1] == '\r') end--;
  if (caret > end) caret = end;
  uint32_t from = start, to = end;
  if (to - from > LINE_WINDOW) {
    from = caret - from > LEAD_CONTEXT ? caret - LEAD_CONTEXT : start;
    to = to - from > LINE_WINDOW ? from + LINE_WINDOW : to;
  }
  unsigned char widths[LINE_WINDOW + 8];
  const char *lead = from > start ? "..." : "";
  fprintf(out, "  %s", lead);
  echo_bytes(out, (const unsigned char *)src->text, from, to, widths);
  fprintf(out, "%s\n  %s", to < end ? "..." : "", from > start ? "   " : "");
  for (uint32_t i = from; i < caret; i++)
    if (widths[i - from]) fputc(src->text[i] == '\t' ? '\t' : ' ', out);
  fputc('^', out);
  uint32_t last = clamp_offset(src, span.end) < to ? clamp_offset(src, span.end) : to;
  for (uint32_t i = caret + 1; i < last; i++)
    if (widths[i - from]) fputc('~', out);
  fputc('\n', out);
}

/* ---- Diagnostics as data. */

enum { DEFAULT_MAX_RECORDS = 1000 };

static DiagPos position_at(const Source *src, uint32_t offset) {
  offset = clamp_offset(src, offset);
  DiagPos pos;
  source_position(src, offset, &pos.line, &pos.byte_column);
  pos.display_column = pos.cp_column = 1;
  const unsigned char *text = (const unsigned char *)src->text;
  for (uint32_t i = offset - (uint32_t)(pos.byte_column - 1); i < offset;) {
    int n = text[i] >= 0x80 ? utf8_length(text + i, offset - i) : 1;
    pos.display_column = text[i] == '\t' ? (pos.display_column - 1) / 8 * 8 + 9 : pos.display_column + 1;
    pos.cp_column++;
    i += n ? (uint32_t)n : 1;
  }
  return pos;
}

static char *copy_string(const char *s) {
  char *c = strdup(s ? s : "");
  if (!c) bug("out of memory");
  return c;
}

void diag_sink_add(DiagSink *s, const char *kind, const Source *src, const char *path, Span span,
                   const char *message) {
  int max = s->max ? s->max : DEFAULT_MAX_RECORDS;
  if (s->n >= max) {
    s->dropped++;
    return;
  }
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 16;
    DiagRecord *items = realloc(s->items, sizeof *items * (size_t)cap);
    if (!items) bug("out of memory");
    s->items = items;
    s->cap = cap;
  }
  DiagRecord *r = &s->items[s->n];
  *r = (DiagRecord){.message = copy_string(message), .path = copy_string(path), .parent = -1};
  snprintf(r->kind, sizeof r->kind, "%s", kind);
  if (!strcmp(kind, "note"))
    for (int i = s->n - 1; i >= 0; i--)
      if (s->items[i].parent < 0) {
        r->parent = i;
        break;
      }
  if (src) {
    r->located = 1;
    r->begin = clamp_offset(src, span.begin);
    r->end = clamp_offset(src, span.end) > r->begin ? clamp_offset(src, span.end) : r->begin;
    r->caret = position_at(src, r->begin);
    /* the last character: the start of the last UTF-8 sequence before end */
    uint32_t last = r->end > r->begin ? r->end - 1 : r->begin;
    while (last > r->begin && ((unsigned char)src->text[last] & 0xc0) == 0x80) last--;
    r->finish = position_at(src, last);
  }
  s->n++;
}

void diag_sink_free(DiagSink *s) {
  for (int i = 0; i < s->n; i++) {
    free(s->items[i].message);
    free(s->items[i].path);
  }
  free(s->items);
  *s = (DiagSink){0};
}

static void report(Diag *d, const char *kind, Span span, const char *fmt, va_list ap) {
  char message[MAX_MESSAGE + 4];
  int n = vsnprintf(message, MAX_MESSAGE + 1, fmt, ap);
  if (n > MAX_MESSAGE) strcpy(message + MAX_MESSAGE - 3, "...");
  if (d->sink) diag_sink_add(d->sink, kind, d->src, d->src->path, span, message);
  if (!d->out) return;
  int line, col;
  source_position(d->src, span.begin, &line, &col);
  fprintf(d->out, "%s:%d:%d: %s: %s\n", d->src->path, line, col, kind, message);
  show_line(d->out, d->src, span);
}

static int error_limit(const Diag *d) { return d->max_errors ? d->max_errors : DEFAULT_MAX_ERRORS; }

/* Count one more of kind in *count and report it, up to the error limit;
 * past it, one line says the rest are not reported. */
static void report_counted(Diag *d, int *count, const char *kind, Span span, const char *fmt, va_list ap) {
  ++*count;
  if (*count > error_limit(d)) {
    if (*count == error_limit(d) + 1 && d->out) fprintf(d->out, "%s: too many %ss; not reporting the rest\n", d->src->path, kind);
    return;
  }
  report(d, kind, span, fmt, ap);
}

void diag_error(Diag *d, Span span, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report_counted(d, &d->errors, "error", span, fmt, ap);
  va_end(ap);
}

void diag_warning(Diag *d, Span span, const char *fmt, ...) {
  if (!d->warn) return;
  va_list ap;
  va_start(ap, fmt);
  report_counted(d, &d->warnings, "warning", span, fmt, ap);
  va_end(ap);
}

void diag_note(Diag *d, Span span, const char *fmt, ...) {
  if (d->errors > error_limit(d)) return;
  va_list ap;
  va_start(ap, fmt);
  report(d, "note", span, fmt, ap);
  va_end(ap);
}

_Thread_local BugTrap *bug_trap;

_Noreturn void bug(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (bug_trap) {
    BugTrap *trap = bug_trap;
    bug_trap = NULL;
    vsnprintf(trap->message, sizeof trap->message, fmt, ap);
    va_end(ap);
    longjmp(trap->jump, 1);
  }
  fprintf(stderr, "bfsync: internal error: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

void error_vprint(FILE *out, const char *fmt, va_list ap) {
  fputs(ERROR_PREFIX, out);
  vfprintf(out, fmt, ap);
}

void error_print(FILE *out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  error_vprint(out, fmt, ap);
  va_end(ap);
}

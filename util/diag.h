/* diag.h: user-facing diagnostics. A Span is a byte range of the source;
 * line and column are computed only when a message is printed, in the form
 * editors parse: file:line:col: error: message, the line, a caret, or
 * recorded as data in a DiagSink (for --diagnostics-format, the library
 * and the language server). */
#ifndef DIAG_H
#define DIAG_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "util/utf8.h"

typedef struct Span {
  uint32_t begin, end; /* byte offsets into Source.text, end exclusive */
} Span;

typedef struct Source {
  const char *path; /* as the user named it */
  const char *text; /* the whole file; may contain NUL bytes */
  size_t len;
  /* Optional index, built by program_new: offset of the start of each line,
   * so positions are found by binary search. NULL means scan the text. */
  const uint32_t *line_starts;
  uint32_t nlines;
} Source;

/* A position as tools count it: 1-based line, byte column, display column
 * (tabs to the next multiple of 8, each other character 1, as gcc counts)
 * and code-point column (what SARIF's unicodeCodePoints means). */
typedef struct DiagPos {
  int line, byte_column, display_column, cp_column;
} DiagPos;

/* One diagnostic as data (util/diag_json.c renders them as gcc's JSON or
 * SARIF). Positions are computed when it is recorded, so a record outlives
 * its program. */
typedef struct DiagRecord {
  char kind[8];   /* "error", "warning", "note" */
  char *message;  /* malloc'ed */
  char *path;     /* malloc'ed */
  int located;    /* has a position (an error about a whole file has none) */
  uint32_t begin, end; /* byte offsets, end exclusive */
  DiagPos caret;  /* where the span begins */
  DiagPos finish; /* its last character (inclusive, as gcc's finish) */
  int parent;     /* a note: the index of the diagnostic it belongs to, else -1 */
} DiagRecord;

typedef struct DiagSink {
  DiagRecord *items;
  int n, cap;
  int max; /* at most this many records (0: 1000); the rest are counted */
  int dropped;
} DiagSink;

/* Record a diagnostic (src NULL: no position). A note belongs to the
 * last error or warning recorded. */
void diag_sink_add(DiagSink *s, const char *kind, const Source *src, const char *path, Span span,
                   const char *message);
void diag_sink_free(DiagSink *s);

typedef struct Diag {
  const Source *src;
  FILE *out;      /* stderr, or a memstream in tests */
  int errors;     /* user errors reported so far */
  int max_errors; /* stop reporting after this many (0 = 20), and as many warnings */
  int warnings;   /* warnings reported so far */
  int warn;       /* print warnings (the command line's programs do; program_load turns it on) */
  DiagSink *sink; /* if set, every diagnostic reported is also recorded here; out may then be NULL */
} Diag;

/* Report a user error at span; counts it. */
void diag_error(Diag *d, Span span, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Report a warning at span (file:line:col: warning: ...) when d->warn:
 * something almost surely wrong that a valid kernel may still contain; it
 * does not count as an error. */
void diag_warning(Diag *d, Span span, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Report a note attached to the previous error. */
void diag_note(Diag *d, Span span, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* 1-based line and column of a byte offset. */
void source_position(const Source *src, uint32_t offset, int *line, int *col);
/* 1-based line of a byte offset (what generated code and the IR cite). */
int source_line(const Source *src, uint32_t offset);
/* Span covering a and b. */
Span span_join(Span a, Span b);

/* An error with no source position (a file that cannot be read, a bad
 * option, a run that failed): ERROR_PREFIX, then fmt, on out. The one
 * place that prefix is written; fmt ends the line itself. */
#define ERROR_PREFIX "bfsync: error: "
void error_print(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void error_vprint(FILE *out, const char *fmt, va_list ap);

/* An internal compiler bug (never a user error), or memory exhausted:
 * print and abort, unless this thread set bug_trap. */
_Noreturn void bug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A library entry point (api/bfsync.c) that must not abort its host sets
 * bug_trap for the duration of the call: bug() then keeps its message in
 * the trap and longjmps there instead (what the pipeline had allocated in
 * its arena is freed with the program; anything else is leaked). */
typedef struct BugTrap {
  jmp_buf jump;
  char message[512];
} BugTrap;
extern _Thread_local BugTrap *bug_trap;

#endif

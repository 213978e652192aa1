/* diag.h: user-facing diagnostics. A Span is a byte range of the source;
 * line and column are computed only when a message is printed, in the form
 * editors parse: file:line:col: error: message, the line, a caret. */
#ifndef DIAG_H
#define DIAG_H

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

typedef struct Diag {
  const Source *src;
  FILE *out;      /* stderr, or a memstream in tests */
  int errors;     /* user errors reported so far */
  int max_errors; /* stop reporting after this many (0 = 20), and as many warnings */
  int warnings;   /* warnings reported so far */
  int warn;       /* print warnings (the command line's programs do; program_load turns it on) */
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

/* An internal compiler bug (never a user error): print and abort. */
_Noreturn void bug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

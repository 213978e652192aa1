/* diag_json.h: diagnostics as gcc's JSON or as SARIF 2.1.0 (util/diag_json.c,
 * docs/diagnostics.md), from the records of a DiagSink (util/diag.h). */
#ifndef DIAG_JSON_H
#define DIAG_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "util/diag.h"

/* --diagnostics-format, in diag_format_names' order. */
typedef enum DiagFormat { DIAG_TEXT, DIAG_JSON, DIAG_SARIF } DiagFormat;
extern const char *const diag_format_names[]; /* "text", "json", "sarif", NULL */

/* Read diagnostics bfsync printed as text (len bytes) back into records:
 * "PATH:LINE:COL: KIND: MESSAGE" (its caret line gives the finish), other
 * "kernel K, line N: ..." (a run-time error) at line N of path, other
 * lines as errors without a position ("bfsync: error: " dropped). */
void diag_sink_add_text(DiagSink *s, const char *text, size_t len, const char *path);
/* gcc's JSON: one array, indented, and a newline. */
void diag_sink_write_json(const DiagSink *s, FILE *out);
/* One SARIF 2.1.0 log of one run of bfsync (version: the tool's). */
void diag_sink_write_sarif(const DiagSink *s, const char *version, FILE *out);
/* The format's rendering (nothing for DIAG_TEXT, which is printed as it happens). */
void diag_sink_write(const DiagSink *s, DiagFormat format, const char *version, FILE *out);

#endif

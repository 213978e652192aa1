/* diagnostics.h: --diagnostics-format=text|json|sarif, the same for every
 * command that reports kernel errors (check, fmt, compile, verify, run).
 *
 * In text mode nothing changes. In json and sarif mode the command's
 * diagnostics are gathered while it runs and written once at the end, on
 * standard error, as gcc's JSON or as SARIF (util/diag_json.h): a
 * program's Diag records into the sink (diag_output_attach), and whatever
 * else the command prints on standard error (a file it cannot read, a
 * run-time error, a mismatch) is captured and read back as records.
 * Usage errors (exit status 2, before the command starts) stay text. */
#ifndef DRIVER_DIAGNOSTICS_H
#define DRIVER_DIAGNOSTICS_H

#include "frontend/program.h"
#include "util/diag_json.h"

typedef struct DiagOutput {
  int format;    /* DiagFormat: what --diagnostics-format chose */
  int begun;     /* diag_output_begin ran (the options were good) */
  DiagSink sink;
  int saved_fd;  /* the real standard error while it is captured */
  FILE *capture; /* receives standard error; NULL when not capturing */
  char *path;    /* the last program's file (malloc'ed), where run-time errors are */
} DiagOutput;

/* The option, for a command's ArgSpec table. */
#define ARG_DIAGNOSTICS_FORMAT(where) \
  {.name = "--diagnostics-format", .kind = ARG_CHOICE, .dest = (where), .choices = diag_format_names}
/* The line of --help describing it. */
#define DIAGNOSTICS_FORMAT_HELP \
  "  --diagnostics-format=text|json|sarif\n" \
  "                  errors as text (default), gcc's JSON or SARIF 2.1.0, on\n" \
  "                  standard error (docs/diagnostics.md)\n"

/* After the options are parsed: start capturing standard error unless text. */
void diag_output_begin(DiagOutput *o);
/* A program of the command: its diagnostics go to the sink unless text. */
void diag_output_attach(DiagOutput *o, Program *p);
/* Write what was gathered to standard error, restored (nothing unless
 * begun); returns status. */
int diag_output_end(DiagOutput *o, int status);

/* What compile, verify and run share once their options are parsed
 * (status < 0 when they were good, else the exit status so far): start
 * the diagnostics, load the --target file if given (else the built-in
 * target, or the kernel's `// target:` line), load the program, and call
 * action(p, args) on it; then write the diagnostics and return the exit
 * status. */
typedef int ProgramAction(Program *p, const void *args);
int diag_output_run(DiagOutput *o, int status, const char *file, const char *target_path, Arena *arena,
                    ProgramAction *action, const void *args);

#endif

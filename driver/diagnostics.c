/* diagnostics.c: --diagnostics-format for the commands (diagnostics.h).
 *
 * Standard error is captured in a temporary file rather than each message
 * being routed by hand, so no message of any layer can escape the JSON or
 * SARIF document (which must be the only thing on standard error for a
 * tool to parse it). The capture is read back at each program attached
 * and at the end, so the records keep the order the messages had. */
#include "driver/diagnostics.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/files.h"

enum { MAX_CAPTURED = 1 << 20 }; /* bytes of captured text read back */

void diag_output_begin(DiagOutput *o) {
  o->saved_fd = -1;
  o->capture = NULL;
  o->begun = 1;
  if (o->format == DIAG_TEXT) return;
  fflush(stderr);
  o->capture = tmpfile();
  if (o->capture) o->saved_fd = dup(STDERR_FILENO);
  if (!o->capture || o->saved_fd < 0 || dup2(fileno(o->capture), STDERR_FILENO) < 0) {
    if (o->capture) fclose(o->capture);
    if (o->saved_fd >= 0) close(o->saved_fd);
    o->capture = NULL;
    o->saved_fd = -1; /* the messages stay text; the document is still written */
  }
}

/* What standard error received since the last drain, into the sink. */
static void drain(DiagOutput *o) {
  if (!o->capture) return;
  fflush(stderr);
  rewind(o->capture);
  size_t len = 0;
  char *text = read_all(o->capture, MAX_CAPTURED, &len);
  if (text) diag_sink_add_text(&o->sink, text, len, o->path);
  else diag_sink_add(&o->sink, "error", NULL, "", (Span){0, 0}, "more than 1 MiB of messages; not recorded");
  free(text);
  if (ftruncate(fileno(o->capture), 0) == 0) rewind(o->capture);
}

void diag_output_attach(DiagOutput *o, Program *p) {
  if (o->format == DIAG_TEXT || !p) return;
  drain(o);
  free(o->path);
  o->path = strdup(p->src.path);
  p->diag.sink = &o->sink;
  p->diag.out = NULL;
}

int diag_output_end(DiagOutput *o, int status) {
  if (o->format == DIAG_TEXT || !o->begun) return status;
  drain(o);
  if (o->capture) {
    fflush(stderr);
    dup2(o->saved_fd, STDERR_FILENO);
    close(o->saved_fd);
    fclose(o->capture);
    o->capture = NULL;
  }
  diag_sink_write(&o->sink, (DiagFormat)o->format, BFSYNC_VERSION, stderr);
  diag_sink_free(&o->sink);
  free(o->path);
  o->path = NULL;
  return status;
}

int diag_output_run(DiagOutput *o, int status, const char *file, const char *target_path, Arena *arena,
                    ProgramAction *action, const void *args) {
  if (status < 0) diag_output_begin(o);
  Target *target = ARENA_NEW(arena, Target);
  if (status < 0 && target_path && target_load(target_path, arena, target, stderr)) status = 1;
  if (status < 0) {
    Program *p = program_load(file, target_path ? target : target_default(), stderr);
    diag_output_attach(o, p);
    if (p && !target_path && program_use_target_line(p, stderr)) status = 1;
    else status = p ? action(p, args) : 1;
    program_free(p);
  }
  return diag_output_end(o, status);
}

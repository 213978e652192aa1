/* costs_file.c: bfrt_costs_load, a host's way to read a target file
 * (docs/targets.md) into the simulator's cost model.
 *
 * There is one target-file reader, the compiler's (target/target_file.c);
 * libbfrt carries it (with the diagnostics, the arena and the number
 * parser it uses, util/) instead
 * of a second parser, so a file the compiler accepts is exactly a file a
 * host can load, with the same messages. A library must not print, so the
 * diagnostics go to a memory stream and come back to the host in its
 * buffer: every message, positioned (file:line:col: error: ...) with its
 * caret, as `bfsync --target` prints them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/bfrt_cost.h"
#include "target/target.h"

/* Copy text into err (errsize bytes, NUL-terminated, truncated), without
 * a trailing newline. */
static void set_error(char *err, size_t errsize, const char *text) {
  if (!err || !errsize) return;
  size_t n = strlen(text);
  while (n && text[n - 1] == '\n') n--;
  if (n >= errsize) n = errsize - 1;
  memcpy(err, text, n);
  err[n] = 0;
}

int bfrt_costs_load(bfrt_costs *out, const char *path, char *err, size_t errsize) {
  if (err && errsize) err[0] = 0;
  char *messages = NULL;
  size_t size = 0;
  FILE *diag = open_memstream(&messages, &size);
  if (!diag) {
    set_error(err, errsize, "bfrt_costs_load: out of memory");
    return -1;
  }
  Arena *arena = arena_new();
  Target *target = ARENA_NEW(arena, Target);
  int status = target_load(path, arena, target, diag);
  if (status == 0) *out = target->costs;
  arena_free(arena);
  int lost = fclose(diag);
  if (status) set_error(err, errsize, lost || !messages ? "bfrt_costs_load: out of memory" : messages);
  free(messages);
  return status ? -1 : 0;
}

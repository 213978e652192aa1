/* program.c: creating and freeing a compilation.
 *
 * A Program owns an arena holding everything: the source text (copied, so
 * callers may free theirs; NUL bytes in it are kept), the line index that
 * makes every position lookup a binary search, the AST and the IR. */
#include "frontend/program.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void index_lines(Arena *arena, Source *src) {
  uint32_t n = 1;
  for (const char *p = src->text; (p = memchr(p, '\n', (size_t)(src->text + src->len - p))); p++)
    n++;
  uint32_t *starts = ARENA_ARRAY(arena, uint32_t, n);
  uint32_t i = 1;
  for (const char *p = src->text; (p = memchr(p, '\n', (size_t)(src->text + src->len - p))); p++)
    starts[i++] = (uint32_t)(p + 1 - src->text);
  src->line_starts = starts;
  src->nlines = n;
}

Program *program_new(const char *path, const char *text, size_t len, const Target *target,
                     FILE *out) {
  if (len >= UINT32_MAX) bug("program_new: %zu bytes is over the 4 GiB limit", len);
  Arena *arena = arena_new();
  Program *p = ARENA_NEW(arena, Program);
  p->arena = arena;
  p->src.path = arena_strndup(arena, path, strlen(path));
  p->src.text = arena_strndup(arena, text, len);
  p->src.len = len;
  index_lines(arena, &p->src);
  p->diag.src = &p->src;
  p->diag.out = out;
  p->target = target ? target : target_default();
  return p;
}

/* The whole file, malloc'ed, or NULL with errno set (EFBIG past
 * MAX_SOURCE_BYTES, found after reading at most one byte more). Works on
 * pipes too. */
static char *read_all(FILE *f, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (ferror(f)) break;
    if (n < cap) {
      *len = n;
      return buf;
    }
    if (n > MAX_SOURCE_BYTES) {
      errno = EFBIG;
      break;
    }
    cap = cap * 2 > MAX_SOURCE_BYTES + 1 ? MAX_SOURCE_BYTES + 1 : cap * 2;
    char *bigger = realloc(buf, cap);
    if (!bigger) break;
    buf = bigger;
  }
  free(buf);
  return NULL;
}

Program *program_load(const char *path, const Target *target, FILE *out) {
  bool from_stdin = !strcmp(path, "-");
  FILE *f = from_stdin ? stdin : fopen(path, "rb");
  size_t len = 0;
  char *text = f ? read_all(f, &len) : NULL;
  int saved = errno;
  if (f && !from_stdin) fclose(f);
  if (!text && saved == EFBIG) {
    fprintf(out, "bfsync: error: '%s' is larger than %d MiB, the limit for a kernel file\n", path,
            MAX_SOURCE_BYTES >> 20);
    return NULL;
  }
  if (!text) {
    fprintf(out, "bfsync: error: cannot read '%s': %s\n", path, strerror(saved));
    return NULL;
  }
  Program *p = program_new(from_stdin ? "<stdin>" : path, text, len, target, out);
  free(text);
  return p;
}

int line_of(const Program *p, Span span) { return source_line(&p->src, span.begin); }

void program_free(Program *p) {
  if (p) arena_free(p->arena);
}

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

#include "util/files.h"

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
  p->max_steps = DEFAULT_MAX_STEPS;
  return p;
}

const char *steps_exceeded(const Program *p) {
  return arena_printf(p->arena,
                      "with these parameters the kernel runs more than the %lld steps (instructions and "
                      "loop iterations) that --max-steps allows",
                      (long long)p->max_steps);
}

Program *program_load(const char *path, const Target *target, FILE *out) {
  bool from_stdin = !strcmp(path, "-");
  FILE *f = from_stdin ? stdin : fopen(path, "rb");
  size_t len = 0;
  char *text = f ? read_all(f, MAX_SOURCE_BYTES, &len) : NULL;
  int saved = errno;
  if (f && !from_stdin) fclose(f);
  if (!text && saved == EFBIG) {
    error_print(out, "'%s' is larger than %d MiB, the limit for a kernel file\n", path,
            MAX_SOURCE_BYTES >> 20);
    return NULL;
  }
  if (!text) {
    error_print(out, "cannot read '%s': %s\n", path, strerror(saved));
    return NULL;
  }
  Program *p = program_new(from_stdin ? "<stdin>" : path, text, len, target, out);
  p->diag.warn = 1; /* a file from the command line: its writer reads the warnings */
  free(text);
  return p;
}

int program_directives(const Program *p, const char *name, Directive **lines) {
  size_t mark = strlen(name) + 4; /* "// " NAME ":" */
  int n = 0, cap = 0;
  for (size_t at = 0; at < p->src.len;) {
    const char *line = p->src.text + at, *nl = memchr(line, '\n', p->src.len - at);
    size_t len = nl ? (size_t)(nl - line) : p->src.len - at;
    if (len >= mark && !memcmp(line, "// ", 3) && !memcmp(line + 3, name, mark - 4) && line[mark - 1] == ':') {
      size_t from = mark, to = len;
      while (from < to && (line[from] == ' ' || line[from] == '\t')) from++;
      while (to > from && (line[to - 1] == ' ' || line[to - 1] == '\t' || line[to - 1] == '\r')) to--;
      *lines = arena_grow(p->arena, *lines, sizeof **lines, n, &cap);
      (*lines)[n++] = (Directive){{(uint32_t)at, (uint32_t)(at + mark)}, {(uint32_t)(at + from), (uint32_t)(at + to)}};
    }
    at += len + 1;
  }
  return n;
}

/* The span of the path on the kernel's `// target:` line; {0, 0} when it
 * has none. A line that names no file, and a second line, are errors. */
static Span target_line(Program *p) {
  Directive *lines = NULL;
  int n = program_directives(p, "target", &lines);
  Span first = {0, 0};
  for (int i = 0; i < n; i++) {
    Span value = lines[i].value;
    if (value.begin == value.end) {
      diag_error(&p->diag, (Span){lines[i].mark.begin, value.end}, "this `// target:` line names no file");
    } else if (first.end) {
      diag_error(&p->diag, value, "a second `// target:` line: a kernel names one target");
      diag_note(&p->diag, first, "the first names this one");
    } else {
      first = value;
    }
  }
  return first;
}

int program_use_target_line(Program *p, FILE *out) {
  int errors = p->diag.errors;
  Span line = target_line(p);
  if (p->diag.errors > errors) return -1;
  if (!line.end) return 0;
  const char *path = arena_strndup(p->arena, p->src.text + line.begin, line.end - line.begin);
  const char *slash = strrchr(p->src.path, '/');
  if (path[0] != '/' && slash)
    path = arena_printf(p->arena, "%.*s/%s", (int)(slash - p->src.path), p->src.path, path);
  Target *t = ARENA_NEW(p->arena, Target);
  if (target_load(path, p->arena, t, out)) {
    diag_note(&p->diag, line, "the kernel's target, named here");
    return -1;
  }
  p->target = t;
  return 0;
}

int line_of(const Program *p, Span span) { return source_line(&p->src, span.begin); }

void program_free(Program *p) {
  if (p) arena_free(p->arena);
}

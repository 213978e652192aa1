/* minimize.c: delta debugging by lines (see minimize.h). Deleting whole
 * lines works because gen and fmt print one statement per line and every
 * block's braces on the lines that open and close it. */
#include "harness/minimize.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/files.h"
#include "frontend/program.h"
#include "harness/gen.h"
#include "harness/pool.h"
#include "transform/ir.h"
#include "transform/sync.h"

#define CHILD_SECONDS 120 /* a candidate running longer is a hang */

/* What a candidate must still do: fail at stage for seed's inputs (with
 * the gcc step on gcc_mode's C when that is what failed). */
typedef struct Goal {
  const Config *cfg;
  uint64_t seed;
  const char *stage;
  int gcc_mode;
} Goal;

/* Judge text in a forked child: whether it still fails at the goal's stage
 * (a crash counts as stage "crash"). */
static bool still_fails(const Goal *g, const char *text) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    alarm(CHILD_SECONDS);
    Outcome out;
    if (!freopen("/dev/null", "w", stderr)) _exit(2);
    check_kernel(g->cfg, "candidate.bfk", text, g->seed, g->gcc_mode, &out);
    _exit(!strcmp(out.stage, g->stage) ? 3 : 0);
  }
  int status;
  if (pid < 0) return false;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR || pool_interrupted()) {
      kill(pid, SIGKILL); /* interrupted: no candidate outlives the campaign */
      waitpid(pid, &status, 0);
      return false;
    }
  if (WIFSIGNALED(status)) return !strcmp(g->stage, "crash");
  return WIFEXITED(status) && WEXITSTATUS(status) == 3;
}

typedef struct Lines {
  char **line;
  int n;
} Lines;

static Lines split_lines(char *text) {
  Lines l = {0};
  int cap = 0;
  for (char *save, *s = strtok_r(text, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
    if (l.n == cap) {
      cap = cap ? 2 * cap : 64;
      l.line = realloc(l.line, (size_t)cap * sizeof *l.line);
      if (!l.line) abort();
    }
    l.line[l.n++] = s;
  }
  return l;
}

static bool opens_block(const char *s) {
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\r')) n--;
  return n && s[n - 1] == '{';
}

static bool is_comment(const char *s) {
  while (*s == ' ') s++;
  return !*s || !strncmp(s, "//", 2);
}

/* The line closing the block line i opens, by brace depth. */
static int block_end(const Lines *l, const bool *gone, int i) {
  int depth = 0;
  for (int j = i; j < l->n; j++) {
    if (gone[j]) continue;
    for (const char *c = l->line[j]; *c; c++) depth += *c == '{' ? 1 : *c == '}' ? -1 : 0;
    if (depth == 0) return j;
  }
  return -1;
}

static char *join_lines(const Lines *l, const bool *gone) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  for (int i = 0; i < l->n; i++)
    if (!gone[i]) fprintf(f, "%s\n", l->line[i]);
  fclose(f);
  return text;
}

/* Try deleting lines [a, b] (or only a and b when unwrap); keep the
 * deletion if the kernel still fails at stage. */
static bool try_delete(const Goal *g, const Lines *l, bool *gone, int a, int b, bool unwrap) {
  bool *trial = malloc((size_t)l->n);
  memcpy(trial, gone, (size_t)l->n);
  for (int j = a; j <= b; j++)
    if (!unwrap || j == a || j == b) trial[j] = true;
  char *text = join_lines(l, trial);
  bool keep = still_fails(g, text);
  if (keep) memcpy(gone, trial, (size_t)l->n);
  free(text);
  free(trial);
  return keep;
}

/* One pass over every block (whole, then unwrapped) and every statement. */
static bool minimize_pass(const Goal *g, const Lines *l, bool *gone) {
  bool progress = false;
  int kernel_line = -1;
  for (int i = 0; i < l->n && kernel_line < 0; i++)
    if (!gone[i] && !strncmp(l->line[i], "kernel ", 7)) kernel_line = i;
  for (int i = kernel_line + 1; i < l->n && !pool_interrupted(); i++) {
    if (gone[i] || is_comment(l->line[i]) || strchr(l->line[i], '}')) continue;
    if (opens_block(l->line[i])) {
      int end = block_end(l, gone, i);
      if (end < 0) continue;
      if (try_delete(g, l, gone, i, end, false) || try_delete(g, l, gone, i, end, true))
        progress = true;
    } else if (try_delete(g, l, gone, i, i, false)) {
      progress = true;
    }
  }
  return progress;
}

/* The smallest text found that still checks and fails like the original. */
static char *minimize(const Goal *g, const char *text) {
  char *copy = strdup(text);
  Lines l = split_lines(copy);
  bool *gone = calloc((size_t)l.n + 1, 1);
  while (!pool_interrupted() && minimize_pass(g, &l, gone)) {
  }
  char *result = join_lines(&l, gone);
  free(gone);
  free(l.line);
  free(copy);
  return result;
}

/* The params line, then the kernel as fmt prints it (the text itself if
 * it does not check). */
static void print_canonical(const char *text, FILE *out) {
  const char *params = strstr(text, "// params:");
  if (params) fprintf(out, "%.*s\n", (int)strcspn(params, "\n"), params);
  FILE *quiet = fopen("/dev/null", "w");
  Program *p = program_new("minimized.bfk", text, strlen(text), target_default(), quiet ? quiet : stderr);
  parse(p);
  if (!p->diag.errors) check(p);
  if (p->diag.errors)
    fputs(text, out);
  else
    fmt(p, out);
  program_free(p);
  if (quiet) fclose(quiet);
}

/* tests/regress/seed-S.bfk: the minimized kernel, what failed, its params. */
void save_regression(const Config *cfg, const char *dir, uint64_t seed, const char *stage, const char *message) {
  char *text = gen_kernel_text(seed, cfg->size);
  Goal goal = {cfg, seed, stage, -1};
  if (!strcmp(stage, "gcc")) goal.gcc_mode = sync_prefix(message);
  char *small = strcmp(stage, "check") ? minimize(&goal, text) : strdup(text);
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/seed-%" PRIu64 ".bfk", dir, seed);
  AtomicFile out;
  if (atomic_open(&out, path)) {
    fprintf(stderr, "bfsync: campaign: %s\n", out.error);
  } else {
    FILE *f = out.f;
    fprintf(f, "// Minimized by `bfsync campaign` from `bfsync gen --seed %" PRIu64 " --size %ld`.\n", seed,
            cfg->size);
    if (cfg->mutate_index >= 0)
      fprintf(f, "// (under the test-only --mutate=%s:%d of the barrier-free streams)\n",
              cfg->mutate_kind == DROP_WAIT ? "drop" : cfg->mutate_kind == LOWER_THRESHOLD ? "lower" : "raise", cfg->mutate_index);
    fprintf(f, "// failed: %s: %s\n// status: open\n", stage, message);
    print_canonical(small, f);
    if (atomic_commit(&out))
      fprintf(stderr, "bfsync: campaign: %s\n", out.error);
    else
      fprintf(stderr, "bfsync: campaign: seed %" PRIu64 " minimized into %s\n", seed, path);
  }
  free(small);
  free(text);
}

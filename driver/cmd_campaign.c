/* cmd_campaign.c: `bfsync campaign`, the differential campaign over random
 * kernels, and the exhaustive small scope.
 *
 * Every part of the pipeline is checked on kernels nobody wrote by hand.
 * For each seed, in one process per job (no exec per kernel: a 100,000-
 * kernel campaign has about 40 ms per kernel on two cores):
 *
 *   gen_kernel -> parse -> check (a failure is a generator bug)
 *   reference (program order on the AST) -> expected tensors
 *   per sync mode: transform -> ir_validate -> oracle (no race, deadlock or
 *     unexplained late wait) -> emit_c -> jit -> threads with jitter and
 *     the race checker, compared bit for bit -> the cycle simulator when
 *     the runtime has one (results equal) -> every K-th seed, the C through
 *     gcc -Werror, linked with libbfrt.a and tests/host_main.c, run, compared
 *   sim: barrier-free cycles <= barrier cycles and ideal <= barrier-free,
 *     any exception counted and listed (it is a finding, not a failure)
 *
 * Workers are forked before any thread exists and report each seed to the
 * parent through a pipe: a START record, then a DONE record. A worker that
 * dies (an abort in bug(), a signal) leaves a START without DONE, so the
 * parent knows the seed, counts it as a crash and forks a replacement for
 * the rest of the range. A failing seed is then minimized in the parent:
 * statements, loops and blocks are deleted from the kernel text while the
 * result still checks and still fails at the same stage, each candidate
 * judged in a forked child so a crash is just a failing candidate. The
 * minimized kernel goes to tests/regress/seed-S.bfk.
 *
 * The exhaustive scope (--exhaustive) is described above its code below. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/inputs.h"
#include "driver/commands.h"
#include "driver/gen.h"
#include "driver/options.h"
#include "transform/oracle.h"

#ifndef BFRT_INCLUDE_DIR
#define BFRT_INCLUDE_DIR "runtime"
#endif

/* An ASan build's libbfrt.a needs the sanitizer runtimes at link time. */
#ifdef __SANITIZE_ADDRESS__
#define GCC_SAN_FLAGS " -fsanitize=address,undefined"
#else
#define GCC_SAN_FLAGS ""
#endif

#define MAX_JOBS 64
#define MAX_REPORTED 20   /* failures and sim exceptions listed in the summary */
#define MAX_MINIMIZED 10  /* failing seeds minimized per campaign */
#define CHILD_SECONDS 120 /* a minimization candidate running longer is a hang */

/* ---- What is checked, and what one kernel contributes. */

typedef struct Config {
  long size;
  int schedules;
  bool jitter;
  bool sim;             /* cleared when the runtime says it has no simulator */
  const char *gcc_dir;  /* scratch directory with host_main.o; NULL: no gcc step */
  const char *lib;      /* libbfrt.a */
  const char *root;     /* the source tree (for runtime/bfrt.h) */
  int mutate_kind, mutate_index; /* TEST ONLY: break a barrier-free wait (index < 0: none) */
} Config;

typedef struct Counts {
  int64_t kernels, instructions, oracle_waits, redundant, bookkeeping, schedules;
  int64_t thread_runs, thread_waits, sim_runs, gcc_runs, failures, sim_exceptions;
} Counts;

typedef struct Outcome {
  Counts counts;
  char stage[16];    /* "" when the kernel passed */
  char message[512];
  char sim_note[160]; /* "" unless a simulator exception */
} Outcome;

static void add_counts(Counts *to, const Counts *c) {
  to->kernels += c->kernels;
  to->instructions += c->instructions;
  to->oracle_waits += c->oracle_waits;
  to->redundant += c->redundant;
  to->bookkeeping += c->bookkeeping;
  to->schedules += c->schedules;
  to->thread_runs += c->thread_runs;
  to->thread_waits += c->thread_waits;
  to->sim_runs += c->sim_runs;
  to->gcc_runs += c->gcc_runs;
  to->failures += c->failures;
  to->sim_exceptions += c->sim_exceptions;
}

static void fail(Outcome *out, const char *stage, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(Outcome *out, const char *stage, const char *fmt, ...) {
  if (out->stage[0]) return; /* the first failure is the one reported */
  snprintf(out->stage, sizeof out->stage, "%s", stage);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out->message, sizeof out->message, fmt, ap);
  va_end(ap);
  for (char *c = out->message; *c; c++)
    if (*c == '\n') *c = ' ';
}

/* The first line of a memstream's text so far ("" if none). */
static const char *first_line(FILE *f, char **buf) {
  fflush(f);
  if (!*buf) return "";
  char *nl = strchr(*buf, '\n');
  if (nl) *nl = 0;
  return *buf;
}

/* ---- One kernel: the pipeline above, every step compared. */

typedef struct Kernel1 {
  const Config *cfg;
  Program *p;
  int64_t *params;
  uint64_t seed;     /* of the inputs, the jitter and the schedules */
  RefTensor *inputs;
  RefTensor *expected;
  Outcome *out;
} Kernel1;

/* The `// params:` line of text into values, in the kernel's order. */
static int bind_params(Kernel1 *k, const char *text, FILE *diag) {
  ParamArgs pa = {0};
  const char *line = strstr(text, "// params:");
  if (line) {
    line += strlen("// params:");
    const char *end = strchr(line, '\n');
    char *copy = arena_strndup(k->p->arena, line, end ? (size_t)(end - line) : strlen(line));
    for (char *save, *tok = strtok_r(copy, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save))
      if (param_args_add(&pa, tok, diag)) return -1;
  }
  k->params = ARENA_ARRAY(k->p->arena, int64_t, k->p->kernel->nparams + 1);
  return param_args_bind(&pa, k->p->kernel, k->params, diag);
}

static RefTensor *copy_tensors(Kernel1 *k, const RefTensor *from) {
  int n = k->p->kernel->ntensors;
  RefTensor *to = ARENA_ARRAY(k->p->arena, RefTensor, n + 1);
  for (int t = 0; t < n; t++) {
    size_t count = (size_t)(from[t].rows * from[t].cols);
    to[t] = from[t];
    to[t].data = ARENA_ARRAY(k->p->arena, float, count + 1);
    memcpy(to[t].data, from[t].data, count * sizeof(float));
  }
  return to;
}

/* Default inputs for the seed (bfsync run's and host_main's), and the
 * reference's results from them. */
static int run_reference(Kernel1 *k) {
  const Kernel *kn = k->p->kernel;
  const char *err;
  k->inputs = ARENA_ARRAY(k->p->arena, RefTensor, kn->ntensors + 1);
  if (reference_shapes(k->p, k->params, k->inputs, &err)) {
    fail(k->out, "reference", "%s", err);
    return -1;
  }
  for (int t = 0; t < kn->ntensors; t++) {
    RefTensor *x = &k->inputs[t];
    x->data = ARENA_ARRAY(k->p->arena, float, x->rows * x->cols + 1);
    if (kn->tensors[t].ints)
      bf_default_ints(x->data, x->rows * x->cols, k->seed, t);
    else if (kn->tensors[t].io != IO_OUT)
      bf_default_inputs(x->data, x->rows * x->cols, k->seed, t);
  }
  k->expected = copy_tensors(k, k->inputs);
  if (reference_run(k->p, k->params, k->expected, &err)) {
    fail(k->out, "reference", "%s", err);
    return -1;
  }
  return 0;
}

/* Whether tensor t's data equals the reference's, bit for bit; the first
 * difference is described in the outcome. */
static bool same_as_expected(Kernel1 *k, int t, const float *got, const char *stage, const char *what) {
  const RefTensor *want = &k->expected[t];
  int64_t n = want->rows * want->cols;
  for (int64_t i = 0; i < n; i++)
    if (memcmp(&got[i], &want->data[i], sizeof(float))) {
      fail(k->out, stage, "%s: tensor %s differs from the reference at [%" PRId64 ", %" PRId64 "]: %.9g, expected %.9g",
           what, k->p->kernel->tensors[t].name, i / want->cols, i % want->cols, (double)got[i],
           (double)want->data[i]);
      return false;
    }
  return true;
}

/* Run the JIT'd kernel under opt; compare its outputs. 0, or -1 (failed). */
static int execute(Kernel1 *k, const bfrt_kernel *bk, const bfrt_options *opt, const char *stage,
                   const char *what, bfrt_stats *stats) {
  const char *err;
  bfrt *rt = bfrt_new(bk, k->params, &err);
  if (!rt) {
    fail(k->out, stage, "%s: bfrt_new: %s", what, err);
    return -1;
  }
  const Kernel *kn = k->p->kernel;
  for (int t = 0; t < kn->ntensors; t++)
    memcpy(bfrt_tensor_data(rt, t), k->inputs[t].data,
           (size_t)(k->inputs[t].rows * k->inputs[t].cols) * sizeof(float));
  int status = bfrt_run(rt, opt);
  if (status) {
    fail(k->out, stage, "%s: %s", what, bfrt_error(rt));
  } else {
    *stats = *bfrt_get_stats(rt);
    for (int t = 0; t < kn->ntensors && !status; t++)
      if (kn->tensors[t].io != IO_IN && !same_as_expected(k, t, bfrt_tensor_data(rt, t), stage, what)) status = -1;
  }
  bfrt_delete(rt);
  return status;
}

static int run_threads(Kernel1 *k, const bfrt_kernel *bk, SyncMode sync) {
  bfrt_options opt = {.exec = BFRT_EXEC_THREADS, .costs = &k->p->target->costs, .check = 1};
  opt.jitter_seed = k->cfg->jitter ? bf_splitmix64(k->seed) | 1 : 0;
  bfrt_stats stats;
  if (execute(k, bk, &opt, "run", sync_name(sync), &stats)) return -1;
  k->out->counts.thread_runs++;
  k->out->counts.thread_waits += stats.waits;
  if (stats.races) {
    fail(k->out, "race-check", "%s: the runtime's race checker found %" PRId64 " races", sync_name(sync),
         stats.races);
    return -1;
  }
  return 0;
}

/* Cycles on the simulator, or -1 (failed or no simulator). */
static int64_t run_sim(Kernel1 *k, const bfrt_kernel *bk, SyncMode sync, bool *sim) {
  bfrt_options opt = {.exec = BFRT_EXEC_SIM, .costs = &k->p->target->costs};
  bfrt_stats stats;
  Outcome probe = {0};
  Outcome *real = k->out;
  k->out = &probe;
  int status = execute(k, bk, &opt, "sim", sync_name(sync), &stats);
  k->out = real;
  if (status && strstr(probe.message, "not built")) {
    *sim = false; /* the runtime has no simulator yet: the step is skipped */
    return -1;
  }
  if (status) {
    fail(k->out, probe.stage, "%s", probe.message);
    return -1;
  }
  k->out->counts.sim_runs++;
  return stats.cycles;
}

/* ---- The gcc step: the emitted C as a user would build it. */

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  return fclose(f);
}

static int shell(const char *cmd) {
  int status = system(cmd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Compare dir/NAME.f32 with the reference for every out and inout tensor. */
static int compare_raw(Kernel1 *k, const char *dir, const char *what) {
  const Kernel *kn = k->p->kernel;
  for (int t = 0; t < kn->ntensors; t++) {
    if (kn->tensors[t].io == IO_IN) continue;
    int64_t n = k->expected[t].rows * k->expected[t].cols;
    float *got = ARENA_ARRAY(k->p->arena, float, n + 1);
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.f32", dir, kn->tensors[t].name);
    FILE *f = fopen(path, "rb");
    size_t read = f ? fread(got, sizeof(float), (size_t)n, f) : 0;
    if (f) fclose(f);
    if (!f || read != (size_t)n) {
      fail(k->out, "gcc", "%s: host_main wrote no complete %s", what, path);
      return -1;
    }
    if (!same_as_expected(k, t, got, "gcc", what)) return -1;
  }
  return 0;
}

static int run_gcc(Kernel1 *k, const char *c_source, SyncMode sync) {
  const Config *cfg = k->cfg;
  char base[PATH_MAX], cmd[4 * PATH_MAX + 512];
  snprintf(base, sizeof base, "%s/k%d", cfg->gcc_dir, (int)getpid());
  snprintf(cmd, sizeof cmd, "%s.c", base);
  if (write_file(cmd, c_source)) {
    fail(k->out, "gcc", "cannot write %s", cmd);
    return -1;
  }
  snprintf(cmd, sizeof cmd,
           "gcc -std=c99 -Wall -Wextra -Werror" GCC_SAN_FLAGS " -I'%s/runtime' -o '%s' '%s.c' '%s/host_main.o' '%s' -lpthread -lm 2>'%s.log'",
           cfg->root, base, base, cfg->gcc_dir, cfg->lib, base);
  if (shell(cmd)) {
    fail(k->out, "gcc", "%s: gcc -std=c99 -Wall -Wextra -Werror rejected the emitted C (see %s.log)", sync_name(sync), base);
    return -1;
  }
  int n = snprintf(cmd, sizeof cmd, "mkdir -p '%s.out' && '%s' %" PRIu64 " '%s.out'", base, base, k->seed, base);
  for (int i = 0; i < k->p->kernel->nparams; i++) n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %" PRId64, k->params[i]);
  snprintf(cmd + n, sizeof cmd - (size_t)n, " 2>'%s.log'", base);
  if (shell(cmd)) {
    fail(k->out, "gcc", "%s: the gcc-built kernel failed (see %s.log)", sync_name(sync), base);
    return -1;
  }
  char dir[PATH_MAX + 8];
  snprintf(dir, sizeof dir, "%s.out", base);
  k->out->counts.gcc_runs++;
  return compare_raw(k, dir, sync_name(sync));
}

/* ---- Per sync mode. */

static int oracle_mode(Kernel1 *k, Oracle *o, SyncMode sync) {
  char *log_text = NULL;
  size_t log_len = 0;
  FILE *log = open_memstream(&log_text, &log_len);
  OracleStats st;
  oracle_check(o, k->cfg->schedules, k->seed, log, &st);
  Counts *c = &k->out->counts;
  c->instructions += st.instructions;
  c->oracle_waits += st.waits;
  c->schedules += st.schedules;
  c->bookkeeping += st.bookkeeping;
  if (sync == SYNC_BARRIER_FREE) c->redundant += st.redundant;
  int failed = oracle_failed(&st);
  if (failed)
    fail(k->out, "oracle",
         "%s: races %" PRId64 ", late %" PRId64 " (unexplained %" PRId64 "), deadlocks %" PRId64
         ", mismatches %" PRId64 ": %s",
         sync_name(sync), st.races, st.late, st.late - st.late_explained, st.deadlocks, st.mismatches,
         first_line(log, &log_text));
  fclose(log);
  free(log_text);
  return failed ? -1 : 0;
}

/* Transform, judge, run; the simulator's cycles (or -1) in *cycles. */
static int check_mode(Kernel1 *k, Oracle *o, SyncMode sync, int gcc_mode, bool *sim, int64_t *cycles) {
  Program *p = k->p;
  *cycles = -1;
  if (sync == SYNC_BARRIER)
    transform_barrier(p);
  else
    transform_barrier_free(p);
  if (p->diag.errors) {
    fail(k->out, "transform", "%s: the transform reported an error", sync_name(sync));
    return -1;
  }
  if (sync == SYNC_BARRIER_FREE && k->cfg->mutate_index >= 0)
    ir_mutate(p, k->cfg->mutate_kind, k->cfg->mutate_index); /* no such wait: unchanged */
  ir_validate(p);
  if (oracle_mode(k, o, sync)) return -1;
  const char *c_source = emit_c_string(p);
  Jit *jit = jit_compile(p, c_source);
  int status = run_threads(k, jit_kernel(jit), sync);
  if (!status && *sim) *cycles = run_sim(k, jit_kernel(jit), sync, sim);
  jit_free(jit);
  if (k->out->stage[0]) return -1;
  if ((int)sync == gcc_mode && k->cfg->gcc_dir) return run_gcc(k, c_source, sync);
  return 0;
}

/* Barrier-free against the barrier baseline and the ideal, on the
 * simulator: a loss is a finding to explain, not a failure. */
static void compare_cycles(Kernel1 *k, Oracle *o, const int64_t cycles[2]) {
  int64_t bf = cycles[SYNC_BARRIER_FREE], barrier = cycles[SYNC_BARRIER];
  if (bf < 0 || barrier < 0) return;
  int64_t ideal = oracle_ideal_cycles(o, &k->p->target->costs);
  Outcome *out = k->out;
  if (bf > barrier)
    snprintf(out->sim_note, sizeof out->sim_note,
             "barrier-free %" PRId64 " cycles > barrier %" PRId64 " (ideal %" PRId64 ", %" PRId64 " instructions)",
             bf, barrier, ideal, out->counts.instructions / 2);
  else if (ideal > bf)
    snprintf(out->sim_note, sizeof out->sim_note, "ideal %" PRId64 " cycles > barrier-free %" PRId64, ideal, bf);
  if (out->sim_note[0]) out->counts.sim_exceptions++;
}

/* Check one kernel text (with its `// params:` line); the outcome says
 * what passed and what failed first. */
static void check_kernel(const Config *cfg, bool *sim, const char *name, const char *text, uint64_t seed,
                         int gcc_mode, Outcome *out) {
  char *diag_text = NULL;
  size_t diag_len = 0;
  FILE *diag = open_memstream(&diag_text, &diag_len);
  memset(out, 0, sizeof *out);
  Program *p = program_new(name, text, strlen(text), target_default(), diag);
  Kernel1 k = {.cfg = cfg, .p = p, .seed = seed, .out = out};
  parse(p);
  if (!p->diag.errors) check(p);
  if (p->diag.errors) {
    fail(out, "check", "%s", first_line(diag, &diag_text));
  } else if (bind_params(&k, text, diag)) {
    fail(out, "params", "%s", first_line(diag, &diag_text));
  } else {
    Oracle *o = oracle_new(p, k.params);
    int64_t cycles[2];
    if (!o)
      fail(out, "oracle", "the sequential walk stopped: %s", first_line(diag, &diag_text));
    else if (!run_reference(&k) && !check_mode(&k, o, SYNC_BARRIER_FREE, gcc_mode, sim, &cycles[0]) &&
             !check_mode(&k, o, SYNC_BARRIER, gcc_mode, sim, &cycles[1]))
      compare_cycles(&k, o, cycles);
  }
  out->counts.kernels = 1;
  out->counts.failures = out->stage[0] != 0;
  program_free(p);
  fclose(diag);
  free(diag_text);
}

/* The text of seed's kernel, malloc'ed. */
static char *generate(uint64_t seed, long size) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  gen_kernel(seed, size, f);
  fclose(f);
  return text;
}

/* ---- Minimization of a failing kernel. */

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
    alarm(CHILD_SECONDS);
    bool sim = g->cfg->sim;
    Outcome out;
    if (!freopen("/dev/null", "w", stderr)) _exit(2);
    check_kernel(g->cfg, &sim, "candidate.bfk", text, g->seed, g->gcc_mode, &out);
    _exit(!strcmp(out.stage, g->stage) ? 3 : 0);
  }
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return false;
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
  for (int i = kernel_line + 1; i < l->n; i++) {
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
  while (minimize_pass(g, &l, gone)) {
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
static void save_regression(const Config *cfg, const char *dir, uint64_t seed, const char *stage,
                            const char *message) {
  char *text = generate(seed, cfg->size);
  Goal goal = {cfg, seed, stage, -1};
  if (!strcmp(stage, "gcc")) goal.gcc_mode = strncmp(message, "barrier-free", 12) ? SYNC_BARRIER : SYNC_BARRIER_FREE;
  char *small = strcmp(stage, "check") ? minimize(&goal, text) : strdup(text);
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/seed-%" PRIu64 ".bfk", dir, seed);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "bfsync: campaign: cannot write %s: %s\n", path, strerror(errno));
  } else {
    fprintf(f, "// Minimized by `bfsync campaign` from `bfsync gen --seed %" PRIu64 " --size %ld`.\n", seed,
            cfg->size);
    if (cfg->mutate_index >= 0)
      fprintf(f, "// (under the test-only --mutate=%s:%d of the barrier-free streams)\n",
              cfg->mutate_kind == DROP_WAIT ? "drop" : "lower", cfg->mutate_index);
    fprintf(f, "// failed: %s: %s\n// status: open\n", stage, message);
    print_canonical(small, f);
    fclose(f);
    fprintf(stderr, "bfsync: campaign: seed %" PRIu64 " minimized into %s\n", seed, path);
  }
  free(small);
  free(text);
}

/* ---- Workers and the parent. */

enum { REC_START, REC_DONE };

typedef struct Record {
  int kind;
  uint64_t seed;
  Outcome out;
} Record;

typedef struct Worker {
  pid_t pid;
  int fd;
  uint64_t next;     /* next seed of this worker's share */
  uint64_t started;  /* seed with a START and no DONE yet, or UINT64_MAX */
  bool busy;
} Worker;

typedef struct Campaign {
  uint64_t from, count;
  int jobs;
  uint64_t gcc_every;
  bool json, minimize, exhaustive, dry_run;
  int ex_instructions; /* --exhaustive: the instruction bound, 1..3 */
  const char *regress_dir;
  Config cfg;
  Counts totals;
  int nfailed;
  Record failed[MAX_REPORTED];
  int nexceptions;
  Record exceptions[MAX_REPORTED];
  bool sim_missing;
} Campaign;

static void send_record(int fd, const Record *r) {
  const char *b = (const char *)r;
  size_t left = sizeof *r;
  while (left) {
    ssize_t n = write(fd, b, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(2);
    b += n;
    left -= (size_t)n;
  }
}

/* The sync mode whose C goes through gcc for seed, or -1: every K-th seed,
 * the two modes in turn (one gcc build costs ten times the rest of a seed). */
static int gcc_mode_of(const Campaign *c, uint64_t seed) {
  if (!c->gcc_every || (seed - c->from) % c->gcc_every) return -1;
  return (int)((seed - c->from) / c->gcc_every % 2);
}

/* Seeds first, first + jobs, ... below from + count. */
static _Noreturn void worker_main(const Campaign *c, uint64_t first, int fd) {
  bool sim = c->cfg.sim;
  for (uint64_t seed = first; seed < c->from + c->count; seed += (uint64_t)c->jobs) {
    Record r = {.kind = REC_START, .seed = seed};
    send_record(fd, &r);
    char *text = generate(seed, c->cfg.size);
    char name[64];
    snprintf(name, sizeof name, "gen-seed-%" PRIu64 ".bfk", seed);
    check_kernel(&c->cfg, &sim, name, text, seed, gcc_mode_of(c, seed), &r.out);
    free(text);
    r.kind = REC_DONE;
    if (!sim) snprintf(r.out.sim_note, sizeof r.out.sim_note, "no simulator");
    send_record(fd, &r);
  }
  _exit(0);
}

static void start_worker(Campaign *c, Worker *w) {
  int fds[2];
  if (pipe(fds)) bug("campaign: pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) bug("campaign: fork: %s", strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    worker_main(c, w->next, fds[1]);
  }
  close(fds[1]);
  w->pid = pid;
  w->fd = fds[0];
  w->busy = true;
  w->started = UINT64_MAX;
}

static void note_record(Campaign *c, const Record *r) {
  bool no_sim = !strcmp(r->out.sim_note, "no simulator");
  Record copy = *r;
  if (no_sim) {
    c->sim_missing = true;
    copy.out.sim_note[0] = 0;
  }
  add_counts(&c->totals, &copy.out.counts);
  if (copy.out.stage[0]) {
    fprintf(stderr, "bfsync: campaign: seed %" PRIu64 " FAILED at %s: %s\n", r->seed, r->out.stage, r->out.message);
    if (c->nfailed < MAX_REPORTED) c->failed[c->nfailed++] = copy;
  }
  if (copy.out.sim_note[0] && c->nexceptions < MAX_REPORTED) c->exceptions[c->nexceptions++] = copy;
}

/* A worker's pipe closed: reap it; if it died inside a seed, that seed is
 * a crash and a new worker takes the rest of its share. */
static void worker_ended(Campaign *c, Worker *w) {
  int status;
  close(w->fd);
  waitpid(w->pid, &status, 0);
  w->busy = false;
  if (w->started == UINT64_MAX) return;
  Record r = {.kind = REC_DONE, .seed = w->started};
  r.out.counts.kernels = r.out.counts.failures = 1;
  snprintf(r.out.stage, sizeof r.out.stage, "crash");
  if (WIFSIGNALED(status))
    snprintf(r.out.message, sizeof r.out.message, "the worker died of signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  else
    snprintf(r.out.message, sizeof r.out.message, "the worker exited with status %d", WEXITSTATUS(status));
  note_record(c, &r);
  w->next = w->started + (uint64_t)c->jobs;
  if (w->next < c->from + c->count) start_worker(c, w);
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void progress(const Campaign *c, int64_t start_ms) {
  double s = (double)(now_ms() - start_ms) / 1000;
  fprintf(stderr, "campaign: %" PRId64 "/%" PRIu64 " kernels, %" PRId64 " failures, %" PRId64 " sim exceptions, %.0f s\n",
          c->totals.kernels, c->count, c->totals.failures, c->totals.sim_exceptions, s);
}

static bool read_record(Worker *w, Record *r) {
  char *b = (char *)r;
  size_t got = 0;
  while (got < sizeof *r) {
    ssize_t n = read(w->fd, b + got, sizeof *r - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += (size_t)n;
  }
  return true;
}

static void run_workers(Campaign *c) {
  Worker w[MAX_JOBS];
  int64_t start = now_ms(), last = start;
  for (int j = 0; j < c->jobs; j++) {
    w[j] = (Worker){.next = c->from + (uint64_t)j};
    if (w[j].next < c->from + c->count) start_worker(c, &w[j]);
  }
  for (;;) {
    struct pollfd fds[MAX_JOBS];
    int map[MAX_JOBS], n = 0;
    for (int j = 0; j < c->jobs; j++)
      if (w[j].busy) {
        fds[n] = (struct pollfd){.fd = w[j].fd, .events = POLLIN};
        map[n++] = j;
      }
    if (!n) break;
    if (poll(fds, (nfds_t)n, 1000) < 0 && errno != EINTR) bug("campaign: poll: %s", strerror(errno));
    for (int i = 0; i < n; i++) {
      if (!fds[i].revents) continue;
      Worker *wk = &w[map[i]];
      Record r;
      if (!read_record(wk, &r)) {
        worker_ended(c, wk);
      } else if (r.kind == REC_START) {
        wk->started = r.seed;
      } else {
        wk->started = UINT64_MAX;
        note_record(c, &r);
      }
    }
    if (now_ms() - last >= 10000) {
      progress(c, start);
      last = now_ms();
    }
  }
}

/* ---- The gcc step's set-up: host_main.o once per campaign. */

static char *dir_of_exe(void) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return strdup(".");
  path[n] = 0;
  char *slash = strrchr(path, '/');
  if (slash) *slash = 0;
  return strdup(path);
}

static int setup_gcc(Config *cfg, char *dir_template) {
  if (!mkdtemp(dir_template)) {
    fprintf(stderr, "bfsync: campaign: mkdtemp: %s\n", strerror(errno));
    return -1;
  }
  char cmd[4 * PATH_MAX];
  snprintf(cmd, sizeof cmd,
           "gcc -std=c99 -Wall -Wextra -Werror" GCC_SAN_FLAGS " -I'%s' -I'%s/runtime' -c '%s/tests/host_main.c' -o '%s/host_main.o'",
           cfg->root, cfg->root, cfg->root, dir_template);
  if (shell(cmd)) {
    fprintf(stderr, "bfsync: campaign: cannot build %s/tests/host_main.c for the gcc step\n", cfg->root);
    return -1;
  }
  if (access(cfg->lib, R_OK)) {
    fprintf(stderr, "bfsync: campaign: no runtime library %s for the gcc step (--lib)\n", cfg->lib);
    return -1;
  }
  cfg->gcc_dir = dir_template;
  return 0;
}

/* ---- Reports. */

static void print_summary(const Campaign *c, double seconds) {
  const Counts *t = &c->totals;
  printf("campaign: seeds %" PRIu64 " .. %" PRIu64 ", size %ld, %d schedules, %d jobs, gcc every %" PRIu64 "\n",
         c->from, c->from + c->count - 1, c->cfg.size, c->cfg.schedules, c->jobs, c->gcc_every);
  printf("  kernels               %" PRId64 "\n", t->kernels);
  printf("  dynamic instructions  %" PRId64 " (oracle, both sync modes)\n", t->instructions);
  printf("  dynamic waits checked %" PRId64 " by the oracle, %" PRId64 " on threads under the race checker\n",
         t->oracle_waits, t->thread_waits);
  printf("  schedules             %" PRId64 "\n", t->schedules);
  printf("  redundant waits       %" PRId64 " (barrier-free), bookkeeping ops %" PRId64 "\n", t->redundant,
         t->bookkeeping);
  printf("  thread runs           %" PRId64 " (jitter %s), gcc runs %" PRId64 ", sim runs %" PRId64 "%s\n",
         t->thread_runs, c->cfg.jitter ? "on" : "off", t->gcc_runs, t->sim_runs,
         c->sim_missing ? " (the runtime has no simulator yet: sim step skipped)" : "");
  printf("  failures              %" PRId64 "\n", t->failures);
  for (int i = 0; i < c->nfailed; i++)
    printf("    seed %" PRIu64 ": %s: %s\n", c->failed[i].seed, c->failed[i].out.stage, c->failed[i].out.message);
  printf("  sim exceptions        %" PRId64 "\n", t->sim_exceptions);
  for (int i = 0; i < c->nexceptions; i++)
    printf("    seed %" PRIu64 ": %s\n", c->exceptions[i].seed, c->exceptions[i].out.sim_note);
  printf("  time                  %.1f s (%.2f ms per kernel per job)\n", seconds,
         t->kernels ? seconds * 1000 * c->jobs / (double)t->kernels : 0.0);
}

static void print_json(const Campaign *c, double seconds) {
  const Counts *t = &c->totals;
  printf("{\"from\": %" PRIu64 ", \"count\": %" PRIu64 ", \"size\": %ld, \"jobs\": %d, \"gcc_every\": %" PRIu64
         ", \"kernels\": %" PRId64 ", \"instructions\": %" PRId64 ", \"oracle_waits\": %" PRId64
         ", \"thread_waits\": %" PRId64 ", \"schedules\": %" PRId64 ", \"redundant\": %" PRId64
         ", \"bookkeeping\": %" PRId64 ", \"thread_runs\": %" PRId64 ", \"gcc_runs\": %" PRId64
         ", \"sim_runs\": %" PRId64 ", \"sim_available\": %s, \"failures\": %" PRId64 ", \"sim_exceptions\": %" PRId64
         ", \"failed_seeds\": [",
         c->from, c->count, c->cfg.size, c->jobs, c->gcc_every, t->kernels, t->instructions, t->oracle_waits,
         t->thread_waits, t->schedules, t->redundant, t->bookkeeping, t->thread_runs, t->gcc_runs, t->sim_runs,
         c->sim_missing ? "false" : "true", t->failures, t->sim_exceptions);
  for (int i = 0; i < c->nfailed; i++) printf("%s%" PRIu64, i ? ", " : "", c->failed[i].seed);
  printf("], \"seconds\": %.1f}\n", seconds);
}

/* ---- The exhaustive small scope.
 *
 * Every kernel within the bound: at most 3 instructions over 3 engines, at
 * most 2 scopes (loops or conditionals, nested or side by side, never
 * empty), at most 2 shared tiles with 1 or 2 slots, loop bounds from the
 * parameter N or the outer loop variable, conditions on N or the innermost
 * loop's variable:
 *
 *   kernel  = decl* item+
 *   item    = ENGINE ":" access ";"                  (ENGINE: act | dve | pool)
 *           | "for" v "in" 0 ".." hi "{" item+ "}"
 *           | "if" "(" cond ")" "{" item+ "}" [ "else" "{" item+ "}" ]
 *   hi      = "N" | u | u "+" 1                      (u: the enclosing loop's variable)
 *   cond    = "N" ">" 1 | v "==" 0 | v "%" 2 "==" 1  (v: the innermost loop's variable)
 *   access  = "fill" ref "," 1                       (write)
 *           | "copy" own "," ref                     (read; own: the engine's private tile)
 *           | "scale" ref "," ref "," 2              (read and write)
 *   ref     = tile | tile "[" 0 | 1 | v "%" 2 | "(" v "+" 1 ")" "%" 2 "]"
 *                                                    (v: the innermost loop's variable)
 *
 * Every pair of instructions then meets as RAW, WAR, WAW or not at all, on
 * one engine or across two, in straight-line code, in one loop (same or
 * loop-carried iteration, slot distance 0 or 1) or across loops. Each
 * kernel is judged by the oracle at N = 0, 1, 2, 3 (trip counts 0 to 3;
 * inner loops bounded by u run 0 to 3 times too; every condition is both
 * true and false among them), under both sync modes. Conditionals add the
 * branch cases: a producer in a branch and its consumer after it or in the
 * other branch, producers in both branches, a branch taken in some
 * iterations only.
 *
 * Canonical forms, so no kernel is a mere renaming of another: engines,
 * and tiles, are numbered in order of first use (act, dve and pool run
 * these ops identically; the tiles differ only by their slot counts, which
 * are enumerated); a tile never used is not declared; and the first slot
 * expression of each two-slot tile is 0 or v % 2, since relabelling its
 * slots (0 <-> 1, v % 2 <-> (v + 1) % 2) gives an equivalent kernel. */

#define EX_MAX_INSTRS 3
#define EX_MAX_LOOPS 2
#define EX_MAX_TOKENS (4 * EX_MAX_INSTRS)

enum { TOK_INSTR, TOK_LOOP, TOK_IF, TOK_ELSE, TOK_END };
enum { ACC_WRITE, ACC_READ, ACC_UPDATE, ACC_KINDS };

typedef struct ExToken {
  int kind;
  int hi; /* loop: 0 "N", 1 the outer variable, 2 the outer variable + 1; if: the cond form */
} ExToken;

/* An open scope while building skeletons or printing them. */
typedef struct ExScope {
  int kind;      /* TOK_LOOP or TOK_IF */
  int loop;      /* TOK_LOOP: its number; TOK_IF: the innermost loop around it, or -1 */
  bool has_else; /* TOK_IF */
} ExScope;

typedef struct ExInstr {
  int engine, access, tile, form;
} ExInstr;

typedef struct Exhaustive {
  const Campaign *c;
  ExToken tok[EX_MAX_TOKENS];
  int ntok;
  int slots[2];
  ExInstr ins[EX_MAX_INSTRS];
  int nins;
  int inner[EX_MAX_INSTRS]; /* the innermost loop around each instruction, or -1 */
  ExScope open[EX_MAX_LOOPS]; /* ex_items: the scopes open at the current point */
  int64_t kernels, checks, instructions, waits, failures;
  uint64_t index; /* canonical kernels seen so far, for dividing the work */
  int job, jobs;
} Exhaustive;

/* Slot forms of a two-slot tile: 0, 1, and inside a loop v % 2, (v + 1) % 2;
 * even forms are the unshifted ones. */
static int form_count(const Exhaustive *x, int i) { return x->inner[i] < 0 ? 2 : 4; }

static void print_ref(FILE *f, const Exhaustive *x, int i, int tile, int form) {
  fputc("ab"[tile], f);
  if (x->slots[tile] == 1) return;
  if (form < 2)
    fprintf(f, "[%d]", form);
  else
    fprintf(f, form == 2 ? "[v%d %% 2]" : "[(v%d + 1) %% 2]", x->inner[i]);
}

static const char *const ex_engines[] = {"act", "dve", "pool"};

static void print_decls(FILE *f, const Exhaustive *x) {
  bool tile[2] = {false, false}, own[3] = {false, false, false};
  for (int i = 0; i < x->nins; i++) {
    tile[x->ins[i].tile] = true;
    own[x->ins[i].engine] |= x->ins[i].access == ACC_READ;
  }
  for (int t = 0; t < 2; t++)
    if (tile[t]) fprintf(f, "  sbuf %c%s: f32[1, 1];\n", "ab"[t], x->slots[t] == 2 ? "[2]" : "");
  for (int e = 0; e < 3; e++)
    if (own[e]) fprintf(f, "  sbuf own_%s: f32[1, 1];\n", ex_engines[e]);
}

static void print_access(FILE *f, const Exhaustive *x, int i) {
  const ExInstr *in = &x->ins[i];
  fputs(in->access == ACC_WRITE ? "fill " : in->access == ACC_READ ? "copy " : "scale ", f);
  if (in->access == ACC_READ) fprintf(f, "own_%s, ", ex_engines[in->engine]);
  print_ref(f, x, i, in->tile, in->form);
  if (in->access == ACC_UPDATE) {
    fputs(", ", f);
    print_ref(f, x, i, in->tile, in->form);
  }
  fputs(in->access == ACC_WRITE ? ", 1" : in->access == ACC_UPDATE ? ", 2" : "", f);
}

/* The innermost loop among the first depth open scopes, or -1. */
static int innermost_loop(const ExScope *open, int depth) {
  return depth > 0 ? open[depth - 1].loop : -1;
}

static char *ex_text(const Exhaustive *x) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  fprintf(f, "kernel small(N: int) {\n");
  print_decls(f, x);
  int depth = 1, instr = 0, loop = 0;
  ExScope open[EX_MAX_LOOPS];
  for (int k = 0; k < x->ntok; k++) {
    const ExToken *t = &x->tok[k];
    int u = innermost_loop(open, depth - 1);
    if (t->kind == TOK_END) {
      depth--;
      fprintf(f, "%*s}\n", 2 * depth, "");
    } else if (t->kind == TOK_ELSE) {
      fprintf(f, "%*s} else {\n", 2 * (depth - 1), "");
    } else if (t->kind == TOK_IF) {
      fprintf(f, "%*sif (", 2 * depth, "");
      if (t->hi == 0)
        fputs("N > 1", f);
      else
        fprintf(f, t->hi == 1 ? "v%d == 0" : "v%d %% 2 == 1", u);
      fputs(") {\n", f);
      open[depth - 1] = (ExScope){TOK_IF, u, false};
      depth++;
    } else if (t->kind == TOK_LOOP) {
      fprintf(f, "%*sfor v%d in 0 .. ", 2 * depth, "", loop);
      if (t->hi == 0)
        fputs("N", f);
      else
        fprintf(f, "v%d%s", u, t->hi == 2 ? " + 1" : "");
      fputs(" {\n", f);
      open[depth - 1] = (ExScope){TOK_LOOP, loop++, false};
      depth++;
    } else {
      fprintf(f, "%*s%s: ", 2 * depth, "", ex_engines[x->ins[instr].engine]);
      print_access(f, x, instr++);
      fputs(";\n", f);
    }
  }
  fputs("}\n", f);
  fclose(f);
  return text;
}

/* Engines and tiles numbered by first use; each two-slot tile's first slot
 * expression unshifted; an unused tile keeps one slot. */
static bool canonical(const Exhaustive *x) {
  int next_engine = 0, next_tile = 0;
  bool seen_form[2] = {false, false};
  for (int i = 0; i < x->nins; i++) {
    const ExInstr *in = &x->ins[i];
    if (in->engine > next_engine || in->tile > next_tile) return false;
    next_engine += in->engine == next_engine;
    next_tile += in->tile == next_tile;
    if (x->slots[in->tile] == 2 && !seen_form[in->tile]) {
      if (in->form % 2) return false;
      seen_form[in->tile] = true;
    }
  }
  return next_tile == 2 || x->slots[1] == 1;
}

/* Judge one kernel text with the oracle at N = 0..3, both sync modes. */
static void ex_check(Exhaustive *x, const char *text) {
  Program *p = program_new("small.bfk", text, strlen(text), target_default(), stderr);
  parse(p);
  if (!p->diag.errors) check(p);
  if (p->diag.errors) bug("exhaustive: the enumerated kernel does not check:\n%s", text);
  Oracle *o[4];
  int64_t params[4][1] = {{0}, {1}, {2}, {3}};
  for (int n = 0; n < 4; n++)
    if (!(o[n] = oracle_new(p, params[n]))) bug("exhaustive: the sequential walk failed:\n%s", text);
  bool failed = false;
  for (int sync = 0; sync < 2; sync++) {
    if (sync == SYNC_BARRIER)
      transform_barrier(p);
    else
      transform_barrier_free(p);
    if (p->diag.errors) bug("exhaustive: the transform reported an error:\n%s", text);
    ir_validate(p);
    for (int n = 0; n < 4; n++) {
      OracleStats st;
      oracle_check(o[n], x->c->cfg.schedules, (uint64_t)n + 1, NULL, &st);
      x->checks++;
      x->instructions += st.instructions;
      x->waits += st.waits;
      if (oracle_failed(&st) && !failed) {
        failed = true;
        x->failures++;
        fprintf(stderr,
                "bfsync: exhaustive: FAILED (%s, N=%d): races %" PRId64 ", unexplained late %" PRId64
                ", deadlocks %" PRId64 ", mismatches %" PRId64 "\n%s",
                sync_name((SyncMode)sync), n, st.races, st.late - st.late_explained, st.deadlocks, st.mismatches,
                text);
      }
    }
  }
  program_free(p);
}

static void ex_kernel(Exhaustive *x) {
  if (!canonical(x)) return;
  if (x->index++ % (uint64_t)x->jobs != (uint64_t)x->job) return;
  x->kernels++;
  if (x->c->dry_run) return;
  char *text = ex_text(x);
  ex_check(x, text);
  free(text);
}

/* Every engine, access, tile and slot form for instruction k onwards. */
static void ex_assign(Exhaustive *x, int k) {
  if (k == x->nins) {
    ex_kernel(x);
    return;
  }
  for (int e = 0; e < 3; e++)
    for (int a = 0; a < ACC_KINDS; a++)
      for (int t = 0; t < 2; t++)
        for (int f = 0; f < (x->slots[t] == 2 ? form_count(x, k) : 1); f++) {
          x->ins[k] = (ExInstr){e, a, t, f};
          ex_assign(x, k + 1);
        }
}

/* The innermost loop of each instruction, from the skeleton. */
static void ex_scopes(Exhaustive *x) {
  int open[EX_MAX_LOOPS], depth = 0, loop = 0;
  x->nins = 0;
  for (int k = 0; k < x->ntok; k++) {
    int u = depth ? open[depth - 1] : -1;
    if (x->tok[k].kind == TOK_LOOP)
      open[depth++] = loop++;
    else if (x->tok[k].kind == TOK_IF)
      open[depth++] = u;
    else if (x->tok[k].kind == TOK_END)
      depth--;
    else if (x->tok[k].kind == TOK_INSTR)
      x->inner[x->nins++] = u;
  }
}

static void ex_skeleton_done(Exhaustive *x) {
  ex_scopes(x);
  for (int a = 1; a <= 2; a++)
    for (int b = 1; b <= 2; b++) {
      x->slots[0] = a;
      x->slots[1] = b;
      ex_assign(x, 0);
    }
}

/* Skeletons: item sequences at depth with instrs and scopes (loops or
 * conditionals) still allowed; body_items counts the items of the innermost
 * open body (never empty). */
static void ex_items(Exhaustive *x, int depth, int instrs, int scopes, int body_items) {
  if (depth == 0 && x->ntok > 0) ex_skeleton_done(x);
  /* deeper calls reuse x->open[depth - 1] once this scope is closed */
  ExScope top = depth > 0 ? x->open[depth - 1] : (ExScope){TOK_END, -1, false};
  int u = innermost_loop(x->open, depth);
  if (depth > 0 && body_items > 0) {
    x->tok[x->ntok++] = (ExToken){TOK_END, 0};
    ex_items(x, depth - 1, instrs, scopes, 1);
    x->ntok--;
    if (top.kind == TOK_IF && !top.has_else && instrs > 0) {
      x->open[depth - 1] = (ExScope){TOK_IF, top.loop, true};
      x->tok[x->ntok++] = (ExToken){TOK_ELSE, 0};
      ex_items(x, depth, instrs, scopes, 0);
      x->ntok--;
    }
    x->open[depth - 1] = top;
  }
  if (instrs > 0) {
    x->tok[x->ntok++] = (ExToken){TOK_INSTR, 0};
    ex_items(x, depth, instrs - 1, scopes, body_items + 1);
    x->ntok--;
  }
  if (scopes > 0 && instrs > 0) {
    for (int hi = 0; hi < (u >= 0 ? 3 : 1); hi++) {
      x->open[depth] = (ExScope){TOK_LOOP, 0, false}; /* (any loop number: only >= 0 matters here) */
      x->tok[x->ntok++] = (ExToken){TOK_LOOP, hi};
      ex_items(x, depth + 1, instrs, scopes - 1, 0);
      x->ntok--;
    }
    for (int cond = 0; cond < (u >= 0 ? 3 : 1); cond++) {
      x->open[depth] = (ExScope){TOK_IF, u, false};
      x->tok[x->ntok++] = (ExToken){TOK_IF, cond};
      ex_items(x, depth + 1, instrs, scopes - 1, 0);
      x->ntok--;
    }
  }
}

typedef struct ExTotals {
  int64_t kernels, checks, instructions, waits, failures;
} ExTotals;

static _Noreturn void ex_worker(const Campaign *c, int job, int fd) {
  Exhaustive *x = calloc(1, sizeof *x);
  x->c = c;
  x->job = job;
  x->jobs = c->jobs;
  ex_items(x, 0, c->ex_instructions, EX_MAX_LOOPS, 0);
  ExTotals t = {x->kernels, x->checks, x->instructions, x->waits, x->failures};
  ssize_t n = write(fd, &t, sizeof t);
  _exit(n == (ssize_t)sizeof t ? 0 : 2);
}

static int run_exhaustive(Campaign *c) {
  int64_t start = now_ms();
  int fds[MAX_JOBS];
  pid_t pids[MAX_JOBS];
  for (int j = 0; j < c->jobs; j++) {
    int p[2];
    if (pipe(p)) bug("exhaustive: pipe: %s", strerror(errno));
    fflush(NULL);
    if ((pids[j] = fork()) == 0) {
      close(p[0]);
      ex_worker(c, j, p[1]);
    }
    close(p[1]);
    fds[j] = p[0];
  }
  ExTotals sum = {0};
  bool crashed = false;
  for (int j = 0; j < c->jobs; j++) {
    ExTotals t;
    int status;
    crashed |= read(fds[j], &t, sizeof t) != (ssize_t)sizeof t;
    close(fds[j]);
    waitpid(pids[j], &status, 0);
    crashed |= !WIFEXITED(status) || WEXITSTATUS(status);
    sum.kernels += t.kernels;
    sum.checks += t.checks;
    sum.instructions += t.instructions;
    sum.waits += t.waits;
    sum.failures += t.failures;
  }
  double seconds = (double)(now_ms() - start) / 1000;
  if (c->json)
    printf("{\"exhaustive\": true, \"kernels\": %" PRId64 ", \"oracle_checks\": %" PRId64 ", \"instructions\": %" PRId64
           ", \"waits\": %" PRId64 ", \"failures\": %" PRId64 ", \"crashed\": %s, \"seconds\": %.1f}\n",
           sum.kernels, sum.checks, sum.instructions, sum.waits, sum.failures, crashed ? "true" : "false", seconds);
  else
    printf("exhaustive: %" PRId64 " kernels (<= %d instructions over 3 engines, <= %d loops, 1-2 slots), %" PRId64
           " oracle checks (N = 0..3, both sync modes), %" PRId64 " dynamic instructions, %" PRId64
           " waits; %" PRId64 " failures%s; %.1f s\n",
           sum.kernels, c->ex_instructions, EX_MAX_LOOPS, sum.checks, sum.instructions, sum.waits, sum.failures,
           crashed ? ", a worker CRASHED" : "", seconds);
  return sum.failures || crashed ? 1 : 0;
}

/* ---- The command. */

static const char usage_text[] =
    "usage: bfsync campaign --from S --count N [options]\n"
    "       bfsync campaign --exhaustive [--instructions N] [--jobs J] [--schedules K] [--json]\n"
    "\n"
    "The differential campaign: for each seed S .. S+N-1, the kernel of `bfsync gen\n"
    "--seed S` is checked, judged by the oracle, run on threads with jitter and the\n"
    "race checker and on the simulator, under both sync modes; on every K-th seed\n"
    "the C of one mode (in turn) is also built with gcc and run. Every result is\n"
    "compared bit for bit with the sequential reference. Failing seeds are\n"
    "minimized into DIR/seed-S.bfk.\n"
    "With --exhaustive: every kernel of the small scope, judged by the oracle.\n"
    "\n"
    "  --from S         first seed (default 1)\n"
    "  --count N        number of seeds (default 100)\n"
    "  --jobs J         worker processes (default 2)\n"
    "  --gcc-every K    gcc step every K-th seed, the sync modes in turn (default 1;\n"
    "                   0 = never)\n"
    "  --size Z         kernel size for gen (default 12)\n"
    "  --schedules K    oracle interleavings per sync mode (default 2)\n"
    "  --no-jitter      no random delays on threads\n"
    "  --lib PATH       libbfrt.a for the gcc step (default: beside bfsync)\n"
    "  --regress DIR    where minimized failing seeds go (default tests/regress)\n"
    "  --no-minimize    report failing seeds without minimizing them\n"
    "  --json           the summary as one JSON object\n"
    "  --dry-run        with --exhaustive: count the kernels, judge none\n"
    "  --instructions N with --exhaustive: at most N instructions (1..3, default 3)\n"
    "  --mutate=drop:K|lower:K\n"
    "                   TEST ONLY: break the K-th barrier-free wait of every kernel,\n"
    "                   to see the campaign catch and minimize failures\n"
    "Exit status 0 when every kernel passed, 1 otherwise, 2 on a usage error.\n";

static bool parse_u64(const char *s, uint64_t max, uint64_t *out) {
  char *end;
  if (!s || !*s || *s == '-') return false;
  errno = 0;
  *out = strtoull(s, &end, 10);
  return !*end && !errno && *out <= max;
}

/* --name VALUE or --name=VALUE at argv[*i]. */
static const char *value_of(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n)) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n]) return NULL;
  return *i + 1 < argc ? argv[++*i] : "";
}

/* The message, then the usage; the status of a usage error. */
static int usage_error(const char *option, const char *value) {
  if (value)
    fprintf(stderr, "bfsync: error: bad or missing value '%s' for %s\n%s", value, option, usage_text);
  else
    fprintf(stderr, "bfsync: error: unknown option '%s'\n%s", option, usage_text);
  return 2;
}

/* 0, or 2 after a message. */
static int parse_numeric(int argc, char **argv, int *i, Campaign *c, bool *matched) {
  static const struct {
    const char *name;
    uint64_t min, max;
  } opts[] = {{"--from", 0, UINT64_MAX / 2}, {"--count", 1, UINT64_MAX / 2}, {"--jobs", 1, MAX_JOBS},
              {"--gcc-every", 0, UINT64_MAX}, {"--size", 1, GEN_MAX_SIZE}, {"--schedules", 1, 1000},
              {"--instructions", 1, EX_MAX_INSTRS}};
  for (size_t o = 0; o < sizeof opts / sizeof opts[0]; o++) {
    const char *v = value_of(argc, argv, i, opts[o].name);
    if (!v) continue;
    uint64_t n;
    *matched = true;
    if (!parse_u64(v, opts[o].max, &n) || n < opts[o].min) return usage_error(opts[o].name, v);
    switch (o) {
    case 0: c->from = n; break;
    case 1: c->count = n; break;
    case 2: c->jobs = (int)n; break;
    case 3: c->gcc_every = n; break;
    case 4: c->cfg.size = (long)n; break;
    case 5: c->cfg.schedules = (int)n; break;
    default: c->ex_instructions = (int)n; break;
    }
    return 0;
  }
  return 0;
}

/* drop:K | lower:K; 0, or -1 if malformed. */
static int parse_mutation(const char *v, Config *cfg) {
  uint64_t index;
  if (!strncmp(v, "drop:", 5) && parse_u64(v + 5, INT32_MAX, &index))
    cfg->mutate_kind = DROP_WAIT;
  else if (!strncmp(v, "lower:", 6) && parse_u64(v + 6, INT32_MAX, &index))
    cfg->mutate_kind = LOWER_THRESHOLD;
  else
    return -1;
  cfg->mutate_index = (int)index;
  return 0;
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, Campaign *c) {
  for (int i = 1; i < argc; i++) {
    bool matched = false;
    const char *v;
    int status = parse_numeric(argc, argv, &i, c, &matched);
    if (status || matched) {
      if (status) return status;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage_text, stdout);
      return 0;
    } else if (!strcmp(argv[i], "--json")) {
      c->json = true;
    } else if (!strcmp(argv[i], "--exhaustive")) {
      c->exhaustive = true;
    } else if (!strcmp(argv[i], "--dry-run")) {
      c->dry_run = true;
    } else if (!strcmp(argv[i], "--no-jitter")) {
      c->cfg.jitter = false;
    } else if (!strcmp(argv[i], "--no-minimize")) {
      c->minimize = false;
    } else if ((v = value_of(argc, argv, &i, "--mutate"))) {
      if (parse_mutation(v, &c->cfg)) return usage_error("--mutate (drop:K or lower:K)", v);
    } else if ((v = value_of(argc, argv, &i, "--lib"))) {
      if (!*v) return usage_error("--lib", v);
      c->cfg.lib = v;
    } else if ((v = value_of(argc, argv, &i, "--regress"))) {
      if (!*v) return usage_error("--regress", v);
      c->regress_dir = v;
    } else {
      return usage_error(argv[i], NULL);
    }
  }
  return -1;
}

static int run_campaign(Campaign *c) {
  char gcc_dir[] = "/tmp/bfsync-campaign-XXXXXX";
  if (c->gcc_every && setup_gcc(&c->cfg, gcc_dir)) return 1;
  int64_t start = now_ms();
  run_workers(c);
  double seconds = (double)(now_ms() - start) / 1000;
  if (c->json)
    print_json(c, seconds);
  else
    print_summary(c, seconds);
  fflush(stdout);
  struct stat st;
  bool can_save = c->minimize && !stat(c->regress_dir, &st) && S_ISDIR(st.st_mode);
  if (c->nfailed && c->minimize && !can_save)
    fprintf(stderr, "bfsync: campaign: failing seeds not minimized: no directory %s (--regress)\n", c->regress_dir);
  for (int i = 0; i < c->nfailed && i < MAX_MINIMIZED && can_save; i++)
    save_regression(&c->cfg, c->regress_dir, c->failed[i].seed, c->failed[i].out.stage, c->failed[i].out.message);
  if (c->cfg.gcc_dir) {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->cfg.gcc_dir);
    shell(cmd);
  }
  return c->totals.failures ? 1 : 0;
}

int cmd_campaign(int argc, char **argv) {
  Campaign *c = calloc(1, sizeof *c);
  if (!c) return 1;
  char *exe_dir = dir_of_exe();
  char lib[PATH_MAX + 16], root[PATH_MAX];
  snprintf(lib, sizeof lib, "%s/libbfrt.a", exe_dir);
  snprintf(root, sizeof root, "%s/..", BFRT_INCLUDE_DIR);
  c->from = 1;
  c->count = 100;
  c->jobs = 2;
  c->gcc_every = 1;
  c->ex_instructions = EX_MAX_INSTRS;
  c->minimize = true;
  c->regress_dir = "tests/regress";
  c->cfg = (Config){.size = 12, .schedules = 2, .jitter = true, .sim = true, .lib = lib, .root = root,
            .mutate_index = -1};
  int status = parse_args(argc, argv, c);
  /* Each kernel's arena is freed and the next one's allocated: without
   * these glibc returns the memory to the kernel and takes it back every
   * time, which cost 70% of the exhaustive run in TLB flushes. */
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  if (status < 0) status = c->exhaustive ? run_exhaustive(c) : run_campaign(c);
  free(exe_dir);
  free(c);
  return status;
}

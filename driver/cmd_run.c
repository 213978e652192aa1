/* cmd_run.c: `bfsync run`, the main job: a kernel compiled, run for real,
 * and checked against the sequential reference bit for bit.
 *
 *   parse -> check -> (per sync mode) transform -> ir_validate -> emit_c
 *         -> jit -> execute and compare (harness/exec.c)
 *   reference (once; program order on the AST) gives the expected tensors
 *
 * Inputs are .npy files or seeded pseudo-random values, the same for every
 * sync mode and for the reference. The results are also compared with the
 * independent f64 reference (backend/reference_f64.c, through
 * harness/exec.c as in the campaign), which checks the arithmetic rather
 * than the synchronization: every element must be within its error bound,
 * and its
 * diagnostics (a tile read before written, NaN or Inf from finite inputs,
 * out elements never stored) fail the run. Exit status: 0 only when every
 * out and inout tensor matches the reference in every mode and is within
 * tolerance of the f64 one; 1 on a mismatch, a numerical diagnostic, a
 * kernel error (bounds, division by zero, deadlock) or a bad file; 2 on a
 * usage error.
 *
 * --timing-only (with --exec=sim) runs the same generated code on an
 * instance that holds no float tensor or tile (bfrt_new_timing): nothing
 * is computed, no reference runs, nothing is compared, and the output
 * says so; the i32 tensors keep their seeded (or --input) values, because
 * control reads them, so the cycles are the checked run's. That is how the
 * paper kernels run at the paper's sizes (make bench). */
#include <inttypes.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/inputs.h"
#include "driver/args.h"
#include "driver/commands.h"
#include "driver/diagnostics.h"
#include "util/files.h"
#include "harness/exec.h"
#include "transform/oracle.h"
#include "transform/sync.h"

/* --sync: a SyncMode, or both (barrier, then barrier-free), or all four. */
enum { RUN_BOTH = SYNC_MODE_COUNT, RUN_ALL, MAX_RUN_MODES = SYNC_MODE_COUNT };
static const char *run_sync_choices[SYNC_MODE_COUNT + 3];
static const char *const exec_choices[] = {"threads", "sim", NULL}; /* BFRT_EXEC_* order */

typedef struct RunArgs {
  const char *file;
  ParamArgs params;
  int sync; /* a SyncMode, RUN_BOTH or RUN_ALL */
  int exec; /* BFRT_EXEC_* */
  uint64_t seed, max_steps;
  NamedPaths inputs, outputs;
  bool json, jitter, check, all_params, timing_only;
  const char *trace_path;
  const char *target_path; /* NULL: the built-in trn1 */
  Mutation mutation;
} RunArgs;

typedef struct ModeResult {
  SyncMode sync;
  bfrt_stats stats;
  int64_t wall_ns;
  bool match;
  double max_abs_err;
  ExactErrors f64;  /* against the f64 reference */
  bool within_f64; /* every element within its error bound */
} ModeResult;

typedef struct Run {
  Instance in;
  Program *p;
  const RunArgs *args;
  RefTensor *results; /* the last mode's results, for --output */
  int64_t ideal;      /* sim: the oracle's ideal makespan; -1 until computed, -2 if it cannot be */
  int64_t ideal_sync; /* sim: the same, charging each dependence its semaphore latency and one wait */
  char *trace_parts[MAX_RUN_MODES]; /* --trace: each mode's trace, a private temporary
                           file until write_trace puts it in place (by SyncMode) */
} Run;

static const char usage_text[] =
    "usage: bfsync run FILE [NAME=VALUE...] [-p NAME=VALUE...] [options]\n"
    "\n"
    "JIT-compile the kernel, run it, and compare every out and inout tensor\n"
    "with the sequential reference, bit for bit, and with the f64 reference\n"
    "within its error bounds. Exit status 0 only when all of it holds.\n"
    "  NAME=VALUE, -p NAME=VALUE\n"
    "                         a kernel parameter; without any, the kernel's first\n"
    "                         `// params:` line\n"
    "  --all-params           run every `// params:` line of the kernel in turn\n"
    "  --sync=MODE            barrier-free (default), barrier, unrolled (every loop\n"
    "                         unrolled for these parameters), paper (the allocation\n"
    "                         of Sung et al.), both (barrier, then barrier-free) or\n"
    "                         all (barrier, paper, barrier-free, unrolled)\n"
    "  --exec=threads|sim     real threads (default) or the cycle simulator\n"
    "  --target FILE          the machine and its cost model (default: the built-in\n"
    "                         trn1, targets/trn1.target; see docs/targets.md)\n"
    "  --seed S               seed of the default inputs and of --jitter (default 1)\n"
    "  --max-steps N          stop with an error after N steps (instructions and\n"
    "                         loop iterations) of the reference (default 10^8)\n"
    "  --input NAME=X.npy     initial contents of an in or inout tensor (repeatable)\n"
    "  --output NAME=Y.npy    write a tensor after the run (repeatable)\n"
    "  --json                 one JSON object per sync mode on stdout\n"
    "  --jitter               random delays before instructions (threads; seeded)\n"
    "  --trace FILE.json      Chrome trace of the run (several modes: each a process)\n"
    "  --check                race-check the run with vector clocks; races fail it\n"
    "  --timing-only          with --exec=sim: simulate the cycles without holding or\n"
    "                         computing the float tensors (i32 ones are still read);\n"
    "                         NOTHING is checked numerically\n"
    "  --mutate=drop:K|lower:K|raise:K\n"
    "                         TEST ONLY: break the K-th wait of the synchronization\n"
    DIAGNOSTICS_FORMAT_HELP;

/* A usage error found after parsing; exit status 2. */
static int usage_error(const char *fmt, const char *what) {
  error_print(stderr, fmt, what);
  fputs(" (see bfsync run --help)\n", stderr);
  return 2;
}

/* ---- Tensors in and out. */

static int find_tensor(const Kernel *k, const char *name) {
  for (int t = 0; t < k->ntensors; t++)
    if (!strcmp(k->tensors[t].name, name)) return t;
  return -1;
}

/* Check every --input and --output names a tensor it may name, at most
 * once, and that no two outputs share a file and no output or trace is
 * the kernel file; 0 or 2. */
static int check_tensor_args(const Kernel *k, const RunArgs *a) {
  for (int i = 0; i < a->inputs.n; i++) {
    const NamedPath *in = &a->inputs.items[i];
    int t = find_tensor(k, in->name);
    if (t < 0) return usage_error("--input: kernel has no tensor '%s'", in->name);
    if (k->tensors[t].io == IO_OUT)
      return usage_error("--input: '%s' is an out tensor; only in and inout tensors take inputs", in->name);
    for (int j = 0; j < i; j++)
      if (!strcmp(a->inputs.items[j].name, in->name)) return usage_error("--input: '%s' given twice", in->name);
  }
  if (a->trace_path && same_file(a->trace_path, a->file))
    return usage_error("--trace %s would overwrite the kernel file", a->trace_path);
  if (a->trace_path && a->target_path && same_file(a->trace_path, a->target_path))
    return usage_error("--trace %s would overwrite the target file", a->trace_path);
  for (int i = 0; a->trace_path && i < a->inputs.n; i++)
    if (same_file(a->trace_path, a->inputs.items[i].path))
      return usage_error("--trace %s would overwrite an --input file", a->trace_path);
  for (int i = 0; i < a->outputs.n; i++) {
    const NamedPath *out = &a->outputs.items[i];
    if (find_tensor(k, out->name) < 0) return usage_error("--output: kernel has no tensor '%s'", out->name);
    if (same_file(out->path, a->file)) return usage_error("--output: %s would overwrite the kernel file", out->path);
    if (a->target_path && same_file(out->path, a->target_path))
      return usage_error("--output: %s would overwrite the target file", out->path);
    if (a->trace_path && same_file(out->path, a->trace_path))
      return usage_error("--output: %s is the --trace file too", out->path);
    /* (a tensor's output may replace its own input: an inout tensor updated in place) */
    for (int j = 0; j < a->inputs.n; j++)
      if (strcmp(a->inputs.items[j].name, out->name) && same_file(out->path, a->inputs.items[j].path))
        return usage_error("--output: %s would overwrite another tensor's --input file", out->path);
    for (int j = 0; j < i; j++) {
      if (!strcmp(a->outputs.items[j].name, out->name)) return usage_error("--output: '%s' given twice", out->name);
      if (same_file(a->outputs.items[j].path, out->path))
        return usage_error("--output: two tensors would be written to '%s'", out->path);
    }
  }
  return 0;
}

static const NamedPath *input_for(const RunArgs *a, const char *name) {
  for (int i = 0; i < a->inputs.n; i++)
    if (!strcmp(a->inputs.items[i].name, name)) return &a->inputs.items[i];
  return NULL;
}

static int read_input(Run *r, int t, const NamedPath *in) {
  RefTensor *x = &r->in.inputs[t];
  NpyArray into = {x->rows, x->cols, x->data, r->p->kernel->tensors[t].type};
  const char *err;
  if (npy_read(r->p->arena, in->path, in->name, &into, &err)) {
    error_print(stderr, "%s\n", err);
    return 1;
  }
  return 0;
}

/* The seeded defaults, then every --input over them. */
static int make_inputs(Run *r) {
  const char *err;
  if ((r->args->timing_only ? instance_inputs_timing : instance_inputs)(&r->in, r->args->seed, &err)) {
    error_print(stderr, "%s\n", err);
    return 1;
  }
  const Kernel *k = r->p->kernel;
  for (int t = 0; t < k->ntensors; t++) {
    const NamedPath *in = input_for(r->args, k->tensors[t].name);
    if (in && r->args->timing_only && !k->tensors[t].ints)
      return usage_error("--input %s: --timing-only holds no float tensor; only i32 tensors take inputs", in->name);
    if (in && read_input(r, t, in)) return 1;
  }
  return 0;
}

static int write_outputs(Run *r) {
  for (int i = 0; i < r->args->outputs.n; i++) {
    const NamedPath *o = &r->args->outputs.items[i];
    const RefTensor *x = &r->results[find_tensor(r->p->kernel, o->name)];
    NpyArray arr = {x->rows, x->cols, x->data, r->p->kernel->tensors[find_tensor(r->p->kernel, o->name)].type};
    const char *err;
    if (npy_write(r->p->arena, o->path, &arr, &err)) {
      error_print(stderr, "%s\n", err);
      return 1;
    }
  }
  return 0;
}

/* ---- One sync mode. */

static int transform_mode(Run *r, SyncMode sync) {
  Program *p = r->p;
  const Mutation *m = &r->args->mutation;
  p->params = r->in.params;
  transform_sync(p, sync);
  if (p->diag.errors) return 1;
  if (m->index >= 0 && ir_mutate(p, m->kind, m->index) < 0) {
    error_print(stderr, "--mutate: wait %d does not exist (%d waits)\n", m->index,
            ir_mutate(p, m->kind, -1));
    return 2;
  }
  ir_validate(p);
  return 0;
}

static bfrt_options run_options(const Run *r, SyncMode sync) {
  bfrt_options opt = {0};
  opt.exec = r->args->exec;
  opt.jitter_seed = r->args->jitter ? splitmix64(r->args->seed) | 1 : 0;
  opt.trace_path = r->trace_parts[sync];
  opt.costs = &r->p->target->costs;
  opt.check = r->args->check;
  return opt;
}

/* --timing-only: the cycles of the run, nothing computed or compared. */
static int run_mode_timing(Run *r, SyncMode sync, Jit *jit, ModeResult *res) {
  bfrt_options opt = run_options(r, sync);
  opt.max_instructions = (int64_t)r->args->max_steps; /* no reference to stop a runaway kernel */
  const char *err;
  int status = instance_execute_timing(&r->in, jit_kernel(jit), &opt, &res->stats, &res->wall_ns, &err);
  jit_free(jit);
  if (status) error_print(stderr, "%s\n", err);
  res->match = res->within_f64 = true;
  res->f64 = (ExactErrors){NAN, NAN, NAN, NAN, false, false};
  res->max_abs_err = NAN;
  return status ? 1 : 0;
}

static int run_mode(Run *r, SyncMode sync, ModeResult *res) {
  res->sync = sync;
  int status = transform_mode(r, sync);
  if (status) return status;
  const char *err;
  Jit *jit = jit_compile(r->p, emit_c_string(r->p), &err);
  if (!jit) {
    error_print(stderr, "%s\n", err);
    return 1;
  }
  if (r->args->timing_only) return run_mode_timing(r, sync, jit, res);
  RefTensor *results = instance_copy(&r->in, r->in.inputs);
  bfrt_options opt = run_options(r, sync);
  /* the reference first: it stops a kernel longer than --max-steps, which
   * the executors would run to the end */
  if (instance_reference(&r->in, &err) ||
      instance_execute(&r->in, jit_kernel(jit), &opt, results, &res->stats, &res->wall_ns, &err)) {
    error_print(stderr, "%s\n", err);
    jit_free(jit);
    return 1;
  }
  jit_free(jit);
  if (instance_exact(&r->in, &err)) {
    error_print(stderr, "%s\n", err);
    return 1;
  }
  r->results = results;
  res->match = instance_compare(&r->in, results, arena_printf(r->p->arena, "bfsync: %s", sync_name(sync)), stderr,
                                &res->max_abs_err);
  const char *report;
  res->within_f64 = instance_compare_f64(&r->in, results, arena_printf(r->p->arena, "bfsync: %s", sync_name(sync)),
                                        &res->f64, &report);
  if (report) fprintf(stderr, "%s\n", report);
  return 0;
}

/* ---- Reports. */

static const char *exec_name(int exec) { return exec == BFRT_EXEC_SIM ? "sim" : "threads"; }

/* The ideal makespan under the simulator's costs, the same for every sync
 * mode; -2 when the oracle cannot walk the kernel. */
static int64_t ideal_cycles(Run *r) {
  if (r->ideal == -1) {
    /* A figure, not a check: when the oracle cannot walk the kernel (too
     * large to track) the column says "-", and its errors are not the run's. */
    Diag run_diag = r->p->diag;
    char *why = NULL;
    size_t len = 0;
    r->p->diag.out = open_memstream(&why, &len);
    r->p->diag.sink = NULL; /* not the run's diagnostics either */
    if (!r->p->diag.out) bug("out of memory");
    Oracle *o = oracle_new(r->p, r->in.params);
    fclose(r->p->diag.out);
    free(why);
    r->p->diag = run_diag;
    r->ideal = o ? oracle_ideal_cycles(o, &r->p->target->costs) : -2;
    r->ideal_sync = o ? oracle_ideal_sync_cycles(o, &r->p->target->costs) : -2;
  }
  return r->ideal;
}

static void print_json(Run *r, const ModeResult *res) {
  const Kernel *k = r->p->kernel;
  const bfrt_stats *s = &res->stats;
  JsonWriter w;
  jw_init(&w, stdout, false);
  jw_object(&w);
  jw_key_string(&w, "kernel", k->name);
  jw_key_string(&w, "sync", sync_name(res->sync));
  jw_key_string(&w, "exec", exec_name(r->args->exec));
  jw_key(&w, "params");
  jw_object(&w);
  for (int i = 0; i < k->nparams; i++) jw_key_int(&w, k->params[i].name, r->in.params[i]);
  jw_close(&w);
  device_ints_json(r->p, &w);
  jw_key_int(&w, "wall_ns", res->wall_ns);
  jw_key_int(&w, "waits_executed", s->waits);
  jw_key_bool(&w, "timing_only", r->args->timing_only);
  jw_key(&w, "outputs_match"); /* nothing to compare when only timed */
  if (r->args->timing_only) jw_null(&w);
  else jw_bool(&w, res->match);
  jw_key(&w, "max_abs_err");
  jw_sig(&w, res->max_abs_err, 9);
  jw_key(&w, "max_abs_err_f64");
  jw_sig(&w, res->f64.max_abs_err, 9);
  jw_key(&w, "max_rel_err_f64");
  jw_sig(&w, res->f64.max_rel_err, 9);
  jw_key(&w, "max_err_type_units_f64");
  jw_sig(&w, res->f64.max_type_err, 9);
  jw_key(&w, "error_bound_ratio_f64");
  jw_sig(&w, res->f64.max_bound_ratio, 9);
  jw_key_int(&w, "instructions", s->instructions);
  jw_key_int(&w, "bookkeeping", s->bookkeeping);
  jw_key_int(&w, "barriers", s->barriers);
  jw_key_int(&w, "backpressure_held", s->held);
  jw_key_int(&w, "spills", s->spills);
  if (r->args->check) jw_key_int(&w, "races", s->races);
  if (r->args->exec == BFRT_EXEC_SIM) {
    jw_key_int(&w, "cycles", s->cycles);
    jw_key(&w, "ns");
    jw_fixed(&w, (double)s->cycles / r->p->target->costs.clock_ghz, 1);
    bool ideal = ideal_cycles(r) >= 0;
    jw_key(&w, "ideal_cycles");
    if (ideal) jw_int(&w, ideal_cycles(r));
    else jw_null(&w);
    jw_key(&w, "ideal_sync_cycles");
    if (ideal) jw_int(&w, r->ideal_sync);
    else jw_null(&w);
    jw_key(&w, "engines");
    jw_object(&w);
    for (int e = 0; e < r->p->target->nengines; e++) {
      jw_key(&w, r->p->target->engines[e].name);
      jw_object(&w);
      jw_key_int(&w, "busy", s->busy[e]);
      jw_key_int(&w, "stall", s->stall[e]);
      jw_close(&w);
    }
    jw_close(&w);
  }
  jw_close(&w);
  putchar('\n');
}

static void print_table_head(const Run *r) {
  const Kernel *k = r->p->kernel;
  printf("kernel %s(", k->name);
  for (int i = 0; i < k->nparams; i++) printf("%s%s=%" PRId64, i ? ", " : "", k->params[i].name, r->in.params[i]);
  printf(")  exec %s  seed %" PRIu64 "%s\n", exec_name(r->args->exec), r->args->seed,
         r->args->jitter ? "  jitter" : "");
  printf("%-13s %-6s %10s %12s %12s %12s", "sync", "match", "waits", "instructions", "bookkeeping", "time");
  if (r->args->exec == BFRT_EXEC_SIM) printf(" %12s %12s", "cycles", "ideal");
  printf(" %12s %12s\n", "f64 rel err", "err/bound");
}

static void print_table_row(Run *r, const ModeResult *res) {
  const bfrt_stats *s = &res->stats;
  printf("%-13s %-6s %10" PRId64 " %12" PRId64 " %12" PRId64 " %9.3f ms", sync_name(res->sync),
         r->args->timing_only ? "-" : res->match ? "yes" : "NO", s->waits, s->instructions, s->bookkeeping, (double)res->wall_ns / 1e6);
  if (r->args->exec == BFRT_EXEC_SIM) {
    printf(" %12" PRId64, s->cycles);
    if (ideal_cycles(r) >= 0) printf(" %12" PRId64, ideal_cycles(r));
    else printf(" %12s", "-");
  }
  if (r->args->timing_only) printf(" %12s %12s", "-", "-");
  else if (res->f64.narrow_out && !res->f64.f32_out) printf(" %10.2g u %12.2g", res->f64.max_type_err, res->f64.max_bound_ratio); /* units of the type */
  else printf(" %12.2g %12.2g", res->f64.max_rel_err, res->f64.max_bound_ratio);
  if (r->args->check) printf("  races %" PRId64, s->races);
  if (s->held) printf("  held by back-pressure %" PRId64, s->held);
  printf("\n");
}

/* ---- The command. */

/* The bytes of path (malloc'ed, NUL-terminated), or NULL. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *text = f ? read_all(f, SIZE_MAX / 2, len) : NULL;
  if (f) fclose(f);
  return text;
}

/* One mode's trace events (the text between the runtime's first line and
 * its closing "]}") onto out as process pid, named "KERNEL (MODE)". The
 * runtime writes every event with "pid":1 and the process name first. */
static void copy_events(FILE *out, Arena *arena, const char *text, int pid, const char *kernel, SyncMode sync) {
  const char *body = strchr(text, '\n'), *end = strstr(text, "\n]}");
  if (!body || !end || end < body) return;
  body++;
  const char *name = arena_printf(arena, "\"args\":{\"name\":\"%s\"}}", kernel); /* (any length) */
  const char *process = strstr(body, name);
  for (const char *at = body; at < end;) {
    if (!strncmp(at, "\"pid\":1,", 8)) {
      fprintf(out, "\"pid\":%d,", pid);
      at += 8;
    } else if (at == process) {
      fputs("\"args\":{\"name\":", out);
      json_write_string(out, arena_printf(arena, "%s (%s)", kernel, sync_name(sync)));
      fputs("}}", out);
      at += strlen(name);
    } else {
      fputc(*at++, out);
    }
  }
}

/* --trace T: each mode's trace is written to a private temporary file
 * (so that two runs writing one T never mix their parts), then T is
 * written whole from them: the one mode's trace as it is, or both modes'
 * as two processes. */
static int make_trace_parts(Run *r, const SyncMode *modes, int nmodes) {
  const char *dir = getenv("TMPDIR");
  for (int m = 0; m < nmodes; m++) {
    char *part = arena_printf(r->p->arena, "%s/bfsync-trace-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(part);
    if (fd < 0) {
      error_print(stderr, "cannot make a temporary trace file %s: %s\n", part, strerror(errno));
      return 1;
    }
    close(fd);
    temporary_track(part);
    r->trace_parts[modes[m]] = part;
  }
  return 0;
}

static void remove_trace_parts(Run *r) {
  for (int m = 0; m < MAX_RUN_MODES; m++) {
    if (r->trace_parts[m]) {
      remove(r->trace_parts[m]);
      temporary_forget(r->trace_parts[m]);
    }
    r->trace_parts[m] = NULL;
  }
}

/* T from the parts of the modes that ran (the first ran of nmodes; the
 * last may have failed, and its part holds what the engines did until
 * then). A part left empty, by a failure the reference found before any
 * engine ran, has no events: with no other part there is no trace, and T
 * is left alone; *written says whether T was written. */
static int write_trace(Run *r, const SyncMode *modes, int nmodes, int ran, bool *written) {
  char *text[MAX_RUN_MODES] = {NULL};
  size_t len[MAX_RUN_MODES] = {0};
  int status = 0, parts = 0;
  for (int m = 0; m < ran; m++) {
    const char *part = r->trace_parts[modes[m]];
    if (!(text[m] = slurp(part, &len[m]))) {
      error_print(stderr, "cannot read the trace part %s: %s\n", part, strerror(errno));
      status = 1;
    }
    parts += len[m] > 0;
  }
  *written = false;
  AtomicFile out;
  if (parts && atomic_open(&out, r->args->trace_path)) {
    error_print(stderr, "%s\n", out.error);
    status = 1;
  } else if (parts) {
    if (nmodes > 1) fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out.f);
    for (int m = 0, copied = 0; m < ran; m++) {
      if (!len[m]) continue;
      if (nmodes == 1) fwrite(text[m], 1, len[m], out.f);
      else {
        if (copied++) fputs(",\n", out.f);
        copy_events(out.f, r->p->arena, text[m], m + 1, r->p->kernel->name, modes[m]);
      }
    }
    if (nmodes > 1) fputs("\n]}\n", out.f);
    status = output_finish(&out, status);
    *written = !status;
  }
  for (int m = 0; m < MAX_RUN_MODES; m++) free(text[m]);
  return status;
}

static int run_all(Run *r) {
  const RunArgs *a = r->args;
  static const SyncMode every[MAX_RUN_MODES] = {SYNC_BARRIER, SYNC_PAPER, SYNC_BARRIER_FREE, SYNC_UNROLLED};
  static const SyncMode both[2] = {SYNC_BARRIER, SYNC_BARRIER_FREE};
  SyncMode one = (SyncMode)a->sync;
  const SyncMode *modes = a->sync == RUN_ALL ? every : a->sync == RUN_BOTH ? both : &one;
  int nmodes = a->sync == RUN_ALL ? MAX_RUN_MODES : a->sync == RUN_BOTH ? 2 : 1;
  bool all_match = true;
  if (a->trace_path && make_trace_parts(r, modes, nmodes)) {
    remove_trace_parts(r);
    return 1;
  }
  int failed = 0, ran = 0;
  for (int m = 0; m < nmodes; m++) {
    ModeResult res = {0};
    ran++;
    if ((failed = run_mode(r, modes[m], &res))) break;
    if (a->json) {
      print_json(r, &res);
    } else {
      if (m == 0) print_table_head(r);
      print_table_row(r, &res);
    }
    if (a->check && res.stats.races > 0) {
      fprintf(stderr, "bfsync: %s: the race checker found %" PRId64 " races\n", sync_name(res.sync),
              res.stats.races);
      all_match = false;
    }
    all_match &= res.match && res.within_f64;
  }
  if (a->timing_only && !a->json)
    printf("timing only: no tensor was computed; nothing was checked numerically (only the i32 inputs were read)\n");
  fflush(stdout);
  /* also after a failed run: its trace is what shows where it stopped */
  bool written = false;
  int traced = a->trace_path ? write_trace(r, modes, nmodes, ran, &written) : 0;
  remove_trace_parts(r);
  if (failed == 1 && a->trace_path)
    fprintf(stderr, written ? "bfsync: the trace of the run until it failed is in %s\n"
                            : "bfsync: no trace written to %s: the run failed before any engine ran\n",
            a->trace_path);
  if (failed) return failed;
  if (traced) return 1;
  if (write_outputs(r)) return 1;
  return all_match ? 0 : 1;
}

/* One parameter set (harness/params.h's ParamsEach). */
static int run_params(Program *p, const Directive *from, const void *args) {
  const RunArgs *a = args;
  int64_t *params = ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1);
  Run r = {{p, params, NULL, NULL, NULL}, p, a, NULL, -1, -1, {NULL, NULL}};
  int status = params_bind(p, &a->params, from, params);
  if (status || (status = check_tensor_args(p->kernel, a)) || (status = make_inputs(&r))) return status;
  return run_all(&r);
}

/* The parameters given, else the first `// params:` line, or every line
 * with --all-params (each run in turn, the worst status kept). */
static int run_program(Program *p, const void *args) {
  const RunArgs *a = args;
  p->max_steps = (int64_t)a->max_steps;
  parse(p);
  if (p->diag.errors) return 1;
  check(p);
  if (p->diag.errors) return 1;
  Directive *lines = NULL;
  int nlines = a->params.n || !p->kernel->nparams ? 0 : program_directives(p, "params", &lines);
  if (a->all_params && nlines > 1 && (a->outputs.n || a->trace_path))
    return usage_error("--output and --trace keep one run; --all-params runs the %s lines of `// params:` in turn",
                       arena_printf(p->arena, "%d", nlines));
  return params_each(p, &a->params, a->all_params, "run", run_params, a);
}

int cmd_run(int argc, char **argv) {
  RunArgs a = {.seed = 1, .max_steps = DEFAULT_MAX_STEPS, .mutation = {0, -1}};
  DiagOutput dout = {0};
  for (int m = 0; m < SYNC_MODE_COUNT; m++) run_sync_choices[m] = sync_choices[m];
  run_sync_choices[RUN_BOTH] = "both";
  run_sync_choices[RUN_ALL] = "all";
  const ArgSpec specs[] = {
      {.name = "-p", .kind = ARG_PARAM, .dest = &a.params},
      {.name = "--param", .kind = ARG_PARAM, .dest = &a.params},
      {.name = "--sync", .kind = ARG_CHOICE, .dest = &a.sync, .choices = run_sync_choices},
      {.name = "--exec", .kind = ARG_CHOICE, .dest = &a.exec, .choices = exec_choices},
      {.name = "--seed", .kind = ARG_NUMBER, .dest = &a.seed, .max = UINT64_MAX},
      {.name = "--max-steps", .kind = ARG_NUMBER, .dest = &a.max_steps, .min = 1, .max = INT64_MAX},
      {.name = "--input", .kind = ARG_NAMED_PATH, .dest = &a.inputs},
      {.name = "--output", .kind = ARG_NAMED_PATH, .dest = &a.outputs},
      {.name = "--trace", .kind = ARG_STRING, .dest = &a.trace_path},
      {.name = "--target", .kind = ARG_STRING, .dest = &a.target_path},
      {.name = "--mutate", .kind = ARG_MUTATION, .dest = &a.mutation},
      {.name = "--json", .kind = ARG_FLAG, .dest = &a.json},
      {.name = "--jitter", .kind = ARG_FLAG, .dest = &a.jitter},
      {.name = "--check", .kind = ARG_FLAG, .dest = &a.check},
      {.name = "--all-params", .kind = ARG_FLAG, .dest = &a.all_params},
      {.name = "--timing-only", .kind = ARG_FLAG, .dest = &a.timing_only},
      ARG_DIAGNOSTICS_FORMAT(&dout.format),
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"run", usage_text, specs, 1, INT_MAX, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  a.file = cl.nfiles ? cl.files[0] : NULL;
  /* NAME=VALUE after the file, as a `// params:` line has them */
  for (int i = 1; status < 0 && i < cl.nfiles; i++) {
    if (!strchr(cl.files[i], '='))
      status = args_error(&cl, "run takes one FILE (also got '%s'); parameters are NAME=VALUE", cl.files[i]);
    else if (param_args_add(&a.params, arena, cl.files[i], stderr))
      status = 2;
  }
  if (status < 0 && a.all_params && a.params.n) status = args_error(&cl, "--all-params runs the file's parameters: give no others");
  if (status < 0 && a.jitter && a.exec == BFRT_EXEC_SIM)
    status = args_error(&cl, "--jitter delays engines on threads: the simulator's times are its cost model's");
  if (status < 0 && a.timing_only && a.exec != BFRT_EXEC_SIM)
    status = args_error(&cl, "--timing-only is a mode of the simulator: give --exec=sim");
  if (status < 0 && a.timing_only && (a.check || a.outputs.n))
    status = args_error(&cl, "--timing-only holds no tensor data: --check and --output need a checked run");
  status = diag_output_run(&dout, status, a.file, a.target_path, arena, run_program, &a);
  arena_free(arena);
  return status;
}

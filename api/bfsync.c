/* bfsync.c: libbfsync.so, the pipeline of the command line behind a C API
 * (api/bfsync.h) that never exits, aborts or prints.
 *
 *   compile   program_new -> parse -> check          (the kernel kept)
 *   run       a fresh program of the same text -> transform_sync ->
 *             ir_validate -> emit_c -> jit -> instance_execute, compared
 *             with the sequential reference (instance_compare) and the
 *             f64 one (reference_f64_compare), as `bfsync run` does;
 *             timing-only: instance_inputs_timing -> instance_execute_timing,
 *             the cycles alone, as `run --exec=sim --timing-only`
 *   verify    oracle_new -> transform_sync -> ir_validate -> oracle_check
 *   explain   transform_sync -> ir_validate -> ir_explain
 *
 * Each call builds what it needs in one Call: a program whose diagnostics
 * are recorded (util/diag.h's sink) and printed into a memory stream, and a
 * BugTrap, so an internal error (bug(), memory exhausted) comes back as a
 * BFS_INTERNAL_ERROR instead of aborting the host. Because every run
 * compiles a fresh program from the kernel's text and frees it with the
 * run, a kernel is never written to after bfs_compile_*: threads may share
 * it, and memory does not grow with the number of runs. The command line's
 * messages ("bfsync: error: ...", "kernel K, line N: ...") become records
 * through diag_sink_add_text, as --diagnostics-format reads them. */
#include "api/bfsync.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "harness/exec.h"
#include "harness/params.h"
#include "transform/oracle.h"
#include "transform/sync.h"
#include "util/diag_json.h"
#include "util/files.h"
#include "util/random.h"

struct bfs_kernel {
  Program *p;         /* parsed and checked; read only after compile */
  Arena *arena;       /* the --target file's target */
  const Target *target;
  char *warnings;     /* as printed */
};

struct bfs_run {
  Program *p; /* owns the tensors */
  const Kernel *kernel;
  RefTensor *results; /* NULL for a timing-only run */
  RefTensor *shapes;  /* every tensor's shape */
  bfs_result result;
  char *report;
};

struct bfs_error {
  int status;
  char *text, *json;
};

/* One API call: its diagnostics and what it allocated. Heap-allocated so
 * that its contents are well defined after a longjmp from bug(). */
typedef struct Call {
  char *text;
  size_t len;
  FILE *out; /* the diagnostics as text */
  DiagSink sink;
  const char *path; /* where run-time errors are */
  Program *p;       /* freed by call_end unless kept */
  Jit *jit;
  BugTrap trap;
} Call;

static Call *call_begin(void) {
  Call *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->out = open_memstream(&c->text, &c->len);
  if (!c->out) {
    free(c);
    return NULL;
  }
  return c;
}

static void call_end(Call *c) {
  bug_trap = NULL;
  jit_free(c->jit);
  program_free(c->p);
  if (c->out) fclose(c->out);
  free(c->text);
  diag_sink_free(&c->sink);
  free(c);
}

/* A message that is no Diag's: printed as the command line prints it, and
 * recorded (a run-time error with its line). */
static void call_message(Call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void call_message(Call *c, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  error_print(c->out, "%s\n", line);
  diag_sink_add_text(&c->sink, line, strlen(line), c->path);
}

static char *strdup_or_empty(const char *s) {
  char *d = strdup(s ? s : "");
  return d;
}

/* The call's diagnostics as a bfs_error of status, into *err. */
static void call_fail(Call *c, int status, bfs_error **err) {
  if (!err) return;
  bfs_error *e = calloc(1, sizeof *e);
  if (!e) return;
  e->status = status;
  fflush(c->out);
  e->text = strdup_or_empty(c->text);
  char *json = NULL;
  size_t len = 0;
  FILE *j = open_memstream(&json, &len);
  if (j) {
    diag_sink_write_json(&c->sink, j);
    fclose(j);
  }
  e->json = json ? json : strdup_or_empty("[]");
  *err = e;
}

/* After a longjmp from bug(). */
static void call_internal(Call *c, bfs_error **err) {
  call_message(c, "internal error: %s (a bfsync bug; please report it with the kernel)", c->trap.message);
  call_fail(c, BFS_INTERNAL_ERROR, err);
}

static void no_memory(bfs_error **err) {
  static const char text[] = ERROR_PREFIX "out of memory\n";
  if (!err) return;
  bfs_error *e = calloc(1, sizeof *e);
  if (!e) return;
  e->status = BFS_INTERNAL_ERROR;
  e->text = strdup_or_empty(text);
  e->json = strdup_or_empty("[]");
  *err = e;
}

/* Run body(c, ...) under the call's trap: the result, or fallback with *err
 * set after an internal error. The trap is armed in the caller's frame,
 * which outlives the body. */
#define TRAPPED(c, err, fallback, body)   \
  do {                                    \
    if (setjmp((c)->trap.jump)) {         \
      call_internal((c), (err));          \
      call_end(c);                        \
      return fallback;                    \
    }                                     \
    bug_trap = &(c)->trap;                \
    body;                                 \
    bug_trap = NULL;                      \
  } while (0)

/* ---- Programs. */

/* A program of text whose diagnostics are the call's. */
static Program *call_program(Call *c, const char *path, const char *text, size_t len, const Target *target) {
  Program *p = program_new(path, text, len, target, c->out);
  p->diag.sink = &c->sink;
  c->p = p;
  c->path = p->src.path;
  return p;
}

/* A fresh checked copy of k's program, for one operation. */
static Program *fresh_program(Call *c, const bfs_kernel *k) {
  const Program *kp = k->p;
  Program *p = call_program(c, kp->src.path, kp->src.text, kp->src.len, k->target);
  parse(p);
  if (!p->diag.errors) check(p);
  if (p->diag.errors) bug("a kernel that compiled has errors the second time");
  return p;
}

/* Where a parameter error is: the parameter list, or the kernel's name. */
static Span params_span(const Kernel *k) {
  if (k->nparams) return span_join(k->params[0].span, k->params[k->nparams - 1].span);
  return (Span){k->span.begin, k->span.begin + 6};
}

/* names[i] = values[i] bound to p's parameter order; 0, or -1 after
 * positioned errors (unknown, missing, repeated). */
static int bind_params(Program *p, const char *const *names, const int64_t *values, int n,
                       int64_t *params) {
  ParamArgs pa = {n, n, (const char **)names, (int64_t *)values};
  char *why = NULL;
  size_t len = 0;
  FILE *msg = open_memstream(&why, &len);
  if (!msg) bug("out of memory");
  int failed = n < 0 || param_args_bind(&pa, p->kernel, params, msg);
  fclose(msg);
  for (char *save, *m = strtok_r(why, "\n", &save); failed && m; m = strtok_r(NULL, "\n", &save))
    diag_error(&p->diag, params_span(p->kernel), "%s",
               strncmp(m, ERROR_PREFIX, strlen(ERROR_PREFIX)) ? m : m + strlen(ERROR_PREFIX));
  free(why);
  return failed ? -1 : 0;
}

/* BFRT_EXEC_* by name; a new executor is one more entry. */
static const struct {
  const char *name;
  int exec;
  bool timing_only; /* the simulator without tensor data */
} executors[] = {{"threads", BFRT_EXEC_THREADS, false}, {"sim", BFRT_EXEC_SIM, false},
                 {"timing-only", BFRT_EXEC_SIM, true}};

/* A sync mode by name (transform/sync.c's one table; NULL: barrier-free). */
static int sync_of(Call *c, const char *name, SyncMode *mode) {
  for (int s = 0; s < SYNC_MODE_COUNT; s++)
    if (!name || !strcmp(name, sync_choices[s])) {
      *mode = (SyncMode)s;
      return 0;
    }
  char list[256];
  size_t n = 0;
  for (int s = 0; s < SYNC_MODE_COUNT && n < sizeof list; s++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", s ? ", " : "", sync_choices[s]);
  call_message(c, "sync must be one of %s, not '%s'", list, name);
  return -1;
}

static int exec_of(Call *c, const char *name, int *exec, bool *timing_only) {
  for (size_t e = 0; e < sizeof executors / sizeof executors[0]; e++)
    if (!name || !strcmp(name, executors[e].name)) {
      *exec = executors[e].exec;
      *timing_only = executors[e].timing_only;
      return 0;
    }
  call_message(c, "exec must be threads, sim or timing-only, not '%s'", name);
  return -1;
}

/* ---- Kernels. */

const char *bfs_version(void) { return BFSYNC_VERSION; }
size_t bfs_result_size(void) { return sizeof(bfs_result); }
size_t bfs_verify_result_size(void) { return sizeof(bfs_verify_result); }

/* A target file's errors, printed as text by its reader (a memory stream
 * opened by the caller): onto the call's text and into its records. */
static void text_errors(Call *c, FILE *f, char **text, size_t *len) {
  fclose(f);
  fwrite(*text, 1, *len, c->out);
  diag_sink_add_text(&c->sink, *text, *len, NULL);
  free(*text);
}

static bfs_kernel *compile_in(Call *c, const char *text, size_t len, const char *name, const char *target_path) {
  bfs_kernel *k = calloc(1, sizeof *k);
  if (!k) bug("out of memory");
  k->arena = arena_new();
  Target *target = NULL;
  char *errors = NULL;
  size_t elen = 0;
  FILE *ef = open_memstream(&errors, &elen);
  if (!ef) bug("out of memory");
  if (target_path) {
    target = ARENA_NEW(k->arena, Target);
    if (target_load(target_path, k->arena, target, ef)) {
      text_errors(c, ef, &errors, &elen);
      goto fail;
    }
  }
  Program *p = call_program(c, name, text, len, target ? target : target_default());
  p->diag.warn = 1;
  int bad_target = !target_path && program_use_target_line(p, ef);
  text_errors(c, ef, &errors, &elen);
  if (bad_target) goto fail;
  parse(p);
  if (!p->diag.errors) check(p);
  if (p->diag.errors) goto fail;
  fflush(c->out);
  k->warnings = strdup_or_empty(c->text);
  k->target = p->target;
  k->p = p;
  c->p = NULL; /* the kernel's now */
  p->diag.out = NULL;
  p->diag.sink = NULL;
  return k;
fail:
  arena_free(k->arena);
  free(k);
  return NULL;
}

bfs_kernel *bfs_compile_string(const char *text, size_t len, const char *name, const char *target_path,
                               bfs_error **err) {
  if (err) *err = NULL;
  Call *volatile c = call_begin();
  if (!c) {
    no_memory(err);
    return NULL;
  }
  bfs_kernel *k = NULL;
  if (!text || len >= MAX_SOURCE_BYTES) {
    call_message(c, "'%s' is %s, the limit for a kernel", name ? name : "<string>",
                 text ? "larger than 256 MiB" : "no text");
    call_fail(c, BFS_USAGE_ERROR, err);
    call_end(c);
    return NULL;
  }
  TRAPPED(c, err, NULL, k = compile_in(c, text, len, name ? name : "<string>", target_path));
  if (!k) call_fail(c, BFS_KERNEL_ERROR, err);
  call_end(c);
  return k;
}

bfs_kernel *bfs_compile_file(const char *path, const char *target_path, bfs_error **err) {
  if (err) *err = NULL;
  FILE *f = path ? fopen(path, "rb") : NULL;
  size_t len = 0;
  char *text = f ? read_all(f, MAX_SOURCE_BYTES, &len) : NULL;
  int saved = errno;
  if (f) fclose(f);
  if (!text) {
    Call *volatile c = call_begin();
    if (!c) {
      no_memory(err);
      return NULL;
    }
    if (saved == EFBIG)
      call_message(c, "'%s' is larger than %d MiB, the limit for a kernel file", path, MAX_SOURCE_BYTES >> 20);
    else
      call_message(c, "cannot read '%s': %s", path ? path : "(null)", strerror(saved));
    call_fail(c, BFS_KERNEL_ERROR, err);
    call_end(c);
    return NULL;
  }
  bfs_kernel *k = bfs_compile_string(text, len, path, target_path, err);
  free(text);
  return k;
}

void bfs_kernel_free(bfs_kernel *k) {
  if (!k) return;
  program_free(k->p);
  arena_free(k->arena);
  free(k->warnings);
  free(k);
}

const char *bfs_kernel_warnings(const bfs_kernel *k) { return k->warnings; }
const char *bfs_kernel_name(const bfs_kernel *k) { return k->p->kernel->name; }
int bfs_kernel_nparams(const bfs_kernel *k) { return k->p->kernel->nparams; }
int bfs_kernel_ntensors(const bfs_kernel *k) { return k->p->kernel->ntensors; }

const char *bfs_kernel_param(const bfs_kernel *k, int i) {
  return i >= 0 && i < k->p->kernel->nparams ? k->p->kernel->params[i].name : NULL;
}

static const Tensor *tensor_at(const bfs_kernel *k, int t) {
  return t >= 0 && t < k->p->kernel->ntensors ? &k->p->kernel->tensors[t] : NULL;
}

const char *bfs_tensor_name(const bfs_kernel *k, int t) { return tensor_at(k, t) ? tensor_at(k, t)->name : NULL; }

const char *bfs_tensor_io(const bfs_kernel *k, int t) {
  static const char *const io[] = {"in", "out", "inout"};
  return tensor_at(k, t) ? io[tensor_at(k, t)->io] : NULL;
}

const char *bfs_tensor_type(const bfs_kernel *k, int t) {
  return tensor_at(k, t) ? elem_type_name(tensor_at(k, t)->type) : NULL;
}

/* ---- Shapes and inputs. */

static int shapes_in(Call *c, const bfs_kernel *k, const char *const *names, const int64_t *values, int n,
                     int64_t *shapes) {
  Program *p = fresh_program(c, k);
  int64_t *params = ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1);
  RefTensor *t = ARENA_ARRAY(p->arena, RefTensor, p->kernel->ntensors + 1);
  const char *why;
  if (bind_params(p, names, values, n, params)) return BFS_USAGE_ERROR;
  if (reference_shapes(p, params, t, &why)) {
    call_message(c, "%s", why);
    return BFS_USAGE_ERROR;
  }
  for (int i = 0; i < p->kernel->ntensors; i++) {
    shapes[2 * i] = t[i].rows;
    shapes[2 * i + 1] = t[i].cols;
  }
  return 0;
}

int bfs_tensor_shapes(const bfs_kernel *k, const char *const *names, const int64_t *values, int nparams,
                      int64_t *shapes, bfs_error **err) {
  if (err) *err = NULL;
  Call *volatile c = call_begin();
  if (!c) {
    no_memory(err);
    return -1;
  }
  int status = 0;
  TRAPPED(c, err, -1, status = shapes_in(c, k, names, values, nparams, shapes));
  if (status) call_fail(c, status, err);
  call_end(c);
  return status ? -1 : 0;
}

static int64_t dtype_size(const char *dtype) {
  return !strcmp(dtype, "<f4") || !strcmp(dtype, "<i4") ? 4 : !strcmp(dtype, "<u2") || !strcmp(dtype, "<f2") ? 2 : 1;
}

/* One given input into its tensor's cells; 0, or -1 after a positioned error. */
static int take_input(Program *p, int t, const bfs_buffer *b, RefTensor *x, bool timing_only) {
  const Tensor *tensor = &p->kernel->tensors[t];
  if (timing_only && !tensor->ints) {
    diag_error(&p->diag, tensor->span, "a timing-only run holds no float tensor: only i32 tensors such as "
               "'%s' would take inputs", tensor->name);
    return -1;
  }
  if (tensor->io == IO_OUT) {
    diag_error(&p->diag, tensor->span, "'%s' is an out tensor: only in and inout tensors take inputs", tensor->name);
    return -1;
  }
  if (!b->dtype || !npy_dtype_reads(tensor->type, b->dtype)) {
    diag_error(&p->diag, tensor->span, "tensor '%s' is %s, not '%s'", tensor->name, npy_dtype_advice(tensor->type),
               b->dtype ? b->dtype : "(none)");
    return -1;
  }
  if (b->rows < 0) {
    diag_error(&p->diag, tensor->span,
               "tensor '%s' is [%" PRId64 ", %" PRId64 "] with these parameters, but the array given is %" PRId64 "-D",
               tensor->name, x->rows, x->cols, b->cols);
    return -1;
  }
  if (b->rows != x->rows || b->cols != x->cols) {
    diag_error(&p->diag, tensor->span,
               "tensor '%s' is [%" PRId64 ", %" PRId64 "] with these parameters, but the array given is (%" PRId64
               ", %" PRId64 ")",
               tensor->name, x->rows, x->cols, b->rows, b->cols);
    return -1;
  }
  int64_t n = x->rows * x->cols;
  memcpy(x->data, b->data, (size_t)(n * dtype_size(b->dtype)));
  npy_widen(x->data, n, b->dtype, tensor->type);
  return 0;
}

/* ---- Running. */

/* The ideal makespans of the kernel at these parameters, or -1 when the
 * oracle cannot walk it (its errors are not the run's, as in bfsync run). */
static void ideal_cycles(Program *p, const int64_t *params, bfs_result *res) {
  Diag run_diag = p->diag;
  char *why = NULL;
  size_t len = 0;
  p->diag.out = open_memstream(&why, &len);
  p->diag.sink = NULL;
  if (!p->diag.out) bug("out of memory");
  Oracle *o = oracle_new(p, params);
  fclose(p->diag.out);
  free(why);
  p->diag = run_diag;
  res->ideal_cycles = o ? oracle_ideal_cycles(o, &p->target->costs) : -1;
  res->ideal_sync_cycles = o ? oracle_ideal_sync_cycles(o, &p->target->costs) : -1;
}

/* The figures a run counts (its stats), into res. */
static void take_stats(bfs_result *res, const bfrt_stats *st, bool check) {
  res->waits_executed = st->waits;
  res->instructions = st->instructions;
  res->bookkeeping = st->bookkeeping;
  res->barriers = st->barriers;
  res->backpressure_held = st->held;
  res->spills = st->spills;
  res->races = check ? st->races : -1;
}

/* The simulator without tensor data: its cycles, nothing compared (as
 * `run --exec=sim --timing-only`; the runaway bound is max_steps). */
static int run_timing(Call *c, Program *p, Instance *in, bfrt_options *bo, bfs_result *res) {
  bo->max_instructions = p->max_steps;
  bfrt_stats st = {0};
  const char *why;
  int status = instance_execute_timing(in, jit_kernel(c->jit), bo, &st, &res->wall_ns, &why);
  jit_free(c->jit);
  c->jit = NULL;
  if (status) {
    call_message(c, "%s", why);
    return BFS_RUNTIME_ERROR;
  }
  take_stats(res, &st, false);
  res->outputs_match = res->within_f64 = -1;
  res->max_abs_err = res->max_abs_err_f64 = res->max_rel_err_f64 = res->error_bound_ratio_f64 = NAN;
  res->cycles = st.cycles;
  ideal_cycles(p, in->params, res);
  return 0;
}

static int run_in(Call *c, const bfs_kernel *k, const char *const *names, const int64_t *values, int nparams,
                  const bfs_buffer *inputs, int ninputs, const bfs_options *opt, bfs_run *run) {
  SyncMode sync;
  int exec;
  bool timing;
  if (sync_of(c, opt->sync, &sync) || exec_of(c, opt->exec, &exec, &timing)) return BFS_USAGE_ERROR;
  if (opt->jitter && exec == BFRT_EXEC_SIM) {
    call_message(c, "jitter delays engines on threads: the simulator's times are its cost model's");
    return BFS_USAGE_ERROR;
  }
  if (timing && opt->check) {
    call_message(c, "a timing-only run holds no tensor data: the race checker needs a checked run");
    return BFS_USAGE_ERROR;
  }
  Program *p = fresh_program(c, k);
  p->max_steps = opt->max_steps > 0 ? opt->max_steps : DEFAULT_MAX_STEPS;
  const Kernel *kernel = p->kernel;
  int64_t *params = ARENA_ARRAY(p->arena, int64_t, kernel->nparams + 1);
  if (bind_params(p, names, values, nparams, params)) return BFS_USAGE_ERROR;
  if (ninputs > kernel->ntensors) {
    call_message(c, "%d inputs for the %d tensors of kernel %s", ninputs, kernel->ntensors, kernel->name);
    return BFS_USAGE_ERROR;
  }
  Instance in = {p, params, NULL, NULL, NULL};
  const char *why;
  if ((timing ? instance_inputs_timing : instance_inputs)(&in, opt->seed, &why)) {
    call_message(c, "%s", why);
    return BFS_USAGE_ERROR;
  }
  for (int t = 0; t < ninputs; t++)
    if (inputs[t].data && take_input(p, t, &inputs[t], &in.inputs[t], timing)) return BFS_USAGE_ERROR;
  p->params = params; /* --sync=unrolled specializes to them */
  transform_sync(p, sync);
  if (p->diag.errors) return BFS_KERNEL_ERROR;
  ir_validate(p);
  c->jit = jit_compile(p, emit_c_string(p), &why);
  if (!c->jit) {
    call_message(c, "%s", why);
    return BFS_INTERNAL_ERROR;
  }
  bfrt_options bo = {.exec = exec, .costs = &p->target->costs, .check = opt->check,
                     .jitter_seed = opt->jitter ? splitmix64(opt->seed) | 1 : 0};
  bfrt_stats st = {0};
  bfs_result *res = &run->result;
  run->kernel = kernel;
  run->shapes = in.inputs;
  if (timing) return run_timing(c, p, &in, &bo, res);
  RefTensor *results = instance_copy(&in, in.inputs);
  if (instance_reference(&in, &why) ||
      instance_execute(&in, jit_kernel(c->jit), &bo, results, &st, &res->wall_ns, &why)) {
    call_message(c, "%s", why);
    return BFS_RUNTIME_ERROR;
  }
  jit_free(c->jit);
  c->jit = NULL;
  if (instance_exact(&in, &why)) {
    call_message(c, "%s", why);
    return BFS_RUNTIME_ERROR;
  }
  char *report = NULL;
  size_t len = 0;
  FILE *rep = open_memstream(&report, &len);
  if (!rep) bug("out of memory");
  res->outputs_match = instance_compare(&in, results, sync_name(sync), rep, &res->max_abs_err);
  ExactErrors f64;
  const char *beyond;
  res->within_f64 = instance_compare_f64(&in, results, sync_name(sync), &f64, &beyond);
  if (beyond) fprintf(rep, "%s\n", beyond);
  fclose(rep);
  run->report = report;
  res->max_abs_err_f64 = f64.max_abs_err;
  res->max_rel_err_f64 = f64.max_rel_err;
  res->error_bound_ratio_f64 = f64.max_bound_ratio;
  take_stats(res, &st, opt->check);
  res->cycles = res->ideal_cycles = res->ideal_sync_cycles = -1;
  if (exec == BFRT_EXEC_SIM) {
    res->cycles = st.cycles;
    ideal_cycles(p, params, res);
  }
  run->results = results;
  return 0;
}

bfs_run *bfs_run_kernel(const bfs_kernel *k, const char *const *names, const int64_t *values, int nparams,
                        const bfs_buffer *inputs, int ninputs, const bfs_options *opt, bfs_error **err) {
  if (err) *err = NULL;
  Call *volatile c = call_begin();
  bfs_run *volatile run = c ? calloc(1, sizeof *run) : NULL;
  if (!run) {
    if (c) call_end(c);
    no_memory(err);
    return NULL;
  }
  bfs_options defaults = {.seed = 1};
  int status = 0;
  TRAPPED(c, err, (free(run), NULL),
          status = run_in(c, k, names, values, nparams, inputs, inputs && ninputs > 0 ? ninputs : 0,
                          opt ? opt : &defaults, run));
  if (status) {
    call_fail(c, status, err);
    free(run->report);
    free(run);
    call_end(c);
    return NULL;
  }
  run->p = c->p; /* the run's now: its tensors */
  run->p->diag.out = NULL;
  run->p->diag.sink = NULL;
  c->p = NULL;
  call_end(c);
  return run;
}

const bfs_result *bfs_run_result(const bfs_run *r) { return &r->result; }
const char *bfs_run_report(const bfs_run *r) { return r->report ? r->report : ""; }

int bfs_run_shape(const bfs_run *r, int t, int64_t *rows, int64_t *cols) {
  if (t < 0 || t >= r->kernel->ntensors) return -1;
  *rows = r->shapes[t].rows;
  *cols = r->shapes[t].cols;
  return 0;
}

int bfs_run_output(const bfs_run *r, int t, void *dst, const char *dtype, bfs_error **err) {
  if (err) *err = NULL;
  Call *volatile c = call_begin();
  if (!c) {
    no_memory(err);
    return -1;
  }
  if (t < 0 || t >= r->kernel->ntensors) {
    call_message(c, "kernel %s has no tensor %d", r->kernel->name, t);
    call_fail(c, BFS_USAGE_ERROR, err);
    call_end(c);
    return -1;
  }
  if (!r->results) {
    call_message(c, "a timing-only run holds no tensor data: tensor '%s' was not computed", r->kernel->tensors[t].name);
    call_fail(c, BFS_USAGE_ERROR, err);
    call_end(c);
    return -1;
  }
  ElemType type = r->kernel->tensors[t].type;
  const RefTensor *x = &r->results[t];
  int64_t n = x->rows * x->cols;
  bool cells = dtype && (!strcmp(dtype, "<f4") ? type != ELEM_I32 : !strcmp(dtype, "<i4") && type == ELEM_I32);
  bool patterns = dtype && !cells && bfrt_dtype_narrow((int)type) && npy_dtype_reads(type, dtype) &&
                  strcmp(dtype, "<f4");
  if (cells) {
    memcpy(dst, x->data, (size_t)n * 4);
  } else if (patterns) {
    for (int64_t i = 0; i < n; i++) {
      unsigned bits = npy_pattern(x->data[i], type);
      if (dtype_size(dtype) == 2) ((uint16_t *)dst)[i] = (uint16_t)bits;
      else ((uint8_t *)dst)[i] = (uint8_t)bits;
    }
  } else {
    call_message(c, "tensor '%s' is %s, not '%s'", r->kernel->tensors[t].name, npy_dtype_advice(type),
                 dtype ? dtype : "(none)");
    call_fail(c, BFS_USAGE_ERROR, err);
  }
  call_end(c);
  return cells || patterns ? 0 : -1;
}

void bfs_run_free(bfs_run *r) {
  if (!r) return;
  program_free(r->p);
  free(r->report);
  free(r);
}

/* ---- Verifying and explaining. */

static int verify_in(Call *c, const bfs_kernel *k, const char *const *names, const int64_t *values, int nparams,
                     const bfs_options *opt, int schedules, bfs_verify_result *out) {
  SyncMode sync;
  if (sync_of(c, opt->sync, &sync)) return BFS_USAGE_ERROR;
  if (schedules < 1 || schedules > 1000000) {
    call_message(c, "schedules must be from 1 to 1000000, not %d", schedules);
    return BFS_USAGE_ERROR;
  }
  Program *p = fresh_program(c, k);
  p->max_steps = opt->max_steps > 0 ? opt->max_steps : DEFAULT_MAX_STEPS;
  int64_t *params = ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1);
  if (bind_params(p, names, values, nparams, params)) return BFS_USAGE_ERROR;
  Instance in = {p, params, NULL, NULL, NULL};
  const char *why;
  if (instance_inputs(&in, opt->seed, &why)) { /* the i32 tensors' values */
    call_message(c, "%s", why);
    return BFS_USAGE_ERROR;
  }
  Oracle *o = oracle_new(p, params);
  if (!o) return BFS_RUNTIME_ERROR;
  p->params = params;
  transform_sync(p, sync);
  if (p->diag.errors) return BFS_KERNEL_ERROR;
  ir_validate(p);
  OracleStats st;
  oracle_check(o, schedules, opt->seed, c->out, &st);
  *out = (bfs_verify_result){oracle_failed(&st), st.instructions, st.waits, st.races, st.early, st.late,
                             st.late_explained, st.redundant, st.subsumed, st.bookkeeping, st.deadlocks,
                             st.mismatches, st.schedules};
  return 0;
}

int bfs_verify(const bfs_kernel *k, const char *const *names, const int64_t *values, int nparams,
               const bfs_options *opt, int schedules, bfs_verify_result *out, bfs_error **err) {
  if (err) *err = NULL;
  Call *volatile c = call_begin();
  if (!c) {
    no_memory(err);
    return -1;
  }
  bfs_options defaults = {.seed = 1};
  int status = 0;
  TRAPPED(c, err, -1, status = verify_in(c, k, names, values, nparams, opt ? opt : &defaults, schedules, out));
  if (status) call_fail(c, status, err);
  call_end(c);
  return status ? -1 : 0;
}

static char *explain_in(Call *c, const bfs_kernel *k, const char *sync_text) {
  SyncMode sync;
  if (sync_of(c, sync_text, &sync)) return NULL;
  Program *p = fresh_program(c, k);
  transform_sync(p, sync);
  if (p->diag.errors) return NULL;
  ir_validate(p);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  if (!out) bug("out of memory");
  ir_explain(p, out);
  fclose(out);
  return text;
}

char *bfs_explain(const bfs_kernel *k, const char *sync, bfs_error **err) {
  if (err) *err = NULL;
  Call *volatile c = call_begin();
  if (!c) {
    no_memory(err);
    return NULL;
  }
  char *text = NULL;
  TRAPPED(c, err, NULL, text = explain_in(c, k, sync));
  if (!text) call_fail(c, c->p && c->p->diag.errors ? BFS_KERNEL_ERROR : BFS_USAGE_ERROR, err);
  call_end(c);
  return text;
}

void bfs_free(void *p) { free(p); }

/* ---- Errors. */

int bfs_error_status(const bfs_error *e) { return e->status; }
const char *bfs_error_text(const bfs_error *e) { return e->text ? e->text : ""; }
const char *bfs_error_json(const bfs_error *e) { return e->json ? e->json : "[]"; }

void bfs_error_free(bfs_error *e) {
  if (!e) return;
  free(e->text);
  free(e->json);
  free(e);
}

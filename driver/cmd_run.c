/* cmd_run.c: `bfsync run`, the main job: a kernel compiled, run for real,
 * and checked against the sequential reference bit for bit.
 *
 *   parse -> check -> (per sync mode) transform -> ir_validate -> emit_c
 *         -> jit -> bfrt_new -> inputs -> bfrt_run -> compare
 *   reference (once; program order on the AST) gives the expected tensors
 *
 * Inputs are .npy files or seeded pseudo-random values, the same for every
 * sync mode and for the reference. Exit status: 0 only when every out and
 * inout tensor matches the reference in every mode; 1 on a mismatch, a
 * kernel error (bounds, division by zero, deadlock) or a bad file; 2 on a
 * usage error. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/inputs.h"
#include "driver/commands.h"
#include "driver/options.h"
#include "transform/oracle.h"

#define MAX_TENSOR_ARGS 64

typedef struct NamedPath {
  const char *name, *path;
} NamedPath;

typedef struct RunArgs {
  const char *file;
  ParamArgs params;
  SyncMode modes[2];
  int nmodes;
  int exec; /* BFRT_EXEC_* */
  uint64_t seed;
  NamedPath inputs[MAX_TENSOR_ARGS], outputs[MAX_TENSOR_ARGS];
  int ninputs, noutputs;
  bool json, jitter, check;
  const char *trace_path;
  const char *target_path; /* NULL: the built-in trn1 */
  int mutate_kind, mutate_index; /* mutate_index < 0: none */
} RunArgs;

typedef struct ModeResult {
  SyncMode sync;
  bfrt_stats stats;
  int64_t wall_ns;
  bool match;
  double max_abs_err;
} ModeResult;

typedef struct Run {
  Program *p;
  const RunArgs *args;
  int64_t *params;
  RefTensor *inputs;   /* every tensor before the run (out tensors zero) */
  RefTensor *expected; /* the reference's results; NULL until computed */
  RefTensor *results;  /* the last mode's results, for --output */
  int64_t ideal;       /* sim: the oracle's ideal makespan; -1 until computed, -2 if it cannot be */
} Run;

static const char usage_text[] =
    "usage: bfsync run FILE -p NAME=VALUE... [options]\n"
    "\n"
    "JIT-compile the kernel, run it, and compare every out and inout tensor\n"
    "with the sequential reference, bit for bit. Exit status 0 only on a match.\n"
    "  -p NAME=VALUE          a kernel parameter (every parameter is required)\n"
    "  --sync=MODE            barrier-free (default), barrier, or both\n"
    "  --exec=threads|sim     real threads (default) or the cycle simulator\n"
    "  --target FILE          the machine and its cost model (default: the built-in\n"
    "                         trn1, targets/trn1.target; see docs/targets.md)\n"
    "  --seed S               seed of the default inputs and of --jitter (default 1)\n"
    "  --input NAME=X.npy     initial contents of an in or inout tensor (repeatable)\n"
    "  --output NAME=Y.npy    write a tensor after the run (repeatable)\n"
    "  --json                 one JSON object per sync mode on stdout\n"
    "  --jitter               random delays before instructions (threads; seeded)\n"
    "  --trace FILE.json      Chrome trace of the run (of the last mode with --sync=both)\n"
    "  --check                race-check the run with vector clocks; races fail it\n"
    "  --mutate=drop:K|lower:K|raise:K\n"
    "                         TEST ONLY: break the K-th wait of the synchronization\n";

/* ---- Arguments. */

static int usage_error(const char *fmt, const char *what) {
  fputs("bfsync: error: ", stderr);
  fprintf(stderr, fmt, what);
  fprintf(stderr, "\n%s", usage_text);
  return 2;
}

/* NAME=PATH for --input and --output. */
static int add_named_path(NamedPath *list, int *n, const char *arg, const char *option) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1]) return usage_error("%s takes NAME=FILE.npy", option);
  if (*n == MAX_TENSOR_ARGS) return usage_error("too many %s options", option);
  list[*n].name = strndup(arg, (size_t)(eq - arg));
  list[*n].path = eq + 1;
  ++*n;
  return 0;
}

static int parse_mutate(const char *v, RunArgs *a) {
  static const struct {
    const char *name;
    int kind;
  } kinds[] = {{"drop:", DROP_WAIT}, {"lower:", LOWER_THRESHOLD}, {"raise:", RAISE_THRESHOLD}};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    size_t n = strlen(kinds[k].name);
    char *end;
    if (strncmp(v, kinds[k].name, n) || !v[n]) continue;
    long index = strtol(v + n, &end, 10);
    if (*end || index < 0 || index > 1000000000) break;
    a->mutate_kind = kinds[k].kind;
    a->mutate_index = (int)index;
    return 0;
  }
  return usage_error("--mutate must be drop:K, lower:K or raise:K (not '%s')", v);
}

static int parse_seed(const char *v, RunArgs *a) {
  char *end;
  a->seed = strtoull(v, &end, 10);
  if (!*v || *end || *v == '-') return usage_error("--seed takes a non-negative integer (not '%s')", v);
  return 0;
}

static int parse_exec(const char *v, RunArgs *a) {
  if (!strcmp(v, "threads"))
    a->exec = BFRT_EXEC_THREADS;
  else if (!strcmp(v, "sim"))
    a->exec = BFRT_EXEC_SIM;
  else
    return usage_error("--exec must be threads or sim (not '%s')", v);
  return 0;
}

/* One option at argv[*i]: 0, or 2 after a message. */
static int parse_option(int argc, char **argv, int *i, RunArgs *a) {
  const char *arg = argv[*i], *v;
  if (!strncmp(arg, "-p", 2)) {
    v = arg[2] ? arg + 2 : *i + 1 < argc ? argv[++*i] : NULL;
    if (!v) return usage_error("%s needs NAME=VALUE", "-p");
    return param_args_add(&a->params, v, stderr) ? 2 : 0;
  }
  if ((v = option_value(argc, argv, i, "--sync", NULL))) {
    a->nmodes = parse_sync(v, 1, a->modes, stderr);
    return a->nmodes < 0 ? 2 : 0;
  }
  if ((v = option_value(argc, argv, i, "--exec", NULL))) return parse_exec(v, a);
  if ((v = option_value(argc, argv, i, "--seed", NULL))) return parse_seed(v, a);
  if ((v = option_value(argc, argv, i, "--input", NULL))) return add_named_path(a->inputs, &a->ninputs, v, "--input");
  if ((v = option_value(argc, argv, i, "--output", NULL)))
    return add_named_path(a->outputs, &a->noutputs, v, "--output");
  if ((v = option_value(argc, argv, i, "--trace", NULL))) {
    a->trace_path = v;
    return 0;
  }
  if ((v = option_value(argc, argv, i, "--mutate", NULL))) return parse_mutate(v, a);
  if ((v = option_value(argc, argv, i, "--target", NULL))) {
    a->target_path = v;
    return 0;
  }
  if (!strcmp(arg, "--json")) a->json = true;
  else if (!strcmp(arg, "--jitter")) a->jitter = true;
  else if (!strcmp(arg, "--check")) a->check = true;
  else return usage_error("unknown or incomplete option '%s'", arg);
  return 0;
}

static int parse_args(int argc, char **argv, RunArgs *a) {
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1]) {
      int status = parse_option(argc, argv, &i, a);
      if (status) return status;
    } else if (a->file) {
      return usage_error("run takes one FILE (also got '%s')", argv[i]);
    } else {
      a->file = argv[i];
    }
  }
  if (!a->file) return usage_error("%s", "no input file");
  return 0;
}

/* ---- Tensors in and out. */

static int find_tensor(const Kernel *k, const char *name) {
  for (int t = 0; t < k->ntensors; t++)
    if (!strcmp(k->tensors[t].name, name)) return t;
  return -1;
}

/* Check every --input and --output names a tensor it may name; 0 or 2. */
static int check_tensor_names(const Kernel *k, const RunArgs *a) {
  for (int i = 0; i < a->ninputs; i++) {
    int t = find_tensor(k, a->inputs[i].name);
    if (t < 0) return usage_error("--input: kernel has no tensor '%s'", a->inputs[i].name);
    if (k->tensors[t].io == IO_OUT)
      return usage_error("--input: '%s' is an out tensor; only in and inout tensors take inputs",
                         a->inputs[i].name);
    for (int j = 0; j < i; j++)
      if (!strcmp(a->inputs[j].name, a->inputs[i].name))
        return usage_error("--input: '%s' given twice", a->inputs[i].name);
  }
  for (int i = 0; i < a->noutputs; i++)
    if (find_tensor(k, a->outputs[i].name) < 0)
      return usage_error("--output: kernel has no tensor '%s'", a->outputs[i].name);
  return 0;
}

static const NamedPath *input_for(const RunArgs *a, const char *name) {
  for (int i = 0; i < a->ninputs; i++)
    if (!strcmp(a->inputs[i].name, name)) return &a->inputs[i];
  return NULL;
}

static int read_input(Run *r, int t, const NamedPath *in) {
  RefTensor *x = &r->inputs[t];
  NpyArray arr;
  const char *err;
  if (npy_read(r->p->arena, in->path, &arr, &err)) {
    fprintf(stderr, "bfsync: error: %s\n", err);
    return 1;
  }
  if (arr.rows != x->rows || arr.cols != x->cols) {
    fprintf(stderr,
            "bfsync: error: %s: shape (%" PRId64 ", %" PRId64 ") does not match tensor %s [%" PRId64
            ", %" PRId64 "]\n",
            in->path, arr.rows, arr.cols, in->name, x->rows, x->cols);
    return 1;
  }
  if (arr.ints != r->p->kernel->tensors[t].ints) {
    fprintf(stderr, "bfsync: error: %s: tensor %s is %s, so its .npy must hold %s\n", in->path, in->name,
            arr.ints ? "f32" : "i32", arr.ints ? "float32 ('<f4')" : "int32 ('<i4')");
    return 1;
  }
  x->data = arr.data;
  return 0;
}

/* Shapes from the reference; contents from --input or the seeded default. */
static int make_inputs(Run *r) {
  const Kernel *k = r->p->kernel;
  const char *err;
  r->inputs = ARENA_ARRAY(r->p->arena, RefTensor, k->ntensors + 1);
  if (reference_shapes(r->p, r->params, r->inputs, &err)) {
    fprintf(stderr, "bfsync: error: %s\n", err);
    return 1;
  }
  for (int t = 0; t < k->ntensors; t++) {
    RefTensor *x = &r->inputs[t];
    const NamedPath *in = input_for(r->args, k->tensors[t].name);
    if (in) {
      if (read_input(r, t, in)) return 1;
      continue;
    }
    x->data = ARENA_ARRAY(r->p->arena, float, x->rows * x->cols + 1);
    if (k->tensors[t].ints)
      bf_default_ints(x->data, x->rows * x->cols, r->args->seed, t);
    else if (k->tensors[t].io != IO_OUT)
      bf_default_inputs(x->data, x->rows * x->cols, r->args->seed, t);
  }
  device_ints_bind(r->p, r->inputs);
  return 0;
}

static RefTensor *copy_tensors(Run *r, const RefTensor *from) {
  int n = r->p->kernel->ntensors;
  RefTensor *to = ARENA_ARRAY(r->p->arena, RefTensor, n + 1);
  for (int t = 0; t < n; t++) {
    size_t count = (size_t)(from[t].rows * from[t].cols);
    to[t] = from[t];
    to[t].data = ARENA_ARRAY(r->p->arena, float, count + 1);
    memcpy(to[t].data, from[t].data, count * sizeof(float));
  }
  return to;
}

static int write_outputs(Run *r) {
  for (int i = 0; i < r->args->noutputs; i++) {
    const NamedPath *o = &r->args->outputs[i];
    const RefTensor *x = &r->results[find_tensor(r->p->kernel, o->name)];
    NpyArray arr = {x->rows, x->cols, x->data, r->p->kernel->tensors[find_tensor(r->p->kernel, o->name)].ints};
    const char *err;
    if (npy_write(r->p->arena, o->path, &arr, &err)) {
      fprintf(stderr, "bfsync: error: %s\n", err);
      return 1;
    }
  }
  return 0;
}

/* ---- The reference and the comparison. */

static int compute_expected(Run *r) {
  if (r->expected) return 0;
  RefTensor *t = copy_tensors(r, r->inputs);
  const char *err;
  if (reference_run(r->p, r->params, t, &err)) {
    fprintf(stderr, "bfsync: error: reference: %s\n", err);
    return 1;
  }
  r->expected = t;
  return 0;
}

static double abs_err(float a, float b) {
  if (isnan(a) != isnan(b)) return INFINITY;
  if (isnan(a)) return 0;
  return fabs((double)a - (double)b);
}

/* Bit-for-bit comparison of every out and inout tensor; the first
 * difference of each tensor is described on stderr. */
static void compare(Run *r, const RefTensor *got, ModeResult *res) {
  const Kernel *k = r->p->kernel;
  res->match = true;
  res->max_abs_err = 0;
  for (int t = 0; t < k->ntensors; t++) {
    if (k->tensors[t].io == IO_IN) continue;
    const RefTensor *want = &r->expected[t];
    int64_t n = want->rows * want->cols, first = -1;
    for (int64_t i = 0; i < n; i++) {
      if (!memcmp(&got[t].data[i], &want->data[i], sizeof(float))) continue;
      if (first < 0) first = i;
      double e = abs_err(got[t].data[i], want->data[i]);
      if (e > res->max_abs_err) res->max_abs_err = e;
    }
    if (first < 0) continue;
    res->match = false;
    fprintf(stderr,
            "bfsync: %s: tensor %s differs from the reference, first at [%" PRId64 ", %" PRId64
            "]: %.9g, expected %.9g\n",
            sync_name(res->sync), k->tensors[t].name, first / want->cols, first % want->cols,
            (double)got[t].data[first], (double)want->data[first]);
  }
}

/* ---- One sync mode. */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int transform_mode(Run *r, SyncMode sync) {
  Program *p = r->p;
  transform_sync(p, sync);
  if (p->diag.errors) return 1;
  if (r->args->mutate_index >= 0) {
    int nwaits = ir_mutate(p, r->args->mutate_kind, r->args->mutate_index);
    if (nwaits < 0) {
      fprintf(stderr, "bfsync: error: --mutate: wait %d does not exist (%d waits)\n",
              r->args->mutate_index, ir_mutate(p, r->args->mutate_kind, -1));
      return 2;
    }
  }
  ir_validate(p);
  return 0;
}

static bfrt_options run_options(const Run *r, bool trace) {
  bfrt_options opt = {0};
  opt.exec = r->args->exec;
  opt.jitter_seed = r->args->jitter ? bf_splitmix64(r->args->seed) | 1 : 0;
  opt.trace_path = trace ? r->args->trace_path : NULL;
  opt.costs = &r->p->target->costs;
  opt.check = r->args->check;
  return opt;
}

/* Run the instance; its tensors are copied into results. 0, or 1 after a
 * kernel error. */
static int execute(Run *r, bfrt *rt, bool trace, ModeResult *res, RefTensor *results) {
  const Kernel *k = r->p->kernel;
  for (int t = 0; t < k->ntensors; t++) {
    int64_t shape[2];
    bfrt_tensor_shape(rt, t, shape);
    if (shape[0] != r->inputs[t].rows || shape[1] != r->inputs[t].cols)
      bug("tensor %s: the descriptor's shape differs from the reference's", k->tensors[t].name);
    memcpy(bfrt_tensor_data(rt, t), r->inputs[t].data, (size_t)(shape[0] * shape[1]) * sizeof(float));
  }
  bfrt_options opt = run_options(r, trace);
  int64_t start = now_ns();
  int status = bfrt_run(rt, &opt);
  res->wall_ns = now_ns() - start;
  if (status) {
    fprintf(stderr, "bfsync: error: %s\n", bfrt_error(rt));
    return 1;
  }
  res->stats = *bfrt_get_stats(rt);
  for (int t = 0; t < k->ntensors; t++)
    memcpy(results[t].data, bfrt_tensor_data(rt, t), (size_t)(results[t].rows * results[t].cols) * sizeof(float));
  return 0;
}

static int run_mode(Run *r, SyncMode sync, bool trace, ModeResult *res) {
  res->sync = sync;
  int status = transform_mode(r, sync);
  if (status) return status;
  Jit *jit = jit_compile(r->p, emit_c_string(r->p));
  const char *err;
  bfrt *rt = bfrt_new(jit_kernel(jit), r->params, &err);
  if (!rt) {
    fprintf(stderr, "bfsync: error: %s\n", err);
    jit_free(jit);
    return 1;
  }
  RefTensor *results = copy_tensors(r, r->inputs);
  status = execute(r, rt, trace, res, results);
  bfrt_delete(rt);
  jit_free(jit);
  if (status || (status = compute_expected(r))) return status;
  r->results = results;
  compare(r, results, res);
  return 0;
}

/* ---- Reports. */

static const char *exec_name(int exec) { return exec == BFRT_EXEC_SIM ? "sim" : "threads"; }

/* The ideal makespan under the simulator's costs, the same for every sync
 * mode; -2 when the oracle cannot walk the kernel. */
static int64_t ideal_cycles(Run *r) {
  if (r->ideal == -1) {
    Oracle *o = oracle_new(r->p, r->params);
    r->ideal = o ? oracle_ideal_cycles(o, &r->p->target->costs) : -2;
  }
  return r->ideal;
}

static void print_json(Run *r, const ModeResult *res) {
  const Kernel *k = r->p->kernel;
  const bfrt_stats *s = &res->stats;
  printf("{\"kernel\": \"%s\", \"sync\": \"%s\", \"exec\": \"%s\", \"params\": {", k->name,
         sync_name(res->sync), exec_name(r->args->exec));
  for (int i = 0; i < k->nparams; i++)
    printf("%s\"%s\": %" PRId64, i ? ", " : "", k->params[i].name, r->params[i]);
  putchar('}');
  device_ints_json(r->p, stdout);
  printf(", \"wall_ns\": %" PRId64 ", \"waits_executed\": %" PRId64 ", \"outputs_match\": %s, ",
         res->wall_ns, s->waits, res->match ? "true" : "false");
  if (isfinite(res->max_abs_err))
    printf("\"max_abs_err\": %.9g, ", res->max_abs_err);
  else
    printf("\"max_abs_err\": null, ");
  printf("\"instructions\": %" PRId64 ", \"bookkeeping\": %" PRId64 ", \"barriers\": %" PRId64,
         s->instructions, s->bookkeeping, s->barriers);
  if (r->args->check) printf(", \"races\": %" PRId64, s->races);
  if (r->args->exec == BFRT_EXEC_SIM) {
    printf(", \"cycles\": %" PRId64 ", \"ideal_cycles\": ", s->cycles);
    if (ideal_cycles(r) >= 0) printf("%" PRId64, ideal_cycles(r));
    else printf("null");
    printf(", \"engines\": {");
    for (int e = 0; e < r->p->target->nengines; e++)
      printf("%s\"%s\": {\"busy\": %" PRId64 ", \"stall\": %" PRId64 "}", e ? ", " : "",
             r->p->target->engines[e].name, s->busy[e], s->stall[e]);
    printf("}");
  }
  printf("}\n");
}

static void print_table_head(const Run *r) {
  const Kernel *k = r->p->kernel;
  printf("kernel %s(", k->name);
  for (int i = 0; i < k->nparams; i++) printf("%s%s=%" PRId64, i ? ", " : "", k->params[i].name, r->params[i]);
  printf(")  exec %s  seed %" PRIu64 "%s\n", exec_name(r->args->exec), r->args->seed,
         r->args->jitter ? "  jitter" : "");
  printf("%-13s %-6s %10s %12s %12s %12s", "sync", "match", "waits", "instructions", "bookkeeping", "time");
  if (r->args->exec == BFRT_EXEC_SIM) printf(" %12s %12s", "cycles", "ideal");
  printf("\n");
}

static void print_table_row(Run *r, const ModeResult *res) {
  const bfrt_stats *s = &res->stats;
  printf("%-13s %-6s %10" PRId64 " %12" PRId64 " %12" PRId64 " %9.3f ms", sync_name(res->sync),
         res->match ? "yes" : "NO", s->waits, s->instructions, s->bookkeeping, (double)res->wall_ns / 1e6);
  if (r->args->exec == BFRT_EXEC_SIM) {
    printf(" %12" PRId64, s->cycles);
    if (ideal_cycles(r) >= 0) printf(" %12" PRId64, ideal_cycles(r));
    else printf(" %12s", "-");
  }
  if (r->args->check) printf("  races %" PRId64, s->races);
  printf("\n");
}

/* ---- The command. */

static int run_all(Run *r) {
  const RunArgs *a = r->args;
  bool all_match = true;
  for (int m = 0; m < a->nmodes; m++) {
    ModeResult res = {0};
    int status = run_mode(r, a->modes[m], m == a->nmodes - 1, &res);
    if (status) return status;
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
    all_match &= res.match;
  }
  fflush(stdout);
  if (write_outputs(r)) return 1;
  return all_match ? 0 : 1;
}

static int run_program(Program *p, const RunArgs *a) {
  parse(p);
  if (p->diag.errors) return 1;
  check(p);
  if (p->diag.errors) return 1;
  Run r = {p, a, ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1), NULL, NULL, NULL, -1};
  if (param_args_bind(&a->params, p->kernel, r.params, stderr)) return 2;
  int status = check_tensor_names(p->kernel, a);
  if (status || (status = make_inputs(&r))) return status;
  return run_all(&r);
}

static void free_names(RunArgs *a) {
  for (int i = 0; i < a->ninputs; i++) free((char *)a->inputs[i].name);
  for (int i = 0; i < a->noutputs; i++) free((char *)a->outputs[i].name);
}

int cmd_run(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage_text, stdout);
      return 0;
    }
  RunArgs *a = calloc(1, sizeof *a);
  if (!a) return 1;
  a->modes[0] = SYNC_BARRIER_FREE;
  a->nmodes = 1;
  a->seed = 1;
  a->mutate_index = -1;
  int status = parse_args(argc, argv, a);
  Arena *target_arena = arena_new();
  Target *target = ARENA_NEW(target_arena, Target);
  if (!status && a->target_path && target_load(a->target_path, target_arena, target, stderr)) status = 1;
  if (!status) {
    Program *p = program_load(a->file, a->target_path ? target : target_default(), stderr);
    status = p ? run_program(p, a) : 1;
    if (p) program_free(p);
  }
  arena_free(target_arena);
  free_names(a);
  free(a);
  return status;
}

/* cmd_run.c: `bfsync run`, the main job: a kernel compiled, run for real,
 * and checked against the sequential reference bit for bit.
 *
 *   parse -> check -> (per sync mode) transform -> ir_validate -> emit_c
 *         -> jit -> execute and compare (harness/exec.c)
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

#include "backend/backend.h"
#include "backend/inputs.h"
#include "driver/args.h"
#include "driver/commands.h"
#include "frontend/files.h"
#include "harness/exec.h"
#include "transform/oracle.h"

enum { RUN_BARRIER_FREE, RUN_BARRIER, RUN_BOTH }; /* --sync, in sync_choices' order */
static const char *const sync_choices[] = {"barrier-free", "barrier", "both", NULL};
static const char *const exec_choices[] = {"threads", "sim", NULL}; /* BFRT_EXEC_* order */

typedef struct RunArgs {
  const char *file;
  ParamArgs params;
  int sync; /* RUN_* */
  int exec; /* BFRT_EXEC_* */
  uint64_t seed;
  NamedPaths inputs, outputs;
  bool json, jitter, check;
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
} ModeResult;

typedef struct Run {
  Instance in;
  Program *p;
  const RunArgs *args;
  RefTensor *results; /* the last mode's results, for --output */
  int64_t ideal;      /* sim: the oracle's ideal makespan; -1 until computed, -2 if it cannot be */
  int64_t ideal_sync; /* sim: the same, charging each dependence its semaphore latency and one wait */
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

/* A usage error found after parsing; exit status 2. */
static int usage_error(const char *fmt, const char *what) {
  fputs("bfsync: error: ", stderr);
  fprintf(stderr, fmt, what);
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
 * once, and that no two outputs (or an output and an input) share a file;
 * 0 or 2. */
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
  for (int i = 0; i < a->outputs.n; i++) {
    const NamedPath *out = &a->outputs.items[i];
    if (find_tensor(k, out->name) < 0) return usage_error("--output: kernel has no tensor '%s'", out->name);
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
  x->data = arr.data;
  return 0;
}

/* The seeded defaults, then every --input over them. */
static int make_inputs(Run *r) {
  const char *err;
  if (instance_inputs(&r->in, r->args->seed, &err)) {
    fprintf(stderr, "bfsync: error: %s\n", err);
    return 1;
  }
  const Kernel *k = r->p->kernel;
  for (int t = 0; t < k->ntensors; t++) {
    const NamedPath *in = input_for(r->args, k->tensors[t].name);
    if (in && read_input(r, t, in)) return 1;
  }
  return 0;
}

static int write_outputs(Run *r) {
  for (int i = 0; i < r->args->outputs.n; i++) {
    const NamedPath *o = &r->args->outputs.items[i];
    const RefTensor *x = &r->results[find_tensor(r->p->kernel, o->name)];
    NpyArray arr = {x->rows, x->cols, x->data};
    const char *err;
    if (npy_write(r->p->arena, o->path, &arr, &err)) {
      fprintf(stderr, "bfsync: error: %s\n", err);
      return 1;
    }
  }
  return 0;
}

/* ---- One sync mode. */

static int transform_mode(Run *r, SyncMode sync) {
  Program *p = r->p;
  const Mutation *m = &r->args->mutation;
  transform_sync(p, sync);
  if (p->diag.errors) return 1;
  if (m->index >= 0 && ir_mutate(p, m->kind, m->index) < 0) {
    fprintf(stderr, "bfsync: error: --mutate: wait %d does not exist (%d waits)\n", m->index,
            ir_mutate(p, m->kind, -1));
    return 2;
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

static int run_mode(Run *r, SyncMode sync, bool trace, ModeResult *res) {
  res->sync = sync;
  int status = transform_mode(r, sync);
  if (status) return status;
  const char *err;
  Jit *jit = jit_compile(r->p, emit_c_string(r->p), &err);
  if (!jit) {
    fprintf(stderr, "bfsync: error: %s\n", err);
    return 1;
  }
  RefTensor *results = instance_copy(&r->in, r->in.inputs);
  bfrt_options opt = run_options(r, trace);
  if (instance_execute(&r->in, jit_kernel(jit), &opt, results, &res->stats, &res->wall_ns, &err) ||
      instance_reference(&r->in, &err)) {
    fprintf(stderr, "bfsync: error: %s\n", err);
    jit_free(jit);
    return 1;
  }
  jit_free(jit);
  r->results = results;
  res->match = instance_compare(&r->in, results, arena_printf(r->p->arena, "bfsync: %s", sync_name(sync)), stderr,
                                &res->max_abs_err);
  return 0;
}

/* ---- Reports. */

static const char *exec_name(int exec) { return exec == BFRT_EXEC_SIM ? "sim" : "threads"; }

/* The ideal makespan under the simulator's costs, the same for every sync
 * mode; -2 when the oracle cannot walk the kernel. */
static int64_t ideal_cycles(Run *r) {
  if (r->ideal == -1) {
    Oracle *o = oracle_new(r->p, r->in.params);
    r->ideal = o ? oracle_ideal_cycles(o, &r->p->target->costs) : -2;
    r->ideal_sync = o ? oracle_ideal_sync_cycles(o, &r->p->target->costs) : -2;
  }
  return r->ideal;
}

static void print_json(Run *r, const ModeResult *res) {
  const Kernel *k = r->p->kernel;
  const bfrt_stats *s = &res->stats;
  printf("{\"kernel\": \"%s\", \"sync\": \"%s\", \"exec\": \"%s\", \"params\": {", k->name,
         sync_name(res->sync), exec_name(r->args->exec));
  for (int i = 0; i < k->nparams; i++)
    printf("%s\"%s\": %" PRId64, i ? ", " : "", k->params[i].name, r->in.params[i]);
  printf("}, \"wall_ns\": %" PRId64 ", \"waits_executed\": %" PRId64 ", \"outputs_match\": %s, ",
         res->wall_ns, s->waits, res->match ? "true" : "false");
  if (isfinite(res->max_abs_err))
    printf("\"max_abs_err\": %.9g, ", res->max_abs_err);
  else
    printf("\"max_abs_err\": null, ");
  printf("\"instructions\": %" PRId64 ", \"bookkeeping\": %" PRId64 ", \"barriers\": %" PRId64,
         s->instructions, s->bookkeeping, s->barriers);
  if (r->args->check) printf(", \"races\": %" PRId64, s->races);
  if (r->args->exec == BFRT_EXEC_SIM) {
    printf(", \"cycles\": %" PRId64 ", \"ns\": %.1f, \"ideal_cycles\": ", s->cycles,
           (double)s->cycles / r->p->target->costs.clock_ghz);
    if (ideal_cycles(r) >= 0) printf("%" PRId64 ", \"ideal_sync_cycles\": %" PRId64, ideal_cycles(r), r->ideal_sync);
    else printf("null, \"ideal_sync_cycles\": null");
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
  for (int i = 0; i < k->nparams; i++) printf("%s%s=%" PRId64, i ? ", " : "", k->params[i].name, r->in.params[i]);
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
  SyncMode modes[2] = {a->sync == RUN_BARRIER ? SYNC_BARRIER : a->sync == RUN_BOTH ? SYNC_BARRIER : SYNC_BARRIER_FREE,
                       SYNC_BARRIER_FREE};
  int nmodes = a->sync == RUN_BOTH ? 2 : 1;
  bool all_match = true;
  for (int m = 0; m < nmodes; m++) {
    ModeResult res = {0};
    int status = run_mode(r, modes[m], m == nmodes - 1, &res);
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
  int64_t *params = ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1);
  Run r = {{p, params, NULL, NULL}, p, a, NULL, -1, -1};
  if (param_args_bind(&a->params, p->kernel, params, stderr)) return 2;
  int status = check_tensor_args(p->kernel, a);
  if (status || (status = make_inputs(&r))) return status;
  return run_all(&r);
}

int cmd_run(int argc, char **argv) {
  RunArgs a = {.seed = 1, .mutation = {0, -1}};
  const ArgSpec specs[] = {
      {.name = "-p", .kind = ARG_PARAM, .dest = &a.params},
      {.name = "--param", .kind = ARG_PARAM, .dest = &a.params},
      {.name = "--sync", .kind = ARG_CHOICE, .dest = &a.sync, .choices = sync_choices},
      {.name = "--exec", .kind = ARG_CHOICE, .dest = &a.exec, .choices = exec_choices},
      {.name = "--seed", .kind = ARG_NUMBER, .dest = &a.seed, .max = UINT64_MAX},
      {.name = "--input", .kind = ARG_NAMED_PATH, .dest = &a.inputs},
      {.name = "--output", .kind = ARG_NAMED_PATH, .dest = &a.outputs},
      {.name = "--trace", .kind = ARG_STRING, .dest = &a.trace_path},
      {.name = "--target", .kind = ARG_STRING, .dest = &a.target_path},
      {.name = "--mutate", .kind = ARG_MUTATION, .dest = &a.mutation},
      {.name = "--json", .kind = ARG_FLAG, .dest = &a.json},
      {.name = "--jitter", .kind = ARG_FLAG, .dest = &a.jitter},
      {.name = "--check", .kind = ARG_FLAG, .dest = &a.check},
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"run", usage_text, specs, 1, 1, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  a.file = cl.nfiles ? cl.files[0] : NULL;
  Target *target = ARENA_NEW(arena, Target);
  if (status < 0 && a.target_path && target_load(a.target_path, arena, target, stderr)) status = 1;
  if (status < 0) {
    Program *p = program_load(a.file, a.target_path ? target : target_default(), stderr);
    status = p ? run_program(p, &a) : 1;
    program_free(p);
  }
  arena_free(arena);
  return status;
}

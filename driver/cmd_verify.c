/* cmd_verify.c: `bfsync verify`, the exactness oracle on one kernel.
 *
 *   parse -> check -> oracle walk -> transform -> ir_validate [-> ir_mutate]
 *         -> oracle check under K schedules -> summary | JSON
 *
 * The walk runs before the transform so that a run-time error of the kernel
 * itself (a division by zero, a slot out of range) is reported as the
 * user's, with its source line. The JSON keys are those of issue 3; tools
 * read them, so they do not change. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/inputs.h"
#include "driver/commands.h"
#include "driver/options.h"
#include "frontend/program.h"
#include "transform/oracle.h"

typedef struct VerifyArgs {
  const char *path;
  const char *target_path; /* NULL: the built-in trn1 */
  ParamArgs params;
  SyncMode sync;
  int schedules;
  uint64_t seed;
  bool json;
  int mutation;       /* IrMutation, or -1 for none */
  int mutation_index; /* which wait, in ir_mutate's order */
  const char *inputs[16]; /* --input NAME=X.npy for i32 tensors, as given */
  int ninputs;
} VerifyArgs;

static const char usage_text[] =
    "usage: bfsync verify FILE -p NAME=VALUE ... [--sync=barrier-free|barrier]\n"
    "                     [--schedules K] [--seed S] [--json] [--mutate=KIND:K]\n"
    "                     [--target FILE]\n"
    "\n"
    "Walks the kernel sequentially with the given parameters to find what every\n"
    "dynamic instruction needs from the other engines, then runs the transformed\n"
    "per-engine streams under K random interleavings (default 4) and checks by\n"
    "happens-before that no instruction can start too early, that no wait asks\n"
    "for more than its next instruction needs, and that nothing deadlocks.\n"
    "Exit status 1 on a race, a deadlock or (barrier-free only: the baseline's\n"
    "static thresholds are not exact by design) a late wait no fallback explains.\n"
    "\n"
    "  -p NAME=VALUE   a kernel parameter (repeat for each)\n"
    "  --sync=MODE     barrier-free (default) or barrier\n"
    "  --schedules K   number of random interleavings (at least 1)\n"
    "  --seed S        seed of the interleavings, and of the default values of\n"
    "                  i32 tensors (0 .. 4, as bfsync run makes them; default 1)\n"
    "  --input NAME=X.npy\n"
    "                  the values of i32 tensor NAME (int32 .npy; repeatable)\n"
    "  --target FILE   the machine whose engines the kernel names (default: the\n"
    "                  built-in trn1; see docs/targets.md)\n"
    "  --json          print one JSON object with the counts on the last line:\n"
    "                  kernel sync params instructions waits races early late\n"
    "                  late_explained redundant bookkeeping deadlocks, then subsumed\n"
    "                  mismatches schedules wait_nodes and the lists redundant_waits\n"
    "                  implied_waits unexecuted_waits fallback_waits (wait indices\n"
    "                  as --mutate counts them)\n"
    "  --mutate=KIND:K test only: break the K-th wait (engine by engine, in stream\n"
    "                  order) before checking; KIND is drop, lower (threshold - 1)\n"
    "                  or raise (threshold + 1). The oracle must catch it.\n";

static bool parse_count(const char *s, uint64_t max, uint64_t *out) {
  char *end;
  if (*s < '0' || *s > '9') return false;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  *out = v;
  return !errno && !*end && v <= max;
}

static int bad_value(const char *option, const char *value) {
  fprintf(stderr, "bfsync: error: bad value '%s' for %s\n", value, option);
  return 2;
}

/* --mutate=drop:K | lower:K | raise:K */
static bool parse_mutation(const char *s, VerifyArgs *a) {
  static const struct {
    const char *name;
    IrMutation kind;
  } kinds[] = {{"drop:", DROP_WAIT}, {"lower:", LOWER_THRESHOLD}, {"raise:", RAISE_THRESHOLD}};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    size_t len = strlen(kinds[i].name);
    uint64_t index;
    if (strncmp(s, kinds[i].name, len) || !parse_count(s + len, INT32_MAX, &index)) continue;
    a->mutation = (int)kinds[i].kind;
    a->mutation_index = (int)index;
    return true;
  }
  return false;
}

/* Returns -1 to go on, else the exit status (help printed, or a usage error). */
static int parse_args(int argc, char **argv, VerifyArgs *a) {
  *a = (VerifyArgs){.sync = SYNC_BARRIER_FREE, .schedules = 4, .seed = 1, .mutation = -1};
  for (int i = 1; i < argc; i++) {
    bool missing = false;
    const char *v;
    uint64_t n;
    SyncMode modes[2];
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage_text, stdout);
      return 0;
    } else if (!strcmp(argv[i], "--json")) {
      a->json = true;
    } else if ((v = option_value(argc, argv, &i, "-p", &missing)) ||
               (v = option_value(argc, argv, &i, "--param", &missing))) {
      if (param_args_add(&a->params, v, stderr)) return 2;
    } else if ((v = option_value(argc, argv, &i, "--sync", &missing))) {
      if (parse_sync(v, 0, modes, stderr) < 0) return 2;
      a->sync = modes[0];
    } else if ((v = option_value(argc, argv, &i, "--schedules", &missing))) {
      if (!parse_count(v, 1000000, &n) || n == 0) return bad_value("--schedules", v);
      a->schedules = (int)n;
    } else if ((v = option_value(argc, argv, &i, "--seed", &missing))) {
      if (!parse_count(v, UINT64_MAX, &n)) return bad_value("--seed", v);
      a->seed = n;
    } else if ((v = option_value(argc, argv, &i, "--target", &missing))) {
      a->target_path = v;
    } else if ((v = option_value(argc, argv, &i, "--input", &missing))) {
      if (!strchr(v, '=') || a->ninputs == (int)(sizeof a->inputs / sizeof a->inputs[0]))
        return bad_value("--input", v);
      a->inputs[a->ninputs++] = v;
    } else if ((v = option_value(argc, argv, &i, "--mutate", &missing))) {
      if (!parse_mutation(v, a)) return bad_value("--mutate", v);
    } else if (missing) {
      fprintf(stderr, "bfsync: error: %s needs a value\n", argv[i]);
      return 2;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "bfsync: error: unknown option '%s' (see bfsync verify --help)\n", argv[i]);
      return 2;
    } else if (a->path) {
      fprintf(stderr, "bfsync: error: verify takes one FILE\n");
      return 2;
    } else {
      a->path = argv[i];
    }
  }
  if (!a->path) {
    fputs(usage_text, stderr);
    return 2;
  }
  return -1;
}

static void print_json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(out, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(out, "\\u%04x", ch);
    else
      fputc(ch, out);
  }
  fputc('"', out);
}

typedef enum WaitClass { ALL_REDUNDANT, ALL_IMPLIED, UNEXECUTED, FALLBACK } WaitClass;

/* Wait nodes (in ir_mutate's order) of a class: every execution redundant;
 * every execution redundant or subsumed; never executed (dropping any of
 * those cannot create a race: the mutation tests call them equivalent);
 * conservative by the transform's own account (its WaitWhy names a
 * fallback), which may guard nothing the exact dependences need. */
static void print_wait_list(FILE *out, const char *key, const OracleStats *st, WaitClass class) {
  fprintf(out, ", \"%s\": [", key);
  const char *sep = "";
  for (int i = 0; i < st->nwait_nodes; i++) {
    int64_t runs = st->wait_executed[i], redundant = st->wait_redundant[i];
    const WaitWhy *why = st->wait_node[i]->why;
    bool member = class == UNEXECUTED      ? runs == 0
                  : class == ALL_REDUNDANT ? runs > 0 && redundant == runs
                  : class == ALL_IMPLIED   ? runs > 0 && redundant + st->wait_subsumed[i] == runs
                                           : why && why->fallback;
    if (member) {
      fprintf(out, "%s%d", sep, i);
      sep = ", ";
    }
  }
  fputc(']', out);
}

static void print_json(FILE *out, const Program *p, const VerifyArgs *a, const int64_t *params,
                       const OracleStats *st) {
  const Kernel *k = p->kernel;
  fputs("{\"kernel\": ", out);
  print_json_string(out, k->name);
  fprintf(out, ", \"sync\": \"%s\", \"params\": {", sync_name(a->sync));
  for (int i = 0; i < k->nparams; i++) {
    fputs(i ? ", " : "", out);
    print_json_string(out, k->params[i].name);
    fprintf(out, ": %lld", (long long)params[i]);
  }
  fputc('}', out);
  device_ints_json(p, out);
  fprintf(out,
          ", \"instructions\": %lld, \"waits\": %lld, \"races\": %lld, \"early\": %lld, "
          "\"late\": %lld, \"late_explained\": %lld, \"redundant\": %lld, \"bookkeeping\": %lld, "
          "\"deadlocks\": %lld, \"subsumed\": %lld, \"mismatches\": %lld, \"schedules\": %d, "
          "\"wait_nodes\": %d",
          (long long)st->instructions, (long long)st->waits, (long long)st->races,
          (long long)st->early, (long long)st->late, (long long)st->late_explained,
          (long long)st->redundant, (long long)st->bookkeeping, (long long)st->deadlocks,
          (long long)st->subsumed, (long long)st->mismatches, st->schedules, st->nwait_nodes);
  print_wait_list(out, "redundant_waits", st, ALL_REDUNDANT);
  print_wait_list(out, "implied_waits", st, ALL_IMPLIED);
  print_wait_list(out, "unexecuted_waits", st, UNEXECUTED);
  print_wait_list(out, "fallback_waits", st, FALLBACK);
  fputs("}\n", out);
}

static void print_summary(FILE *out, const Program *p, const VerifyArgs *a, const int64_t *params,
                          const OracleStats *st) {
  const Kernel *k = p->kernel;
  fprintf(out, "verify %s (%s", k->name, sync_name(a->sync));
  for (int i = 0; i < k->nparams; i++)
    fprintf(out, "%s%s=%lld", i ? " " : ", ", k->params[i].name, (long long)params[i]);
  fprintf(out, "): %s\n", oracle_failed(st) ? "FAILED" : "ok");
  fprintf(out, "  instructions %lld, waits %lld, bookkeeping %lld\n", (long long)st->instructions,
          (long long)st->waits, (long long)st->bookkeeping);
  fprintf(out, "  races %lld, early %lld, late %lld (+%lld explained by a fallback), deadlocks %lld\n",
          (long long)st->races, (long long)st->early, (long long)st->late,
          (long long)st->late_explained, (long long)st->deadlocks);
  fprintf(out, "  redundant %lld, subsumed by another wait before the same instruction %lld\n",
          (long long)st->redundant, (long long)st->subsumed);
  if (st->mismatches) fprintf(out, "  stream mismatches %lld (a transform bug)\n", (long long)st->mismatches);
  fprintf(out, "  %d schedule%s\n", st->schedules, st->schedules == 1 ? "" : "s");
}

/* The i32 tensors' values: --input, else bfsync run's defaults for --seed;
 * bound for the oracle. 0, or an exit status. */
static int device_values(Program *p, const VerifyArgs *a, const int64_t *params) {
  const Kernel *k = p->kernel;
  RefTensor *tensors = ARENA_ARRAY(p->arena, RefTensor, k->ntensors + 1);
  const char *err;
  if (reference_shapes(p, params, tensors, &err)) {
    fprintf(stderr, "bfsync: error: %s\n", err);
    return 1;
  }
  for (int i = 0; i < a->ninputs; i++) {
    const char *eq = strchr(a->inputs[i], '=');
    int t = 0;
    while (t < k->ntensors && (strlen(k->tensors[t].name) != (size_t)(eq - a->inputs[i]) ||
                               strncmp(k->tensors[t].name, a->inputs[i], (size_t)(eq - a->inputs[i]))))
      t++;
    if (t == k->ntensors || !k->tensors[t].ints) {
      fprintf(stderr, "bfsync: error: --input %s: verify takes values for i32 tensors only\n", a->inputs[i]);
      return 2;
    }
    NpyArray arr;
    if (npy_read(p->arena, eq + 1, &arr, &err)) {
      fprintf(stderr, "bfsync: error: %s\n", err);
      return 1;
    }
    if (!arr.ints || arr.rows != tensors[t].rows || arr.cols != tensors[t].cols) {
      fprintf(stderr, "bfsync: error: %s: tensor %s needs int32 ('<i4') of shape (%lld, %lld)\n", eq + 1,
              k->tensors[t].name, (long long)tensors[t].rows, (long long)tensors[t].cols);
      return 1;
    }
    tensors[t].data = arr.data;
  }
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].ints && !tensors[t].data) {
      tensors[t].data = ARENA_ARRAY(p->arena, float, tensors[t].rows * tensors[t].cols + 1);
      bf_default_ints(tensors[t].data, tensors[t].rows * tensors[t].cols, a->seed, t);
    }
  device_ints_bind(p, tensors);
  return 0;
}

static int verify(Program *p, const VerifyArgs *a) {
  parse(p);
  if (p->diag.errors) return 1;
  check(p);
  if (p->diag.errors) return 1;
  int64_t *params = ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1);
  if (param_args_bind(&a->params, p->kernel, params, stderr)) return 2;
  int status = device_values(p, a, params);
  if (status) return status;
  Oracle *o = oracle_new(p, params);
  if (!o) return 1;
  transform_sync(p, a->sync);
  if (p->diag.errors) return 1;
  ir_validate(p);
  if (a->mutation >= 0 && ir_mutate(p, a->mutation, a->mutation_index) < 0) {
    fprintf(stderr, "bfsync: error: --mutate: the streams have no wait %d\n", a->mutation_index);
    return 2;
  }
  OracleStats st;
  oracle_check(o, a->schedules, a->seed, stderr, &st);
  if (a->json)
    print_json(stdout, p, a, params, &st);
  else
    print_summary(stdout, p, a, params, &st);
  return oracle_failed(&st) || p->diag.errors ? 1 : 0;
}

int cmd_verify(int argc, char **argv) {
  VerifyArgs a;
  int status = parse_args(argc, argv, &a);
  if (status >= 0) return status;
  Arena *target_arena = arena_new();
  Target *target = ARENA_NEW(target_arena, Target);
  Program *p = NULL;
  if (!a.target_path || !target_load(a.target_path, target_arena, target, stderr))
    p = program_load(a.path, a.target_path ? target : target_default(), stderr);
  status = p ? verify(p, &a) : 1;
  program_free(p);
  arena_free(target_arena);
  return status;
}

/* cmd_verify.c: `bfsync verify`, the exactness oracle on one kernel.
 *
 *   parse -> check -> (per parameter set: -p, else the first `// params:`
 *   line, or each with --all-params, as run chooses) oracle walk ->
 *   transform -> ir_validate [-> ir_mutate] -> oracle check under K
 *   schedules -> summary | JSON
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
#include "driver/args.h"
#include "driver/commands.h"
#include "driver/diagnostics.h"
#include "harness/proof_check.h"
#include "frontend/program.h"
#include "transform/oracle.h"
#include "transform/sync.h"

typedef struct VerifyArgs {
  const char *path;
  const char *target_path; /* NULL: the built-in trn1 */
  ParamArgs params;
  int sync; /* SyncMode, in sync_choices' order */
  uint64_t schedules, seed, max_steps;
  bool json, all_params;
  Mutation mutation;
  NamedPaths inputs; /* values of i32 tensors */
} VerifyArgs;

static const char usage_text[] =
    "usage: bfsync verify FILE [-p NAME=VALUE ... | --all-params] [--sync=MODE]\n"
    "                     [--schedules K] [--seed S] [--json] [--mutate=KIND:K]\n"
    "                     [--target FILE] [--max-steps N]\n"
    "\n"
    "Walks the kernel sequentially with the given parameters to find what every\n"
    "dynamic instruction needs from the other engines, then runs the transformed\n"
    "per-engine streams under K random interleavings (default 4) and checks by\n"
    "happens-before that no instruction can start too early, that no wait asks\n"
    "for more than its next instruction needs, and that nothing deadlocks.\n"
    "Exit status 1 on a race, a deadlock or (barrier-free and unrolled only: the\n"
    "barrier and paper baselines' thresholds are not exact by design) a late\n"
    "wait no fallback explains.\n"
    "Barrier-free, it also runs the proof's extracted validator on the emitted C\n"
    "(build/proof/bfcheck, from make proof; docs/proof.md): exit status 1 when it\n"
    "rejects a wait; without the checker it says so.\n"
    "\n"
    "  -p NAME=VALUE   a kernel parameter (repeat for each); without any, the\n"
    "                  first `// params:` line of the file, as bfsync run takes it\n"
    "  --all-params    verify at every `// params:` line in turn (exit status:\n"
    "                  the worst)\n"
    "  --sync=MODE     barrier-free (default), barrier, unrolled or paper\n"
    "  --schedules K   number of random interleavings (at least 1)\n"
    "  --seed S        seed of the interleavings, and of the default values of\n"
    "                  i32 tensors (0 .. 4, as bfsync run makes them; default 1)\n"
    "  --input NAME=X.npy\n"
    "                  the values of i32 tensor NAME (int32 .npy; repeatable)\n"
    "  --max-steps N   stop with an error after N steps (instructions and loop\n"
    "                  iterations) of the sequential walk (default 10^8)\n"
    "  --target FILE   the machine whose engines the kernel names (default: the\n"
    "                  built-in trn1; see docs/targets.md)\n"
    "  --json          print one JSON object with the counts on the last line:\n"
    "                  kernel sync params instructions waits races early late\n"
    "                  late_explained redundant bookkeeping deadlocks, then subsumed\n"
    "                  mismatches schedules wait_nodes and the lists redundant_waits\n"
    "                  implied_waits unexecuted_waits fallback_waits (wait indices\n"
    "                  as --mutate counts them), then validator (exact, rejected,\n"
    "                  error, unavailable, skipped or not-applicable),\n"
    "                  validator_waits and validator_detail\n"
    "  --mutate=KIND:K test only: break the K-th wait (engine by engine, in stream\n"
    "                  order) before checking; KIND is drop, lower (threshold - 1)\n"
    "                  or raise (threshold + 1). The oracle must catch it.\n"
    DIAGNOSTICS_FORMAT_HELP;

/* The validator's verdict fails the run when it rejects or cannot read the
 * emitted code; a checker not built is reported, not failed. */
static bool proof_failed(const ProofVerdict *pv) {
  return pv->status == PROOF_REJECTED || pv->status == PROOF_ERROR;
}

typedef enum WaitClass { ALL_REDUNDANT, ALL_IMPLIED, UNEXECUTED, FALLBACK } WaitClass;

/* Wait nodes (in ir_mutate's order) of a class: every execution redundant;
 * every execution redundant or subsumed; never executed (dropping any of
 * those cannot create a race: the mutation tests call them equivalent);
 * conservative by the transform's own account (its WaitWhy names a
 * fallback), which may guard nothing the exact dependences need. */
static void print_wait_list(JsonWriter *w, const char *key, const OracleStats *st, WaitClass class) {
  jw_key(w, key);
  jw_array(w);
  for (int i = 0; i < st->nwait_nodes; i++) {
    int64_t runs = st->wait_executed[i], redundant = st->wait_redundant[i];
    const WaitWhy *why = st->wait_node[i]->why;
    bool member = class == UNEXECUTED      ? runs == 0
                  : class == ALL_REDUNDANT ? runs > 0 && redundant == runs
                  : class == ALL_IMPLIED   ? runs > 0 && redundant + st->wait_subsumed[i] == runs
                                           : why && why->fallback;
    if (member) jw_int(w, i);
  }
  jw_close(w);
}

static void print_json(FILE *out, const Program *p, const VerifyArgs *a, const int64_t *params,
                       const OracleStats *st, const ProofVerdict *pv) {
  const Kernel *k = p->kernel;
  JsonWriter w;
  jw_init(&w, out, false);
  jw_object(&w);
  jw_key_string(&w, "kernel", k->name);
  jw_key_string(&w, "sync", sync_name(a->sync));
  jw_key(&w, "params");
  jw_object(&w);
  for (int i = 0; i < k->nparams; i++) jw_key_int(&w, k->params[i].name, params[i]);
  jw_close(&w);
  device_ints_json(p, &w);
  const struct {
    const char *key;
    int64_t value;
  } counts[] = {
      {"instructions", st->instructions}, {"waits", st->waits},
      {"races", st->races},               {"early", st->early},
      {"late", st->late},                 {"late_explained", st->late_explained},
      {"redundant", st->redundant},       {"bookkeeping", st->bookkeeping},
      {"deadlocks", st->deadlocks},       {"subsumed", st->subsumed},
      {"mismatches", st->mismatches},     {"schedules", st->schedules},
      {"wait_nodes", st->nwait_nodes},    {"window", st->window},
      {"counter_bits", p->target->counter_bits}, {"backpressure_pairs", st->backpressure_pairs},
      {"backpressure_held", st->held},
  };
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) jw_key_int(&w, counts[i].key, counts[i].value);
  print_wait_list(&w, "redundant_waits", st, ALL_REDUNDANT);
  print_wait_list(&w, "implied_waits", st, ALL_IMPLIED);
  print_wait_list(&w, "unexecuted_waits", st, UNEXECUTED);
  print_wait_list(&w, "fallback_waits", st, FALLBACK);
  jw_key_string(&w, "validator", proof_status_name(pv->status));
  jw_key_int(&w, "validator_waits", pv->waits);
  jw_key_string(&w, "validator_detail", pv->detail);
  jw_close(&w);
  fputc('\n', out);
}

static void print_summary(FILE *out, const Program *p, const VerifyArgs *a, const int64_t *params,
                          const OracleStats *st, const ProofVerdict *pv) {
  const Kernel *k = p->kernel;
  fprintf(out, "verify %s (%s", k->name, sync_name(a->sync));
  for (int i = 0; i < k->nparams; i++)
    fprintf(out, "%s%s=%lld", i ? " " : ", ", k->params[i].name, (long long)params[i]);
  fprintf(out, "): %s\n", oracle_failed(st) || proof_failed(pv) ? "FAILED" : "ok");
  fprintf(out, "  instructions %lld, waits %lld, bookkeeping %lld\n", (long long)st->instructions,
          (long long)st->waits, (long long)st->bookkeeping);
  fprintf(out, "  races %lld, early %lld, late %lld (+%lld explained by a fallback), deadlocks %lld\n",
          (long long)st->races, (long long)st->early, (long long)st->late,
          (long long)st->late_explained, (long long)st->deadlocks);
  fprintf(out, "  redundant %lld, subsumed by another wait before the same instruction %lld\n",
          (long long)st->redundant, (long long)st->subsumed);
  if (st->window)
    fprintf(out, "  counter window broken by %lld reads (%d-bit counters)\n", (long long)st->window,
            p->target->counter_bits);
  if (st->held)
    fprintf(out, "  back-pressure held %lld ops (%lld consumer-producer pairs checked, %d-bit counters)\n",
            (long long)st->held, (long long)st->backpressure_pairs, p->target->counter_bits);
  if (st->mismatches) fprintf(out, "  stream mismatches %lld (a transform bug)\n", (long long)st->mismatches);
  fprintf(out, "  %d schedule%s\n", st->schedules, st->schedules == 1 ? "" : "s");
  if (pv->status == PROOF_ACCEPTED)
    fprintf(out, "  proof validator: exact, %lld emitted waits validated (docs/proof.md)\n", (long long)pv->waits);
  else if (pv->status != PROOF_NOT_APPLICABLE)
    fprintf(out, "  proof validator: %s: %s\n", proof_status_name(pv->status), pv->detail);
}

/* One parameter set: given (line NULL) or a `// params:` line. */
static int verify_params(Program *p, const Directive *line, const void *args) {
  const VerifyArgs *a = args;
  int64_t *params = ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1);
  int status = params_bind(p, &a->params, line, params);
  if (status) return status;
  status = device_inputs_bind(p, params, &a->inputs, a->seed, "verify", NULL);
  if (status) return status;
  Oracle *o = oracle_new(p, params);
  if (!o) return 1;
  p->params = params;
  transform_sync(p, a->sync);
  if (p->diag.errors) return 1;
  ir_validate(p);
  if (a->mutation.index >= 0 && ir_mutate(p, a->mutation.kind, a->mutation.index) < 0) {
    error_print(stderr, "--mutate: the streams have no wait %d\n", a->mutation.index);
    return 2;
  }
  OracleStats st;
  oracle_check(o, (int)a->schedules, a->seed, stderr, &st);
  ProofVerdict pv = {.status = PROOF_NOT_APPLICABLE, .waits = -1};
  if (a->sync == SYNC_BARRIER_FREE) proof_check(p, params, st.instructions, &pv);
  if (a->json)
    print_json(stdout, p, a, params, &st, &pv);
  else
    print_summary(stdout, p, a, params, &st, &pv);
  return oracle_failed(&st) || proof_failed(&pv) || p->diag.errors ? 1 : 0;
}

/* The parameters given, else the first `// params:` line, or every line
 * with --all-params (the worst status kept), as bfsync run chooses. */
static int verify(Program *p, const void *args) {
  const VerifyArgs *a = args;
  p->max_steps = (int64_t)a->max_steps;
  parse(p);
  if (p->diag.errors) return 1;
  check(p);
  if (p->diag.errors) return 1;
  return params_each(p, &a->params, a->all_params, "verify", verify_params, a);
}

int cmd_verify(int argc, char **argv) {
  VerifyArgs a = {.sync = SYNC_BARRIER_FREE, .schedules = 4, .seed = 1, .max_steps = DEFAULT_MAX_STEPS,
                  .mutation = {0, -1}};
  DiagOutput dout = {0};
  const ArgSpec specs[] = {
      {.name = "-p", .kind = ARG_PARAM, .dest = &a.params},
      {.name = "--param", .kind = ARG_PARAM, .dest = &a.params},
      {.name = "--sync", .kind = ARG_CHOICE, .dest = &a.sync, .choices = sync_choices},
      {.name = "--schedules", .kind = ARG_NUMBER, .dest = &a.schedules, .min = 1, .max = 1000000},
      {.name = "--seed", .kind = ARG_NUMBER, .dest = &a.seed, .max = UINT64_MAX},
      {.name = "--max-steps", .kind = ARG_NUMBER, .dest = &a.max_steps, .min = 1, .max = INT64_MAX},
      {.name = "--target", .kind = ARG_STRING, .dest = &a.target_path},
      {.name = "--mutate", .kind = ARG_MUTATION, .dest = &a.mutation},
      {.name = "--json", .kind = ARG_FLAG, .dest = &a.json},
      {.name = "--all-params", .kind = ARG_FLAG, .dest = &a.all_params},
      {.name = "--input", .kind = ARG_NAMED_PATH, .dest = &a.inputs},
      ARG_DIAGNOSTICS_FORMAT(&dout.format),
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"verify", usage_text, specs, 1, 1, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  a.path = cl.nfiles ? cl.files[0] : NULL;
  if (status < 0 && a.all_params && a.params.n) status = args_error(&cl, "--all-params verifies the file's parameters: give no others");
  status = diag_output_run(&dout, status, a.path, a.target_path, arena, verify, &a);
  arena_free(arena);
  return status;
}

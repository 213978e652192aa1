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

#include "driver/args.h"
#include "harness/exec.h"
#include "driver/commands.h"
#include "driver/proof_check.h"
#include "frontend/program.h"
#include "transform/oracle.h"
#include "transform/sync.h"

typedef struct VerifyArgs {
  const char *path;
  const char *target_path; /* NULL: the built-in trn1 */
  ParamArgs params;
  int sync; /* SyncMode, in sync_choices' order */
  uint64_t schedules, seed, max_steps;
  bool json;
  Mutation mutation;
  NamedPaths inputs; /* values of i32 tensors */
} VerifyArgs;

static const char *const sync_choices[] = {"barrier-free", "barrier", NULL}; /* SyncMode order */

static const char usage_text[] =
    "usage: bfsync verify FILE -p NAME=VALUE ... [--sync=barrier-free|barrier]\n"
    "                     [--schedules K] [--seed S] [--json] [--mutate=KIND:K]\n"
    "                     [--target FILE] [--max-steps N]\n"
    "\n"
    "Walks the kernel sequentially with the given parameters to find what every\n"
    "dynamic instruction needs from the other engines, then runs the transformed\n"
    "per-engine streams under K random interleavings (default 4) and checks by\n"
    "happens-before that no instruction can start too early, that no wait asks\n"
    "for more than its next instruction needs, and that nothing deadlocks.\n"
    "Exit status 1 on a race, a deadlock or (barrier-free only: the baseline's\n"
    "static thresholds are not exact by design) a late wait no fallback explains.\n"
    "Barrier-free, it also runs the proof's extracted validator on the emitted C\n"
    "(build/proof/bfcheck, from make proof; docs/proof.md): exit status 1 when it\n"
    "rejects a wait; without the checker it says so.\n"
    "\n"
    "  -p NAME=VALUE   a kernel parameter (repeat for each)\n"
    "  --sync=MODE     barrier-free (default) or barrier\n"
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
    "                  or raise (threshold + 1). The oracle must catch it.\n";

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
                       const OracleStats *st, const ProofVerdict *pv) {
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
  fprintf(out, ", \"window\": %lld, \"counter_bits\": %d, \"backpressure_pairs\": %lld, \"backpressure_held\": %lld",
          (long long)st->window, p->target->counter_bits, (long long)st->backpressure_pairs, (long long)st->held);
  print_wait_list(out, "redundant_waits", st, ALL_REDUNDANT);
  print_wait_list(out, "implied_waits", st, ALL_IMPLIED);
  print_wait_list(out, "unexecuted_waits", st, UNEXECUTED);
  print_wait_list(out, "fallback_waits", st, FALLBACK);
  fprintf(out, ", \"validator\": \"%s\", \"validator_waits\": %lld, \"validator_detail\": ",
          proof_status_name(pv->status), (long long)pv->waits);
  print_json_string(out, pv->detail);
  fputs("}\n", out);
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

/* The i32 tensors' values, bound for the oracle: bfsync run's defaults for
 * --seed, or --input. 0, or an exit status. */
static int device_values(Program *p, const VerifyArgs *a, const int64_t *params) {
  const Kernel *k = p->kernel;
  Instance in = {p, params, NULL, NULL};
  const char *err;
  if (instance_inputs(&in, a->seed, &err)) {
    fprintf(stderr, "bfsync: error: %s\n", err);
    return 1;
  }
  for (int i = 0; i < a->inputs.n; i++) {
    const NamedPath *np = &a->inputs.items[i];
    int t = 0;
    while (t < k->ntensors && strcmp(k->tensors[t].name, np->name)) t++;
    if (t == k->ntensors || !k->tensors[t].ints) {
      fprintf(stderr, "bfsync: error: --input: '%s' is not an i32 tensor; verify takes values for i32 tensors only\n",
              np->name);
      return 2;
    }
    NpyArray into = {in.inputs[t].rows, in.inputs[t].cols, in.inputs[t].data, ELEM_I32};
    if (npy_read(p->arena, np->path, np->name, &into, &err)) {
      fprintf(stderr, "bfsync: error: %s\n", err);
      return 1;
    }
  }
  return 0;
}

static int verify(Program *p, const VerifyArgs *a) {
  p->max_steps = (int64_t)a->max_steps;
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
  if (a->mutation.index >= 0 && ir_mutate(p, a->mutation.kind, a->mutation.index) < 0) {
    fprintf(stderr, "bfsync: error: --mutate: the streams have no wait %d\n", a->mutation.index);
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

int cmd_verify(int argc, char **argv) {
  VerifyArgs a = {.sync = SYNC_BARRIER_FREE, .schedules = 4, .seed = 1, .max_steps = DEFAULT_MAX_STEPS,
                  .mutation = {0, -1}};
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
      {.name = "--input", .kind = ARG_NAMED_PATH, .dest = &a.inputs},
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"verify", usage_text, specs, 1, 1, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  a.path = cl.nfiles ? cl.files[0] : NULL;
  Target *target = ARENA_NEW(arena, Target);
  if (status < 0 && a.target_path && target_load(a.target_path, arena, target, stderr)) status = 1;
  if (status < 0) {
    Program *p = program_load(a.path, a.target_path ? target : target_default(), stderr);
    if (p && !a.target_path && program_use_target_line(p, stderr)) status = 1;
    else status = p ? verify(p, &a) : 1;
    program_free(p);
  }
  arena_free(arena);
  return status;
}

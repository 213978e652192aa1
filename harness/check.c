/* check.c: the per-kernel differential check (see check.h). Runs go
 * through the one execute-and-compare path (harness/exec.c) that
 * `bfsync run` uses; this file adds what only a campaign does: the oracle
 * on every kernel, the proof's validator on its barrier-free C (the path
 * `bfsync verify` takes), the race checker on every threads run, both
 * executors and the gcc step, and a record of the first failure. */
#include "harness/check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/inputs.h"
#include "harness/params.h"
#include "harness/proof_check.h"
#include "transform/oracle.h"
#include "transform/sync.h"

void add_counts(Counts *to, const Counts *c) {
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
  to->oracle_held += c->oracle_held;
  to->thread_held += c->thread_held;
  to->sim_held += c->sim_held;
  to->f64_checks += c->f64_checks;
  to->late_fallback += c->late_fallback;
  to->validator_checks += c->validator_checks;
  to->validator_failures += c->validator_failures;
  to->validator_skips += c->validator_skips;
}

void outcome_fail(Outcome *out, const char *stage, const char *fmt, ...) {
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

typedef struct KernelCheck {
  const Config *cfg;
  Instance in;
  uint64_t seed; /* of the inputs, the jitter and the schedules */
  Outcome *out;
} KernelCheck;

/* Compare results with the reference, bit for bit, then with the f64
 * reference within its bounds; the first difference fails stage, an
 * element over its bound fails "f64". */
static int compare(KernelCheck *k, const RefTensor *results, const char *stage, const char *what) {
  char *text = NULL;
  size_t len = 0;
  FILE *report = open_memstream(&text, &len);
  bool match = instance_compare(&k->in, results, what, report, NULL);
  if (!match) outcome_fail(k->out, stage, "%s", first_line(report, &text));
  fclose(report);
  free(text);
  if (!match) return -1;
  ExactErrors errors;
  const char *off;
  k->out->counts.f64_checks++;
  if (instance_compare_f64(&k->in, results, arena_printf(k->in.p->arena, "%s %s", stage, what), &errors, &off))
    return 0;
  outcome_fail(k->out, "f64", "%s", off);
  return -1;
}

/* Run under opt and compare; 0, or -1 (failed, recorded). */
static int execute(KernelCheck *k, const bfrt_kernel *bk, const bfrt_options *opt, const char *stage,
                   const char *what, bfrt_stats *stats) {
  RefTensor *results = instance_copy(&k->in, k->in.inputs);
  const char *err;
  int64_t wall_ns;
  if (instance_execute(&k->in, bk, opt, results, stats, &wall_ns, &err)) {
    outcome_fail(k->out, stage, "%s: %s", what, err);
    return -1;
  }
  return compare(k, results, stage, what);
}

static int run_threads(KernelCheck *k, const bfrt_kernel *bk, SyncMode sync) {
  bfrt_options opt = {.exec = BFRT_EXEC_THREADS, .costs = &k->in.p->target->costs, .check = 1};
  opt.jitter_seed = k->cfg->jitter ? splitmix64(k->seed) | 1 : 0;
  bfrt_stats stats;
  if (execute(k, bk, &opt, "run", sync_name(sync), &stats)) return -1;
  k->out->counts.thread_runs++;
  k->out->counts.thread_waits += stats.waits;
  k->out->counts.thread_held += stats.held;
  if (stats.races) {
    outcome_fail(k->out, "race-check", "%s: the runtime's race checker found %" PRId64 " races", sync_name(sync),
                 stats.races);
    return -1;
  }
  return 0;
}

/* Cycles on the simulator, or -1 (failed). */
static int64_t run_sim(KernelCheck *k, const bfrt_kernel *bk, SyncMode sync) {
  bfrt_options opt = {.exec = BFRT_EXEC_SIM, .costs = &k->in.p->target->costs};
  bfrt_stats stats;
  if (execute(k, bk, &opt, "sim", sync_name(sync), &stats)) return -1;
  k->out->counts.sim_runs++;
  k->out->counts.sim_held += stats.held;
  return stats.cycles;
}

static int run_gcc(KernelCheck *k, const char *c_source, SyncMode sync) {
  RefTensor *results = instance_copy(&k->in, k->in.inputs);
  char msg[sizeof k->out->message - 32];
  if (gcc_run(k->cfg->gcc, &k->in, c_source, k->seed, results, msg, sizeof msg)) {
    outcome_fail(k->out, "gcc", "%s: %s", sync_name(sync), msg);
    return -1;
  }
  k->out->counts.gcc_runs++;
  return compare(k, results, "gcc", sync_name(sync));
}

/* Whether a fallback is one a generated kernel meets by design
 * (transform/barrier_free.c): ragged regions, what a clipped slice
 * touches being known only at run time, and strided ones, no rectangle
 * of cells (a tensor or a tile with them is tracked as a whole or per
 * slot). */
static bool accepted_fallback(const char *why) { return !strncmp(why, "ragged ", 7) || strstr(why, " has steps"); }

static int oracle_mode(KernelCheck *k, Oracle *o, SyncMode sync) {
  const Program *p = k->in.p;
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
  c->oracle_held += st.held;
  if (sync == SYNC_BARRIER_FREE) c->redundant += st.redundant;
  /* A generated kernel's hbm tiles (three shapes of side 1 or 4) are
   * tracked per cell, never as a whole, unless a ragged or strided slice
   * makes the transform track its tensor as a whole (a ragged tile over
   * the clipped dimension, a strided one per slot): late waits explained
   * by those fallbacks are accepted and counted, any other explained one
   * fails. */
  bool accepted = !ir_fallback(p->ir, accepted_fallback);
  int failed = oracle_failed(&st) || (sync == SYNC_BARRIER_FREE && st.late_explained > 0 && !accepted);
  if (sync == SYNC_BARRIER_FREE && !failed) c->late_fallback += st.late_explained;
  if (failed)
    outcome_fail(k->out, "oracle",
                 "%s: races %" PRId64 ", late %" PRId64 " (explained by a fallback %" PRId64 "), deadlocks %" PRId64
                 ", mismatches %" PRId64 ": %s",
                 sync_name(sync), st.races, st.late, st.late_explained, st.deadlocks, st.mismatches,
                 first_line(log, &log_text));
  fclose(log);
  free(log_text);
  return failed ? -1 : 0;
}

/* The proof's extracted validator on the barrier-free C, as `bfsync
 * verify` runs it (harness/proof_check.c): counted when the checker is
 * built, a failure when it rejects the waits or cannot read the code. */
static int validate_mode(KernelCheck *k, int64_t instances) {
  ProofVerdict pv;
  proof_check(k->in.p, k->in.params, instances, &pv);
  Counts *c = &k->out->counts;
  if (pv.status == PROOF_SKIPPED) c->validator_skips++;
  if (pv.status != PROOF_ACCEPTED && pv.status != PROOF_REJECTED && pv.status != PROOF_ERROR) return 0;
  c->validator_checks++;
  if (pv.status == PROOF_ACCEPTED) return 0;
  c->validator_failures++;
  outcome_fail(k->out, "validator", "%s: %s", proof_status_name(pv.status), pv.detail);
  return -1;
}

/* Transform, judge, run; the simulator's cycles (or -1) in *cycles. */
static int check_mode(KernelCheck *k, Oracle *o, SyncMode sync, int gcc_mode, int64_t *cycles) {
  Program *p = k->in.p;
  *cycles = -1;
  transform_sync(p, sync);
  if (p->diag.errors) {
    outcome_fail(k->out, "transform", "%s: the transform reported an error", sync_name(sync));
    return -1;
  }
  if (sync == SYNC_BARRIER_FREE && k->cfg->mutate_index >= 0)
    ir_mutate(p, k->cfg->mutate_kind, k->cfg->mutate_index); /* no such wait: unchanged */
  ir_validate(p);
  int64_t before = k->out->counts.instructions;
  if (oracle_mode(k, o, sync)) return -1;
  if (sync == SYNC_BARRIER_FREE && validate_mode(k, k->out->counts.instructions - before)) return -1;
  const char *c_source = emit_c_string(p);
  const char *err;
  Jit *jit = jit_compile(p, c_source, &err);
  if (!jit) {
    outcome_fail(k->out, "jit", "%s", err);
    return -1;
  }
  if (!run_threads(k, jit_kernel(jit), sync)) *cycles = run_sim(k, jit_kernel(jit), sync);
  jit_free(jit);
  if (k->out->stage[0]) return -1;
  if ((int)sync == gcc_mode && k->cfg->gcc) return run_gcc(k, c_source, sync);
  return 0;
}

/* Barrier-free against the barrier baseline and the ideal, on the
 * simulator: a loss is a finding to explain, not a failure. */
static void compare_cycles(KernelCheck *k, Oracle *o, const int64_t cycles[2]) {
  int64_t bf = cycles[SYNC_BARRIER_FREE], barrier = cycles[SYNC_BARRIER];
  if (bf < 0 || barrier < 0) return;
  int64_t ideal = oracle_ideal_cycles(o, &k->in.p->target->costs);
  Outcome *out = k->out;
  if (bf > barrier)
    snprintf(out->sim_note, sizeof out->sim_note,
             "barrier-free %" PRId64 " cycles > barrier %" PRId64 " (ideal %" PRId64 ", %" PRId64 " instructions)",
             bf, barrier, ideal, out->counts.instructions / 2);
  else if (ideal > bf)
    snprintf(out->sim_note, sizeof out->sim_note, "ideal %" PRId64 " cycles > barrier-free %" PRId64, ideal, bf);
  if (out->sim_note[0]) out->counts.sim_exceptions++;
}

/* The first `// params:` line into the instance's parameters, as run
 * binds it (none: the kernel has no parameters). */
static int bind_params(KernelCheck *k) {
  Program *p = k->in.p;
  Directive *lines = NULL;
  ParamArgs none = {0};
  int64_t *params = ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1);
  k->in.params = params;
  if (params_bind(p, &none, program_directives(p, "params", &lines) ? &lines[0] : NULL, params)) return -1;
  for (int i = 0; i < p->kernel->nparams && k->cfg->param_scale > 1; i++) params[i] *= k->cfg->param_scale;
  return 0;
}

static void check_program(KernelCheck *k, int gcc_mode, FILE *diag, char **diag_text) {
  Program *p = k->in.p;
  const char *err;
  Oracle *o;
  int64_t cycles[2];
  parse(p);
  if (!p->diag.errors) check(p);
  if (p->diag.errors)
    outcome_fail(k->out, "check", "%s", first_line(diag, diag_text));
  else if (bind_params(k))
    outcome_fail(k->out, "params", "%s", first_line(diag, diag_text));
  else if (instance_inputs(&k->in, k->seed, &err)) /* first: the oracle reads the device integers */
    outcome_fail(k->out, "reference", "%s", err);
  else if (!(o = oracle_new(p, k->in.params)))
    outcome_fail(k->out, "oracle", "the sequential walk stopped: %s", first_line(diag, diag_text));
  else if (instance_reference(&k->in, &err))
    outcome_fail(k->out, "reference", "%s", err);
  else if (instance_exact(&k->in, &err))
    outcome_fail(k->out, "f64-reference", "%s", err);
  else if (!check_mode(k, o, SYNC_BARRIER_FREE, gcc_mode, &cycles[SYNC_BARRIER_FREE]) &&
           !check_mode(k, o, SYNC_BARRIER, gcc_mode, &cycles[SYNC_BARRIER]))
    compare_cycles(k, o, cycles);
}

void check_kernel(const Config *cfg, const char *name, const char *text, uint64_t seed, int gcc_mode, Outcome *out) {
  char *diag_text = NULL;
  size_t diag_len = 0;
  FILE *diag = open_memstream(&diag_text, &diag_len);
  memset(out, 0, sizeof *out);
  Program *p = program_new(name, text, strlen(text), cfg->target ? cfg->target : target_default(), diag);
  KernelCheck k = {.cfg = cfg, .in = {.p = p}, .seed = seed, .out = out};
  check_program(&k, gcc_mode, diag, &diag_text);
  out->counts.kernels = 1;
  out->counts.failures = out->stage[0] != 0;
  program_free(p);
  fclose(diag);
  free(diag_text);
}

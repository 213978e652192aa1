/* campaign.c: the differential campaign (see campaign.h): seeds dealt to
 * the worker pool, outcomes summed in the parent, the summary, and the
 * failing seeds minimized. The gcc step's scratch directory is removed on
 * every way out, a SIGINT or SIGTERM included. */
#include "harness/campaign.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "harness/gen.h"
#include "util/clock.h"
#include "util/json.h"
#include "harness/minimize.h"
#include "harness/pool.h"

#define MAX_REPORTED 20  /* failures and sim exceptions listed in the summary */
#define MAX_MINIMIZED 10 /* failing seeds minimized per campaign */

typedef struct Finding {
  uint64_t seed;
  Outcome out;
} Finding;

typedef struct Results {
  const Campaign *c;
  Counts totals;
  int nfailed, nexceptions;
  Finding failed[MAX_REPORTED], exceptions[MAX_REPORTED];
  int64_t start_ms;
} Results;

/* The sync mode whose C goes through gcc for seed, or -1: every K-th seed,
 * the two modes in turn (one gcc build costs ten times the rest of a seed). */
static int gcc_mode_of(const Campaign *c, uint64_t seed) {
  if (!c->gcc_every || (seed - c->from) % c->gcc_every) return -1;
  return (int)((seed - c->from) / c->gcc_every % 2);
}

static void check_seed(void *ctx, uint64_t seed, Outcome *out) {
  const Campaign *c = ((const Results *)ctx)->c;
  char *text = gen_kernel_text(seed, c->cfg.size);
  char name[64];
  snprintf(name, sizeof name, "gen-seed-%" PRIu64 ".bfk", seed);
  check_kernel(&c->cfg, name, text, seed, gcc_mode_of(c, seed), out);
  free(text);
}

static void note_seed(void *ctx, uint64_t seed, const Outcome *out) {
  Results *r = ctx;
  add_counts(&r->totals, &out->counts);
  if (out->stage[0]) {
    fprintf(stderr, "bfsync: campaign: seed %" PRIu64 " FAILED at %s: %s\n", seed, out->stage, out->message);
    if (r->nfailed < MAX_REPORTED) r->failed[r->nfailed++] = (Finding){seed, *out};
  }
  if (out->sim_note[0] && r->nexceptions < MAX_REPORTED) r->exceptions[r->nexceptions++] = (Finding){seed, *out};
}

static void progress(void *ctx) {
  const Results *r = ctx;
  fprintf(stderr, "campaign: %" PRId64 "/%" PRIu64 " kernels, %" PRId64 " failures, %" PRId64 " sim exceptions, %.0f s\n",
          r->totals.kernels, r->c->count, r->totals.failures, r->totals.sim_exceptions,
          (double)(clock_now_ms() - r->start_ms) / 1000);
}

/* ---- Reports. */

static void print_summary(const Results *r, double seconds) {
  const Campaign *c = r->c;
  const Counts *t = &r->totals;
  printf("campaign: seeds %" PRIu64 " .. %" PRIu64 ", size %ld, %d schedules, %d jobs, gcc every %" PRIu64 "\n",
         c->from, c->from + c->count - 1, c->cfg.size, c->cfg.schedules, c->jobs, c->gcc_every);
  printf("  kernels               %" PRId64 "\n", t->kernels);
  printf("  dynamic instructions  %" PRId64 " (oracle, both sync modes)\n", t->instructions);
  printf("  dynamic waits checked %" PRId64 " by the oracle, %" PRId64 " on threads under the race checker\n",
         t->oracle_waits, t->thread_waits);
  printf("  schedules             %" PRId64 "\n", t->schedules);
  printf("  redundant waits       %" PRId64 " (barrier-free), bookkeeping ops %" PRId64 "\n", t->redundant,
         t->bookkeeping);
  printf("  thread runs           %" PRId64 " (jitter %s), gcc runs %" PRId64 ", sim runs %" PRId64 "\n",
         t->thread_runs, c->cfg.jitter ? "on" : "off", t->gcc_runs, t->sim_runs);
  printf("  back-pressure holds   %" PRId64 " by the oracle, %" PRId64 " on threads, %" PRId64 " on the simulator\n",
         t->oracle_held, t->thread_held, t->sim_held);
  printf("  f64 checks            %" PRId64 " runs against the f64 reference, within its error bounds unless failed\n",
         t->f64_checks);
  printf("  late, by a fallback   %" PRId64 " barrier-free waits, each explained by the ragged or strided one (harness/check.c)\n",
         t->late_fallback);
  printf("  proof validator       %" PRId64 " kernels checked, %" PRId64 " rejected, %" PRId64 " skipped\n",
         t->validator_checks, t->validator_failures, t->validator_skips);
  printf("  failures              %" PRId64 "\n", t->failures);
  for (int i = 0; i < r->nfailed; i++)
    printf("    seed %" PRIu64 ": %s: %s\n", r->failed[i].seed, r->failed[i].out.stage, r->failed[i].out.message);
  printf("  sim exceptions        %" PRId64 "\n", t->sim_exceptions);
  for (int i = 0; i < r->nexceptions; i++)
    printf("    seed %" PRIu64 ": %s\n", r->exceptions[i].seed, r->exceptions[i].out.sim_note);
  printf("  time                  %.1f s (%.2f ms per kernel per job)\n", seconds,
         t->kernels ? seconds * 1000 * c->jobs / (double)t->kernels : 0.0);
}

static void print_json(const Results *r, double seconds) {
  const Campaign *c = r->c;
  const Counts *t = &r->totals;
  JsonWriter w;
  jw_init(&w, stdout, false);
  jw_object(&w);
  jw_key(&w, "from");
  jw_uint(&w, c->from);
  jw_key(&w, "count");
  jw_uint(&w, c->count);
  jw_key_int(&w, "size", c->cfg.size);
  jw_key_int(&w, "jobs", c->jobs);
  jw_key(&w, "gcc_every");
  jw_uint(&w, c->gcc_every);
  const struct {
    const char *key;
    int64_t value;
  } counts[] = {
      {"kernels", t->kernels},         {"instructions", t->instructions}, {"oracle_waits", t->oracle_waits},
      {"thread_waits", t->thread_waits}, {"schedules", t->schedules},     {"redundant", t->redundant},
      {"bookkeeping", t->bookkeeping}, {"thread_runs", t->thread_runs},   {"gcc_runs", t->gcc_runs},
      {"sim_runs", t->sim_runs},       {"failures", t->failures},         {"sim_exceptions", t->sim_exceptions},
      {"oracle_held", t->oracle_held}, {"thread_held", t->thread_held},   {"sim_held", t->sim_held},
      {"f64_checks", t->f64_checks},   {"late_fallback", t->late_fallback},
      {"validator_checks", t->validator_checks},
      {"validator_failures", t->validator_failures}, {"validator_skips", t->validator_skips},
  };
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) jw_key_int(&w, counts[i].key, counts[i].value);
  jw_key(&w, "failed_seeds");
  jw_array(&w);
  for (int i = 0; i < r->nfailed; i++) jw_uint(&w, r->failed[i].seed);
  jw_close(&w);
  jw_key(&w, "seconds");
  jw_fixed(&w, seconds, 1);
  jw_close(&w);
  putchar('\n');
}

/* ---- The campaign. */

static void minimize_failures(const Campaign *c, const Results *r) {
  struct stat st;
  bool can_save = c->minimize && !stat(c->regress_dir, &st) && S_ISDIR(st.st_mode);
  if (r->nfailed && c->minimize && !can_save)
    fprintf(stderr, "bfsync: campaign: failing seeds not minimized: no directory %s (--regress)\n", c->regress_dir);
  for (int i = 0; i < r->nfailed && i < MAX_MINIMIZED && can_save && !pool_interrupted(); i++)
    save_regression(&c->cfg, c->regress_dir, r->failed[i].seed, r->failed[i].out.stage, r->failed[i].out.message);
}

int campaign_run(Campaign *c) {
  pool_catch_signals();
  if (c->gcc_every) {
    if (gcc_setup(&c->gcc)) {
      gcc_cleanup(&c->gcc);
      return 1;
    }
    c->cfg.gcc = &c->gcc;
  }
  Results *r = calloc(1, sizeof *r);
  if (!r) bug("campaign: out of memory");
  r->c = c;
  r->start_ms = clock_now_ms();
  Pool pool = {c->from, c->count, c->jobs, check_seed, note_seed, progress, r};
  pool_run(&pool);
  double seconds = (double)(clock_now_ms() - r->start_ms) / 1000;
  if (!pool_interrupted()) {
    if (c->json)
      print_json(r, seconds);
    else
      print_summary(r, seconds);
    fflush(stdout);
    minimize_failures(c, r);
  }
  gcc_cleanup(&c->gcc);
  int status = r->totals.failures ? 1 : 0;
  free(r);
  pool_reraise();
  return status;
}

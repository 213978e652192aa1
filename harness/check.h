/* check.h: the per-kernel differential check, one kernel text through
 * every part of the pipeline, every result compared:
 *
 *   parse -> check (a failure is a generator bug) -> bind `// params:`
 *   reference (program order on the AST) -> expected tensors
 *   f64 reference (backend/reference_f64.c) -> exact values and bounds
 *   per sync mode: transform -> ir_validate -> oracle (no race, deadlock or
 *     late wait but those the ragged or strided fallback explains) -> emit_c -> jit -> threads with jitter and
 *     the race checker -> the cycle simulator -> optionally the C through
 *     gcc (harness/gcc.c), each run's results compared bit for bit with
 *     the reference and within bounds with the f64 one (harness/exec.c)
 *   sim: barrier-free cycles <= barrier cycles and ideal <= barrier-free,
 *     any exception noted (a finding, not a failure)
 *
 * The outcome is a fixed-size record, so a worker process can send it
 * through a pipe (harness/pool.c). */
#ifndef HARNESS_CHECK_H
#define HARNESS_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "target/target.h"
#include "harness/gcc.h"
#include "transform/ir.h"

/* What is checked. */
typedef struct Config {
  long size;       /* of generated kernels */
  int schedules;   /* oracle interleavings per sync mode */
  bool jitter;     /* random delays on threads */
  const GccStep *gcc; /* NULL: no gcc step */
  int mutate_kind, mutate_index; /* TEST ONLY: break a barrier-free wait (index < 0: none) */
  const Target *target; /* NULL: the built-in trn1 */
  int64_t param_scale;  /* every parameter of the `// params:` line times this (0, 1: as given) */
} Config;

/* What one kernel (or a sum of kernels) contributed. */
typedef struct Counts {
  int64_t kernels, instructions, oracle_waits, redundant, bookkeeping, schedules;
  int64_t thread_runs, thread_waits, sim_runs, gcc_runs, failures, sim_exceptions;
  /* ops held by back-pressure (counter window): the oracle's (the most of a
   * kernel's schedules), on threads, on the simulator */
  int64_t oracle_held, thread_held, sim_held;
  /* runs whose results were compared with the f64 reference (every run
   * that matched the sequential reference bit for bit) */
  int64_t f64_checks;
  /* barrier-free waits the oracle found late, each explained by the ragged
   * or the strided fallback (the only ones a campaign accepts: harness/check.c) */
  int64_t late_fallback;
  /* barrier-free kernels the proof's extracted validator checked
   * (harness/proof_check.c, when build/proof/bfcheck is built), those it
   * rejected or could not read, and those it skipped (above its instance
   * bound, or a gather: harness/proof_check.h) */
  int64_t validator_checks, validator_failures, validator_skips;
} Counts;

typedef struct Outcome {
  Counts counts;
  char stage[16]; /* "" when the kernel passed */
  char message[512];
  char sim_note[160]; /* "" unless a simulator exception */
} Outcome;

/* to += c, field by field. */
void add_counts(Counts *to, const Counts *c);
/* Record the first failure of an outcome (later ones are ignored). */
void outcome_fail(Outcome *out, const char *stage, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Check one kernel text (with its `// params:` line), inputs and schedules
 * from seed; gcc_mode is the SyncMode whose C also goes through gcc, or -1.
 * The outcome says what passed and what failed first. */
void check_kernel(const Config *cfg, const char *name, const char *text, uint64_t seed, int gcc_mode, Outcome *out);

#endif

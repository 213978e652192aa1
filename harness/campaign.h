/* campaign.h: the differential campaign and the exhaustive small scope.
 *
 * The campaign checks the kernel of `bfsync gen --seed S` for every seed of
 * a range (harness/check.c), in a worker pool (harness/pool.c), sends one
 * mode's C of every K-th seed through gcc (harness/gcc.c), sums what was
 * checked, and minimizes failing seeds into regression kernels
 * (harness/minimize.c). The exhaustive scope (harness/exhaustive.c) judges
 * every kernel within a small bound with the oracle instead. */
#ifndef HARNESS_CAMPAIGN_H
#define HARNESS_CAMPAIGN_H

#include <stdbool.h>
#include <stdint.h>

#include "harness/check.h"

typedef struct Campaign {
  uint64_t from, count;
  int jobs;
  uint64_t gcc_every; /* gcc step every K-th seed, the sync modes in turn; 0: never */
  bool json, minimize;
  const char *regress_dir;
  Config cfg;
  GccStep gcc; /* lib and root set by the caller */
} Campaign;

/* Run the campaign and print its summary; the exit status (0 every kernel
 * passed, 1 otherwise). */
int campaign_run(Campaign *c);

typedef struct ExhaustiveScope {
  int instructions; /* the bound: at most this many, 1 .. EXHAUSTIVE_MAX_INSTRUCTIONS */
  int engines;      /* 3: act, dve, pool (core); 5: also pe and dma with an hbm tensor, and
                       the pinned queue dma1 on a target with DMA queues (all) */
  int jobs, schedules;
  bool dry_run, json;
  const Target *target; /* NULL: the built-in trn1 */
  bool views; /* tiles of 2 partitions, referenced whole or by one row (harness/exhaustive.c); no pe */
} ExhaustiveScope;

#define EXHAUSTIVE_MAX_INSTRUCTIONS 3

/* Enumerate and judge the scope, print the summary; the exit status. */
int exhaustive_run(const ExhaustiveScope *x);

#endif

/* pool.h: the worker pool. Items from .. from + count - 1 are dealt to
 * `jobs` worker processes, forked before any thread exists (worker j takes
 * from + j, from + j + jobs, ...). A worker reports each item to the parent
 * through a pipe: a START record, then a DONE record with the outcome. A
 * worker that dies (an abort in bug(), a signal) leaves a START without
 * DONE, so the parent knows the item, reports it as a crash and forks a
 * replacement for the rest of that worker's share.
 *
 * SIGINT and SIGTERM are caught while a pool may run (pool_catch_signals):
 * the pool then stops its workers and returns, long loops check
 * pool_interrupted(), and the caller cleans up (temporary directories) and
 * calls pool_reraise(), so the process still dies of the signal. */
#ifndef HARNESS_POOL_H
#define HARNESS_POOL_H

#include <stdint.h>

#include "harness/check.h"

typedef struct Pool {
  uint64_t from, count;
  int jobs; /* 1 .. POOL_MAX_JOBS */
  /* In a worker: do item, describe it in *out. */
  void (*work)(void *ctx, uint64_t item, Outcome *out);
  /* In the parent, once per item, in completion order; a crashed item's
   * outcome has stage "crash" and counts one kernel and one failure. */
  void (*done)(void *ctx, uint64_t item, const Outcome *out);
  /* In the parent, about every 10 seconds (may be NULL). */
  void (*tick)(void *ctx);
  void *ctx;
} Pool;

#define POOL_MAX_JOBS 64

/* Run every item; returns when all are done or a caught signal arrived. */
void pool_run(const Pool *pool);

void pool_catch_signals(void);
/* The signal caught since pool_catch_signals, or 0. */
int pool_interrupted(void);
/* If a signal was caught: restore its default action and raise it again. */
void pool_reraise(void);

#endif

/* oracle.h: the exactness oracle, a test tool that judges the transform.
 *
 * The oracle walks the checked kernel sequentially with concrete parameters
 * and finds, for every dynamic instruction b on engine c and every other
 * engine e, need_e(b): the position in e's stream of the latest e-instance
 * that precedes b in program order and conflicts with it (0 if none).
 * oracle_new walks once to report the kernel's run-time errors; oracle_check
 * then interprets the transform's streams (Program->ir) under random
 * interleavings, walking again beside them, and checks, with vector clocks over counter
 * increments and waits, that every need is covered by happens-before (no
 * race), that no executed wait asks for more than the next instruction
 * needs (never late), and counts the waits already implied (redundant).
 * oracle_ideal_cycles is the makespan no synchronization scheme can beat:
 * the same streams, exact dependences, zero sync cost. Memory grows with
 * the kernel's cells, engines and how far its engines lag each other, not
 * with its dynamic instruction count (oracle.c). */
#ifndef ORACLE_H
#define ORACLE_H

#include <stdint.h>
#include <stdio.h>

#include "frontend/program.h"
#include "transform/ir.h"

typedef struct Oracle Oracle;

/* What oracle_check found. Counts are from the first schedule, except races
 * (the most any schedule found; races are judged by happens-before, so every
 * schedule that runs to the end finds the same) and deadlocks (the number
 * of schedules that deadlocked). */
typedef struct OracleStats {
  int64_t instructions; /* dynamic ops executed */
  int64_t waits;        /* waits executed (threshold above the guard's known value) */
  int64_t races;        /* (instruction, engine) pairs whose need happens-before does not cover */
  int64_t early;        /* waits executed on e right before an instruction x whose need_e(x)
                           is above the wait's threshold and not covered otherwise: present
                           but too low (a missing wait is a race that is not early) */
  int64_t late;         /* waits whose threshold exceeds the next instruction's need */
  int64_t late_explained; /* ... of which the wait's WaitWhy names a fallback */
  int64_t redundant;    /* waits whose condition happens-before already guaranteed */
  int64_t subsumed;     /* other waits made needless by the rest of the waits before the
                           same instruction (a later one in the group implies it) */
  int64_t bookkeeping;  /* bookkeeping operations executed (ir.h's definition) */
  int64_t engine_instructions[BFRT_MAX_ENGINES], engine_bookkeeping[BFRT_MAX_ENGINES]; /* by engine */
  int64_t window;       /* counter reads outside the window: a counter 2^counter_bits or more
                           past what the reading engine last saw of it (docs/algorithm.md, 7) */
  int64_t backpressure_pairs; /* (consumer, producer) pairs whose back-pressure is checked */
  int64_t held;         /* ops a producer held by back-pressure (the most any schedule had) */
  int64_t deadlocks;
  int64_t mismatches;   /* transform bugs: a stream's ops differ from the sequential walk */
  int schedules;
  SyncMode sync; /* of the streams judged */
  /* Per wait node, in ir_mutate's order (engine, then pre-order), first schedule. */
  int nwait_nodes;
  const IrNode **wait_node; /* the nodes themselves */
  int64_t *wait_executed;
  int64_t *wait_redundant;
  int64_t *wait_subsumed;
} OracleStats;

/* Requires: a checked kernel, params in its parameter order. Ensures: the
 * sequential walk, or NULL after reporting a run-time error (division by
 * zero, slot or hbm tile out of range) through p->diag. */
Oracle *oracle_new(Program *p, const int64_t *params);
/* Dynamic instructions of engine in the sequential walk. */
int64_t oracle_instances(const Oracle *o, int engine);
/* need_producer(b) for the instance b at 1-based position of engine: the
 * oracle keeps no per-instance record, so this walks again up to b (a test
 * tool). */
int64_t oracle_need(Oracle *o, int engine, int64_t position, int producer);

/* Requires: p->ir for the oracle's program. Ensures: *st filled from
 * schedules interleavings seeded by seed; races, late waits, deadlocks and
 * mismatches are described on log (NULL: silent). */
void oracle_check(Oracle *o, int schedules, uint64_t seed, FILE *log, OracleStats *st);
/* Whether st fails verification: a race, a deadlock, a mismatch, a
 * compare outside the counter window, or (for
 * barrier-free streams) an unexplained late wait. The barrier baseline's
 * static thresholds must hold for every iteration of a region, so they are
 * not exact by design: its late waits are counted, not failed. */
int oracle_failed(const OracleStats *st);

/* The ideal makespan in cycles, under the simulator's timing with zero sync
 * cost: each instruction starts when its engine can issue, the instances it
 * needs on other engines have completed and, on its own engine, its latest
 * conflicting instance and the one bfrt_op_window back have completed; its
 * engine is then busy for bfrt_op_timing's occupancy and it completes
 * completion cycles after its start (dst shape, first source shape; an
 * immediate source, as in fill, passes the destination's shape), in order
 * with its engine's earlier instances. Each call walks the kernel again. */
int64_t oracle_ideal_cycles(Oracle *o, const bfrt_costs *costs);
/* The same with the synchronization every counter-based scheme pays: each
 * cross-engine dependence (an instance needed on another engine) adds its
 * producer's sem_latency before the consumer can start; each instruction
 * that must wait pays its engine's wait_cost once, delayed or not; and
 * each engine reads each device integer it depends on once, in its idle
 * time. An instruction must wait when one of its needs is not implied by
 * happens-before with every earlier instruction waiting for exactly its
 * own needs (vector clocks, as oracle_check's). No counter scheme with
 * exact thresholds beats it (oracle.c, ideal_makespan); the barrier-free
 * streams differ from it by redundant or split waits, bookkeeping, and
 * device reads off idle time. */
int64_t oracle_ideal_sync_cycles(Oracle *o, const bfrt_costs *costs);

#endif

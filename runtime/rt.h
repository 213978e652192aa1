/* rt.h: the runtime's private structures, shared by its files.
 *
 * The runtime is split into what every executor shares and what each one
 * does differently. Shared (kernel.c, host.c): resolving and bounds-checking
 * operands, running sem_apply, counting statistics, recording the trace,
 * reporting errors and unwinding. Per executor (threads.c, sim.c): how an
 * engine runs, how a completion is counted, how a wait blocks, how a barrier
 * meets. An Executor is that table of hooks; adding one (the cycle
 * simulator) is adding a file that fills it in.
 *
 * Errors stop the whole kernel: the first failure records its message, the
 * executor wakes every blocked engine, and each engine longjmps out of its
 * entry function back to the executor (rt_fail / rt_unwind).
 *
 * This header includes nothing from the compiler: the runtime is the
 * portable part a hardware team ports. */
#ifndef BFRT_RT_H
#define BFRT_RT_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bfrt.h"
#include "bfrt_cost.h"
#include "bfrt_kernel.h"
#include "ops.h"
#include "semantics.h"

/* The simulator's clocks and every cost saturate here (2^61 cycles, about
 * 52 years at 1.4 GHz), so no kernel or target value can overflow them. */
#define BFRT_CYCLES_MAX (INT64_MAX / 4)

/* Trace events beyond the ops: their `op` field. */
enum { TRACE_WAIT = BFRT_NOPS, TRACE_BARRIER };

typedef struct TraceEvent {
  int op, line;
  signed char dtypes[BFRT_MAX_OPERANDS]; /* op: its tile and tensor operands' BFRT_DTYPE_*, in order; -1 after them */
  int engine;        /* wait: whose counter */
  int64_t threshold; /* wait */
  int64_t start_ns, dur_ns;
} TraceEvent;

typedef struct TraceBuf {
  TraceEvent *ev;
  size_t n, cap;
} TraceBuf;

typedef struct Scratch {
  struct Scratch *next;
  int64_t data[];
} Scratch;

/* What an engine is doing, for the watchdog's report. */
enum { ENGINE_RUNNING, ENGINE_WAITING, ENGINE_AT_BARRIER, ENGINE_HELD, ENGINE_DONE };

struct bfrt_ctx {
  struct bfrt *rt;
  int engine;
  jmp_buf unwind; /* set by the executor around entry[engine] */

  /* The instruction being executed: errors, the trace and a race checker
   * read these. op is BFRT_* or TRACE_WAIT / TRACE_BARRIER. */
  int op, line;
  SemView views[BFRT_MAX_OPERANDS]; /* the current op's resolved operands */
  int gathered; /* 1 + the current op's gather or scatter operand (its view: the first row, rn tall), or 0 */
  float imms[BFRT_MAX_OPERANDS];    /* and its immediates */
  int64_t completed; /* own instructions completed this run */

  int64_t waits, bookkeeping, barriers;
  int64_t spills; /* scratch operations (bfrt_spill) */
  int64_t held; /* ops held by back-pressure (rt_hold) */
  uint64_t jitter; /* splitmix64 state (util/random.h), drawn when opt->jitter_seed != 0 */
  TraceBuf trace;
  int tracing;
  Scratch *scratch;

  /* Published for the watchdog (written by this engine, read by another). */
  atomic_int state;
  atomic_int blocked_engine, blocked_line;
  _Atomic int64_t blocked_threshold;
};

typedef struct bfrt_ctx Ctx;

typedef struct Tensor {
  int64_t rows, cols;
  float *data;
} Tensor;

typedef struct Executor {
  /* Run every engine's entry to completion or failure (rt->failed); set
   * rt->exec_state while engines may be running, NULL after. */
  void (*run)(struct bfrt *rt);
  /* Before each op starts (jitter, clocks). */
  void (*before_op)(Ctx *cx);
  /* Count one completion on cx's engine; the op's effects are visible first. */
  void (*complete)(Ctx *cx);
  /* Return once engine's counter has reached threshold (or unwind); the
   * result is the count it read then. The count is exact: kernel.c checks
   * that every read extends from the counter's low bits (rt_read). */
  void (*wait)(Ctx *cx, int engine, int64_t threshold);
  /* Meet every engine, then every counter reads 0 (or unwind); before
   * releasing, record every engine's completed count in
   * rt->barrier_positions (the race checker's barrier edges). */
  void (*barrier)(Ctx *cx);
  /* The count of engine's counter cx can see now. */
  int64_t (*count)(Ctx *cx, int engine);
  /* Whether engine is, as cx sees it now, blocked (in a wait, a barrier
   * or held) or finished: it keeps reading the counters it tracks, so cx
   * may raise what it has seen of cx's (rt_holder). */
  int (*idle)(Ctx *cx, int engine);
  /* Charge n bookkeeping operations; NULL: free. */
  void (*bookkeep)(Ctx *cx, int64_t n);
  /* Charge one device-integer read (bfrt_elem); NULL: free. */
  void (*device_read)(Ctx *cx);
  /* A failure was recorded: wake every blocked engine so it unwinds. */
  void (*stop)(struct bfrt *rt);
  /* cx's time since the run started, in ns, for the trace; NULL: the wall
   * clock (a simulator gives its cycles converted at the target's clock). */
  int64_t (*now_ns)(Ctx *cx);
} Executor;

/* The race checker (check.c); kernel.c calls it around every op, wait and
 * barrier when the run has one. */
typedef struct Checker Checker;

extern const Executor rt_threads_executor;
extern const Executor rt_sim_executor;

struct bfrt {
  const bfrt_kernel *k;
  int timing_only; /* bfrt_new_timing: float tensors and tiles hold no data, ops are not computed */
  int64_t *params;
  Tensor *tensors;
  float **tiles; /* slots * rows * cols each */
  Ctx cx[BFRT_MAX_ENGINES];

  /* The current run. */
  const bfrt_options *opt;
  const Executor *exec;
  void *exec_state;
  Checker *checker; /* NULL unless opt->check */
  int64_t barrier_positions[BFRT_MAX_ENGINES];
  /* The counter window (docs/algorithm.md, section 7): seen[c][e] is the
   * count of e's counter engine c last read; consumers[e] has bit c when c
   * waits on e (the kernel's tracks). */
  _Atomic int64_t seen[BFRT_MAX_ENGINES][BFRT_MAX_ENGINES];
  uint32_t consumers[BFRT_MAX_ENGINES];
  int64_t start_ns; /* wall-clock trace origin */
  atomic_int failed;
  char error[2048];
  bfrt_stats stats;
};

/* The failure path (runtime/fail.c). Record the first failure as
 * "kernel K[, line L]: message" (line 0: no line) and wake every engine;
 * no unwinding (for host threads). */
void rt_record_failure(struct bfrt *rt, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record a failure of cx's engine at line, then unwind cx. */
_Noreturn void rt_fail(Ctx *cx, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Leave cx's entry function because the kernel has failed. */
_Noreturn void rt_unwind(Ctx *cx);
/* Whether the kernel has failed; engines unwind when they see it. */
int rt_failed(const struct bfrt *rt);

/* A checker for rt's tiles and tensors, or NULL when out of memory. */
Checker *check_new(const struct bfrt *rt);
void check_free(Checker *ch);
/* Races found, and a description of the first few. */
int64_t check_races(const Checker *ch, const char **report);
/* Before cx runs op on args (resolved in cx->views): check its accesses. */
void check_op(Ctx *cx, int op, const bfrt_arg *args, int nargs);
/* Row p of gather argument a (view 2), once resolve checked it. */
int64_t rt_gather_row(const Ctx *cx, const bfrt_arg *a, int64_t p);
/* After cx's op took effect, before its counter increment. */
void check_complete(Ctx *cx);
/* After cx's wait on engine's counter >= threshold returned. */
void check_wait(Ctx *cx, int engine, int64_t threshold);
/* After cx left a barrier. */
void check_barrier(Ctx *cx);

/* The kernel's counter width in bits (64 when it does not say). */
static inline int rt_counter_bits(const struct bfrt *rt) {
  return rt->k->counter_bits > 0 && rt->k->counter_bits < 64 ? rt->k->counter_bits : 64;
}
/* A true count as the counter stores it: its low rt_counter_bits bits. */
static inline int64_t rt_counter_raw(const struct bfrt *rt, int64_t count) {
  int bits = rt_counter_bits(rt);
  return bits >= 64 ? count : (int64_t)((uint64_t)count & ((UINT64_C(1) << bits) - 1));
}

/* The most a counter may be past what a consumer last saw of it:
 * 2^counter_bits - 1, so that its low bits extend exactly. */
static inline int64_t rt_counter_span(const struct bfrt *rt) {
  int bits = rt_counter_bits(rt);
  return bits >= 63 ? INT64_MAX : (INT64_C(1) << bits) - 1;
}
/* Record that consumer has seen count of producer's counter (never lowers it). */
void rt_saw(struct bfrt *rt, int consumer, int producer, int64_t count);
/* cx reads engine e's counter: its low bits extended from what cx last saw
 * of it; 2^counter_bits or more past that fails the run ("counter window"). */
void rt_read(Ctx *cx, int e);
/* cx reads every counter it tracks, from their low bits extended from what
 * it last saw; a read 2^counter_bits or more past that fails the run with
 * "counter window" (back-pressure makes that impossible). */
void rt_read_counters(Ctx *cx);
/* Whether cx's op that makes its counter `next` may start: every consumer
 * of cx has seen at least next - rt_counter_span, or is idle (then it sees
 * cx's count, own, now). Returns the first consumer that holds it, or -1. */
int rt_holder(Ctx *cx, int64_t own, int64_t next);
/* Forget what every engine has seen (the counters restarted at a barrier). */
void rt_forget_seen(struct bfrt *rt);

/* Monotonic nanoseconds. */
/* cx's trace time now (ns since the run started), 0 when not tracing. */
int64_t trace_now(Ctx *cx);
/* Append an event that started at start_ns to cx's trace (when tracing). */
void trace_record(Ctx *cx, int op, int line, int engine, int64_t threshold, int64_t start_ns);
/* The op cx just completed, with its operands' element types (cx->views). */
void trace_record_op(Ctx *cx, int op, int line, int nargs, int64_t start_ns);
/* Write every engine's events as Chrome Trace Event JSON; 0 or -1. */
int trace_write(const struct bfrt *rt, const char *path);

#endif

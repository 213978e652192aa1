/* sim.c: the deterministic cycle simulator (BFRT_EXEC_SIM).
 *
 * It runs the same generated C as the threads executor, and the ops
 * execute for real (so results are compared with the reference like any
 * run), but time is simulated: each engine has its own clock in cycles.
 *   op         starts at the engine's clock, occupies the engine for its
 *              occupancy and completes completion cycles after its start
 *              (bfrt_op_timing, from the destination's and first source's
 *              shapes); counter position k is stamped
 *              max(stamp of k - 1, its completion), so increments stay in
 *              order. The two differ only on a pipelined dma engine
 *              (dma_outstanding > 1), whose transfers overlap: op k starts
 *              no earlier than the stamp of op k - dma_outstanding, nor
 *              before the stamp of any in-flight op of its own engine
 *              whose memory conflicts with its own (the same tile slot or
 *              overlapping hbm, one of them written): same-engine
 *              dependences need no wait in the machine model, so the
 *              engine keeps them itself, as a queue would.
 *   wait       S_e >= T ends at max(own clock, when S_e reached T +
 *              e's sem_latency) + the waiter's wait_cost; all of it stall.
 *              The count is exact: kernel.c checks every read against
 *              the counter window (rt_read_counters).
 *   hold       before an op, an engine whose consumer has not seen enough
 *              of its counter for the op to keep the window (rt_holder)
 *              stalls until that consumer's next instruction boundary (it
 *              reads then) or, when the consumer is blocked and reading,
 *              until its own counter shows enough; all of it stall.
 *   bookkeep   n operations cost n * bookkeep_cost.
 *   bfrt_elem  a device-integer read costs device_read_cost.
 *   barrier    an engine arrives when its clock and every stamp of its
 *              own ops have passed (in-flight transfers drain); every
 *              engine leaves at max(arrivals) + the largest barrier_cost
 *              among the engines; the counters restart at 0.
 *   end        an engine finishes when its last stamp has passed too.
 *
 * Determinism. Time depends only on the completion stamps of counter
 * positions, which depend only on each engine's own history, never on
 * when the host ran which engine. To make the host order (and so the
 * data a racy kernel would see) reproducible too, only one engine runs at
 * a time: each engine is a coroutine (a ucontext fiber with its own
 * stack) on the calling thread; it runs until it blocks (a wait whose
 * position has not been produced yet, or a barrier others have not
 * reached) or finishes, then returns to the scheduler, which resumes the
 * runnable engine with the smallest clock (ties: the lowest index). A
 * switch is a few hundred nanoseconds where a thread hand-over was
 * several microseconds, so a synchronization-bound kernel simulates at
 * about the speed the threads executor runs it (issue 9). The fibers'
 * stacks are announced to AddressSanitizer and valgrind, and the error
 * path (rt_fail's longjmp) stays within one fiber's stack.
 *
 * Deadlock. When the running engine blocks or finishes and no unfinished
 * engine can run, the kernel is deadlocked: the report names what every
 * engine waits for and every counter, like the watchdog's.
 *
 * Overflow. Every clock sum saturates at BFRT_CYCLES_MAX (add_cycles), so
 * a huge kernel or an extreme target cannot wrap a clock negative.
 *
 * Timing only (bfrt_new_timing, `run --timing-only`). The hooks are the
 * same; kernel.c skips sem_apply, and the float tensors and tiles are
 * reserved, never-backed address space, so the in-flight conflict checks
 * (rect_of) see the same addresses and overlaps as with data, and the
 * cycles are the data run's. Only time and the i32 tensors the kernel
 * reads (bfrt_elem) are simulated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "rt.h"

#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#endif
#ifdef SIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define VALGRIND_STACK_REGISTER(start, end) 0
#define VALGRIND_STACK_DEREGISTER(id) ((void)(id))
#endif

/* Each engine's fiber stack: reserved, not committed (the pages appear
 * as they are touched), large enough for the longest generated engine
 * function a thread's default stack would hold. */
enum { SIM_STACK_BYTES = 64 << 20 };

enum { SIM_RUNNING, SIM_WAITING, SIM_AT_BARRIER, SIM_FINISHED };

/* A rectangle of one tile's or tensor's storage (tile slots stack as rows). */
typedef struct Rect {
  uintptr_t owner; /* its storage's base; 0: nothing */
  int64_t r0, r1, c0, c1;
} Rect;

/* An op's memory operands, and which of them it writes (ops.def's roles). */
typedef struct Access {
  Rect rect[BFRT_MAX_OPERANDS];
  int writes[BFRT_MAX_OPERANDS];
  int n;
} Access;

/* An op of a pipelined engine whose stamp is after the engine's clock. */
typedef struct InFlight {
  int64_t stamp;
  Access access;
} InFlight;

typedef struct SimEngine {
  const bfrt_engine_cost *cost;
  int64_t clock;    /* when it can issue its next instruction */
  int64_t window;   /* its ops in flight at most (bfrt_op_window) */
  bfrt_op_time pending; /* the op between before_op and complete */
  Access access;    /* its memory, on a pipelined engine */
  InFlight *flight;
  int64_t nflight, flight_cap;
  int64_t count;    /* counter value: ops completed since the last barrier */
  int64_t *done_at; /* done_at[k - 1]: when the counter reached k */
  int64_t cap;
  int state;
  int held;          /* held by back-pressure (sim_hold) */
  int on;            /* SIM_WAITING: whose counter */
  int64_t threshold; /* SIM_WAITING */
  ucontext_t fiber;
  char *stack;       /* SIM_STACK_BYTES, mmap'ed; NULL: not started */
  unsigned stack_id; /* valgrind's */
  void *fake_stack;  /* AddressSanitizer's, while switched away */
} SimEngine;

typedef struct Sim {
  int64_t dma_free[BFRT_MAX_DMA_SPLIT]; /* when each shared DMA engine is next free */
  int ndma;                             /* how many (the dma kind's dma_split; 0: none shared) */
  ucontext_t scheduler;
  const void *scheduler_bottom; /* the scheduler's stack, for AddressSanitizer */
  size_t scheduler_size;
  int nengines, finished;
  int running; /* the engine whose fiber runs; -1: the scheduler */
  int arrived; /* at the current barrier */
  SimEngine eng[BFRT_MAX_ENGINES];
} Sim;

static Sim *sim_of(Ctx *cx) { return cx->rt->exec_state; }
static SimEngine *me(Ctx *cx) { return &sim_of(cx)->eng[cx->engine]; }

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int64_t add_cycles(int64_t a, int64_t b) { return a < BFRT_CYCLES_MAX - b ? a + b : BFRT_CYCLES_MAX; }

/* ---- Fibers. */

/* From the running engine's fiber back to the scheduler; returns when the
 * scheduler resumes it. finished: it will never be resumed (its fake
 * stack can go). */
static void to_scheduler(Sim *s, SimEngine *x, int finished) {
#ifdef SIM_ASAN
  __sanitizer_start_switch_fiber(finished ? NULL : &x->fake_stack, s->scheduler_bottom, s->scheduler_size);
#endif
  s->running = -1;
  swapcontext(&x->fiber, &s->scheduler);
#ifdef SIM_ASAN
  __sanitizer_finish_switch_fiber(x->fake_stack, NULL, NULL);
#endif
  (void)finished;
}

/* From the scheduler into engine e's fiber, until it blocks or finishes. */
static void resume(Sim *s, int e) {
  SimEngine *x = &s->eng[e];
  s->running = e;
#ifdef SIM_ASAN
  void *fake = NULL;
  __sanitizer_start_switch_fiber(&fake, x->stack, SIM_STACK_BYTES);
#endif
  swapcontext(&s->scheduler, &x->fiber);
#ifdef SIM_ASAN
  __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

/* ---- Scheduling. */

static int runnable(const Sim *s, int e) {
  const SimEngine *x = &s->eng[e];
  if (x->state == SIM_RUNNING) return 1;
  return x->state == SIM_WAITING && s->eng[x->on].count >= x->threshold;
}

static int pick_next(const Sim *s) {
  int best = -1;
  for (int e = 0; e < s->nengines; e++)
    if (runnable(s, e) && (best < 0 || s->eng[e].clock < s->eng[best].clock)) best = e;
  return best;
}

/* After a failure every unfinished engine runs once more, to unwind. */
static int pick_unfinished(const Sim *s) {
  for (int e = 0; e < s->nengines; e++)
    if (s->eng[e].state != SIM_FINISHED) return e;
  return -1;
}

/* ---- The deadlock report. */

static size_t describe(const bfrt *rt, const Sim *s, int e, char *buf, size_t size) {
  const char *const *names = rt->k->engine_names;
  const SimEngine *x = &s->eng[e];
  switch (x->state) {
  case SIM_WAITING:
    return (size_t)snprintf(buf, size, "\n  engine %s, line %d: waits for %s's counter >= %lld (it is %lld)",
                            names[e], rt->cx[e].line, names[x->on], (long long)x->threshold,
                            (long long)s->eng[x->on].count);
  case SIM_AT_BARRIER:
    return (size_t)snprintf(buf, size, "\n  engine %s, line %d: waits at a barrier", names[e], rt->cx[e].line);
  case SIM_FINISHED: return (size_t)snprintf(buf, size, "\n  engine %s: finished", names[e]);
  default: return (size_t)snprintf(buf, size, "\n  engine %s: running", names[e]);
  }
}

static void report_deadlock(bfrt *rt, const Sim *s) {
  char buf[sizeof rt->error];
  size_t size = sizeof buf;
  int64_t latest = 0;
  for (int e = 0; e < s->nengines; e++)
    if (s->eng[e].clock > latest) latest = s->eng[e].clock;
  size_t n = (size_t)snprintf(buf, size, "deadlock: every unfinished engine is blocked (simulated cycle %lld)",
                              (long long)latest);
  for (int e = 0; e < s->nengines && n < size; e++) n += describe(rt, s, e, buf + n, size - n);
  if (n < size) n += (size_t)snprintf(buf + n, size - n, "\n  counters:");
  for (int e = 0; e < s->nengines && n < size; e++)
    n += (size_t)snprintf(buf + n, size - n, " %s=%lld", rt->k->engine_names[e], (long long)s->eng[e].count);
  rt_record_failure(rt, 0, "%s", buf);
}

/* cx blocks (its state is set): return to the scheduler, and come back
 * when it can go on; unwind after a deadlock or another engine's failure. */
static void block(Ctx *cx) {
  to_scheduler(sim_of(cx), me(cx), 0);
  if (rt_failed(cx->rt)) rt_unwind(cx);
}

/* ---- Same-engine ordering on a pipelined engine. */

static Rect rect_in(uintptr_t base, int64_t elems, SemView v, uintptr_t at) {
  if (at < base || at >= base + (uintptr_t)elems * sizeof(float)) return (Rect){0, 0, 0, 0, 0};
  int64_t offset = (int64_t)((at - base) / sizeof(float));
  int64_t r0 = offset / v.stride, c0 = offset % v.stride;
  return (Rect){base, r0, r0 + v.rows, c0, c0 + v.cols};
}

/* The tile or tensor storage v points into, as a rectangle (resolve() makes
 * views into nothing else). */
static Rect rect_of(const bfrt *rt, SemView v) {
  uintptr_t at = (uintptr_t)v.data;
  Rect r = {0, 0, 0, 0, 0};
  for (int t = 0; t < rt->k->ntiles && !r.owner; t++) {
    const bfrt_tile_desc *d = &rt->k->tiles[t];
    r = rect_in((uintptr_t)rt->tiles[t], d->slots * d->rows * d->cols, v, at);
  }
  for (int t = 0; t < rt->k->ntensors && !r.owner; t++)
    r = rect_in((uintptr_t)rt->tensors[t].data, rt->tensors[t].rows * rt->tensors[t].cols, v, at);
  return r;
}

static Access access_of(const Ctx *cx) {
  Access a = {.n = 0};
  for (int i = 0; rt_ops[cx->op].operands[i]; i++) {
    if (!cx->views[i].data) continue; /* an immediate */
    a.writes[a.n] = bfrt_op_writes(cx->op, i);
    a.rect[a.n] = rect_of(cx->rt, cx->views[i]);
    if (i == cx->gathered - 1) { /* rows by index: any row of the tensor, as far as ordering goes */
      a.rect[a.n].r0 = 0;
      a.rect[a.n].r1 = INT64_MAX;
    }
    a.n++;
  }
  return a;
}

static int overlap(Rect a, Rect b) {
  return a.owner && a.owner == b.owner && a.r0 < b.r1 && b.r0 < a.r1 && a.c0 < b.c1 && b.c0 < a.c1;
}

/* Whether one writes what the other touches. */
static int conflict(const Access *a, const Access *b) {
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < b->n; j++)
      if ((a->writes[i] || b->writes[j]) && overlap(a->rect[i], b->rect[j])) return 1;
  return 0;
}

/* The latest stamp among x's in-flight ops that conflict with access
 * (0 if none); ops complete by x's clock are forgotten first. */
static int64_t conflicting_stamp(SimEngine *x, const Access *access) {
  int64_t kept = 0, latest = 0;
  for (int64_t i = 0; i < x->nflight; i++) {
    if (x->flight[i].stamp <= x->clock) continue;
    x->flight[kept++] = x->flight[i];
    if (conflict(&x->flight[i].access, access)) latest = max64(latest, x->flight[i].stamp);
  }
  x->nflight = kept;
  return latest;
}

static void remember_flight(Ctx *cx, SimEngine *x, int64_t stamp) {
  if (stamp <= x->clock) return;
  if (x->nflight == x->flight_cap) {
    int64_t cap = x->flight_cap ? 2 * x->flight_cap : 16;
    InFlight *grown = realloc(x->flight, (size_t)cap * sizeof *grown);
    if (!grown) rt_fail(cx, cx->line, "out of memory for the simulator's in-flight transfers");
    x->flight = grown;
    x->flight_cap = cap;
  }
  x->flight[x->nflight++] = (InFlight){stamp, x->access};
}

/* x waits, as stall, until t (when t is later than its clock). */
static void stall_until(bfrt *rt, int e, SimEngine *x, int64_t t) {
  if (t <= x->clock) return;
  rt->stats.stall[e] = add_cycles(rt->stats.stall[e], t - x->clock);
  x->clock = t;
}

/* Until every op of x has completed (barrier arrival, the end). */
static void drain(bfrt *rt, int e, SimEngine *x) {
  if (x->count > 0) stall_until(rt, e, x, x->done_at[x->count - 1]);
}

/* ---- The DMA engines every queue shares (dma_split). */

/* Let every runnable engine with a smaller clock (ties: a lower index) run
 * first, so that shared DMA engines are taken in simulated-time order. */
static void yield_to_earlier(Ctx *cx) {
  Sim *s = sim_of(cx);
  while (pick_next(s) != cx->engine) {
    to_scheduler(s, me(cx), 0);
    if (rt_failed(cx->rt)) rt_unwind(cx);
  }
}

/* A transfer streams on pending.dma_engines of the DMA engines every queue
 * shares: it starts streaming when that many are free (the queue stalls
 * until then) and holds them for its stream cycles. */
static void take_dma_engines(Ctx *cx, SimEngine *x) {
  Sim *s = sim_of(cx);
  yield_to_earlier(cx);
  int n = (int)(x->pending.dma_engines < s->ndma ? x->pending.dma_engines : s->ndma);
  for (int i = 1; i < s->ndma; i++) /* sort by free time: 16 entries */
    for (int j = i; j > 0 && s->dma_free[j - 1] > s->dma_free[j]; j--) {
      int64_t t = s->dma_free[j];
      s->dma_free[j] = s->dma_free[j - 1];
      s->dma_free[j - 1] = t;
    }
  int64_t begin = max64(add_cycles(x->clock, x->cost->overhead), s->dma_free[n - 1]);
  stall_until(cx->rt, cx->engine, x, begin - x->cost->overhead);
  for (int i = 0; i < n; i++) s->dma_free[i] = add_cycles(begin, x->pending.stream);
}

/* ---- The hooks. */

static void sim_hold(Ctx *cx);

static void sim_before_op(Ctx *cx) {
  SimEngine *x = me(cx);
  sim_hold(cx);
  SemView d = cx->views[0], v = cx->views[bfrt_op_source(cx->op)];
  int64_t dst[2] = {d.rows, d.cols}, src[2] = {v.rows, v.cols};
  x->pending = bfrt_op_timing_sized(cx->rt->opt->costs, cx->rt->k->engine_kinds[cx->engine], cx->op, dst, src,
                                    bfrt_op_elem_bytes(cx->op, bfrt_dtype_bytes(d.dtype), bfrt_dtype_bytes(v.dtype)));
  if (x->window > 1) { /* else every earlier op has completed by the clock */
    int64_t start = x->count >= x->window ? x->done_at[x->count - x->window] : 0;
    x->access = access_of(cx);
    start = max64(start, conflicting_stamp(x, &x->access));
    stall_until(cx->rt, cx->engine, x, start);
  }
  if (x->pending.dma_engines > 0 && sim_of(cx)->ndma > 0) take_dma_engines(cx, x);
}

static void sim_complete(Ctx *cx) {
  SimEngine *x = me(cx);
  int64_t done = add_cycles(x->clock, x->pending.completion);
  x->clock = add_cycles(x->clock, x->pending.occupancy);
  cx->rt->stats.busy[cx->engine] = add_cycles(cx->rt->stats.busy[cx->engine], x->pending.occupancy);
  if (x->count == x->cap) {
    int64_t cap = x->cap ? 2 * x->cap : 1024;
    int64_t *grown = realloc(x->done_at, (size_t)cap * sizeof *grown);
    if (!grown) rt_fail(cx, cx->line, "out of memory for the simulator's counter history");
    x->done_at = grown;
    x->cap = cap;
  }
  int64_t stamp = x->count ? max64(done, x->done_at[x->count - 1]) : done;
  x->done_at[x->count++] = stamp;
  if (x->window > 1) remember_flight(cx, x, stamp);
}

/* How many of x's increments are visible at time t: stamps are monotone,
 * so a binary search over done_at. */
static int64_t visible_count(const SimEngine *x, int64_t t) {
  int64_t lo = 0, hi = x->count;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (add_cycles(x->done_at[mid], x->cost->sem_latency) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The wait ends when the producer's counter shows threshold (+ its
 * sem_latency), or at once when it already does. */
static void sim_wait(Ctx *cx, int engine, int64_t threshold) {
  Sim *s = sim_of(cx);
  SimEngine *x = me(cx), *producer = &s->eng[engine];
  int64_t n = visible_count(producer, x->clock);
  if (n < threshold) n = threshold;
  if (producer->count < n) {
    x->state = SIM_WAITING;
    x->on = engine;
    x->threshold = n;
    block(cx);
    x->state = SIM_RUNNING;
  }
  int64_t visible = n > 0 ? add_cycles(producer->done_at[n - 1], producer->cost->sem_latency) : 0;
  stall_until(cx->rt, cx->engine, x, add_cycles(max64(x->clock, visible), x->cost->wait_cost));
}

static int64_t sim_count(Ctx *cx, int engine) { return visible_count(&sim_of(cx)->eng[engine], me(cx)->clock); }

/* Idle at cx's clock: finished (it never reads again), or blocked since
 * then or earlier; an engine that blocked later was inside an op at cx's
 * clock, not reading. */
static int sim_idle(Ctx *cx, int engine) {
  const SimEngine *y = &sim_of(cx)->eng[engine];
  return y->state == SIM_FINISHED || ((y->state != SIM_RUNNING || y->held) && y->clock <= me(cx)->clock);
}

/* Back-pressure (rt_holder): while a consumer holds the next op, stall
 * until the consumer's next instruction boundary, where it reads the
 * counter, or, when it is idle (reading all along), until enough of this
 * engine's own transfers are visible; engines with earlier clocks run
 * first, so a running consumer is at or after this engine's clock. */
static void sim_hold(Ctx *cx) {
  Sim *s = sim_of(cx);
  SimEngine *x = me(cx);
  int64_t next = x->count + 1, need = next - rt_counter_span(cx->rt);
  int holder = rt_holder(cx, visible_count(x, x->clock), next);
  if (holder < 0) return;
  cx->held++;
  x->held = 1;
  while (holder >= 0) {
    const SimEngine *y = &s->eng[holder];
    int64_t wake = sim_idle(cx, holder) && need >= 1 ? add_cycles(x->done_at[need - 1], x->cost->sem_latency)
                                                         : add_cycles(y->clock, 1);
    stall_until(cx->rt, cx->engine, x, wake);
    yield_to_earlier(cx);
    holder = rt_holder(cx, visible_count(x, x->clock), next);
  }
  x->held = 0;
}

/* The last engine to arrive releases everyone, counters reset. */
static void release_barrier(bfrt *rt, Sim *s) {
  int64_t release = 0, cost = 0;
  for (int e = 0; e < s->nengines; e++) {
    release = max64(release, s->eng[e].clock);
    cost = max64(cost, s->eng[e].cost->barrier_cost);
  }
  release = add_cycles(release, cost);
  for (int e = 0; e < s->nengines; e++) {
    SimEngine *x = &s->eng[e];
    stall_until(rt, e, x, release);
    rt->barrier_positions[e] = rt->cx[e].completed;
    x->count = 0;
    x->state = SIM_RUNNING;
  }
  rt_forget_seen(rt);
  s->arrived = 0;
}

static void sim_barrier(Ctx *cx) {
  Sim *s = sim_of(cx);
  drain(cx->rt, cx->engine, me(cx));
  me(cx)->state = SIM_AT_BARRIER;
  if (++s->arrived == s->nengines)
    release_barrier(cx->rt, s);
  else
    block(cx);
}

static void sim_bookkeep(Ctx *cx, int64_t n) {
  int64_t cost = me(cx)->cost->bookkeep_cost;
  me(cx)->clock = add_cycles(me(cx)->clock, cost && n > BFRT_CYCLES_MAX / cost ? BFRT_CYCLES_MAX : n * cost);
}

static void sim_device_read(Ctx *cx) { me(cx)->clock = add_cycles(me(cx)->clock, me(cx)->cost->device_read_cost); }

/* A failure is seen at the next switch: block() unwinds, and the scheduler
 * resumes every unfinished engine so that it does. */
static void sim_stop(bfrt *rt) { (void)rt; }

static int64_t sim_now_ns(Ctx *cx) {
  double ghz = cx->rt->opt->costs->clock_ghz;
  double ns = (double)me(cx)->clock / (ghz > 0 ? ghz : 1.0); /* up to BFRT_CYCLES_MAX / 0.001 GHz */
  return ns < (double)INT64_MAX ? (int64_t)ns : INT64_MAX;
}

/* ---- Engines and the run. */

/* A fiber's entry: makecontext passes ints, so the Ctx comes in halves. */
static void fiber_main(unsigned hi, unsigned lo) {
  Ctx *cx = (Ctx *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);
  Sim *s = sim_of(cx);
#ifdef SIM_ASAN
  __sanitizer_finish_switch_fiber(NULL, &s->scheduler_bottom, &s->scheduler_size);
#endif
  if (!rt_failed(cx->rt) && !setjmp(cx->unwind)) cx->rt->k->entry[cx->engine](cx, cx->rt->params);
  me(cx)->state = SIM_FINISHED;
  s->finished++;
  to_scheduler(s, me(cx), 1);
}

static int start_fiber(Sim *s, Ctx *cx) {
  SimEngine *x = &s->eng[cx->engine];
  void *stack = mmap(NULL, SIM_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (stack == MAP_FAILED || getcontext(&x->fiber)) {
    if (stack != MAP_FAILED) munmap(stack, SIM_STACK_BYTES);
    return -1;
  }
  x->stack = stack;
  x->stack_id = VALGRIND_STACK_REGISTER(x->stack, x->stack + SIM_STACK_BYTES);
  x->fiber.uc_stack.ss_sp = x->stack;
  x->fiber.uc_stack.ss_size = SIM_STACK_BYTES;
  x->fiber.uc_link = NULL;
  uintptr_t p = (uintptr_t)cx;
  makecontext(&x->fiber, (void (*)(void))fiber_main, 2, (unsigned)(p >> 16 >> 16), (unsigned)p);
  return 0;
}

static void init(Sim *s, const bfrt *rt) {
  memset(s, 0, sizeof *s);
  s->nengines = rt->k->nengines;
  s->running = -1;
  int64_t split = rt->opt->costs->kind[BFRT_KIND_DMA].dma_split;
  s->ndma = (int)(split < BFRT_MAX_DMA_SPLIT ? split : BFRT_MAX_DMA_SPLIT);
  for (int e = 0; e < s->nengines; e++) {
    s->eng[e].cost = &rt->opt->costs->kind[rt->k->engine_kinds[e]];
    s->eng[e].window = bfrt_op_window(rt->opt->costs, rt->k->engine_kinds[e]);
  }
}

static void destroy(Sim *s) {
  for (int e = 0; e < s->nengines; e++) {
    free(s->eng[e].done_at);
    free(s->eng[e].flight);
    if (!s->eng[e].stack) continue;
    VALGRIND_STACK_DEREGISTER(s->eng[e].stack_id);
    munmap(s->eng[e].stack, SIM_STACK_BYTES);
  }
}

static int kinds_valid(const bfrt *rt) {
  for (int e = 0; e < rt->k->nengines; e++)
    if (rt->k->engine_kinds[e] < 0 || rt->k->engine_kinds[e] >= BFRT_NKINDS) return 0;
  return 1;
}

/* Resume engines, smallest clock first, until all have finished; after a
 * failure (or a deadlock, reported here) each remaining one unwinds. */
static void schedule(bfrt *rt, Sim *s) {
  while (s->finished < s->nengines) {
    int next = rt_failed(rt) ? pick_unfinished(s) : pick_next(s);
    if (next < 0) {
      report_deadlock(rt, s);
      continue;
    }
    resume(s, next);
  }
}

static void sim_run(bfrt *rt) {
  if (!rt->opt->costs) {
    rt_record_failure(rt, 0, "the cycle simulator needs a cost model (bfrt_options.costs)");
    return;
  }
  if (!kinds_valid(rt)) {
    rt_record_failure(rt, 0, "an engine has an unknown kind");
    return;
  }
  Sim s;
  init(&s, rt);
  rt->exec_state = &s;
  for (int e = 0; e < s.nengines; e++)
    if (start_fiber(&s, &rt->cx[e])) {
      rt_record_failure(rt, 0, "out of memory for the stack of engine %s", rt->k->engine_names[e]);
      s.eng[e].state = SIM_FINISHED; /* never started */
      s.finished++;
    }
  schedule(rt, &s);
  for (int e = 0; e < s.nengines; e++) {
    if (!rt_failed(rt)) drain(rt, e, &s.eng[e]);
    rt->stats.cycles = max64(rt->stats.cycles, s.eng[e].clock);
  }
  rt->exec_state = NULL;
  destroy(&s);
}

const Executor rt_sim_executor = {
    .run = sim_run,
    .before_op = sim_before_op,
    .complete = sim_complete,
    .wait = sim_wait,
    .count = sim_count,
    .idle = sim_idle,
    .barrier = sim_barrier,
    .bookkeep = sim_bookkeep,
    .device_read = sim_device_read,
    .stop = sim_stop,
    .now_ns = sim_now_ns,
};

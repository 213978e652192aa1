/* threads.c: the threads executor: one POSIX thread per engine, real
 * concurrency, and a watchdog on the host thread.
 *
 * Counters. Each engine's completion counter is a C11 atomic, incremented
 * with a sequentially consistent read-modify-write after the op's effects
 * (so a waiter that reads the new value with acquire sees them). A wait
 * first rereads the counter a bounded number of times, then yields the
 * core a bounded number of times (on 2 cores for 5 engines that lets the
 * producer run, and a hand-off costs about 1 us instead of the 10 us of a
 * sleep and wake-up; see bench/wait_cost.c), then sleeps on the counter's
 * condition variable. Nothing spins without bound. A lost wake-up is impossible: the waiter announces
 * itself (waiters++) before its last check of the value, and the producer
 * checks for waiters after its increment; with both in the single total
 * order of seq_cst operations, one of them sees the other, and the
 * broadcast is taken under the mutex the waiter sleeps with. A sleeper
 * records its threshold under that mutex before its last check, and the
 * producer wakes the sleepers only when the new value reaches one of
 * them, so a chain of hand-offs does not wake every sleeper at every
 * increment.
 *
 * Narrow counters. The atomic holds the true count (the watchdog reports
 * it). A wait compares it whole: kernel.c checks, at every read an engine
 * makes, that the counter's low counter_bits bits extend to it from what
 * the engine last saw (rt_read_counters), and before each op the engine
 * holds until every consumer of its counter has seen enough of it, or is
 * blocked (rt_holder; back-pressure, docs/algorithm.md section 7). A
 * window the protocol failed to keep fails the run, never passes by luck.
 *
 * Barriers. The last engine to arrive resets every counter to 0 while all
 * the others are still inside the barrier (so no counter changes under a
 * waiter), then releases them by bumping the generation. The others yield
 * a bounded number of times, then sleep, as in a wait.
 *
 * Watchdog. The host thread sleeps until every engine has finished, waking
 * a few times per watchdog period. If every engine that has not finished
 * is blocked (in a wait or a barrier) and no counter has changed for the
 * whole period, the kernel is deadlocked: it
 * reports who waits on whom and every counter, and fails the run; the
 * failure wakes every engine, and each unwinds out of its entry function.
 *
 * Jitter. With a seed, each engine draws from its own PRNG before each op
 * and sometimes yields, spins briefly or sleeps a few microseconds, which
 * shakes out interleavings a race needs. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rt.h"
#include "util/clock.h"
#include "util/random.h"

enum { SPIN_READS = 256, YIELDS = 16, DEFAULT_WATCHDOG_MS = 3000, MAX_TICK_MS = 50 };

typedef struct Counter {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  _Atomic int64_t value;
  atomic_int waiters;
  int64_t sleeping_for[BFRT_MAX_ENGINES]; /* under mu: each sleeper's threshold, else INT64_MAX */
} Counter;

typedef struct Threads {
  Counter counters[BFRT_MAX_ENGINES];
  pthread_mutex_t barrier_mu;
  pthread_cond_t barrier_cv;
  int arrived;
  _Atomic uint64_t generation; /* barriers released */
  _Atomic uint64_t progress; /* counter changes, for the watchdog */
  pthread_mutex_t done_mu;
  pthread_cond_t done_cv; /* an engine finished, or the kernel failed */
  int done;
} Threads;

static Threads *state(Ctx *cx) { return cx->rt->exec_state; }

static void publish(Ctx *cx, int what, int engine, int64_t threshold) {
  atomic_store(&cx->blocked_engine, engine);
  atomic_store(&cx->blocked_threshold, threshold);
  atomic_store(&cx->blocked_line, cx->line);
  atomic_store(&cx->state, what);
}

/* ---- Jitter. */

static void threads_hold(Ctx *cx);

static void threads_before_op(Ctx *cx) {
  threads_hold(cx);
  if (!cx->rt->opt->jitter_seed) return;
  uint64_t r = splitmix64_next(&cx->jitter);
  switch (r & 7) {
  case 0: case 1: sched_yield(); break;
  case 2: nanosleep(&(struct timespec){0, (long)((r >> 8) % 20000)}, NULL); break;
  case 3:
    for (volatile uint64_t i = 0; i < (r >> 8) % 4096; i++) {
    }
    break;
  default: break;
  }
}

/* ---- Counters and waits. */

/* Whether a counter at value has reached threshold (exact: the reads are
 * checked against the window in kernel.c). */
static int reached(int64_t value, int64_t threshold) { return value >= threshold; }

static void threads_complete(Ctx *cx) {
  Threads *th = state(cx);
  Counter *c = &th->counters[cx->engine];
  atomic_fetch_add(&c->value, 1);
  atomic_fetch_add_explicit(&th->progress, 1, memory_order_relaxed);
  if (atomic_load(&c->waiters) > 0) {
    pthread_mutex_lock(&c->mu);
    int64_t value = atomic_load(&c->value);
    for (int e = 0; e < BFRT_MAX_ENGINES; e++)
      if (c->sleeping_for[e] != INT64_MAX && reached(value, c->sleeping_for[e])) {
        pthread_cond_broadcast(&c->cv);
        break;
      }
    pthread_mutex_unlock(&c->mu);
  }
}

static void threads_wait(Ctx *cx, int engine, int64_t threshold) {
  Counter *c = &state(cx)->counters[engine];
  for (int i = 0; i < SPIN_READS + YIELDS; i++) {
    int64_t value = atomic_load_explicit(&c->value, memory_order_acquire);
    if (reached(value, threshold)) return;
    if (i >= SPIN_READS) sched_yield();
  }
  publish(cx, ENGINE_WAITING, engine, threshold);
  pthread_mutex_lock(&c->mu);
  c->sleeping_for[cx->engine] = threshold;
  atomic_fetch_add(&c->waiters, 1);
  while (!reached(atomic_load(&c->value), threshold) && !rt_failed(cx->rt))
    pthread_cond_wait(&c->cv, &c->mu);
  atomic_fetch_sub(&c->waiters, 1);
  c->sleeping_for[cx->engine] = INT64_MAX;
  int64_t value = atomic_load(&c->value);
  pthread_mutex_unlock(&c->mu);
  atomic_store(&cx->state, ENGINE_RUNNING);
  if (!reached(value, threshold)) rt_unwind(cx);
}

/* Back-pressure: hold the next op until every consumer of this engine's
 * counter has seen enough of it (rt_holder); the consumer is running, so
 * yield, and sleep briefly after a while. */
static void threads_hold(Ctx *cx) {
  int64_t own = atomic_load(&state(cx)->counters[cx->engine].value);
  int holder = rt_holder(cx, own, own + 1);
  if (holder < 0) return;
  cx->held++;
  publish(cx, ENGINE_HELD, holder, own + 1);
  for (int i = 0; (holder = rt_holder(cx, own, own + 1)) >= 0 && !rt_failed(cx->rt); i++) {
    if (i < YIELDS) sched_yield();
    else nanosleep(&(struct timespec){0, 1000}, NULL);
    atomic_store(&cx->blocked_engine, holder);
  }
  atomic_store(&cx->state, ENGINE_RUNNING);
  if (holder >= 0) rt_unwind(cx);
}

static int64_t threads_count(Ctx *cx, int engine) { return atomic_load(&state(cx)->counters[engine].value); }

static int threads_idle(Ctx *cx, int engine) { return atomic_load(&cx->rt->cx[engine].state) != ENGINE_RUNNING; }

/* Release the others when cx is the last to arrive; 1 if it was. */
static int arrive(bfrt *rt, Threads *th, uint64_t *generation) {
  int nengines = rt->k->nengines;
  pthread_mutex_lock(&th->barrier_mu);
  *generation = atomic_load(&th->generation);
  int last = ++th->arrived == nengines;
  if (last) {
    th->arrived = 0;
    for (int e = 0; e < nengines; e++) {
      rt->barrier_positions[e] = rt->cx[e].completed;
      atomic_store(&th->counters[e].value, 0);
    }
    rt_forget_seen(rt);
    atomic_store(&th->generation, *generation + 1);
    atomic_fetch_add(&th->progress, 1);
    pthread_cond_broadcast(&th->barrier_cv);
  }
  pthread_mutex_unlock(&th->barrier_mu);
  return last;
}

static void threads_barrier(Ctx *cx) {
  Threads *th = state(cx);
  uint64_t generation;
  if (arrive(cx->rt, th, &generation)) return;
  publish(cx, ENGINE_AT_BARRIER, -1, 0);
  for (int i = 0; i < YIELDS && atomic_load(&th->generation) == generation; i++) sched_yield();
  pthread_mutex_lock(&th->barrier_mu);
  while (atomic_load(&th->generation) == generation && !rt_failed(cx->rt))
    pthread_cond_wait(&th->barrier_cv, &th->barrier_mu);
  int released = atomic_load(&th->generation) != generation;
  pthread_mutex_unlock(&th->barrier_mu);
  atomic_store(&cx->state, ENGINE_RUNNING);
  if (!released) rt_unwind(cx);
}

static void broadcast(pthread_mutex_t *mu, pthread_cond_t *cv) {
  pthread_mutex_lock(mu);
  pthread_cond_broadcast(cv);
  pthread_mutex_unlock(mu);
}

static void threads_stop(bfrt *rt) {
  Threads *th = rt->exec_state;
  for (int e = 0; e < rt->k->nengines; e++) broadcast(&th->counters[e].mu, &th->counters[e].cv);
  broadcast(&th->barrier_mu, &th->barrier_cv);
  broadcast(&th->done_mu, &th->done_cv);
}

/* ---- The watchdog. */

/* Whether every engine that has not finished is blocked, and one is. An
 * engine inside a long op is not stuck, however long it takes. */
static int all_blocked(bfrt *rt) {
  int blocked = 0;
  for (int e = 0; e < rt->k->nengines; e++) {
    int s = atomic_load(&rt->cx[e].state);
    if (s == ENGINE_RUNNING) return 0;
    blocked |= s != ENGINE_DONE;
  }
  return blocked;
}

static size_t describe_engine(bfrt *rt, Threads *th, int e, char *buf, size_t size) {
  const char *const *names = rt->k->engine_names;
  Ctx *cx = &rt->cx[e];
  int line = atomic_load(&cx->blocked_line), on = atomic_load(&cx->blocked_engine);
  switch (atomic_load(&cx->state)) {
  case ENGINE_WAITING:
    return (size_t)snprintf(buf, size, "\n  engine %s, line %d: waits for %s's counter >= %lld (it is %lld)",
                            names[e], line, names[on], (long long)atomic_load(&cx->blocked_threshold),
                            (long long)atomic_load(&th->counters[on].value));
  case ENGINE_AT_BARRIER:
    return (size_t)snprintf(buf, size, "\n  engine %s, line %d: waits at a barrier", names[e], line);
  case ENGINE_HELD:
    return (size_t)snprintf(buf, size, "\n  engine %s, line %d: held until %s has seen its counter (back-pressure)",
                            names[e], line, names[on]);
  case ENGINE_DONE: return (size_t)snprintf(buf, size, "\n  engine %s: finished", names[e]);
  default: return (size_t)snprintf(buf, size, "\n  engine %s: running", names[e]);
  }
}

static void report_deadlock(bfrt *rt, Threads *th, int64_t limit_ns) {
  char buf[sizeof rt->error];
  size_t n = (size_t)snprintf(buf, sizeof buf, "deadlock: no engine made progress for %.3g s",
                              (double)limit_ns / 1e9);
  for (int e = 0; e < rt->k->nengines && n < sizeof buf; e++)
    n += describe_engine(rt, th, e, buf + n, sizeof buf - n);
  if (n < sizeof buf) n += (size_t)snprintf(buf + n, sizeof buf - n, "\n  counters:");
  for (int e = 0; e < rt->k->nengines && n < sizeof buf; e++)
    n += (size_t)snprintf(buf + n, sizeof buf - n, " %s=%lld", rt->k->engine_names[e],
                          (long long)atomic_load(&th->counters[e].value));
  rt_record_failure(rt, 0, "%s", buf);
}

/* The watchdog period in nanoseconds: the default for 0, a negative value
 * or NaN; INT64_MAX, a period never reached, i.e. no watchdog, for one too
 * long for int64 nanoseconds (about 292 years; INFINITY included), whose
 * conversion would overflow. */
static int64_t watchdog_limit_ns(double seconds) {
  if (!(seconds > 0)) return (int64_t)DEFAULT_WATCHDOG_MS * 1000000;
  if (seconds >= (double)INT64_MAX / 1e9) return INT64_MAX;
  return (int64_t)(seconds * 1e9);
}

static void watch(bfrt *rt, Threads *th, int nthreads) {
  int64_t limit = watchdog_limit_ns(rt->opt->watchdog_seconds);
  int64_t tick = limit / 4 < (int64_t)MAX_TICK_MS * 1000000 ? limit / 4 + 1 : (int64_t)MAX_TICK_MS * 1000000;
  uint64_t seen = atomic_load(&th->progress);
  int64_t since = clock_now_ns();
  pthread_mutex_lock(&th->done_mu);
  while (th->done < nthreads) {
    struct timespec until = clock_after_ns(tick);
    pthread_cond_timedwait(&th->done_cv, &th->done_mu, &until);
    uint64_t progress = atomic_load(&th->progress);
    int64_t now = clock_now_ns();
    if (progress != seen || rt_failed(rt) || !all_blocked(rt)) {
      seen = progress;
      since = now;
    } else if (now - since >= limit) {
      pthread_mutex_unlock(&th->done_mu);
      report_deadlock(rt, th, limit);
      pthread_mutex_lock(&th->done_mu);
    }
  }
  pthread_mutex_unlock(&th->done_mu);
}

/* ---- Engines. */

static void *engine_thread(void *arg) {
  Ctx *cx = arg;
  bfrt *rt = cx->rt;
  if (!setjmp(cx->unwind)) rt->k->entry[cx->engine](cx, rt->params);
  Threads *th = rt->exec_state;
  atomic_store(&cx->state, ENGINE_DONE);
  pthread_mutex_lock(&th->done_mu);
  th->done++;
  pthread_cond_signal(&th->done_cv);
  pthread_mutex_unlock(&th->done_mu);
  return NULL;
}

static void init(Threads *th, int nengines) {
  memset(th, 0, sizeof *th);
  for (int e = 0; e < nengines; e++) {
    pthread_mutex_init(&th->counters[e].mu, NULL);
    pthread_cond_init(&th->counters[e].cv, NULL);
    for (int s = 0; s < BFRT_MAX_ENGINES; s++) th->counters[e].sleeping_for[s] = INT64_MAX;
  }
  pthread_mutex_init(&th->barrier_mu, NULL);
  pthread_cond_init(&th->barrier_cv, NULL);
  pthread_mutex_init(&th->done_mu, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&th->done_cv, &attr);
  pthread_condattr_destroy(&attr);
}

static void destroy(Threads *th, int nengines) {
  for (int e = 0; e < nengines; e++) {
    pthread_mutex_destroy(&th->counters[e].mu);
    pthread_cond_destroy(&th->counters[e].cv);
  }
  pthread_mutex_destroy(&th->barrier_mu);
  pthread_cond_destroy(&th->barrier_cv);
  pthread_mutex_destroy(&th->done_mu);
  pthread_cond_destroy(&th->done_cv);
}

static void threads_run(bfrt *rt) {
  int n = rt->k->nengines, started = 0;
  Threads th;
  pthread_t tids[BFRT_MAX_ENGINES];
  init(&th, n);
  rt->exec_state = &th;
  for (; started < n; started++)
    if (pthread_create(&tids[started], NULL, engine_thread, &rt->cx[started])) {
      rt_record_failure(rt, 0, "cannot start a thread for engine %s", rt->k->engine_names[started]);
      break;
    }
  watch(rt, &th, started);
  for (int e = 0; e < started; e++) pthread_join(tids[e], NULL);
  rt->exec_state = NULL;
  destroy(&th, n);
}

const Executor rt_threads_executor = {
    .run = threads_run,
    .before_op = threads_before_op,
    .complete = threads_complete,
    .wait = threads_wait,
    .count = threads_count,
    .idle = threads_idle,
    .barrier = threads_barrier,
    .bookkeep = NULL,
    .stop = threads_stop,
};

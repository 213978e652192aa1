/* test_sim.c: the cycle simulator on hand-written kernels, and the cost
 * rules.
 *
 * The kernels are written the way the backend emits them (a descriptor and
 * engine functions calling bfrt_op / bfrt_wait / bfrt_barrier /
 * bfrt_bookkeep), run with a cost model of round numbers, and every
 * makespan, busy and stall figure asserted here is worked out by hand in
 * the comment above its test. Also: runs repeat to the cycle whatever the
 * host does (jitter seeds, a busy core); deadlocks and kernel errors end
 * the run with a report instead of hanging; the trace is in simulated
 * time; the race checker works under the simulator; pipelined DMA queues
 * (dma_outstanding) overlap transfers but keep same-engine dependences. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/bfrt_cost.h"

/* ---- A cost model of round numbers.
 * dma: 10 + 100 + bytes/4, so a [2,3] load or store is 116 cycles;
 * act: 10 + elements, so a [2,3] scale is 16; both: semaphore latency 5,
 * wait 2, bookkeeping 3 per operation, barrier 50; 1 GHz. */
static bfrt_costs round_costs(void) {
  bfrt_costs c = {.clock_ghz = 1.0};
  for (int k = 0; k < BFRT_NKINDS; k++)
    c.kind[k] = (bfrt_engine_cost){.overhead = 10, .dma_latency = 100, .dma_bytes_per_cycle = 4,
                                   .elems_per_cycle = {1, 1, 1, 1, 1}, .sem_latency = 5, .wait_cost = 2,
                                   .bookkeep_cost = 3, .barrier_cost = 50};
  return c;
}

enum { DMA, ACT };
static const char *const two_engines[] = {"dma", "act"};
static const int two_kinds[] = {BFRT_KIND_DMA, BFRT_KIND_ACT};
static const char *const n_param[] = {"N"};

static const bfrt_tile_desc tiles[] = {{"x", 2, 2, 3, BFRT_DTYPE_F32}, {"y", 1, 2, 3, BFRT_DTYPE_F32}};
static const bfrt_tensor_desc tensors[] = {{"X", BFRT_IN, BFRT_DTYPE_F32}, {"Y", BFRT_OUT, BFRT_DTYPE_F32}};

static int shape_of(const int64_t *p, int t, int64_t shape[2]) {
  (void)t;
  shape[0] = 2 * (p[0] > 0 ? p[0] : 1);
  shape[1] = 3;
  return 0;
}

static void load(bfrt_ctx *cx, int64_t slot, int64_t row) {
  bfrt_arg a[] = {BFRT_TILE(0, slot), BFRT_HBM(0, row, 0)};
  bfrt_op(cx, BFRT_LOAD, 2, 2, a);
}

static void store(bfrt_ctx *cx, int64_t row) {
  bfrt_arg a[] = {BFRT_HBM(1, row, 0), BFRT_TILE(1, 0)};
  bfrt_op(cx, BFRT_STORE, 4, 2, a);
}

static void scale(bfrt_ctx *cx, int src, int64_t slot, float f) {
  bfrt_arg a[] = {BFRT_TILE(1, 0), BFRT_TILE(src, slot), BFRT_IMM(f)};
  bfrt_op(cx, BFRT_SCALE, 3, 3, a);
}

/* ---- scale2(N): Y = 2 X through a 2-slot x and one y.
 *   dma: for i { if i >= 2: wait act >= i-1; load x[i%2]; wait act >= i+1; store }
 *   act: for i { wait dma >= 2i+1; bookkeep 2; scale y, x[i%2], 2 } */
static void scale2_dma(bfrt_ctx *cx, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; i++) {
    if (i >= 2) bfrt_wait(cx, ACT, i - 1, 2);
    load(cx, i % 2, i);
    bfrt_wait(cx, ACT, i + 1, 4);
    store(cx, i);
  }
}

static void scale2_act(bfrt_ctx *cx, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; i++) {
    bfrt_wait(cx, DMA, 2 * i + 1, 3);
    bfrt_bookkeep(cx, 2);
    scale(cx, 0, i % 2, 2.0f);
  }
}

static void (*const scale2_entry[])(bfrt_ctx *, const int64_t *) = {scale2_dma, scale2_act};
static const bfrt_kernel scale2 = {"scale2", 1, n_param, 2, two_engines, two_kinds, scale2_entry,
                                   2, tiles, 2, tensors, shape_of, 0, NULL};

static bfrt *new_instance(const bfrt_kernel *k, int64_t n) {
  const char *err = NULL;
  bfrt *rt = bfrt_new(k, &n, &err);
  assert_non_null(rt);
  int64_t shape[2];
  bfrt_tensor_shape(rt, 0, shape);
  float *x = bfrt_tensor_data(rt, 0);
  for (int64_t i = 0; i < shape[0] * shape[1]; i++) x[i] = (float)i * 0.75f - 3.0f;
  return rt;
}

static void assert_doubled(bfrt *rt, int64_t rows) {
  const float *x = bfrt_tensor_data(rt, 0), *y = bfrt_tensor_data(rt, 1);
  for (int64_t i = 0; i < rows * 3; i++)
    if (y[i] != 2 * x[i]) fail_msg("Y[%lld] = %g, want %g", (long long)i, y[i], 2 * x[i]);
}

static const bfrt_stats *run_sim(bfrt *rt, const bfrt_costs *costs) {
  bfrt_options opt = {.exec = BFRT_EXEC_SIM, .costs = costs};
  if (bfrt_run(rt, &opt)) fail_msg("%s", bfrt_error(rt));
  return bfrt_get_stats(rt);
}

/* N = 1. dma: load 0..116 (counter 1 at 116). act: wait dma >= 1 ends at
 * 116 + 5 + 2 = 123, bookkeeping 2 x 3 to 129, scale to 145. dma: wait
 * act >= 1 ends at max(116, 145 + 5) + 2 = 152, store to 268.
 * dma busy 232, stall 152 - 116 = 36; act busy 16, stall 123.
 * N = 2 continues: dma load 268..384; act waits for dma >= 3 until
 * 384 + 7 = 391, bookkeeping to 397, scale to 413; dma waits until
 * 413 + 7 = 420, store to 536. */
static void test_hand_computed_waits(void **state) {
  (void)state;
  bfrt_costs costs = round_costs();
  bfrt *rt = new_instance(&scale2, 1);
  const bfrt_stats *s = run_sim(rt, &costs);
  assert_int_equal(s->cycles, 268);
  assert_int_equal(s->busy[DMA], 232);
  assert_int_equal(s->stall[DMA], 36);
  assert_int_equal(s->busy[ACT], 16);
  assert_int_equal(s->stall[ACT], 123);
  assert_int_equal(s->instructions, 3);
  assert_int_equal(s->waits, 2);
  assert_int_equal(s->bookkeeping, 2);
  assert_doubled(rt, 2);
  bfrt_delete(rt);
  rt = new_instance(&scale2, 2);
  s = run_sim(rt, &costs);
  assert_int_equal(s->cycles, 536);
  assert_int_equal(s->busy[DMA], 464);
  assert_int_equal(s->busy[ACT], 32);
  assert_doubled(rt, 4);
  bfrt_delete(rt);
}

/* scale2 with act's 2 bookkeeping operations as 2 scratch operations
 * (bfrt_spill: values kept out of registers): each costs bookkeep_cost
 * like a bookkeeping operation, so every figure of
 * test_hand_computed_waits stands, and they are counted as spills, not
 * bookkeeping; the threads executor counts them too. */
static void scale2_spill_act(bfrt_ctx *cx, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; i++) {
    bfrt_wait(cx, DMA, 2 * i + 1, 3);
    bfrt_spill(cx, 2);
    scale(cx, 0, i % 2, 2.0f);
  }
}

static void (*const scale2_spill_entry[])(bfrt_ctx *, const int64_t *) = {scale2_dma, scale2_spill_act};
static const bfrt_kernel scale2_spill = {"scale2_spill", 1, n_param, 2, two_engines, two_kinds, scale2_spill_entry,
                                         2, tiles, 2, tensors, shape_of, 0, NULL};

static void test_spills_cost_bookkeeping(void **state) {
  (void)state;
  bfrt_costs costs = round_costs();
  for (int64_t n = 1; n <= 2; n++) {
    bfrt *rt = new_instance(&scale2_spill, n);
    const bfrt_stats *s = run_sim(rt, &costs);
    assert_int_equal(s->cycles, n == 1 ? 268 : 536);
    assert_int_equal(s->stall[ACT], n == 1 ? 123 : 123 + (391 - 145));
    assert_int_equal(s->spills, 2 * n);
    assert_int_equal(s->bookkeeping, 0);
    assert_doubled(rt, 2 * n);
    bfrt_options opt = {.exec = BFRT_EXEC_THREADS};
    if (bfrt_run(rt, &opt)) fail_msg("%s", bfrt_error(rt));
    assert_int_equal(bfrt_get_stats(rt)->spills, 2 * n);
    bfrt_delete(rt);
  }
}

/* ---- Pipelined DMA (dma_outstanding > 1): a [2,3] transfer occupies the
 * queue 10 + 6 = 16 cycles and completes 116 after its start. */
static bfrt_costs pipelined_costs(int64_t outstanding) {
  bfrt_costs c = round_costs();
  c.kind[BFRT_KIND_DMA].dma_outstanding = outstanding;
  return c;
}

/* scale2 with two transfers in flight.
 * N = 1. dma: load 0..16, done 116. act: wait dma >= 1 ends at 123,
 * bookkeeping to 129, scale to 145. dma: wait act >= 1 ends at
 * max(16, 150) + 2 = 152, store 152..168, done 268; the end waits for it.
 * dma busy 2 x 16, stall (152 - 16) + (268 - 168) = 236.
 * N = 2 continues: load 1 at 168 (load 0, two back, done at 116), done
 * 284; act waits until 284 + 7 = 291, bookkeeping to 297, scale to 313;
 * dma waits until 313 + 7 = 320, store 1 done 436 (one transfer at a
 * time: 536, test_hand_computed_waits). */
static void test_pipelined_waits(void **state) {
  (void)state;
  bfrt_costs costs = pipelined_costs(2);
  bfrt *rt = new_instance(&scale2, 1);
  const bfrt_stats *s = run_sim(rt, &costs);
  assert_int_equal(s->cycles, 268);
  assert_int_equal(s->busy[DMA], 32);
  assert_int_equal(s->stall[DMA], 236);
  assert_int_equal(s->busy[ACT], 16);
  assert_int_equal(s->stall[ACT], 123);
  assert_doubled(rt, 2);
  bfrt_delete(rt);
  rt = new_instance(&scale2, 2);
  s = run_sim(rt, &costs);
  assert_int_equal(s->cycles, 436);
  assert_int_equal(s->busy[DMA], 64);
  assert_int_equal(s->busy[ACT], 32);
  assert_doubled(rt, 4);
  bfrt_delete(rt);
}

/* bounce(N), on dma alone: load x[i%2], X[i]; store Y[i], x[i%2]. Each
 * store reads what the load before it on the same engine wrote, which
 * needs no wait: the engine itself starts the store when the load is done.
 * Two in flight, N = 3: load 0 at 0 (free 16, done 116); store 0 at 116
 * (free 132, done 232); load 1 (x[1], no conflict; load 0 done) at 132
 * (free 148, done 248); store 1 at 248 (done 364); load 2 (x[0], read by
 * store 0, done 232) at 264 (done 380); store 2 at 380, done 496.
 * busy 6 x 16 = 96, stall 4 x 100 = 400 (three stores and the end).
 * One at a time: 6 x 116 = 696. */
static void store_x(bfrt_ctx *cx, int64_t slot, int64_t row) {
  bfrt_arg a[] = {BFRT_HBM(1, row, 0), BFRT_TILE(0, slot)};
  bfrt_op(cx, BFRT_STORE, 6, 2, a);
}

static void bounce_dma(bfrt_ctx *cx, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; i++) {
    load(cx, i % 2, i);
    store_x(cx, i % 2, i);
  }
}

static void idle(bfrt_ctx *cx, const int64_t *p) {
  (void)cx;
  (void)p;
}

static void (*const bounce_entry[])(bfrt_ctx *, const int64_t *) = {bounce_dma, idle};
static const bfrt_kernel bounce = {"bounce", 1, n_param, 2, two_engines, two_kinds, bounce_entry,
                                   2, tiles, 2, tensors, shape_of, 0, NULL};

static void assert_copied(bfrt *rt, int64_t rows) {
  const float *x = bfrt_tensor_data(rt, 0), *y = bfrt_tensor_data(rt, 1);
  assert_memory_equal(x, y, (size_t)rows * 3 * sizeof(float));
}

static void test_pipelined_same_engine(void **state) {
  (void)state;
  bfrt_costs costs = pipelined_costs(2);
  bfrt *rt = new_instance(&bounce, 3);
  const bfrt_stats *s = run_sim(rt, &costs);
  assert_int_equal(s->cycles, 496);
  assert_int_equal(s->busy[DMA], 96);
  assert_int_equal(s->stall[DMA], 400);
  assert_int_equal(s->waits, 0);
  assert_copied(rt, 6);
  costs = pipelined_costs(1);
  s = run_sim(rt, &costs);
  assert_int_equal(s->cycles, 696);
  assert_int_equal(s->busy[DMA], 696);
  assert_int_equal(s->stall[DMA], 0);
  bfrt_delete(rt);
}

/* Three loads to x[0], x[1], y: no conflicts, so only dma_outstanding
 * limits them. 1: 3 x 116 = 348. 2: at 0 and 16 (done 116, 132); the
 * third waits for the first: 116, done 232. 3: at 0, 16, 32, done 148. */
static void three_loads(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  load(cx, 0, 0);
  load(cx, 1, 1);
  bfrt_arg a[] = {BFRT_TILE(1, 0), BFRT_HBM(0, 2, 0)};
  bfrt_op(cx, BFRT_LOAD, 8, 2, a);
}

static void (*const loads_entry[])(bfrt_ctx *, const int64_t *) = {three_loads, idle};
static const bfrt_kernel loads = {"loads", 1, n_param, 2, two_engines, two_kinds, loads_entry,
                                  2, tiles, 2, tensors, shape_of, 0, NULL};

static void test_pipelined_window(void **state) {
  (void)state;
  const int64_t want[] = {[0] = 348, [1] = 348, [2] = 232, [3] = 148, [4] = 148};
  bfrt *rt = new_instance(&loads, 3);
  for (int64_t n = 0; n <= 4; n++) {
    bfrt_costs costs = pipelined_costs(n);
    const bfrt_stats *s = run_sim(rt, &costs);
    if (s->cycles != want[n])
      fail_msg("dma_outstanding %lld: %lld cycles, want %lld", (long long)n, (long long)s->cycles,
               (long long)want[n]);
  }
  bfrt_delete(rt);
}

/* ---- phases: barriers.
 *   dma: load x[0]; barrier; barrier; wait act >= 1; store
 *   act: barrier; scale y, x[0], 2; barrier; scale y, y, 1
 * First barrier: arrivals dma 116, act 0, release 116 + 50 = 166. act's
 * scale 166..182. Second: arrivals dma 166, act 182, release 232, and the
 * counters restart at 0, so act >= 1 means the scale after it:
 * 232..248, visible at 253, the wait ends at 255, store 255..371.
 * dma stall: 50 + 66 + 23 = 139; act stall: 166 + 50 = 216. */
static void phases_dma(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  load(cx, 0, 0);
  bfrt_barrier(cx, 5);
  bfrt_barrier(cx, 7);
  bfrt_wait(cx, ACT, 1, 8);
  store(cx, 0);
}

static void phases_act(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  bfrt_barrier(cx, 5);
  scale(cx, 0, 0, 2.0f);
  bfrt_barrier(cx, 7);
  scale(cx, 1, 0, 1.0f);
}

static void (*const phases_entry[])(bfrt_ctx *, const int64_t *) = {phases_dma, phases_act};
static const bfrt_kernel phases = {"phases", 1, n_param, 2, two_engines, two_kinds, phases_entry,
                                   2, tiles, 2, tensors, shape_of, 0, NULL};

static void test_hand_computed_barriers(void **state) {
  (void)state;
  bfrt_costs costs = round_costs();
  bfrt *rt = new_instance(&phases, 1);
  const bfrt_stats *s = run_sim(rt, &costs);
  assert_int_equal(s->cycles, 371);
  assert_int_equal(s->barriers, 2);
  assert_int_equal(s->busy[DMA], 232);
  assert_int_equal(s->stall[DMA], 139);
  assert_int_equal(s->busy[ACT], 32);
  assert_int_equal(s->stall[ACT], 216);
  assert_doubled(rt, 2);
  bfrt_delete(rt);
}

/* ---- Determinism. */

static void *burn(void *arg) {
  atomic_int *stop = arg;
  volatile uint64_t x = 0;
  while (!atomic_load(stop)) x++;
  return NULL;
}

/* The same cycles, busy and stall on every run, with jitter asked for (the
 * simulator ignores it) and with another thread competing for a core. */
static void test_deterministic(void **state) {
  (void)state;
  bfrt_costs costs = round_costs();
  bfrt *rt = new_instance(&scale2, 40);
  bfrt_stats first = *run_sim(rt, &costs);
  assert_true(first.cycles > 40 * 232);
  atomic_int stop = 0;
  pthread_t burner;
  assert_int_equal(pthread_create(&burner, NULL, burn, &stop), 0);
  for (uint64_t seed = 0; seed < 6; seed++) {
    bfrt_options opt = {.exec = BFRT_EXEC_SIM, .costs = &costs, .jitter_seed = seed * 7919};
    assert_int_equal(bfrt_run(rt, &opt), 0);
    const bfrt_stats *s = bfrt_get_stats(rt);
    assert_int_equal(s->cycles, first.cycles);
    assert_memory_equal(s->busy, first.busy, sizeof first.busy);
    assert_memory_equal(s->stall, first.stall, sizeof first.stall);
    assert_doubled(rt, 80);
  }
  atomic_store(&stop, 1);
  pthread_join(burner, NULL);
  bfrt_delete(rt);
}

/* ---- Failures end the run. */

static void expect_failure(const bfrt_kernel *k, int64_t n, const char *const *needles) {
  bfrt_costs costs = round_costs();
  bfrt *rt = new_instance(k, n);
  bfrt_options opt = {.exec = BFRT_EXEC_SIM, .costs = &costs};
  assert_int_equal(bfrt_run(rt, &opt), -1);
  for (; *needles; needles++)
    if (!strstr(bfrt_error(rt), *needles)) fail_msg("'%s' not in: %s", *needles, bfrt_error(rt));
  bfrt_delete(rt);
}

static void stuck_act(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  bfrt_wait(cx, DMA, 5, 3);
}

static void one_load(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  load(cx, 0, 0);
}

static void (*const stuck_entry[])(bfrt_ctx *, const int64_t *) = {one_load, stuck_act};
static const bfrt_kernel stuck = {"stuck", 1, n_param, 2, two_engines, two_kinds, stuck_entry,
                                  2, tiles, 2, tensors, shape_of, 0, NULL};

static void lonely_act(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  bfrt_barrier(cx, 9);
}

static void (*const lonely_entry[])(bfrt_ctx *, const int64_t *) = {one_load, lonely_act};
static const bfrt_kernel lonely = {"lonely", 1, n_param, 2, two_engines, two_kinds, lonely_entry,
                                   2, tiles, 2, tensors, shape_of, 0, NULL};

static void out_of_bounds(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  load(cx, 0, 7);
}

static void (*const oob_entry[])(bfrt_ctx *, const int64_t *) = {out_of_bounds, stuck_act};
static const bfrt_kernel oob = {"oob", 1, n_param, 2, two_engines, two_kinds, oob_entry,
                                2, tiles, 2, tensors, shape_of, 0, NULL};

static void test_deadlocks_and_errors(void **state) {
  (void)state;
  expect_failure(&stuck, 1, (const char *[]){"kernel stuck: deadlock: every unfinished engine is blocked (simulated cycle 116)",
                                              "engine dma: finished",
                                              "engine act, line 3: waits for dma's counter >= 5 (it is 1)",
                                              "counters: dma=1 act=0", NULL});
  expect_failure(&lonely, 1, (const char *[]){"deadlock", "engine act, line 9: waits at a barrier", NULL});
  /* act is blocked when dma fails: it must be woken and unwound */
  expect_failure(&oob, 1, (const char *[]){"kernel oob, line 2: load from X[7, 0] is out of bounds", NULL});
  bfrt *rt = new_instance(&scale2, 1);
  bfrt_options opt = {.exec = BFRT_EXEC_SIM};
  assert_int_equal(bfrt_run(rt, &opt), -1);
  assert_non_null(strstr(bfrt_error(rt), "needs a cost model"));
  bfrt_delete(rt);
}

/* ---- The trace and the race checker. */

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

/* phases (see above) at 1 GHz: dma's wait runs 232..255 cycles, so 0.232 us
 * for 0.023 us; its store 255..371. */
static void test_trace_in_simulated_time(void **state) {
  (void)state;
  bfrt_costs costs = round_costs();
  char path[] = "/tmp/bfsync_sim_traceXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  bfrt *rt = new_instance(&phases, 1);
  bfrt_options opt = {.exec = BFRT_EXEC_SIM, .costs = &costs, .trace_path = path};
  assert_int_equal(bfrt_run(rt, &opt), 0);
  const char *json = read_all(path);
  assert_non_null(strstr(json, "\"name\":\"wait\",\"cat\":\"sync\",\"ph\":\"X\",\"pid\":1,\"tid\":0,"
                               "\"ts\":0.232,\"dur\":0.023,\"args\":{\"line\":8,\"engine\":\"act\",\"threshold\":1}"));
  assert_non_null(strstr(json, "\"name\":\"store\",\"cat\":\"op\",\"ph\":\"X\",\"pid\":1,\"tid\":0,"
                               "\"ts\":0.255,\"dur\":0.116"));
  assert_non_null(strstr(json, "\"name\":\"barrier\",\"cat\":\"sync\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"
                               "\"ts\":0.000,\"dur\":0.166"));
  bfrt_delete(rt);
  remove(path);
}

/* scale2 without act's wait: the checker must see the race under the
 * simulator too, and none in the correct kernel. */
static void racy_act(bfrt_ctx *cx, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; i++) scale(cx, 0, i % 2, 2.0f);
}

static void (*const racy_entry[])(bfrt_ctx *, const int64_t *) = {scale2_dma, racy_act};
static const bfrt_kernel racy = {"racy", 1, n_param, 2, two_engines, two_kinds, racy_entry,
                                 2, tiles, 2, tensors, shape_of, 0, NULL};

static void test_race_checker_under_sim(void **state) {
  (void)state;
  bfrt_costs costs = round_costs();
  bfrt_options opt = {.exec = BFRT_EXEC_SIM, .costs = &costs, .check = 1};
  bfrt *rt = new_instance(&scale2, 4);
  assert_int_equal(bfrt_run(rt, &opt), 0);
  assert_int_equal(bfrt_get_stats(rt)->races, 0);
  bfrt_delete(rt);
  rt = new_instance(&racy, 4);
  assert_int_equal(bfrt_run(rt, &opt), -1);
  assert_true(bfrt_get_stats(rt)->races > 0);
  bfrt_delete(rt);
}

/* ---- The cost rules, with trn1's shape of figures. */

static void test_cost_rules(void **state) {
  (void)state;
  bfrt_costs c = {0};
  c.kind[BFRT_KIND_DVE] = (bfrt_engine_cost){.overhead = 125, .lanes = 128, .two_input_factor = 2,
                                             .elems_per_cycle = {[BFRT_CLASS_ELEMWISE] = 0.8,
                                                                 [BFRT_CLASS_REDUCE] = 0.8}};
  c.kind[BFRT_KIND_PE] = (bfrt_engine_cost){.overhead = 30, .pe_rows = 128, .pe_cols = 128, .matmul_min_cols = 64,
                                            .matmul_narrow_factor = 4, .elems_per_cycle = {[BFRT_CLASS_MATMUL] = 0.5}};
  c.kind[BFRT_KIND_DMA] = (bfrt_engine_cost){.dma_latency = 1400, .dma_bytes_per_cycle = 20.7};
  const int64_t t32x96[2] = {32, 96}, t256x96[2] = {256, 96}, col[2] = {32, 1};
  /* nc_matmul [128, 512] = st [128, 128]^T mv [128, 512]: the stationary's 128 columns loaded, then 512 moving
   * columns, at 0.5 a cycle in fp32 and 4 x 0.5 in bf16 (docs/targets.md) */
  const int64_t d128x512[2] = {128, 512}, st128[2] = {128, 128}, st128x32[2] = {128, 32}, d32x16[2] = {32, 16};
  assert_int_equal(bfrt_op_timing_sized(&c, BFRT_KIND_PE, BFRT_NC_MATMUL, d128x512, st128, 4).completion, 30 + 256 + 1024);
  assert_int_equal(bfrt_op_timing_sized(&c, BFRT_KIND_PE, BFRT_NC_MATMUL_ACC, d128x512, st128, 2).completion, 30 + 64 + 256);
  /* st [128, 32] -> M = 32 columns loaded; N = 16 moving columns stream as the 64-column minimum */
  assert_int_equal(bfrt_op_timing_sized(&c, BFRT_KIND_PE, BFRT_NC_MATMUL, d32x16, st128x32, 4).completion, 30 + 64 + 128);
  /* nc_transpose on the pe is a transpose; on dve it streams like a one-input op */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_PE, BFRT_NC_TRANSPOSE, (int64_t[]){96, 32}, t32x96), 30 + 128);
  /* [P, N], P <= 128 lanes: ~N cycles at 0.8 per cycle = 120; two inputs 240 */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DVE, BFRT_COPY, t32x96, t32x96), 125 + 120);
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DVE, BFRT_ADD, t32x96, t32x96), 125 + 240);
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DVE, BFRT_ADD, t256x96, t256x96), 125 + 2 * 240);
  /* a row op reads one full tile and a per-partition column */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DVE, BFRT_MUL_ROW, t32x96, t32x96), 125 + 120);
  /* a reduction reads [32, 96] and writes [32, 1] */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DVE, BFRT_ROWSUM, col, t32x96), 125 + 120);
  /* [128,128]·[128,32]: one pass, no shorter than 64 columns: 64 / 0.5 */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_PE, BFRT_MATMUL, (int64_t[]){128, 32}, (int64_t[]){128, 128}), 30 + 128);
  /* [256,256]·[256,512]: 2 x 2 passes of 512 columns */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_PE, BFRT_MATMUL_ACC, (int64_t[]){256, 512}, (int64_t[]){256, 256}),
                   30 + 4 * 1024);
  /* transpose [96,32] <- [32,96]: M = 96, K = 32, N = 32 -> one pass of 64 */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_PE, BFRT_TRANSPOSE, (int64_t[]){96, 32}, t32x96), 30 + 128);
  /* 32 x 96 floats = 12288 bytes at 20.7 per cycle: 594 after rounding up */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DMA, BFRT_LOAD, t32x96, t32x96), 1400 + 594);
  /* a copy on a dma engine is a transfer too */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DMA, BFRT_COPY, t32x96, t32x96), 1400 + 594);
  /* one transfer at a time: the queue is busy until the transfer is done */
  bfrt_op_time one = bfrt_op_timing(&c, BFRT_KIND_DMA, BFRT_LOAD, t32x96, t32x96);
  assert_int_equal(one.occupancy, 1400 + 594);
  assert_int_equal(one.completion, 1400 + 594);
  assert_int_equal(bfrt_op_window(&c, BFRT_KIND_DMA), 1);
  /* pipelined: busy for the bytes only, done after the latency too */
  c.kind[BFRT_KIND_DMA].dma_outstanding = 16;
  bfrt_op_time piped = bfrt_op_timing(&c, BFRT_KIND_DMA, BFRT_LOAD, t32x96, t32x96);
  assert_int_equal(piped.occupancy, 594);
  assert_int_equal(piped.completion, 1400 + 594);
  assert_int_equal(bfrt_op_window(&c, BFRT_KIND_DMA), 16);
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DMA, BFRT_LOAD, t32x96, t32x96), 1400 + 594);
  /* compute engines are never pipelined */
  bfrt_op_time add = bfrt_op_timing(&c, BFRT_KIND_DVE, BFRT_ADD, t32x96, t32x96);
  assert_int_equal(add.occupancy, add.completion);
  assert_int_equal(bfrt_op_window(&c, BFRT_KIND_DVE), 1);
  /* out-of-range arguments cost nothing rather than crash */
  assert_int_equal(bfrt_op_cycles(NULL, BFRT_KIND_DMA, BFRT_COPY, t32x96, t32x96), 0);
  assert_int_equal(bfrt_op_cycles(&c, BFRT_NKINDS, BFRT_COPY, t32x96, t32x96), 0);
}

/* ---- A transfer's rows: each partition row is a contiguous run that
 * costs dma_row_bytes of bandwidth beside its own bytes, so the same bytes
 * in narrower rows (a view of a few columns, an element slice) cost more.
 * [128, 16] f32 and [16, 128] f32 both move 8 KiB; over 16 engines at 4 B
 * per cycle with 512 row bytes, 128 * (64 + 512) / 64 = 1152 and
 * 16 * (512 + 512) / 64 = 256 cycles of streaming; without row bytes,
 * 8192 / 64 = 128 each. */
static void test_dma_rows(void **state) {
  (void)state;
  bfrt_costs c = round_costs();
  c.kind[BFRT_KIND_DMA].dma_split = 16;
  const int64_t tall[2] = {128, 16}, wide[2] = {16, 128};
  bfrt_op_time t = bfrt_op_timing_sized(&c, BFRT_KIND_DMA, BFRT_LOAD, tall, tall, 4);
  bfrt_op_time w = bfrt_op_timing_sized(&c, BFRT_KIND_DMA, BFRT_LOAD, wide, wide, 4);
  assert_int_equal(t.completion, 10 + 100 + 128);
  assert_int_equal(w.completion, 10 + 100 + 128);
  c.kind[BFRT_KIND_DMA].dma_row_bytes = 512;
  t = bfrt_op_timing_sized(&c, BFRT_KIND_DMA, BFRT_LOAD, tall, tall, 4);
  w = bfrt_op_timing_sized(&c, BFRT_KIND_DMA, BFRT_LOAD, wide, wide, 4);
  assert_int_equal(t.completion, 10 + 100 + 1152);
  assert_int_equal(w.completion, 10 + 100 + 256);
}

/* ---- Two DMA queues sharing the DMA engines (dma_split). Each queue
 * loads one [2,3] tile (24 bytes, 2 rows: it streams on min(2, split)
 * engines at 4 bytes per cycle each, so 3 cycles on two engines). */
static void load_slot0(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  load(cx, 0, 0);
}
static void load_slot1(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  load(cx, 1, 1);
}
static const char *const two_queue_names[] = {"dma0", "dma1"};
static const int two_queue_kinds[] = {BFRT_KIND_DMA, BFRT_KIND_DMA};
static void (*const two_loads_entry[])(bfrt_ctx *, const int64_t *) = {load_slot0, load_slot1};
static const bfrt_kernel two_loads = {"two_loads", 1, n_param, 2, two_queue_names, two_queue_kinds, two_loads_entry,
                                      2, tiles, 2, tensors, shape_of, 0, NULL};

/* split = 2: dma0 streams 10..13 on both engines, done 113; dma1 finds
 * them busy until 13, so it stalls 3 and streams 13..16, done 116.
 * split = 0: no shared engines, both done at 10 + 100 + 24 / 4 = 116
 * each on its own bandwidth (one engine). split = 4: the tiles have 2
 * rows, so each takes 2 of the 4 engines and neither waits: 113. */
static void test_shared_dma_engines(void **state) {
  (void)state;
  static const struct { int64_t split, cycles, stall1; } cases[] = {{2, 116, 3}, {0, 116, 0}, {4, 113, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bfrt_costs costs = round_costs();
    costs.kind[BFRT_KIND_DMA].dma_split = cases[i].split;
    bfrt *rt = new_instance(&two_loads, 2);
    const bfrt_stats *st = run_sim(rt, &costs);
    assert_int_equal(st->cycles, cases[i].cycles);
    assert_int_equal(st->stall[1], cases[i].stall1);
    bfrt_delete(rt);
  }
}

/* Issue 9: a huge tile at the slowest rate a target may give (10^-3 per
 * cycle) overflowed int64 and cost a negative number of cycles; costs now
 * saturate at 2^61 (BFRT_CYCLES_MAX), and sums of them stay there. */
static void test_costs_saturate(void **state) {
  (void)state;
  const int64_t saturated = INT64_MAX / 4;
  bfrt_costs c = {.clock_ghz = 1.0};
  for (int k = 0; k < BFRT_NKINDS; k++)
    c.kind[k] = (bfrt_engine_cost){.overhead = 1000000000, .dma_latency = 1000000000, .dma_bytes_per_cycle = 1e-3,
                                   .elems_per_cycle = {1e-3, 1e-3, 1e-3, 1e-3, 1e-3}, .pe_rows = 1, .pe_cols = 1,
                                   .two_input_factor = 1e3};
  const int64_t huge[2] = {(int64_t)1 << 31, (int64_t)1 << 31};
  for (int op = 0; op < BFRT_NOPS; op++)
    for (int k = 0; k < BFRT_NKINDS; k++) {
      bfrt_op_time t = bfrt_op_timing(&c, k, op, huge, huge);
      if (t.occupancy < 0 || t.completion < 0 || t.completion > saturated)
        fail_msg("op %d on kind %d: occupancy %lld, completion %lld", op, k, (long long)t.occupancy,
                 (long long)t.completion);
    }
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_ACT, BFRT_ADD, huge, huge), saturated);
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DMA, BFRT_LOAD, huge, huge), saturated);
  /* a run at the largest cycle costs stays positive */
  for (int k = 0; k < BFRT_NKINDS; k++) {
    c.kind[k].sem_latency = c.kind[k].wait_cost = c.kind[k].bookkeep_cost = c.kind[k].barrier_cost = 1000000000;
    c.kind[k].dma_bytes_per_cycle = 1;
    c.kind[k].elems_per_cycle[BFRT_CLASS_ELEMWISE] = 1;
  }
  bfrt *rt = new_instance(&scale2, 3);
  const bfrt_stats *st = run_sim(rt, &c);
  assert_true(st->cycles > 0);
  for (int e = 0; e < 2; e++) assert_true(st->busy[e] >= 0 && st->stall[e] >= 0);
  assert_doubled(rt, 6);
  bfrt_delete(rt);
}

/* The counter window on 4-bit counters: dma runs 20 fills while act runs
 * one long fill, then act waits for all 20. With act tracking dma (the
 * kernel's tracks), dma is held before its 16th fill until act has read
 * its counter, and the run passes; without (no back-pressure declared),
 * act's read is 2^4 or more past what it saw and the run fails, never
 * passes by luck. The simulator makes the timing deterministic. */
static const bfrt_tile_desc window_tiles[] = {{"small", 1, 1, 1, BFRT_DTYPE_F32}, {"big", 1, 128, 4096, BFRT_DTYPE_F32}};

static void window_dma(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  bfrt_arg fill[] = {BFRT_TILE(0, 0), BFRT_IMM(1.0f)};
  for (int i = 0; i < 20; i++) bfrt_op(cx, BFRT_FILL, 2, 2, fill);
}

static void window_act(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  bfrt_arg fill[] = {BFRT_TILE(1, 0), BFRT_IMM(2.0f)};
  bfrt_op(cx, BFRT_FILL, 3, 2, fill);
  bfrt_wait(cx, DMA, 20, 4);
}

static void (*const window_entry[])(bfrt_ctx *, const int64_t *) = {window_dma, window_act};
static const uint32_t act_tracks_dma[] = {0, 1u << DMA}, nothing_tracked[] = {0, 0};
static const bfrt_kernel window_held = {"window", 1, n_param, 2, two_engines, two_kinds, window_entry,
                                        2, window_tiles, 0, NULL, NULL, 4, act_tracks_dma};
static const bfrt_kernel window_unheld = {"window", 1, n_param, 2, two_engines, two_kinds, window_entry,
                                          2, window_tiles, 0, NULL, NULL, 4, nothing_tracked};

static void test_counter_window_held(void **state) {
  (void)state;
  bfrt_costs costs = round_costs();
  bfrt_options opt = {.exec = BFRT_EXEC_SIM, .costs = &costs};
  const char *err = NULL;
  bfrt *rt = bfrt_new(&window_held, (int64_t[]){0}, &err);
  assert_non_null(rt);
  if (bfrt_run(rt, &opt)) fail_msg("%s", bfrt_error(rt));
  assert_true(bfrt_get_stats(rt)->held >= 1);
  bfrt_delete(rt);
  rt = bfrt_new(&window_unheld, (int64_t[]){0}, &err);
  assert_non_null(rt);
  assert_int_not_equal(bfrt_run(rt, &opt), 0);
  assert_non_null(strstr(bfrt_error(rt), "counter window: act reads dma's counter at 20, 2^4 or more past the 0"));
  bfrt_delete(rt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hand_computed_waits),
      cmocka_unit_test(test_spills_cost_bookkeeping),
      cmocka_unit_test(test_hand_computed_barriers),
      cmocka_unit_test(test_pipelined_waits),
      cmocka_unit_test(test_pipelined_same_engine),
      cmocka_unit_test(test_pipelined_window),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_deadlocks_and_errors),
      cmocka_unit_test(test_trace_in_simulated_time),
      cmocka_unit_test(test_race_checker_under_sim),
      cmocka_unit_test(test_cost_rules),
      cmocka_unit_test(test_costs_saturate),
      cmocka_unit_test(test_shared_dma_engines),
      cmocka_unit_test(test_dma_rows),
      cmocka_unit_test(test_counter_window_held),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

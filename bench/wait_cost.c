/* wait_cost.c: what synchronization costs in the threads executor.
 *
 * Two figures, each from hand-written kernels run through the public API
 * (the way generated kernels run):
 *   - an uncontended wait: bfrt_wait on a counter that has already reached
 *     the threshold (the fast path every satisfied wait takes), measured
 *     as the run time with N such waits minus the run time without them;
 *   - a wake-up: two engines ping-pong, each waiting for the other's next
 *     completion, so every hand-off is one engine waking the other; the
 *     figure is the run time over the number of hand-offs (it includes a
 *     1x1 fill per hand-off, which is a few nanoseconds).
 * Each is the best of a few repetitions. The last line is JSON for the
 * benchmark scripts. Wall-clock figures depend on the host (this machine:
 * 2 cores), so no test asserts them.
 *
 * Build and run (after `make`):
 *   gcc -std=c11 -O2 -Iruntime -o build/wait_cost bench/wait_cost.c build/libbfrt.a -lpthread -lm
 *   ./build/wait_cost [N] */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bfrt_cost.h"

enum { PING, PONG };

static const char *const engine_names[] = {"ping", "pong"};
static const int engine_kinds[] = {BFRT_KIND_DVE, BFRT_KIND_POOL};
static const char *const param_names[] = {"N", "WAITS"};
static const bfrt_tile_desc tiles[] = {{"a", 1, 1, 1}, {"b", 1, 1, 1}};

static int no_tensors(const int64_t *params, int t, int64_t shape[2]) {
  (void)params;
  (void)t;
  shape[0] = shape[1] = 0;
  return 0;
}

/* One fill, then params[1] waits that are already satisfied. */
static void uncontended(bfrt_ctx *cx, const int64_t *params) {
  bfrt_arg fill[] = {BFRT_TILE(0, 0), BFRT_IMM(1.0f)};
  bfrt_op(cx, BFRT_FILL, 1, 2, fill);
  for (int64_t i = 0; i < params[1]; i++) bfrt_wait(cx, PING, 1, 2);
}

static void idle(bfrt_ctx *cx, const int64_t *params) {
  (void)cx;
  (void)params;
}

/* ping: fill, then wait for pong's answer; pong: wait for ping, then fill. */
static void ping(bfrt_ctx *cx, const int64_t *params) {
  bfrt_arg fill[] = {BFRT_TILE(0, 0), BFRT_IMM(1.0f)};
  for (int64_t i = 0; i < params[0]; i++) {
    bfrt_op(cx, BFRT_FILL, 1, 2, fill);
    bfrt_wait(cx, PONG, i + 1, 2);
  }
}

static void pong(bfrt_ctx *cx, const int64_t *params) {
  bfrt_arg fill[] = {BFRT_TILE(1, 0), BFRT_IMM(2.0f)};
  for (int64_t i = 0; i < params[0]; i++) {
    bfrt_wait(cx, PING, i + 1, 3);
    bfrt_op(cx, BFRT_FILL, 4, 2, fill);
  }
}

static void (*const uncontended_entry[])(bfrt_ctx *, const int64_t *) = {uncontended, idle};
static void (*const ping_pong_entry[])(bfrt_ctx *, const int64_t *) = {ping, pong};

static const bfrt_kernel uncontended_kernel = {"uncontended", 2, param_names, 2, engine_names, engine_kinds,
                                               uncontended_entry, 2, tiles, 0, NULL, no_tensors};
static const bfrt_kernel ping_pong_kernel = {"ping_pong", 2, param_names, 2, engine_names, engine_kinds,
                                             ping_pong_entry, 2, tiles, 0, NULL, no_tensors};

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best wall time of a few runs of kernel with params, in ns; exits on error. */
static double best_run_ns(const bfrt_kernel *k, int64_t n, int64_t waits) {
  int64_t params[2] = {n, waits};
  const char *err = NULL;
  bfrt *rt = bfrt_new(k, params, &err);
  if (!rt) {
    fprintf(stderr, "wait_cost: %s\n", err);
    exit(1);
  }
  double best = 0;
  for (int rep = 0; rep < 5; rep++) {
    double start = now_ns();
    if (bfrt_run(rt, NULL)) {
      fprintf(stderr, "wait_cost: %s\n", bfrt_error(rt));
      exit(1);
    }
    double t = now_ns() - start;
    if (rep == 0 || t < best) best = t;
  }
  bfrt_delete(rt);
  return best;
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 200000;
  if (n < 1) {
    fprintf(stderr, "usage: wait_cost [N > 0]\n");
    return 2;
  }
  double wait_ns = (best_run_ns(&uncontended_kernel, 0, n) - best_run_ns(&uncontended_kernel, 0, 0)) / (double)n;
  int64_t rounds = n / 10 > 0 ? n / 10 : 1;
  double wakeup_ns = best_run_ns(&ping_pong_kernel, rounds, 0) / (double)(2 * rounds);
  printf("uncontended bfrt_wait: %.1f ns (best of 5, %lld waits)\n", wait_ns, (long long)n);
  printf("wake-up (ping-pong hand-off): %.0f ns (best of 5, %lld hand-offs)\n", wakeup_ns,
         (long long)(2 * rounds));
  printf("{\"wait_ns\": %.1f, \"wakeup_ns\": %.0f}\n", wait_ns, wakeup_ns);
  return 0;
}

/* host.c: a kernel compiled by bfsync, embedded in an ordinary C program.
 *
 * `bfsync compile ../softmax.bfk -o softmax.c` emits the kernel as plain
 * C99 against the bfrt runtime: a descriptor (bfk_softmax_barrier_free,
 * named after the kernel and the sync mode) plus one function per engine. This program is what a user writes around it: make
 * an instance for its parameters, fill the input tensor, run the engines
 * on threads, read the output. It checks the result against a softmax
 * written here the obvious way and prints what the runtime counted.
 * `host TARGET_FILE` runs it on the cycle simulator instead, with the cost
 * model read from a target file (bfrt_costs_load, targets/trn1.target),
 * and also prints the simulated makespan.
 * Build: see the Makefile and README.md next to this file. */
#include <math.h>
#include <stdio.h>

#include "bfrt.h"
#include "bfrt_cost.h"

extern const bfrt_kernel bfk_softmax_barrier_free; /* from softmax.c */

enum { ROW_BLOCKS = 4, ROWS = ROW_BLOCKS * 32, COLS = 96 };

/* The same softmax, one row at a time, in double precision. */
static double max_error(const float *x, const float *y) {
  double worst = 0;
  for (int i = 0; i < ROWS; i++) {
    double m = x[i * COLS], sum = 0;
    for (int j = 1; j < COLS; j++) m = fmax(m, x[i * COLS + j]);
    for (int j = 0; j < COLS; j++) sum += exp(x[i * COLS + j] - m);
    for (int j = 0; j < COLS; j++) worst = fmax(worst, fabs(exp(x[i * COLS + j] - m) / sum - y[i * COLS + j]));
  }
  return worst;
}

int main(int argc, char **argv) {
  bfrt_options opt = {0}; /* threads, no jitter, no trace */
  bfrt_costs costs;
  if (argc > 1) {
    char why[4096];
    if (bfrt_costs_load(&costs, argv[1], why, sizeof why)) {
      fprintf(stderr, "%s\n", why);
      return 1;
    }
    opt.exec = BFRT_EXEC_SIM;
    opt.costs = &costs;
  }
  const int64_t params[] = {ROW_BLOCKS}; /* R, in the kernel's parameter order */
  const char *err;
  bfrt *rt = bfrt_new(&bfk_softmax_barrier_free, params, &err);
  if (!rt) {
    fprintf(stderr, "host: %s\n", err);
    return 1;
  }
  float *x = bfrt_tensor_data(rt, bfrt_tensor_find(rt, "X"));
  for (int i = 0; i < ROWS * COLS; i++) x[i] = (float)((i * 37) % 101) / 25.0f - 2.0f;

  if (bfrt_run(rt, &opt)) {
    fprintf(stderr, "host: %s\n", bfrt_error(rt));
    bfrt_delete(rt);
    return 1;
  }
  const bfrt_stats *st = bfrt_get_stats(rt);
  double err_max = max_error(x, bfrt_tensor_data(rt, bfrt_tensor_find(rt, "Y")));
  printf("softmax of a %d x %d tensor: %lld instructions, %lld waits\n", ROWS, COLS,
         (long long)st->instructions, (long long)st->waits);
  if (opt.exec == BFRT_EXEC_SIM) printf("simulated on %s: %lld cycles\n", argv[1], (long long)st->cycles);
  printf("max |bfsync - reference| = %.3g: %s\n", err_max, err_max < 1e-6 ? "ok" : "WRONG");
  bfrt_delete(rt);
  return err_max < 1e-6 ? 0 : 1;
}

/* host_two.c: three kernels in one program, linked as they are: softmax in
 * both sync modes and matmul (tests/host.sh). Each runs on the same inputs
 * (bfsync run's defaults for seed 1); the two softmax modes must agree bit
 * for bit. Uses the public host API (bfrt.h) only. */
#include <stdio.h>
#include <string.h>

#include "backend/inputs.h"
#include "bfrt.h"

extern const bfrt_kernel bfk_softmax_barrier_free, bfk_softmax_barrier, bfk_matmul_barrier_free;

/* Run kernel on the default inputs; its tensor `out` copied to result (n floats). */
static int run(const bfrt_kernel *k, const int64_t *params, const char *out, float *result, int64_t n) {
  const char *err;
  bfrt *rt = bfrt_new(k, params, &err);
  if (!rt) {
    fprintf(stderr, "host_two: %s\n", err);
    return 1;
  }
  for (int t = 0; t < bfrt_tensor_count(rt); t++) {
    int64_t shape[2];
    bfrt_tensor_shape(rt, t, shape);
    if (bfrt_tensor_io(rt, t) != BFRT_OUT) bf_default_inputs(bfrt_tensor_data(rt, t), shape[0] * shape[1], 1, t);
  }
  bfrt_options opt = {0};
  int status = bfrt_run(rt, &opt);
  if (status) fprintf(stderr, "host_two: %s\n", bfrt_error(rt));
  int t = bfrt_tensor_find(rt, out);
  if (!status && result) memcpy(result, bfrt_tensor_data(rt, t), (size_t)n * sizeof(float));
  bfrt_delete(rt);
  return status ? 1 : 0;
}

int main(void) {
  static float free_result[2 * 32 * 96], barrier_result[2 * 32 * 96];
  const int64_t softmax_params[] = {2}, matmul_params[] = {1, 1, 1};
  if (run(&bfk_softmax_barrier_free, softmax_params, "Y", free_result, 2 * 32 * 96) ||
      run(&bfk_softmax_barrier, softmax_params, "Y", barrier_result, 2 * 32 * 96) ||
      run(&bfk_matmul_barrier_free, matmul_params, "C", NULL, 0))
    return 1;
  if (memcmp(free_result, barrier_result, sizeof free_result)) {
    fprintf(stderr, "host_two: softmax differs between the sync modes\n");
    return 1;
  }
  printf("host_two: three kernels in one program: ok\n");
  return 0;
}

/* host_main.c: a generic host for any kernel that `bfsync compile` emitted,
 * so tests/run.sh can check the C as a user would build it: compiled by
 * gcc, linked with libbfrt.a, with no part of bfsync in the process.
 *
 *   host_main SEED OUTDIR [PARAM...]    (parameters in the kernel's order)
 *
 * Inputs are bfsync run's defaults for SEED (backend/inputs.h), so the
 * results can be compared bit for bit with `bfsync run --seed SEED
 * --output ...`. Every out and inout tensor is written raw (row-major f32)
 * to OUTDIR/NAME.f32. Exit status 0, or 1 with the runtime's message. */
#include <stdio.h>
#include <stdlib.h>

#include "backend/inputs.h"
#include "bfrt.h"

const bfrt_kernel *bfk_kernel(void);

static int write_raw(const char *dir, const char *name, const float *data, int64_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.f32", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t wrote = n ? fwrite(data, sizeof(float), (size_t)n, f) : 0;
  return (fclose(f) || wrote != (size_t)n) ? -1 : 0;
}

int main(int argc, char **argv) {
  const bfrt_kernel *k = bfk_kernel();
  if (argc != 3 + k->nparams) {
    fprintf(stderr, "usage: %s SEED OUTDIR", argv[0]);
    for (int i = 0; i < k->nparams; i++) fprintf(stderr, " %s", k->param_names[i]);
    fprintf(stderr, "\n");
    return 2;
  }
  uint64_t seed = strtoull(argv[1], NULL, 10);
  int64_t params[64];
  for (int i = 0; i < k->nparams && i < 64; i++) params[i] = strtoll(argv[3 + i], NULL, 10);
  const char *err;
  bfrt *rt = bfrt_new(k, params, &err);
  if (!rt) {
    fprintf(stderr, "host_main: %s\n", err);
    return 1;
  }
  for (int t = 0; t < k->ntensors; t++) {
    int64_t shape[2];
    bfrt_tensor_shape(rt, t, shape);
    if (k->tensors[t].ints)
      bf_default_ints(bfrt_tensor_data(rt, t), shape[0] * shape[1], seed, t);
    else if (k->tensors[t].io != BFRT_OUT)
      bf_default_inputs(bfrt_tensor_data(rt, t), shape[0] * shape[1], seed, t);
  }
  bfrt_options opt = {0};
  int status = 0;
  if (bfrt_run(rt, &opt)) {
    fprintf(stderr, "host_main: %s\n", bfrt_error(rt));
    status = 1;
  }
  for (int t = 0; t < k->ntensors && !status; t++) {
    int64_t shape[2];
    bfrt_tensor_shape(rt, t, shape);
    if (k->tensors[t].io != BFRT_IN &&
        write_raw(argv[2], k->tensors[t].name, bfrt_tensor_data(rt, t), shape[0] * shape[1])) {
      fprintf(stderr, "host_main: cannot write %s/%s.f32\n", argv[2], k->tensors[t].name);
      status = 1;
    }
  }
  bfrt_delete(rt);
  return status;
}

/* host_main.c: a generic host for any kernel that `bfsync compile` emitted,
 * so tests/run.sh and the campaign's gcc step can check the C as a user
 * would build it: compiled by gcc, linked with libbfrt.a, with no part of
 * bfsync in the process, through the public host API (bfrt.h) alone.
 *
 *   host_main SYMBOL SEED OUTDIR [PARAM...]   (parameters in the kernel's order)
 *
 * SYMBOL is the kernel's descriptor, bfk_<kernel>_<mode>, found with dlsym
 * (link with -rdynamic), so one host_main.o serves every kernel. Inputs
 * are bfsync run's defaults for SEED (backend/inputs.h), so the results can
 * be compared bit for bit with `bfsync run --seed SEED --output ...`.
 * Every out and inout tensor is written raw (row-major f32) to
 * OUTDIR/NAME.f32. Exit status 0, or 1 with the runtime's message. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/inputs.h"
#include "bfrt.h"

static int write_raw(const char *dir, const char *name, const float *data, int64_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.f32", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t wrote = n ? fwrite(data, sizeof(float), (size_t)n, f) : 0;
  return (fclose(f) || wrote != (size_t)n) ? -1 : 0;
}

int main(int argc, char **argv) {
  const bfrt_kernel *k = argc > 1 ? (const bfrt_kernel *)dlsym(RTLD_DEFAULT, argv[1]) : NULL;
  if (!k) {
    fprintf(stderr, "host_main: no kernel descriptor '%s' in this program\n", argc > 1 ? argv[1] : "");
    return 2;
  }
  int nparams = bfrt_param_count(k);
  if (argc != 4 + nparams) {
    fprintf(stderr, "usage: %s %s SEED OUTDIR", argv[0], argv[1]);
    for (int i = 0; i < nparams; i++) fprintf(stderr, " %s", bfrt_param_name(k, i));
    fprintf(stderr, "\n");
    return 2;
  }
  uint64_t seed = strtoull(argv[2], NULL, 10);
  int64_t *params = calloc((size_t)nparams + 1, sizeof *params);
  if (!params) return 1;
  for (int i = 0; i < nparams; i++) params[i] = strtoll(argv[4 + i], NULL, 10);
  const char *err;
  bfrt *rt = bfrt_new(k, params, &err);
  free(params);
  if (!rt) {
    fprintf(stderr, "host_main: %s\n", err);
    return 1;
  }
  for (int t = 0; t < bfrt_tensor_count(rt); t++) {
    int64_t shape[2];
    bfrt_tensor_shape(rt, t, shape);
    if (bfrt_tensor_ints(rt, t))
      bf_default_ints(bfrt_tensor_data(rt, t), shape[0] * shape[1], seed, t);
    else if (bfrt_tensor_io(rt, t) != BFRT_OUT)
      bf_default_inputs(bfrt_tensor_data(rt, t), shape[0] * shape[1], seed, t);
  }
  bfrt_options opt = {0};
  int status = 0;
  if (bfrt_run(rt, &opt)) {
    fprintf(stderr, "host_main: %s\n", bfrt_error(rt));
    status = 1;
  }
  for (int t = 0; t < bfrt_tensor_count(rt) && !status; t++) {
    int64_t shape[2];
    bfrt_tensor_shape(rt, t, shape);
    if (bfrt_tensor_io(rt, t) != BFRT_IN &&
        write_raw(argv[3], bfrt_tensor_name(rt, t), bfrt_tensor_data(rt, t), shape[0] * shape[1])) {
      fprintf(stderr, "host_main: cannot write %s/%s.f32\n", argv[3], bfrt_tensor_name(rt, t));
      status = 1;
    }
  }
  bfrt_delete(rt);
  return status;
}

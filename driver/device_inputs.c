/* device_inputs.c: the i32 tensors' values for the commands that walk or
 * specialize a kernel without running it (verify, and compile with -p):
 * `bfsync run`'s defaults for a seed, or `--input NAME=X.npy`. Only the
 * i32 tensors are held (instance_inputs_timing), so a kernel whose float
 * tensors would not fit in memory can still be verified or unrolled; a
 * measurement that stands for a run (compile --resources -p) holds them
 * all, as the run would. */
#include <string.h>

#include "driver/args.h"
#include "driver/commands.h"
#include "harness/exec.h"

int device_inputs_bind(Program *p, const int64_t *params, const NamedPaths *inputs, uint64_t seed, const char *command,
                       const char *whole) {
  const Kernel *k = p->kernel;
  Instance in = {p, params, NULL, NULL, NULL};
  const char *err;
  if (whole ? instance_inputs(&in, seed, &err) : instance_inputs_timing(&in, seed, &err)) {
    error_print(stderr, "%s%s\n", whole ? whole : "", err);
    return 1;
  }
  for (int i = 0; i < inputs->n; i++) {
    const NamedPath *np = &inputs->items[i];
    int t = 0;
    while (t < k->ntensors && strcmp(k->tensors[t].name, np->name)) t++;
    if (t == k->ntensors || !k->tensors[t].ints) {
      error_print(stderr, "--input: '%s' is not an i32 tensor; %s takes values for i32 tensors only\n",
              np->name, command);
      return 2;
    }
    NpyArray into = {in.inputs[t].rows, in.inputs[t].cols, in.inputs[t].data, ELEM_I32, 0, {0}};
    if (npy_read(p->arena, np->path, np->name, &into, &err)) {
      error_print(stderr, "%s\n", err);
      return 1;
    }
  }
  return 0;
}

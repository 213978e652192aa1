/* cmd_gen.c: `bfsync gen`, a random valid kernel (harness/gen.c) on stdout.
 *
 *   gen      gen_kernel | gen_params */
#include <stdio.h>

#include "driver/args.h"
#include "driver/commands.h"
#include "harness/gen.h"

#define STR(x) #x
#define XSTR(x) STR(x)

static const char usage_text[] =
    "usage: bfsync gen --seed S [--size N] [--params]\n\n"
    "Print a random valid kernel (deterministic per seed) that uses every op,\n"
    "slotted tiles, nested loops with parameter, triangular, zero-trip and\n"
    "single-trip bounds, nested conditionals over loop variables and\n"
    "parameters, inout tensors, and RAW/WAR/WAW conflicts.\n\n"
    "  --seed S    the seed (an unsigned 64-bit integer)\n"
    "  --size N    about N instructions (default " XSTR(GEN_DEFAULT_SIZE) ", at most " XSTR(GEN_MAX_SIZE) ")\n"
    "  --params    print a parameter set for this seed instead: NAME=V ...\n";

int cmd_gen(int argc, char **argv) {
  uint64_t seed = 0, size = GEN_DEFAULT_SIZE;
  bool params = false;
  const ArgSpec specs[] = {
      {.name = "--seed", .kind = ARG_NUMBER, .dest = &seed, .max = UINT64_MAX, .required = true},
      {.name = "--size", .kind = ARG_NUMBER, .dest = &size, .min = 1, .max = GEN_MAX_SIZE},
      {.name = "--params", .kind = ARG_FLAG, .dest = &params},
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"gen", usage_text, specs, 0, 0, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  if (status < 0) {
    if (params)
      gen_params(seed, stdout);
    else
      gen_kernel(seed, (long)size, stdout);
    status = fflush(stdout) ? 1 : 0;
  }
  arena_free(arena);
  return status;
}

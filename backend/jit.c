/* jit.c: the generated C, compiled in memory with libtcc.
 *
 * `bfsync run` never writes the C to disk: libtcc compiles the string
 * emit_c produced, resolves the kernel-side runtime calls to the functions
 * linked into bfsync itself (bound explicitly with tcc_add_symbol, so the
 * kernel cannot pick up anything else by accident), relocates the code into
 * memory it owns, and the kernel is found through the one symbol every
 * generated file exports, bfk_kernel(). The generated C is ours, so a tcc
 * diagnostic is a backend bug, not a user error: it is printed with tcc's
 * messages and bfsync aborts. */
#include <libtcc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

#ifndef BFRT_INCLUDE_DIR
#define BFRT_INCLUDE_DIR "runtime"
#endif
#define TCC_LIB_DIR "/usr/lib/x86_64-linux-gnu/tcc"

struct Jit {
  TCCState *tcc;
  const bfrt_kernel *kernel;
};

static const struct {
  const char *name;
  const void *address;
} runtime_symbols[] = {
    {"bfrt_op", (const void *)bfrt_op},
    {"bfrt_wait", (const void *)bfrt_wait},
    {"bfrt_barrier", (const void *)bfrt_barrier},
    {"bfrt_bookkeep", (const void *)bfrt_bookkeep},
    {"bfrt_div", (const void *)bfrt_div},
    {"bfrt_mod", (const void *)bfrt_mod},
    {"bfrt_scratch", (const void *)bfrt_scratch},
};

static void print_tcc_message(void *opaque, const char *msg) {
  (void)opaque;
  fprintf(stderr, "bfsync: libtcc: %s\n", msg);
}

static _Noreturn void tcc_failed(const char *step) {
  bug("libtcc failed to %s the generated C; this is a bfsync backend bug "
      "(`bfsync compile` prints the same C for a report)",
      step);
}

static void bind_runtime(TCCState *s) {
  for (size_t i = 0; i < sizeof runtime_symbols / sizeof runtime_symbols[0]; i++)
    if (tcc_add_symbol(s, runtime_symbols[i].name, runtime_symbols[i].address) < 0)
      tcc_failed("bind the runtime for");
}

Jit *jit_compile(Program *p, const char *c_source) {
  Jit *jit = ARENA_NEW(p->arena, Jit);
  TCCState *s = tcc_new();
  if (!s) bug("libtcc: out of memory");
  jit->tcc = s;
  tcc_set_error_func(s, NULL, print_tcc_message);
  tcc_set_lib_path(s, TCC_LIB_DIR);
  tcc_add_include_path(s, BFRT_INCLUDE_DIR);
  tcc_set_output_type(s, TCC_OUTPUT_MEMORY);
  if (tcc_compile_string(s, c_source) < 0) tcc_failed("compile");
  bind_runtime(s);
  if (tcc_relocate(s, TCC_RELOCATE_AUTO) < 0) tcc_failed("link");
  const bfrt_kernel *(*get_kernel)(void) = (const bfrt_kernel *(*)(void))tcc_get_symbol(s, "bfk_kernel");
  if (!get_kernel) tcc_failed("find bfk_kernel in");
  jit->kernel = get_kernel();
  return jit;
}

const bfrt_kernel *jit_kernel(const Jit *jit) { return jit->kernel; }

void jit_free(Jit *jit) {
  if (!jit || !jit->tcc) return;
  tcc_delete(jit->tcc);
  jit->tcc = NULL;
  jit->kernel = NULL;
}

/* jit.c: the generated C, compiled in memory with libtcc.
 *
 * `bfsync run` never writes the C to disk: libtcc compiles the string
 * emit_c produced, resolves the kernel-side runtime calls to the functions
 * linked into bfsync itself (bound explicitly with tcc_add_symbol, so the
 * kernel cannot pick up anything else by accident), relocates the code into
 * memory it owns, and the kernel is found through the one symbol every
 * generated file exports, its descriptor (emit_c_symbol). The generated C is ours, so a tcc
 * diagnostic is a backend bug, not a user error: it is printed with tcc's
 * messages and bfsync aborts.
 *
 * libbfsync.so (BFSYNC_SHARED) cannot link libtcc, which Debian ships
 * only as a non-PIC static library: there backend/jit_dl.c compiles with
 * the tcc command into a shared object instead, and only the search for
 * the runtime headers below is shared: beside the code that runs, the
 * executable or libbfsync.so. */
#ifdef BFSYNC_SHARED
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#else
#include <libtcc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"

/* The folder of the running code: the executable's, or libbfsync.so's. */
void jit_code_folder(char *dir, size_t size) {
  ssize_t n = -1;
#ifdef BFSYNC_SHARED
  Dl_info info;
  if (dladdr((void *)jit_code_folder, &info) && info.dli_fname && strlen(info.dli_fname) < size)
    n = (ssize_t)strlen(strcpy(dir, info.dli_fname));
#endif
  if (n <= 0) n = readlink("/proc/self/exe", dir, size - 1);
  if (n <= 0) n = snprintf(dir, size, "./bfsync");
  dir[n] = 0;
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  else snprintf(dir, size, ".");
}

/* The runtime headers the generated C includes, found beside the
 * executable (or libbfsync.so): include/bfsync/ in the build folder (the
 * Makefile copies them there), ../include/bfsync/ in an installed prefix.
 * Never the source tree, so an installed bfsync needs nothing but its
 * prefix. NULL if neither has them; the places looked in are in *looked. */
const char *jit_runtime_include_dir(Arena *arena, const char **looked) {
  char exe[4096];
  jit_code_folder(exe, sizeof exe);
  const char *beside = arena_printf(arena, "%s/include/bfsync", exe);
  const char *installed = arena_printf(arena, "%s/../include/bfsync", exe);
  *looked = arena_printf(arena, "%s and %s", beside, installed);
  if (!access(arena_printf(arena, "%s/bfrt_kernel.h", beside), R_OK)) return beside;
  if (!access(arena_printf(arena, "%s/bfrt_kernel.h", installed), R_OK)) return installed;
  return NULL;
}

#ifndef BFSYNC_SHARED
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
    {"bfrt_spill", (const void *)bfrt_spill},
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

Jit *jit_compile(Program *p, const char *c_source, const char **err) {
  const char *looked, *include_dir = jit_runtime_include_dir(p->arena, &looked);
  if (!include_dir) {
    *err = arena_printf(p->arena, "cannot find the runtime headers (bfrt_kernel.h) in %s", looked);
    return NULL;
  }
  Jit *jit = ARENA_NEW(p->arena, Jit);
  TCCState *s = tcc_new();
  if (!s) bug("libtcc: out of memory");
  jit->tcc = s;
  tcc_set_error_func(s, NULL, print_tcc_message);
  tcc_set_lib_path(s, TCC_LIB_DIR);
  tcc_add_include_path(s, include_dir);
  tcc_set_output_type(s, TCC_OUTPUT_MEMORY);
  if (tcc_compile_string(s, c_source) < 0) tcc_failed("compile");
  bind_runtime(s);
  if (tcc_relocate(s, TCC_RELOCATE_AUTO) < 0) tcc_failed("link");
  jit->kernel = tcc_get_symbol(s, emit_c_symbol(p));
  if (!jit->kernel) tcc_failed("find the kernel descriptor in");
  return jit;
}

const bfrt_kernel *jit_kernel(const Jit *jit) { return jit->kernel; }

void jit_free(Jit *jit) {
  if (!jit || !jit->tcc) return;
  tcc_delete(jit->tcc);
  jit->tcc = NULL;
  jit->kernel = NULL;
}
#endif

/* jit_dl.c: the JIT of libbfsync.so (BFSYNC_SHARED; the executable uses
 * backend/jit.c's in-memory libtcc).
 *
 * Debian ships libtcc only as a static library built without -fPIC, which
 * no shared object can contain, so the library compiles the generated C
 * with the tcc command instead: into a private temporary folder, as a
 * shared object linked against libbfsync.so itself (which exports the
 * runtime's bfrt_* functions the kernel calls), loaded with dlopen, its
 * files removed at once (the mapping stays). The kernel is found through
 * the one symbol every generated file exports, its descriptor
 * (emit_c_symbol), as in jit.c. A tcc diagnostic is a backend bug (bug(),
 * which the library traps); a missing tcc command is an error of the
 * installation, said in *err. Nothing here is global: compiles from several
 * threads run at once. */
#ifdef BFSYNC_SHARED
#define _GNU_SOURCE /* environ */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "util/files.h"

enum { MAX_LOG = 4096 }; /* bytes of tcc's messages kept for a report */

struct Jit {
  void *handle;
  const bfrt_kernel *kernel;
};

/* tcc with argv, its output into log_path; its exit status, or -1 when it
 * cannot be started (errno set). */
static int run_tcc(char *const argv[], const char *log_path) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa)) return -1;
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc) {
    errno = rc;
    return -1;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* The first MAX_LOG bytes of path, in arena ("" if unreadable). */
static const char *log_text(Arena *arena, const char *path) {
  FILE *f = fopen(path, "rb");
  char buf[MAX_LOG + 1];
  size_t n = f ? fread(buf, 1, MAX_LOG, f) : 0;
  if (f) fclose(f);
  return arena_strndup(arena, buf, n);
}

Jit *jit_compile(Program *p, const char *c_source, const char **err) {
  const char *looked, *include_dir = jit_runtime_include_dir(p->arena, &looked);
  if (!include_dir) {
    *err = arena_printf(p->arena, "cannot find the runtime headers (bfrt_kernel.h) in %s", looked);
    return NULL;
  }
  char lib_dir[4096];
  jit_code_folder(lib_dir, sizeof lib_dir);
  const char *tmp = getenv("TMPDIR");
  char *dir = arena_printf(p->arena, "%s/bfsync-jit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    *err = arena_printf(p->arena, "cannot make a temporary folder %s: %s", dir, strerror(errno));
    return NULL;
  }
  char *c_path = arena_printf(p->arena, "%s/kernel.c", dir), *so_path = arena_printf(p->arena, "%s/kernel.so", dir);
  char *log_path = arena_printf(p->arena, "%s/tcc.log", dir);
  FILE *f = fopen(c_path, "wb");
  int written = f && fputs(c_source, f) >= 0;
  if (f && fclose(f)) written = 0;
  int status = -1, saved = errno;
  if (written) {
    char *argv[] = {"tcc", "-shared", "-o", so_path, "-B", TCC_LIB_DIR, "-I", (char *)include_dir, c_path,
                    "-L", lib_dir, "-lbfsync", NULL};
    status = run_tcc(argv, log_path);
    saved = errno;
  }
  const char *log = log_text(p->arena, log_path);
  void *handle = status == 0 ? dlopen(so_path, RTLD_NOW | RTLD_LOCAL) : NULL;
  const char *why = handle || status != 0 ? NULL : arena_printf(p->arena, "%s", dlerror());
  remove(c_path);
  remove(so_path);
  remove(log_path);
  rmdir(dir);
  if (!written) {
    *err = arena_printf(p->arena, "cannot write the generated C to %s: %s", c_path, strerror(saved));
    return NULL;
  }
  if (status < 0) {
    *err = arena_printf(p->arena, "cannot run tcc (install the tcc package): %s", strerror(saved));
    return NULL;
  }
  if (status > 0)
    bug("tcc failed (status %d) on the generated C; this is a bfsync backend bug (`bfsync compile` prints the "
        "same C for a report): %s",
        status, log);
  if (!handle) {
    *err = arena_printf(p->arena, "cannot load the compiled kernel: %s", why);
    return NULL;
  }
  Jit *jit = ARENA_NEW(p->arena, Jit);
  jit->handle = handle;
  jit->kernel = dlsym(handle, emit_c_symbol(p));
  if (!jit->kernel) {
    dlclose(handle);
    bug("the compiled kernel has no descriptor %s", emit_c_symbol(p));
  }
  return jit;
}

const bfrt_kernel *jit_kernel(const Jit *jit) { return jit->kernel; }

void jit_free(Jit *jit) {
  if (!jit || !jit->handle) return;
  dlclose(jit->handle);
  jit->handle = NULL;
  jit->kernel = NULL;
}
#endif

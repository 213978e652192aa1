/* gcc.c: the gcc step (see gcc.h). gcc runs through the shell, one
 * command per build and per run, with its output in a log file beside the
 * binary so a failure names where to look. */
#include "harness/gcc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* An ASan build's libbfrt.a needs the sanitizer runtimes at link time. */
#ifdef __SANITIZE_ADDRESS__
#define GCC_SAN_FLAGS " -fsanitize=address,undefined"
#else
#define GCC_SAN_FLAGS ""
#endif
#define GCC_FLAGS "gcc -std=c99 -Wall -Wextra -Werror" GCC_SAN_FLAGS

static int shell(const char *cmd) {
  int status = system(cmd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int gcc_setup(GccStep *g) {
  const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(g->dir, sizeof g->dir, "%s/bfsync-campaign-XXXXXX", tmp);
  if (!mkdtemp(g->dir)) {
    fprintf(stderr, "bfsync: campaign: cannot make a directory in %s: %s\n", tmp, strerror(errno));
    g->dir[0] = 0;
    return -1;
  }
  if (access(g->lib, R_OK)) {
    fprintf(stderr, "bfsync: campaign: no runtime library %s for the gcc step (--lib): %s\n", g->lib,
            strerror(errno));
    return -1;
  }
  char cmd[5 * PATH_MAX];
  snprintf(cmd, sizeof cmd, GCC_FLAGS " -I'%s' -I'%s/runtime' -c '%s/tests/host_main.c' -o '%s/host_main.o'",
           g->root, g->root, g->root, g->dir);
  if (shell(cmd)) {
    fprintf(stderr, "bfsync: campaign: cannot build %s/tests/host_main.c for the gcc step\n", g->root);
    return -1;
  }
  return 0;
}

void gcc_cleanup(GccStep *g) {
  if (!g->dir[0]) return;
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g->dir);
  shell(cmd);
  g->dir[0] = 0;
}

/* dir/NAME.f32 of every out and inout tensor into results. */
static int read_raw(Instance *in, const char *dir, RefTensor *results, char *msg, size_t msg_size) {
  const Kernel *k = in->p->kernel;
  for (int t = 0; t < k->ntensors; t++) {
    if (k->tensors[t].io == IO_IN) continue;
    size_t n = (size_t)(results[t].rows * results[t].cols);
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.f32", dir, k->tensors[t].name);
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(results[t].data, sizeof(float), n, f) : 0;
    if (f) fclose(f);
    if (!f || got != n) {
      snprintf(msg, msg_size, "host_main wrote no complete %s", path);
      return -1;
    }
  }
  return 0;
}

int gcc_run(const GccStep *g, Instance *in, const char *c_source, uint64_t seed, RefTensor *results, char *msg,
            size_t msg_size) {
  char base[PATH_MAX + 32], cmd[6 * PATH_MAX + 512];
  snprintf(base, sizeof base, "%s/k%d", g->dir, (int)getpid());
  snprintf(cmd, sizeof cmd, "%s.c", base);
  FILE *f = fopen(cmd, "w");
  if (!f || fputs(c_source, f) < 0 || fclose(f)) {
    snprintf(msg, msg_size, "cannot write %s: %s", cmd, strerror(errno));
    return -1;
  }
  snprintf(cmd, sizeof cmd,
           GCC_FLAGS " -rdynamic -I'%s/runtime' -o '%s' '%s.c' '%s/host_main.o' '%s' -ldl -lpthread -lm 2>'%s.log'",
           g->root, base, base, g->dir, g->lib, base);
  if (shell(cmd)) {
    snprintf(msg, msg_size, "gcc -std=c99 -Wall -Wextra -Werror rejected the emitted C (see %s.log)", base);
    return -1;
  }
  int n = snprintf(cmd, sizeof cmd, "mkdir -p '%s.out' && '%s' %s %" PRIu64 " '%s.out'", base, base,
                   emit_c_symbol(in->p), seed, base);
  for (int i = 0; i < in->p->kernel->nparams && n < (int)sizeof cmd; i++)
    n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %" PRId64, in->params[i]);
  if (n < (int)sizeof cmd) n += snprintf(cmd + n, sizeof cmd - (size_t)n, " 2>'%s.log'", base);
  if (n >= (int)sizeof cmd) {
    snprintf(msg, msg_size, "the host_main command line for %d parameters is over %zu bytes", in->p->kernel->nparams,
             sizeof cmd);
    return -1;
  }
  if (shell(cmd)) {
    snprintf(msg, msg_size, "the gcc-built kernel failed (see %s.log)", base);
    return -1;
  }
  char dir[PATH_MAX + 40];
  snprintf(dir, sizeof dir, "%s.out", base);
  return read_raw(in, dir, results, msg, msg_size);
}

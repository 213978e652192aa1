/* proof_check.c: the proof's validator on one run's emitted code
 * (docs/proof.md, section 3).
 *
 * `bfsync verify`, and the campaign on every kernel it checks
 * (harness/check.c), call proof_check after the transform: it writes the
 * kernel as `compile --emit=proof` prints it (with the device integers'
 * values the run uses) and the C that `compile` emits and `run` JITs into
 * a fresh temporary directory, runs build/proof/bfcheck on both with the
 * run's parameters, and reads its verdict. bfcheck interprets the emitted
 * C itself and runs the validator extracted from Coq on exactly its waits,
 * so what is checked is the code that runs, not the IR it was printed
 * from. The checker is built by `make proof` (it needs coq and ocaml);
 * where it is not built, the verdict says so and nothing fails. It is
 * found next to the bfsync executable (BUILD/proof/bfcheck), else in the
 * source tree's build/proof, or at $BFSYNC_BFCHECK. */
#include "harness/proof_check.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "transform/ir_dump.h"
#include "util/diag.h"
#include "util/numbers.h"

/* The checker's path into buf, or NULL when none is built. */
static const char *find_checker(char *buf, size_t cap) {
  const char *env = getenv("BFSYNC_BFCHECK");
  if (env && *env) return access(env, X_OK) == 0 ? env : NULL;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = 0;
      int n2 = snprintf(buf, cap, "%s/proof/bfcheck", exe);
      if (n2 > 0 && (size_t)n2 < cap && access(buf, X_OK) == 0) return buf;
    }
  }
  int n3 = snprintf(buf, cap, "%s/build/proof/bfcheck", BFSYNC_SOURCE_DIR);
  return n3 > 0 && (size_t)n3 < cap && access(buf, X_OK) == 0 ? buf : NULL;
}

static int write_file(const char *path, const Program *p, bool dump) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  if (dump) ir_dump_proof(p, f);
  else emit_c(p, f);
  return fclose(f) ? -1 : 0;
}

/* Run argv, its stdout and stderr into out (cap bytes, NUL-terminated);
 * its exit status, or -1 when it did not exit normally. */
static int run_capture(char *const argv[], char *out, size_t cap) {
  int fd[2];
  if (pipe(fd)) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fd[1], 1);
    dup2(fd[1], 2);
    close(fd[0]);
    close(fd[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  size_t len = 0;
  char chunk[4096];
  ssize_t r;
  while ((r = read(fd[0], chunk, sizeof chunk)) != 0) {
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    size_t take = (size_t)r < cap - 1 - len ? (size_t)r : cap - 1 - len;
    memcpy(out + len, chunk, take);
    len += take;
  }
  out[len] = 0;
  close(fd[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The line of out that starts with the C file's path (bfcheck's summary),
 * else out's first line, into v->detail. */
static void keep_detail(ProofVerdict *v, const char *out, const char *cpath) {
  const char *line = strstr(out, cpath);
  if (!line || (line != out && line[-1] != '\n')) line = out;
  if (v->status != PROOF_ACCEPTED && strncmp(out, "bfcheck: ", 9) == 0) line = out + 9;
  size_t plen = strlen(cpath);
  if (strncmp(line, cpath, plen) == 0 && line[plen] == ':') line += plen + 2; /* the temporary path says nothing */
  size_t n = strcspn(line, "\n");
  if (n >= sizeof v->detail) n = sizeof v->detail - 1;
  memcpy(v->detail, line, n);
  v->detail[n] = 0;
  const char *w = strstr(out, " waits ");
  uint64_t waits;
  if (w && !parse_digits(w + 7, strspn(w + 7, "0123456789"), INT64_MAX, &waits)) v->waits = (int64_t)waits;
}

void proof_check(const Program *p, const int64_t *params, int64_t instances, ProofVerdict *v) {
  *v = (ProofVerdict){.status = PROOF_UNAVAILABLE, .waits = -1};
  const char *outside = ir_dump_outside(p);
  if (outside) { /* counted, not checked: the dump cannot say which rows a gather touches */
    v->status = PROOF_SKIPPED;
    snprintf(v->detail, sizeof v->detail, "%s", outside);
    return;
  }
  const char *fallback = p->ir ? ir_fallback(p->ir, NULL) : NULL;
  if (fallback) { /* counted, not checked: such waits may be late by design, and the validator takes exact ones */
    v->status = PROOF_SKIPPED;
    snprintf(v->detail, sizeof v->detail, "its waits use a conservative fallback, late by design (bfsync compile --explain): %s",
             fallback);
    return;
  }
  if (instances > PROOF_MAX_INSTANCES) {
    v->status = PROOF_SKIPPED;
    snprintf(v->detail, sizeof v->detail, "%lld instances, more than the %d the checker takes (it is quadratic in them)",
             (long long)instances, PROOF_MAX_INSTANCES);
    return;
  }
  char checker[PATH_MAX];
  const char *bin = find_checker(checker, sizeof checker);
  if (!bin) {
    snprintf(v->detail, sizeof v->detail, "the proof's checker is not built (make proof)");
    return;
  }
  v->status = PROOF_ERROR;
  const char *tmp = getenv("TMPDIR");
  char dir[PATH_MAX], dump[PATH_MAX + 16], cfile[PATH_MAX + 16];
  snprintf(dir, sizeof dir, "%s/bfsync-proof-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    snprintf(v->detail, sizeof v->detail, "cannot make a temporary directory: %s", strerror(errno));
    return;
  }
  snprintf(dump, sizeof dump, "%s/kernel.dump", dir);
  snprintf(cfile, sizeof cfile, "%s/kernel.c", dir);
  const Kernel *k = p->kernel;
  if (write_file(dump, p, true) || write_file(cfile, p, false)) {
    snprintf(v->detail, sizeof v->detail, "cannot write to %.200s: %s", dir, strerror(errno));
  } else {
    char **argv = calloc((size_t)k->nparams + 4, sizeof *argv);
    char *kv = calloc((size_t)k->nparams + 1, 320);
    if (!argv || !kv) bug("proof_check: out of memory");
    argv[0] = (char *)bin;
    argv[1] = dump;
    argv[2] = cfile;
    for (int i = 0; i < k->nparams; i++) {
      snprintf(kv + 320 * i, 320, "%s=%lld", k->params[i].name, (long long)params[i]);
      argv[3 + i] = kv + 320 * i;
    }
    enum { CAP = 1 << 16 };
    char *out = malloc(CAP);
    if (!out) bug("proof_check: out of memory");
    int status = run_capture(argv, out, CAP);
    v->status = status == 0 ? PROOF_ACCEPTED : status == 1 ? PROOF_REJECTED : PROOF_ERROR;
    keep_detail(v, out, cfile);
    free(out);
    free(kv);
    free(argv);
  }
  unlink(dump);
  unlink(cfile);
  rmdir(dir);
}

const char *proof_status_name(int status) {
  static const char *const names[] = {[PROOF_UNAVAILABLE] = "unavailable", [PROOF_ACCEPTED] = "exact",
                                      [PROOF_REJECTED] = "rejected", [PROOF_ERROR] = "error",
                                      [PROOF_NOT_APPLICABLE] = "not-applicable", [PROOF_SKIPPED] = "skipped"};
  return names[status];
}

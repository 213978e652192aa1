/* files.c: atomic output files and path identity (see files.h). */
#include "frontend/files.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/diag.h"

static int failed(AtomicFile *af, const char *what) {
  snprintf(af->error, sizeof af->error, "cannot %s '%s': %s", what, af->path, strerror(errno));
  return -1;
}

int atomic_open(AtomicFile *af, const char *path) {
  memset(af, 0, sizeof *af);
  af->path = path;
  size_t n = strlen(path) + sizeof ".tmp-XXXXXX";
  af->tmp = malloc(n);
  if (!af->tmp) bug("out of memory");
  snprintf(af->tmp, n, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(af->tmp);
  if (fd < 0) {
    free(af->tmp);
    af->tmp = NULL;
    return failed(af, "write");
  }
  /* mkstemp makes the file 0600; give it the mode a plain fopen would. */
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) || !(af->f = fdopen(fd, "wb"))) {
    int saved = errno;
    close(fd);
    unlink(af->tmp);
    errno = saved;
    failed(af, "write");
    free(af->tmp);
    af->tmp = NULL;
    return -1;
  }
  return 0;
}

int atomic_commit(AtomicFile *af) {
  int status = 0;
  if (fflush(af->f) || ferror(af->f)) status = failed(af, "write");
  if (fclose(af->f) && !status) status = failed(af, "write");
  af->f = NULL;
  if (!status && rename(af->tmp, af->path)) status = failed(af, "replace");
  if (status) unlink(af->tmp);
  free(af->tmp);
  af->tmp = NULL;
  return status;
}

void atomic_abort(AtomicFile *af) {
  if (af->f) fclose(af->f);
  if (af->tmp) unlink(af->tmp);
  free(af->tmp);
  af->f = NULL;
  af->tmp = NULL;
}

/* The canonical folder of path, then its last component: malloc'ed. */
static char *resolve(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, (size_t)(slash - path + 1)) : strdup(".");
  char *real = dir ? realpath(dir, NULL) : NULL;
  const char *base = slash ? slash + 1 : path;
  size_t n = (real ? strlen(real) : strlen(path)) + strlen(base) + 2;
  char *out = malloc(n);
  if (!out) bug("out of memory");
  if (real)
    snprintf(out, n, "%s/%s", real, base);
  else
    snprintf(out, n, "%s", path);
  free(real);
  free(dir);
  return out;
}

bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (!stat(a, &sa) && !stat(b, &sb)) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  char *ra = resolve(a), *rb = resolve(b);
  bool same = !strcmp(ra, rb);
  free(ra);
  free(rb);
  return same;
}

/* files.c: atomic output files, path identity and whole-file input (see files.h). */
#include "util/files.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/diag.h"

/* ---- Temporary files removed when SIGINT or SIGTERM ends the process. */

enum { MAX_TEMPORARIES = 8 };
static char *_Atomic temporaries[MAX_TEMPORARIES];
static struct sigaction before[2]; /* SIGINT's and SIGTERM's action before ours */
static const int caught_signals[2] = {SIGINT, SIGTERM};

static void remove_temporaries(int sig) {
  for (int i = 0; i < MAX_TEMPORARIES; i++) {
    char *path = atomic_load(&temporaries[i]);
    if (path) unlink(path);
  }
  const struct sigaction *old = &before[sig == SIGTERM];
  sigaction(sig, old, NULL);
  if (old->sa_flags & SA_SIGINFO || old->sa_handler == SIG_DFL) raise(sig); /* delivered when this returns */
  else if (old->sa_handler != SIG_IGN) old->sa_handler(sig);
}

/* Ours, unless the signal is ignored or ours already (it is installed
 * again after whoever replaced it, such as the campaign's worker pool). */
static void catch_signals(void) {
  for (int i = 0; i < 2; i++) {
    struct sigaction now;
    sigaction(caught_signals[i], NULL, &now);
    if (now.sa_handler == SIG_IGN || now.sa_handler == remove_temporaries) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temporaries;
    sigemptyset(&sa.sa_mask);
    before[i] = now;
    sigaction(caught_signals[i], &sa, NULL);
  }
}

void temporary_track(char *path) {
  catch_signals();
  for (int i = 0; i < MAX_TEMPORARIES; i++) {
    char *none = NULL;
    if (atomic_compare_exchange_strong(&temporaries[i], &none, path)) return;
  }
}

void temporary_forget(const char *path) {
  for (int i = 0; i < MAX_TEMPORARIES; i++)
    if (atomic_load(&temporaries[i]) == path) atomic_store(&temporaries[i], NULL);
}

/* ---- Atomic output files. */

static int failed(AtomicFile *af, const char *what) {
  snprintf(af->error, sizeof af->error, "cannot %s '%s': %s", what, af->path, strerror(errno));
  return -1;
}

/* path with its symbolic links followed, malloc'ed: the file a write
 * through path would reach, even when it does not exist yet (a dangling
 * link names the file to create). NULL with errno ELOOP past 40 links. */
static char *follow_links(const char *path) {
  char *at = strdup(path);
  for (int hops = 0; at && hops < 40; hops++) {
    struct stat st;
    if (lstat(at, &st) || !S_ISLNK(st.st_mode)) return at;
    char target[PATH_MAX];
    ssize_t n = readlink(at, target, sizeof target - 1);
    if (n < 0) return at;
    target[n] = 0;
    const char *slash = strrchr(at, '/');
    int dir = target[0] == '/' || !slash ? 0 : (int)(slash - at + 1);
    size_t size = (size_t)dir + (size_t)n + 1;
    char *next = malloc(size);
    if (!next) bug("out of memory");
    snprintf(next, size, "%.*s%s", dir, at, target);
    free(at);
    at = next;
  }
  if (!at) bug("out of memory");
  free(at);
  errno = ELOOP;
  return NULL;
}

/* The temporary file beside the destination, with the destination's mode
 * (and owner, when we may set it) if it exists, else the mode a plain
 * fopen would give; NULL with errno set. */
static FILE *open_temporary(AtomicFile *af, const struct stat *old) {
  size_t n = strlen(af->target) + sizeof ".tmp-XXXXXX";
  af->tmp = malloc(n);
  if (!af->tmp) bug("out of memory");
  snprintf(af->tmp, n, "%s.tmp-XXXXXX", af->target);
  int fd = mkstemp(af->tmp);
  if (fd < 0) return NULL;
  temporary_track(af->tmp);
  mode_t mask = umask(0);
  umask(mask);
  mode_t mode = old ? old->st_mode & 0777 : 0666 & ~mask;
  /* Only root may give a file away: anyone else keeps the file as theirs. */
  if (old && fchown(fd, old->st_uid, old->st_gid)) errno = 0;
  FILE *f = NULL;
  if (!fchmod(fd, mode)) f = fdopen(fd, "wb");
  if (!f) {
    int saved = errno;
    close(fd);
    unlink(af->tmp);
    temporary_forget(af->tmp);
    errno = saved;
  }
  return f;
}

int atomic_open(AtomicFile *af, const char *path) {
  memset(af, 0, sizeof *af);
  af->path = path;
  struct stat st;
  bool exists = !stat(path, &st);
  if (exists && S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    return failed(af, "write");
  }
  /* A device, a pipe or a socket (/dev/null, /dev/stdout on a terminal)
   * is written in place: renaming over it would replace it with a file. */
  if (exists && !S_ISREG(st.st_mode)) {
    af->f = fopen(path, "wb");
    return af->f ? 0 : failed(af, "write");
  }
  /* A symbolic link stays a link: the file it names is the one replaced. */
  af->target = follow_links(path);
  struct stat target;
  af->linked = af->target && !stat(af->target, &target) && S_ISREG(target.st_mode) && target.st_nlink > 1;
  if (af->target) af->f = open_temporary(af, exists ? &st : NULL);
  if (af->f) return 0;
  int saved = errno;
  free(af->tmp);
  free(af->target);
  af->tmp = af->target = NULL;
  errno = saved;
  return failed(af, "write");
}

/* The complete temporary copied into the hard-linked target in place.
 * The temporary is no longer removed by a signal: it holds the only
 * complete copy until the target does. On failure it is kept and named. */
static int copy_in_place(AtomicFile *af) {
  temporary_forget(af->tmp);
  FILE *from = fopen(af->tmp, "rb"), *to = from ? fopen(af->target, "r+b") : NULL;
  char buf[65536];
  size_t n = 0;
  long size = 0;
  bool ok = to != NULL;
  while (ok && (n = fread(buf, 1, sizeof buf, from)) > 0) ok = fwrite(buf, 1, n, to) == n;
  ok = ok && !ferror(from) && (size = ftell(to)) >= 0 && !fflush(to) && !ftruncate(fileno(to), size);
  int saved = errno;
  if (to && fclose(to)) ok = false, saved = errno;
  if (from) fclose(from);
  if (ok) return 0;
  errno = saved;
  failed(af, "rewrite");
  size_t len = strlen(af->error);
  snprintf(af->error + len, sizeof af->error - len, " (the complete new content is in '%s')", af->tmp);
  free(af->tmp); /* kept on disk: atomic_abort must not remove it */
  af->tmp = NULL;
  return -1;
}

int atomic_commit(AtomicFile *af) {
  int status = 0;
  if (fflush(af->f) || ferror(af->f)) status = failed(af, "write");
  if (fclose(af->f) && !status) status = failed(af, "write");
  af->f = NULL;
  if (af->tmp && !status && af->linked) status = copy_in_place(af); /* atomic_abort removes the copied tmp */
  else if (af->tmp && !status && rename(af->tmp, af->target)) status = failed(af, "replace");
  else if (af->tmp && !status) temporary_forget(af->tmp); /* renamed: no longer ours to remove */
  if (af->tmp && status) unlink(af->tmp);
  atomic_abort(af);
  return status;
}

void atomic_abort(AtomicFile *af) {
  if (af->f) fclose(af->f);
  if (af->tmp) unlink(af->tmp);
  temporary_forget(af->tmp);
  free(af->tmp);
  free(af->target);
  af->f = NULL;
  af->tmp = af->target = NULL;
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

char *read_all(FILE *f, size_t limit, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (ferror(f)) break;
    if (n < cap) {
      buf[n] = 0;
      *len = n;
      return buf;
    }
    if (n > limit) {
      errno = EFBIG;
      break;
    }
    cap = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
    char *bigger = realloc(buf, cap);
    if (!bigger) break;
    buf = bigger;
  }
  free(buf);
  return NULL;
}

/* pool.c: the worker pool (see pool.h). */
#include "harness/pool.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

static volatile sig_atomic_t caught;

static void on_signal(int sig) { caught = sig; }

void pool_catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal; /* no SA_RESTART: poll and waitpid return EINTR */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int pool_interrupted(void) { return caught; }

void pool_reraise(void) {
  if (!caught) return;
  signal(caught, SIG_DFL);
  raise(caught);
}

enum { REC_START, REC_DONE };

typedef struct Record {
  int kind;
  uint64_t item;
  Outcome out;
} Record;

typedef struct Worker {
  pid_t pid;
  int fd;
  uint64_t next;    /* next item of this worker's share */
  uint64_t started; /* item with a START and no DONE yet, or UINT64_MAX */
  bool busy;
} Worker;

static void send_record(int fd, const Record *r) {
  const char *b = (const char *)r;
  size_t left = sizeof *r;
  while (left) {
    ssize_t n = write(fd, b, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(2);
    b += n;
    left -= (size_t)n;
  }
}

static _Noreturn void worker_main(const Pool *pool, uint64_t first, int fd) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  for (uint64_t item = first; item < pool->from + pool->count; item += (uint64_t)pool->jobs) {
    Record r = {.kind = REC_START, .item = item};
    send_record(fd, &r);
    pool->work(pool->ctx, item, &r.out);
    r.kind = REC_DONE;
    send_record(fd, &r);
  }
  _exit(0);
}

static void start_worker(const Pool *pool, Worker *w) {
  int fds[2];
  if (pipe(fds)) bug("pool: pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) bug("pool: fork: %s", strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    worker_main(pool, w->next, fds[1]);
  }
  close(fds[1]);
  w->pid = pid;
  w->fd = fds[0];
  w->busy = true;
  w->started = UINT64_MAX;
}

/* A worker's pipe closed: reap it; if it died inside an item, that item is
 * a crash and a new worker takes the rest of its share. */
static void worker_ended(const Pool *pool, Worker *w) {
  int status;
  close(w->fd);
  while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
  }
  w->busy = false;
  if (w->started == UINT64_MAX || caught) return;
  Outcome out = {0};
  out.counts.kernels = out.counts.failures = 1;
  snprintf(out.stage, sizeof out.stage, "crash");
  if (WIFSIGNALED(status))
    snprintf(out.message, sizeof out.message, "the worker died of signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  else
    snprintf(out.message, sizeof out.message, "the worker exited with status %d", WEXITSTATUS(status));
  pool->done(pool->ctx, w->started, &out);
  w->next = w->started + (uint64_t)pool->jobs;
  if (w->next < pool->from + pool->count) start_worker(pool, w);
}

static bool read_record(Worker *w, Record *r) {
  char *b = (char *)r;
  size_t got = 0;
  while (got < sizeof *r) {
    ssize_t n = read(w->fd, b + got, sizeof *r - got);
    if (n < 0 && errno == EINTR && !caught) continue;
    if (n <= 0) return false;
    got += (size_t)n;
  }
  return true;
}

/* A signal arrived: stop every worker and reap it. */
static void stop_workers(const Pool *pool, Worker *w) {
  for (int j = 0; j < pool->jobs; j++)
    if (w[j].busy) kill(w[j].pid, SIGKILL);
  for (int j = 0; j < pool->jobs; j++)
    if (w[j].busy) worker_ended(pool, &w[j]);
}

void pool_run(const Pool *pool) {
  Worker w[POOL_MAX_JOBS];
  int64_t last = clock_now_ms();
  for (int j = 0; j < pool->jobs; j++) {
    w[j] = (Worker){.next = pool->from + (uint64_t)j};
    if (w[j].next < pool->from + pool->count && !caught) start_worker(pool, &w[j]);
  }
  while (!caught) {
    struct pollfd fds[POOL_MAX_JOBS];
    int map[POOL_MAX_JOBS], n = 0;
    for (int j = 0; j < pool->jobs; j++)
      if (w[j].busy) {
        fds[n] = (struct pollfd){.fd = w[j].fd, .events = POLLIN};
        map[n++] = j;
      }
    if (!n) break;
    if (poll(fds, (nfds_t)n, 1000) < 0) {
      if (errno == EINTR) continue;
      bug("pool: poll: %s", strerror(errno));
    }
    for (int i = 0; i < n; i++) {
      if (!fds[i].revents) continue;
      Worker *wk = &w[map[i]];
      Record r;
      if (!read_record(wk, &r)) {
        worker_ended(pool, wk);
      } else if (r.kind == REC_START) {
        wk->started = r.item;
      } else {
        wk->started = UINT64_MAX;
        pool->done(pool->ctx, r.item, &r.out);
      }
    }
    if (pool->tick && clock_now_ms() - last >= 10000) {
      pool->tick(pool->ctx);
      last = clock_now_ms();
    }
  }
  stop_workers(pool, w);
}

/* clock.c: CLOCK_MONOTONIC read in one place (util/clock.h). POSIX
 * guarantees the clock exists, so a failure of clock_gettime cannot
 * happen short of a broken libc; it would leave the time at zero. */
#include "util/clock.h"

static struct timespec now(void) {
  struct timespec ts = {0, 0};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts;
}

int64_t clock_now_ns(void) {
  struct timespec ts = now();
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clock_now_ms(void) { return clock_now_ns() / 1000000; }

struct timespec clock_after_ns(int64_t ns) {
  struct timespec ts = now();
  ns += ts.tv_nsec;
  ts.tv_sec += ns / 1000000000;
  ts.tv_nsec = ns % 1000000000;
  return ts;
}

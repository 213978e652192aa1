/* clock.h: the one monotonic clock. Every wall time bfsync measures or
 * waits for (a run's duration, the trace's timestamps, the watchdog, a
 * campaign's progress, the pool's timeouts) reads CLOCK_MONOTONIC here, so
 * a change of the system time never moves one of them. */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
int64_t clock_now_ns(void);
/* The same in milliseconds. */
int64_t clock_now_ms(void);
/* The CLOCK_MONOTONIC time ns nanoseconds from now (ns >= 0), as
 * pthread_cond_timedwait takes it on a condition variable set to that
 * clock (pthread_condattr_setclock). */
struct timespec clock_after_ns(int64_t ns);

#endif

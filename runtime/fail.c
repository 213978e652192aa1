/* fail.c: the runtime's one failure path. Whatever goes wrong inside a
 * run (an out-of-bounds access, a deadlock, the race checker, the counter
 * window, the watchdog) is recorded here once: the first failure wins, as
 * "kernel K, line L: what" in rt->error, the executor is told to stop its
 * engines, and an engine that failed unwinds to its executor (longjmp out
 * of the kernel's entry function). The executors, the op dispatch, the race
 * checker and the trace all fail through these four functions, so none of
 * them depends on another for it. */
#include <stdarg.h>
#include <stdio.h>

#include "rt.h"

int rt_failed(const bfrt *rt) { return atomic_load(&rt->failed); }

static void record(bfrt *rt, int line, const char *fmt, va_list ap) {
  if (atomic_exchange(&rt->failed, 1)) return;
  int n = line > 0 ? snprintf(rt->error, sizeof rt->error, "kernel %s, line %d: ", rt->k->name, line)
                   : snprintf(rt->error, sizeof rt->error, "kernel %s: ", rt->k->name);
  vsnprintf(rt->error + n, sizeof rt->error - (size_t)n, fmt, ap);
  if (rt->exec_state && rt->exec->stop) rt->exec->stop(rt); /* engines are running */
}

void rt_record_failure(bfrt *rt, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(rt, line, fmt, ap);
  va_end(ap);
}

_Noreturn void rt_fail(Ctx *cx, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(cx->rt, line, fmt, ap);
  va_end(ap);
  rt_unwind(cx);
}

_Noreturn void rt_unwind(Ctx *cx) { longjmp(cx->unwind, 1); }


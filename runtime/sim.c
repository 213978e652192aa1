/* sim.c: the deterministic cycle simulator (BFRT_EXEC_SIM), a placeholder.
 *
 * The simulator is written separately (issue 5); it fills in this
 * Executor: per-engine clocks, ops charged bfrt_op_cycles, waits that end
 * at max(own clock, when the counter reached the threshold + semaphore
 * latency) + the wait's cost, bookkeeping and barriers at the target's
 * costs. Until then a simulated run fails with a clear message, and leaves
 * rt->exec_state NULL since no engine runs. */
#include "rt.h"

static void sim_run(bfrt *rt) { rt_record_failure(rt, 0, "the cycle simulator is not built yet"); }

const Executor rt_sim_executor = {.run = sim_run};

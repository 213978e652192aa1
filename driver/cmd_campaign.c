/* cmd_campaign.c: `bfsync campaign`, the differential campaign over random
 * kernels and the exhaustive small scope. The work is in harness/
 * (campaign.h); this file reads the command line.
 *
 *   campaign      seeds -> pool of workers: gen -> check (harness/check.c)
 *                 -> summary -> failing seeds minimized
 *   --exhaustive  every kernel of the small scope -> oracle */
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/args.h"
#include "driver/commands.h"
#include "harness/campaign.h"
#include "harness/gen.h"
#include "harness/pool.h"

#ifndef BFSYNC_SOURCE_DIR
#define BFSYNC_SOURCE_DIR "."
#endif

static const char usage_text[] =
    "usage: bfsync campaign --from S --count N [options]\n"
    "       bfsync campaign --exhaustive [--instructions N] [--engines all|core] [--views] [--jobs J] [--schedules K] [--json]\n"
    "\n"
    "The differential campaign: for each seed S .. S+N-1, the kernel of `bfsync gen\n"
    "--seed S` is checked, judged by the oracle, run on threads with jitter and the\n"
    "race checker and on the simulator, under both sync modes; on every K-th seed\n"
    "the C of one mode (in turn) is also built with gcc and run. Every result is\n"
    "compared bit for bit with the sequential reference. Failing seeds are\n"
    "minimized into DIR/seed-S.bfk.\n"
    "With --exhaustive: every kernel of the small scope, judged by the oracle.\n"
    "\n"
    "  --from S         first seed (default 1)\n"
    "  --count N        number of seeds (default 100)\n"
    "  --jobs J         worker processes (default 2)\n"
    "  --gcc-every K    gcc step every K-th seed, the sync modes in turn (default 1;\n"
    "                   0 = never)\n"
    "  --size Z         kernel size for gen (default 12)\n"
    "  --schedules K    oracle interleavings per sync mode (default 2)\n"
    "  --no-jitter      no random delays on threads\n"
    "  --lib PATH       libbfrt.a for the gcc step (default: beside bfsync; the gcc\n"
    "                   step also needs the source tree bfsync was built from)\n"
    "  --regress DIR    where minimized failing seeds go (default tests/regress)\n"
    "  --target FILE    the machine (default: the built-in trn1), e.g. a target\n"
    "                   with narrow counters (targets/trn1_c8.target)\n"
    "  --scale K        every kernel parameter times K (default 1): longer runs, so\n"
    "                   that narrow counters wrap many times\n"
    "  --no-minimize    report failing seeds without minimizing them\n"
    "  --json           the summary as one JSON object\n"
    "  --dry-run        with --exhaustive: count the kernels, judge none\n"
    "  --instructions N with --exhaustive: at most N instructions (1..3, default 3)\n"
    "  --engines all|core  with --exhaustive: act, dve, pool, pe and dma with an hbm\n"
    "                   tensor, and the pinned queue dma1 where dma means any queue\n"
    "                   (all, the default), or act, dve and pool (core)\n"
    "  --views          with --exhaustive: tiles of 2 partitions, each reference all\n"
    "                   of one or one row of it (0, 1, or a loop variable's parity),\n"
    "                   dma with element slices; pe is left out\n"
    "  --mutate=drop:K|lower:K|raise:K\n"
    "                   TEST ONLY: break the K-th barrier-free wait of every kernel,\n"
    "                   to see the campaign catch and minimize failures\n"
    "Exit status 0 when every kernel passed, 1 otherwise, 2 on a usage error.\n";

/* The directory bfsync runs from (libbfrt.a is built beside it). */
static char *dir_of_exe(void) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return strdup(".");
  path[n] = 0;
  char *slash = strrchr(path, '/');
  if (slash) *slash = 0;
  return strdup(path);
}

/* The first engine the campaign's kernels name that target t lacks (or
 * has with another kind), or NULL: gen writes kernels for the built-in
 * trn1's engines, and the small scope names act, dve, pool, then pe and
 * dma. Kernels on other engines would all fail their check. */
static const char *missing_engine(const Target *t, bool exhaustive, int scope_engines) {
  static const char *const scope[] = {"act", "dve", "pool", "pe", "dma"};
  for (int i = 0; exhaustive && i < scope_engines; i++)
    if (target_engine(t, scope[i]) < 0) return scope[i];
  const Target *trn1 = target_default();
  for (int e = 0; !exhaustive && e < trn1->nengines; e++) {
    int own = target_engine(t, trn1->engines[e].name);
    if (own < 0 || t->engines[own].kind != trn1->engines[e].kind) return trn1->engines[e].name;
  }
  return NULL;
}

int cmd_campaign(int argc, char **argv) {
  uint64_t scale = 1, from = 1, count = 100, jobs = 2, gcc_every = 1, size = 12, schedules = 2,
           instructions = EXHAUSTIVE_MAX_INSTRUCTIONS;
  bool json = false, exhaustive = false, dry_run = false, no_jitter = false, no_minimize = false, views = false;
  bool seed_options = false, scope_options = false; /* options of one form only, given */
  const char *lib = NULL, *regress_dir = "tests/regress", *target_path = NULL;
  Mutation mutation = {0, -1};
  int engines = 1; /* scope_choices: all */
  static const char *const scope_choices[] = {"core", "all", NULL};
  const ArgSpec specs[] = {
      {.name = "--from", .kind = ARG_NUMBER, .dest = &from, .max = UINT64_MAX / 2, .given = &seed_options},
      {.name = "--count", .kind = ARG_NUMBER, .dest = &count, .min = 1, .max = UINT64_MAX / 2, .given = &seed_options},
      {.name = "--jobs", .kind = ARG_NUMBER, .dest = &jobs, .min = 1, .max = POOL_MAX_JOBS},
      {.name = "--gcc-every", .kind = ARG_NUMBER, .dest = &gcc_every, .max = UINT64_MAX, .given = &seed_options},
      {.name = "--size", .kind = ARG_NUMBER, .dest = &size, .min = 1, .max = GEN_MAX_SIZE, .given = &seed_options},
      {.name = "--schedules", .kind = ARG_NUMBER, .dest = &schedules, .min = 1, .max = 1000},
      {.name = "--instructions", .kind = ARG_NUMBER, .dest = &instructions, .min = 1,
       .max = EXHAUSTIVE_MAX_INSTRUCTIONS, .given = &scope_options},
      {.name = "--engines", .kind = ARG_CHOICE, .dest = &engines, .choices = scope_choices, .given = &scope_options},
      {.name = "--json", .kind = ARG_FLAG, .dest = &json},
      {.name = "--exhaustive", .kind = ARG_FLAG, .dest = &exhaustive},
      {.name = "--dry-run", .kind = ARG_FLAG, .dest = &dry_run, .given = &scope_options},
      {.name = "--views", .kind = ARG_FLAG, .dest = &views, .given = &scope_options},
      {.name = "--no-jitter", .kind = ARG_FLAG, .dest = &no_jitter, .given = &seed_options},
      {.name = "--no-minimize", .kind = ARG_FLAG, .dest = &no_minimize, .given = &seed_options},
      {.name = "--mutate", .kind = ARG_MUTATION, .dest = &mutation, .given = &seed_options},
      {.name = "--lib", .kind = ARG_STRING, .dest = &lib, .given = &seed_options},
      {.name = "--regress", .kind = ARG_STRING, .dest = &regress_dir, .given = &seed_options},
      {.name = "--target", .kind = ARG_STRING, .dest = &target_path},
      {.name = "--scale", .kind = ARG_NUMBER, .dest = &scale, .min = 1, .max = 1000, .given = &seed_options},
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"campaign", usage_text, specs, 0, 0, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  if (status < 0 && !exhaustive && scope_options)
    status = args_error(&cl, "--instructions, --engines, --views and --dry-run go with --exhaustive");
  if (status < 0 && exhaustive && seed_options)
    status = args_error(&cl, "--exhaustive judges every kernel of the small scope: --from, --count, --size, --scale, "
                             "--gcc-every, --lib, --regress, --no-jitter, --no-minimize and --mutate go with the seed "
                             "campaign");
  /* Each kernel's arena is freed and the next one's allocated: without
   * these glibc returns the memory to the kernel and takes it back every
   * time, which cost 70% of the exhaustive run in TLB flushes. */
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  Target *target = ARENA_NEW(arena, Target);
  if (status < 0 && target_path && target_load(target_path, arena, target, stderr)) status = 1;
  const char *lacks = status < 0 && target_path ? missing_engine(target, exhaustive, engines == 0 ? 3 : 5) : NULL;
  if (lacks)
    status = args_error(&cl, "--target %s: the %s kernels name engine '%s' as trn1 has it, which target %s %s",
                        target_path, exhaustive ? "small scope's" : "generated", lacks, target->name,
                        target_engine(target, lacks) < 0 ? "lacks" : "has with another kind");
  if (!target_path) target = NULL;
  char *exe_dir = dir_of_exe();
  if (status < 0 && exhaustive) {
    ExhaustiveScope scope = {(int)instructions, engines == 0 ? 3 : 5, (int)jobs, (int)schedules, dry_run, json, target, views};
    status = exhaustive_run(&scope);
  } else if (status < 0) {
    Campaign c = {from, count, (int)jobs, gcc_every, json, !no_minimize, regress_dir,
                  {(long)size, (int)schedules, !no_jitter, NULL, mutation.kind, mutation.index, target, (int64_t)scale},
                  {.lib = lib ? lib : arena_printf(arena, "%s/libbfrt.a", exe_dir),
                   .root = BFSYNC_SOURCE_DIR}};
    status = campaign_run(&c);
  }
  free(exe_dir);
  arena_free(arena);
  return status;
}

/* cmd_timeline.c: `bfsync timeline TRACE.json -o T.svg`, a trace written
 * by `bfsync run --trace` drawn as one SVG (backend/timeline.c): every
 * process of the trace (both modes, after `run --sync=both`) one above the
 * other on one time axis, in microseconds or, with --cycles, in cycles of
 * the target's clock.
 *
 *   timeline    read -> json -> check -> draw -> atomic write */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/timeline.h"
#include "driver/args.h"
#include "driver/commands.h"
#include "util/files.h"
#include "target/target.h"

enum { MAX_TRACE_BYTES = 512 << 20 };

static const char usage_text[] =
    "usage: bfsync timeline TRACE.json -o OUT.svg [--title TEXT] [--cycles [--target FILE]]\n\n"
    "Draw a trace written by `bfsync run --trace` as one SVG: each run (each\n"
    "process: both modes after --sync=both) with a lane per engine, the whole\n"
    "run coloured by op class, wait and barrier, then a zoom where every event\n"
    "is a rectangle with a tooltip (docs/runtime.md, \"Timelines\").\n"
    "  -o FILE        the SVG to write (required)\n"
    "  --title TEXT   the heading (default: the trace's file name)\n"
    "  --cycles       times in cycles of the target's clock (traces of --exec=sim),\n"
    "                 not microseconds\n"
    "  --target FILE  the target whose clock_ghz --cycles uses (default: the built-in trn1)\n"
    "Exit status: 0 drawn, 1 an unreadable or malformed trace, 2 usage error.\n";

static int draw(const char *trace_path, const char *out_path, const TimelineOptions *opt) {
  FILE *f = fopen(trace_path, "rb");
  size_t len = 0;
  char *text = f ? read_all(f, MAX_TRACE_BYTES, &len) : NULL;
  int saved = errno;
  if (f) fclose(f);
  if (!text) {
    if (saved == EFBIG)
      error_print(stderr, "'%s' is larger than %d MiB, the limit for a trace\n", trace_path,
              MAX_TRACE_BYTES >> 20);
    else error_print(stderr, "cannot read '%s': %s\n", trace_path, strerror(saved));
    return 1;
  }
  AtomicFile out;
  char err[512];
  int status = 0;
  if (atomic_open(&out, out_path)) {
    error_print(stderr, "%s\n", out.error);
    status = 1;
  } else {
    int drawn = timeline_draw(trace_path, text, len, opt, out.f, err, sizeof err);
    if (drawn) fprintf(stderr, "%s\n", err);
    status = output_finish(&out, drawn);
  }
  free(text);
  return status;
}

int cmd_timeline(int argc, char **argv) {
  const char *out_path = NULL, *title = NULL, *target_path = NULL;
  bool cycles = false;
  const ArgSpec specs[] = {
      {.name = "-o", .kind = ARG_STRING, .dest = &out_path, .required = true},
      {.name = "--title", .kind = ARG_STRING, .dest = &title},
      {.name = "--cycles", .kind = ARG_FLAG, .dest = &cycles},
      {.name = "--target", .kind = ARG_STRING, .dest = &target_path},
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"timeline", usage_text, specs, 1, 1, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  if (status < 0 && target_path && !cycles) status = args_error(&cl, "--target goes with --cycles");
  if (status < 0 && same_file(out_path, cl.files[0]))
    status = args_error(&cl, "-o %s would overwrite the trace", out_path);
  if (status < 0 && target_path && same_file(out_path, target_path))
    status = args_error(&cl, "-o %s would overwrite the target file", out_path);
  Target *target = ARENA_NEW(arena, Target);
  if (status < 0 && target_path && target_load(target_path, arena, target, stderr)) status = 1;
  if (status < 0) {
    const char *base = strrchr(cl.files[0], '/');
    TimelineOptions opt = {title ? title : base ? base + 1 : cl.files[0], 1.0, "us"};
    if (cycles) opt = (TimelineOptions){opt.title, 1e3 * (target_path ? target : target_default())->costs.clock_ghz, "cycles"};
    status = draw(cl.files[0], out_path, &opt);
  }
  arena_free(arena);
  return status;
}

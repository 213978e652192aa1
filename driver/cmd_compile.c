/* cmd_compile.c: `bfsync compile`, the kernel as C (or as the IR).
 *
 *   parse -> check -> transform -> ir_validate -> emit_c | ir_print | ir_explain
 *
 * The C is what a hardware team compiles against their own bfrt runtime;
 * --emit=ir and --explain are for the compiler engineer reading the
 * synchronization the transform chose. */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "driver/commands.h"
#include "driver/options.h"
#include "transform/ir_dump.h"

typedef enum Emit { EMIT_C, EMIT_IR, EMIT_EXPLAIN, EMIT_PROOF } Emit;

typedef struct CompileArgs {
  const char *file;
  const char *out_path;
  const char *target_path; /* NULL: the built-in trn1 */
  SyncMode sync;
  Emit emit;
} CompileArgs;

static const char usage_text[] =
    "usage: bfsync compile FILE [--sync=barrier-free|barrier] [-o OUT.c] [--emit=c|ir|proof] [--explain]\n"
    "                      [--target FILE]\n"
    "\n"
    "Emit the kernel as one C99 file against the bfrt runtime (bfrt.h), with\n"
    "the synchronization inserted: barrier-free (default) or the barrier baseline.\n"
    "  --emit=ir   print the per-engine instruction streams instead\n"
    "  --emit=proof  the kernel and streams for the proof's checker (docs/proof.md)\n"
    "  --explain   list every wait with its provenance instead\n"
    "  -o FILE     write to FILE instead of stdout\n"
    "  --target FILE  the machine's engines (default: the built-in trn1)\n";

/* 0, or 2 with a message on a usage error. */
static int parse_args(int argc, char **argv, CompileArgs *a) {
  for (int i = 1; i < argc; i++) {
    const char *v;
    SyncMode modes[2];
    if ((v = option_value(argc, argv, &i, "--sync", NULL))) {
      if (parse_sync(v, 0, modes, stderr) < 0) return 2;
      a->sync = modes[0];
    } else if ((v = option_value(argc, argv, &i, "--emit", NULL))) {
      if (strcmp(v, "c") && strcmp(v, "ir") && strcmp(v, "proof")) {
        fprintf(stderr, "bfsync: error: --emit must be c, ir or proof (not '%s')\n", v);
        return 2;
      }
      if (a->emit != EMIT_EXPLAIN) a->emit = !strcmp(v, "c") ? EMIT_C : !strcmp(v, "ir") ? EMIT_IR : EMIT_PROOF;
    } else if ((v = option_value(argc, argv, &i, "--target", NULL))) {
      a->target_path = v;
    } else if (!strcmp(argv[i], "--explain")) {
      a->emit = EMIT_EXPLAIN;
    } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
      a->out_path = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "bfsync: error: unknown or incomplete option '%s'\n%s", argv[i], usage_text);
      return 2;
    } else if (a->file) {
      fprintf(stderr, "bfsync: error: compile takes one FILE\n%s", usage_text);
      return 2;
    } else {
      a->file = argv[i];
    }
  }
  if (!a->file) {
    fprintf(stderr, "bfsync: error: no input file\n%s", usage_text);
    return 2;
  }
  return 0;
}

static void emit(Program *p, Emit what, FILE *out) {
  switch (what) {
  case EMIT_C: emit_c(p, out); break;
  case EMIT_IR: ir_print(p, out); break;
  case EMIT_EXPLAIN: ir_explain(p, out); break;
  case EMIT_PROOF: ir_dump_proof(p, out); break;
  }
}

static int compile_program(Program *p, const CompileArgs *a) {
  parse(p);
  if (p->diag.errors) return 1;
  check(p);
  if (p->diag.errors) return 1;
  transform_sync(p, a->sync);
  if (p->diag.errors) return 1;
  ir_validate(p);
  FILE *out = a->out_path ? fopen(a->out_path, "w") : stdout;
  if (!out) {
    fprintf(stderr, "bfsync: error: cannot write '%s'\n", a->out_path);
    return 1;
  }
  emit(p, a->emit, out);
  int failed = ferror(out);
  if (out != stdout) failed |= fclose(out);
  if (failed) {
    fprintf(stderr, "bfsync: error: writing '%s' failed\n", a->out_path ? a->out_path : "stdout");
    return 1;
  }
  return 0;
}

int cmd_compile(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage_text, stdout);
      return 0;
    }
  CompileArgs a = {NULL, NULL, NULL, SYNC_BARRIER_FREE, EMIT_C};
  int status = parse_args(argc, argv, &a);
  if (status) return status;
  Arena *target_arena = arena_new();
  Target *target = ARENA_NEW(target_arena, Target);
  if (a.target_path && target_load(a.target_path, target_arena, target, stderr)) {
    arena_free(target_arena);
    return 1;
  }
  Program *p = program_load(a.file, a.target_path ? target : target_default(), stderr);
  status = p ? compile_program(p, &a) : 1;
  if (p) program_free(p);
  arena_free(target_arena);
  return status;
}

/* cmd_compile.c: `bfsync compile`, the kernel as C (or as the IR).
 *
 *   parse -> check -> transform -> ir_validate -> emit_c | ir_print | ir_explain
 *
 * The C is what a hardware team compiles against their own bfrt runtime;
 * --emit=ir and --explain are for the compiler engineer reading the
 * synchronization the transform chose. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "driver/args.h"
#include "driver/commands.h"
#include "frontend/files.h"
#include "transform/ir_dump.h"

typedef enum Emit { EMIT_C, EMIT_IR, EMIT_PROOF, EMIT_EXPLAIN, EMIT_HEADER } Emit;

typedef struct CompileArgs {
  const char *file;
  const char *out_path;
  const char *target_path; /* NULL: the built-in trn1 */
  int sync;                /* SyncMode, in sync_choices' order */
  int emit;                /* EMIT_C, EMIT_IR or EMIT_PROOF, in emit_choices' order */
  bool explain, header;
} CompileArgs;

static const char *const sync_choices[] = {"barrier-free", "barrier", NULL};
static const char *const emit_choices[] = {"c", "ir", "proof", NULL};

static const char usage_text[] =
    "usage: bfsync compile FILE [--sync=barrier-free|barrier] [-o OUT.c] [--emit=c|ir|proof] [--explain]\n"
    "                      [--target FILE]\n"
    "\n"
    "Emit the kernel as one C99 file against the bfrt runtime (bfrt_kernel.h), with\n"
    "the synchronization inserted: barrier-free (default) or the barrier baseline.\n"
    "  --emit=ir   print the per-engine instruction streams instead\n"
    "  --emit=proof  the kernel and streams for the proof's checker (docs/proof.md)\n"
    "  --explain   list every wait with its provenance instead\n"
    "  --header    a C header for the host instead: the descriptors' names and the\n"
    "              index of every parameter and tensor\n"
    "  -o FILE     write to FILE instead of stdout\n"
    "  --target FILE  the machine's engines (default: the built-in trn1)\n";

static void emit(Program *p, Emit what, FILE *out) {
  switch (what) {
  case EMIT_C: emit_c(p, out); break;
  case EMIT_IR: ir_print(p, out); break;
  case EMIT_PROOF: ir_dump_proof(p, out); break;
  case EMIT_EXPLAIN: ir_explain(p, out); break;
  case EMIT_HEADER: emit_header(p, out); break;
  }
}

static int compile_program(Program *p, const CompileArgs *a) {
  parse(p);
  if (p->diag.errors) return 1;
  check(p);
  if (p->diag.errors) return 1;
  Emit what = a->header ? EMIT_HEADER : a->explain ? EMIT_EXPLAIN : (Emit)a->emit;
  if (what != EMIT_HEADER) {
    transform_sync(p, a->sync);
    if (p->diag.errors) return 1;
    ir_validate(p);
  }
  if (!a->out_path) {
    emit(p, what, stdout);
    if (fflush(stdout) || ferror(stdout)) {
      fprintf(stderr, "bfsync: error: cannot write to standard output: %s\n", strerror(errno));
      return 1;
    }
    return 0;
  }
  AtomicFile out;
  if (atomic_open(&out, a->out_path)) {
    fprintf(stderr, "bfsync: error: %s\n", out.error);
    return 1;
  }
  emit(p, what, out.f);
  if (atomic_commit(&out)) {
    fprintf(stderr, "bfsync: error: %s\n", out.error);
    return 1;
  }
  return 0;
}

int cmd_compile(int argc, char **argv) {
  CompileArgs a = {.sync = SYNC_BARRIER_FREE, .emit = EMIT_C};
  const ArgSpec specs[] = {
      {.name = "--sync", .kind = ARG_CHOICE, .dest = &a.sync, .choices = sync_choices},
      {.name = "--emit", .kind = ARG_CHOICE, .dest = &a.emit, .choices = emit_choices},
      {.name = "--explain", .kind = ARG_FLAG, .dest = &a.explain},
      {.name = "--header", .kind = ARG_FLAG, .dest = &a.header},
      {.name = "--target", .kind = ARG_STRING, .dest = &a.target_path},
      {.name = "-o", .kind = ARG_STRING, .dest = &a.out_path},
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"compile", usage_text, specs, 1, 1, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  a.file = cl.nfiles ? cl.files[0] : NULL;
  if (status < 0 && a.out_path && same_file(a.out_path, a.file))
    status = args_error(&cl, "-o %s would overwrite the input file", a.out_path);
  Target *target = ARENA_NEW(arena, Target);
  if (status < 0 && a.target_path && target_load(a.target_path, arena, target, stderr)) status = 1;
  if (status < 0) {
    Program *p = program_load(a.file, a.target_path ? target : target_default(), stderr);
    if (p && !a.target_path && program_use_target_line(p, stderr)) status = 1;
    else status = p ? compile_program(p, &a) : 1;
    program_free(p);
  }
  arena_free(arena);
  return status;
}

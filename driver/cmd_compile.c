/* cmd_compile.c: `bfsync compile`, the kernel as C (or as the IR).
 *
 *   parse -> check -> transform -> ir_validate -> emit_c | ir_print | ir_explain
 *
 * The C is what a hardware team compiles against their own bfrt runtime;
 * --emit=ir and --explain are for the compiler engineer reading the
 * synchronization the transform chose; --resources for the hardware team
 * asking whether it fits their engines (transform/resources.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "driver/args.h"
#include "driver/commands.h"
#include "util/files.h"
#include "harness/exec.h"
#include "harness/params.h"
#include "transform/ir_dump.h"
#include "transform/oracle.h"
#include "transform/resources.h"
#include "transform/sync.h"

typedef enum Emit { EMIT_C, EMIT_IR, EMIT_PROOF, EMIT_EXPLAIN, EMIT_HEADER } Emit;

typedef struct CompileArgs {
  const char *file;
  const char *out_path;
  const char *target_path; /* NULL: the built-in trn1 */
  int sync;                /* SyncMode, in sync_choices' order */
  int emit;                /* EMIT_C, EMIT_IR or EMIT_PROOF, in emit_choices' order */
  bool explain, header;
  bool resources, json;
  ParamArgs params; /* --resources: measure bookkeeping per instruction here */
} CompileArgs;

static const char *const sync_choices[] = {"barrier-free", "barrier", NULL};
static const char *const emit_choices[] = {"c", "ir", "proof", NULL};

static const char usage_text[] =
    "usage: bfsync compile FILE [--sync=barrier-free|barrier] [-o OUT.c] [--emit=c|ir|proof] [--explain]\n"
    "                      [--resources [--json] [-p NAME=VALUE]...] [--target FILE]\n"
    "\n"
    "Emit the kernel as one C99 file against the bfrt runtime (bfrt_kernel.h), with\n"
    "the synchronization inserted: barrier-free (default) or the barrier baseline.\n"
    "  --emit=ir   print the per-engine instruction streams instead\n"
    "  --emit=proof  the kernel for the proof's checker (docs/proof.md; with -p, the device integers' values)\n"
    "  --explain   list every wait with its provenance instead\n"
    "  --resources per engine: semaphores and registers needed (/ the target's limit),\n"
    "              scratch bytes; with -p, bookkeeping operations per instruction\n"
    "              measured by the oracle at those parameters (--json: as JSON)\n"
    "  --header    a C header for the host instead: the descriptors' names and the\n"
    "              index of every parameter and tensor\n"
    "  -o FILE     write to FILE instead of stdout\n"
    "  --target FILE  the machine's engines (default: the built-in trn1)\n";

static int emit(Program *p, Emit what, FILE *out) {
  switch (what) {
  case EMIT_C: emit_c(p, out); break;
  case EMIT_IR: ir_print(p, out); break;
  case EMIT_PROOF:
    if (ir_dump_outside(p)) {
      fprintf(stderr, "bfsync: error: --emit=proof: %s\n", ir_dump_outside(p));
      return 1;
    }
    ir_dump_proof(p, out);
    break;
  case EMIT_EXPLAIN: ir_explain(p, out); break;
  case EMIT_HEADER: emit_header(p, out); break;
  }
  return 0;
}

/* Bookkeeping operations per instruction of engine e; -1 when the engine
 * ran no instruction or nothing was measured. */
static double per_instruction(const OracleStats *st, int e) {
  if (!st || !st->engine_instructions[e]) return -1;
  return (double)st->engine_bookkeeping[e] / (double)st->engine_instructions[e];
}

/* Scratch bytes: 8 a tracking array cell and a spilled value; an
 * expression when an array's length depends on parameters. */
static void print_scratch(const Program *p, int e, int spilled, bool json, FILE *out) {
  const IrStream *s = &p->ir->streams[e];
  int64_t cells = spilled;
  bool constant = true;
  for (int a = 0; a < s->narrays; a++) {
    constant &= s->arrays[a].length->kind == IX_CONST;
    if (constant) cells += s->arrays[a].length->value;
  }
  if (constant) {
    fprintf(out, json ? "\"%lld\"" : "%lld", (long long)(8 * cells));
    return;
  }
  if (json) fputc('"', out);
  fputs("8 * (", out);
  if (spilled) fprintf(out, "%d + ", spilled);
  for (int a = 0; a < s->narrays; a++) {
    if (a) fputs(" + ", out);
    ir_print_expr(p, s, s->arrays[a].length, out);
  }
  fputc(')', out);
  if (json) fputc('"', out);
}

static void print_resources(const Program *p, const OracleStats *st, bool json, FILE *out) {
  const Target *t = p->target;
  uint32_t counters = 0; /* the kernel's semaphores: one per engine someone waits on */
  for (int e = 0; e < t->nengines; e++) counters |= ir_tracks(&p->ir->streams[e]);
  int ncounters = 0;
  for (int e = 0; e < t->nengines; e++) ncounters += counters >> e & 1;
  if (json)
    fprintf(out,
            "{\"kernel\": \"%s\", \"sync\": \"%s\", \"target\": \"%s\", \"counter_bits\": %d, \"counters\": %d, "
            "\"engines\": [",
            p->kernel->name, sync_name(p->ir->sync), t->name, t->counter_bits, ncounters);
  else
    fprintf(out,
            "resources of %s (%s) on %s, %d-bit counters (%d waited on)\n%-8s %10s %10s %6s %8s %7s %7s %5s %6s %8s %9s  %s\n",
            p->kernel->name, sync_name(p->ir->sync), t->name, t->counter_bits, ncounters, "engine", "semaphores", "registers",
            "loops", "scalars", "guards", "shared", "last", "temps", "spilled", "bk/instr", "scratch bytes");
  const EngineResources *all = resources_plan(p);
  for (int e = 0; e < t->nengines; e++) {
    EngineResources r = all[e];
    int kind = t->engines[e].kind;
    double bk = per_instruction(st, e);
    if (json) {
      fprintf(out,
              "%s{\"engine\": \"%s\", \"semaphores\": %d, \"semaphores_limit\": %lld, \"registers\": %d, "
              "\"registers_limit\": %lld, \"min_registers\": %d, \"loop_depth\": %d, \"loop_registers\": %d, "
              "\"bookkeeping_scalars\": %d, \"guards\": %d, \"shared_registers\": %d, \"last_read\": %d, "
              "\"temporaries\": %d, \"spilled\": %d, \"producer_loads\": %d, \"arrays\": %d, \"scratch_bytes\": ",
              e ? ", " : "", t->engines[e].name, r.semaphores, (long long)t->semaphores[kind], r.registers,
              (long long)t->registers[kind], r.min_registers, r.loop_depth, r.loop_registers, r.nscalars, r.guards, r.shared,
              r.last_read, r.temporaries, r.spilled, r.producer_loads, r.arrays);
      print_scratch(p, e, r.spilled, true, out);
      if (bk >= 0)
        fprintf(out, ", \"instructions\": %lld, \"bookkeeping\": %lld, \"bookkeeping_per_instruction\": %.3f}",
                (long long)st->engine_instructions[e], (long long)st->engine_bookkeeping[e], bk);
      else
        fputs(", \"bookkeeping_per_instruction\": null}", out);
    } else {
      if (!r.registers && !r.semaphores && (!st || !st->engine_instructions[e])) continue; /* idle */
      char sems[32], regs[32], bks[32] = "-";
      snprintf(sems, sizeof sems, t->semaphores[kind] ? "%d/%lld" : "%d", r.semaphores, (long long)t->semaphores[kind]);
      snprintf(regs, sizeof regs, t->registers[kind] ? "%d/%lld" : "%d", r.registers, (long long)t->registers[kind]);
      if (bk >= 0) snprintf(bks, sizeof bks, "%.2f", bk);
      fprintf(out, "%-8s %10s %10s %6d %8d %7d %7d %5d %6d %8d %9s  ", t->engines[e].name, sems, regs,
              r.loop_registers, r.nscalars, r.guards, r.shared, r.last_read, r.temporaries, r.spilled, bks);
      print_scratch(p, e, r.spilled, false, out);
      fputc('\n', out);
    }
  }
  fputs(json ? "]}\n" : "", out);
}

/* --resources: the table, after measuring at -p's parameters if given. */
static int report_resources(Program *p, const CompileArgs *a, Oracle *o) {
  OracleStats st;
  if (o) oracle_check(o, 1, 1, NULL, &st);
  print_resources(p, o ? &st : NULL, a->json, stdout);
  if (fflush(stdout) || ferror(stdout)) {
    fprintf(stderr, "bfsync: error: cannot write to standard output: %s\n", strerror(errno));
    return 1;
  }
  return 0;
}

static int compile_program(Program *p, const CompileArgs *a) {
  parse(p);
  if (p->diag.errors) return 1;
  check(p);
  if (p->diag.errors) return 1;
  Oracle *o = NULL;
  if (a->params.n) {
    int64_t *params = ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1);
    if (param_args_bind(&a->params, p->kernel, params, stderr)) return 2;
    /* i32 tensors (device-read bounds) hold `bfsync run`'s and verify's
     * default values (seed 1), as the measurement needs some */
    Instance in = {p, params, NULL, NULL};
    const char *err;
    if (instance_inputs(&in, 1, &err)) {
      fprintf(stderr, "bfsync: error: --resources -p measures the kernel on a run at these parameters (with the "
              "default inputs of bfsync run), and %s\n", err);
      return 1;
    }
    if (!(o = oracle_new(p, params))) return 1;
  }
  Emit what = a->header ? EMIT_HEADER : a->explain ? EMIT_EXPLAIN : (Emit)a->emit;
  if (what != EMIT_HEADER) {
    transform_sync(p, a->sync);
    if (p->diag.errors) return 1;
    ir_validate(p);
  }
  if (a->resources) return report_resources(p, a, o);
  if (!a->out_path) {
    if (emit(p, what, stdout)) return 1;
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
  return output_finish(&out, emit(p, what, out.f));
}

int cmd_compile(int argc, char **argv) {
  CompileArgs a = {.sync = SYNC_BARRIER_FREE, .emit = EMIT_C};
  bool sync_given = false, emit_given = false;
  const ArgSpec specs[] = {
      {.name = "--sync", .kind = ARG_CHOICE, .dest = &a.sync, .choices = sync_choices, .given = &sync_given},
      {.name = "--emit", .kind = ARG_CHOICE, .dest = &a.emit, .choices = emit_choices, .given = &emit_given},
      {.name = "--explain", .kind = ARG_FLAG, .dest = &a.explain},
      {.name = "--header", .kind = ARG_FLAG, .dest = &a.header},
      {.name = "--target", .kind = ARG_STRING, .dest = &a.target_path},
      {.name = "-o", .kind = ARG_STRING, .dest = &a.out_path},
      {.name = "--resources", .kind = ARG_FLAG, .dest = &a.resources},
      {.name = "--json", .kind = ARG_FLAG, .dest = &a.json},
      {.name = "-p", .kind = ARG_PARAM, .dest = &a.params},
      {.name = "--param", .kind = ARG_PARAM, .dest = &a.params},
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"compile", usage_text, specs, 1, 1, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  a.file = cl.nfiles ? cl.files[0] : NULL;
  if (status < 0 && (a.json || a.params.n) && !a.resources)
    status = args_error(&cl, "--json and -p go with --resources");
  if (status < 0 && a.resources && (a.explain || a.header || a.out_path || emit_given))
    status = args_error(&cl, "--resources prints a table: not with --emit, --explain, --header or -o");
  if (status < 0 && a.header && (a.explain || emit_given || sync_given))
    status = args_error(&cl, "--header prints the host's header, for both sync modes: not with --emit, --explain or --sync");
  if (status < 0 && a.explain && emit_given) status = args_error(&cl, "--explain lists the waits: not with --emit");
  if (status < 0 && a.out_path && same_file(a.out_path, a.file))
    status = args_error(&cl, "-o %s would overwrite the input file", a.out_path);
  if (status < 0 && a.out_path && a.target_path && same_file(a.out_path, a.target_path))
    status = args_error(&cl, "-o %s would overwrite the target file", a.out_path);
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

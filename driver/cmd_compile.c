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
#include "driver/diagnostics.h"
#include "util/files.h"
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
  bool resources, json, code_size;
  ParamArgs params; /* --resources: measure bookkeeping per instruction here; --sync=unrolled: unroll for these */
  NamedPaths inputs; /* with -p: the i32 tensors' values (default: bfsync run's for seed 1) */
} CompileArgs;

static const char *const emit_choices[] = {"c", "ir", "proof", NULL};

static const char usage_text[] =
    "usage: bfsync compile FILE [--sync=MODE] [-o OUT.c] [--emit=c|ir|proof] [--explain]\n"
    "                      [--resources [--json] [-p NAME=VALUE]...] [--input NAME=X.npy]...\n"
    "                      [--code-size] [--target FILE]\n"
    "\n"
    "Emit the kernel as one C99 file against the bfrt runtime (bfrt_kernel.h), with\n"
    "the synchronization inserted: barrier-free (default), the barrier baseline,\n"
    "paper (the allocation of Sung et al., barriers where it has no shape) or\n"
    "unrolled (every loop unrolled: needs -p NAME=VALUE for every parameter, and\n"
    "takes the default i32 tensors of bfsync run --seed 1).\n"
    "  --emit=ir   print the per-engine instruction streams instead\n"
    "  --emit=proof  the kernel for the proof's checker (docs/proof.md; with -p, the device integers' values)\n"
    "  --explain   list every wait with its provenance instead\n"
    "  --resources per engine: semaphores and registers needed (/ the target's limit),\n"
    "              scratch bytes; with -p, bookkeeping operations per instruction\n"
    "              measured by the oracle at those parameters (--json: as JSON)\n"
    "  --input NAME=X.npy  with -p or --sync=unrolled: the values of i32 tensor\n"
    "              NAME (int32 .npy; repeatable; default: bfsync run's for --seed 1)\n"
    "  --code-size bytes of the emitted C in all and of each engine's function (its\n"
    "              instruction stream), instead of the C\n"
    "  --header    a C header for the host instead: the descriptors' names and the\n"
    "              index of every parameter and tensor\n"
    "  -o FILE     write to FILE instead of stdout\n"
    "  --target FILE  the machine's engines (default: the built-in trn1)\n"
    DIAGNOSTICS_FORMAT_HELP;

static int emit(Program *p, Emit what, FILE *out) {
  switch (what) {
  case EMIT_C: emit_c(p, out); break;
  case EMIT_IR: ir_print(p, out); break;
  case EMIT_PROOF:
    if (ir_dump_outside(p)) {
      error_print(stderr, "--emit=proof: %s\n", ir_dump_outside(p));
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
static void print_scratch(const Program *p, int e, int spilled, FILE *out) {
  const IrStream *s = &p->ir->streams[e];
  int64_t cells = spilled;
  bool constant = true;
  for (int a = 0; a < s->narrays; a++) {
    constant &= s->arrays[a].length->kind == IX_CONST;
    if (constant) cells += s->arrays[a].length->value;
  }
  if (constant) {
    fprintf(out, "%lld", (long long)(8 * cells));
    return;
  }
  fputs("8 * (", out);
  if (spilled) fprintf(out, "%d + ", spilled);
  for (int a = 0; a < s->narrays; a++) {
    if (a) fputs(" + ", out);
    ir_print_expr(p, s, s->arrays[a].length, out);
  }
  fputc(')', out);
}

/* The kernel's semaphores: one per engine someone waits on. */
static int waited_counters(const Program *p) {
  uint32_t counters = 0;
  for (int e = 0; e < p->target->nengines; e++) counters |= ir_tracks(&p->ir->streams[e]);
  int n = 0;
  for (int e = 0; e < p->target->nengines; e++) n += counters >> e & 1;
  return n;
}

/* One engine's object of --resources --json. */
static void engine_json(JsonWriter *w, const Program *p, const OracleStats *st, int e, const EngineResources *r) {
  const Target *t = p->target;
  int kind = t->engines[e].kind;
  jw_object(w);
  jw_key_string(w, "engine", t->engines[e].name);
  const struct {
    const char *key;
    int64_t value;
  } counts[] = {
      {"semaphores", r->semaphores},     {"semaphores_limit", t->semaphores[kind]},
      {"registers", r->registers},       {"registers_limit", t->registers[kind]},
      {"min_registers", r->min_registers}, {"loop_depth", r->loop_depth},
      {"loop_registers", r->loop_registers}, {"bookkeeping_scalars", r->nscalars},
      {"guards", r->guards},             {"shared_registers", r->shared},
      {"last_read", r->last_read},       {"temporaries", r->temporaries},
      {"spilled", r->spilled},           {"producer_loads", r->producer_loads},
      {"arrays", r->arrays},
  };
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) jw_key_int(w, counts[i].key, counts[i].value);
  char *scratch = NULL;
  size_t len = 0;
  FILE *text = open_memstream(&scratch, &len);
  if (!text) {
    error_print(stderr, "out of memory\n");
    exit(1);
  }
  print_scratch(p, e, r->spilled, text);
  fclose(text);
  jw_key_string(w, "scratch_bytes", scratch); /* a string: it may be an expression */
  free(scratch);
  double bk = per_instruction(st, e);
  if (bk >= 0) {
    jw_key_int(w, "instructions", st->engine_instructions[e]);
    jw_key_int(w, "bookkeeping", st->engine_bookkeeping[e]);
  }
  jw_key(w, "bookkeeping_per_instruction");
  if (bk >= 0) jw_fixed(w, bk, 3);
  else jw_null(w);
  jw_close(w);
}

static void print_resources_json(const Program *p, const OracleStats *st, const EngineResources *all, FILE *out) {
  const Target *t = p->target;
  JsonWriter w;
  jw_init(&w, out, false);
  jw_object(&w);
  jw_key_string(&w, "kernel", p->kernel->name);
  jw_key_string(&w, "sync", sync_name(p->ir->sync));
  jw_key_string(&w, "target", t->name);
  jw_key_int(&w, "counter_bits", t->counter_bits);
  jw_key_int(&w, "counters", waited_counters(p));
  jw_key(&w, "engines");
  jw_array(&w);
  for (int e = 0; e < t->nengines; e++) engine_json(&w, p, st, e, &all[e]);
  jw_close(&w);
  jw_close(&w);
  fputc('\n', out);
}

static void print_resources(const Program *p, const OracleStats *st, bool json, FILE *out) {
  const Target *t = p->target;
  const EngineResources *all = resources_plan(p);
  if (json) {
    print_resources_json(p, st, all, out);
    return;
  }
  fprintf(out,
          "resources of %s (%s) on %s, %d-bit counters (%d waited on)\n%-8s %10s %10s %6s %8s %7s %7s %5s %6s %8s %9s  %s\n",
          p->kernel->name, sync_name(p->ir->sync), t->name, t->counter_bits, waited_counters(p), "engine", "semaphores",
          "registers", "loops", "scalars", "guards", "shared", "last", "temps", "spilled", "bk/instr", "scratch bytes");
  for (int e = 0; e < t->nengines; e++) {
    EngineResources r = all[e];
    int kind = t->engines[e].kind;
    double bk = per_instruction(st, e);
    if (!r.registers && !r.semaphores && (!st || !st->engine_instructions[e])) continue; /* idle */
    char sems[32], regs[32], bks[32] = "-";
    snprintf(sems, sizeof sems, t->semaphores[kind] ? "%d/%lld" : "%d", r.semaphores, (long long)t->semaphores[kind]);
    snprintf(regs, sizeof regs, t->registers[kind] ? "%d/%lld" : "%d", r.registers, (long long)t->registers[kind]);
    if (bk >= 0) snprintf(bks, sizeof bks, "%.2f", bk);
    fprintf(out, "%-8s %10s %10s %6d %8d %7d %7d %5d %6d %8d %9s  ", t->engines[e].name, sems, regs,
            r.loop_registers, r.nscalars, r.guards, r.shared, r.last_read, r.temporaries, r.spilled, bks);
    print_scratch(p, e, r.spilled, out);
    fputc('\n', out);
  }
}

/* --code-size: the bytes of the emitted C, and of each engine's function
 * from its comment to its closing brace (what the paper's code sizes
 * compare: the sync mode changes the streams, not the rest of the file). */
static int report_code_size(Program *p, FILE *out) {
  const char *c = emit_c_string(p);
  const Target *t = p->target;
  fprintf(out, "code size of %s (%s) on %s: %zu bytes of C\n%-8s %10s\n", p->kernel->name, sync_name(p->ir->sync),
          t->name, strlen(c), "engine", "bytes");
  for (int e = 0; e < t->nengines; e++) {
    if (!p->ir->streams[e].body) continue;
    const char *from = strstr(c, arena_printf(p->arena, "/* Engine %s. */\n", t->engines[e].name));
    const char *to = from ? strstr(from, "\n}\n") : NULL;
    if (!to) bug("compile --code-size: no function for engine %s", t->engines[e].name);
    fprintf(out, "%-8s %10td\n", t->engines[e].name, to + 3 - from);
  }
  return 0;
}

/* --resources: the table, after measuring at -p's parameters if given. */
static int report_resources(Program *p, const CompileArgs *a, Oracle *o) {
  OracleStats st;
  if (o) oracle_check(o, 1, 1, NULL, &st);
  print_resources(p, o ? &st : NULL, a->json, stdout);
  if (fflush(stdout) || ferror(stdout)) {
    error_print(stderr, "cannot write to standard output: %s\n", strerror(errno));
    return 1;
  }
  return 0;
}

static int compile_program(Program *p, const void *args) {
  const CompileArgs *a = args;
  parse(p);
  if (p->diag.errors) return 1;
  check(p);
  if (p->diag.errors) return 1;
  Oracle *o = NULL;
  if (a->sync == SYNC_UNROLLED && p->kernel->nparams && !a->params.n) {
    error_print(stderr,
            "--sync=unrolled unrolls every loop for given parameters: give -p NAME=VALUE "
            "for each parameter of %s (see bfsync compile --help)\n",
            p->kernel->name);
    return 2;
  }
  if (a->params.n || a->sync == SYNC_UNROLLED) {
    int64_t *params = ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1);
    if (param_args_bind(&a->params, p->kernel, params, stderr)) return 2;
    /* i32 tensors (device-read bounds) hold --input's values, or `bfsync
     * run`'s and verify's defaults for seed 1, as the measurement and the
     * unrolling need some; --resources measures on a run's instance, so
     * its tensors must fit as a run's do */
    int status = device_inputs_bind(p, params, &a->inputs, 1, "compile",
                                    a->resources ? "--resources -p measures the kernel on a run at these parameters "
                                                   "(with the default inputs of bfsync run), and "
                                                 : NULL);
    if (status) return status;
    p->params = params;
    if (a->resources && a->params.n && !(o = oracle_new(p, params))) return 1;
  }
  Emit what = a->header ? EMIT_HEADER : a->explain ? EMIT_EXPLAIN : (Emit)a->emit;
  if (what != EMIT_HEADER) {
    transform_sync(p, a->sync);
    if (p->diag.errors) return 1;
    ir_validate(p);
  }
  if (a->resources) return report_resources(p, a, o);
  if (a->code_size) return report_code_size(p, stdout);
  if (!a->out_path) {
    if (emit(p, what, stdout)) return 1;
    if (fflush(stdout) || ferror(stdout)) {
      error_print(stderr, "cannot write to standard output: %s\n", strerror(errno));
      return 1;
    }
    return 0;
  }
  AtomicFile out;
  if (atomic_open(&out, a->out_path)) {
    error_print(stderr, "%s\n", out.error);
    return 1;
  }
  return output_finish(&out, emit(p, what, out.f));
}

int cmd_compile(int argc, char **argv) {
  CompileArgs a = {.sync = SYNC_BARRIER_FREE, .emit = EMIT_C};
  bool sync_given = false, emit_given = false;
  DiagOutput dout = {0};
  const ArgSpec specs[] = {
      {.name = "--sync", .kind = ARG_CHOICE, .dest = &a.sync, .choices = sync_choices, .given = &sync_given},
      {.name = "--emit", .kind = ARG_CHOICE, .dest = &a.emit, .choices = emit_choices, .given = &emit_given},
      {.name = "--explain", .kind = ARG_FLAG, .dest = &a.explain},
      {.name = "--header", .kind = ARG_FLAG, .dest = &a.header},
      {.name = "--target", .kind = ARG_STRING, .dest = &a.target_path},
      {.name = "-o", .kind = ARG_STRING, .dest = &a.out_path},
      {.name = "--resources", .kind = ARG_FLAG, .dest = &a.resources},
      {.name = "--json", .kind = ARG_FLAG, .dest = &a.json},
      {.name = "--code-size", .kind = ARG_FLAG, .dest = &a.code_size},
      {.name = "--input", .kind = ARG_NAMED_PATH, .dest = &a.inputs},
      {.name = "-p", .kind = ARG_PARAM, .dest = &a.params},
      {.name = "--param", .kind = ARG_PARAM, .dest = &a.params},
      ARG_DIAGNOSTICS_FORMAT(&dout.format),
      {0},
  };
  Arena *arena = arena_new();
  CommandLine cl = {"compile", usage_text, specs, 1, 1, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  a.file = cl.nfiles ? cl.files[0] : NULL;
  if (status < 0 && a.json && !a.resources) status = args_error(&cl, "--json goes with --resources");
  if (status < 0 && a.params.n && !a.resources && a.sync != SYNC_UNROLLED)
    status = args_error(&cl, "-p goes with --resources or --sync=unrolled");
  if (status < 0 && a.inputs.n && !a.params.n && a.sync != SYNC_UNROLLED)
    status = args_error(&cl, "--input gives the i32 tensors for -p: with --resources -p or --sync=unrolled");
  if (status < 0 && a.resources && (a.explain || a.header || a.out_path || emit_given))
    status = args_error(&cl, "--resources prints a table: not with --emit, --explain, --header or -o");
  if (status < 0 && a.header && (a.explain || emit_given || sync_given))
    status = args_error(&cl, "--header prints the host's header, for both sync modes: not with --emit, --explain or --sync");
  if (status < 0 && a.code_size && (a.resources || a.explain || a.header || a.out_path || emit_given))
    status = args_error(&cl, "--code-size prints the sizes: not with --resources, --emit, --explain, --header or -o");
  if (status < 0 && a.explain && emit_given) status = args_error(&cl, "--explain lists the waits: not with --emit");
  if (status < 0 && a.out_path && same_file(a.out_path, a.file))
    status = args_error(&cl, "-o %s would overwrite the input file", a.out_path);
  if (status < 0 && a.out_path && a.target_path && same_file(a.out_path, a.target_path))
    status = args_error(&cl, "-o %s would overwrite the target file", a.out_path);
  status = diag_output_run(&dout, status, a.file, a.target_path, arena, compile_program, &a);
  arena_free(arena);
  return status;
}

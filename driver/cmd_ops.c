/* cmd_ops.c: `bfsync ops`, the op table (runtime/ops.def) as a writer
 * reads it: every op form with its operands, the engines of the target
 * that run it, its shape rule, cost class and accuracy class. The table is
 * printed from the same rt_ops sema checks against, so it cannot drift
 * from what the compiler accepts. ops_describe gives one op's entry as
 * Markdown, with the target's cost figures, for the language server's
 * hover (driver/lsp_analysis.c).
 *
 *   ops      target -> rt_ops */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "driver/args.h"
#include "driver/commands.h"
#include "runtime/ops.h"
#include "target/target.h"

static const char usage_text[] =
    "usage: bfsync ops [--target FILE]\n\n"
    "List every op of the language: its operands (destination first; X[r, c]\n"
    "an hbm tile, f an immediate, op an ALU op, fn an activation function, v a\n"
    "[P, 1] tile), the engines of the target that run it (an engine kind with\n"
    "several engines as a whole: \"dma queues\"), its cost class and its\n"
    "accuracy class, and on the next line its shape rule (docs/language.md).\n"
    "  --target FILE  the machine's engines (default: the built-in trn1)\n";

static const char *shape_rule(const OpInfo *info) {
  if (strchr(info->operands, 'H')) return "the hbm tile takes the tile's shape";
  switch (info->shape) {
  case SHAPE_SAME: return "elementwise: every tile the destination's shape";
  case SHAPE_MATMUL: return "d [M, N] = a [M, K] . b [K, N]";
  case SHAPE_NC_MATMUL: return "d [M, N] = st [K, M]^T . mv [K, N], K on the partitions";
  case SHAPE_TRANSPOSE: return "d [N, M] = s [M, N] transposed";
  case SHAPE_ROWREDUCE: case SHAPE_ROWREDUCE_OF: return "d [M, 1] from s [M, N]";
  case SHAPE_ROWBCAST: return "d, s [M, N]; r [M, 1], one value per row";
  case SHAPE_COLBCAST: return "d, s [M, N]; c [1, N], one value per column";
  case SHAPE_SCALAR: case SHAPE_ACTIVATION: case SHAPE_SCAN: return "d, s [M, N]; v [M, 1] tiles, one value per row";
  case SHAPE_SELECT: return "d, s [M, N]; the pattern and offsets integers";
  case SHAPE_BN_STATS: return "d [M, 6] from s [M, N <= 512]";
  case SHAPE_BN_AGGR: return "d [M, 2] from s [M, 3k]";
  default: return "any destination";
  }
}

/* One operand's name, by its kind and role: "d, a, b", "d, X[r, c]",
 * "X[r, c], s", "d, s, f", "d, s, r", "d, fn, s, v, f, acc", ... */
static const char *operand_word(const OpInfo *info, int i) {
  char kind = info->operands[i], role = info->roles[i];
  bool two_tiles = !strcmp(info->operands, "TTT") && (info->shape == SHAPE_SAME || info->shape == SHAPE_MATMUL);
  if (kind == 'H') return "X[r, c]";
  if (role == 'o') return "op";
  if (role == 'f') return "fn";
  if (role == 'n') return "negate";
  if (kind == 'F') return "f";
  if (i == 0) return role == 'a' && info->shape != SHAPE_NC_MATMUL ? "acc" : "d";
  if (role == 'a') return "acc";
  if (info->shape == SHAPE_NC_MATMUL) return i == 1 ? "st" : "mv";
  if (info->shape == SHAPE_ROWBCAST && i == 2) return "r";
  if (info->shape == SHAPE_COLBCAST && i == 2) return "c";
  bool scalar = (info->shape == SHAPE_SCALAR && i >= 2) || ((info->shape == SHAPE_ACTIVATION || info->shape == SHAPE_SCAN) && i >= 3);
  if (scalar) return "v";
  if (two_tiles || info->shape == SHAPE_SCAN) return i == 1 ? "a" : "b";
  return "s";
}

static void operand_names(const OpInfo *info, char *buf, size_t size) {
  size_t n = 0;
  for (int i = 0; info->operands[i] && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", operand_word(info, i));
}

/* The engines of t that run op, by kind: a kind with one engine by its
 * name, one with several as a whole ("dma queues", "pool engines (2)")
 * when every engine of it runs the op (ops.def gives engines by kind, so
 * they all do). Printed, not joined in a buffer, since a target may have
 * any number of engines with names of any length; padded to width. */
static void print_engines(const Target *t, int op, int width) {
  static const char *const kinds[BFRT_NKINDS] = {"pe", "act", "dve", "pool", "dma"};
  int n = 0;
  for (int kind = 0; kind < BFRT_NKINDS; kind++) {
    int count = 0, first = -1;
    for (int e = 0; e < t->nengines; e++)
      if (t->engines[e].kind == kind && target_can_run(t, e, op)) count++, first = first < 0 ? e : first;
    if (!count) continue;
    n += printf("%s", n ? ", " : "");
    if (count == 1) n += printf("%s", t->engines[first].name);
    else if (kind == BFRT_KIND_DMA) n += printf("dma queues");
    else n += printf("%s engines (%d)", kinds[kind], count);
  }
  if (!n) n = printf("(none)");
  printf("%*s", n < width ? width - n : 0, "");
}

static const char *const classes[] = {"dma", "matmul", "elemwise", "transcendental", "reduce"};
static const char *const accuracies[] = {"exact", "round", "libm", "sum"};

/* What each accuracy class adds to the f64 reference's bound (docs/language.md). */
static const char *const accuracy_bounds[] = {
    "adds no error (moves or compares values)", "one rounding: u * |result|",
    "libm: 8u * |result| (gelu, silu: 8u * |s|)", "one rounding per addition: u * |partial sum| per term"};

void ops_describe(const Target *t, int op, FILE *out) {
  const OpInfo *info = op_info(op);
  char operands[96];
  operand_names(info, operands, sizeof operands);
  fprintf(out, "**%s** %s\n\nshape: %s\n\nengines:", info->name, operands, shape_rule(info));
  const char *sep = " ";
  for (int e = 0; e < t->nengines; e++)
    if (target_can_run(t, e, op)) {
      fprintf(out, "%s%s", sep, t->engines[e].name);
      sep = ", ";
    }
  fprintf(out, "%s\n\ncost class: %s (target %s:", *sep == ' ' ? " none" : "", classes[info->cls], t->name);
  sep = " ";
  bool shown[BFRT_NKINDS] = {false}; /* one engine of each kind speaks for its kind's costs */
  for (int e = 0; e < t->nengines; e++) {
    int k = t->engines[e].kind;
    if (shown[k] || !target_can_run(t, e, op)) continue;
    shown[k] = true;
    const bfrt_engine_cost *c = &t->costs.kind[k];
    fprintf(out, "%s%s %" PRId64 " cycles to issue, %g elements/cycle%s", sep, t->engines[e].name, c->overhead,
            c->elems_per_cycle[info->cls], c->lanes > 0 ? " per lane" : "");
    sep = "; ";
  }
  fprintf(out, ")\n\naccuracy class: %s, %s\n", accuracies[info->accuracy], accuracy_bounds[info->accuracy]);
}

/* Each op form on one line of at most about 100 columns, its shape rule
 * on the next, indented. */
static void print_ops(const Target *t) {
  printf("%-18s %-26s %-26s %-14s %s\n    %s\n", "op", "operands", "engines", "cost class", "accuracy", "shape rule");
  for (int op = 0; op < BFRT_NOPS; op++) {
    const OpInfo *info = op_info(op);
    char operands[96];
    operand_names(info, operands, sizeof operands);
    printf("%-18s %-26s ", info->name, operands);
    print_engines(t, op, 26);
    printf(" %-14s %s\n    %s\n", classes[info->cls], accuracies[info->accuracy], shape_rule(info));
  }
}

int cmd_ops(int argc, char **argv) {
  const char *target_path = NULL;
  const ArgSpec specs[] = {{.name = "--target", .kind = ARG_STRING, .dest = &target_path}, {0}};
  Arena *arena = arena_new();
  CommandLine cl = {"ops", usage_text, specs, 0, 0, arena, NULL, 0};
  int status = args_parse(&cl, argc, argv);
  Target *target = ARENA_NEW(arena, Target);
  if (status < 0 && target_path && target_load(target_path, arena, target, stderr)) status = 1;
  if (status < 0) {
    print_ops(target_path ? target : target_default());
    status = 0;
  }
  arena_free(arena);
  return status;
}

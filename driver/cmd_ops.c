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
    "an hbm tile, f an immediate), the engines of the target that run it, its\n"
    "shape rule, its cost class and its accuracy class (docs/language.md).\n"
    "  --target FILE  the machine's engines (default: the built-in trn1)\n";

static const char *shape_rule(const OpInfo *info) {
  if (strchr(info->operands, 'H')) return "the hbm tile takes the tile's shape";
  switch (info->shape) {
  case SHAPE_SAME: return "elementwise: every tile the destination's shape";
  case SHAPE_MATMUL: return "d [M, N] = a [M, K] . b [K, N]";
  case SHAPE_TRANSPOSE: return "d [N, M] = s [M, N] transposed";
  case SHAPE_ROWREDUCE: return "d [M, 1] from s [M, N]";
  case SHAPE_ROWBCAST: return "d, s [M, N]; r [M, 1], one value per row";
  case SHAPE_COLBCAST: return "d, s [M, N]; c [1, N], one value per column";
  default: return "any destination";
  }
}

/* "d, a, b", "d, X[r, c]", "X[r, c], s", "d, s, f", "d, s, r", ... */
static void operand_names(const OpInfo *info, char *buf, size_t size) {
  const char *letters = info->operands;
  const char *third = info->shape == SHAPE_ROWBCAST ? "r" : info->shape == SHAPE_COLBCAST ? "c" : "b";
  bool two_tiles = !strcmp(letters, "TTT") && info->shape != SHAPE_ROWBCAST && info->shape != SHAPE_COLBCAST;
  size_t n = 0;
  for (int i = 0; letters[i] && n < size; i++) {
    const char *name = letters[i] == 'H' ? "X[r, c]"
                       : letters[i] == 'F' ? "f"
                       : i == 0            ? "d"
                       : i == 2            ? third
                       : two_tiles         ? "a"
                                           : "s";
    n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", name);
  }
}

/* The engines of t that run op, comma-separated and padded to width;
 * printed, not joined in a buffer, since a target may have any number of
 * engines with names of any length. */
static void print_engines(const Target *t, int op, int width) {
  int n = 0;
  for (int e = 0; e < t->nengines; e++)
    if (target_can_run(t, e, op)) n += printf("%s%s", n ? ", " : "", t->engines[e].name);
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
  char operands[64];
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

static void print_ops(const Target *t) {
  printf("%-14s %-11s %-22s %-15s %-9s %s\n", "op", "operands", "engines", "cost class", "accuracy",
         "shape rule");
  for (int op = 0; op < BFRT_NOPS; op++) {
    const OpInfo *info = op_info(op);
    char operands[64];
    operand_names(info, operands, sizeof operands);
    printf("%-14s %-11s ", info->name, operands);
    print_engines(t, op, 22);
    printf(" %-15s %-9s %s\n", classes[info->cls], accuracies[info->accuracy], shape_rule(info));
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

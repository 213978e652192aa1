/* counting.h: closed-form counts of instructions over a loop's iterations
 * (transform/counting.c has the argument). The barrier-free transform asks
 * it for K_e, a loop's per-iteration count of an engine's instructions, as
 * terms coef * [j in set] when K_e depends on the loop variable through
 * conditions, and for the count over a range of iterations. */
#ifndef COUNTING_H
#define COUNTING_H

#include <stdbool.h>

#include "transform/deps.h"

enum { MAX_COUNT_TERMS = 16 };

typedef struct IterSet {
  IrExpr *from, *to;
  int64_t mod;
  IrExpr *rem;
  IrExpr *point;
} IterSet;

typedef struct CountTerms {
  int n;
  IrExpr *coef[MAX_COUNT_TERMS];
  IterSet set[MAX_COUNT_TERMS];
} CountTerms;

/* Whether e reads loop `loop`'s variable. */
bool uses_loopvar(const IrExpr *e, int loop);
/* No division that could fail and no device read that could be out of
 * range: safe to evaluate where the source would not. */
bool total_expr(const IrExpr *e);
/* k, a per-iteration count of loop `loop`, as terms over its iterations;
 * conds[i] is conditional i's condition (to name the conditions' lines in
 * *lines, "line 3" or "lines 3, 7"). NULL, with *why_not saying why, when
 * k is not closed-form. */
CountTerms *count_terms_of(Program *p, const Deps *d, IrExpr *const *conds, int loop, IrExpr *k,
                           const char **why_not, const char **lines);
/* The count over iterations x .. y - 1, terms being a loop's K_e. */
IrExpr *count_over(Arena *a, const CountTerms *terms, IrExpr *x, IrExpr *y);

#endif

/* slices.c: where an element slice of an hbm tensor lands in memory.
 *
 * A tensor of rank n (2 .. 4) is stored row major and seen by everything
 * downstream (the runtime, the references, the tracking grids) as the 2-D
 * tensor [rows, cols], rows the product of its first n - 1 dimensions and
 * cols its last. A slice names each dimension: a range lo:hi, lo:hi:k or
 * `:` keeps it, an integer index drops it. Two dimensions must remain for
 * the tile's partitions and columns, in order; when fewer ranges were
 * written, the rightmost indices are kept as dimensions of extent 1, so
 * `X[i, 0:16]` of a 2-D tensor is [1, 16] as it always was, and
 * `Q[b, h, s, 0:D]` is [1, D].
 *
 * The columns must run along the last dimension: then a column step is a
 * step in the flattened tensor's columns, and the partitions a step in its
 * rows, k times the product of the dimensions between (a constant when
 * those are, an expression over the parameters otherwise). The slice is
 * thus the flattened rows lo[0] + p * rstep and columns lo[1] + f * cstep,
 * with lo[0] the index of the first element's row, Horner's form of the
 * leading indices. A slice whose columns would run along another
 * dimension (a transposing DMA) is refused: it is not a rectangle with
 * steps in the flattened tensor.
 *
 * A ragged dimension lo : min(lo + C, E) keeps its run-time extent
 * max(0, min(C, E - lo)) of its own index lo; the flattened start differs
 * from lo by the other indices' part, so its end is carried as E plus that
 * difference. That needs the partitions' dimension to be one row apart in
 * the flattened tensor (the dimension before the last, or the columns'). */
#include "frontend/slices.h"

#include <stdio.h>

/* What a slice's dimension is: a range keeps it, an index (lo, no hi, no step) drops it. */
static bool is_index(const Slice *sl) { return sl->lo && !sl->hi && !sl->step; }

/* The two dimensions the tile runs along, or false when more than two are ranges. */
static bool pick_dims(const Operand *o, int rank, int tdim[2]) {
  int kept[MAX_RANK] = {0}, n = 0;
  for (int d = 0; d < rank; d++)
    if (rank == 2 || !is_index(&o->dim[d])) kept[n++] = d;
  if (n > 2) return false;
  /* too few: keep the rightmost indices, in order */
  for (int d = rank - 1; n < 2 && d >= 0; d--) {
    bool have = false;
    for (int i = 0; i < n; i++) have |= kept[i] == d;
    if (have) continue;
    int at = n++;
    while (at > 0 && kept[at - 1] > d) {
      kept[at] = kept[at - 1];
      at--;
    }
    kept[at] = d;
  }
  tdim[0] = kept[0];
  tdim[1] = kept[1];
  return true;
}

static Expr *times(Arena *a, Expr *e, Expr *factor) { return e ? expr_binary(a, EX_MUL, e, factor) : NULL; }

static Expr *plus(Arena *a, Expr *e, Expr *term) {
  if (!term) return e;
  return e ? expr_binary(a, EX_ADD, e, term) : term;
}

const char *slices_lower(Arena *a, const Tensor *t, Operand *o, Expr *const *clip) {
  int n = t->rank;
  o->nd->rank = n;
  if (!pick_dims(o, n, o->nd->tdim))
    return arena_printf(a, "it keeps more than two of the %d dimensions (a tile has two): index the others", n);
  int p = o->nd->tdim[0], f = o->nd->tdim[1];
  if (f != n - 1)
    return arena_printf(a, "its columns run along dimension %d, not the last (%d): a slice moves whole rows of "
                           "the last dimension, with a step",
                        f, n - 1);
  for (int d = 0; d < n; d++)
    if (clip[d] && d != p && d != f) bug("slices: a ragged index");
  /* the first element's flattened row, Horner's form over the leading dimensions */
  Expr *row = NULL;
  for (int d = 0; d < n - 1; d++) row = plus(a, times(a, row, t->dims[d]), o->nd->nlo[d]);
  o->lo[0] = row;
  o->lo[1] = o->nd->nlo[n - 1];
  o->ext[0] = o->nd->next[p];
  o->ext[1] = o->nd->next[f];
  o->cstep = o->nd->nstep[f];
  o->rstep = NULL;
  if (p != f) {
    Expr *between = NULL;
    for (int d = p + 1; d < n - 1; d++) between = between ? expr_binary(a, EX_MUL, between, t->dims[d]) : t->dims[d];
    if (o->nd->nstep[p] != 1 || between) {
      Expr *k = expr_int(a, o->dim[p].span, o->nd->nstep[p]);
      o->rstep = between ? (o->nd->nstep[p] == 1 ? between : expr_binary(a, EX_MUL, k, between)) : k;
    }
  }
  o->clip[0] = o->clip[1] = NULL;
  if (clip[f]) o->clip[1] = clip[f];
  if (clip[p] && p != f) {
    if (o->rstep) return "a ragged end (lo : min(lo + C, E)) needs its partitions one row apart: the dimension before the last";
    /* E - lo of the index is (E + row - lo) - row of the flattened start */
    o->clip[0] = n == 2 || !row || row == o->nd->nlo[p] ? clip[p]
                 : o->nd->nlo[p] ? expr_binary(a, EX_SUB, expr_binary(a, EX_ADD, clip[p], row), o->nd->nlo[p])
                             : expr_binary(a, EX_ADD, clip[p], row);
  }
  return NULL;
}

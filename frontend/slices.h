/* slices.h: an element slice of an N-D hbm tensor, lowered onto the tensor
 * flattened to [rows, cols] (frontend/slices.c). */
#ifndef SLICES_H
#define SLICES_H

#include "frontend/ast.h"

/* Requires: o an hbm slice of t whose nlo, nstep and next sema filled for
 * each of t's rank dimensions, clip[d] a ragged dimension's end E (NULL
 * otherwise). Ensures: o's tdim, lo, ext, clip, rstep, cstep and rank, or
 * the reason the slice cannot be moved (NULL when it can). */
const char *slices_lower(Arena *a, const Tensor *t, Operand *o, Expr *const *clip);

#endif

/* counting.c: the closed-form counts of the barrier-free transform.
 *
 * When a conditional inside loop L tests L's variable i and its branches
 * hold different numbers of e-instructions, K_e depends on i: the `?:` of
 * the branch counts. It is closed-form all the same when every condition
 * that depends on i is a combination of analyzable atoms, each true on an
 * interval, a point or a residue class of i (E, F, R invariant in L):
 *
 *   i + c < E, <=, >, >=           (c a constant, on either side; where
 *                                   i + c wraps the set is two intervals)
 *   s*i + E == F, != F             (s = 1 or -1: a bijection of the wrapped
 *                                   integers, so i == s*(F - E), exactly)
 *   (s*i + E) % S == R, != R       (S > 0 a constant; E = 0 and s = 1, or
 *                                   S a power of two, which divides 2^64:
 *                                   wrapping does not change the residue)
 *   (s*i + E) % S < R, ...         (S <= 8: a sum over the S residues)
 *
 * with && (intersection; two residue classes meet in one, by the Chinese
 * remainder theorem), || (a + b - ab) and ! (1 - a). K_e becomes a sum of terms
 * coef * [j in set], coef invariant in L. The count of e-instructions of
 * iterations lo .. x - 1 is the sum of coef * |[lo, x) ∩ set|, computed
 * with trips, which is exact: |[a, b) ∩ {j ≡ r mod S}| =
 * ceil(trips(d, trips(a, b)) / S), d = (r - a) mod S taken from residues
 * in [0, S), every intermediate within [-1, 2^63). Coefficients may be
 * negative (inclusion-exclusion); the sum is taken mod 2^64 like all IR
 * arithmetic, and its true value is a position, below 2^63, so it is
 * exact. Anything else keeps the running count, and count_note says why
 * (docs/algorithm.md, 3.1, "Counts through branches"). */
#include <string.h>

#include "transform/counting.h"

#include "util/numbers.h"

bool uses_loopvar(const IrExpr *e, int loop) {
  if (!e) return false;
  if (e->kind == IX_LOOPVAR) return e->id == loop;
  return uses_loopvar(e->a, loop) || uses_loopvar(e->b, loop) || uses_loopvar(e->c, loop);
}

/* No division that could fail and no device read that could be out of
 * range: safe to evaluate where the source would not. */
bool total_expr(const IrExpr *e) {
  if (!e) return true;
  if (e->kind == IX_ELEM) return false;
  if ((e->kind == IX_DIV || e->kind == IX_MOD) && (e->b->kind != IX_CONST || e->b->value == 0))
    return false;
  return total_expr(e->a) && total_expr(e->b) && total_expr(e->c);
}

/* How deep the analysis of one count recurses (selects in selects, and
 * conditions): beyond, the count is a running count, and the stack stays
 * small whatever the kernel. */
enum { MAX_COUNT_DEPTH = 64 };

/* Iterations j in [from, to) (NULL: unbounded), and j ≡ rem (mod mod)
 * when mod > 1; or the one iteration j == point, when point is not NULL
 * (then nothing else is set). */
typedef struct Linearize {
  Program *p;
  const Deps *d;
  IrExpr *const *conds; /* [if]: each conditional's condition, to name its line */
  int loop;
  const char *why_not; /* the first reason the count is not closed-form */
  int lines[MAX_COUNT_TERMS]; /* the lines of the conditions on the loop's variable */
  int nlines;
  int depth; /* of count_terms and indicator_terms calls */
} Linearize;

static bool not_closed(Linearize *lz, const char *why) {
  if (!lz->why_not) lz->why_not = why;
  return false;
}

static bool same_bound(const IrExpr *x, const IrExpr *y) { return x == y || (x && y && ir_expr_equal(x, y)); }

static bool same_set(const IterSet *u, const IterSet *v) {
  return same_bound(u->from, v->from) && same_bound(u->to, v->to) && u->mod == v->mod &&
         same_bound(u->rem, v->rem) && same_bound(u->point, v->point);
}

/* out += coef * [j in set]; terms over the same set share one count. */
static bool add_term(Linearize *lz, CountTerms *out, IrExpr *coef, IterSet set) {
  if (coef->kind == IX_CONST && coef->value == 0) return true;
  for (int i = 0; i < out->n; i++)
    if (same_set(&out->set[i], &set)) {
      out->coef[i] = ir_binary(lz->p->arena, IX_ADD, out->coef[i], coef, 0);
      return true;
    }
  if (out->n == MAX_COUNT_TERMS) return not_closed(lz, "its conditions on the loop variable expand to too many terms");
  out->coef[out->n] = coef;
  out->set[out->n++] = set;
  return true;
}

/* out += scale * x */
static bool add_scaled(Linearize *lz, CountTerms *out, const CountTerms *x, IrExpr *scale) {
  for (int i = 0; i < x->n; i++)
    if (!add_term(lz, out, ir_binary(lz->p->arena, IX_MUL, scale, x->coef[i], 0), x->set[i])) return false;
  return true;
}

static IrExpr *min_of(Arena *a, IrExpr *x, IrExpr *y) {
  if (!x || !y) return x ? x : y;
  return ir_select(a, ir_binary(a, IX_LT, x, y, 0), x, y);
}

static IrExpr *max_of(Arena *a, IrExpr *x, IrExpr *y) {
  if (!x || !y) return x ? x : y;
  return ir_binary(a, IX_MAX, x, y, 0);
}

/* 1 if value is in set (point-free), else 0, as a condition. */
static IrExpr *member(Arena *a, const IterSet *set, IrExpr *value) {
  IrExpr *in = ir_const(a, 1);
  if (set->from) in = ir_binary(a, IX_AND, in, ir_binary(a, IX_LE, set->from, value, 0), 0);
  if (set->to) in = ir_binary(a, IX_AND, in, ir_binary(a, IX_LT, value, set->to, 0), 0);
  if (set->mod > 1) {
    IrExpr *m = ir_const(a, set->mod);
    /* residues first: value - rem itself may wrap */
    IrExpr *differ = ir_binary(
        a, IX_MOD, ir_binary(a, IX_SUB, ir_binary(a, IX_MOD, value, m, 0), ir_binary(a, IX_MOD, set->rem, m, 0), 0), m, 0);
    in = ir_binary(a, IX_AND, in, ir_binary(a, IX_EQ, differ, ir_const(a, 0), 0), 0);
  }
  return in;
}

/* The inverse of x modulo m (x and m coprime, m >= 1), by Euclid. */
static int64_t inverse_mod(int64_t x, int64_t m) {
  int64_t r0 = m, r1 = x % m, t0 = 0, t1 = 1;
  while (r1) {
    int64_t q = r0 / r1, r = r0 - q * r1, t = t0 - q * t1;
    r0 = r1, r1 = r;
    t0 = t1, t1 = t;
  }
  return ((t0 % m) + m) % m;
}

/* The moduli a product of residue tests may combine into (so that every
 * intermediate of the combination stays far below 2^63). */
enum { MAX_RESIDUE_MODULUS = 1 << 20 };

/* j ≡ u.rem (mod m1) and j ≡ v.rem (mod m2) as one class modulo lcm(m1,
 * m2), by the Chinese remainder theorem: with g = gcd, r1, r2 the residues
 * in [0, m) and d = r2 - r1, a solution exists iff g divides d (the
 * coefficient is gated by it), and it is r1 + m1 * ((d / g) * inv(m1 / g)
 * mod m2 / g). Every value is below lcm * m2 <= 2^40. */
static bool both_residues(Linearize *lz, const IterSet *u, const IterSet *v, IterSet *both, IrExpr **coef) {
  Arena *a = lz->p->arena;
  int64_t m1 = u->mod, m2 = v->mod, g = gcd_i64(m1, m2);
  if (m1 > MAX_RESIDUE_MODULUS || m2 > MAX_RESIDUE_MODULUS || m1 / g * m2 > MAX_RESIDUE_MODULUS)
    return not_closed(lz, "it tests the loop variable modulo numbers whose lcm exceeds 2^20");
  int64_t l = m1 / g * m2;
  IrExpr *r1 = ir_binary(a, IX_MOD, u->rem, ir_const(a, m1), 0), *r2 = ir_binary(a, IX_MOD, v->rem, ir_const(a, m2), 0);
  IrExpr *d = ir_binary(a, IX_SUB, r2, r1, 0);
  IrExpr *solvable = ir_binary(a, IX_EQ, ir_binary(a, IX_MOD, d, ir_const(a, g), 0), ir_const(a, 0), 0);
  *coef = ir_select(a, solvable, *coef, ir_const(a, 0));
  IrExpr *k = ir_binary(a, IX_MOD,
                        ir_binary(a, IX_MUL, ir_binary(a, IX_DIV, d, ir_const(a, g), 0),
                                  ir_const(a, inverse_mod(m1 / g, m2 / g)), 0),
                        ir_const(a, m2 / g), 0);
  both->mod = l;
  both->rem = ir_binary(a, IX_ADD, r1, ir_binary(a, IX_MUL, ir_const(a, m1), k, 0), 0);
  return true;
}

/* out += x * y, term by term: the sets intersect. */
static bool add_product(Linearize *lz, CountTerms *out, const CountTerms *x, const CountTerms *y) {
  Arena *a = lz->p->arena;
  for (int i = 0; i < x->n; i++)
    for (int j = 0; j < y->n; j++) {
      const IterSet *u = &x->set[i], *v = &y->set[j];
      IrExpr *coef = ir_binary(a, IX_MUL, x->coef[i], y->coef[j], 0);
      if (u->point || v->point) { /* the point, if the other set holds it */
        const IterSet *pt = u->point ? u : v, *other = u->point ? v : u;
        IrExpr *in = other->point ? ir_binary(a, IX_EQ, pt->point, other->point, 0) : member(a, other, pt->point);
        if (!add_term(lz, out, ir_select(a, in, coef, ir_const(a, 0)), *pt)) return false;
        continue;
      }
      IterSet both = {max_of(a, u->from, v->from), min_of(a, u->to, v->to), u->mod, u->rem, NULL};
      if (u->mod > 1 && v->mod > 1) {
        if (!both_residues(lz, u, v, &both, &coef)) return false;
      } else if (v->mod > 1) {
        both.mod = v->mod;
        both.rem = v->rem;
      }
      if (!add_term(lz, out, coef, both)) return false;
    }
  return true;
}

static const IterSet EVERY_ITERATION = {NULL, NULL, 0, NULL, NULL};

/* x as s * i + rest (wrapping), i the loop's variable; false if it is not
 * of that form. */
static bool affine_in(Linearize *lz, IrExpr *x, int64_t *s, IrExpr **rest) {
  Arena *a = lz->p->arena;
  int64_t sa, sb;
  IrExpr *ra, *rb;
  if (!uses_loopvar(x, lz->loop)) {
    *s = 0;
    *rest = x;
    return true;
  }
  switch (x->kind) {
  case IX_LOOPVAR:
    *s = 1;
    *rest = ir_const(a, 0);
    return true;
  case IX_ADD:
  case IX_SUB:
    if (!affine_in(lz, x->a, &sa, &ra) || !affine_in(lz, x->b, &sb, &rb)) return false;
    if (x->kind == IX_ADD ? __builtin_add_overflow(sa, sb, s) : __builtin_sub_overflow(sa, sb, s)) return false;
    *rest = ir_binary(a, x->kind, ra, rb, 0);
    return true;
  case IX_MUL:
    if (x->a->kind != IX_CONST && x->b->kind != IX_CONST) return false;
    {
      IrExpr *k = x->a->kind == IX_CONST ? x->a : x->b, *y = x->a->kind == IX_CONST ? x->b : x->a;
      if (!affine_in(lz, y, &sa, &ra) || __builtin_mul_overflow(sa, k->value, s)) return false;
      *rest = ir_binary(a, IX_MUL, k, ra, 0);
      return true;
    }
  default: return false;
  }
}

/* x + 1, or x itself when that would wrap (INT64_MAX: no iteration
 * variable reaches it, since i < hi <= INT64_MAX). */
static IrExpr *saturating_next(Arena *a, IrExpr *x) {
  IrExpr *max = ir_const(a, INT64_MAX);
  return ir_select(a, ir_binary(a, IX_LT, x, max, 0), ir_binary(a, IX_ADD, x, ir_const(a, 1), 0), max);
}

static bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/* [x % S == r] (x using i, r invariant) as terms: a residue class of i. */
static bool residue_atom(Linearize *lz, IrExpr *mod, IrExpr *r, CountTerms *out) {
  Arena *a = lz->p->arena;
  int64_t s;
  IrExpr *rest;
  if (mod->b->kind != IX_CONST || mod->b->value <= 0)
    return not_closed(lz, "it takes the loop variable modulo a value that is not a positive constant");
  int64_t m = mod->b->value;
  if (!affine_in(lz, mod->a, &s, &rest) || (s != 1 && s != -1))
    return not_closed(lz, "it takes the remainder of a form other than i + c or c - i");
  if (!is_power_of_two(m) && (s != 1 || rest->kind != IX_CONST || rest->value != 0))
    return not_closed(lz, "it takes the remainder of i + c by a constant that is not a power of two (i + c may wrap)");
  /* x % m lies in [0, m): the test holds for no i unless r does too */
  IrExpr *in_range = ir_binary(a, IX_AND, ir_binary(a, IX_GE, r, ir_const(a, 0), 0),
                               ir_binary(a, IX_LT, r, ir_const(a, m), 0), 0);
  IrExpr *coef = ir_select(a, in_range, ir_const(a, 1), ir_const(a, 0));
  if (m == 1) return add_term(lz, out, coef, EVERY_ITERATION);
  /* s*i + rest ≡ r: i ≡ r - rest (s = 1) or rest - r (s = -1), mod m */
  IrExpr *rem = s == 1 ? ir_binary(a, IX_SUB, r, rest, 0) : ir_binary(a, IX_SUB, rest, r, 0);
  return add_term(lz, out, coef, (IterSet){NULL, NULL, m, rem, NULL});
}

/* The residues a remainder by a constant takes: at most this many are
 * expanded for an ordered comparison of a remainder (`i % 4 < 2`). */
enum { MAX_EXPANDED_RESIDUES = 8 };

/* [i + d < e] for a constant d != 0, exactly: i + d wraps for the d values
 * of i at one end of the range, which land at the other end, so the set is
 * up to two intervals. With d > 0 and ok = e >= MIN + d: [MIN, e - d) when
 * ok, and [MAX - d + 1, ok ? MAX : e - d wrapped). With d = -c < 0 and
 * ok = e <= MAX - c: [MIN + c, ok ? e + c : MAX), and [MIN, e + c
 * wrapped) when not ok. (No iteration reaches MAX: i < hi <= MAX.) */
static bool offset_less(Linearize *lz, int64_t d, IrExpr *e, CountTerms *out) {
  Arena *a = lz->p->arena;
  IrExpr *max = ir_const(a, INT64_MAX), *one = ir_const(a, 1), *zero = ir_const(a, 0);
  if (d == INT64_MIN) return not_closed(lz, "it orders i - 2^63");
  IrExpr *shifted = ir_binary(a, IX_SUB, e, ir_const(a, d), 0); /* e - d, wrapping */
  if (d > 0) {
    IrExpr *ok = ir_binary(a, IX_GE, e, ir_const(a, INT64_MIN + d), 0);
    return add_term(lz, out, ir_select(a, ok, one, zero), (IterSet){NULL, shifted, 0, NULL, NULL}) &&
           add_term(lz, out, one, (IterSet){ir_const(a, INT64_MAX - d + 1), ir_select(a, ok, max, shifted), 0, NULL, NULL});
  }
  IrExpr *ok = ir_binary(a, IX_LE, e, ir_const(a, INT64_MAX + d), 0);
  return add_term(lz, out, one, (IterSet){ir_const(a, INT64_MIN - d), ir_select(a, ok, shifted, max), 0, NULL, NULL}) &&
         add_term(lz, out, ir_select(a, ok, zero, one), (IterSet){NULL, shifted, 0, NULL, NULL});
}

/* [x op y] for one comparison that uses i, as terms. */
static bool compare_atom(Linearize *lz, IrExprKind op, IrExpr *x, IrExpr *y, CountTerms *out) {
  Arena *a = lz->p->arena;
  bool mod_x = x->kind == IX_MOD && uses_loopvar(x, lz->loop), mod_y = y->kind == IX_MOD && uses_loopvar(y, lz->loop);
  if (op == IX_NE) { /* 1 - [x == y] */
    CountTerms eq = {0};
    return compare_atom(lz, IX_EQ, x, y, &eq) && add_term(lz, out, ir_const(a, 1), EVERY_ITERATION) &&
           add_scaled(lz, out, &eq, ir_const(a, -1));
  }
  if ((mod_x && uses_loopvar(y, lz->loop)) || (mod_y && uses_loopvar(x, lz->loop)))
    return not_closed(lz, "it compares a remainder of the loop variable with the loop variable");
  if (mod_x || mod_y) {
    IrExpr *mod = mod_x ? x : y, *other = mod_x ? y : x;
    if (op == IX_EQ) return residue_atom(lz, mod, other, out);
    /* [x % m op r] = sum over v in [0, m) of [v op r] * [x % m == v] */
    if (mod->b->kind != IX_CONST || mod->b->value <= 0 || mod->b->value > MAX_EXPANDED_RESIDUES)
      return not_closed(lz, "it orders a remainder of the loop variable by a value that is not a constant in 1 .. 8");
    for (int64_t v = 0; v < mod->b->value; v++) {
      IrExpr *value = ir_const(a, v);
      IrExpr *holds = ir_binary(a, op, mod_x ? value : other, mod_x ? other : value, 0);
      CountTerms at = {0};
      if (!residue_atom(lz, mod, value, &at) ||
          !add_scaled(lz, out, &at, ir_select(a, holds, ir_const(a, 1), ir_const(a, 0))))
        return false;
    }
    return true;
  }
  int64_t sx, sy;
  IrExpr *rx, *ry;
  if (!affine_in(lz, x, &sx, &rx) || !affine_in(lz, y, &sy, &ry))
    return not_closed(lz, "it compares a form of the loop variable other than s*i + c and a remainder");
  if (op == IX_EQ) {
    int64_t s;
    if (__builtin_sub_overflow(sx, sy, &s) || (s != 1 && s != -1))
      return not_closed(lz, "it compares a multiple of the loop variable for equality");
    /* s*i == ry - rx (mod 2^64): i == ry - rx (s = 1) or rx - ry (s = -1) */
    IrExpr *value = s == 1 ? ir_binary(a, IX_SUB, ry, rx, 0) : ir_binary(a, IX_SUB, rx, ry, 0);
    return add_term(lz, out, ir_const(a, 1), (IterSet){NULL, NULL, 0, NULL, value});
  }
  /* ordered: i + d (d a constant) on one side, an invariant on the other */
  bool left = sx == 1 && sy == 0 && rx->kind == IX_CONST, right = sy == 1 && sx == 0 && ry->kind == IX_CONST;
  if (!left && !right)
    return not_closed(lz, "it orders a form of the loop variable other than i + c, c a constant");
  int64_t d = left ? rx->value : ry->value;
  IrExpr *e = left ? y : x;
  if (right) op = op == IX_LT ? IX_GT : op == IX_GT ? IX_LT : op == IX_LE ? IX_GE : IX_LE;
  if (d == 0) { /* the bare variable: one interval */
    IterSet set = EVERY_ITERATION;
    switch (op) {
    case IX_LT: set.to = e; break;
    case IX_LE: set.to = saturating_next(a, e); break;
    case IX_GT: set.from = saturating_next(a, e); break;
    default: set.from = e; break; /* IX_GE */
    }
    return add_term(lz, out, ir_const(a, 1), set);
  }
  /* [i + d < e], and [i + d == e] for <= and >: a point, i == e - d */
  CountTerms less = {0}, eq = {0};
  if (!offset_less(lz, d, e, &less)) return false;
  if ((op == IX_LE || op == IX_GT) &&
      !add_term(lz, &eq, ir_const(a, 1), (IterSet){NULL, NULL, 0, NULL, ir_binary(a, IX_SUB, e, ir_const(a, d), 0)}))
    return false;
  if (op == IX_LT || op == IX_LE) return add_scaled(lz, out, &less, ir_const(a, 1)) && add_scaled(lz, out, &eq, ir_const(a, 1));
  return add_term(lz, out, ir_const(a, 1), EVERY_ITERATION) && add_scaled(lz, out, &less, ir_const(a, -1)) &&
         add_scaled(lz, out, &eq, ir_const(a, -1)); /* >= is 1 - <, > is 1 - < - == */
}

static bool indicator_terms(Linearize *lz, IrExpr *c, CountTerms *out);

/* [c] for a condition c that uses i, as terms. */
static bool indicator_terms_at(Linearize *lz, IrExpr *c, CountTerms *out) {
  Arena *a = lz->p->arena;
  CountTerms x = {0}, y = {0};
  switch (c->kind) {
  case IX_AND: return indicator_terms(lz, c->a, &x) && indicator_terms(lz, c->b, &y) && add_product(lz, out, &x, &y);
  case IX_OR: { /* a + b - ab */
    CountTerms both = {0};
    return indicator_terms(lz, c->a, &x) && indicator_terms(lz, c->b, &y) && add_product(lz, &both, &x, &y) &&
           add_scaled(lz, out, &x, ir_const(a, 1)) && add_scaled(lz, out, &y, ir_const(a, 1)) &&
           add_scaled(lz, out, &both, ir_const(a, -1));
  }
  case IX_NOT:
    return indicator_terms(lz, c->a, &x) && add_term(lz, out, ir_const(a, 1), EVERY_ITERATION) &&
           add_scaled(lz, out, &x, ir_const(a, -1));
  case IX_LT:
  case IX_LE:
  case IX_GT:
  case IX_GE:
  case IX_EQ:
  case IX_NE: return compare_atom(lz, c->kind, c->a, c->b, out);
  default: return not_closed(lz, "it could not be analyzed");
  }
}

static bool indicator_terms(Linearize *lz, IrExpr *c, CountTerms *out) {
  Arena *a = lz->p->arena;
  if (!uses_loopvar(c, lz->loop)) return add_term(lz, out, ir_select(a, c, ir_const(a, 1), ir_const(a, 0)), EVERY_ITERATION);
  if (lz->depth == MAX_COUNT_DEPTH) return not_closed(lz, "its count or conditions nest too deep to analyze");
  lz->depth++;
  bool closed = indicator_terms_at(lz, c, out);
  lz->depth--;
  return closed;
}

/* Records the line of the conditional whose condition is c, for
 * --explain; false if c is no conditional's (a select built for the count
 * of a loop inside). */
static bool note_condition_line(Linearize *lz, const IrExpr *c) {
  const Deps *d = lz->d;
  for (int i = 0; i < d->k->nifs; i++) {
    if (lz->conds[i] != c) continue;
    int line = source_line(&lz->p->src, d->ifs[i].stmt->span.begin), at = 0;
    while (at < lz->nlines && lz->lines[at] < line) at++;
    if ((at < lz->nlines && lz->lines[at] == line) || lz->nlines == MAX_COUNT_TERMS) return true;
    memmove(&lz->lines[at + 1], &lz->lines[at], sizeof(int) * (size_t)(lz->nlines++ - at));
    lz->lines[at] = line;
    return true;
  }
  return false;
}

/* "lines 3, 7" */
static const char *condition_lines(Program *p, const Linearize *lz) {
  const char *s = lz->nlines > 1 ? "lines" : "line";
  for (int i = 0; i < lz->nlines; i++) s = arena_printf(p->arena, "%s%s %d", s, i ? "," : "", lz->lines[i]);
  return s;
}

/* Beyond conditions, only the count of a loop inside (its trips, or its own
 * branch terms) can depend on the variable. */
static const char NESTED_RANGE[] = "a loop inside runs over a range that depends on the loop variable";

static bool count_terms(Linearize *lz, IrExpr *k, CountTerms *out);

/* k, a count per iteration, as terms; the sum of a body's statements is
 * walked down its left spine, not recursed into (a body may hold
 * thousands). */
static bool count_terms_at(Linearize *lz, IrExpr *k, CountTerms *out) {
  Arena *a = lz->p->arena;
  CountTerms x = {0}, y = {0}, cond = {0};
  for (; k->kind == IX_ADD || k->kind == IX_SUB; k = k->a) {
    CountTerms part = {0};
    if (!count_terms(lz, k->b, &part) || !add_scaled(lz, out, &part, ir_const(a, k->kind == IX_ADD ? 1 : -1)))
      return false;
  }
  if (!uses_loopvar(k, lz->loop)) return add_term(lz, out, k, EVERY_ITERATION);
  switch (k->kind) {
  case IX_MUL:
    if (uses_loopvar(k->a, lz->loop) && uses_loopvar(k->b, lz->loop)) return not_closed(lz, NESTED_RANGE);
    return uses_loopvar(k->a, lz->loop) ? count_terms(lz, k->a, &x) && add_scaled(lz, out, &x, k->b)
                                        : count_terms(lz, k->b, &x) && add_scaled(lz, out, &x, k->a);
  case IX_SELECT:
    if (!count_terms(lz, k->b, &x) || !count_terms(lz, k->c, &y)) return false;
    if (!uses_loopvar(k->a, lz->loop)) /* an invariant test: gate the terms */
      return add_scaled(lz, out, &x, ir_select(a, k->a, ir_const(a, 1), ir_const(a, 0))) &&
             add_scaled(lz, out, &y, ir_select(a, k->a, ir_const(a, 0), ir_const(a, 1)));
    if (!note_condition_line(lz, k->a)) return not_closed(lz, NESTED_RANGE);
    { /* else + [c] * (then - else) */
      CountTerms diff = {0};
      return indicator_terms(lz, k->a, &cond) && add_scaled(lz, &diff, &x, ir_const(a, 1)) &&
             add_scaled(lz, &diff, &y, ir_const(a, -1)) && add_scaled(lz, out, &y, ir_const(a, 1)) &&
             add_product(lz, out, &cond, &diff);
    }
  default: return not_closed(lz, NESTED_RANGE);
  }
}

static bool count_terms(Linearize *lz, IrExpr *k, CountTerms *out) {
  if (!uses_loopvar(k, lz->loop)) return add_term(lz, out, k, EVERY_ITERATION);
  if (lz->depth == MAX_COUNT_DEPTH) return not_closed(lz, "its count or conditions nest too deep to analyze");
  lz->depth++;
  bool closed = count_terms_at(lz, k, out);
  lz->depth--;
  return closed;
}

/* |[x, y) ∩ set|, exactly (every intermediate in [-1, 2^63)). */
static IrExpr *count_in(Arena *a, const IterSet *set, IrExpr *x, IrExpr *y) {
  if (set->point)
    return ir_select(a, ir_binary(a, IX_AND, ir_binary(a, IX_LE, x, set->point, 0), ir_binary(a, IX_LT, set->point, y, 0), 0),
                     ir_const(a, 1), ir_const(a, 0));
  IrExpr *lower = max_of(a, x, set->from), *upper = min_of(a, y, set->to);
  IrExpr *n = ir_binary(a, IX_TRIPS, lower, upper, 0);
  if (set->mod <= 1) return n;
  /* the first member of the class at or above lower is lower + d */
  IrExpr *m = ir_const(a, set->mod);
  IrExpr *d = ir_binary(a, IX_MOD,
                        ir_binary(a, IX_SUB, ir_binary(a, IX_MOD, set->rem, m, 0), ir_binary(a, IX_MOD, lower, m, 0), 0),
                        m, 0);
  /* ceil(t / m) = floor((t - 1) / m) + 1 for t >= 0 */
  IrExpr *t = d->kind == IX_CONST && d->value == 0 ? n : ir_binary(a, IX_TRIPS, d, n, 0);
  return ir_binary(a, IX_ADD, ir_binary(a, IX_DIV, ir_binary(a, IX_SUB, t, ir_const(a, 1), 0), m, 0),
                   ir_const(a, 1), 0);
}

/* The e-instructions of iterations x .. y - 1, terms being K_e's. */
IrExpr *count_over(Arena *a, const CountTerms *terms, IrExpr *x, IrExpr *y) {
  IrExpr *sum = ir_const(a, 0);
  for (int i = 0; i < terms->n; i++)
    sum = ir_binary(a, IX_ADD, sum, ir_binary(a, IX_MUL, terms->coef[i], count_in(a, &terms->set[i], x, y), 0), 0);
  return sum;
}

/* K as terms of the loop's iterations (counting.h). */
CountTerms *count_terms_of(Program *p, const Deps *d, IrExpr *const *conds, int loop, IrExpr *k,
                           const char **why_not, const char **lines) {
  Linearize lz = {p, d, conds, loop, NULL, {0}, 0, 0};
  CountTerms *terms = ARENA_NEW(p->arena, CountTerms);
  if (!count_terms(&lz, k, terms)) {
    *why_not = lz.why_not;
    return NULL;
  }
  *lines = condition_lines(p, &lz);
  return terms;
}

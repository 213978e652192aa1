/* paper.c: the allocation of Sung et al. (the paper bfsync reproduces), as
 * a baseline on bfsync's machine (docs/algorithm.md, section 5.1, has what
 * had to be assumed).
 *
 * Every engine runs every loop and conditional, as the hardware loops of
 * the paper do. Scopes are loops and the branches of conditionals (a branch
 * is a scope of 0 or 1 trips). Each engine keeps, per scope it needs, the
 * paper's two registers: r, the entries of the scope since the last
 * barrier (the paper's monotone register; a barrier resets the semaphores
 * it is compared with, so it restarts too), and the trip register rhat,
 * the entries since the scope's own entry. For a dependence of consumer b
 * on an instruction x of engine e, with S the innermost scope around both,
 * only the paper's three shapes are allocated:
 *
 *   - x directly in S at offset k (its instance k iterations of S back,
 *     k >= 0, the smallest the dependence analysis cannot rule out): the
 *     threshold isGT(rhat_S, k) * (base + N * (rhat_S - k - 1) + K), with
 *     N the e-instructions of S's body and K x's place among them;
 *   - x nested below S, before b (forward) at offset 0, or after b
 *     (backward) at offset 1: every instance of x so far, which on one
 *     counter per engine is e's count at the end of x's sub-scope, kept in
 *     a register when it ends.
 *
 * bfsync's engines have one counter each, not one per (loop, engine), so
 * the per-loop semaphore is emulated on it: `base` is e's count at S's
 * entry, a register set there from the others (e's count at any point is
 * the sum of r times the e-instructions directly in each scope, less the
 * ones not reached yet), and the first shape at an offset k >= 1 needs
 * S's body to hold no nested e-instruction (at offset 0 such a body gets a
 * register set to e's count right after x instead). Every other dependence is the paper's barrier
 * fallback: the scope that carries it (or, for a dependence across trips
 * of S that the mask drops, S's parent) becomes a barrier scope, with
 * barrier.c's barriers (at entry and after every iteration, or before a
 * conditional and after each branch), and so does every scope around it.
 * Inside a barrier scope positions count from its last barrier, and a
 * dependence that a barrier orders needs no wait. Thresholds are never
 * below need_e(b) (no race) and may be above it (late: the paper's cost,
 * and the emulation's). */
#include <limits.h>
#include <string.h>

#include "frontend/program.h"
#include "transform/deps.h"
#include "transform/sync.h"

/* The largest offset k the first shape looks for (a dependence whose
 * smallest possible distance is larger takes the fallback). */
enum { MAX_OFFSET = 16 };

typedef enum ScopeKind { SC_TOP, SC_LOOP, SC_BRANCH } ScopeKind;

typedef struct Scope {
  ScopeKind kind;
  const Stmt *stmt; /* the loop, or the conditional of a branch */
  int parent;       /* -1 for the top */
  int depth;        /* scopes around it */
  int loop;         /* the innermost loop at or around it, -1 if none */
  int first, end;   /* its instruction ids */
  int node_first, node_end; /* its node's ids in the parent: the loop's, or the whole conditional's */
  int node;         /* the scope that names its node: itself, or the then-branch */
  int direct[BFRT_MAX_ENGINES], inside[BFRT_MAX_ENGINES];
  bool barrier;
} Scope;

/* A register of one stream, found by what it holds. */
typedef enum RegKind { REG_R, REG_RHAT, REG_ENTRY, REG_END, REG_AFTER } RegKind;

typedef struct Reg {
  int kind, engine, id, producer; /* engine -1: an empty slot */
  int var;
  IrExpr *value; /* captures: what the register is set to */
} Reg;

typedef struct NodeList {
  IrNode *head, **tail;
} NodeList;

/* One dependence of a consumer b on an instruction x, with what the
 * dependence analysis says about it (which does not change as scopes
 * become barrier scopes, so it is asked once). */
typedef struct Edge {
  int x, S;     /* S: the innermost scope around both */
  bool same;    /* x may conflict with b in the same iteration of S */
  bool in_trip; /* ... in some iteration of S's trip (S a loop) */
  bool cross;   /* ... in another trip of S */
  bool dist1;   /* ... one iteration of S back (S a loop) */
  int k;        /* x directly in S: the smallest offset 1 .. MAX_OFFSET it may conflict at, or 0 */
} Edge;

typedef struct Paper {
  Program *p;
  const Deps *d;
  int nscopes, ne;
  Scope *scopes;
  int *instr_scope;   /* [instr] */
  /* Each scope's direct instructions, and its child scopes, ids ascending:
   * direct[direct_at[s] .. direct_at[s + 1]), children likewise; and the
   * last scope inside it (scopes are numbered in program order, so the
   * ones inside s are s + 1 .. last[s]). */
  int *direct, *direct_at, *children, *children_at, *last;
  int *scope_of_loop; /* [loop] */
  int *scope_of_if;   /* [if]: its then-branch; the else-branch is the next */
  Reg *regs;
  int64_t nregs, regs_cap;
  Edge **edges;        /* [instr]: its dependences */
  int *nedges;
  IrExpr **wait_terms; /* [instr * ne + e]: the threshold, or NULL */
  WaitWhy **wait_why; /* [instr * ne + e]: the shapes and producers of its dependences */
  bool changed;       /* a fallback marked a scope in this round */
  int64_t marks;      /* scopes marked so far: the version of the barrier flags */
  /* Per scope, its barrier children (ids ascending) as of marks_seen[s]. */
  int **barrier_children, *nbarrier_children;
  int64_t *marks_seen;
  int64_t visits;     /* (consumer, engine) pairs classified so far */
} Paper;

/* ---- Scopes. */

static int new_scope(Paper *pp, ScopeKind kind, const Stmt *stmt, int parent) {
  Scope *s = &pp->scopes[pp->nscopes];
  s->kind = kind;
  s->stmt = stmt;
  s->parent = parent;
  s->depth = parent < 0 ? 0 : pp->scopes[parent].depth + 1;
  s->loop = kind == SC_LOOP ? stmt->loop_id : parent < 0 ? -1 : pp->scopes[parent].loop;
  s->node = pp->nscopes;
  s->barrier = kind == SC_TOP;
  return pp->nscopes++;
}

static void build_scopes(Paper *pp, const Stmt *s, int scope, int *next) {
  for (; s; s = s->next) {
    if (s->kind == ST_INSTR) {
      pp->instr_scope[s->instr_id] = scope;
      (*next)++;
    } else if (s->kind == ST_BLOCK) {
      build_scopes(pp, s->body, scope, next);
    } else if (s->kind == ST_FOR) {
      int l = new_scope(pp, SC_LOOP, s, scope);
      pp->scope_of_loop[s->loop_id] = l;
      pp->scopes[l].first = pp->scopes[l].node_first = *next;
      build_scopes(pp, s->body, l, next);
      pp->scopes[l].end = pp->scopes[l].node_end = *next;
    } else {
      int first = *next, then = new_scope(pp, SC_BRANCH, s, scope), other = new_scope(pp, SC_BRANCH, s, scope);
      pp->scope_of_if[s->if_id] = then;
      pp->scopes[other].node = then;
      pp->scopes[then].first = first;
      build_scopes(pp, s->body, then, next);
      pp->scopes[then].end = pp->scopes[other].first = *next;
      build_scopes(pp, s->orelse, other, next);
      pp->scopes[other].end = *next;
      for (int b = then; b <= other; b++) {
        pp->scopes[b].node_first = first;
        pp->scopes[b].node_end = *next;
      }
    }
  }
}

/* members[at[g] .. at[g + 1]) := the ids i in 0 .. n with group(i) == g, ascending. */
static void group_by(Paper *pp, int n, int ngroups, const int *group, int **members, int **at) {
  int *start = ARENA_ARRAY(pp->p->arena, int, ngroups + 2), *fill = ARENA_ARRAY(pp->p->arena, int, ngroups + 1);
  int *out = ARENA_ARRAY(pp->p->arena, int, n + 1);
  for (int i = 0; i < n; i++)
    if (group[i] >= 0) start[group[i] + 1]++;
  for (int g = 0; g < ngroups; g++) start[g + 1] += start[g];
  for (int i = 0; i < n; i++)
    if (group[i] >= 0) out[start[group[i]] + fill[group[i]]++] = i;
  *members = out;
  *at = start;
}

static void count_scopes(Paper *pp) {
  int n = pp->nscopes;
  int *parents = ARENA_ARRAY(pp->p->arena, int, n + 1);
  pp->last = ARENA_ARRAY(pp->p->arena, int, n + 1);
  for (int s = 0; s < n; s++) parents[s] = pp->scopes[s].parent;
  for (int s = n - 1; s >= 0; s--) {
    if (!pp->last[s]) pp->last[s] = s;
    int up = parents[s];
    if (up >= 0 && pp->last[s] > pp->last[up]) pp->last[up] = pp->last[s];
  }
  group_by(pp, pp->d->ninstrs, n, pp->instr_scope, &pp->direct, &pp->direct_at);
  group_by(pp, n, n, parents, &pp->children, &pp->children_at);
  for (int i = 0; i < pp->d->ninstrs; i++) {
    int e = pp->d->instrs[i].engine;
    pp->scopes[pp->instr_scope[i]].direct[e]++;
    for (int s = pp->instr_scope[i]; s >= 0; s = pp->scopes[s].parent) pp->scopes[s].inside[e]++;
  }
}

static int nearest_barrier(const Paper *pp, int s) {
  while (!pp->scopes[s].barrier) s = pp->scopes[s].parent;
  return s;
}

static int lca(const Paper *pp, int a, int b) {
  while (pp->scopes[a].depth > pp->scopes[b].depth) a = pp->scopes[a].parent;
  while (pp->scopes[b].depth > pp->scopes[a].depth) b = pp->scopes[b].parent;
  while (a != b) {
    a = pp->scopes[a].parent;
    b = pp->scopes[b].parent;
  }
  return a;
}

/* The scope just inside S on the way to s (s strictly inside S). */
static int child_toward(const Paper *pp, int S, int s) {
  while (pp->scopes[s].parent != S) s = pp->scopes[s].parent;
  return s;
}

static bool barrier_below(const Paper *pp, int s, int S) {
  for (; s != S; s = pp->scopes[s].parent)
    if (pp->scopes[s].barrier) return true;
  return false;
}

/* Mark s a barrier scope, with its twin branch and every scope around it. */
static void fallback(Paper *pp, int s) {
  for (; s >= 0 && !pp->scopes[s].barrier; s = pp->scopes[s].parent) {
    pp->scopes[s].barrier = true;
    pp->marks++;
    if (pp->scopes[s].kind == SC_BRANCH) {
      int then = pp->scopes[s].node;
      pp->scopes[then].barrier = pp->scopes[then + 1].barrier = true;
    }
    pp->changed = true;
  }
}

/* The segment of barrier scope B around id boundary t (a point in B's
 * body, not inside a barrier child): ids between B's barrier children. */
static void segment(Paper *pp, int B, int t, int *start, int *end) {
  const Scope *b = &pp->scopes[B];
  if (pp->marks_seen[B] != pp->marks) { /* the flags changed: list B's barrier children again */
    int n = 0, *list = pp->barrier_children[B];
    if (!list) list = pp->barrier_children[B] = ARENA_ARRAY(pp->p->arena, int, pp->children_at[B + 1] - pp->children_at[B] + 1);
    for (int i = pp->children_at[B]; i < pp->children_at[B + 1]; i++)
      if (pp->scopes[pp->children[i]].barrier) list[n++] = pp->children[i];
    pp->nbarrier_children[B] = n;
    pp->marks_seen[B] = pp->marks;
  }
  /* the barrier children are in program order: the first that ends after t */
  const int *list = pp->barrier_children[B];
  int lo = 0, hi = pp->nbarrier_children[B];
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (pp->scopes[list[mid]].node_end <= t) lo = mid + 1;
    else hi = mid;
  }
  *start = lo ? pp->scopes[list[lo - 1]].node_end : b->first;
  /* t is not inside a barrier child, so that one starts at or after t */
  *end = lo < pp->nbarrier_children[B] ? pp->scopes[list[lo]].node_first : b->end;
}

static bool in_segment(const Paper *pp, int s, int B, int start, int end) {
  const Scope *sc = &pp->scopes[s];
  return !sc->barrier && nearest_barrier(pp, s) == B && sc->node_first >= start && sc->node_end <= end;
}

/* ---- Registers. */

static Reg *reg_slot(Paper *pp, int kind, int engine, int id, int producer) {
  uint64_t mask = (uint64_t)pp->regs_cap - 1;
  uint64_t h = ((uint64_t)kind * 31 + (uint64_t)engine) * 0x9e3779b97f4a7c15u ^ (uint64_t)id * 0xc2b2ae3d27d4eb4fu ^
               (uint64_t)producer;
  for (uint64_t j = h & mask;; j = (j + 1) & mask) {
    Reg *r = &pp->regs[j];
    if (r->engine < 0 || (r->kind == kind && r->engine == engine && r->id == id && r->producer == producer)) return r;
  }
}

static void grow_regs(Paper *pp) {
  Reg *old = pp->regs;
  int64_t cap = pp->regs_cap;
  pp->regs_cap = cap ? 2 * cap : 256;
  pp->regs = ARENA_ARRAY(pp->p->arena, Reg, pp->regs_cap);
  for (int64_t i = 0; i < pp->regs_cap; i++) pp->regs[i].engine = -1;
  for (int64_t i = 0; i < cap; i++)
    if (old[i].engine >= 0) *reg_slot(pp, old[i].kind, old[i].engine, old[i].id, old[i].producer) = old[i];
}

static const Reg *find_reg(Paper *pp, int kind, int engine, int id, int producer) {
  if (!pp->regs_cap) return NULL;
  const Reg *r = reg_slot(pp, kind, engine, id, producer);
  return r->engine < 0 ? NULL : r;
}

static const char *reg_name(Paper *pp, int kind, int id, int producer) {
  static const char *const what[] = {"r", "rhat", "entry", "end", "after"};
  Arena *a = pp->p->arena;
  const char *e = producer >= 0 ? pp->p->target->engines[producer].name : "";
  if (kind == REG_AFTER) return arena_printf(a, "%s_%s_line%d", e, what[kind], pp->d->instrs[id].line);
  const Scope *s = &pp->scopes[id];
  const char *scope = s->kind == SC_LOOP ? arena_printf(a, "%s", s->stmt->var)
                                         : arena_printf(a, "if%d%s", s->stmt->if_id, id == s->node ? "" : "else");
  return producer >= 0 ? arena_printf(a, "%s_%s_%s", e, what[kind], scope) : arena_printf(a, "%s_%s", what[kind], scope);
}

/* The register of engine c's stream holding (kind, id, producer). */
static Reg *reg(Paper *pp, int kind, int c, int id, int producer) {
  if (2 * (pp->nregs + 1) > pp->regs_cap) grow_regs(pp);
  Reg *r = reg_slot(pp, kind, c, id, producer);
  if (r->engine < 0) {
    *r = (Reg){kind, c, id, producer, ir_new_var(pp->p->arena, &pp->p->ir->streams[c], reg_name(pp, kind, id, producer)),
               NULL};
    pp->nregs++;
  }
  return r;
}

static IrExpr *var(Paper *pp, int kind, int c, int id, int producer) {
  return ir_leaf(pp->p->arena, IX_VAR, reg(pp, kind, c, id, producer)->var);
}

/* ---- Positions. */

static IrExpr *add(Paper *pp, IrExpr *a, IrExpr *b) { return ir_binary(pp->p->arena, IX_ADD, a, b, 0); }
static IrExpr *mul(Paper *pp, IrExpr *a, int64_t k) { return ir_binary(pp->p->arena, IX_MUL, a, ir_const(pp->p->arena, k), 0); }
static IrExpr *constant(Paper *pp, int64_t v) { return ir_const(pp->p->arena, v); }

/* e-instructions directly in scope s with ids in [from, to). */
static int64_t direct_between(const Paper *pp, int s, int e, int from, int to) {
  int lo = pp->direct_at[s], hi = pp->direct_at[s + 1];
  while (lo < hi) { /* the first direct instruction at or after from */
    int mid = lo + (hi - lo) / 2;
    if (pp->direct[mid] < from) lo = mid + 1;
    else hi = mid;
  }
  int64_t n = 0;
  for (int i = lo; i < pp->direct_at[s + 1] && pp->direct[i] < to; i++) n += pp->d->instrs[pp->direct[i]].engine == e;
  return n;
}

/* Sum over the non-barrier scopes of B's segment [start, end) that end by
 * `upto` of (e-instructions directly in the scope) * r, on c's stream. */
static IrExpr *scope_sum(Paper *pp, int c, int e, int B, int start, int end, int upto) {
  IrExpr *sum = constant(pp, 0);
  for (int s = B + 1; s <= pp->last[B]; s++)
    if (pp->scopes[s].direct[e] && pp->scopes[s].end <= upto && in_segment(pp, s, B, start, end))
      sum = add(pp, sum, mul(pp, var(pp, REG_R, c, s, -1), pp->scopes[s].direct[e]));
  return sum;
}

/* e's count since the last barrier at the point before id t in scope s,
 * evaluated on c's stream at that point: each scope's r times its direct
 * e-instructions, less those of the scopes around the point not reached
 * in their current iteration, plus the barrier scope's own before t. */
static IrExpr *count_at(Paper *pp, int c, int e, int s, int t) {
  int B = nearest_barrier(pp, s), start, end;
  segment(pp, B, t, &start, &end);
  IrExpr *sum = scope_sum(pp, c, e, B, start, end, INT_MAX);
  int64_t k = direct_between(pp, B, e, start, t);
  for (int a = s; a != B; a = pp->scopes[a].parent) k -= direct_between(pp, a, e, t, pp->scopes[a].end);
  return add(pp, sum, constant(pp, k));
}

/* e's count at the point before id t in barrier scope B's current
 * iteration, evaluated later in that iteration: the scopes that ended by t. */
static IrExpr *settled_count(Paper *pp, int c, int e, int B, int t) {
  int start, end;
  segment(pp, B, t, &start, &end);
  return add(pp, scope_sum(pp, c, e, B, start, end, t), constant(pp, direct_between(pp, B, e, start, t)));
}

/* A register set to e's count at a point, on c's stream. */
static IrExpr *capture(Paper *pp, int kind, int c, int id, int e, int s, int t) {
  Reg *r = reg(pp, kind, c, id, e);
  int var_id = r->var;
  if (!r->value) {
    IrExpr *v = count_at(pp, c, e, s, t);
    r = reg_slot(pp, kind, c, id, e); /* count_at may have grown the table */
    r->value = v;
  }
  return ir_leaf(pp->p->arena, IX_VAR, var_id);
}

/* ---- The three shapes. */

static int common_limit(const Paper *pp, int S) {
  int l = pp->scopes[S].loop;
  return l < 0 ? 0 : pp->d->loops[l].depth + 1;
}

static bool same_iteration(const Paper *pp, int x, int b, int S) {
  return deps_may_conflict(pp->d, x, b, common_limit(pp, S));
}

/* Whether an instance of x in another trip of S (another iteration of a
 * loop around S) may conflict with b: then the mask, which looks at this
 * trip only, needs the barriers of S's parent. */
static bool across_trips(const Paper *pp, int x, int b, int S) {
  const Scope *s = &pp->scopes[S];
  int outer = s->kind == SC_LOOP ? pp->d->loops[s->loop].parent : s->loop;
  return outer >= 0 && deps_may_conflict(pp->d, x, b, 0);
}

static bool flat(const Paper *pp, int S, int e) { return pp->scopes[S].inside[e] == pp->scopes[S].direct[e]; }

/* x directly in S at offset k: on one counter, base + N (rhat - k - 1) + K, masked. */
static IrExpr *offset_threshold(Paper *pp, int c, int e, int x, int S, int k) {
  const Scope *s = &pp->scopes[S];
  int64_t N = s->direct[e], K = direct_between(pp, S, e, s->first, x + 1);
  IrExpr *base = capture(pp, REG_ENTRY, c, S, e, s->parent, s->node_first);
  if (s->kind == SC_BRANCH) return add(pp, base, constant(pp, K));
  IrExpr *rhat = var(pp, REG_RHAT, c, S, -1);
  IrExpr *at = add(pp, add(pp, base, mul(pp, ir_binary(pp->p->arena, IX_SUB, rhat, constant(pp, k + 1), 0), N)),
                   constant(pp, K));
  if (!k) return at;
  return ir_binary(pp->p->arena, IX_MUL, ir_binary(pp->p->arena, IX_GT, rhat, constant(pp, k), 0), at, 0);
}

static Edge edge(const Paper *pp, int x, int b) {
  const Deps *d = pp->d;
  int sx = pp->instr_scope[x], S = lca(pp, sx, pp->instr_scope[b]);
  const Scope *s = &pp->scopes[S];
  Edge g = {x, S, same_iteration(pp, x, b, S), false, false, false, 0};
  if (s->kind != SC_LOOP) {
    g.cross = across_trips(pp, x, b, S);
    return g;
  }
  g.dist1 = deps_may_conflict_at(d, x, b, s->loop, 1);
  if (sx != S) return g;
  for (int j = 1; j <= MAX_OFFSET && !g.k; j++)
    if (j == 1 ? g.dist1 : deps_may_conflict_at(d, x, b, s->loop, j)) g.k = j;
  g.in_trip = g.k || deps_may_conflict(d, x, b, d->loops[s->loop].depth);
  g.cross = across_trips(pp, x, b, S);
  return g;
}

/* The threshold of b on x's engine for the dependence g (NULL: none), or
 * a fallback marked (pp->changed). build: make the registers too. */
static IrExpr *classify(Paper *pp, const Edge *g, int b, bool build, const char **shape) {
  const Deps *d = pp->d;
  int x = g->x, S = g->S, c = d->instrs[b].engine, e = d->instrs[x].engine, sx = pp->instr_scope[x];
  const Scope *s = &pp->scopes[S];
  if (s->barrier) {
    /* other iterations of S, and anything a barrier below S separates, are ordered */
    if (x > b || barrier_below(pp, sx, S) || barrier_below(pp, pp->instr_scope[b], S) || !g->same) return NULL;
    int t = sx == S ? x + 1 : pp->scopes[child_toward(pp, S, sx)].node_end, start, end;
    if (t > b) return NULL; /* x and b in two branches of one conditional: never both in one iteration */
    segment(pp, S, t, &start, &end);
    if (b >= end) return NULL; /* a barrier child of S lies between */
    *shape = "since the last barrier";
    return build ? settled_count(pp, c, e, S, t) : NULL;
  }
  if (sx == S) {
    if (x < b && g->same) {
      *shape = "innermost shared scope, offset 0";
      if (!build) return NULL;
      return flat(pp, S, e) ? offset_threshold(pp, c, e, x, S, 0) : capture(pp, REG_AFTER, c, x, e, sx, x + 1);
    }
    if ((g->k && !flat(pp, S, e)) || (!g->k && g->in_trip)) {
      fallback(pp, S);
      return NULL;
    }
    if (!pp->scopes[s->parent].barrier && g->cross) {
      fallback(pp, s->parent);
      return NULL;
    }
    if (!g->k) return NULL;
    *shape = arena_printf(pp->p->arena, "innermost shared loop, offset %d", g->k);
    return build ? offset_threshold(pp, c, e, x, S, g->k) : NULL;
  }
  int node = pp->scopes[child_toward(pp, S, sx)].node;
  /* x in another branch of a conditional that holds b runs in other iterations only */
  bool forward = x < b && pp->scopes[node].node_end <= b;
  if (forward ? g->same : g->dist1) {
    *shape = forward ? "nested forward, offset 0" : "nested backward, offset 1";
    return build ? capture(pp, REG_END, c, node, e, S, pp->scopes[node].node_end) : NULL;
  }
  fallback(pp, S);
  return NULL;
}

/* b's dependences, found once: on each engine, each instruction that may
 * conflict with b, from the accessors of b's resources. */
static void find_edges(Paper *pp, int b, int64_t *stamp) {
  const Deps *d = pp->d;
  const InstrInfo *in = &d->instrs[b];
  int n = 0, cap = 0;
  Edge *list = NULL;
  for (int e = 0; e < pp->ne; e++) {
    if (e == in->engine) continue;
    int64_t visit = ++pp->visits; /* stamp[x] == visit: x already seen for (b, e) */
    for (int j = 0; j < in->naccesses; j++) {
      const AccessorList *l = deps_accessors(d, in->accesses[j].res, e);
      for (int i = 0; i < l->n; i++) {
        int x = l->ids[i];
        if (stamp[x] == visit || !deps_may_conflict(d, x, b, 0)) continue;
        stamp[x] = visit;
        if (n == cap) list = arena_grow(pp->p->arena, list, sizeof *list, n, &cap);
        list[n++] = edge(pp, x, b);
      }
    }
  }
  pp->edges[b] = list;
  pp->nedges[b] = n;
}

/* Every dependence of b, classified; with build, the threshold on each
 * engine (the max of its dependences') kept for the stream. */
static void classify_consumer(Paper *pp, int b, bool build) {
  const Deps *d = pp->d;
  const InstrInfo *in = &d->instrs[b];
  for (int i = 0; i < pp->nedges[b]; i++) {
    const Edge *g = &pp->edges[b][i];
    int e = d->instrs[g->x].engine;
    const char *why = NULL;
    IrExpr *term = classify(pp, g, b, build, &why);
    if (!term) continue;
    IrExpr **t = &pp->wait_terms[b * pp->ne + e];
    WaitWhy **w = &pp->wait_why[b * pp->ne + e];
    if (!*w) {
      *w = ARENA_NEW(pp->p->arena, WaitWhy);
      (*w)->consumer_line = in->line;
      (*w)->kind = "none";
    }
    *t = *t ? ir_binary(pp->p->arena, IX_MAX, *t, term, 0) : term;
    (*w)->distance = (*w)->distance && strcmp((*w)->distance, why) ? "several shapes" : why;
    if ((*w)->nproducers < 4) (*w)->producer_lines[(*w)->nproducers++] = d->instrs[g->x].line;
    const char *kind = deps_kind(d, g->x, b), *had = (*w)->kind;
    (*w)->kind = deps_kind_name(strstr(kind, "RAW") || strstr(had, "RAW"), strstr(kind, "WAR") || strstr(had, "WAR"),
                                strstr(kind, "WAW") || strstr(had, "WAW"));
  }
}

/* ---- The streams. */

static void append(NodeList *l, IrNode *n) {
  *l->tail = n;
  l->tail = &n->next;
}

static void set(Paper *pp, NodeList *out, int var_id, IrExpr *value, int line) {
  IrNode *n = ir_node(pp->p->arena, IR_SET, line);
  n->var = var_id;
  n->value = value;
  append(out, n);
}

static void emit_capture(Paper *pp, NodeList *out, int kind, int c, int id, int line) {
  for (int e = 0; e < pp->ne; e++) {
    const Reg *r = find_reg(pp, kind, c, id, e);
    if (r) set(pp, out, r->var, r->value, line);
  }
}

static void emit_count(Paper *pp, NodeList *out, int kind, int c, int s, int line) {
  const Reg *r = find_reg(pp, kind, c, s, -1);
  if (r) set(pp, out, r->var, add(pp, ir_leaf(pp->p->arena, IX_VAR, r->var), constant(pp, 1)), line);
}

/* After a barrier: c's counts and end registers of B's segment from t restart at 0. */
static void emit_resets(Paper *pp, NodeList *out, int c, int B, int t, int line) {
  int start, end;
  segment(pp, B, t, &start, &end);
  for (int s = B + 1; s <= pp->last[B]; s++) {
    if (!in_segment(pp, s, B, start, end)) continue;
    const Reg *r = find_reg(pp, REG_R, c, s, -1);
    if (r) set(pp, out, r->var, constant(pp, 0), line);
    for (int e = 0; s == pp->scopes[s].node && e < pp->ne; e++)
      if ((r = find_reg(pp, REG_END, c, s, e))) set(pp, out, r->var, constant(pp, 0), line);
  }
}

static IrNode *barrier_node(Paper *pp, int line) { return ir_node(pp->p->arena, IR_BARRIER, line); }

static void emit_list(Paper *pp, int c, const Stmt *s, NodeList *out);

static void emit_instr(Paper *pp, int c, const Stmt *s, NodeList *out) {
  const InstrInfo *in = &pp->d->instrs[s->instr_id];
  if (in->engine == c) {
    for (int e = 0; e < pp->ne; e++) {
      IrExpr *t = pp->wait_terms[s->instr_id * pp->ne + e];
      if (!t || (t->kind == IX_CONST && t->value <= 0)) continue;
      IrNode *w = ir_node(pp->p->arena, IR_WAIT, in->line);
      w->engine = e;
      w->threshold = t;
      w->why = pp->wait_why[s->instr_id * pp->ne + e];
      append(out, w);
    }
    append(out, ir_op(pp->p, s, in->line));
  }
  emit_capture(pp, out, REG_AFTER, c, s->instr_id, in->line);
}

/* The body of scope sc, one iteration or branch: restarts after the barrier
 * before it, or the paper's counts. */
static IrNode *emit_body(Paper *pp, int c, int sc, const Stmt *body, int line) {
  NodeList out = {NULL, &out.head};
  const Scope *s = &pp->scopes[sc];
  if (s->barrier) {
    emit_resets(pp, &out, c, sc, s->first, line);
  } else {
    emit_count(pp, &out, REG_R, c, sc, line);
    emit_count(pp, &out, REG_RHAT, c, sc, line);
  }
  emit_list(pp, c, body, &out);
  if (s->barrier && (body || s->kind == SC_LOOP || s->node == sc)) append(&out, barrier_node(pp, line));
  return out.head;
}

static void emit_scope_node(Paper *pp, int c, const Stmt *st, int sc, NodeList *out) {
  const Scope *s = &pp->scopes[sc];
  int line = source_line(&pp->p->src, st->span.begin);
  if (s->barrier) {
    append(out, barrier_node(pp, line));
  } else {
    emit_capture(pp, out, REG_ENTRY, c, sc, line);
    if (s->kind == SC_BRANCH) emit_capture(pp, out, REG_ENTRY, c, sc + 1, line);
    const Reg *r = find_reg(pp, REG_RHAT, c, sc, -1);
    if (r) set(pp, out, r->var, constant(pp, 0), line);
  }
  IrNode *n = ir_node(pp->p->arena, s->kind == SC_LOOP ? IR_LOOP : IR_IF, line);
  if (s->kind == SC_LOOP) {
    n->loop_id = st->loop_id;
    n->lo = ir_from_expr(pp->p, st->lo);
    n->hi = ir_from_expr(pp->p, st->hi);
    n->body = emit_body(pp, c, sc, st->body, line);
  } else {
    n->cond = ir_from_cond(pp->p, st->cond);
    n->body = emit_body(pp, c, sc, st->body, line);
    n->orelse = st->orelse || !s->barrier ? emit_body(pp, c, sc + 1, st->orelse, line) : NULL;
  }
  append(out, n);
  if (s->barrier) emit_resets(pp, out, c, nearest_barrier(pp, s->parent), s->node_end, line);
  else emit_capture(pp, out, REG_END, c, sc, line);
}

static void emit_list(Paper *pp, int c, const Stmt *s, NodeList *out) {
  for (; s; s = s->next) {
    switch (s->kind) {
    case ST_INSTR: emit_instr(pp, c, s, out); break;
    case ST_BLOCK: emit_list(pp, c, s->body, out); break;
    case ST_FOR: emit_scope_node(pp, c, s, pp->scope_of_loop[s->loop_id], out); break;
    case ST_IF: emit_scope_node(pp, c, s, pp->scope_of_if[s->if_id], out); break;
    case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
    }
  }
}

/* Requires: a checked kernel. Ensures: p->ir where every engine runs every
 * scope, each dependence of the paper's three shapes has its masked
 * threshold over the paper's registers, every other one is ordered by a
 * barrier of the scope that carries it, and no threshold is below need. */
void transform_paper(Program *p) {
  const Kernel *k = p->kernel;
  Paper *pp = ARENA_NEW(p->arena, Paper);
  pp->p = p;
  pp->d = deps_build(p);
  pp->ne = pp->d->nengines;
  pp->scopes = ARENA_ARRAY(p->arena, Scope, 1 + k->nloops + 2 * k->nifs);
  pp->instr_scope = ARENA_ARRAY(p->arena, int, k->ninstrs + 1);
  int nscopes = 1 + k->nloops + 2 * k->nifs;
  pp->barrier_children = ARENA_ARRAY(p->arena, int *, nscopes);
  pp->nbarrier_children = ARENA_ARRAY(p->arena, int, nscopes);
  pp->marks_seen = ARENA_ARRAY(p->arena, int64_t, nscopes);
  for (int i = 0; i < nscopes; i++) pp->marks_seen[i] = -1;
  pp->scope_of_loop = ARENA_ARRAY(p->arena, int, k->nloops + 1);
  pp->scope_of_if = ARENA_ARRAY(p->arena, int, k->nifs + 1);
  pp->wait_terms = ARENA_ARRAY(p->arena, IrExpr *, (size_t)k->ninstrs * pp->ne + 1);
  pp->wait_why = ARENA_ARRAY(p->arena, WaitWhy *, (size_t)k->ninstrs * pp->ne + 1);
  int64_t *stamp = ARENA_ARRAY(p->arena, int64_t, k->ninstrs + 1);
  int next = 0, top = new_scope(pp, SC_TOP, NULL, -1);
  build_scopes(pp, k->body, top, &next);
  pp->scopes[top].end = pp->scopes[top].node_end = next;
  count_scopes(pp);
  p->ir = ARENA_NEW(p->arena, IrProgram);
  p->ir->sync = SYNC_PAPER;
  p->ir->nengines = pp->ne;
  /* the fallbacks first, to a fixed point (each round marks a scope or stops) */
  pp->edges = ARENA_ARRAY(p->arena, Edge *, k->ninstrs + 1);
  pp->nedges = ARENA_ARRAY(p->arena, int, k->ninstrs + 1);
  for (int b = 0; b < k->ninstrs; b++) find_edges(pp, b, stamp);
  do {
    pp->changed = false;
    for (int b = 0; b < k->ninstrs; b++) classify_consumer(pp, b, false);
  } while (pp->changed);
  for (int b = 0; b < k->ninstrs; b++) classify_consumer(pp, b, true);
  if (pp->changed) bug("paper: a fallback after the fixed point");
  for (int c = 0; c < pp->ne; c++) {
    NodeList out = {NULL, &out.head};
    emit_list(pp, c, k->body, &out);
    p->ir->streams[c].body = out.head;
  }
}

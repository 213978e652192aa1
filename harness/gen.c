/* gen.c: random valid kernels for differential testing (`bfsync gen` and
 * the campaign).
 *
 * The verification campaigns need kernels nobody wrote by hand, and a kernel
 * that check or run rejects tests nothing, so the generator is correct by
 * construction rather than by filtering: every choice is drawn from what the
 * op table (runtime/ops.def) and the target allow, and `bfsync run` accepts
 * every kernel at its parameters (or any others), numerics included:
 *
 *  - Shapes come in three families: square tiles [4, 4], row vectors
 *    [4, 1] and column vectors [1, 4]. Every shape rule has a fixed answer
 *    in those terms (matmul and transpose are square, a row reduction goes
 *    square -> row, a row broadcast takes square, square, row, a column
 *    broadcast square, square, column; elementwise ops stay within one
 *    family), so operands are picked per family and always fit.
 *  - A prologue writes every slot of every tile at the top level, so no
 *    instruction on any path reads a tile before something wrote it.
 *  - Every tile and tensor holds values of one class (unit, pos, big, acc;
 *    see "Values" below), and an instruction is printed only with operands
 *    whose image stays in its destination's class: no value becomes NaN,
 *    infinite or too large for its type, whatever the trip counts.
 *  - The out tensor Y is one tile, stored whole by the last instruction, so
 *    every element of it is stored.
 *  - Engines are picked among those the target says can run the op; inside
 *    an engine block, ops are picked among those the block's engine runs.
 *  - Ops are dealt round-robin from a shuffled deck, so a kernel of at least
 *    as many instructions as there are ops uses every op.
 *  - Loops nest at most three deep; their bounds are drawn from forms that
 *    cover parameter bounds, triangular bounds on an outer variable, lower
 *    bounds from an outer variable, single-trip and zero-trip loops.
 *  - Conditionals (at most three deep) test loop variables against
 *    constants, parameters and each other (`v == 0`, `v == u`, `v % 2 == 0`,
 *    `v < P`, `v % 3 == 1`, `v == P - 1`, `v > 1`, `v - u == 1`,
 *    `v % 4 < 2`, `v + 1 < P`, and `2 * v < P`, which the transform cannot
 *    count in closed form), combined with &&, || and !, with else branches and `else
 *    if` chains: so branches run in some iterations only, on every engine
 *    alike, and every class of closed-form branch count (docs/algorithm.md,
 *    3.1) and the running count meet the oracle.
 *  - Some kernels read device integers from `hbm in C: i32[E + 8, 2]`
 *    (values 0 .. 4 at run time, E the tensors' extent below): loop bounds
 *    `0 .. C[u, 0] % P0` (P0, the first parameter, is at least 2, so 0, 1
 *    and more trips all occur, and the variable stays below P0) and
 *    conditions `C[u, 1] > c`, rows indexed by loop variables or by
 *    constants below 8, so in range for any non-negative parameters (the
 *    campaign's --scale multiplies them), as the tensors' are.
 *  - Every loop variable stays below max(1, largest parameter), so an hbm
 *    coordinate `v + 1` is below (sum of parameters + 2): sizing the tensors
 *    that way keeps every access in bounds for any non-negative parameters.
 *  - A small pool of tiles and tensors (one of each io kind, the inout ones
 *    loaded and stored) makes RAW, WAR and WAW conflicts, on one engine
 *    and across engines, the common case rather than a lucky one.
 *  - Element types: about one tile or tensor in three stores a narrow float
 *    type (bf16 in seven, fp16 in ten, fp8e4 and fp8e5 in twenty each),
 *    so the rounding on every store goes through the
 *    emitter, both executors and the gcc build; they are drawn from a
 *    stream of their own, so a seed's kernel is otherwise what it was
 *    before types were drawn.
 *  - About one kernel in three draws tile views and element slices, from a
 *    stream of its own (STREAM_VIEWS), so the rest of a seed's kernel is
 *    what it would be without them: a third of its tiles are declared twice
 *    as long ([8, 4], [8, 1], [1, 8]) and used in the body only through a
 *    view of the family's shape, their first or second half, the middle
 *    that overlaps both, or the half a loop variable's parity picks
 *    (disjoint across iterations of different parity); other tiles are
 *    sometimes named as the view of all of them, [:, :], beside their
 *    whole-tile uses. Two in five hbm operands (and every partner of a
 *    view of part of a tile) are element slices: the tile of a coordinate
 *    in elements, D c : D c + D, or the rows D/2 .. D/2 + D - 1 that
 *    straddle tiles 0 and 1. Some loads of X are ragged: the slice
 *    D c : min(D c + D, E), E = D c + 1 + P % D, moves into the tile view
 *    0 : min(D, E - D c), 1 .. D rows as the parameter P decides at run
 *    time (only X, which nothing writes, and never 0 rows: see
 *    draw_ragged). The prologue
 *    still writes every tile whole (a big tile through an element slice of
 *    its whole shape), so a view only ever reads or overwrites part of a
 *    tile whose every element was written and is in the tile's class; the
 *    class is a property of every element, so it holds for every view.
 *    (Strided regions are not drawn.)
 * Randomness is splitmix64, seeded from --seed: the same seed prints the
 * same kernel on every machine. The kernel and its parameter set come from
 * separate streams, so --params needs no kernel to be generated. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness/gen.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/random.h"
#include "runtime/ops.h"
#include "target/target.h"

#define TILE_DIM 4
#define MAX_LOOP_DEPTH 3
#define MAX_PARAMS 3
#define MAX_TILES 6
#define MAX_PARAM_VALUE 4
#define MAX_IF_DEPTH 3

/* ---- Randomness: splitmix64, small and good enough for test generation. */
typedef struct Rng {
  uint64_t state;
} Rng;

static uint64_t rng_next(Rng *rng) { return splitmix64_next(&rng->state); }

static int rng_below(Rng *rng, int n) { return (int)(rng_next(rng) % (uint64_t)n); }

static bool rng_percent(Rng *rng, int percent) { return rng_below(rng, 100) < percent; }

/* Independent streams per purpose, so adding a draw to one never changes another. */
static Rng rng_stream(uint64_t seed, uint64_t purpose) {
  Rng rng = {seed ^ (purpose * 0xd1b54a32d192ed03u)};
  rng_next(&rng);
  return rng;
}

enum { STREAM_PARAMS = 1, STREAM_KERNEL = 2, STREAM_TYPES = 3, STREAM_VIEWS = 4 };

/* Tile shapes: square [D, D], row [D, 1] and column [1, D] vectors. */
typedef enum Family { FAM_SQUARE, FAM_ROW, FAM_COL, NFAMILIES } Family;

/* ---- Values: the class of every tile and tensor.
 *
 * `bfsync run` stops a kernel whose op turns finite values into NaN, Inf or
 * more than its destination's type holds (backend/reference_f64.c), so the
 * generator keeps every value finite by construction. Each tile and tensor
 * holds values of one class, fixed at its declaration, and an instruction
 * is only printed when the image of its sources' classes under its op (in
 * interval arithmetic, exact, with each op's true range) lies in its
 * destination's class. By induction over the instructions executed, in any
 * order, on any path and for any parameters, every value is then in its
 * class: no loop, branch or trip count can break what holds for every
 * single instruction. The classes:
 *   unit [-1, 1]    the default inputs' range;
 *   pos  [1/4, 4]   away from 0, what rsqrt, recip and sqrt may read;
 *   big  [-64, 64]  sums and products of the two;
 *   acc  |x| <= M + 64 for M the largest |value| in an acc source, an f32
 *        or bf16 accumulator (matmul_acc's destination, which reads itself).
 * An op on acc values is accepted when its image at M = ACC_M is at most
 * ACC_M + 64: the ops' images are a*M + b with a in {0, 1/4 .. 1} or a >=
 * 1.5 (the immediates and class bounds), so the check accepts exactly
 * a <= 1 and b <= 64, and an acc value grows by at most ACC_M + 64 per
 * instruction executed: below 2^20 * 2^63 < 2^84, far inside f32 and bf16.
 * The bounds 1, 1/4, 4, 64 are representable in every type, so rounding
 * to a narrow type never leaves a class, and 64 is below fp8e4's largest
 * value (448). */
typedef enum ValueClass { VAL_UNIT, VAL_POS, VAL_BIG, VAL_ACC, NCLASSES } ValueClass;

typedef struct Range {
  double lo, hi;
} Range;

#define ACC_M 1e6
#define ACC_STEP 64.0

static const Range class_range[NCLASSES] = {{-1, 1}, {0.25, 4}, {-64, 64}, {-ACC_M, ACC_M}};

/* Whether values of type may be of class c: acc values only in f32 and bf16. */
static bool type_holds(const char *type, ValueClass c) {
  return c != VAL_ACC || !strcmp(type, "f32") || !strcmp(type, "bf16");
}

static bool range_in(Range r, ValueClass c) {
  if (!(r.lo <= r.hi) || !isfinite(r.lo) || !isfinite(r.hi)) return false; /* NaN, Inf: a domain error */
  if (c == VAL_ACC) return r.lo >= -(ACC_M + ACC_STEP) && r.hi <= ACC_M + ACC_STEP;
  return r.lo >= class_range[c].lo && r.hi <= class_range[c].hi;
}

static Range span4(double a, double b, double c, double d) {
  return (Range){fmin(fmin(a, b), fmin(c, d)), fmax(fmax(a, b), fmax(c, d))};
}

static Range r_add(Range a, Range b) { return (Range){a.lo + b.lo, a.hi + b.hi}; }
static Range r_sub(Range a, Range b) { return (Range){a.lo - b.hi, a.hi - b.lo}; }
static Range r_mul(Range a, Range b) { return span4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi); }
static Range r_times(Range a, double k) { return r_mul(a, (Range){k, k}); }
static Range r_max(Range a, Range b) { return (Range){fmax(a.lo, b.lo), fmax(a.hi, b.hi)}; }
static Range r_square(Range a) {
  double lo = a.lo <= 0 && a.hi >= 0 ? 0 : fmin(a.lo * a.lo, a.hi * a.hi);
  return (Range){lo, fmax(a.lo * a.lo, a.hi * a.hi)};
}
static Range r_abs(Range a) {
  double lo = a.lo >= 0 ? a.lo : a.hi <= 0 ? -a.hi : 0;
  return (Range){lo, fmax(fabs(a.lo), fabs(a.hi))};
}
/* gelu and silu: x * (a factor in (0, 1)), so between min(x, 0) and
 * max(x, 0), and never below -0.3 (their minima are -0.17 and -0.28). */
static Range r_gated(Range a) {
  return (Range){a.lo < 0 ? fmax(a.lo, -0.3) : 0, fmax(a.hi, 0)};
}
static const Range r_invalid = {NAN, NAN};

/* The image of the op's sources (src[0] the destination's old value for
 * matmul_acc, then the operands), or r_invalid outside the op's domain. */
static Range op_image(int op, const Range *src, double imm) {
  Range a = src[1], b = src[2];
  switch (op) {
  case BFRT_LOAD: case BFRT_STORE: case BFRT_COPY: case BFRT_TRANSPOSE: case BFRT_ROWMAX: return a;
  case BFRT_MATMUL: return r_times(r_mul(a, b), TILE_DIM);
  case BFRT_MATMUL_ACC: return r_add(src[0], r_times(r_mul(a, b), TILE_DIM));
  case BFRT_FILL: return (Range){imm, imm};
  case BFRT_SCALE: case BFRT_MUL_IMM: return r_times(a, imm);
  case BFRT_EXP: return (Range){exp(a.lo), exp(a.hi)};
  case BFRT_RELU: return (Range){fmax(a.lo, 0), fmax(a.hi, 0)};
  case BFRT_TANH: return (Range){tanh(a.lo), tanh(a.hi)};
  case BFRT_SIGMOID: return (Range){1 / (1 + exp(-a.lo)), 1 / (1 + exp(-a.hi))};
  case BFRT_RSQRT: return a.lo > 0 ? (Range){1 / sqrt(a.hi), 1 / sqrt(a.lo)} : r_invalid;
  case BFRT_RECIP: return a.lo > 0 || a.hi < 0 ? (Range){1 / a.hi, 1 / a.lo} : r_invalid;
  case BFRT_SQRT: return a.lo >= 0 ? (Range){sqrt(a.lo), sqrt(a.hi)} : r_invalid;
  case BFRT_ADD: case BFRT_ADD_ROW: case BFRT_ADD_COL: return r_add(a, b);
  case BFRT_SUB: case BFRT_SUB_ROW: case BFRT_SUB_COL: return r_sub(a, b);
  case BFRT_MUL: case BFRT_MUL_ROW: case BFRT_MUL_COL: return r_mul(a, b);
  case BFRT_MAX: return r_max(a, b);
  case BFRT_ADD_IMM: return r_add(a, (Range){imm, imm});
  case BFRT_SUB_IMM: return r_sub(a, (Range){imm, imm});
  case BFRT_MAX_IMM: return r_max(a, (Range){imm, imm});
  case BFRT_ROWSUM: return r_times(a, TILE_DIM);
  case BFRT_GELU: case BFRT_SILU: return r_gated(a);
  case BFRT_SQUARE: return r_square(a);
  case BFRT_ABS: return r_abs(a);
  case BFRT_ROWSUM_SQUARE: return r_times(r_square(a), TILE_DIM);
  case BFRT_ROWSUM_EXP: return r_times((Range){exp(a.lo), exp(a.hi)}, TILE_DIM);
  default: return r_invalid; /* an op without a rule here is never printed (gen_rules_cover_every_op) */
  }
}

static Range class_value(ValueClass c) { return class_range[c]; }

typedef struct GenTensor {
  const char *name;
  const char *io;
  Family family;
  bool readable, writable;
} GenTensor;

/* Y, the out tensor, is one tile that the kernel's last instruction
 * stores whole (every element of an out tensor must be stored); the
 * others are as large as any coordinate reaches. */
static const GenTensor gen_tensors[] = {
    {"X", "in", FAM_SQUARE, true, false},
    {"Y", "out", FAM_SQUARE, false, true},
    {"Z", "inout", FAM_SQUARE, true, true},
    {"V", "inout", FAM_ROW, true, true},
    {"W", "inout", FAM_COL, true, true},
};
#define NTENSORS ((int)(sizeof gen_tensors / sizeof gen_tensors[0]))
enum { TENSOR_X = 0, TENSOR_Y = 1 };

static const char *const param_names[MAX_PARAMS] = {"N", "M", "K"};
static const char *const immediates[] = {"0.5", "-2", "1e-3", "0.25", "1.5", "-0.75", "3"};
#define NIMMEDIATES ((int)(sizeof immediates / sizeof immediates[0]))

/* Operands an instruction may take: tiles by family and number, the hbm
 * tensor of a load or store, the immediate. */
typedef struct Pick {
  signed char fam[3], tile[3], tensor, imm;
} Pick;

typedef struct Gen {
  Rng rng;
  Rng types; /* element types, STREAM_TYPES */
  Rng views; /* views and element slices, STREAM_VIEWS */
  bool viewing; /* this kernel draws views and slices */
  bool big[NFAMILIES][MAX_TILES]; /* declared twice as long (rows; columns for FAM_COL), viewed in the body */
  bool viewed_part; /* the tile operand just printed is a view of part of its tile */
  bool ragged; /* the load or store being printed is ragged: */
  char ragged_lo[48], ragged_e[64]; /* its slice's lo and E, which its tile's view names */
  FILE *out;
  const Target *target;
  int nparams;
  int ntiles[NFAMILIES];
  int slots[NFAMILIES][MAX_TILES];
  ValueClass tile_class[NFAMILIES][MAX_TILES];
  ValueClass tensor_class[NTENSORS];
  int deck[BFRT_NOPS]; /* ops in dealing order */
  bool psum[NFAMILIES][MAX_TILES]; /* the tile is in psum */
  int accumulator; /* the f32 psum square tile matmul writes when the target says so (matmul_psum_f32), or -1 */
  Pick *picks[BFRT_NOPS][2]; /* every operand choice of each op whose values stay in class, [psum_ok] */
  int npicks[BFRT_NOPS][2];
  int dealt;
  int nloops;                  /* loops printed so far: names v0, v1, ... */
  int depth;                   /* enclosing loops */
  int scope[MAX_LOOP_DEPTH];   /* their numbers */
  int if_depth;                /* enclosing conditionals */
  bool ints;                   /* the kernel has device integers C */
} Gen;

/* The parameter set of seed's kernel; returns how many parameters it has.
 * The first is at least 2, so the loops bounded by it iterate and triangular
 * loops see more than one shape; the others may be 0 or 1. */
static int choose_params(uint64_t seed, int64_t values[MAX_PARAMS]) {
  Rng rng = rng_stream(seed, STREAM_PARAMS);
  int n = 1 + rng_below(&rng, MAX_PARAMS);
  values[0] = 2 + rng_below(&rng, MAX_PARAM_VALUE - 1);
  for (int i = 1; i < n; i++) values[i] = rng_below(&rng, MAX_PARAM_VALUE + 1);
  return n;
}

void gen_params(uint64_t seed, FILE *out) {
  int64_t values[MAX_PARAMS];
  int n = choose_params(seed, values);
  for (int i = 0; i < n; i++) fprintf(out, "%s%s=%" PRId64, i ? " " : "", param_names[i], values[i]);
  fputc('\n', out);
}

static void indent(Gen *g, int level) {
  for (int i = 0; i < level; i++) fputs("  ", g->out);
}

static const char *random_param(Gen *g) { return param_names[rng_below(&g->rng, g->nparams)]; }

static int random_scope_var(Gen *g) { return g->scope[rng_below(&g->rng, g->depth)]; }

/* ---- Declarations. */

/* The extent, in tiles, of every tensor: more than any coordinate can reach. */
static void print_extent(Gen *g) {
  fputc('(', g->out);
  for (int i = 0; i < g->nparams; i++) fprintf(g->out, "%s + ", param_names[i]);
  fputs("2)", g->out);
}

/* A float type from the types stream: f32 13 times in 20, bf16 3, fp16 2,
 * fp8e4 and fp8e5 once each. */
static const char *random_type(Gen *g) {
  int roll = rng_below(&g->types, 20);
  return roll < 13 ? "f32" : roll < 16 ? "bf16" : roll < 18 ? "fp16" : roll < 19 ? "fp8e4" : "fp8e5";
}

/* A class type may hold, drawn from the kernel stream among allowed. */
static ValueClass random_class(Gen *g, const char *type, const bool *allowed) {
  ValueClass pick[NCLASSES];
  int n = 0;
  for (int c = 0; c < NCLASSES; c++)
    if (allowed[c] && type_holds(type, (ValueClass)c)) pick[n++] = (ValueClass)c;
  return pick[rng_below(&g->rng, n)];
}

/* X holds the inputs only (unit); the inout tensors any class that holds
 * them (unit, big, acc); Y what tile 0 (unit) is stored to it, or more. */
static void print_tensor(Gen *g, int i) {
  static const bool inout[NCLASSES] = {true, false, true, true}, out[NCLASSES] = {true, false, true, false};
  const GenTensor *t = &gen_tensors[i];
  const char *type = random_type(g);
  g->tensor_class[i] = i == TENSOR_X ? VAL_UNIT : random_class(g, type, i == TENSOR_Y ? out : inout);
  fprintf(g->out, "  hbm %s %s: %s[", t->io, t->name, type);
  if (i == TENSOR_Y) {
    fprintf(g->out, "%d, %d];\n", TILE_DIM, TILE_DIM);
    return;
  }
  print_extent(g);
  if (t->family != FAM_COL) fprintf(g->out, " * %d", TILE_DIM);
  fputs(", ", g->out);
  print_extent(g);
  if (t->family != FAM_ROW) fprintf(g->out, " * %d", TILE_DIM);
  fputs("];\n", g->out);
}

static char tile_prefix(Family f) { return "trc"[f]; }

/* On a target where matmul writes f32 psum (matmul_psum_f32), square tile
 * 1 is that accumulator: in psum, f32, of class acc, and the destination
 * of every matmul and matmul_acc; the other ops use it like any tile their
 * engine reaches. Tile 0 of each family is sbuf and unit, the tile every
 * engine reaches and Y takes; the square family also has a pos and a big
 * tile and the row family a big one, so that every op has operands whose
 * values stay in class (rsqrt reads pos, rowsum writes big). */
static void declare_tiles(Gen *g) {
  static const int max_tiles[NFAMILIES] = {5, 3, 2};
  static const int rows[NFAMILIES] = {TILE_DIM, TILE_DIM, 1}, cols[NFAMILIES] = {TILE_DIM, 1, TILE_DIM};
  static const bool any[NCLASSES] = {true, true, true, true};
  int64_t psum_slots = 0; /* one PSUM bank each */
  bool accumulate = g->target->limits.matmul_psum_f32;
  g->accumulator = accumulate ? 1 : -1;
  for (int f = 0; f < NFAMILIES; f++) {
    ValueClass forced[4];
    int nforced = 0;
    forced[nforced++] = VAL_UNIT;
    if (f == FAM_SQUARE && accumulate) forced[nforced++] = VAL_ACC;
    if (f == FAM_SQUARE) forced[nforced++] = VAL_POS;
    if (f != FAM_COL) forced[nforced++] = VAL_BIG;
    g->ntiles[f] = 1 + rng_below(&g->rng, max_tiles[f]);
    if (g->ntiles[f] < nforced) g->ntiles[f] = nforced;
    for (int i = 0; i < g->ntiles[f]; i++) {
      int slots = 1 + rng_below(&g->rng, 3);
      bool accumulator = f == FAM_SQUARE && i == g->accumulator;
      bool psum = accumulator || (f == FAM_SQUARE && rng_percent(&g->rng, 20) && i > 0 &&
                                  (!g->target->limits.psum_banks || psum_slots + slots <= g->target->limits.psum_banks));
      g->psum[f][i] = psum;
      if (psum) psum_slots += slots;
      g->slots[f][i] = slots;
      const char *type = accumulator ? "f32" : random_type(g);
      g->tile_class[f][i] = i < nforced ? forced[i] : random_class(g, type, any);
      bool big = g->big[f][i] = g->viewing && rng_percent(&g->views, 35);
      fprintf(g->out, "  %s %c%d", psum ? "psum" : "sbuf", tile_prefix(f), i);
      if (slots > 1) fprintf(g->out, "[%d]", slots);
      fprintf(g->out, ": %s[%d, %d];\n", type, rows[f] * (big && f != FAM_COL ? 2 : 1),
              cols[f] * (big && f == FAM_COL ? 2 : 1));
    }
  }
}

/* ---- Operands. */

/* slot ::= const | v % S | (v + c) % S | (v - 1) % S | (u + v) % S   (S >= 2) */
static void print_slot(Gen *g, int slots) {
  int form = g->depth ? rng_below(&g->rng, 5) : 0;
  if (form == 4 && g->depth < 2) form = 1;
  switch (form) {
  case 0: fprintf(g->out, "%d", rng_below(&g->rng, slots)); break;
  case 1: fprintf(g->out, "v%d %% %d", random_scope_var(g), slots); break;
  case 2: fprintf(g->out, "(v%d + %d) %% %d", random_scope_var(g), 1 + rng_below(&g->rng, slots - 1), slots); break;
  case 3: fprintf(g->out, "(v%d - 1) %% %d", random_scope_var(g), slots); break;
  default: fprintf(g->out, "(v%d + v%d) %% %d", g->scope[0], g->scope[g->depth - 1], slots); break;
  }
}

/* Whether engine may access psum on the target (its [limits]). */
static bool psum_allowed(const Gen *g, int engine) {
  unsigned kinds = g->target->limits.psum_kinds;
  return !kinds || (kinds & (1u << g->target->engines[engine].kind));
}

/* A range of D along a big tile's doubled dimension: its first or second
 * half, the middle (overlapping both), or the half a loop variable picks
 * (D * (v % 2), disjoint across iterations of different parity). */
static void print_view_range(Gen *g) {
  int form = rng_below(&g->views, g->depth ? 4 : 3);
  if (form == 0) fprintf(g->out, "0:%d", TILE_DIM);
  else if (form == 1) fprintf(g->out, "%d:%d", TILE_DIM, 2 * TILE_DIM);
  else if (form == 2) fprintf(g->out, "%d:%d", TILE_DIM / 2, TILE_DIM / 2 + TILE_DIM);
  else {
    int v = g->scope[rng_below(&g->views, g->depth)];
    fprintf(g->out, "%d * (v%d %% 2) : %d * (v%d %% 2) + %d", TILE_DIM, v, TILE_DIM, v, TILE_DIM);
  }
}

/* The dimension a family's tiles are long in: columns for FAM_COL, rows otherwise. */
static int long_dim(Family f) { return f == FAM_COL; }

/* Tile i of family f, its name and slot. */
static void print_tile_head(Gen *g, Family f, int i) {
  fprintf(g->out, "%c%d", tile_prefix(f), i);
  if (g->slots[f][i] == 1) return;
  fputc('[', g->out);
  print_slot(g, g->slots[f][i]);
  fputc(']', g->out);
}

/* Its view: a big tile's of the family's shape; another's, now and then,
 * the view of all of it, [:, :]; in a ragged load or store (g->ragged),
 * 0 : min(D, E - lo) with the lo and E of its slice (print_slice_dim). */
static void print_tile_view(Gen *g, Family f, int i) {
  if (g->ragged) {
    const char *open = long_dim(f) ? "[:, " : "[", *close = long_dim(f) ? "]" : ", :]";
    fprintf(g->out, "%s0 : min(%d, %s - %s)%s", open, TILE_DIM, g->ragged_e, g->ragged_lo, close);
  } else if (g->big[f][i]) {
    fputs(long_dim(f) ? "[:, " : "[", g->out);
    print_view_range(g);
    fputs(long_dim(f) ? "]" : ", :]", g->out);
  } else if (g->viewing && rng_percent(&g->views, 10)) {
    fputs("[:, :]", g->out);
  }
}

static void print_tile_number(Gen *g, Family f, int i) {
  print_tile_head(g, f, i);
  print_tile_view(g, f, i);
}

/* coordinate ::= 0 | 1 | PARAM | v | v + 1, as text */
static const char *coordinate_text(Gen *g, char buf[32]) {
  int form = rng_below(&g->rng, g->depth ? 5 : 3);
  switch (form) {
  case 0: return "0";
  case 1: return "1";
  case 2: return random_param(g);
  case 3: snprintf(buf, 32, "v%d", random_scope_var(g)); return buf;
  default: snprintf(buf, 32, "v%d + 1", random_scope_var(g)); return buf;
  }
}

static void print_coordinate(Gen *g) {
  char buf[32];
  fputs(coordinate_text(g, buf), g->out);
}

/* Operand families of a tile-only op, destination first; a same-shape op
 * takes family any for all. */
static int tile_families(const OpInfo *op, Family any, Family fam[3]) {
  static const Family fixed[][3] = {
      [SHAPE_MATMUL] = {FAM_SQUARE, FAM_SQUARE, FAM_SQUARE},
      [SHAPE_TRANSPOSE] = {FAM_SQUARE, FAM_SQUARE},
      [SHAPE_ROWREDUCE] = {FAM_ROW, FAM_SQUARE},
      [SHAPE_ROWBCAST] = {FAM_SQUARE, FAM_SQUARE, FAM_ROW},
      [SHAPE_COLBCAST] = {FAM_SQUARE, FAM_SQUARE, FAM_COL},
  };
  int n = (int)strspn(op->operands, "T"); /* the tile operands, before any immediate */
  bool same = op->shape == SHAPE_SAME || op->shape == SHAPE_NONE;
  for (int i = 0; i < n; i++) fam[i] = same ? any : fixed[op->shape][i];
  return n;
}

/* Whether tile i of family f may be operand k of op on an engine that
 * reaches psum or not: matmul writes the accumulator and reads sbuf where
 * the target says so. */
static bool tile_usable(const Gen *g, const OpInfo *op, int k, Family f, int i, bool psum_ok) {
  bool matmul = op->shape == SHAPE_MATMUL; /* matmul and matmul_acc */
  if (matmul && k == 0 && g->accumulator >= 0) return f == FAM_SQUARE && i == g->accumulator;
  if (g->psum[f][i] && (!psum_ok || (matmul && k > 0 && g->target->limits.matmul_sbuf_inputs))) return false;
  return true;
}

typedef struct Picks {
  Pick *items;
  int n, cap;
} Picks;

static void add_pick(Picks *ps, Pick p) {
  if (ps->n == ps->cap) {
    ps->cap = ps->cap ? 2 * ps->cap : 16;
    ps->items = realloc(ps->items, (size_t)ps->cap * sizeof *ps->items);
    if (!ps->items) bug("gen: out of memory");
  }
  ps->items[ps->n++] = p;
}

/* Loads and stores: a tensor and a tile of its family, the values of the
 * one in the class of the other. */
static void hbm_picks(const Gen *g, const OpInfo *op, bool psum_ok, Picks *ps) {
  bool store = op->sig == SIG_H_T;
  for (int t = 0; t < NTENSORS; t++) {
    const GenTensor *gt = &gen_tensors[t];
    if (!(store ? gt->writable : gt->readable)) continue;
    Family f = gt->family;
    for (int i = 0; i < g->ntiles[f]; i++) {
      if (!tile_usable(g, op, store ? 1 : 0, f, i, psum_ok)) continue;
      ValueClass from = store ? g->tile_class[f][i] : g->tensor_class[t];
      ValueClass to = store ? g->tensor_class[t] : g->tile_class[f][i];
      if (range_in(class_value(from), to))
        add_pick(ps, (Pick){{(signed char)f, -1, -1}, {(signed char)i, -1, -1}, (signed char)t, -1});
    }
  }
}

/* Tile ops: every family, tile tuple and immediate whose image is in the
 * destination's class. */
static void tile_picks(const Gen *g, int opid, bool psum_ok, Picks *ps) {
  const OpInfo *op = op_info(opid);
  bool has_imm = op->sig == SIG_T_F || op->sig == SIG_T_TF;
  for (int any = 0; any < NFAMILIES; any++) {
    Family fam[3];
    int n = tile_families(op, (Family)any, fam);
    bool same = op->shape == SHAPE_SAME || op->shape == SHAPE_NONE;
    if (!same && any > 0) break; /* fixed families: once */
    int t[3] = {0, 0, 0};
    for (t[0] = 0; t[0] < g->ntiles[fam[0]]; t[0]++)
      for (t[1] = 0; t[1] < (n > 1 ? g->ntiles[fam[1]] : 1); t[1]++)
        for (t[2] = 0; t[2] < (n > 2 ? g->ntiles[fam[2]] : 1); t[2]++) {
          bool usable = true;
          Range src[3] = {{0, 0}, {0, 0}, {0, 0}};
          for (int k = 0; k < n; k++) {
            usable &= tile_usable(g, op, k, fam[k], t[k], psum_ok);
            src[k] = class_value(g->tile_class[fam[k]][t[k]]);
          }
          if (!usable) continue;
          for (int imm = 0; imm < (has_imm ? NIMMEDIATES : 1); imm++) {
            Range image = op_image(opid, src, has_imm ? strtod(immediates[imm], NULL) : 0);
            if (!range_in(image, g->tile_class[fam[0]][t[0]])) continue;
            Pick p = {{-1, -1, -1}, {-1, -1, -1}, -1, (signed char)(has_imm ? imm : -1)};
            for (int k = 0; k < n; k++) p.fam[k] = (signed char)fam[k], p.tile[k] = (signed char)t[k];
            add_pick(ps, p);
          }
        }
  }
}

/* The nki.isa instructions (ops.def's second part, from nc_matmul on) are
 * not drawn yet: their operands' value classes are still to be written on
 * this generator (they were drawn by the one before it). */
bool gen_skips(int op) { return op >= BFRT_NC_MATMUL; }

/* Every op's choices, for engines that reach psum and those that do not:
 * the kernel's classes are fixed, so they are computed once. */
static void compute_picks(Gen *g) {
  for (int op = 0; op < BFRT_NOPS; op++)
    for (int psum_ok = 0; psum_ok < 2; psum_ok++) {
      Picks ps = {0};
      Signature sig = op_info(op)->sig;
      if (gen_skips(op)) { /* no picks: never drawn */
      } else if (sig == SIG_T_H || sig == SIG_H_T) hbm_picks(g, op_info(op), psum_ok, &ps);
      else tile_picks(g, op, psum_ok, &ps);
      g->picks[op][psum_ok] = ps.items;
      g->npicks[op][psum_ok] = ps.n;
    }
}

static void free_picks(Gen *g) {
  for (int op = 0; op < BFRT_NOPS; op++)
    for (int psum_ok = 0; psum_ok < 2; psum_ok++) free(g->picks[op][psum_ok]);
}

/* One dimension of an element slice, from the coordinate c (drawn from
 * the kernel stream as print_coordinate draws it): of D elements (wide),
 * the tile c in elements, D c : D c + D, or now and then the rows D/2 ..
 * D/2 + D - 1, which straddle tiles 0 and 1 (every tensor but Y has at
 * least two tiles along each dimension); of one element, c : c + 1. With
 * ragged, D c : min(D c + D, E) for E = D c + 1 + P % D, its lo and E kept
 * for the tile's view: an extent of 1 .. D that the parameter P decides at
 * run time, never 0 (see draw_ragged). */
static void print_slice_dim(Gen *g, bool wide, bool ragged, bool straddle_ok) {
  char buf[32];
  const char *c = coordinate_text(g, buf);
  if (ragged) {
    snprintf(g->ragged_lo, sizeof g->ragged_lo, "%d * (%s)", TILE_DIM, c);
    snprintf(g->ragged_e, sizeof g->ragged_e, "%s + 1 + %s %% %d", g->ragged_lo,
             param_names[rng_below(&g->views, g->nparams)], TILE_DIM);
    fprintf(g->out, "%s : min(%s + %d, %s)", g->ragged_lo, g->ragged_lo, TILE_DIM, g->ragged_e);
  } else if (wide && straddle_ok && rng_percent(&g->views, 25)) {
    fprintf(g->out, "%d:%d", TILE_DIM / 2, TILE_DIM / 2 + TILE_DIM);
  } else if (wide) {
    fprintf(g->out, "%d * (%s) : %d * (%s) + %d", TILE_DIM, c, TILE_DIM, c, TILE_DIM);
  } else {
    fprintf(g->out, "%s : %s + 1", c, c);
  }
}

/* The hbm operand of tensor t: Y (one tile) whole, as Y[0, 0] or the
 * slice 0:D, 0:D; another tensor's tile of two coordinates, or an element
 * slice of the shape of a view of a family's tile (the only partner a view
 * of part of a tile may have, sema), ragged along the long dimension when
 * g->ragged. The coordinates come from the kernel stream either way. */
static void print_hbm(Gen *g, int t) {
  Family f = gen_tensors[t].family;
  fprintf(g->out, "%s[", gen_tensors[t].name);
  if (t == TENSOR_Y) { /* Y is one tile */
    if (g->viewed_part || (g->viewing && rng_percent(&g->views, 40)))
      fprintf(g->out, "0:%d, 0:%d]", TILE_DIM, TILE_DIM);
    else fputs("0, 0]", g->out);
    return;
  }
  if (g->viewed_part || (g->viewing && rng_percent(&g->views, 40))) {
    print_slice_dim(g, f != FAM_COL, g->ragged && !long_dim(f), true);
    fputs(", ", g->out);
    print_slice_dim(g, f != FAM_ROW, g->ragged && long_dim(f), true);
  } else {
    print_coordinate(g);
    fputs(", ", g->out);
    print_coordinate(g);
  }
  fputc(']', g->out);
}

/* Whether this load is ragged: now and then, in a viewing kernel, a load
 * of X into a tile not declared big (whose other uses are all of it). The
 * transform tracks a ragged region's tensor as a whole and its tile over
 * all of the clipped dimension (transform/barrier_free.c), so ragged
 * accesses of a tensor that is also written would make waits later than
 * exact, which the campaign counts as a failure (harness/check.c); X is
 * only read, and reads never wait for reads. The tile's other uses are of
 * all of it, so its tracking over the whole clipped dimension is exact as
 * long as the clipped extent is never 0: a load that wrote nothing would
 * still wait (E, print_slice_dim). */
static bool draw_ragged(Gen *g, const OpInfo *op, const Pick *p) {
  if (!g->viewing || op->sig != SIG_T_H || p->tensor != TENSOR_X || g->big[p->fam[0]][p->tile[0]] ||
      !rng_percent(&g->views, 30))
    return false;
  return true;
}

/* A load or store. The kernel stream's draws keep their order (a load's
 * tile slot, then the hbm coordinates; a store's the other way round), as
 * without views; a load's tile view is printed after its slice, since a
 * ragged view names the slice's lo. Whether the tile is viewed in part is
 * known before either, from big and ragged. */
static void print_move(Gen *g, const OpInfo *op, const Pick *p) {
  Family f = p->fam[0];
  int i = p->tile[0];
  g->ragged = draw_ragged(g, op, p);
  g->viewed_part = g->big[f][i] || g->ragged;
  if (op->sig == SIG_H_T) {
    print_hbm(g, p->tensor);
    fputs(", ", g->out);
    print_tile_number(g, f, i);
  } else {
    char *text = NULL;
    size_t len = 0;
    FILE *out = g->out;
    print_tile_head(g, f, i);
    if (!(g->out = open_memstream(&text, &len))) bug("gen: out of memory");
    print_hbm(g, p->tensor);
    fclose(g->out);
    g->out = out;
    print_tile_view(g, f, i);
    fprintf(g->out, ", %s", text);
    free(text);
  }
  g->ragged = g->viewed_part = false;
}

static void print_operands(Gen *g, const OpInfo *op, const Pick *p) {
  if (op->sig == SIG_H_T || op->sig == SIG_T_H) {
    print_move(g, op, p);
    return;
  }
  for (int k = 0; k < 3 && p->tile[k] >= 0; k++) {
    if (k) fputs(", ", g->out);
    print_tile_number(g, p->fam[k], p->tile[k]);
  }
  if (p->imm >= 0) fprintf(g->out, ", %s", immediates[p->imm]);
}

/* ---- Instructions. */

static bool engine_runs(const Gen *g, int engine, int op) {
  return op_info(op)->engines & (1u << g->target->engines[engine].kind);
}

/* How many ways op may run on engine with its values in class. */
static int npicks_on(const Gen *g, int op, int engine) {
  return engine_runs(g, engine, op) ? g->npicks[op][psum_allowed(g, engine)] : 0;
}

/* An engine that runs op with some operands in class, or -1. */
static int random_engine_for(Gen *g, int op) {
  int capable[BFRT_MAX_ENGINES], n = 0;
  for (int e = 0; e < g->target->nengines; e++)
    if (npicks_on(g, op, e)) capable[n++] = e;
  return n ? capable[rng_below(&g->rng, n)] : -1;
}

/* An op engine runs with some operands in class. */
static int random_op_for(Gen *g, int engine) {
  int capable[BFRT_NOPS], n = 0;
  for (int op = 0; op < BFRT_NOPS; op++)
    if (npicks_on(g, op, engine)) capable[n++] = op;
  if (!n) bug("gen: engine %s runs no op whose values stay in class", g->target->engines[engine].name);
  return capable[rng_below(&g->rng, n)];
}

static void shuffle_deck(Gen *g) {
  for (int i = BFRT_NOPS - 1; i > 0; i--) {
    int j = rng_below(&g->rng, i + 1);
    int t = g->deck[i];
    g->deck[i] = g->deck[j], g->deck[j] = t;
  }
}

/* The next op from the deck; loads and stores come extra often, since they
 * alone make the hbm conflicts. */
static int deal_op(Gen *g) {
  if (rng_percent(&g->rng, 15)) return rng_percent(&g->rng, 50) ? BFRT_LOAD : BFRT_STORE;
  if (g->dealt == BFRT_NOPS) {
    g->dealt = 0;
    shuffle_deck(g);
  }
  return g->deck[g->dealt++];
}

/* How the kernel names engine: a DMA queue is half the time `dma`, any
 * queue (assign_queues picks it), where the target allows that spelling. */
static const char *engine_word(Gen *g, int engine) {
  bool queue = g->target->engines[engine].kind == BFRT_KIND_DMA && target_any_queue(g->target, "dma");
  return queue && rng_percent(&g->rng, 50) ? "dma" : g->target->engines[engine].name;
}

/* instr ::= [ENGINE ':'] op operand {',' operand} ';'   (engine given by a block when block_engine >= 0)
 * The deck's op is skipped when no engine runs it with operands in class
 * (compute_picks); test_gen checks that every op still occurs. */
static void gen_instr(Gen *g, int level, int block_engine) {
  int op, engine = block_engine;
  if (block_engine >= 0) {
    op = random_op_for(g, block_engine);
  } else {
    int tries = 0;
    do {
      if (++tries > 4 * BFRT_NOPS) bug("gen: no op of the deck runs with its values in class");
      op = deal_op(g);
      engine = random_engine_for(g, op);
    } while (engine < 0);
  }
  const Pick *pick = &g->picks[op][psum_allowed(g, engine)][rng_below(&g->rng, npicks_on(g, op, engine))];
  indent(g, level);
  if (block_engine < 0) fprintf(g->out, "%s: ", engine_word(g, engine));
  fprintf(g->out, "%s ", op_info(op)->name);
  print_operands(g, op_info(op), pick);
  fputs(";\n", g->out);
}

/* ---- Statements. */

static void gen_body(Gen *g, int level, int block_engine, long budget);

/* bounds ::= 0 .. P | 1 .. P | 0 .. P - 4 | 0 .. 1 | 0 .. u + 1 | 0 .. u | u .. P | u .. u + 1
 * Every form keeps the variable below max(1, largest parameter). Weighted
 * so that most loops iterate: zero-trip forms are the rarer ones. */
static void print_bounds(Gen *g) {
  static const int outer_forms[] = {0, 0, 0, 1, 2, 3};
  static const int inner_forms[] = {0, 0, 1, 2, 3, 4, 4, 4, 5, 6, 6, 7};
  int form = g->depth ? inner_forms[rng_below(&g->rng, sizeof inner_forms / sizeof inner_forms[0])]
                      : outer_forms[rng_below(&g->rng, sizeof outer_forms / sizeof outer_forms[0])];
  const char *p = random_param(g);
  int u = g->depth ? random_scope_var(g) : 0;
  if (g->ints && rng_percent(&g->rng, 30)) { /* a device-read bound */
    if (g->depth) fprintf(g->out, "0 .. C[v%d, 0] %% %s", u, param_names[0]);
    else fprintf(g->out, "0 .. C[%d, 0] %% %s", rng_below(&g->rng, 8), param_names[0]);
    return;
  }
  switch (form) {
  case 0: fprintf(g->out, "0 .. %s", p); break;
  case 1: fprintf(g->out, "1 .. %s", p); break;
  case 2: fprintf(g->out, "0 .. %s - %d", p, MAX_PARAM_VALUE); break; /* zero-trip */
  case 3: fputs("0 .. 1", g->out); break;                             /* single-trip */
  case 4: fprintf(g->out, "0 .. v%d + 1", u); break;                  /* triangular */
  case 5: fprintf(g->out, "0 .. v%d", u); break;
  case 6: fprintf(g->out, "v%d .. %s", u, p); break;
  default: fprintf(g->out, "v%d .. v%d + 1", u, u); break;
  }
}

/* for ::= 'for' NAME 'in' expr '..' expr '{' body '}' */
static void gen_loop(Gen *g, int level, int block_engine, long budget) {
  int var = g->nloops++;
  indent(g, level);
  fprintf(g->out, "for v%d in ", var);
  print_bounds(g);
  fputs(" {\n", g->out);
  g->scope[g->depth++] = var;
  gen_body(g, level + 1, block_engine, budget);
  g->depth--;
  indent(g, level);
  fputs("}\n", g->out);
}

/* block ::= ENGINE '{' body '}' */
static void gen_block(Gen *g, int level, long budget) {
  int engine = rng_below(&g->rng, g->target->nengines);
  indent(g, level);
  fprintf(g->out, "%s {\n", engine_word(g, engine));
  gen_body(g, level + 1, engine, budget);
  indent(g, level);
  fputs("}\n", g->out);
}

/* atom ::= v == c | v == u | v % 2 == 0 | v < P | v >= c | P == c | P > c
 *        | v % 3 == c | v == P - 1 | v > c | v - u == 1 | v % 4 < 2 | v + 1 < P
 *        | 2 * v < P
 * (with no loop around: the parameter forms only) */
static void print_atom(Gen *g) {
  int form = g->depth ? rng_below(&g->rng, 14) : 5 + rng_below(&g->rng, 2);
  int v = g->depth ? random_scope_var(g) : 0, c = rng_below(&g->rng, 3);
  if (g->ints && rng_percent(&g->rng, 25)) { /* a device integer */
    if (g->depth) fprintf(g->out, "C[v%d, 1] > %d", v, c);
    else fprintf(g->out, "C[%d, 1] > %d", rng_below(&g->rng, 8), c);
    return;
  }
  switch (form) {
  case 0: fprintf(g->out, "v%d == %d", v, c); break;
  case 1: fprintf(g->out, "v%d == v%d", v, random_scope_var(g)); break;
  case 2: fprintf(g->out, "v%d %% 2 == 0", v); break;
  case 3: fprintf(g->out, "v%d < %s", v, random_param(g)); break;
  case 4: fprintf(g->out, "v%d >= %d", v, c); break;
  case 5: fprintf(g->out, "%s == %d", random_param(g), c); break;
  case 6: fprintf(g->out, "%s > %d", random_param(g), c); break;
  case 7: fprintf(g->out, "v%d %% 3 == %d", v, c); break;
  case 8: fprintf(g->out, "v%d == %s - 1", v, random_param(g)); break;
  case 9: fprintf(g->out, "v%d > %d", v, c); break;
  case 10: fprintf(g->out, "v%d - v%d == 1", v, random_scope_var(g)); break;
  case 11: fprintf(g->out, "v%d %% 4 < 2", v); break;
  case 12: fprintf(g->out, "v%d + 1 < %s", v, random_param(g)); break;
  default: fprintf(g->out, "2 * v%d < %s", v, random_param(g)); break;
  }
}

/* cond ::= atom | atom '&&' atom | atom '||' atom | '!(' atom ')' */
static void print_cond(Gen *g) {
  int form = rng_below(&g->rng, 6);
  if (form == 3) fputs("!(", g->out);
  print_atom(g);
  if (form == 1 || form == 2) {
    fputs(form == 1 ? " && " : " || ", g->out);
    print_atom(g);
  }
  if (form == 3) fputc(')', g->out);
}

/* if ::= 'if' '(' cond ')' '{' body '}' ['else' ('{' body '}' | if)]
 * The budget is split between the branches: then gets at least one. */
static void gen_if(Gen *g, int level, int block_engine, long budget, bool chained) {
  long then = budget > 1 ? 1 + rng_below(&g->rng, (int)budget) : budget;
  if (!chained) indent(g, level);
  fputs("if (", g->out);
  print_cond(g);
  fputs(") {\n", g->out);
  g->if_depth++;
  gen_body(g, level + 1, block_engine, then);
  indent(g, level);
  fputc('}', g->out);
  if (budget > then && rng_percent(&g->rng, 30)) {
    fputs(" else ", g->out);
    gen_if(g, level, block_engine, budget - then, true);
  } else if (budget > then) {
    fputs(" else {\n", g->out);
    gen_body(g, level + 1, block_engine, budget - then);
    indent(g, level);
    fputs("}\n", g->out);
  } else {
    fputc('\n', g->out);
  }
  g->if_depth--;
}

/* A nested statement's share of the budget: small, so that nests of three
 * loops with parameters up to 4 stay at a few thousand dynamic instructions. */
static long nested_budget(Gen *g, long budget) {
  long share = 1 + rng_below(&g->rng, 6);
  return share < budget ? share : budget;
}

/* body ::= { for | if | block | instr }, about budget instructions in all. */
static void gen_body(Gen *g, int level, int block_engine, long budget) {
  while (budget > 0) {
    long used = 1;
    if (g->depth < MAX_LOOP_DEPTH && rng_percent(&g->rng, 30)) {
      used = nested_budget(g, budget);
      gen_loop(g, level, block_engine, used);
    } else if (g->if_depth < MAX_IF_DEPTH && rng_percent(&g->rng, 15)) {
      used = nested_budget(g, budget);
      gen_if(g, level, block_engine, used, false);
    } else if (block_engine < 0 && rng_percent(&g->rng, 20)) {
      used = nested_budget(g, budget);
      gen_block(g, level, used);
    } else {
      gen_instr(g, level, block_engine);
    }
    budget -= used;
  }
}

/* An engine that runs op, reaching psum if psum. */
static int engine_for(Gen *g, int op, bool psum) {
  int capable[BFRT_MAX_ENGINES], n = 0;
  for (int e = 0; e < g->target->nengines; e++)
    if (engine_runs(g, e, op) && (!psum || psum_allowed(g, e))) capable[n++] = e;
  if (!n) bug("gen: no engine of target %s runs %s%s", g->target->name, op_info(op)->name, psum ? " on psum" : "");
  return capable[rng_below(&g->rng, n)];
}

/* A big tile's whole shape in tensor t, from the kernel stream's two
 * coordinates (0, 1 or a parameter at the top level): the tiles c and c + 1
 * along the long dimension, D c : D c + 2 D, below the extent D (sum of
 * parameters + 2). */
static void print_whole_slice(Gen *g, int t, Family f) {
  char rbuf[32], cbuf[32];
  const char *r = coordinate_text(g, rbuf), *c = coordinate_text(g, cbuf);
  int rows = f == FAM_COL ? 1 : 2 * TILE_DIM, cols = f == FAM_COL ? 2 * TILE_DIM : f == FAM_ROW ? 1 : TILE_DIM;
  int rstep = f == FAM_COL ? 1 : TILE_DIM, cstep = f == FAM_ROW ? 1 : TILE_DIM;
  fprintf(g->out, "%s[%d * (%s) : %d * (%s) + %d, %d * (%s) : %d * (%s) + %d]", gen_tensors[t].name, rstep, r, rstep,
          r, rows, cstep, c, cstep, c, cols);
}

/* Before the body, every slot of every tile is written at the top level,
 * so that no instruction on any path reads a tile before something wrote
 * it: by a load of a tensor whose class fits the tile's (the inputs'
 * values), or else by a fill with an immediate of the tile's class. */
static void gen_prologue(Gen *g) {
  for (int f = 0; f < NFAMILIES; f++)
    for (int i = 0; i < g->ntiles[f]; i++)
      for (int slot = 0; slot < g->slots[f][i]; slot++) {
        ValueClass c = g->tile_class[f][i];
        int from[NTENSORS], nfrom = 0, imms[NIMMEDIATES], nimms = 0;
        for (int t = 0; t < NTENSORS; t++)
          if (gen_tensors[t].readable && gen_tensors[t].family == (Family)f &&
              range_in(class_value(g->tensor_class[t]), c))
            from[nfrom++] = t;
        for (int k = 0; k < NIMMEDIATES; k++) {
          double v = strtod(immediates[k], NULL);
          if (range_in((Range){v, v}, c)) imms[nimms++] = k;
        }
        bool load = !g->psum[f][i] && nfrom;
        int engine = engine_for(g, load ? BFRT_LOAD : BFRT_FILL, g->psum[f][i]);
        fprintf(g->out, "  %s: %s %c%d", engine_word(g, engine), load ? "load" : "fill", tile_prefix((Family)f), i);
        if (g->slots[f][i] > 1) fprintf(g->out, "[%d]", slot);
        fputs(", ", g->out);
        if (load && g->big[f][i]) print_whole_slice(g, from[rng_below(&g->rng, nfrom)], (Family)f);
        else if (load) print_hbm(g, from[rng_below(&g->rng, nfrom)]);
        else fputs(immediates[imms[rng_below(&g->rng, nimms)]], g->out);
        fputs(";\n", g->out);
      }
}

void gen_kernel(uint64_t seed, long size, FILE *out) {
  Gen g = {.rng = rng_stream(seed, STREAM_KERNEL), .types = rng_stream(seed, STREAM_TYPES),
           .views = rng_stream(seed, STREAM_VIEWS), .out = out, .target = target_default()};
  int64_t values[MAX_PARAMS];
  g.nparams = choose_params(seed, values);
  g.ints = rng_percent(&g.rng, 40);
  g.viewing = rng_percent(&g.views, 35);
  for (int i = 0; i < BFRT_NOPS; i++) g.deck[i] = i;
  g.dealt = BFRT_NOPS;

  fprintf(out, "// Generated by `bfsync gen --seed %" PRIu64 " --size %ld`.\n// params: ", seed, size);
  gen_params(seed, out);
  fprintf(out, "kernel gen%" PRIu64 "(", seed);
  for (int i = 0; i < g.nparams; i++) fprintf(out, "%s%s: int", i ? ", " : "", param_names[i]);
  fputs(") {\n", out);
  for (int i = 0; i < NTENSORS; i++) print_tensor(&g, i);
  if (g.ints) { /* rows: constants below 8 and loop variables below the extent */
    fputs("  hbm in C: i32[", out);
    print_extent(&g);
    fputs(" + 8, 2];\n", out);
  }
  declare_tiles(&g);
  compute_picks(&g);
  fputc('\n', out);
  gen_prologue(&g);
  gen_body(&g, 1, -1, size);
  /* Y whole, from tile 0 (unit, sbuf): every element of an out tensor is stored */
  fprintf(out, "  %s: store ", engine_word(&g, engine_for(&g, BFRT_STORE, false)));
  g.viewed_part = g.big[FAM_SQUARE][0];
  print_hbm(&g, TENSOR_Y);
  fputs(", ", out);
  print_tile_number(&g, FAM_SQUARE, 0);
  g.viewed_part = false;
  fputs(";\n}\n", out);
  free_picks(&g);
}

char *gen_kernel_text(uint64_t seed, long size) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) bug("gen: out of memory");
  gen_kernel(seed, size, f);
  fclose(f);
  return text;
}

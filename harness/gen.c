/* gen.c: random valid kernels for differential testing (`bfsync gen` and
 * the campaign).
 *
 * The verification campaigns need kernels nobody wrote by hand, and a kernel
 * that check or run rejects tests nothing, so the generator is correct by
 * construction rather than by filtering: every choice is drawn from what the
 * op table (runtime/ops.def) and the target allow, and `bfsync run` accepts
 * every kernel at its parameters (or any others), numerics included:
 *
 *  - Shapes come in five families: square tiles [4, 4], row vectors
 *    [4, 1], column vectors [1, 4], and bn_stats' [4, 6] and bn_aggr's
 *    [4, 2]. Every shape rule has a fixed answer in those terms (matmul,
 *    nc_matmul and the transposes are square, a row reduction goes square
 *    -> row, tensor_reduce any four-row family -> row, a row broadcast
 *    takes square, square, row, a column broadcast square, square,
 *    column; bn_stats a four-row family -> [4, 6], bn_aggr [4, 6] -> [4,
 *    2]; the [P, 1] operands of tensor_scalar, activation's bias and
 *    accumulator and a scan's initial value are rows beside a four-row
 *    family; elementwise ops stay within one family), so operands are
 *    picked per family and always fit.
 *  - The nki.isa ops' other operands are drawn from their vocabularies:
 *    every ALU op (the comparisons included, reduce's four, affine_select's
 *    six), every activation function, negate, permute's divisors of the
 *    columns, floats, and affine patterns (step, offset, channel
 *    multiplier in -2 .. 1) written as literals or as constant expressions
 *    over a kernel constant (`1 * AFF`, `(0 + AFF) - 1`), which is all an
 *    immediate may be (run-time values may not).
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
 *  - Four kernels in five draw tile views and element slices, from a
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
 *    straddle tiles 0 and 1. Some loads and stores of every tensor but Y
 *    are ragged: the slice D c : min(D c + D, E), E = D c + 1 + P % D,
 *    moves to or from the tile view 0 : min(D, E - D c), 1 .. D rows as
 *    the parameter P decides at run time (never 0 rows; the transform's
 *    one conservative fallback: see draw_ragged). The prologue
 *    still writes every tile whole (a big tile through an element slice of
 *    its whole shape), so a view only ever reads or overwrites part of a
 *    tile whose every element was written and is in the tile's class; the
 *    class is a property of every element, so it holds for every view.
 *    (Strided regions are not drawn.)
 *  - Where an op has many choices of immediates for one tuple of tiles
 *    (tensor_scalar's two ops and floats, affine_select), a few of them
 *    are drawn (STREAM_IMMS, imm_picks) rather than every one listed, so
 *    that a kernel's picks stay quick to compute.
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

enum { STREAM_PARAMS = 1, STREAM_KERNEL = 2, STREAM_TYPES = 3, STREAM_VIEWS = 4, STREAM_SPELL = 5, STREAM_IMMS = 6 };

/* Tile shapes: square [D, D], row [D, 1] and column [1, D] vectors, and
 * the two shapes of the batch-norm statistics, bn_stats' [D, 6] and
 * bn_aggr's [D, 2]. */
typedef enum Family { FAM_SQUARE, FAM_ROW, FAM_COL, FAM_STATS, FAM_PAIR, NFAMILIES } Family;

static const int fam_rows[NFAMILIES] = {TILE_DIM, TILE_DIM, 1, TILE_DIM, TILE_DIM};
static const int fam_cols[NFAMILIES] = {TILE_DIM, 1, TILE_DIM, 6, 2};

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
 *        or bf16 accumulator (matmul_acc's destination, which reads itself;
 *        activation_acc's accumulator);
 *   stats (count, mean, M2) triples that bn_aggr may read: in every triple
 *        count >= 1/4 (or 0 with M2 = 0, bn_stats' empty odd half of a
 *        one-column row), M2 <= count (variance at most 1), each value in
 *        [-1, 3]. Only bn_stats of a unit source (whose values in [-1, 1]
 *        have variance at most 1) and ops writing one constant v in
 *        [1/4, 3] (the triple (v, v, v)) write it: an f32 [D, 6] tile.
 * An op on acc values is accepted when its image at M = ACC_M is at most
 * ACC_M + 64: the ops' images are a*M + b with a in {0, 1/4 .. 1} or a >=
 * 1.5 (the immediates and class bounds), so the check accepts exactly
 * a <= 1 and b <= 64, and an acc value grows by at most ACC_M + 64 per
 * instruction executed: below 2^20 * 2^63 < 2^84, far inside f32 and bf16.
 * The bounds 1, 1/4, 4, 64 are representable in every type, so rounding
 * to a narrow type never leaves a class, and 64 is below fp8e4's largest
 * value (448). bn_aggr of stats gives a mean in [-1, 3] and a variance of
 * at most 1 + 4^2 (the triples' own, and their means' spread): big. */
typedef enum ValueClass { VAL_UNIT, VAL_POS, VAL_BIG, VAL_ACC, VAL_STATS, NCLASSES } ValueClass;

typedef struct Range {
  double lo, hi;
} Range;

#define ACC_M 1e6
#define ACC_STEP 64.0

static const Range class_range[NCLASSES] = {{-1, 1}, {0.25, 4}, {-64, 64}, {-ACC_M, ACC_M}, {-1, 3}};

/* Whether values of type may be of class c: acc values only in f32 and
 * bf16, stats only in f32. */
static bool type_holds(const char *type, ValueClass c) {
  if (c == VAL_STATS) return !strcmp(type, "f32");
  return c != VAL_ACC || !strcmp(type, "f32") || !strcmp(type, "bf16");
}

static bool range_in(Range r, ValueClass c) {
  if (!(r.lo <= r.hi) || !isfinite(r.lo) || !isfinite(r.hi)) return false; /* NaN, Inf: a domain error */
  if (c == VAL_ACC) return r.lo >= -(ACC_M + ACC_STEP) && r.hi <= ACC_M + ACC_STEP;
  if (c == VAL_STATS) return r.lo == r.hi && r.lo >= 0.25 && r.hi <= 3; /* the triple (v, v, v) */
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
static Range r_min(Range a, Range b) { return (Range){fmin(a.lo, b.lo), fmin(a.hi, b.hi)}; }
static Range r_hull(Range a, Range b) { return (Range){fmin(a.lo, b.lo), fmax(a.hi, b.hi)}; }
static Range r_point(double v) { return (Range){v, v}; }
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

/* An ALU op (BFRT_ALU_*) of a and b; a comparison gives 0 or 1. */
static Range r_alu(int code, Range a, Range b) {
  switch (code) {
  case BFRT_ALU_ADD: return r_add(a, b);
  case BFRT_ALU_SUBTRACT: return r_sub(a, b);
  case BFRT_ALU_MULTIPLY: return r_mul(a, b);
  case BFRT_ALU_MAXIMUM: return r_max(a, b);
  case BFRT_ALU_MINIMUM: return r_min(a, b);
  default: return (Range){0, 1};
  }
}

/* An activation function (BFRT_FN_*) of a, or r_invalid outside its domain. */
static Range r_fn(int fn, Range a) {
  switch (fn) {
  case BFRT_FN_COPY: return a;
  case BFRT_FN_EXP: return (Range){exp(a.lo), exp(a.hi)};
  case BFRT_FN_TANH: return (Range){tanh(a.lo), tanh(a.hi)};
  case BFRT_FN_RELU: return (Range){fmax(a.lo, 0), fmax(a.hi, 0)};
  case BFRT_FN_SIGMOID: return (Range){1 / (1 + exp(-a.lo)), 1 / (1 + exp(-a.hi))};
  case BFRT_FN_GELU: case BFRT_FN_SILU: return r_gated(a);
  case BFRT_FN_SQUARE: return r_square(a);
  case BFRT_FN_SQRT: return a.lo >= 0 ? (Range){sqrt(a.lo), sqrt(a.hi)} : r_invalid;
  case BFRT_FN_RSQRT: return a.lo > 0 ? (Range){1 / sqrt(a.hi), 1 / sqrt(a.lo)} : r_invalid;
  case BFRT_FN_ABS: return r_abs(a);
  case BFRT_FN_RECIPROCAL: return a.lo > 0 || a.hi < 0 ? (Range){1 / a.hi, 1 / a.lo} : r_invalid;
  default: return r_invalid;
  }
}

/* What an instruction reads, for op_image: each tile operand's family,
 * class and range (operand 0 the destination's old value, for the ops
 * that accumulate into it), and its immediates' values in order (an ALU
 * op or activation function as its code). */
typedef struct Sources {
  Family fam[4];
  ValueClass cls[4];
  Range r[4];
  double f[5];
} Sources;

/* The affine pattern offset + i cm + j step over the destination's
 * partitions i and columns j (iota, affine_select; f[0..2] = step,
 * offset, cm). */
static Range r_affine(const Sources *s) {
  double step = s->f[0], offset = s->f[1], cm = s->f[2];
  double i = fam_rows[s->fam[0]] - 1, j = fam_cols[s->fam[0]] - 1;
  return (Range){offset + fmin(0, i * cm) + fmin(0, j * step), offset + fmax(0, i * cm) + fmax(0, j * step)};
}

/* tensor_tensor_scan: r = init, then r = (a op0 r) op1 b along the row;
 * every r is stored. */
static Range r_scan(const Sources *s, Range init, int op0, int op1) {
  Range r = init, image = r_invalid;
  for (int j = 0; j < fam_cols[s->fam[0]]; j++) {
    r = r_alu(op1, r_alu(op0, s->r[1], r), s->r[2]);
    image = j ? r_hull(image, r) : r;
  }
  return image;
}

/* tensor_reduce of n values of a, left to right. */
static Range r_reduce(int code, Range a, int n) {
  Range r = a;
  for (int j = 1; j < n; j++) r = r_alu(code, r, a);
  return r;
}

/* bn_stats of n values a row: counts, means (in a) and M2 (at most the
 * count times (a.hi - a.lo)^2). */
static Range r_stats(Range a, int n) {
  double half = (n + 1) / 2, spread = (a.hi - a.lo) * (a.hi - a.lo);
  return r_hull(r_hull((Range){n / 2, half}, a), (Range){0, half * spread});
}

/* The image of an instruction's sources, or r_invalid outside the op's domain. */
static Range op_image(int op, const Sources *s) {
  Range a = s->r[1], b = s->r[2];
  double imm = s->f[0];
  switch (op) {
  case BFRT_LOAD: case BFRT_STORE: case BFRT_COPY: case BFRT_TRANSPOSE: case BFRT_ROWMAX:
  case BFRT_NC_TRANSPOSE: case BFRT_PERMUTE: return a;
  case BFRT_MATMUL: case BFRT_NC_MATMUL: return r_times(r_mul(a, b), TILE_DIM);
  case BFRT_MATMUL_ACC: case BFRT_NC_MATMUL_ACC: return r_add(s->r[0], r_times(r_mul(a, b), TILE_DIM));
  case BFRT_FILL: case BFRT_MEMSET: return r_point(imm);
  case BFRT_SCALE: case BFRT_MUL_IMM: return r_times(a, imm);
  case BFRT_EXP: return r_fn(BFRT_FN_EXP, a);
  case BFRT_RELU: return r_fn(BFRT_FN_RELU, a);
  case BFRT_TANH: return r_fn(BFRT_FN_TANH, a);
  case BFRT_SIGMOID: return r_fn(BFRT_FN_SIGMOID, a);
  case BFRT_RSQRT: return r_fn(BFRT_FN_RSQRT, a);
  case BFRT_RECIP: return r_fn(BFRT_FN_RECIPROCAL, a);
  case BFRT_SQRT: return r_fn(BFRT_FN_SQRT, a);
  case BFRT_ADD: case BFRT_ADD_ROW: case BFRT_ADD_COL: return r_add(a, b);
  case BFRT_SUB: case BFRT_SUB_ROW: case BFRT_SUB_COL: return r_sub(a, b);
  case BFRT_MUL: case BFRT_MUL_ROW: case BFRT_MUL_COL: return r_mul(a, b);
  case BFRT_MAX: return r_max(a, b);
  case BFRT_ADD_IMM: return r_add(a, r_point(imm));
  case BFRT_SUB_IMM: return r_sub(a, r_point(imm));
  case BFRT_MAX_IMM: return r_max(a, r_point(imm));
  case BFRT_ROWSUM: return r_times(a, TILE_DIM);
  case BFRT_GELU: case BFRT_SILU: return r_gated(a);
  case BFRT_SQUARE: return r_square(a);
  case BFRT_ABS: return r_abs(a);
  case BFRT_ROWSUM_SQUARE: return r_times(r_square(a), TILE_DIM);
  case BFRT_ROWSUM_EXP: return r_times((Range){exp(a.lo), exp(a.hi)}, TILE_DIM);
  case BFRT_IOTA: return r_affine(s);
  case BFRT_AFFINE_SELECT: return r_hull(a, r_point(s->f[3]));
  case BFRT_TENSOR_REDUCE: return r_reduce((int)s->f[0], a, fam_cols[s->fam[1]]);
  case BFRT_TENSOR_REDUCE_NEG: return r_times(r_reduce((int)s->f[0], a, fam_cols[s->fam[1]]), -1);
  case BFRT_TENSOR_SCALAR: return r_alu((int)s->f[0], a, r_point(s->f[1]));
  case BFRT_TENSOR_SCALAR_V: return r_alu((int)s->f[0], a, b);
  case BFRT_TENSOR_SCALAR2: return r_alu((int)s->f[2], r_alu((int)s->f[0], a, r_point(s->f[1])), r_point(s->f[3]));
  case BFRT_TENSOR_SCALAR2_V: return r_alu((int)s->f[1], r_alu((int)s->f[0], a, b), s->r[3]);
  case BFRT_ACTIVATION: return r_fn((int)s->f[0], a);
  case BFRT_ACTIVATION_BS: case BFRT_ACTIVATION_ACC: return r_fn((int)s->f[0], r_add(r_times(a, s->f[1]), b));
  case BFRT_TENSOR_TENSOR_SCAN: return r_scan(s, r_point(s->f[0]), (int)s->f[1], (int)s->f[2]);
  case BFRT_TENSOR_TENSOR_SCAN_V: return r_scan(s, s->r[3], (int)s->f[0], (int)s->f[1]);
  case BFRT_BN_STATS: return r_stats(a, fam_cols[s->fam[1]]);
  case BFRT_BN_AGGR: return s->cls[1] == VAL_STATS ? (Range){-1, 17} : r_invalid;
  default: return r_invalid; /* an op without a rule here is never printed (test_features) */
  }
}

/* Whether the instruction keeps every value it writes in its class: its
 * destination's, and activation_acc's accumulator's (acc + the row's sum
 * of the activations); bn_stats writes stats from a unit source. */
static bool stays_in_class(int op, const Sources *s) {
  Range image = op_image(op, s);
  if (op == BFRT_BN_STATS && s->cls[0] == VAL_STATS) return range_in(s->r[1], VAL_UNIT);
  if (!range_in(image, s->cls[0])) return false;
  if (op == BFRT_ACTIVATION_ACC) return range_in(r_add(s->r[3], r_times(image, fam_cols[s->fam[1]])), s->cls[3]);
  return true;
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

/* The nki.isa instructions' float immediates, and the values of their
 * affine patterns (step, offset, channel multiplier): integers. */
static const char *const isa_floats[] = {"0.5", "-2", "3", "0.25"};
#define NISA_FLOATS ((int)(sizeof isa_floats / sizeof isa_floats[0]))
static const int pattern_values[3][3] = {{-1, 0, 1}, {0, 1, -2}, {1, -1, 0}};

/* Operands an instruction may take: tiles by family and number, the hbm
 * tensor of a load or store, and each immediate (the letters F of the
 * op's operands, in order) as its choice among those of its kind
 * (imm_kind). */
#define MAX_TILE_OPERANDS 4
#define MAX_IMM_OPERANDS 5
typedef struct Pick {
  signed char fam[MAX_TILE_OPERANDS], tile[MAX_TILE_OPERANDS], tensor, imm[MAX_IMM_OPERANDS];
} Pick;

typedef struct Gen {
  Rng rng;
  Rng types; /* element types, STREAM_TYPES */
  Rng views; /* views and element slices, STREAM_VIEWS */
  Rng spell; /* how an affine pattern's integers are written, STREAM_SPELL */
  Rng imms;  /* the immediates of the picks, where there are many choices, STREAM_IMMS */
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

static char tile_prefix(Family f) { return "trcsp"[f]; }

/* On a target where matmul writes f32 psum (matmul_psum_f32), square tile
 * 1 is that accumulator: in psum, f32, of class acc, and the destination
 * of every matmul, matmul_acc, nc_matmul and nc_matmul_acc; the other ops
 * use it like any tile their engine reaches. Tile 0 of the square, row
 * and column families is sbuf and unit, the tile every engine reaches and
 * Y takes; the square family also has a pos and a big tile and the row
 * family a big one and an f32 acc one, and the statistics families an f32
 * stats tile ([D, 6]) and a big one ([D, 2]), so that every op has
 * operands whose values stay in class (rsqrt reads pos, rowsum writes big,
 * activation_acc accumulates into acc, bn_aggr reads stats). */
static void declare_tiles(Gen *g) {
  static const int max_tiles[NFAMILIES] = {5, 3, 2, 2, 2};
  static const bool any[NCLASSES] = {true, true, true, true, false};
  int64_t psum_slots = 0; /* one PSUM bank each */
  bool accumulate = g->target->limits.matmul_psum_f32;
  g->accumulator = accumulate ? 1 : -1;
  for (int f = 0; f < NFAMILIES; f++) {
    ValueClass forced[4];
    int nforced = 0;
    if (f == FAM_STATS) forced[nforced++] = VAL_STATS;
    else if (f != FAM_PAIR) forced[nforced++] = VAL_UNIT;
    if (f == FAM_SQUARE && accumulate) forced[nforced++] = VAL_ACC;
    if (f == FAM_SQUARE) forced[nforced++] = VAL_POS;
    if (f != FAM_COL && f != FAM_STATS) forced[nforced++] = VAL_BIG;
    if (f == FAM_ROW) forced[nforced++] = VAL_ACC;
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
      bool wide = i < nforced && (forced[i] == VAL_STATS || (f == FAM_ROW && forced[i] == VAL_ACC));
      const char *type = accumulator || wide ? "f32" : random_type(g);
      g->tile_class[f][i] = i < nforced ? forced[i] : random_class(g, type, any);
      /* views of part of a tile: of the three first families only */
      bool big = g->big[f][i] = f <= FAM_COL && g->viewing && rng_percent(&g->views, 35);
      fprintf(g->out, "  %s %c%d", psum ? "psum" : "sbuf", tile_prefix(f), i);
      if (slots > 1) fprintf(g->out, "[%d]", slots);
      fprintf(g->out, ": %s[%d, %d];\n", type, fam_rows[f] * (big && f != FAM_COL ? 2 : 1),
              fam_cols[f] * (big && f == FAM_COL ? 2 : 1));
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

/* The dimension a family's tiles are long in: columns for FAM_COL, rows otherwise. */
static int long_dim(Family f) { return f == FAM_COL; }

/* A range of D along a big tile's doubled dimension: its first or second
 * half, the middle (overlapping both), or the half a loop variable picks
 * (D * (v % 2), disjoint across iterations of different parity); along
 * columns (a column family's, the only dimension a view may step) also
 * the even or the odd columns, 0:2D:2 and 1:2D:2, which interleave
 * without touching and overlap every half. */
static void print_view_range(Gen *g, Family f) {
  int form = rng_below(&g->views, g->depth ? 4 : 3);
  if (long_dim(f) && rng_percent(&g->views, 30)) fprintf(g->out, "%d:%d:2", rng_below(&g->views, 2), 2 * TILE_DIM);
  else if (form == 0) fprintf(g->out, "0:%d", TILE_DIM);
  else if (form == 1) fprintf(g->out, "%d:%d", TILE_DIM, 2 * TILE_DIM);
  else if (form == 2) fprintf(g->out, "%d:%d", TILE_DIM / 2, TILE_DIM / 2 + TILE_DIM);
  else {
    int v = g->scope[rng_below(&g->views, g->depth)];
    fprintf(g->out, "%d * (v%d %% 2) : %d * (v%d %% 2) + %d", TILE_DIM, v, TILE_DIM, v, TILE_DIM);
  }
}


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
    print_view_range(g, f);
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

/* Whether family f's tiles have D partitions: the [P, 1] operands of the
 * nki.isa ops (a tensor_scalar's scalars, activation's bias) are rows. */
static bool tall(Family f) { return fam_rows[f] == TILE_DIM; }

/* Operand families of a tile-only op, destination first, with any the
 * family of a free choice (each op is enumerated with every any); -1 when
 * the op takes no tiles of that choice, or has no free choice and any > 0. */
static int tile_families(const OpInfo *op, Family any, Family fam[MAX_TILE_OPERANDS]) {
  static const Family fixed[][3] = {
      [SHAPE_MATMUL] = {FAM_SQUARE, FAM_SQUARE, FAM_SQUARE},
      [SHAPE_NC_MATMUL] = {FAM_SQUARE, FAM_SQUARE, FAM_SQUARE},
      [SHAPE_TRANSPOSE] = {FAM_SQUARE, FAM_SQUARE},
      [SHAPE_ROWREDUCE] = {FAM_ROW, FAM_SQUARE},
      [SHAPE_ROWBCAST] = {FAM_SQUARE, FAM_SQUARE, FAM_ROW},
      [SHAPE_COLBCAST] = {FAM_SQUARE, FAM_SQUARE, FAM_COL},
      [SHAPE_BN_AGGR] = {FAM_PAIR, FAM_STATS},
  };
  int n = 0;
  for (const char *c = op->operands; *c; c++) n += *c == 'T';
  switch (op->shape) {
  case SHAPE_SAME: case SHAPE_NONE: case SHAPE_SELECT:
    for (int i = 0; i < n; i++) fam[i] = any;
    return n;
  case SHAPE_ROWREDUCE_OF: case SHAPE_BN_STATS: /* [D, 1] or [D, 6] from any [D, N] */
    if (!tall(any)) return -1;
    fam[0] = op->shape == SHAPE_BN_STATS ? FAM_STATS : FAM_ROW, fam[1] = any;
    return n;
  case SHAPE_SCALAR: case SHAPE_ACTIVATION: case SHAPE_SCAN: /* the data like the destination, then [D, 1] */
    if (n > (op->shape == SHAPE_SCAN ? 3 : 2) && !tall(any)) return -1;
    for (int i = 0; i < n; i++) fam[i] = i < (op->shape == SHAPE_SCAN ? 3 : 2) ? any : FAM_ROW;
    return n;
  default:
    if (any > 0) return -1;
    for (int i = 0; i < n; i++) fam[i] = fixed[op->shape][i];
    return n;
  }
}

/* Whether tile i of family f may be operand k of op on an engine that
 * reaches psum or not: matmul writes the accumulator and reads sbuf where
 * the target says so. */
static bool tile_usable(const Gen *g, const OpInfo *op, int k, Family f, int i, bool psum_ok) {
  bool matmul = op->shape == SHAPE_MATMUL || op->shape == SHAPE_NC_MATMUL; /* and their _acc forms */
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
        add_pick(ps, (Pick){{(signed char)f, -1, -1, -1}, {(signed char)i, -1, -1, -1}, (signed char)t, {-1}});
    }
  }
}

/* The kinds of immediate (the letters F of an op's operands): a float of
 * the old ops' list, a float of the nki.isa ops', a pattern's step, offset
 * or channel multiplier, an ALU op, one that tensor_reduce reduces with, a
 * comparison, an activation function, the word negate, a divisor of the
 * destination's columns (permute). */
typedef enum ImmKind { IMM_FLOAT, IMM_ISA_FLOAT, IMM_STEP, IMM_OFFSET, IMM_CM, IMM_ALU, IMM_REDUCE, IMM_CMP, IMM_FN,
                       IMM_NEGATE, IMM_DIVISOR } ImmKind;

static const int reduce_codes[] = {BFRT_ALU_ADD, BFRT_ALU_MULTIPLY, BFRT_ALU_MAXIMUM, BFRT_ALU_MINIMUM};

/* The kind of immediate j (0-based among the op's F letters). */
static ImmKind imm_kind(int op, int j) {
  const OpInfo *info = op_info(op);
  int i = 0;
  for (int seen = -1; info->operands[i]; i++)
    if (info->operands[i] == 'F' && ++seen == j) break;
  char role = info->roles[i];
  if (role == 'f') return IMM_FN;
  if (role == 'n') return IMM_NEGATE;
  if (role == 'o') return op == BFRT_AFFINE_SELECT ? IMM_CMP : op == BFRT_TENSOR_REDUCE || op == BFRT_TENSOR_REDUCE_NEG ? IMM_REDUCE : IMM_ALU;
  if (op == BFRT_IOTA || op == BFRT_AFFINE_SELECT) return j == 0 ? IMM_STEP : j == 1 ? IMM_OFFSET : j == 2 ? IMM_CM : IMM_ISA_FLOAT;
  if (op == BFRT_PERMUTE) return IMM_DIVISOR;
  return op >= BFRT_NC_MATMUL && op != BFRT_MEMSET ? IMM_ISA_FLOAT : IMM_FLOAT;
}

/* How many choices an immediate of kind has, with destination family f. */
static int imm_count(ImmKind kind, Family f) {
  switch (kind) {
  case IMM_FLOAT: return NIMMEDIATES;
  case IMM_ISA_FLOAT: return NISA_FLOATS;
  case IMM_STEP: case IMM_OFFSET: case IMM_CM: return 3;
  case IMM_ALU: return BFRT_NALU;
  case IMM_REDUCE: return (int)(sizeof reduce_codes / sizeof reduce_codes[0]);
  case IMM_CMP: return BFRT_NALU - BFRT_ALU_EQUAL;
  case IMM_FN: return BFRT_NFN;
  case IMM_NEGATE: return 1;
  default: { /* the divisors of the columns */
    int n = 0;
    for (int d = 1; d <= fam_cols[f]; d++) n += fam_cols[f] % d == 0;
    return n;
  }
  }
}

/* Choice c's value (an ALU op or a function as its code). */
static double imm_value(ImmKind kind, Family f, int c) {
  switch (kind) {
  case IMM_FLOAT: return strtod(immediates[c], NULL);
  case IMM_ISA_FLOAT: return strtod(isa_floats[c], NULL);
  case IMM_STEP: case IMM_OFFSET: case IMM_CM: return pattern_values[kind - IMM_STEP][c];
  case IMM_ALU: case IMM_FN: return c;
  case IMM_REDUCE: return reduce_codes[c];
  case IMM_CMP: return BFRT_ALU_EQUAL + c;
  case IMM_NEGATE: return 0;
  default:
    for (int d = 1; d <= fam_cols[f]; d++)
      if (fam_cols[f] % d == 0 && c-- == 0) return d;
    bug("gen: no divisor %d", c);
  }
}

/* The choices of the immediates for the tiles of s whose values stay in
 * class are picks: every choice, or when there are more than
 * MAX_IMM_CHOICES (tensor_scalar's two ops and floats, affine_select's
 * pattern, float and comparison), that many drawn from rng (STREAM_IMMS),
 * so that the picks of a kernel stay quick to compute. */
#define MAX_IMM_CHOICES 16
static void imm_picks(int opid, Sources *s, Pick p, int nimm, Rng *rng, Picks *ps) {
  int choice[MAX_IMM_OPERANDS] = {0}, count[MAX_IMM_OPERANDS];
  ImmKind kind[MAX_IMM_OPERANDS];
  long total = 1;
  for (int j = 0; j < nimm; j++) {
    kind[j] = imm_kind(opid, j);
    count[j] = imm_count(kind[j], s->fam[0]);
    total *= count[j];
  }
  bool drawn = total > MAX_IMM_CHOICES;
  for (int n = 0; n < (drawn ? MAX_IMM_CHOICES : total); n++) {
    for (int j = 0; j < nimm; j++) {
      if (drawn) choice[j] = rng_below(rng, count[j]);
      s->f[j] = imm_value(kind[j], s->fam[0], choice[j]);
    }
    if (stays_in_class(opid, s)) {
      for (int j = 0; j < nimm; j++) p.imm[j] = (signed char)choice[j];
      add_pick(ps, p);
    }
    for (int j = 0; !drawn && j < nimm && ++choice[j] == count[j]; j++) choice[j] = 0;
  }
}

/* Tile ops: every family, tile tuple and immediates whose image is in the
 * destination's class. */
static void tile_picks(Gen *g, int opid, bool psum_ok, Picks *ps) {
  const OpInfo *op = op_info(opid);
  int nimm = 0;
  for (const char *c = op->operands; *c; c++) nimm += *c == 'F';
  for (int any = 0; any < NFAMILIES; any++) {
    Family fam[MAX_TILE_OPERANDS];
    int n = tile_families(op, (Family)any, fam);
    if (n < 0) continue;
    int t[MAX_TILE_OPERANDS] = {0};
    for (;;) {
      bool usable = true;
      Sources src;
      memset(&src, 0, sizeof src);
      Pick p = {{-1, -1, -1, -1}, {-1, -1, -1, -1}, -1, {-1, -1, -1, -1, -1}};
      for (int k = 0; k < n; k++) {
        usable &= tile_usable(g, op, k, fam[k], t[k], psum_ok);
        src.fam[k] = fam[k];
        src.cls[k] = g->tile_class[fam[k]][t[k]];
        src.r[k] = class_value(src.cls[k]);
        p.fam[k] = (signed char)fam[k], p.tile[k] = (signed char)t[k];
      }
      if (usable) imm_picks(opid, &src, p, nimm, &g->imms, ps);
      int k = 0;
      while (k < n && ++t[k] == g->ntiles[fam[k]]) t[k++] = 0;
      if (k == n) break;
    }
  }
}

/* Every op's choices, for engines that reach psum and those that do not:
 * the kernel's classes are fixed, so they are computed once. */
static void compute_picks(Gen *g) {
  for (int op = 0; op < BFRT_NOPS; op++)
    for (int psum_ok = 0; psum_ok < 2; psum_ok++) {
      Picks ps = {0};
      Signature sig = op_info(op)->sig;
      if (sig == SIG_T_H || sig == SIG_H_T) hbm_picks(g, op_info(op), psum_ok, &ps);
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
  } else if (wide && rng_percent(&g->views, 15)) { /* every other row or column of tiles c and c + 1 */
    int odd = rng_below(&g->views, 2);
    fprintf(g->out, "%d * (%s) + %d : %d * (%s) + %d : 2", TILE_DIM, c, odd, TILE_DIM, c, 2 * TILE_DIM);
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

/* Whether this load or store is ragged: now and then, in a viewing
 * kernel, a transfer between a tensor other than Y (an out tensor's every
 * element is stored, and Y is stored whole) and a tile not declared big
 * (whose other uses are all of it). The transform tracks a ragged
 * region's tensor as a whole and its tile over all of the clipped
 * dimension (transform/barrier_free.c, plan_grids and tile_cells): what a
 * clipped slice touches is known only at run time. Ragged accesses of a
 * tensor that is also written therefore make some waits later than exact,
 * each explained by that fallback, which the campaign accepts and counts
 * (harness/check.c) and no other. The tile's other uses are of all of
 * it, so its tracking over the whole clipped dimension is exact as long
 * as the clipped extent is never 0: a transfer that moved nothing would
 * still wait (E, print_slice_dim). */
static bool draw_ragged(Gen *g, const OpInfo *op, const Pick *p) {
  bool move = op->sig == SIG_T_H || op->sig == SIG_H_T;
  return g->viewing && move && p->tensor != TENSOR_Y && !g->big[p->fam[0]][p->tile[0]] && rng_percent(&g->views, 30);
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

/* An affine pattern's integer k: the literal, or now and then a constant
 * expression (the language takes any, kernel constants included: AFF is
 * 1, see gen_kernel). */
static void print_pattern(Gen *g, int k) {
  int form = rng_below(&g->spell, 4);
  if (form == 0) fprintf(g->out, "%d * AFF", k);
  else if (form == 1) fprintf(g->out, "(%d + AFF) - 1", k);
  else fprintf(g->out, "%d", k);
}

/* Immediate j of op, choice c, with destination family f. */
static void print_imm(Gen *g, int op, int j, Family f, int c) {
  ImmKind kind = imm_kind(op, j);
  switch (kind) {
  case IMM_FLOAT: fputs(immediates[c], g->out); break;
  case IMM_ISA_FLOAT: fputs(isa_floats[c], g->out); break;
  case IMM_STEP: case IMM_OFFSET: case IMM_CM: print_pattern(g, pattern_values[kind - IMM_STEP][c]); break;
  case IMM_ALU: case IMM_REDUCE: case IMM_CMP: fputs(bfrt_alu_names[(int)imm_value(kind, f, c)], g->out); break;
  case IMM_FN: fputs(bfrt_fn_names[c], g->out); break;
  case IMM_NEGATE: fputs("negate", g->out); break;
  default: fprintf(g->out, "%d", (int)imm_value(kind, f, c)); break;
  }
}

/* The operands in the op's order: its tiles and immediates as picked. */
static void print_operands(Gen *g, int id, const Pick *p) {
  const OpInfo *op = op_info(id);
  if (op->sig == SIG_H_T || op->sig == SIG_T_H) {
    print_move(g, op, p);
    return;
  }
  int tile = 0, imm = 0;
  for (int i = 0; op->operands[i]; i++) {
    if (i) fputs(", ", g->out);
    if (op->operands[i] == 'T') {
      print_tile_number(g, p->fam[tile], p->tile[tile]);
      tile++;
    } else {
      print_imm(g, id, imm, p->fam[0], p->imm[imm]);
      imm++;
    }
  }
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
  print_operands(g, op, pick);
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
           .views = rng_stream(seed, STREAM_VIEWS), .spell = rng_stream(seed, STREAM_SPELL),
           .imms = rng_stream(seed, STREAM_IMMS), .out = out, .target = target_default()};
  int64_t values[MAX_PARAMS];
  g.nparams = choose_params(seed, values);
  g.ints = rng_percent(&g.rng, 40);
  g.viewing = rng_percent(&g.views, 80);
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
  fputs("  const AFF = 1;\n", out); /* in affine patterns (print_pattern) */
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

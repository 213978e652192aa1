/* gen.c: random valid kernels for differential testing (`bfsync gen` and
 * the campaign).
 *
 * The verification campaigns need kernels nobody wrote by hand, and a kernel
 * the frontend rejects tests nothing, so the generator is correct by
 * construction rather than by filtering: every choice is drawn from what the
 * op table (runtime/ops.def) and the target allow.
 *
 *  - Shapes come in two families: square tiles [4, 4] and row tiles [4, 1].
 *    Every shape rule has a fixed answer in those terms (matmul and
 *    transpose are square, a row reduction goes square -> row, a row
 *    broadcast takes square, square, row; elementwise ops stay within one
 *    family), so operands are picked per family and always fit.
 *  - The nki.isa instructions draw their names from their vocabularies
 *    (ALU ops, reducers, comparisons, activation functions, negate), small
 *    integers for iota's and affine_select's patterns, a divisor of the
 *    columns for permute, and [4, 1] tiles for per-partition operands;
 *    bn_stats writes the [4, 6] tile bs, which bn_aggr reads into the
 *    [4, 2] tile bm (every kernel declares both).
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
 *
 *  - About one kernel in three draws views and element slices (from a
 *    stream of their own, so the rest of a seed's kernel is unchanged): a
 *    third of its tiles are declared twice as long ([8, 4], [8, 1], [1, 8])
 *    and always used through a view of the family's shape, their first or
 *    second half, the middle that overlaps both, or the half a loop
 *    variable's parity picks (disjoint across iterations of different
 *    parity); other tiles are sometimes named as the view of all of them,
 *    [:, :], beside their whole-tile uses; and two in five hbm operands are
 *    element slices, the tile of a coordinate in elements or, along a
 *    dimension of D, the rows that straddle tiles 0 and 1. So overlapping,
 *    adjacent, disjoint and whole-tile regions meet on one resource.
 *    (Ragged and strided regions are not drawn.)
 *
 * Randomness is splitmix64, seeded from --seed: the same seed prints the
 * same kernel on every machine. The kernel and its parameter set come from
 * separate streams, so --params needs no kernel to be generated. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness/gen.h"
#include "util/arena.h"
#include "util/diag.h"
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

static uint64_t rng_next(Rng *rng) {
  uint64_t z = (rng->state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

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

typedef struct GenTensor {
  const char *name;
  const char *io;
  Family family;
  bool readable, writable;
} GenTensor;

static const GenTensor gen_tensors[] = {
    {"X", "in", FAM_SQUARE, true, false},
    {"Y", "out", FAM_SQUARE, false, true},
    {"Z", "inout", FAM_SQUARE, true, true},
    {"V", "inout", FAM_ROW, true, true},
    {"W", "inout", FAM_COL, true, true},
};

static const char *const param_names[MAX_PARAMS] = {"N", "M", "K"};
static const char *const immediates[] = {"0.5", "-2", "1e-3", "0.25", "1.5", "-0.75", "3"};

typedef struct Gen {
  Rng rng;
  Rng types; /* element types, STREAM_TYPES */
  Rng views; /* views and element slices, STREAM_VIEWS */
  bool viewing; /* this kernel draws views and slices */
  bool big[NFAMILIES][MAX_TILES]; /* declared twice as long (rows; columns for FAM_COL), always viewed */
  bool viewed_part; /* the tile operand just printed is a view of part of a big tile */
  FILE *out;
  const Target *target;
  int nparams;
  int ntiles[NFAMILIES];
  int slots[NFAMILIES][MAX_TILES];
  int deck[BFRT_NOPS]; /* ops in dealing order */
  bool stored[sizeof gen_tensors / sizeof gen_tensors[0]]; /* a store names it */
  bool psum[NFAMILIES][MAX_TILES]; /* the tile is in psum */
  int accumulator; /* the f32 psum square tile matmul writes when the target says so (matmul_psum_f32), or -1 */
  bool psum_ok; /* the current instruction's engine may access psum tiles */
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

static void print_tensor(Gen *g, const GenTensor *t) {
  fprintf(g->out, "  hbm %s %s: %s[", t->io, t->name, random_type(g));
  print_extent(g);
  if (t->family != FAM_COL) fprintf(g->out, " * %d", TILE_DIM);
  fputs(", ", g->out);
  print_extent(g);
  if (t->family != FAM_ROW) fprintf(g->out, " * %d", TILE_DIM);
  fputs("];\n", g->out);
}

static char tile_prefix(Family f) { return "trc"[f]; }

/* On a target where matmul writes f32 psum (matmul_psum_f32), square tile
 * 1 is that accumulator: in psum, f32, and the destination of every matmul
 * and matmul_acc; the other ops use it like any tile their engine reaches.
 * (Tile 0 stays sbuf, the tile an engine without psum access falls back to.) */
static void declare_tiles(Gen *g) {
  static const int max_tiles[NFAMILIES] = {5, 3, 2};
  static const int rows[NFAMILIES] = {TILE_DIM, TILE_DIM, 1}, cols[NFAMILIES] = {TILE_DIM, 1, TILE_DIM};
  int64_t psum_slots = 0; /* one PSUM bank each */
  bool accumulate = g->target->limits.matmul_psum_f32;
  g->accumulator = accumulate ? 1 : -1;
  for (int f = 0; f < NFAMILIES; f++) {
    g->ntiles[f] = 1 + rng_below(&g->rng, max_tiles[f]);
    if (f == FAM_SQUARE && accumulate && g->ntiles[f] < 2) g->ntiles[f] = 2;
    for (int i = 0; i < g->ntiles[f]; i++) {
      int slots = 1 + rng_below(&g->rng, 3);
      bool accumulator = f == FAM_SQUARE && i == g->accumulator;
      bool psum = accumulator || (f == FAM_SQUARE && rng_percent(&g->rng, 20) && i > 0 &&
                                  (!g->target->limits.psum_banks || psum_slots + slots <= g->target->limits.psum_banks));
      g->psum[f][i] = psum;
      if (psum) psum_slots += slots;
      g->slots[f][i] = slots;
      bool big = g->big[f][i] = g->viewing && rng_percent(&g->views, 35);
      fprintf(g->out, "  %s %c%d", psum ? "psum" : "sbuf", tile_prefix(f), i);
      if (slots > 1) fprintf(g->out, "[%d]", slots);
      fprintf(g->out, ": %s[%d, %d];\n", accumulator ? "f32" : random_type(g), rows[f] * (big && f != FAM_COL ? 2 : 1),
              cols[f] * (big && f == FAM_COL ? 2 : 1));
    }
  }
  fprintf(g->out, "  sbuf bs: f32[%d, 6];\n  sbuf bm: f32[%d, 2];\n", TILE_DIM, TILE_DIM);
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
 * (4 * (v % 2), disjoint across iterations of different parity). */
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

/* Tile i of family f: a big one through a view of the family's shape;
 * another, now and then, through the view of all of it, [:, :]. */
static void print_tile_number(Gen *g, Family f, int i) {
  fprintf(g->out, "%c%d", tile_prefix(f), i);
  if (g->slots[f][i] > 1) {
    fputc('[', g->out);
    print_slot(g, g->slots[f][i]);
    fputc(']', g->out);
  }
  g->viewed_part = g->big[f][i];
  if (g->big[f][i]) {
    fputs(f == FAM_COL ? "[:, " : "[", g->out);
    print_view_range(g);
    fputs(f == FAM_COL ? "]" : ", :]", g->out);
  } else if (g->viewing && rng_percent(&g->views, 10)) {
    fputs("[:, :]", g->out);
  }
}

/* A tile of family f (an sbuf one unless psum_ok; tile 0 is always sbuf). */
static void print_tile_in(Gen *g, Family f, bool psum_ok) {
  int i = rng_below(&g->rng, g->ntiles[f]);
  if (!psum_ok && g->psum[f][i]) i = 0;
  print_tile_number(g, f, i);
}

static void print_tile(Gen *g, Family f) { print_tile_in(g, f, g->psum_ok); }

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

/* One dimension of an element slice of D (wide) or 1 elements: the tile
 * c of a coordinate, in elements (D c : D c + D), or, for D, rows D/2 ..
 * D/2 + D - 1, which straddle tiles 0 and 1 (every tensor has at least two
 * tiles along each dimension). */
static void print_slice_dim(Gen *g, bool wide) {
  char buf[32];
  if (wide && rng_percent(&g->views, 25)) {
    fprintf(g->out, "%d:%d", TILE_DIM / 2, TILE_DIM / 2 + TILE_DIM);
    return;
  }
  const char *c = coordinate_text(g, buf);
  if (wide) fprintf(g->out, "%d * (%s) : %d * (%s) + %d", TILE_DIM, c, TILE_DIM, c, TILE_DIM);
  else fprintf(g->out, "%s : %s + 1", c, c);
}

/* An hbm operand of family f: of tensor `only` when not NULL, else of one drawn. */
static void print_hbm_of(Gen *g, Family f, bool write, const GenTensor *only) {
  const GenTensor *pick[sizeof gen_tensors / sizeof gen_tensors[0]];
  int n = 0;
  for (size_t i = 0; i < sizeof gen_tensors / sizeof gen_tensors[0]; i++) {
    const GenTensor *t = &gen_tensors[i];
    if (t->family == f && (write ? t->writable : t->readable)) pick[n++] = t;
  }
  const GenTensor *t = only ? only : pick[rng_below(&g->rng, n)];
  if (write) g->stored[t - gen_tensors] = true;
  fprintf(g->out, "%s[", t->name);
  /* the partner of a view of part of a tile is an element slice (sema) */
  if (g->viewed_part || (g->viewing && rng_percent(&g->views, 40))) {
    print_slice_dim(g, t->family != FAM_COL);
    fputs(", ", g->out);
    print_slice_dim(g, t->family != FAM_ROW);
  } else {
    print_coordinate(g);
    fputs(", ", g->out);
    print_coordinate(g);
  }
  fputc(']', g->out);
}

static void print_hbm(Gen *g, Family f, bool write) { print_hbm_of(g, f, write, NULL); }

static void print_imm(Gen *g) {
  fputs(immediates[rng_below(&g->rng, sizeof immediates / sizeof immediates[0])], g->out);
}

/* Operand families of a tile-only op, destination first. */
static int tile_families(Gen *g, const OpInfo *op, Family fam[3]) {
  static const Family fixed[][3] = {
      [SHAPE_MATMUL] = {FAM_SQUARE, FAM_SQUARE, FAM_SQUARE},
      [SHAPE_TRANSPOSE] = {FAM_SQUARE, FAM_SQUARE},
      [SHAPE_ROWREDUCE] = {FAM_ROW, FAM_SQUARE},
      [SHAPE_ROWBCAST] = {FAM_SQUARE, FAM_SQUARE, FAM_ROW},
      [SHAPE_COLBCAST] = {FAM_SQUARE, FAM_SQUARE, FAM_COL},
      [SHAPE_NC_MATMUL] = {FAM_SQUARE, FAM_SQUARE, FAM_SQUARE},
  };
  int n = (int)strspn(op->operands, "T"); /* the tiles, before any immediate */
  Family any = (Family)rng_below(&g->rng, NFAMILIES);
  bool same = op->shape == SHAPE_SAME || op->shape == SHAPE_NONE;
  for (int i = 0; i < n; i++) fam[i] = same ? any : fixed[op->shape][i];
  return n;
}

/* store X[...], t: the tile is drawn first (a view of part of a tile needs
 * an element slice), the text printed in the operands' order. */
static void print_store(Gen *g, Family f, const GenTensor *only) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = g->out, *tile = open_memstream(&text, &len);
  if (!tile) bug("gen: out of memory");
  g->out = tile;
  print_tile(g, f);
  fclose(tile);
  g->out = out;
  print_hbm_of(g, f, true, only);
  fprintf(g->out, ", %s", text);
  free(text);
}

/* ---- The nki.isa instructions' operands: names from their vocabularies,
 * integer affine patterns, [P, 1] scalars. bn_stats writes the [4, 6]
 * tile bs and bn_aggr reads it into the [4, 2] tile bm. */

static void print_word(Gen *g, const char *const *names, int n) { fputs(names[rng_below(&g->rng, n)], g->out); }

static void print_alu(Gen *g, const OpInfo *op) {
  static const char *const reducers[] = {"add", "multiply", "maximum", "minimum"};
  if (op->shape == SHAPE_ROWREDUCE_OF) print_word(g, reducers, 4);
  else if (op->shape == SHAPE_SELECT) print_word(g, bfrt_alu_names + BFRT_ALU_EQUAL, BFRT_NALU - BFRT_ALU_EQUAL);
  else print_word(g, bfrt_alu_names, BFRT_NALU);
}

/* The family of tile operand i: the data family, or a [P, 1] scalar. */
static Family isa_family(const OpInfo *op, int i, Family data) {
  int scalars = op->shape == SHAPE_SCALAR ? 2 : op->shape == SHAPE_ACTIVATION || op->shape == SHAPE_SCAN ? 3 : 99;
  if (op->shape == SHAPE_ROWREDUCE_OF) return i == 0 ? FAM_ROW : FAM_SQUARE;
  return i >= scalars ? FAM_ROW : data;
}

static void print_isa_operands(Gen *g, const OpInfo *op) {
  bool scalars = op->shape == SHAPE_SCALAR || op->shape == SHAPE_ACTIVATION || op->shape == SHAPE_SCAN;
  Family data = scalars ? (Family)rng_below(&g->rng, 2) : (Family)rng_below(&g->rng, NFAMILIES);
  for (int i = 0; op->operands[i]; i++) {
    if (i) fputs(", ", g->out);
    char role = op->roles[i];
    bool affine = (op->shape == SHAPE_NONE || op->shape == SHAPE_SELECT) && i >= 1 && i <= 3 && op->sig != SIG_T_F;
    if (op->shape == SHAPE_BN_STATS || op->shape == SHAPE_BN_AGGR) {
      bool stats = op->shape == SHAPE_BN_STATS;
      fputs(i == 0 ? (stats ? "bs" : "bm") : "", g->out);
      if (i == 1 && stats) print_tile_in(g, FAM_SQUARE, false);
      if (i == 1 && !stats) fputs("bs", g->out);
    } else if (op->operands[i] == 'T') print_tile(g, isa_family(op, i, data));
    else if (role == 'o') print_alu(g, op);
    else if (role == 'f') print_word(g, bfrt_fn_names, BFRT_NFN);
    else if (role == 'n') fputs("negate", g->out);
    else if (affine) fprintf(g->out, "%d", rng_below(&g->rng, 5) - 2);
    else print_imm(g);
  }
}

static void print_operands(Gen *g, const OpInfo *op) {
  Family f = (Family)rng_below(&g->rng, NFAMILIES);
  switch (op->sig) {
  case SIG_T_H:
    print_tile(g, f);
    fputs(", ", g->out);
    print_hbm(g, f, false);
    return;
  case SIG_H_T:
    if (g->viewing) { /* the tile first, for print_hbm to know its partner */
      print_store(g, f, NULL);
      return;
    }
    print_hbm(g, f, true);
    fputs(", ", g->out);
    print_tile(g, f);
    return;
  case SIG_T_F:
    print_tile(g, f);
    fputs(", ", g->out);
    print_imm(g);
    return;
  default: break;
  }
  if (op->shape > SHAPE_NC_MATMUL || op->sig == SIG_T_FFF) { /* the nki.isa forms but nc_matmul */
    print_isa_operands(g, op);
    return;
  }
  Family fam[3];
  int n = tile_families(g, op, fam);
  bool matmul = op->shape == SHAPE_MATMUL || op->shape == SHAPE_NC_MATMUL; /* matmul, nc_matmul and their _acc */
  bool to_accumulator = g->accumulator >= 0 && matmul;
  bool sbuf_inputs = matmul && g->target->limits.matmul_sbuf_inputs;
  for (int i = 0; i < n; i++) {
    if (i) fputs(", ", g->out);
    if (i == 0 && to_accumulator) print_tile_number(g, fam[0], g->accumulator);
    else print_tile_in(g, fam[i], g->psum_ok && !(i > 0 && sbuf_inputs));
  }
  if (op->sig == SIG_T_TF) {
    fputs(", ", g->out);
    if (op == &rt_ops[BFRT_PERMUTE]) fprintf(g->out, "%d", fam[0] == FAM_ROW ? 1 : 1 << rng_below(&g->rng, 3)); /* divides 4 */
    else print_imm(g);
  }
}

/* ---- Instructions. */

static bool engine_runs(const Gen *g, int engine, int op) {
  return op_info(op)->engines & (1u << g->target->engines[engine].kind);
}

static int random_engine_for(Gen *g, int op) {
  int capable[BFRT_MAX_ENGINES], n = 0;
  for (int e = 0; e < g->target->nengines; e++)
    if (engine_runs(g, e, op)) capable[n++] = e;
  if (!n) bug("gen: no engine of target %s runs %s", g->target->name, op_info(op)->name);
  return capable[rng_below(&g->rng, n)];
}

static int random_op_for(Gen *g, int engine) {
  int capable[BFRT_NOPS], n = 0;
  for (int op = 0; op < BFRT_NOPS; op++)
    if (engine_runs(g, engine, op)) capable[n++] = op;
  if (!n) bug("gen: engine %s runs no op", g->target->engines[engine].name);
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

/* instr ::= [ENGINE ':'] op operand {',' operand} ';'   (engine given by a block when block_engine >= 0) */
static void gen_instr(Gen *g, int level, int block_engine) {
  int op = block_engine >= 0 ? random_op_for(g, block_engine) : deal_op(g);
  int engine = block_engine >= 0 ? block_engine : random_engine_for(g, op);
  indent(g, level);
  if (block_engine < 0) fprintf(g->out, "%s: ", engine_word(g, engine));
  fprintf(g->out, "%s ", op_info(op)->name);
  g->psum_ok = psum_allowed(g, engine);
  print_operands(g, op_info(op));
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

void gen_kernel(uint64_t seed, long size, FILE *out) {
  Gen g = {.rng = rng_stream(seed, STREAM_KERNEL), .types = rng_stream(seed, STREAM_TYPES),
           .views = rng_stream(seed, STREAM_VIEWS), .out = out,
           .target = target_default()};
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
  for (size_t i = 0; i < sizeof gen_tensors / sizeof gen_tensors[0]; i++)
    print_tensor(&g, &gen_tensors[i]);
  if (g.ints) { /* rows: constants below 8 and loop variables below the extent */
    fputs("  hbm in C: i32[", out);
    print_extent(&g);
    fputs(" + 8, 2];\n", out);
  }
  declare_tiles(&g);
  fputc('\n', out);
  gen_body(&g, 1, -1, size);
  /* sema wants every out tensor stored to somewhere. */
  g.psum_ok = psum_allowed(&g, target_engine(g.target, "dma") >= 0 ? target_engine(g.target, "dma") : 0);
  for (size_t i = 0; i < sizeof gen_tensors / sizeof gen_tensors[0]; i++)
    if (!strcmp(gen_tensors[i].io, "out") && !g.stored[i]) {
      fputs("  dma: store ", out);
      if (g.viewing) {
        print_store(&g, gen_tensors[i].family, &gen_tensors[i]);
      } else {
        fprintf(out, "%s[0, 0], ", gen_tensors[i].name);
        print_tile(&g, gen_tensors[i].family);
      }
      fputs(";\n", out);
    }
  fputs("}\n", out);
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

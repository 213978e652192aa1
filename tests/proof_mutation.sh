#!/usr/bin/env bash
# proof_mutation.sh: the proof's check must catch a broken bfsync
# (docs/proof.md, section 3).
#
# Each mutation below is a one-line change to bfsync's own source, the
# kind an independent review applied to see what the proof's check misses:
# the emitter printing every wait one lower, deps.c classifying an hbm
# store's destination as a read, device-integer reads shared between
# different elements, deps.c's region test for views and slices one
# element narrower and one wider, and each threshold form of the transform (closed
# form, last-iteration form, tracked lookup, and the positions its
# tracking arrays store) one lower and one higher. Each is applied to a
# copy of the tree, whose objects are copied too, so only the mutated file
# recompiles; then `bfsync verify` (the path tests/proof.sh and the
# campaign take) runs on a few kernels, and the proof's validator must
# reject at least one run. The validator is the real one, build/proof/
# bfcheck: it interprets the emitted C and derives reads and writes from
# runtime/ops.def, so none of the mutated code is in it. A mutation whose
# site is no longer found fails the test: the pattern must follow the code.
set -u
cd "$(dirname "$0")/.."
BFSYNC=${BFSYNC:-build/bfsync}
BFCHECK=${BFCHECK:-build/proof/bfcheck}
[[ -x $BFCHECK ]] || { echo "proof_mutation.sh: FAIL: $BFCHECK is missing: run make proof" >&2; exit 1; }
BUILD_DIR=$(dirname "$BFSYNC")
[[ -d $BUILD_DIR/obj ]] || { echo "proof_mutation.sh: FAIL: no objects in $BUILD_DIR (build bfsync first)" >&2; exit 1; }
export BFSYNC_BFCHECK=$PWD/$BFCHECK
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 caught=0

fail() {
  echo "proof_mutation.sh: FAIL: $*" >&2
  failures=$((failures + 1))
}

# The copy: sources with their times, and the objects built from them, in
# a build directory of the same name (under make, the sub-make inherits the
# flags of this build: make test-asan's SAN=1 OPT=-O1 too).
tree=$tmp/tree
rel=$(basename "$BUILD_DIR")
mkdir -p "$tree/$rel"
tar -cf - --exclude=./.git --exclude=./build --exclude='./build-*' . | tar -C "$tree" -xf -
cp -a "$BUILD_DIR/obj" "$BUILD_DIR/gen" "$BUILD_DIR/libbfrt.a" "$tree/$rel/"
[[ -d $BUILD_DIR/include ]] && cp -a "$BUILD_DIR/include" "$tree/$rel/"
cp -a "$BFSYNC" "$tree/$rel/bfsync"

# The runs each mutation is tried on, in order, until one is rejected.
runs=(
  "examples/matmul.bfk M=2 N=2 K=3"
  "tests/kernels/device_ints.bfk N=6"
  "tests/kernels/triangular.bfk N=3"
  "tests/kernels/producer_loop.bfk N=3 M=2"
  "tests/kernels/carried_reads.bfk N=3"
  "tests/kernels/branch_loops.bfk N=3 K=2"
  "tests/kernels/distance3.bfk N=4"
  "examples/moe.bfk $(sed -n 's#^// params:##p' examples/moe.bfk | head -1)"
  "examples/attention.bfk $(sed -n 's#^// params:##p' examples/attention.bfk | head -1)"
)
# Regions at their edges: views of one slot that share exactly one column
# (act's y[:, 0:9] and dve's y[:, 8:16], so dve waits) or are adjacent
# (views.bfk's halves, which never wait for each other).
cat >"$tmp/edges.bfk" <<'EOF'
kernel edges(N: int) {
  hbm in X: f32[8, 16];
  hbm out Y: f32[8, 16];
  sbuf x: f32[8, 16];
  sbuf y: f32[8, 16];
  for i in 0 .. N {
    dma: load x, X[0, 0];
    act: exp y[:, 0:9], x[:, 0:9];
    dve: scale y[:, 8:16], x[:, 8:16], 2.0;
    dma: store Y[0, 0], y;
  }
}
EOF
runs+=("$tmp/edges.bfk N=2" "tests/kernels/views.bfk N=2 C=0")
for seed in 1 2 3 4 5 6; do
  "$BFSYNC" gen --seed "$seed" >"$tmp/gen$seed.bfk" 2>/dev/null
  runs+=("$tmp/gen$seed.bfk $("$BFSYNC" gen --seed "$seed" --params 2>/dev/null)")
done

# rejected: the first run whose validator verdict is not exact, or nothing.
rejected() {
  local run file kv args
  for run in "${runs[@]}"; do
    read -r file kv <<<"$run"
    args=()
    for kv in ${run#"$file"}; do args+=(-p "$kv"); done
    [[ $file == /* ]] || file=$PWD/$file
    (cd "$tree" && "$rel/bfsync" verify "$file" "${args[@]}" --schedules 1 --json) >"$tmp/out" 2>/dev/null
    if ! grep -q '"validator": "exact"' "$tmp/out"; then
      echo "$run: $(sed -n 's/.*"validator": "\([a-z-]*\)".*"validator_detail": "\(.*\)"}$/\1: \2/p' "$tmp/out" | cut -c1-160)"
      return
    fi
  done
}

# mutate NAME FILE PERL: apply the substitution to FILE in the copy (it
# must change something), rebuild, try the runs, restore.
mutate() {
  local name=$1 file=$2 code=$3
  cp -p "$tree/$file" "$tmp/orig"
  perl -0pi -e "$code" "$tree/$file"
  if cmp -s "$tree/$file" "$tmp/orig"; then
    fail "$name: the mutation's site is not in $file any more"
    return
  fi
  if ! make -C "$tree" --no-print-directory BUILD="$rel" "$rel/bfsync" >"$tmp/make.log" 2>&1; then
    fail "$name: the mutated tree does not build: $(grep -m1 "error:" "$tmp/make.log")"
  else
    local why
    why=$(rejected)
    if [[ -n $why ]]; then
      caught=$((caught + 1))
      [[ -n ${VERBOSE:-} ]] && echo "proof_mutation.sh: $name: caught on $why"
    else
      fail "$name: no run's validator rejected it (${#runs[@]} runs)"
    fi
  fi
  cp "$tmp/orig" "$tree/$file" # a new time: the next build recompiles it
}

# The site of each threshold form, in whichever transform file holds it.
site() {
  local f
  f=$(cd "$tree" && grep -lF -- "$1" transform/*.c | head -1)
  echo "${f:-transform/barrier_free.c}"
}

mutate "emit_c prints every wait one lower" backend/emit_c.c \
  's/(put_ir_expr\(em, n->threshold\);)/$1 fputs(" - 1", em->out);/'
mutate "deps.c classifies an hbm store's destination as a read" transform/deps.c \
  's/add_access\(in, d->k->ntiles \+ o->decl, bfrt_op_writes\(s->op, i\), o\);/add_access(in, d->k->ntiles + o->decl, bfrt_op_writes(s->op, i) \&\& s->op != BFRT_STORE, o);/'
mutate "device-integer reads shared between elements of one tensor" "$(site 'ir_expr_equal(sh->elem[i], e)')" \
  's/if \(ir_expr_equal\(sh->elem\[i\], e\)\) return ir_leaf/if (sh->elem[i]->id == e->id) return ir_leaf/'
# deps.c's region test (views, element slices) with each interval one
# element narrower (a one-column overlap missed: an early wait) or wider
# (adjacent views conflict: a late one).
mutate "deps.c's region test: intervals one narrower" transform/deps.c \
  's/return -ex < f\.c && f\.c < ey \? REL_SAME : REL_DIFFERENT;/return -ex + 1 < f.c \&\& f.c < ey - 1 ? REL_SAME : REL_DIFFERENT;/'
mutate "deps.c's region test: intervals one wider" transform/deps.c \
  's/return -ex < f\.c && f\.c < ey \? REL_SAME : REL_DIFFERENT;/return -ex <= f.c \&\& f.c <= ey ? REL_SAME : REL_DIFFERENT;/'
# QUICK (the sanitizer pass, whose rebuilds are slower): the tracked form only.
for d in -1 1; do
  word=$([[ $d == -1 ]] && echo lower || echo higher)
  [[ -z ${QUICK:-} ]] && mutate "closed-form threshold one $word" "$(site 'NEED_CLOSED) return at;')" \
    "s/if \\(n->kind == NEED_CLOSED\\) return at;/if (n->kind == NEED_CLOSED) return ir_binary(p->arena, IX_ADD, at, ir_const(p->arena, $d), 0);/"
  [[ -z ${QUICK:-} ]] && mutate "last-iteration threshold one $word" "$(site 'IX_MAX, closed_threshold(b, n->before), last, 0)')" \
    "s/return (ir_binary\\(p->arena, IX_MAX, closed_threshold\\(b, n->before\\), last, 0\\));/return ir_binary(p->arena, IX_ADD, \$1, ir_const(p->arena, $d), 0);/"
  mutate "tracked threshold one $word" "$(site 'tracked wait at line')" \
    "s/(tracked wait at line[^\\n]*\\n\\s*)return t;/\$1return ir_binary(b->p->arena, IX_ADD, t, ir_const(b->p->arena, $d), 0);/"
  [[ -z ${QUICK:-} ]] && mutate "tracked position stored one $word" "$(site 'store->value = position;')" \
    "s/store->value = position;/store->value = ir_binary(b->p->arena, IX_ADD, position, ir_const(b->p->arena, $d), 0);/"
done

echo "proof_mutation.sh: $caught mutations of bfsync caught by the proof's validator on its emitted code"
if ((failures)); then
  echo "proof_mutation.sh: $failures failure(s)" >&2
  exit 1
fi

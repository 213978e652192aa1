# bfsync build. `make` builds build/bfsync and build/libbfrt.a (and copies
# the runtime headers to build/include/bfsync/, where bfsync finds them);
# `make test` runs every test, then the unit and script tests again under
# ASan+UBSan; `make run` is the main job. Those two call `make deps` first,
# which installs what is missing; plain `make` never does.

VERSION   = 0.1.0
BUILD    ?= build
CC       ?= gcc
SAN      ?=
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
BASEFLAGS = -std=c11 -Wall -Wextra -Werror -I. -I$(BUILD)/gen -Iruntime \
            -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -pthread \
            -DBFSYNC_SOURCE_DIR='"$(CURDIR)"' -DBFSYNC_VERSION='"$(VERSION)"' $(if $(SAN),-fsanitize=address$(,)undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
,        := ,
LDLIBS    = -ltcc -ldl -lpthread -lm
# One set of objects for the executable and libbfsync.so; no interposition
# inside the library, so calls between its files stay direct.
OBJFLAGS  = -fPIC -fno-semantic-interposition
GENFLAGS  = -Wno-unused-function -Wno-sign-compare -Wno-unused-parameter

DEBS = flex bison tcc libtcc-dev libcmocka-dev python3 clang libclang-rt-14-dev valgrind vim python3-numpy python3-pytest

# The layers, bottom up (docs/layers.md): util, runtime, target, frontend,
# transform, backend, harness, driver.
COMPILER_SRC = $(sort $(wildcard util/*.c target/*.c frontend/*.c transform/*.c backend/*.c harness/*.c driver/*.c))
RUNTIME_SRC  = $(sort $(wildcard runtime/*.c))
ifneq ($(wildcard dsl/parser.y),)
GEN_SRC      = $(BUILD)/gen/dsl/parser.c $(BUILD)/gen/dsl/lexer.c
GEN_HDR      = $(BUILD)/gen/dsl/parser.h $(BUILD)/gen/dsl/lexer.h
endif
COMPILER_OBJ = $(COMPILER_SRC:%.c=$(BUILD)/obj/%.o) $(GEN_SRC:$(BUILD)/gen/%.c=$(BUILD)/obj/%.o)
LIB_OBJ      = $(filter-out $(BUILD)/obj/driver/main.o,$(COMPILER_OBJ))
# libbfrt carries the one target-file reader (bfrt_costs_load, in target/) and
# the utilities it uses; runtime/ itself includes nothing above util/.
RUNTIME_OBJ  = $(RUNTIME_SRC:%.c=$(BUILD)/obj/%.o) \
               $(addprefix $(BUILD)/obj/,target/costs_file.o target/target_file.o util/diag.o util/arena.o util/numbers.o util/clock.o util/json_write.o)
PUBLIC_HDR   = runtime/bfrt.h runtime/bfrt_kernel.h runtime/bfrt_cost.h runtime/ops.def
BUILD_HDR    = $(PUBLIC_HDR:runtime/%=$(BUILD)/include/bfsync/%)
UNIT_SRC     = $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN     = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_SCRIPTS = $(filter-out tests/lib.sh,$(sort $(wildcard tests/*.sh)))
NARROW_TARGETS = targets/trn1_c4.target targets/trn1_c8.target targets/trn1_c16.target
# `make check`: the quick loop (release build, unit tests, the script tests
# that take seconds, not minutes); `make test` runs everything.
CHECK_SCRIPTS = $(addprefix tests/,frontend.sh transform.sh resources.sh gen.sh layers.sh makefile.sh host.sh timeline.sh \
                  editors.sh verify.sh inputs.sh nd.sh)
# Every part of a test run prints its wall time (.ci/timed).
TIMED = bash .ci/timed

# `make` builds the proof's checker too when coq and ocaml are installed
# (then `bfsync verify` validates every run); without them verify says the
# validator is not available, and `make proof` installs them.
PROOF_DIR    = build/proof
PROOF_IF_COQ := $(if $(and $(shell command -v coqc 2>/dev/null),$(shell command -v ocamlopt 2>/dev/null)),$(PROOF_DIR)/bfcheck)

.PHONY: all deps check test test-unit test-scripts test-asan test-update run bench bench-compile bench-resources bench-paper install clean fuzz-kernels fuzz exhaustive
all: $(BUILD)/bfsync $(BUILD)/libbfrt.a $(BUILD_HDR) $(NARROW_TARGETS) $(PROOF_IF_COQ) $(BUILD)/libbfsync.so

deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; fi

$(BUILD)/gen/dsl/parser.c $(BUILD)/gen/dsl/parser.h: dsl/parser.y
	@mkdir -p $(dir $@)
	bison -Wall -Werror --defines=$(BUILD)/gen/dsl/parser.h -o $(BUILD)/gen/dsl/parser.c $<

$(BUILD)/gen/dsl/lexer.c $(BUILD)/gen/dsl/lexer.h: dsl/lexer.l
	@mkdir -p $(dir $@)
	flex --header-file=$(BUILD)/gen/dsl/lexer.h -o $(BUILD)/gen/dsl/lexer.c $<

# Objects are rebuilt when the flags that compile them change (a build
# folder made before OBJFLAGS would not link): $(BUILD)/flags holds them.
FLAGS_TEXT := $(CC) $(BASEFLAGS) $(CFLAGS) $(OBJFLAGS) $(GENFLAGS)
FLAGS_FILE  = $(BUILD)/flags
ifneq ($(file <$(FLAGS_FILE)),$(FLAGS_TEXT))
$(shell mkdir -p $(BUILD))
$(file >$(FLAGS_FILE),$(FLAGS_TEXT))
endif

$(BUILD)/obj/dsl/%.o: $(BUILD)/gen/dsl/%.c $(GEN_HDR) $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) $(OBJFLAGS) $(GENFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: %.c $(GEN_HDR) $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) $(OBJFLAGS) -MMD -MP -c $< -o $@

# The headers generated kernels include, beside bfsync as in an installed prefix.
$(BUILD)/include/bfsync/%: runtime/%
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/libbfrt.a: $(RUNTIME_OBJ)
	ar rcs $@ $^

$(BUILD)/bfsync: $(COMPILER_OBJ) $(BUILD)/libbfrt.a | $(BUILD_HDR)
	$(CC) $(BASEFLAGS) $(CFLAGS) -rdynamic -o $@ $(COMPILER_OBJ) $(BUILD)/libbfrt.a $(LDLIBS)

# libbfsync.so, the C API of api/bfsync.h that the Python module binds
# (docs/python.md): every layer but the driver, exporting only bfs_* and the
# runtime's bfrt_* that the kernels it compiles call (backend/jit_dl.c).
# Every object is compiled once, position independent (OBJFLAGS), and serves
# both the executable and the library; only the two JIT files differ
# (BFSYNC_SHARED) and have a second object in $(BUILD)/pic/.
API_SRC    = $(sort $(wildcard api/*.c))
SHARED_SRC = backend/jit.c backend/jit_dl.c
PIC_OBJ    = $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out driver/% $(SHARED_SRC),$(COMPILER_SRC)) $(RUNTIME_SRC) $(API_SRC)) \
             $(GEN_SRC:$(BUILD)/gen/%.c=$(BUILD)/obj/%.o) $(SHARED_SRC:%.c=$(BUILD)/pic/%.o)
$(BUILD)/pic/%.o: %.c $(GEN_HDR) $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) $(OBJFLAGS) -DBFSYNC_SHARED -MMD -MP -c $< -o $@
$(BUILD)/libbfsync.so: $(PIC_OBJ) api/libbfsync.map | $(BUILD_HDR)
	$(CC) $(BASEFLAGS) $(CFLAGS) -shared -Wl,-soname,libbfsync.so -Wl,--version-script=api/libbfsync.map \
	  -Wl,--no-undefined -o $@ $(PIC_OBJ) -ldl -lpthread -lm

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJ) $(BUILD)/libbfrt.a $(BUILD_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -rdynamic -o $@ $< $(LIB_OBJ) $(BUILD)/libbfrt.a -lcmocka $(LDLIBS)

test:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory test-unit test-scripts
	@$(MAKE) --no-print-directory test-asan

test-unit: $(UNIT_BIN)
	@$(TIMED) "unit tests$(if $(SAN), (ASan),)" sh -c 'set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done'

# The script tests run TEST_JOBS at a time (one per core), the slowest
# first; make prints each one's output whole when it ends (-O), with its time.
TEST_JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
SLOW_SCRIPTS = $(addprefix tests/,exhaustive.sh sim.sh baselines.sh run.sh resources.sh nki_ports.sh timing.sh campaign.sh fuzz.sh hostile.sh mutation.sh)
SCRIPT_RUNS  = $(addprefix run-,$(filter $(TEST_SCRIPTS),$(SLOW_SCRIPTS)) $(filter-out $(SLOW_SCRIPTS),$(TEST_SCRIPTS)))
.PHONY: $(SCRIPT_RUNS)
test-scripts: all
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) -O $(SCRIPT_RUNS)
$(SCRIPT_RUNS): run-%:
	@echo "== $*"; BFSYNC=$(BUILD)/bfsync BUILD=$(BUILD) $(TIMED) "$*$(if $(SAN), (ASan),)" bash $*

# The unit tests and the script tests again, built with ASan and UBSan.
test-asan:
	@$(TIMED) "the sanitizer pass" $(MAKE) --no-print-directory BUILD=build-asan SAN=1 OPT=-O1 QUICK=1 test-unit test-scripts

# The edit-compile-test loop: about a minute and a half.
check: all $(UNIT_BIN)
	@$(MAKE) --no-print-directory test-unit
	@set -e; for t in $(CHECK_SCRIPTS); do echo "== $$t"; BFSYNC=$(BUILD)/bfsync BUILD=$(BUILD) $(TIMED) "$$t" bash $$t; done

# Regenerate every golden file; review the diff before committing.
test-update: all
	@set -e; for t in $(TEST_SCRIPTS); do BFSYNC=$(BUILD)/bfsync BUILD=$(BUILD) UPDATE=1 bash $$t; done

run:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	@bash driver/run-main.sh $(BUILD)/bfsync

bench: all
	@bash bench/run.sh $(BUILD)/bfsync

# Only the compile section of bench/results.md (the others are kept).
bench-compile: all
	@COMPILE_ONLY=1 bash bench/run.sh $(BUILD)/bfsync

# Only the paper's table on trn2 in bench/results.md (the others are kept).
bench-paper: all
	@PAPER_ONLY=1 bash bench/run.sh $(BUILD)/bfsync

# Only the resources section of bench/results.md (the others are kept).
bench-resources: all
	@RESOURCES_ONLY=1 bash bench/run.sh $(BUILD)/bfsync

# Verification at scale (docs/correctness.md). fuzz-kernels: the
# differential campaign over N random kernels from seed FROM (the documented
# long campaign is the default: 100,000 kernels, gcc on every 100th seed);
# exhaustive: every kernel of the small scope, every engine at 3
# instructions, through the oracle (tests/exhaustive.sh runs a smaller bound).
N    ?= 100000
FROM ?= 1000000
SIZE ?= 40
JOBS ?= 2
fuzz-kernels: all
	$(BUILD)/bfsync campaign --from $(FROM) --count $(N) --size $(SIZE) --jobs $(JOBS) --gcc-every 100

exhaustive: all
	FULL=1 BFSYNC=$(BUILD)/bfsync BUILD=$(BUILD) bash tests/exhaustive.sh

# libFuzzer over parse + check + the fmt round trip, the frontend and the
# generated parser compiled by clang with ASan and UBSan: `make fuzz
# SECONDS=3600` fuzzes that long; the corpus grows in $(BUILD)/fuzz/corpus.
SECONDS ?= 600
FUZZ_BIN   = $(BUILD)/fuzz/fuzz_frontend
FUZZ_SRC   = tests/fuzz/fuzz_frontend.c $(wildcard util/*.c target/*.c frontend/*.c) runtime/ops.c $(GEN_SRC)
FUZZ_FLAGS = -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
             -I. -I$(BUILD)/gen -Iruntime -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Wno-unused-function
$(FUZZ_BIN): $(FUZZ_SRC) $(GEN_HDR) $(wildcard util/*.h target/*.h frontend/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -o $@ $(FUZZ_SRC)

fuzz: $(FUZZ_BIN)
	bash tests/fuzz/run.sh $(FUZZ_BIN) $(SECONDS) $(BUILD)/fuzz/corpus

PREFIX ?= /usr/local
# The Python package (docs/python.md): PYTHONPATH=$(PYTHON_SITE) imports it,
# and it finds PREFIX/lib/libbfsync.so three folders up from itself.
PYTHON_SITE = $(PREFIX)/lib/python3/site-packages
# PREFIX/bin/bfsync finds the headers in PREFIX/include/bfsync/ (never in
# the source tree), so an installed bfsync works after the tree is gone.
# Every path is one shell word, whatever PREFIX holds (spaces, &, quotes):
# shell_quote wraps it in single quotes, each ' written '\''; in the .pc
# file's sed replacement, \, | and & are escaped too.
shell_quote = '$(subst ','\'',$(1))'
sed_escape  = $(subst &,\&,$(subst |,\|,$(subst \,\\,$(1))))
DEST        = $(DESTDIR)$(PREFIX)
install: all
	install -d $(call shell_quote,$(DEST)/bin) $(call shell_quote,$(DEST)/include/bfsync) $(call shell_quote,$(DEST)/lib/pkgconfig)
	install -m 755 $(BUILD)/bfsync $(call shell_quote,$(DEST)/bin/bfsync)
	install -m 644 $(PUBLIC_HDR) $(call shell_quote,$(DEST)/include/bfsync/)
	install -m 644 $(BUILD)/libbfrt.a $(call shell_quote,$(DEST)/lib/libbfrt.a)
	sed $(call shell_quote,s|@PREFIX@|$(call sed_escape,$(PREFIX))|; s|@VERSION@|$(VERSION)|) runtime/bfrt.pc.in \
	  > $(call shell_quote,$(DEST)/lib/pkgconfig/bfrt.pc)
	install -m 755 $(BUILD)/libbfsync.so $(call shell_quote,$(DEST)/lib/libbfsync.so)
	install -m 644 api/bfsync.h $(call shell_quote,$(DEST)/include/bfsync/bfsync.h)
	install -d $(call shell_quote,$(DESTDIR)$(PYTHON_SITE)/bfsync)
	install -m 644 python/bfsync/*.py $(call shell_quote,$(DESTDIR)$(PYTHON_SITE)/bfsync/)

clean:
	rm -rf build build-asan

-include $(shell find $(BUILD)/obj $(BUILD)/pic -name '*.d' 2>/dev/null)

# The default target is targets/trn1.target itself, embedded with .incbin,
# which the compiler's dependency files do not see.
$(BUILD)/obj/target/target.o: targets/trn1.target

# The test targets with narrow counters (docs/targets.md) are trn1.target
# with another name and counter_bits, derived here so they never drift
# (NARROW_TARGETS is defined above `all`, which names them).
targets/trn1_c%.target: targets/trn1.target
	awk -v bits=$* -f targets/narrow.awk $< >$@.tmp && mv $@.tmp $@

# The Coq development (docs/proof.md). `make proof` checks every proof,
# fails unless each main theorem is closed under the global context, and
# builds build/proof/bfcheck, the extracted threshold function and
# validator that bfsync verify (and so tests/proof.sh) runs on the emitted
# C, with its table of operands generated from runtime/ops.def. `make test`
# runs it before the script tests.
PROOF_V   = Model Transform Machine Narrow Theorems Validate Pipeline Extract
DEBS     += coq ocaml-nox
.PHONY: proof
proof:
	@$(MAKE) --no-print-directory deps
	@$(TIMED) proof $(MAKE) --no-print-directory $(PROOF_DIR)/bfcheck
$(PROOF_DIR)/bfcheck: $(wildcard proof/*.v) proof/bfcheck.ml proof/check_assumptions.sh proof/ops_table.awk runtime/ops.def
	@rm -rf $(PROOF_DIR) && mkdir -p $(PROOF_DIR) && cp proof/*.v proof/bfcheck.ml $(PROOF_DIR)/
	awk -f proof/ops_table.awk runtime/ops.def >$(PROOF_DIR)/opstable.ml
	cd $(PROOF_DIR) && for f in $(PROOF_V); do coqc -q -Q . BF $$f.v || exit 1; done
	bash proof/check_assumptions.sh $(PROOF_DIR)
	cd $(PROOF_DIR) && ocamlopt -o bfcheck.tmp thresholds.mli thresholds.ml opstable.ml bfcheck.ml && mv bfcheck.tmp bfcheck
test-scripts: proof

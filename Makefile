# tqmon - a relational, temporal monitor.
#
#   make          build build/tqmon and build/libtqmon.a (tests/deps.sh build
#                 installs with apt-get what is missing: a C compiler, make,
#                 lemon, flex, clang, bpftool, and the headers of SQLite,
#                 PCP (client, import, PMDA), libbpf, libelf, zlib, libdw)
#   make run      build, then run the paper's example into tqmon.db and draw
#                 its display into build/paper.html
#   make test     build under AddressSanitizer+UBSan and run every test
#   make bench    benchmarks (figures side by side with their peers)
#   make prop-long  the property tests on 20000 pairs (PROP_PAIRS=N)
#   make fuzz     libFuzzer run of the front end and the recording parser
#                 (clang; FUZZ_TIME=seconds, default 60; tests/fuzz/README.md)
#   make fuzz-colfil  the same for the collection-file reader
#   make install  PREFIX=/usr/local DESTDIR=: the binary, libtqmon.a and
#                 libtqsensor.a, their headers, pkg-config files (tqmon.pc,
#                 tqsensor.pc), man pages tqmon(1), libtqmon(3) and
#                 tqmon-language(7) (go-md2man from docs/), the sensor
#                 configurations and bash completion, and the PCP agent
#                 pmdatqmon with its Install and Remove scripts, namespace
#                 and help in PMDADIR ($(PREFIX)/libexec/pcp/pmdas/tqmon;
#                 PMDADIR=/var/lib/pcp/pmdas/tqmon beside PCP's own)
#
# Generated files (lemon parser, flex scanner) go to build/gen and are never
# committed.  Warnings are errors (-Werror) in every build.

CC      ?= cc
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes
OPT     ?= -O2 -g
ASANF   := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LIBS    := -lsqlite3 -ldw -lelf -lm -ldl -lpthread -lrt

B       := build
GEN     := $(B)/gen
# The source folders, in the layer order of docs/design.md (each uses only
# those before it; tests/scripts/layers.sh checks it).
LAYERS  := base algebra grammar compiler runtime sensors display app
LIBSRC  := $(filter-out app/main.c sensors/tqsensor.c sensors/pmdatqmon.c sensors/pmdatqmon_kernel.c,$(foreach d,$(LAYERS),$(wildcard $(d)/*.c)))
GENSRC  := $(GEN)/tq.c $(GEN)/lex.c $(GEN)/page.c $(GEN)/flame.c $(GEN)/session.c
HDRS    := $(foreach d,$(LAYERS),$(wildcard $(d)/*.h)) include/tqmon.h include/tqmon_pm.h $(GEN)/tq.h
INC     := -I$(GEN) -Ibase -Igrammar -Icompiler -Ialgebra -Isensors -Iruntime -Idisplay -Iinclude

# The kernel sensors (sensors/kernel/ks.bpf.c): compiled with clang for BPF
# against the running kernel's BTF (vmlinux.h), their skeleton made by
# bpftool, and the system call names taken from the kernel headers, all in
# build/gen.  Without BTF on the build machine the kernel PMs are built
# without BPF and refuse to start (sensors/kernel.md).
KS_BTF  := $(wildcard /sys/kernel/btf/vmlinux)
ifneq ($(KS_BTF),)
KS_GEN  := $(GEN)/ks.skel.h $(GEN)/ks_syscalls.h
LIBS    += -lbpf -lelf -lz
else
KS_GEN  :=
KS_NOBPF := -DTQ_KERNEL_NO_BPF
endif
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/' -e 's/s390x/s390/')

OBJ      := $(patsubst %.c,$(B)/obj/%.o,$(LIBSRC)) $(B)/obj/gen/tq.o $(B)/obj/gen/lex.o $(B)/obj/gen/page.o $(B)/obj/gen/flame.o $(B)/obj/gen/session.o
ASANOBJ  := $(patsubst %.c,$(B)/asan/%.o,$(LIBSRC)) $(B)/asan/gen/tq.o $(B)/asan/gen/lex.o $(B)/asan/gen/page.o $(B)/asan/gen/flame.o $(B)/asan/gen/session.o

.PHONY: all run test bench deps clean fuzz fuzz-colfil install man
all: deps $(B)/tqmon $(B)/libtqmon.a $(B)/libtqsensor.a $(B)/paper-gen $(B)/pmdatqmon

# ---------------------------------------------------------------- dependencies
# Installs what the build needs on a fresh Debian machine, only when missing.
deps: $(B)/.deps
$(B)/.deps:
	@sh tests/deps.sh build
	@mkdir -p $(B) && touch $@

# ---------------------------------------------------------------- generated code
# one lemon run makes both files (a grouped target: make -j runs it once)
$(GEN)/tq.c $(GEN)/tq.h &: grammar/tq.y | $(B)/.deps
	@mkdir -p $(GEN)
	cp grammar/tq.y $(GEN)/tq.y
	lemon -q -s -d$(GEN) $(GEN)/tq.y > $(GEN)/lemon.log 2>&1 || { cat $(GEN)/lemon.log; echo "lemon: conflicts or errors in grammar/tq.y"; rm -f $(GEN)/tq.c; exit 1; }
	touch $(GEN)/tq.c $(GEN)/tq.h

$(GEN)/lex.c: grammar/tq.l $(GEN)/tq.h | $(B)/.deps
	@mkdir -p $(GEN)
	flex -o $@ grammar/tq.l

# The display's page template (HTML, CSS, JavaScript) as a C string.
$(GEN)/page.c: display/page.html display/page2c.sh
	@mkdir -p $(GEN)
	sh display/page2c.sh display/page.html > $@
# tqmon report's flame graph page, the same way.
$(GEN)/flame.c: app/flame.html display/page2c.sh
	@mkdir -p $(GEN)
	sh display/page2c.sh app/flame.html appFlameHtml > $@
# tqmon daemon's live page (--serve), the same way.
$(GEN)/session.c: app/session.html display/page2c.sh
	@mkdir -p $(GEN)
	sh display/page2c.sh app/session.html appSessionHtml > $@

$(GEN)/vmlinux.h: | $(B)/.deps
	@mkdir -p $(GEN)
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@
$(GEN)/ks.bpf.o: sensors/kernel/ks.bpf.c sensors/kernel/ks.h $(GEN)/vmlinux.h
	clang -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -I$(GEN) -Isensors/kernel -c $< -o $@
$(GEN)/ks.skel.h: $(GEN)/ks.bpf.o
	bpftool gen skeleton $< name ks_bpf > $@.tmp && mv $@.tmp $@
# the system call names of this architecture, from its kernel headers
$(GEN)/ks_syscalls.h: | $(B)/.deps
	@mkdir -p $(GEN)
	{ echo '/* generated from <asm/unistd.h> by the Makefile */'; \
	  echo 'static const char *const ksSyscallNames[] = {'; \
	  echo '#include <asm/unistd.h>' | $(CC) -E -dM -x c - | \
	    sed -n 's/^#define __NR_\([a-z0-9_]*\) \([0-9][0-9]*\)$$/  [\2] = "\1",/p' | sort -t '[' -k2 -n; \
	  echo '};'; } > $@.tmp && mv $@.tmp $@
$(B)/obj/sensors/kernel.o $(B)/asan/sensors/kernel.o $(B)/fuzz/sensors/kernel.o: $(KS_GEN) sensors/kernel/ks.h
$(B)/obj/sensors/ksbpf.o $(B)/asan/sensors/ksbpf.o $(B)/fuzz/sensors/ksbpf.o: $(KS_GEN) sensors/kernel/ks.h

# ---------------------------------------------------------------- release build
$(B)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) $(INC) $(KS_NOBPF) -c $< -o $@
$(B)/obj/gen/%.o: $(GEN)/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) -w $(INC) -c $< -o $@

$(B)/libtqmon.a: $(OBJ)
	rm -f $@ && ar rcs $@ $(OBJ)
$(B)/tqmon: app/main.c $(B)/libtqmon.a $(HDRS)
	$(CC) $(CSTD) $(WARN) $(OPT) $(INC) app/main.c $(B)/libtqmon.a $(LIBS) -o $@

# The runtime of generated sensors, linked into monitored programs (it
# depends on nothing of tqmon; -fPIC so it can go into shared objects too).
$(B)/obj/tqsensor.o: sensors/tqsensor.c sensors/tqsensor.h sensors/tqshm.h sensors/tqshmgc.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) -fPIC -c sensors/tqsensor.c -o $@
$(B)/libtqsensor.a: $(B)/obj/tqsensor.o
	rm -f $@ && ar rcs $@ $<

# The tqmon PCP agent (sensors/pmdatqmon.md): a program of its own that
# uses nothing of tqmon but the segment's header, and libpcp_pmda.
# Its kernel part (-k, sensors/pmdatqmon_kernel.c) loads the kernel sensors'
# BPF object itself (the skeleton of sensors/kernel/ks.bpf.c) through
# sensors/ksbpf.c, which the kernel PMs link too, without tqmon's engine;
# without BTF it is built without BPF and says so at -k.
PMDALIBS := -lpcp_pmda -lpcp -lpthread $(if $(KS_BTF),-lbpf -lelf -lz)
PMDASRC  := sensors/pmdatqmon.c sensors/pmdatqmon_kernel.c sensors/ksbpf.c
PMDADEPS := $(PMDASRC) sensors/pmdatqmon_kernel.h sensors/ksbpf.h sensors/tqshm.h sensors/tqshmbus.h sensors/tqshmgc.h sensors/kernel/ks.h $(KS_GEN)
$(B)/pmdatqmon: $(PMDADEPS)
	@mkdir -p $(B)
	$(CC) $(CSTD) $(WARN) $(OPT) -I$(GEN) -Isensors $(KS_NOBPF) $(PMDASRC) $(PMDALIBS) -o $@
$(B)/asan/pmdatqmon: $(PMDADEPS)
	@mkdir -p $(B)/asan
	$(CC) $(CSTD) $(WARN) $(ASANF) -I$(GEN) -Isensors $(KS_NOBPF) $(PMDASRC) $(PMDALIBS) -o $@
# Its PCP files are in sensors/pmdatqmon/ (Install, Remove, domain.h, pmns,
# root, help).  For the tests' own pmcds: the namespace with the domain's
# number and a root (pmnsmerge takes it), and the help compiled by PCP's
# newhelp (the agent's -h).
PCP_BINADM := $(shell . /etc/pcp.conf 2>/dev/null && echo $$PCP_BINADM_DIR)
$(B)/pmdatqmon.pmns: sensors/pmdatqmon/pmns sensors/pmdatqmon/domain.h
	@mkdir -p $(B)
	{ printf 'root {\n    tqmon\n}\n'; sed "s/TQMON:/$$(sed -n 's/^#define TQMON //p' sensors/pmdatqmon/domain.h):/" sensors/pmdatqmon/pmns; } >$@
$(B)/pmdatqmon.help.dir: sensors/pmdatqmon/help $(B)/pmdatqmon.pmns
	sed "/^@ TQMON\./s/TQMON\./$$(sed -n 's/^#define TQMON //p' sensors/pmdatqmon/domain.h)./" sensors/pmdatqmon/help | \
	    $(PCP_BINADM)/newhelp -n $(B)/pmdatqmon.pmns -o $(B)/pmdatqmon.help
# a PMAPI client of the agent for the tests: enables, fetches, prints
$(B)/asan/tqpcpclient: tests/pcp/tqpcpclient.c
	@mkdir -p $(B)/asan
	$(CC) $(CSTD) $(WARN) $(ASANF) tests/pcp/tqpcpclient.c -lpcp -o $@

$(B)/paper-gen: examples/paper/gen.c
	@mkdir -p $(B)
	$(CC) $(CSTD) $(WARN) $(OPT) examples/paper/gen.c -o $@

# ---------------------------------------------------------------- sanitizer build (tests)
$(B)/asan/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(ASANF) -DTQ_TESTING $(INC) $(KS_NOBPF) -c $< -o $@
$(B)/asan/gen/%.o: $(GEN)/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(ASANF) -w $(INC) -c $< -o $@
$(B)/asan/libtqmon.a: $(ASANOBJ)
	rm -f $@ && ar rcs $@ $(ASANOBJ)
$(B)/asan/tqmon: app/main.c $(B)/asan/libtqmon.a $(HDRS)
	$(CC) $(CSTD) $(WARN) $(ASANF) -DTQ_TESTING $(INC) app/main.c $(B)/asan/libtqmon.a $(LIBS) -o $@
$(B)/asan/prop: tests/prop.c $(B)/asan/libtqmon.a $(HDRS)
	$(CC) $(CSTD) $(WARN) $(ASANF) -DTQ_TESTING $(INC) tests/prop.c $(B)/asan/libtqmon.a $(LIBS) -o $@
$(B)/prop: tests/prop.c $(B)/libtqmon.a $(HDRS)
	$(CC) $(CSTD) $(WARN) $(OPT) $(INC) tests/prop.c $(B)/libtqmon.a $(LIBS) -o $@
$(B)/asan/unit: tests/unit.c $(B)/asan/libtqmon.a $(HDRS)
	$(CC) $(CSTD) $(WARN) $(ASANF) -DTQ_TESTING $(INC) tests/unit.c $(B)/asan/libtqmon.a $(LIBS) -o $@
# the benchmark's network driver, under the sanitizers (tests/scripts/netbench_hint.sh)
$(B)/asan/netbench: bench/netbench.c $(B)/asan/libtqmon.a $(HDRS)
	$(CC) $(CSTD) $(WARN) $(ASANF) -DTQ_TESTING $(INC) bench/netbench.c $(B)/asan/libtqmon.a $(LIBS) -o $@

# ---------------------------------------------------------------- fuzzing (clang + libFuzzer)
# The library is compiled again with clang into build/fuzz (the main builds
# may use gcc, and libFuzzer needs clang's coverage instrumentation).
FUZZCC    ?= clang
FUZZF     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZOBJ   := $(patsubst %.c,$(B)/fuzz/%.o,$(LIBSRC)) $(B)/fuzz/gen/tq.o $(B)/fuzz/gen/lex.o $(B)/fuzz/gen/page.o $(B)/fuzz/gen/flame.o $(B)/fuzz/gen/session.o
FUZZ_TIME ?= 60
FUZZ_ARGS ?=

$(B)/fuzz/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZCC) $(CSTD) $(WARN) $(FUZZF) -fsanitize=fuzzer-no-link -DTQ_TESTING $(INC) $(KS_NOBPF) -c $< -o $@
$(B)/fuzz/gen/%.o: $(GEN)/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZCC) $(CSTD) $(FUZZF) -fsanitize=fuzzer-no-link -w $(INC) -c $< -o $@
$(B)/fuzz/libtqmon.a: $(FUZZOBJ)
	rm -f $@ && ar rcs $@ $(FUZZOBJ)
$(B)/fuzz/fuzz_frontend: tests/fuzz/fuzz_frontend.c $(B)/fuzz/libtqmon.a $(HDRS)
	$(FUZZCC) $(CSTD) $(WARN) $(FUZZF) -fsanitize=fuzzer -DTQ_TESTING $(INC) tests/fuzz/fuzz_frontend.c \
	    $(B)/fuzz/libtqmon.a $(LIBS) -o $@

$(B)/fuzz/fuzz_colfil: tests/fuzz/fuzz_colfil.c $(B)/fuzz/libtqmon.a $(HDRS)
	$(FUZZCC) $(CSTD) $(WARN) $(FUZZF) -fsanitize=fuzzer -DTQ_TESTING $(INC) tests/fuzz/fuzz_colfil.c \
	    $(B)/fuzz/libtqmon.a $(LIBS) -o $@

# New inputs go to build/fuzz/corpus (scratch); merge the interesting ones
# into tests/fuzz/corpus with tests/fuzz/merge.sh.  Crashes: build/fuzz/artifacts.
fuzz-colfil: deps $(B)/fuzz/fuzz_colfil
	@mkdir -p $(B)/fuzz/colfil-corpus $(B)/fuzz/artifacts
	$(B)/fuzz/fuzz_colfil -max_total_time=$(FUZZ_TIME) -max_len=4096 -timeout=5 \
	    -artifact_prefix=$(B)/fuzz/artifacts/ -print_final_stats=1 \
	    $(FUZZ_ARGS) $(B)/fuzz/colfil-corpus tests/fuzz/colfil-corpus

fuzz: deps $(B)/fuzz/fuzz_frontend
	@mkdir -p $(B)/fuzz/corpus $(B)/fuzz/artifacts
	$(B)/fuzz/fuzz_frontend -max_total_time=$(FUZZ_TIME) -max_len=65536 -timeout=5 \
	    -dict=tests/fuzz/tq.dict -artifact_prefix=$(B)/fuzz/artifacts/ -print_final_stats=1 \
	    $(FUZZ_ARGS) $(B)/fuzz/corpus tests/fuzz/corpus

# ---------------------------------------------------------------- main jobs
run: all
	rm -f tqmon.db tqmon.db-wal tqmon.db-shm
	$(B)/tqmon run examples/paper/paper.tq examples/paper/queries.tq examples/paper/display.tq \
	    --replay examples/paper/paper.trace --db tqmon.db --stats $(B)/paper-stats.json --html $(B)/paper.html
	@echo "results stored in tqmon.db (tables ResumedbyP1, RunningOnEvery10Seconds)"
	@echo "the paper's display (section 7) drawn in $(B)/paper.html: open it in a browser"
	@echo "(live: $(B)/tqmon serve examples/paper/*.tq --replay examples/paper/paper.trace --display pace=0.05)"

# Fragments add their own programs and shared objects to TEST_DEPS.
TEST_DEPS := $(B)/asan/netbench $(B)/asan/pmdatqmon $(B)/asan/tqpcpclient $(B)/pmdatqmon.pmns $(B)/pmdatqmon.help.dir
include examples/examples.mk tests/testpm.mk tests/strobe.mk tests/kernel/kernel.mk

# What the tests use beyond the build (sqlite3; chromium and playwright-core
# for the browser test, best effort), installed once when missing.
$(B)/.testdeps: tests/deps.sh tests/browser/package.json
	@sh tests/deps.sh test
	@mkdir -p $(B) && touch $@

test: deps $(B)/.testdeps $(B)/asan/tqmon $(B)/asan/unit $(B)/asan/prop $(B)/prop $(B)/tqmon $(B)/paper-gen $(TEST_DEPS)
	@LC_ALL=C sh tests/run.sh

# The property tests alone, longer (PROP_PAIRS pairs, default 20000, of the
# release build from seed 1; make test runs 200 under the sanitizers and up
# to 5000 more within 5 minutes).  A failing pair is left as a golden case
# in build/prop-long.
PROP_PAIRS ?= 20000
prop-long: $(B)/prop
	@$(B)/prop -n $(PROP_PAIRS) -s 1 -o $(B)/prop-long >$(B)/prop-long.log; rc=$$?; \
	    grep -v '^ok ' $(B)/prop-long.log; exit $$rc
.PHONY: prop-long

# ---------------------------------------------------------------- install
# Man pages from the docs with go-md2man (Debian go-md2man, installed by
# tests/deps.sh man): tqmon(1) from docs/man/tqmon.1.md with the text of
# `tqmon --help` in place of @USAGE@, tqmon-language(7) from
# docs/language.md, libtqmon(3) from docs/man/libtqmon.3.md.  The
# pkg-config files name every library libtqmon.a needs (it is static).
PREFIX  ?= /usr/local
DESTDIR ?=
PMDADIR ?= $(PREFIX)/libexec/pcp/pmdas/tqmon
VERSION := $(shell sed -n 's/^\#define TQ_VERSION "\(.*\)"/\1/p' include/tqmon.h)
MANS    := $(B)/man/tqmon.1 $(B)/man/libtqmon.3 $(B)/man/tqmon-language.7

$(B)/.mandeps: tests/deps.sh
	@sh tests/deps.sh man
	@mkdir -p $(B) && touch $@
$(B)/man/tqmon.1: docs/man/tqmon.1.md $(B)/tqmon | $(B)/.mandeps
	@mkdir -p $(B)/man
	$(B)/tqmon --help | sed -e 's/^/    /' > $(B)/man/usage.txt
	sed -e 's/@VERSION@/$(VERSION)/' docs/man/tqmon.1.md | \
	    awk -v u=$(B)/man/usage.txt '/^@USAGE@$$/ { while ((getline l < u) > 0) print l; next } { print }' | \
	    go-md2man -out $@
$(B)/man/libtqmon.3: docs/man/libtqmon.3.md | $(B)/.mandeps
	@mkdir -p $(B)/man
	sed -e 's/@VERSION@/$(VERSION)/' $< | go-md2man -out $@
$(B)/man/tqmon-language.7: docs/language.md | $(B)/.mandeps
	@mkdir -p $(B)/man
	{ printf '%% TQMON-LANGUAGE 7 "" "tqmon $(VERSION)" "Miscellaneous"\n\n'; \
	  printf '# NAME\n\ntqmon-language - the TQuel language of tqmon: sensors, queries, displays\n\n'; \
	  awk 'NR == 1 && /^# / { next } /^```/ { f = !f } !f && /^##/ { sub(/^#/, "") } { print }' $<; } | go-md2man -out $@
man: $(MANS)

# (written by the install recipe itself: they hold PREFIX)
PC_TQMON    = prefix=$(PREFIX)\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\nName: tqmon\nDescription: the tqmon engine, TQuel queries over sensors (libtqmon)\nVersion: $(VERSION)\nCflags: -I$${includedir}\nLibs: -L$${libdir} -ltqmon $(LIBS)\n
PC_TQSENSOR = prefix=$(PREFIX)\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\nName: tqsensor\nDescription: the runtime of tqmon generated sensors (tqmon sensors gen)\nVersion: $(VERSION)\nCflags: -I$${includedir}\nLibs: -L$${libdir} -ltqsensor -lpthread\n

install: all $(MANS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3 $(DESTDIR)$(PREFIX)/share/man/man7 \
	    $(DESTDIR)$(PREFIX)/share/tqmon/sensors $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 $(B)/tqmon $(DESTDIR)$(PREFIX)/bin/tqmon
	install -m 644 $(B)/libtqmon.a $(B)/libtqsensor.a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/tqmon.h include/tqmon_pm.h sensors/tqsensor.h sensors/tqshm.h $(DESTDIR)$(PREFIX)/include/
	printf '$(PC_TQMON)' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/tqmon.pc
	printf '$(PC_TQSENSOR)' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/tqsensor.pc
	install -m 644 $(B)/man/tqmon.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(B)/man/libtqmon.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	install -m 644 $(B)/man/tqmon-language.7 $(DESTDIR)$(PREFIX)/share/man/man7/
	install -m 644 sensors/host.tq sensors/kernel.tq sensors/cpusample.tq $(DESTDIR)$(PREFIX)/share/tqmon/sensors/
	install -m 644 app/tqmon.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tqmon
	install -d $(DESTDIR)$(PMDADIR)
	install -m 755 $(B)/pmdatqmon sensors/pmdatqmon/Install sensors/pmdatqmon/Remove $(DESTDIR)$(PMDADIR)/
	install -m 644 sensors/pmdatqmon/domain.h sensors/pmdatqmon/pmns sensors/pmdatqmon/root sensors/pmdatqmon/help \
	    $(DESTDIR)$(PMDADIR)/

# ---------------------------------------------------------------- benchmarks
$(B)/measure: bench/measure.c
	@mkdir -p $(B)
	$(CC) -std=c11 $(WARN) $(OPT) bench/measure.c -o $@
$(B)/netbench: bench/netbench.c $(B)/libtqmon.a $(HDRS)
	$(CC) $(CSTD) $(WARN) $(OPT) $(INC) bench/netbench.c $(B)/libtqmon.a $(LIBS) -o $@

$(B)/dspbench: bench/dspbench.c $(B)/libtqmon.a $(HDRS)
	$(CC) $(CSTD) $(WARN) $(OPT) $(INC) bench/dspbench.c $(B)/libtqmon.a $(LIBS) -o $@

# The sensor benchmark: tqmon's generated sensor next to an LTTng-UST
# tracepoint (when liblttng-ust-dev is installed; bench/run.sh says so
# otherwise), and one monitor draining a busy thread.
# (LTTng is looked for when the recipe runs: make bench installs it first.)
SB_LTTNG = $$(pkg-config --exists lttng-ust 2>/dev/null && echo -DTQBENCH_LTTNG -Ibench bench/tqbench_tp.c \
    $$(pkg-config --cflags --libs lttng-ust))
$(B)/bench/sensors.h: bench/sensorbench.tq $(B)/tqmon
	@mkdir -p $(B)/bench
	$(B)/tqmon sensors gen bench/sensorbench.tq -o $@
$(B)/sensorbench: bench/sensorbench.c bench/shmbench.c bench/tqbench_tp.c bench/tqbench_tp.h $(B)/bench/sensors.h \
    $(B)/libtqsensor.a $(B)/libtqmon.a $(HDRS) | bench-deps
	$(CC) $(CSTD) $(WARN) $(OPT) -I$(B)/bench $(INC) bench/sensorbench.c bench/shmbench.c $(SB_LTTNG) \
	    $(B)/libtqsensor.a $(B)/libtqmon.a $(LIBS) -o $@

# The mailbox program on LTTng-UST tracepoints instead of tqmon's sensors
# (the live-cost peer; not built without liblttng-ust-dev).
$(B)/bench/mailbox-lttng: examples/mailbox/mailbox.c bench/mblttng/sensors.h bench/tqmb_tp.h bench/tqmb_tp.c | bench-deps
	@mkdir -p $(B)/bench
	if pkg-config --exists lttng-ust 2>/dev/null; then \
	  $(CC) $(CSTD) $(WARN) $(OPT) -Ibench/mblttng -Ibench examples/mailbox/mailbox.c bench/tqmb_tp.c \
	      $$(pkg-config --cflags --libs lttng-ust) -ldl -lpthread -o $@; fi

# The kernel sensors' workloads (bench/kernel.sh, make bench section 8: tqmon --kernel
# next to bpftrace).
$(B)/kload: bench/kload.c
	@mkdir -p $(B)
	$(CC) $(CSTD) $(WARN) $(OPT) bench/kload.c -o $@

bench: all bench-deps $(B)/measure $(B)/netbench $(B)/sensorbench $(B)/dspbench $(B)/mailbox/mailbox $(B)/bench/mailbox-lttng \
    $(B)/kload
	@sh bench/run.sh
# The kernel sensors' section alone (bench/kernel.sh; as root).
bench-kernel: $(B)/tqmon $(B)/kload bench-deps
	@sh bench/kernel.sh
.PHONY: bench-kernel bench-deps
bench-deps:
	@sh tests/deps.sh bench

clean:
	rm -rf $(B) tqmon.db tqmon.db-wal tqmon.db-shm

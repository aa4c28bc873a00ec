# megpu: build everything from Debian's archive, boot a guest, run tests.
#
#   make demo    boot the guest, load megpu.ko, run `megpu demo`
#   make check   every test level: host units, the device qtest, the guest
#   make shell   an interactive guest on the serial console
#
# Versions are pinned here; override on the command line (make KVER=...).

SHELL := /bin/bash
space := $(subst ,, )

KVER ?= 6.12.117+deb12
QEMU_DEBVER ?= 1:10.0.13+ds-0+deb13u1
# A cache outside the tree; HOME may be unset (cron, CI agents, chroots).
MEGPU_HOME := $(or $(HOME),$(shell getent passwd $$(id -u) | cut -d: -f6))
ifeq ($(MEGPU_HOME)$(MEGPU_CACHE),)
$(error neither HOME nor MEGPU_CACHE is set: set one of them)
endif
MEGPU_CACHE ?= $(MEGPU_HOME)/.cache/megpu
ENGINES ?= 4
# tcg (default) or kvm: how the guest runs (QEMU is built with both)
ACCEL ?= tcg
export KVER QEMU_DEBVER MEGPU_CACHE ENGINES ACCEL

QEMU_UPVER := $(firstword $(subst +, ,$(lastword $(subst :, ,$(QEMU_DEBVER)))))
QEMU_BUILD := $(MEGPU_CACHE)/qemu-build-$(QEMU_UPVER)
KROOT := $(MEGPU_CACHE)/kernel/$(KVER)
KDIR := $(KROOT)/usr/src/linux-headers-$(KVER)-amd64
KSFT := $(MEGPU_CACHE)/ksft
DEPS_STAMP := $(MEGPU_CACHE)/stamps/deps-$(KVER)-$(QEMU_UPVER)
export QEMU_BUILD KROOT KDIR KSFT

B := build
CC := gcc
INCLUDES := -I/usr/include/libdrm -Iuapi/drm -Iinclude -Itools/lib/megpu \
	-I$(B)/gen
CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE $(INCLUDES)
# kselftest_harness.h is written for -Wall, as the kernel's selftests build.
SELFTEST_CFLAGS := -O2 -g -Wall -Werror -std=gnu11 -D_GNU_SOURCE $(INCLUDES)
LDFLAGS := -static
LIBDRM := /usr/lib/x86_64-linux-gnu/libdrm.a

LIB_SRCS := $(wildcard tools/lib/megpu/*.c)
LIB_HDRS := $(wildcard tools/lib/megpu/*.h) uapi/drm/megpu_drm.h \
	$(wildcard include/*.h)
LIB := $(B)/libmegpu.a
TOOL := $(B)/megpu
SELFTEST_DIR := selftests/drivers/gpu/megpu
SELFTEST_SRCS := $(wildcard $(SELFTEST_DIR)/*_test.c)
SELFTESTS := $(patsubst $(SELFTEST_DIR)/%.c,$(B)/selftests/%,$(SELFTEST_SRCS))
MODULE := drivers/gpu/drm/megpu/megpu.ko
INITRAMFS := $(B)/initramfs.cpio.gz

.PHONY: all deps qemu module tools selftests initramfs demo check shell bench trace \
	bench-device \
	check-host check-qtest check-guest check-fresh check-debug check-asan \
	check-tsan fuzz-device coverage prebuild docs module-shipped install check-install intree \
	checkpatch \
	checkpatch-qemu clean

all: qemu module tools selftests initramfs

deps:
	tools/vm/deps.sh
	@mkdir -p $(dir $(DEPS_STAMP)) && touch $(DEPS_STAMP)

$(DEPS_STAMP): tools/vm/deps.sh
	$(MAKE) deps

qemu: $(DEPS_STAMP)
	tools/vm/build-qemu.sh

# The module must build without a warning at W=1.
module: $(DEPS_STAMP)
	@mkdir -p $(B)
	@set -o pipefail; \
	$(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_DRM_MEGPU=m \
		CONFIG_DRM_MEGPU_TESTING=y W=1 modules 2>&1 | \
		tee $(B)/module.log
	@! grep -iE 'warning:|error' $(B)/module.log || \
		{ echo "module: the build has warnings" >&2; exit 1; }

# The driver as shipped (no CONFIG_DRM_MEGPU_TESTING: no test knobs, no
# writable comparison parameters) must build without a warning too; built
# from a copy so the test build's objects stay.
module-shipped: $(DEPS_STAMP)
	@rm -rf $(B)/shipped && mkdir -p $(B)/shipped
	@cp -a drivers uapi include Kbuild $(B)/shipped/
	@find $(B)/shipped \( -name '*.o' -o -name '*.ko' -o -name '*.mod' \
		-o -name '*.mod.c' -o -name '.*.cmd' -o -name modules.order \
		-o -name Module.symvers \) -delete
	@set -o pipefail; \
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(B)/shipped CONFIG_DRM_MEGPU=m W=1 \
		modules 2>&1 | tee $(B)/module-shipped.log >/dev/null
	@! grep -iE 'warning:|error' $(B)/module-shipped.log || \
		{ echo "module-shipped: the build has warnings" >&2; exit 1; }
	@! modinfo -p $(B)/shipped/drivers/gpu/drm/megpu/megpu.ko | \
		grep -E '^(drop_waits|gpu_semaphores|irq_retire|inject_probe_failure):' || \
		{ echo "module-shipped: test parameters in the shipped module" >&2; exit 1; }
	@echo "module-shipped: built without the test interfaces, no warning"

$(B)/lib/%.o: tools/lib/megpu/%.c $(LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(patsubst tools/lib/megpu/%.c,$(B)/lib/%.o,$(LIB_SRCS))
	ar rcs $@ $^

# The wave programs, embedded as C strings in the tool and the selftests.
PROGRAMS := $(wildcard tools/megpu/programs/*.s)
PROGRAMS_H := $(B)/gen/megpu_programs.h
$(PROGRAMS_H): $(PROGRAMS) tools/megpu/programs/embed.sh
	@mkdir -p $(dir $@)
	tools/megpu/programs/embed.sh $@ $(PROGRAMS)

$(TOOL): $(wildcard tools/megpu/*.c tools/megpu/*.h) $(LIB) $(PROGRAMS_H)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c,$^) $(LIB) $(LIBDRM) -lm

tools: $(DEPS_STAMP) $(TOOL)

# An installable libmegpu: static and shared, its headers, megpu.pc, the
# tool and its man page (make install PREFIX=/usr/local DESTDIR=...).
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
LIB_VERSION := 0.1.0
LIB_SOMAJOR := 0
LIB_SO := $(B)/libmegpu.so.$(LIB_VERSION)
INSTALL_HDRS := tools/lib/megpu/libmegpu.h uapi/drm/megpu_drm.h \
	include/megpu_hw.h $(wildcard include/megpu_hw_*.h) include/megpu_isa.h

$(B)/lib-pic/%.o: tools/lib/megpu/%.c $(LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=default -c -o $@ $<

$(LIB_SO): $(patsubst tools/lib/megpu/%.c,$(B)/lib-pic/%.o,$(LIB_SRCS))
	$(CC) -shared -Wl,-soname,libmegpu.so.$(LIB_SOMAJOR) -Wl,--no-undefined \
		-o $@ $^ -ldrm -lm -lpthread

$(B)/megpu.pc: tools/lib/megpu/megpu.pc.in Makefile
	sed -e 's|@PREFIX@|$(PREFIX)|' \
		-e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${exec_prefix}/%,$(LIBDIR))|' \
		-e 's|@VERSION@|$(LIB_VERSION)|' $< >$@

install: $(LIB) $(LIB_SO) $(TOOL) $(B)/megpu.pc
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/include/megpu \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libmegpu.so.$(LIB_VERSION) \
		$(DESTDIR)$(LIBDIR)/libmegpu.so.$(LIB_SOMAJOR)
	ln -sf libmegpu.so.$(LIB_SOMAJOR) $(DESTDIR)$(LIBDIR)/libmegpu.so
	install -m 644 $(INSTALL_HDRS) $(DESTDIR)$(PREFIX)/include/megpu/
	install -m 644 $(B)/megpu.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 755 $(TOOL) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 tools/megpu/megpu.1 $(DESTDIR)$(PREFIX)/share/man/man1/

# install with DESTDIR (the layout a package gets) and into a scratch
# PREFIX, then build tools/examples against that copy with pkg-config
# only (shared and static), as a user would
check-install: $(DEPS_STAMP)
	@rm -rf $(B)/install-root $(B)/install-prefix
	@$(MAKE) --no-print-directory -s install DESTDIR=$(CURDIR)/$(B)/install-root
	@$(MAKE) --no-print-directory -s -B $(B)/megpu.pc install \
		PREFIX=$(CURDIR)/$(B)/install-prefix
	@$(MAKE) --no-print-directory -s -B $(B)/megpu.pc
	tools/examples/check-install.sh $(B)/install-root $(PREFIX) $(LIBDIR) \
		$(B)/install-prefix

$(B)/selftests/%: $(SELFTEST_DIR)/%.c $(wildcard $(SELFTEST_DIR)/*.h) $(LIB) \
		$(PROGRAMS_H) $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(SELFTEST_CFLAGS) -I$(KSFT) $(LDFLAGS) -o $@ $< $(LIB) $(LIBDRM) -lm

selftests: $(SELFTESTS)

initramfs: module tools selftests
	tools/vm/mkinitramfs.sh $(INITRAMFS) $(MODULE) $(TOOL) $(SELFTESTS)

demo: qemu initramfs
	tools/vm/run.sh demo $(INITRAMFS)

shell: qemu initramfs
	tools/vm/run.sh shell $(INITRAMFS)

# Benchmarks print tables comparing variants measured in the same run;
# two GPUs for the multi-GPU table (seed 000).
BENCH_GPUS ?= 2
bench: qemu initramfs
	GPUS=$(BENCH_GPUS) tools/vm/run.sh bench $(INITRAMFS)

# The wave interpreter against the built-in kernels, one engine against
# two, and an empty job's frame, on the device alone (no guest: the
# engines' own busy time); PERF_OPTS: device properties for the first,
# e.g. write-mode=strict.
bench-device: qemu
	cd $(QEMU_BUILD) && MEGPU_PERF_OPTS="$(PERF_OPTS)" \
		QTEST_QEMU_BINARY=./qemu-system-x86_64 \
		./tests/qtest/megpu-wave-test -m perf \
		-p /x86_64/megpu/wave/perf/programs \
		-p /x86_64/megpu/wave/perf/insns 2>&1 | \
		grep -E '^# ([a-z]+ +[0-9]|insns)'
	cd $(QEMU_BUILD) && QTEST_QEMU_BINARY=./qemu-system-x86_64 \
		./tests/qtest/megpu-writes-test -m perf \
		-p /x86_64/megpu/writes/perf/engines 2>&1 | grep -E '^# engines'
	cd $(QEMU_BUILD) && QTEST_QEMU_BINARY=./qemu-system-x86_64 \
		./tests/qtest/megpu-packets-test -m perf \
		-p /x86_64/megpu/engine/perf/frames 2>&1 | grep -E '^# frames'

# A timeline (issue 12): `megpu trace` in the guest with TRACE_ARGS (its
# arguments, comma-separated), written to build/trace.json for Perfetto.
TRACE_ARGS ?= --chain,200
trace: qemu initramfs
	TEST_ARGS="megpu.args=$(TRACE_ARGS)" tools/vm/run.sh trace $(INITRAMFS)

# Inside `make check` everything is built already (CHECK_BUILT=1), so the
# levels do not rebuild; alone, each builds what it needs.
ifeq ($(CHECK_BUILT),1)
QTEST_NEEDS :=
GUEST_NEEDS :=
else
QTEST_NEEDS := qemu
GUEST_NEEDS := qemu initramfs
endif

check-host: $(DEPS_STAMP) $(PROGRAMS_H)
	@echo "== host unit tests"
	@mkdir -p $(B)/host $(B)/results; pass=0; fail=0; \
	for t in tests/host/*_test.c; do \
		bin=$(B)/host/$$(basename $$t .c); \
		if ! $(CC) $(CFLAGS) -Itests/host -o $$bin $$t \
			tools/lib/megpu/cs.c tools/lib/megpu/kargs.c \
			tools/lib/megpu/asm.c \
			tools/lib/megpu/engine.c \
			tools/lib/megpu/mgpu.c \
			tools/lib/megpu/taskq.c \
			tools/lib/megpu/wave_cpu.c -lpthread -lm; then \
			fail=$$((fail + 1)); continue; \
		fi; \
		$$bin >$$bin.log 2>&1; rc=$$?; \
		grep -E '^(not )?ok ' $$bin.log; \
		p=$$(grep -c '^ok ' $$bin.log); f=$$(grep -c '^not ok ' $$bin.log); \
		[ $$rc != 0 ] && [ $$f = 0 ] && f=1; \
		pass=$$((pass + p)); fail=$$((fail + f)); \
	done; \
	for t in tests/host/*_test.sh; do \
		log=$(B)/host/$$(basename $$t .sh).log; \
		bash $$t >$$log 2>&1; rc=$$?; \
		grep -E '^(not )?ok ' $$log; \
		p=$$(grep -c '^ok ' $$log); f=$$(grep -c '^not ok ' $$log); \
		[ $$rc != 0 ] && [ $$f = 0 ] && f=1; \
		pass=$$((pass + p)); fail=$$((fail + f)); \
	done; \
	echo "host: $$pass passed, $$fail failed"; \
	echo "$$pass $$fail" >$(B)/results/host; \
	[ $$fail = 0 ]

check-qtest: $(QTEST_NEEDS)
	@echo "== device qtest"
	tools/vm/qtest.sh

# The main run, the engine tests again with 8 engines, then a boot with
# faulty devices that must fail to probe.
ENGINES8_TESTS := device_test,packets_test,sync_test,recovery_test,$\
	stress_test,sem_test,sem_stress_test,flush_test
ENGINES8_TESTS := $(subst $(space),,$(ENGINES8_TESTS))
check-guest: $(GUEST_NEEDS)
	@echo "== guest kselftests"
	tools/vm/run.sh check $(INITRAMFS)
	@echo "== guest kselftests: 8 engines"
	NAME=check-8 ENGINES=8 \
	TESTS=$(ENGINES8_TESTS) \
		tools/vm/run.sh check $(INITRAMFS)
	@echo "== guest kselftests: non-atomic mailbox slots (negative control)"
	NAME=check-nonatomic TESTS=mailbox_test \
	TEST_ARGS=megpu_test.nonatomic=1 \
	DEVICE_PROPS="x-wave-nonatomic=on" \
		tools/vm/run.sh check $(INITRAMFS)
	@echo "== guest kselftests: 4 GPUs sharing memory (seed 000)"
	NAME=check-mgpu GPUS=4 TESTS=mgpu_test \
		tools/vm/run.sh check $(INITRAMFS)
	@echo "== guest kselftests: 4 GPUs with non-atomic slot updates (negative control)"
	NAME=check-mgpu-nonatomic TESTS=mgpu_test \
	TEST_ARGS=megpu_test.nonatomic=1 \
	DEVICE_PROPS="$(foreach i,1 2 3 4,x-mgpu-nonatomic=on)" \
		tools/vm/run.sh check $(INITRAMFS)
	@echo "== guest kselftests: non-atomic task-queue locks (negative control)"
	NAME=check-taskq-nonatomic TESTS=taskq_test \
	TEST_ARGS="megpu_test.nonatomic=1 megpu_test.taskq_n=8000" \
	DEVICE_PROPS="x-taskq-nonatomic=on" \
		tools/vm/run.sh check $(INITRAMFS)
	@echo "== guest kselftests: EVENT mode without notifications (negative control)"
	NAME=check-taskq-no-notify TESTS=taskq_test \
	TEST_ARGS="megpu_test.nonotify=1 megpu_test.taskq_event_n=2000" \
	DEVICE_PROPS="x-taskq-no-notify=on" \
		tools/vm/run.sh check $(INITRAMFS)
	@echo "== guest kselftests: 8 GPUs sharing memory (seed 000)"
	NAME=check-mgpu8 GPUS=8 ENGINES=1 TESTS=mgpu_test \
		tools/vm/run.sh check $(INITRAMFS)
	@echo "== guest kselftests: posted writes held at runtime (x-test-regs)"
	NAME=check-hold TESTS=hold_test,flush_test DEVICE_PROPS="x-test-regs=on" \
		tools/vm/run.sh check $(INITRAMFS)
	@echo "== guest kselftests: a device without its optional features (x-caps)"
	NAME=check-features TESTS=features_test,reset_test DEVICE_PROPS="x-caps=0xf" \
		tools/vm/run.sh check $(INITRAMFS)
	@echo "== guest kselftests: probe failures"
	NAME=check-probe TESTS=probe_test TEST_ARGS=megpu_test.faulty=3 \
	DEVICE_PROPS="x-version=0x20000 x-drop-irqs=on x-caps=0x3" \
		tools/vm/run.sh check $(INITRAMFS)

# Build first (in parallel under make -j), then run the levels one after
# the other, all of them even when one fails, so the summary counts all.
CHECK_RESULTS := host install qtest guest-check guest-check-8 guest-check-nonatomic \
	guest-check-mgpu guest-check-mgpu-nonatomic guest-check-taskq-nonatomic \
	guest-check-taskq-no-notify \
	guest-check-mgpu8 \
	guest-check-probe guest-check-hold guest-check-features
check: qemu initramfs $(DEPS_STAMP)
	@rm -rf $(B)/results
	@$(MAKE) --no-print-directory -j1 -k CHECK_BUILT=1 \
		check-host check-install check-qtest check-guest || true
	@for r in $(CHECK_RESULTS); do \
		[ -f $(B)/results/$$r ] || echo "0 1 $$r: no result"; \
	done | cat - $(B)/results/* 2>/dev/null | awk '{ p += $$1; f += $$2 } \
		END { printf "check: %d passed, %d failed\n", p, f; exit f > 0 }'

# The builds of the lanes after make check (debug kernel, QEMU with ASan,
# TSan, libFuzzer) at idle priority: .ci/run starts it in the background.
prebuild: $(DEPS_STAMP)
	tools/vm/prebuild.sh

# The debug-kernel lane: a kernel from Debian's linux-source-6.12 with
# KASAN, lockdep, debug objects, kmemleak and fault injection (built once,
# cached), megpu.ko built against it, every selftest run on it.
check-debug: qemu tools selftests $(DEPS_STAMP)
	@echo "== guest kselftests on the debug kernel"
	tools/vm/check-debug.sh

# The device under ASan and UBSan: QEMU built with them (cached beside
# the normal build), every megpu qtest and the main and 4-GPU guest
# boots on it; a sanitizer report fails the run (issue 23).
check-asan: initramfs $(DEPS_STAMP)
	tools/vm/check-asan.sh

# The device under TSan: every megpu qtest on QEMU built with it (clang,
# cached); a race on device state fails, races on guest RAM are counted.
check-tsan: $(DEPS_STAMP)
	tools/vm/check-tsan.sh

# QEMU's generic-fuzz libFuzzer target on the device for FUZZ_S seconds
# from the seeds in tools/fuzz/corpus and tools/fuzz/found (clang, ASan;
# cached build); FUZZ_JOBS processes; FUZZ_MERGE=1 then minimises what
# the run found into tools/fuzz/found.
FUZZ_S ?= 180
FUZZ_JOBS ?= 1
FUZZ_MERGE ?= 0
fuzz-device: $(DEPS_STAMP)
	FUZZ_S=$(FUZZ_S) FUZZ_JOBS=$(FUZZ_JOBS) FUZZ_MERGE=$(FUZZ_MERGE) tools/vm/fuzz-device.sh

# Device line/branch/function coverage over the qtests and guest boots:
# a table, the functions no test reaches, build/coverage.json.
coverage: initramfs $(DEPS_STAMP)
	tools/vm/coverage.sh

# The driver's documentation: kernel-doc -none -Wall silent, then Sphinx
# with the kernel's kernel-doc extension into build/docs, warnings fatal.
docs: $(DEPS_STAMP)
	tools/vm/docs.sh

# The driver as a kernel series (git format-patch) applied with git am to
# Debian's linux-source-6.12 and built there with W=1 and sparse.
intree: $(DEPS_STAMP)
	tools/vm/intree.sh

# The README's two commands in a clean Debian 12 root, each from nothing.
check-fresh:
	tools/vm/check-fresh.sh

checkpatch: $(DEPS_STAMP)
	perl $(MEGPU_CACHE)/linux-source/tree/*/scripts/checkpatch.pl \
		--no-tree --strict --terse -f \
		$(filter-out %.mod.c,$(wildcard drivers/gpu/drm/megpu/*.[ch])) \
		uapi/drm/megpu_drm.h include/megpu_hw.h include/megpu_hw_*.h

# QEMU's own style checker on our device files (QEMU style, not kernel).
checkpatch-qemu: qemu
	cd qemu-device && perl $(MEGPU_CACHE)/qemu-src/qemu-$(QEMU_UPVER)/scripts/qemu-checkpatch.pl \
		--no-tree -f $$(find hw include tests -name '*.[ch]' ! -name trace.h)

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf $(B)

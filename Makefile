# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# sroce top-level Makefile.
#
#   make             build sroce.ko for every kernel with headers installed
#                    (build/<kernel-release>/sroce.ko); KVER=<release> picks one
#   make install     install sroce.ko for each kernel (modprobe sroce)
#   make deps        install what building and testing need (apt-get)
#   make demo        build, boot a VM, create sroce devices, show them
#   make check       every test: harness self-test, unit, fuzz smoke, build
#                    (W=1, sparse), checkpatch, and the VM suites on every
#                    kernel (any bad kernel log line, timeout or unreached
#                    planned check fails; tools/testing/vm/README.md)
#   make soak        RC under netem loss/reorder/dup/corruption, >= 4 GiB
#   make unit        native unit tests of the portable core
#   make fuzz        build the libFuzzer targets and run each briefly
#   make sim         DCQCN simulator over the portable core; writes CSV,
#                    summaries and plots to results/sim/, fails if the
#                    flows do not converge to a fair share
#   make bench       sroce vs rdma_rxe vs TCP in one guest per kernel: a
#                    table, JSON and a PNG plot in results/bench-<time>/
#                    (BENCH_MODE=smoke for a short run); measures, judges
#                    nothing
#   make microbench  instructions per 4 KiB packet in the portable core
#                    (headers, ICRC) under valgrind's callgrind
#   make checkpatch  checkpatch.pl --strict over the sources
#
# W=1 and C=1 are passed to kbuild as usual.

# Kernels that are installed (/boot) and have headers.
KVERS ?= $(shell for d in /lib/modules/*/build; do k=$$(basename $$(dirname $$d)); \
	   [ -e $$d/Makefile ] && [ -e /boot/vmlinuz-$$k ] && echo $$k; done | sort -V)
ifdef KVER
KVERS := $(KVER)
endif

SRC_TOP := Kbuild drivers include
BUILD ?= $(CURDIR)/build

.PHONY: all modules install deps demo check soak check-debug debug-kernel unit fuzz \
	sim bench bench-plot microbench checkpatch clean FORCE

all: modules

modules: $(foreach k,$(KVERS),$(BUILD)/$(k)/sroce.ko)

# Each kernel gets a mirror of the source tree made of symlinks, so kbuild
# writes objects there and never into the sources.
$(BUILD)/%/sroce.ko: FORCE
	@test -e /lib/modules/$*/build/Makefile || \
		{ echo "no headers for $* (make deps)"; exit 1; }
	@mkdir -p $(BUILD)/$*
	@find $(BUILD)/$* -type l -delete
	@cp -rs $(addprefix $(CURDIR)/,$(SRC_TOP)) $(BUILD)/$*/
	$(MAKE) -C /lib/modules/$*/build M=$(BUILD)/$* $(if $(W),W=$(W)) \
		$(if $(C),C=$(C)) modules

# Install into /lib/modules/<release>/updates (INSTALL_MOD_PATH= for a
# staging root) so that `modprobe sroce` and `rdma link add ... type sroce`
# autoloading work on a machine that boots that kernel.
install: modules
	@for k in $(KVERS); do \
		$(MAKE) -C /lib/modules/$$k/build M=$(BUILD)/$$k \
			INSTALL_MOD_DIR=updates modules_install || exit 1; \
	done

deps:
	tools/deps.sh

demo:
	tools/deps.sh --if-missing
	$(MAKE) modules
	tools/demo.sh

check:
	tools/deps.sh --if-missing
	tools/testing/check.sh

# RC under netem at 16x the CI size (>= 4 GiB verified per kernel; hours
# under TCG).
soak:
	tools/deps.sh --if-missing
	SROCE_TESTS=soak_loss SROCE_HOST_SUITES=0 SROCE_VM_TIMEOUT=14400 \
		tools/testing/check.sh

# The VM suites on a KASAN + lockdep + kmemleak + UBSAN 6.1 kernel built by
# `make debug-kernel` (cached outside the tree; ~25 min on 2 cores).
# no5lvl: with -cpu max (LA57) under TCG, generic KASAN reports a
# wild-memory-access in early boot (an interrupt during identify_cpu),
# before any sroce code runs.
DEBUG_KERNEL_DIR ?= /var/cache/sroce/debug-kernel
debug-kernel:
	tools/debug-kernel.sh $(DEBUG_KERNEL_DIR)

check-debug:
	@test -e $(DEBUG_KERNEL_DIR)/bzImage || { echo "run make debug-kernel"; exit 1; }
	KVERS=$$(cat $(DEBUG_KERNEL_DIR)/kernel.release) \
	SROCE_KERNEL_IMAGE=$(DEBUG_KERNEL_DIR)/bzImage SROCE_VM_TIMEOUT=2700 \
	SROCE_VM_APPEND=no5lvl \
	SROCE_HOST_SUITES=0 tools/testing/check.sh

unit:
	$(MAKE) -C tools/testing/unit run

fuzz:
	$(MAKE) -C tools/testing/fuzz run

SIM_OUT ?= $(CURDIR)/results/sim
sim:
	$(MAKE) --no-print-directory -C tools/sroce-sim run BIN=$(BUILD)/sim/sroce-sim OUT=$(SIM_OUT)

bench-plot:
	$(MAKE) --no-print-directory -C tools/sroce-bench BIN=$(BUILD)/bench/bench_plot \
		CORE_BIN=$(BUILD)/bench/core_bench POST_BIN=$(BUILD)/bench/post_floor

microbench:
	$(MAKE) --no-print-directory -C tools/sroce-bench callgrind \
		BIN=$(BUILD)/bench/bench_plot CORE_BIN=$(BUILD)/bench/core_bench

bench:
	tools/deps.sh --if-missing
	$(MAKE) modules bench-plot
	tools/bench.sh

checkpatch:
	tools/checkpatch.sh

clean:
	rm -rf $(BUILD)
	$(MAKE) -C tools/testing/unit clean
	$(MAKE) -C tools/testing/fuzz clean

FORCE:

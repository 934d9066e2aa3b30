# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# sroce top-level Makefile.
#
#   make             build sroce.ko for every kernel with headers installed
#                    (build/<kernel-release>/sroce.ko); KVER=<release> picks one
#   make deps        install what building and testing need (apt-get)
#   make demo        build, boot a VM, create sroce devices, show them
#   make check       every test: unit, fuzz smoke, build (W=1, sparse),
#                    checkpatch, and the VM suites on every kernel
#   make unit        native unit tests of the portable core
#   make fuzz        build the libFuzzer targets and run each briefly
#   make checkpatch  checkpatch.pl --strict over the sources
#
# W=1 and C=1 are passed to kbuild as usual.

KVERS ?= $(shell for d in /lib/modules/*/build; do \
	   [ -e $$d/Makefile ] && basename $$(dirname $$d); done | sort -V)
ifdef KVER
KVERS := $(KVER)
endif

SRC_TOP := Kbuild drivers include
BUILD ?= $(CURDIR)/build

.PHONY: all modules deps demo check unit fuzz checkpatch clean FORCE

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

deps:
	tools/deps.sh

demo:
	tools/deps.sh --if-missing
	$(MAKE) modules
	tools/demo.sh

check:
	tools/deps.sh --if-missing
	tools/testing/check.sh

unit:
	$(MAKE) -C tools/testing/unit run

fuzz:
	$(MAKE) -C tools/testing/fuzz run

checkpatch:
	tools/checkpatch.sh

clean:
	rm -rf $(BUILD)
	$(MAKE) -C tools/testing/unit clean
	$(MAKE) -C tools/testing/fuzz clean

FORCE:

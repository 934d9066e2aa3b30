#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Smoke test of the VM harness itself (TAP output):
#   tools/testing/vm/vm-run.sh --kver KVER -- tools/testing/vm/smoke.sh
# Checks that the guest runs the requested kernel, that module autoloading
# through the host's /lib/modules works (veth) and that network namespaces
# can be created.

set -u

n=0 fail=0
check() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		fail=1
	fi
}

echo "1..3"
expected=${SROCE_KVER:-}
check "uname -r is '$expected'" test "$(uname -r)" = "$expected"
check "modprobe veth + veth pair" \
	sh -c 'modprobe veth && ip link add name a type veth peer name b && ip link del dev a'
check "ip netns add" sh -c 'ip netns add t1 && ip -n t1 link set lo up && ip netns del t1'
exit $fail

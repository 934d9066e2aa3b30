#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Frames (sroce_tx_frame()): two RC QPs of one device, talking through its
# own IPv4 GID, exchange small WRITEs, SENDs, WRITEs with immediate, READs
# and atomics of 1 to 88 bytes without skbs.  Every byte is checked, the
# tx_frames counter must count them, a routing change (an address added
# and removed) must send one packet the IP way and let frames resume, and
# nothing may be dropped or resent (frames.py).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_rdma.sh"

sroce_load || { not_ok "load sroce"; tap_done; exit 1; }
ip netns add peer
veth_pair v0 v1 peer
ip addr add 198.18.0.1/24 dev v0
ip -n peer addr add 198.18.0.2/24 dev v1
rdma link add sroce0 type sroce netdev v0
if wait_for 20 gid_present sroce0 0000:0000:0000:0000:0000:ffff:c612:0001; then
	ok "sroce0 has its IPv4 GID"
else
	not_ok "sroce0 has its IPv4 GID"
fi
pyrun "frames.py" "" "$(dirname "$0")/frames.py" sroce0 c612:0001 v0
rdma link delete sroce0
check "module unloads" eval 'wait_for 30 eval "! ibdev_exists sroce0" && sroce_unload'
ip netns del peer
tap_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make soak`: t_loss.sh at 16x its CI size (about 4.3 GiB verified).
export SROCE_LOSS_ITERS=${SROCE_LOSS_ITERS:-320}
exec "$(dirname "$0")/t_loss.sh"

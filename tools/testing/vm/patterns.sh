# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Kernel log lines that fail a test run (sourced by vm-run.sh and check.sh).
# shellcheck disable=SC2034
BAD_PATTERNS='BUG:|WARNING:|Oops|general protection|list_add corruption|refcount_t:|blocked for more than|\<stall|soft lockup|KASAN|UBSAN'

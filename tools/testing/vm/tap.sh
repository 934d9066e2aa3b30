# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# How check.sh reads a suite's TAP (sourced; tested by test_patterns.sh).
#
#   ok N - desc                  a pass
#   ok N - desc # SKIP reason    a check that could not run here: counted
#                                apart, never as a pass
#   not ok N - desc              a failure
#   not ok N - desc # TODO why   a known gap: counted apart
#   not ok - desc                (unnumbered) a failure the harness adds:
#                                a bad kernel log, a timeout, a plan that
#                                fell short; "not ok - S: N planned checks
#                                did not run" counts N failures
#   1..N                         the plan: first (lib.sh's tap_plan, for a
#                                suite whose count is fixed) or last
#                                (tap_done)

# tap_counts LOG: "passed failed skipped todo" of LOG.
tap_counts() {
	awk '
	/^ok [0-9]+/ {
		if (tolower($0) ~ / # skip/) s++; else p++
		next
	}
	/^not ok [0-9]+/ {
		if ($0 ~ /# TODO/) t++; else f++
		next
	}
	/^not ok - / {
		if (match($0, /: [0-9]+ planned checks? did not run/)) {
			n = substr($0, RSTART + 2) + 0
			f += n > 0 ? n : 1
		} else {
			f++
		}
	}
	END { print p + 0, f + 0, s + 0, t + 0 }' "$1"
}

# tap_plan_check LABEL OUTPUT: OUTPUT (one guest suite's output.log)
# against its plan; prints a "not ok - LABEL: ..." line for a plan it
# fell short of, none if it kept it.
#   - plan up front (1..N before the first check): every check it did
#     not reach is a failure;
#   - no plan up front, one at the end: it must match the checks seen;
#   - no plan at all: the suite never reached tap_done (it crashed, was
#     killed, or exited early): one failure, the number of checks it
#     skipped unknown.
tap_plan_check() {
	if [ ! -e "$2" ]; then
		echo "not ok - $1: no output ($2 missing)"
		return
	fi
	awk -v label="$1" '
	/^(not )?ok [0-9]+/ { n++; next }
	/^1\.\.[0-9]+/ {
		v = substr($1, 4) + 0
		if (n == 0 && !up) { up = 1; plan = v } else { last = 1; lplan = v }
	}
	END {
		if (up) {
			if (n < plan)
				printf "not ok - %s: %d planned %s did not run (%d planned, %d ran)\n", label, plan - n, plan - n == 1 ? "check" : "checks", plan, n
			else if (n > plan)
				printf "not ok - %s: %d checks ran, %d planned\n", label, n, plan
			else if (last && lplan != plan)
				printf "not ok - %s: two plans, 1..%d and 1..%d\n", label, plan, lplan
		} else if (last) {
			if (lplan != n)
				printf "not ok - %s: plan 1..%d, but %d checks ran\n", label, lplan, n
		} else {
			printf "not ok - %s: no TAP plan: the suite did not run to its end (%d checks ran, how many did not is unknown)\n", label, n
		}
	}' "$2"
}

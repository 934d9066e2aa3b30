# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Helpers shared by the `make bench` guest scripts (bench.sh, bench_pair.sh).
# Sourced; the caller sets OUT (the sample file) and leaves the client's
# perftest output in /tmp/pt.cli.

# row SIZE: the client's result line for SIZE (TSC warnings cut out).
row() {
	sed -E 's/Correlation coefficient r\^2: [^<]*< 0\.9//' /tmp/pt.cli |
		awk -v s="$1" '$1 == s && NF >= 5 { print; exit }'
}

# sample DRIVER METRIC PARAM RUN VALUE: record one completed run.  The
# value may be 0, inf, nan or empty (perftest's TSC calibration failed, or
# nothing completed within a short duration): the report leaves those out
# of the medians, the smoke test counts them as produced.
sample() {
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-nan}" >>"$OUT"
}

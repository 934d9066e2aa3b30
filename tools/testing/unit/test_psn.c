// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests: 24-bit PSN/MSN arithmetic. */
#include "ktap.h"
#include "sroce/sroce_psn.h"

static void test_psn(void)
{
	CHECK(sroce_psn_add(0xffffff, 1) == 0, "0xffffff + 1 wraps to 0");
	CHECK(sroce_psn_add(0xfffffe, 5) == 3, "0xfffffe + 5 = 3");
	CHECK(sroce_psn_sub(2, 5) == 0xfffffd, "2 - 5 = 0xfffffd");
	CHECK(sroce_psn_add(0x123456, 0x1000000) == 0x123456,
	      "adding 2^24 is the identity");
	CHECK(sroce_psn_diff(0, 0xffffff) == 1, "diff(0, 0xffffff) = 1");
	CHECK(sroce_psn_diff(0xffffff, 0) == -1, "diff(0xffffff, 0) = -1");
	CHECK(sroce_psn_diff(0x7fffff, 0) == 0x7fffff,
	      "2^23 - 1 ahead is still after");
	CHECK(sroce_psn_diff(0x800000, 0) == -0x800000,
	      "2^23 apart is 'before' (half window)");
	CHECK(sroce_psn_diff(5, 5) == 0 && sroce_psn_cmp(5, 5) == 0,
	      "equal PSNs compare 0");
	CHECK(sroce_psn_before(0xfffff0, 0x10) &&
	      sroce_psn_after(0x10, 0xfffff0),
	      "before/after across the wrap");
	CHECK(sroce_psn_diff(0x1000005, 5) == 0,
	      "bits above 24 are ignored");
	CHECK(sroce_psn_in_window(0x000002, 0xfffffe, 8) &&
	      !sroce_psn_in_window(0x000006, 0xfffffe, 8) &&
	      !sroce_psn_in_window(0xfffffd, 0xfffffe, 8),
	      "window [0xfffffe, +8) across the wrap");
	CHECK(sroce_psn_in_window(0x42, 0x43, 0x1000000) &&
	      !sroce_psn_in_window(0x42, 0x42, 0),
	      "full and empty windows");
	CHECK(sroce_psn_classify(10, 10) == SROCE_PSN_EXPECTED &&
	      sroce_psn_classify(9, 10) == SROCE_PSN_DUPLICATE &&
	      sroce_psn_classify(11, 10) == SROCE_PSN_AHEAD &&
	      sroce_psn_classify(0xfffff0, 3) == SROCE_PSN_DUPLICATE &&
	      sroce_psn_classify(2, 0xfffff0) == SROCE_PSN_AHEAD,
	      "responder PSN classes (IBTA 9.7.4.1), also across the wrap");
	CHECK(sroce_psn_chunk_end(0xfffffe, 0x000025, 16, 0xfffffe) == 0x00000d &&
	      sroce_psn_chunk_end(0xfffffe, 0x000025, 16, 0x00000d) == 0x00000d &&
	      sroce_psn_chunk_end(0xfffffe, 0x000025, 16, 0x00000e) == 0x00001d &&
	      sroce_psn_chunk_end(0xfffffe, 0x000025, 16, 0x000020) == 0x000025 &&
	      sroce_psn_chunk_end(0xfffffe, 0x000025, 16, 0x000025) == 0x000025,
	      "READ chunk ends, across the wrap, the last chunk short");
	CHECK(sroce_psn_chunk_end(7, 7, 16, 7) == 7 &&
	      sroce_psn_chunk_end(7, 9, 1, 8) == 8 &&
	      sroce_psn_chunk_end(7, 0x1006, 128, 0x1005) == 0x1006,
	      "one-PSN messages, chunks of one, a chunk ending at the last");
	CHECK(sroce_msn_add(0xffffff, 2) == 1 &&
	      sroce_msn_diff(1, 0xffffff) == 2,
	      "MSN wraps like PSN");
}

int main(void)
{
	KTAP_START();
	test_psn();
	return KTAP_DONE();
}

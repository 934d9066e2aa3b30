// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz AETH decoding and the credit / RNR timer encodings.  Properties:
 * decoding is total (no OOB, no UB for any byte), encodings round down
 * (credits) or up (RNR) and are monotonic, and AETH encode/decode is the
 * identity on its 32 bits.
 */
#include <stdlib.h>
#include "sroce/sroce_hdr.h"

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct sroce_aeth a, b;
	u8 buf[SROCE_AETH_BYTES];
	u32 x, y, us;
	u8 code;

	if (size < SROCE_AETH_BYTES + 4)
		return 0;
	sroce_aeth_get(data, &a);
	sroce_aeth_put(buf, &a);
	sroce_aeth_get(buf, &b);
	if (memcmp(buf, data, SROCE_AETH_BYTES) || a.msn != b.msn ||
	    a.syndrome != b.syndrome || a.msn > 0xffffff)
		abort();

	/* Only well-formed syndromes round trip through the helpers. */
	if (sroce_aeth_valid(a.syndrome)) {
		u8 v = sroce_aeth_value(a.syndrome), syn;

		switch (sroce_aeth_type(a.syndrome)) {
		case SROCE_AETH_ACK:
			syn = sroce_aeth_ack(v);
			break;
		case SROCE_AETH_RNR_NAK:
			syn = sroce_aeth_rnr(v);
			break;
		default:
			syn = sroce_aeth_nak(v);
			break;
		}
		if (syn != a.syndrome)
			abort();
	}

	x = sroce_get_be32(data + SROCE_AETH_BYTES);
	code = sroce_credit_code(x);
	if (code > 30 || sroce_credit_count(code) > x ||
	    (code < 30 && sroce_credit_count(code + 1) <= x))
		abort();

	us = x % 700000;
	code = sroce_rnr_timer_code(us);
	if (code > 31)
		abort();
	y = sroce_rnr_timer_us(code);
	if (code && (y < us ||
		     (code > 1 && sroce_rnr_timer_us(code - 1) >= us)))
		abort();
	if (!code && us <= sroce_rnr_timer_us(31))
		abort();
	return 0;
}

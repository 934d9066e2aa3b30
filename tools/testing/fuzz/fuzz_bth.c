// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz the BTH parser with arbitrary UDP payloads.  Properties: never reads
 * out of bounds (ASan), and whatever parses re-encodes to the same 12 bytes
 * apart from the reserved bits the builder zeroes.
 */
#include <stdlib.h>
#include "sroce/sroce_wire.h"

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct sroce_bth bth, again;
	u8 out[SROCE_BTH_BYTES + SROCE_ICRC_BYTES];
	u8 *copy;

	/* Exact-size heap copy so ASan catches any read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);

	if (sroce_bth_parse(copy, size, &bth) == SROCE_OK) {
		memset(out, 0, sizeof(out));
		sroce_bth_build(out, &bth);
		if (out[0] != copy[0] || out[1] != copy[1] ||
		    sroce_get_be16(out + 2) != sroce_get_be16(copy + 2) ||
		    (out[4] & 0xc0) != (copy[4] & 0xc0) ||
		    memcmp(out + 5, copy + 5, 3) ||
		    (out[8] & 0x80) != (copy[8] & 0x80) ||
		    memcmp(out + 9, copy + 9, 3))
			abort();
		/* Rebuilt header with room for ICRC+pad must parse the same. */
		if (bth.pad == 0 && sroce_bth_parse(out, sizeof(out), &again) !=
		    SROCE_OK)
			abort();
	}
	sroce_verdict_name(sroce_bth_parse(copy, size, &bth));
	free(copy);
	return 0;
}

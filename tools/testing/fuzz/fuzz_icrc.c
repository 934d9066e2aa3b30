// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz the ICRC over arbitrary buffers.  The first input byte picks how
 * many of the following bytes are the IP header; the rest is the UDP
 * datagram.  Properties: no out-of-bounds access for any (header, length)
 * split; the one-shot and the chunked computation agree; a computed ICRC
 * stored as the trailer verifies.
 */
#include <stdlib.h>
#include "sroce/sroce_icrc.h"

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct sroce_icrc_ctx ctx;
	size_t ip_len, udp_len, k, step;
	u8 *ip, *udp;
	u32 one, icrc;

	if (size < 2)
		return 0;
	ip_len = data[0] % 64;
	step = (data[1] % 16) + 1;
	data += 2;
	size -= 2;
	if (ip_len > size)
		ip_len = size;
	udp_len = size - ip_len;

	/* Exact-size heap copies so ASan sees any overrun. */
	ip = malloc(ip_len ? ip_len : 1);
	udp = malloc(udp_len + SROCE_ICRC_BYTES);
	if (!ip || !udp)
		abort();
	memcpy(ip, data, ip_len);
	memcpy(udp, data + ip_len, udp_len);

	if (sroce_icrc_compute(sroce_crc32_le, ip, ip_len, udp, udp_len,
			       &one) == SROCE_OK) {
		if (sroce_icrc_start(&ctx, sroce_crc32_le, ip, ip_len, udp,
				     20) != SROCE_OK)
			abort();
		for (k = 20; k < udp_len; k += step)
			sroce_icrc_update(&ctx, udp + k, udp_len - k < step ?
					  udp_len - k : step);
		if (sroce_icrc_final(&ctx) != one)
			abort();
		sroce_icrc_put(udp + udp_len, one);
		if (sroce_icrc_check(sroce_crc32_le, ip, ip_len, udp,
				     udp_len + SROCE_ICRC_BYTES) != SROCE_OK)
			abort();
	}
	sroce_icrc_check(sroce_crc32_le, ip, ip_len, udp, udp_len);
	icrc = sroce_crc32_le(~0U, udp, udp_len);
	(void)icrc;
	free(ip);
	free(udp);
	return 0;
}

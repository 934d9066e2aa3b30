/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 Invariant CRC (IBTA vol. 1 7.8.1, Annex A17.9.1).  Part of the
 * portable core.
 *
 * The ICRC is the IEEE 802.3 CRC-32 (reflected polynomial 0xedb88320,
 * initial value ~0, final inversion) over:
 *
 *   8 bytes of 0xff     stand-in for the InfiniBand LRH, absent in RoCEv2
 *   IP header           IPv4: TOS, TTL, header checksum set to all ones;
 *                       IPv6: traffic class, flow label, hop limit all ones
 *   UDP header          checksum set to all ones
 *   BTH                 byte 4 (FECN, BECN, resv6 = "resv8a") all ones
 *   extension headers, payload and pad, unmodified
 *
 * The masked fields are those routers and switches may rewrite in flight.
 *
 * Wire order: the 32-bit result is sent least significant byte first (as
 * the Ethernet FCS), which is what rdma_rxe produces by storing ~crc32_le()
 * as a host-order u32 on x86; sroce_icrc_get()/sroce_icrc_put() encode it
 * that way independently of the host's byte order.
 *
 * The CRC primitive is a parameter so the kernel can plug in its
 * accelerated crc32_le() while the tests and fuzzers use sroce_crc32_le().
 * Both have crc32_le() semantics: no inversion on entry or exit, so calls
 * chain across buffers.
 */
#ifndef SROCE_ICRC_H
#define SROCE_ICRC_H

#include "sroce_shim.h"
#include "sroce_wire.h"

/** typedef sroce_crc32_fn - crc32_le()-compatible CRC-32 step */
typedef u32 (*sroce_crc32_fn)(u32 crc, const u8 *buf, size_t len);

u32 sroce_crc32_le(u32 crc, const u8 *buf, size_t len);

/**
 * struct sroce_icrc_ctx - ICRC computed incrementally
 * @crc: running, uninverted CRC
 * @fn: CRC-32 step used for every chunk
 */
struct sroce_icrc_ctx {
	u32 crc;
	sroce_crc32_fn fn;
};

enum sroce_verdict sroce_icrc_start(struct sroce_icrc_ctx *ctx,
				    sroce_crc32_fn fn,
				    const u8 *ip, size_t ip_len,
				    const u8 *udp, size_t hdr_len);

/** sroce_icrc_update() - add @len more bytes (payload, pad) to the ICRC */
static inline void sroce_icrc_update(struct sroce_icrc_ctx *ctx,
				     const u8 *buf, size_t len)
{
	if (len)
		ctx->crc = ctx->fn(ctx->crc, buf, len);
}

/** sroce_icrc_final() - the ICRC value, to compare or sroce_icrc_put() */
static inline u32 sroce_icrc_final(const struct sroce_icrc_ctx *ctx)
{
	return ~ctx->crc;
}

/** sroce_icrc_get() - read the 4-byte ICRC trailer at @p */
static inline u32 sroce_icrc_get(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

/** sroce_icrc_put() - write @icrc as the 4-byte ICRC trailer at @p */
static inline void sroce_icrc_put(u8 *p, u32 icrc)
{
	p[0] = (u8)icrc;
	p[1] = (u8)(icrc >> 8);
	p[2] = (u8)(icrc >> 16);
	p[3] = (u8)(icrc >> 24);
}

enum sroce_verdict sroce_icrc_compute(sroce_crc32_fn fn,
				      const u8 *ip, size_t ip_len,
				      const u8 *udp, size_t len, u32 *icrc);
enum sroce_verdict sroce_icrc_check(sroce_crc32_fn fn,
				    const u8 *ip, size_t ip_len,
				    const u8 *udp, size_t udp_len);

#endif /* SROCE_ICRC_H */

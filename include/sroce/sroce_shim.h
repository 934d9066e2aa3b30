/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Portable-core shim: the only place where the protocol core learns whether
 * it is built into the kernel module or into a native unit test / fuzzer.
 * The core itself uses nothing beyond what this header provides: fixed-width
 * integers, size_t, bool, memcpy/memset and u64 by u32 division.  No skb,
 * locks, allocation or clocks ever reach it; time is passed in by the
 * caller.
 */
#ifndef SROCE_SHIM_H
#define SROCE_SHIM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/math64.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The kernel's own widths on every Linux ABI (LP64 and ILP32). */
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
#endif

/*
 * Wire fields are read and written byte by byte in network order so the
 * core never depends on the host's endianness or on alignment.
 */
static inline u16 sroce_get_be16(const u8 *p)
{
	return (u16)((u16)p[0] << 8 | p[1]);
}

static inline u32 sroce_get_be24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
}

static inline u32 sroce_get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static inline u64 sroce_get_be64(const u8 *p)
{
	return (u64)sroce_get_be32(p) << 32 | sroce_get_be32(p + 4);
}

static inline void sroce_put_be16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static inline void sroce_put_be24(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 16);
	p[1] = (u8)(v >> 8);
	p[2] = (u8)v;
}

static inline void sroce_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static inline void sroce_put_be64(u8 *p, u64 v)
{
	sroce_put_be32(p, (u32)(v >> 32));
	sroce_put_be32(p + 4, (u32)v);
}

/*
 * u64 by u32 division: 32-bit kernels have no libgcc for a plain '/' on
 * u64, so the core divides only through this helper, never by a u64.
 */
static inline u64 sroce_div_u64_u32(u64 dividend, u32 divisor)
{
#ifdef __KERNEL__
	return div_u64(dividend, divisor);
#else
	return dividend / divisor;
#endif
}

#endif /* SROCE_SHIM_H */

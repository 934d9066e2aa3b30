/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * 24-bit sequence number arithmetic for PSNs and MSNs.  Part of the
 * portable core.
 *
 * PSNs (IBTA vol. 1 9.7.1) and MSNs (9.7.5.1.1) are 24-bit counters that
 * wrap.  Ordering is only meaningful within half the space: IBTA 9.7.4.1
 * splits the PSN space at the expected PSN into 2^23 "duplicate" PSNs
 * behind it and 2^23 "invalid" (ahead, sequence error) PSNs from it on.
 * Everything is done on unsigned values so no signed overflow can occur.
 */
#ifndef SROCE_PSN_H
#define SROCE_PSN_H

#include "sroce_shim.h"

#define SROCE_PSN_MASK		0xffffffU
#define SROCE_PSN_HALF		0x800000U	/* 2^23 */

/** sroce_psn_add() - @psn advanced by @n, modulo 2^24 */
static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SROCE_PSN_MASK;
}

/** sroce_psn_sub() - @psn moved back by @n, modulo 2^24 */
static inline u32 sroce_psn_sub(u32 psn, u32 n)
{
	return (psn - n) & SROCE_PSN_MASK;
}

/** sroce_psn_dist() - forward distance from @from to @to, 0..2^24-1 */
static inline u32 sroce_psn_dist(u32 from, u32 to)
{
	return (to - from) & SROCE_PSN_MASK;
}

/**
 * sroce_psn_diff() - signed distance @a - @b in the 24-bit window
 * @a: sequence number
 * @b: sequence number
 *
 * Return: a value in [-2^23, 2^23 - 1]; positive when @a is after @b.
 */
static inline int sroce_psn_diff(u32 a, u32 b)
{
	u32 d = sroce_psn_dist(b, a);

	return d & SROCE_PSN_HALF ? (int)d - (int)(SROCE_PSN_MASK + 1) : (int)d;
}

/** sroce_psn_cmp() - <0, 0, >0 as @a is before, equal to, after @b */
static inline int sroce_psn_cmp(u32 a, u32 b)
{
	return sroce_psn_diff(a, b);
}

/** sroce_psn_before() - @a strictly precedes @b in the 24-bit window */
static inline bool sroce_psn_before(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) < 0;
}

/** sroce_psn_after() - @a strictly follows @b in the 24-bit window */
static inline bool sroce_psn_after(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) > 0;
}

/**
 * sroce_psn_in_window() - @psn lies in [@start, @start + @count)
 * @psn: sequence number to test
 * @start: first sequence number of the window
 * @count: window size, at most 2^24
 */
static inline bool sroce_psn_in_window(u32 psn, u32 start, u32 count)
{
	return sroce_psn_dist(start, psn) < count;
}

/**
 * sroce_psn_chunk_end() - last PSN of the chunk of a message holding @psn
 * @first: the message's first PSN
 * @last: its last PSN
 * @chunk: PSNs per chunk (at least 1); chunks start at @first
 * @psn: a PSN of the message
 *
 * A requester asks for a long RDMA READ one chunk of responses at a time,
 * so that its window bounds the responses in flight too.  A retry asks for
 * the rest of the chunk it falls in: a re-issued READ ends where the
 * original request did (the responder's state for it ends there).
 */
static inline u32 sroce_psn_chunk_end(u32 first, u32 last, u32 chunk, u32 psn)
{
	u32 n = sroce_psn_dist(first, psn) / chunk * chunk + chunk - 1;

	/* dist < 2^24 and chunk <= 2^8: no overflow. */
	return n < sroce_psn_dist(first, last) ? sroce_psn_add(first, n) : last;
}

/** enum sroce_psn_class - responder view of a request PSN (IBTA 9.7.4.1) */
enum sroce_psn_class {
	SROCE_PSN_EXPECTED,	/* equals the expected PSN: execute */
	SROCE_PSN_DUPLICATE,	/* within 2^23 behind: replay the response */
	SROCE_PSN_AHEAD,	/* within 2^23 ahead: PSN sequence error NAK */
};

/** sroce_psn_classify() - classify @psn against the expected PSN @epsn */
static inline enum sroce_psn_class sroce_psn_classify(u32 psn, u32 epsn)
{
	int d = sroce_psn_diff(psn, epsn);

	if (d == 0)
		return SROCE_PSN_EXPECTED;
	return d < 0 ? SROCE_PSN_DUPLICATE : SROCE_PSN_AHEAD;
}

/* MSNs count completed messages and wrap exactly like PSNs. */
#define SROCE_MSN_MASK		SROCE_PSN_MASK

/** sroce_msn_add() - @msn advanced by @n, modulo 2^24 */
static inline u32 sroce_msn_add(u32 msn, u32 n)
{
	return sroce_psn_add(msn, n);
}

/** sroce_msn_diff() - signed distance @a - @b between two MSNs */
static inline int sroce_msn_diff(u32 a, u32 b)
{
	return sroce_psn_diff(a, b);
}

#endif /* SROCE_PSN_H */

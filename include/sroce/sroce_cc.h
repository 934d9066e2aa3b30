/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DCQCN congestion control arithmetic: reaction point (sender rate) and
 * notification point (CNP spacing).  Part of the portable core.
 *
 * Reference: Y. Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015, section 3 (the RP algorithm with its
 * rate-increase state machine, and the NP).  Knobs are named after mlx5's
 * cc_params.
 *
 * Units: rates in Mbit/s (u32), time in ns (u64) passed in by the caller,
 * alpha in fixed point with SROCE_CC_ALPHA_ONE == 1.0.
 *
 * Caller contract (the core owns no timers):
 *  - call sroce_dcqcn_on_cnp() for every CNP and then restart the
 *    rate-increase timer, because the paper resets the timer together with
 *    the byte counter on a cut;
 *  - while @limited is true, call sroce_dcqcn_alpha_timer() every
 *    @dce_tcp_rtt us and sroce_dcqcn_rate_timer() every @time_reset us,
 *    and report sent bytes with sroce_dcqcn_tx_bytes(); once @limited is
 *    false both timers may stop: the state is then that of
 *    sroce_dcqcn_init();
 *  - re-arm pacing whenever a function returns true (@rc changed).
 */
#ifndef SROCE_CC_H
#define SROCE_CC_H

#include "sroce_shim.h"

#define SROCE_CC_ALPHA_SHIFT	20
#define SROCE_CC_ALPHA_ONE	0x100000U	/* 1 << SROCE_CC_ALPHA_SHIFT */

/* EINVAL on every Linux ABI; the shim carries no errno.h. */
#define SROCE_CC_EINVAL		22

#define SROCE_CC_RATE_MAX	400000U		/* Mb/s: 400GbE */
#define SROCE_CC_TIME_MAX_US	10000000U	/* 10 s */

/* Stage counters saturate here; far above any threshold (<= 31). */
#define SROCE_DCQCN_STAGE_MAX	0xffffU

/*
 * struct sroce_dcqcn_params - DCQCN knobs, named after mlx5's cc_params.
 * Valid ranges, enforced by sroce_dcqcn_params_check():
 * @ai_rate:      1..max_rate Mb/s, additive increase step (R_AI)
 * @hai_rate:     1..max_rate Mb/s, hyper increase step (R_HAI)
 * @time_reset:   1..10000000 us, rate-increase timer period (T)
 * @byte_reset:   >= 64 bytes per byte-counter event (B)
 * @threshold:    1..31, F: increase events per counter before leaving
 *                fast recovery
 * @gd:           1..15, g = 1 / 2^gd
 * @min_dec_fac:  1..100 percent: one CNP leaves at least this share of RC
 * @min_rate:     1..max_rate Mb/s
 * @max_rate:     min_rate..400000 Mb/s, the line rate
 * @initial_alpha: 0..1024, in 1/1024 (mlx5's scale)
 * @rate_on_first_cnp: 0 (none) or min_rate..max_rate Mb/s: RC after the
 *                first CNP of an unthrottled QP
 * @dce_tcp_rtt:  1..10000000 us, alpha update period (K)
 * @np_min_time_between_cnps: 0..10000000 us, NP's minimum CNP spacing
 *                per QP (N); 0 sends one for every marked packet
 */
struct sroce_dcqcn_params {
	u32 ai_rate;
	u32 hai_rate;
	u32 time_reset;
	u32 byte_reset;
	u32 threshold;
	u32 gd;
	u32 min_dec_fac;
	u32 min_rate;
	u32 max_rate;
	u32 initial_alpha;
	u32 rate_on_first_cnp;
	u32 dce_tcp_rtt;
	u32 np_min_time_between_cnps;
};

/*
 * struct sroce_dcqcn - per-QP reaction point state
 * @rc: current rate (R_C), Mb/s, what pacing uses
 * @rt: target rate (R_T), Mb/s
 * @alpha: congestion estimate, SROCE_CC_ALPHA_ONE == 1
 * @t_stage: timer increase events since the last cut (T)
 * @b_stage: byte-counter increase events since the last cut (BC)
 * @bytes: bytes sent since the last byte-counter event
 * @cnp_in_period: a CNP arrived in the current alpha period
 * @limited: rc < max_rate: the timers must run
 * @seen_cnp: a CNP arrived since the QP was last unthrottled
 */
struct sroce_dcqcn {
	u32 rc;
	u32 rt;
	u32 alpha;
	u32 t_stage;
	u32 b_stage;
	u32 bytes;
	bool cnp_in_period;
	bool limited;
	bool seen_cnp;
};

void sroce_dcqcn_params_default(struct sroce_dcqcn_params *p);
int sroce_dcqcn_params_check(const struct sroce_dcqcn_params *p);

void sroce_dcqcn_init(struct sroce_dcqcn *s,
		      const struct sroce_dcqcn_params *p);
bool sroce_dcqcn_on_cnp(struct sroce_dcqcn *s,
			const struct sroce_dcqcn_params *p);
void sroce_dcqcn_alpha_timer(struct sroce_dcqcn *s,
			     const struct sroce_dcqcn_params *p);
bool sroce_dcqcn_rate_timer(struct sroce_dcqcn *s,
			    const struct sroce_dcqcn_params *p);
bool sroce_dcqcn_tx_bytes(struct sroce_dcqcn *s,
			  const struct sroce_dcqcn_params *p, u32 bytes);

/** sroce_dcqcn_alpha_1024() - alpha in mlx5's 1/1024 units, rounded */
static inline u32 sroce_dcqcn_alpha_1024(const struct sroce_dcqcn *s)
{
	return (s->alpha + (1U << (SROCE_CC_ALPHA_SHIFT - 11))) >>
	       (SROCE_CC_ALPHA_SHIFT - 10);
}

u64 sroce_cc_tx_time_ns(u32 rate_mbps, u32 bytes);

/*
 * Notification point.  Keep one u64 per QP, start it at
 * SROCE_NP_CNP_NONE (no CNP sent yet; a clock that reads exactly this
 * value is treated the same, which costs at most one extra CNP).
 */
#define SROCE_NP_CNP_NONE	(~(u64)0)

static inline void sroce_np_init(u64 *last_ns)
{
	*last_ns = SROCE_NP_CNP_NONE;
}

bool sroce_np_cnp_allowed(u64 *last_ns, u64 now_ns, u32 min_gap_us);

/*
 * RC transport window: how many PSNs a requester may leave unacknowledged.
 * IBTA leaves this to the implementation.  A fixed window lets the
 * windows of many QPs fill whatever queue the path has; once the queueing
 * delay passes the transport timeout, every QP times out and go-back-N
 * resends what is still queued, and the retries run out.  So, as TCP
 * (RFC 5681) does in packets: a timeout shrinks the window to
 * SROCE_CWND_MIN and halves the threshold; acknowledged PSNs then grow it
 * by their number up to the threshold (slow start), and by one per
 * window's worth beyond it, up to @max.  A new QP starts at
 * SROCE_CWND_INIT in slow start: 256 QPs that each sent a full window at
 * once queued 128 MB on that link, too deep to drain within the retries.
 *
 * struct sroce_cwnd - per-QP window state
 * @cwnd:     PSNs that may be unacknowledged, SROCE_CWND_MIN..@max
 * @ssthresh: slow start threshold
 * @acc:      PSNs acknowledged toward the next +1 above the threshold
 * @max:      the fixed window it never exceeds
 */
#define SROCE_CWND_MIN		1U
#define SROCE_CWND_INIT		8U

struct sroce_cwnd {
	u32 cwnd;
	u32 ssthresh;
	u32 acc;
	u32 max;
};

void sroce_cwnd_init(struct sroce_cwnd *w, u32 max);
void sroce_cwnd_acked(struct sroce_cwnd *w, u32 n);
void sroce_cwnd_timeout(struct sroce_cwnd *w);

#endif /* SROCE_CC_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Portable core: DCQCN reaction point and notification point arithmetic
 * (Zhu et al., SIGCOMM 2015, section 3).
 *
 * Pure integer state machines: the caller owns the timers and the clock,
 * so the same code drives sroce.ko's pacing, the native unit tests and the
 * discrete-event simulator in tools/sroce-sim/.
 */
#include "sroce/sroce_cc.h"

void sroce_dcqcn_params_default(struct sroce_dcqcn_params *p)
{
	/* mlx5's defaults, except where noted. */
	p->ai_rate = 5;
	p->hai_rate = 50;
	p->time_reset = 300;
	p->byte_reset = 32767;
	/* The paper's F = 5; mlx5 ships 1, which skips most fast recovery. */
	p->threshold = 5;
	p->gd = 8;
	p->min_dec_fac = 50;
	p->min_rate = 1;
	p->max_rate = 100000;
	p->initial_alpha = 1023;
	p->rate_on_first_cnp = 0;
	p->dce_tcp_rtt = 55;
	p->np_min_time_between_cnps = 4;
}

static bool sroce_cc_in(u32 v, u32 lo, u32 hi)
{
	return v >= lo && v <= hi;
}

/**
 * sroce_dcqcn_params_check() - validate knobs before they reach a QP
 * @p: parameters; ranges are listed with struct sroce_dcqcn_params
 *
 * The ranges keep every product in the arithmetic below inside u32 or u64
 * and every shift below the operand width.
 *
 * Return: 0, or -SROCE_CC_EINVAL for the first out-of-range knob.
 */
int sroce_dcqcn_params_check(const struct sroce_dcqcn_params *p)
{
	if (!sroce_cc_in(p->max_rate, 1, SROCE_CC_RATE_MAX) ||
	    !sroce_cc_in(p->min_rate, 1, p->max_rate) ||
	    !sroce_cc_in(p->ai_rate, 1, p->max_rate) ||
	    !sroce_cc_in(p->hai_rate, 1, p->max_rate) ||
	    !sroce_cc_in(p->time_reset, 1, SROCE_CC_TIME_MAX_US) ||
	    !sroce_cc_in(p->dce_tcp_rtt, 1, SROCE_CC_TIME_MAX_US) ||
	    !sroce_cc_in(p->np_min_time_between_cnps, 0,
			 SROCE_CC_TIME_MAX_US) ||
	    p->byte_reset < 64 ||
	    !sroce_cc_in(p->threshold, 1, 31) ||
	    !sroce_cc_in(p->gd, 1, 15) ||
	    !sroce_cc_in(p->min_dec_fac, 1, 100) ||
	    p->initial_alpha > 1024)
		return -SROCE_CC_EINVAL;
	if (p->rate_on_first_cnp &&
	    !sroce_cc_in(p->rate_on_first_cnp, p->min_rate, p->max_rate))
		return -SROCE_CC_EINVAL;
	return 0;
}

/**
 * sroce_dcqcn_init() - unthrottled reaction point
 * @s: state to initialise
 * @p: checked parameters
 *
 * Also the state a QP returns to when its rate climbs back to the line
 * rate, like mlx5 releasing the QP's rate limiter: the next CNP is again a
 * "first" one and starts from @initial_alpha.
 */
void sroce_dcqcn_init(struct sroce_dcqcn *s,
		      const struct sroce_dcqcn_params *p)
{
	memset(s, 0, sizeof(*s));
	s->rc = p->max_rate;
	s->rt = p->max_rate;
	s->alpha = p->initial_alpha << (SROCE_CC_ALPHA_SHIFT - 10);
}

/**
 * sroce_dcqcn_on_cnp() - rate cut on a Congestion Notification Packet
 * @s: reaction point state
 * @p: checked parameters
 *
 * Paper, section 3.1: R_T = R_C, R_C = R_C (1 - alpha / 2),
 * alpha = (1 - g) alpha + g, and the timer, byte counter and their stage
 * counts restart.  mlx5's floors bound a single cut: at least
 * @min_dec_fac percent of R_C and never below @min_rate.
 *
 * Return: true when R_C changed.
 */
bool sroce_dcqcn_on_cnp(struct sroce_dcqcn *s,
			const struct sroce_dcqcn_params *p)
{
	u32 old = s->rc;
	u32 rc, floor;

	if (!s->seen_cnp && p->rate_on_first_cnp) {
		rc = old < p->rate_on_first_cnp ? old : p->rate_on_first_cnp;
	} else {
		/* The cut uses alpha from before this CNP's update. */
		rc = old - (u32)(((u64)old * s->alpha) >>
				 (SROCE_CC_ALPHA_SHIFT + 1));
		/* old <= 400000 and min_dec_fac <= 100: fits in u32. */
		floor = old * p->min_dec_fac / 100;
		if (rc < floor)
			rc = floor;
	}
	if (rc < p->min_rate)
		rc = p->min_rate;
	if (rc > p->max_rate)
		rc = p->max_rate;

	s->rt = old < p->max_rate ? old : p->max_rate;
	s->rc = rc;
	/* alpha <= ONE stays <= ONE: (1 - g) ONE + g ONE == ONE. */
	s->alpha = s->alpha - (s->alpha >> p->gd) +
		   (SROCE_CC_ALPHA_ONE >> p->gd);
	s->t_stage = 0;
	s->b_stage = 0;
	s->bytes = 0;
	s->cnp_in_period = true;
	s->seen_cnp = true;
	s->limited = rc < p->max_rate;
	return rc != old;
}

/**
 * sroce_dcqcn_alpha_timer() - alpha update, every @dce_tcp_rtt us
 * @s: reaction point state
 * @p: checked parameters
 *
 * Paper, section 3.1: without a CNP for K, alpha = (1 - g) alpha.  The
 * product is rounded down, so alpha stops decaying just below 2^gd / ONE
 * instead of reaching 0; it can never go negative.
 */
void sroce_dcqcn_alpha_timer(struct sroce_dcqcn *s,
			     const struct sroce_dcqcn_params *p)
{
	if (!s->cnp_in_period)
		s->alpha -= s->alpha >> p->gd;
	s->cnp_in_period = false;
}

static void sroce_dcqcn_stage_inc(u32 *stage)
{
	if (*stage < SROCE_DCQCN_STAGE_MAX)
		(*stage)++;
}

/*
 * One rate-increase event from the timer or the byte counter; @stage is
 * the counter of its source.  Paper, section 3.1 and its RP state machine
 * (QCN's increase), with F = @threshold and T, BC the events each source had
 * completed before this one, so that fast recovery lasts F events:
 *   fast recovery  max(T, BC) < F:   R_C = (R_T + R_C) / 2
 *   hyper          min(T, BC) > F:   R_T += i R_HAI, i = min(T, BC) - F,
 *                                    then the same average
 *   additive       otherwise:        R_T += R_AI, then the same average
 * The average rounds up so that R_C can actually reach R_T.
 */
static bool sroce_dcqcn_increase(struct sroce_dcqcn *s,
				 const struct sroce_dcqcn_params *p,
				 u32 *stage)
{
	u32 hi = s->t_stage > s->b_stage ? s->t_stage : s->b_stage;
	u32 lo = s->t_stage < s->b_stage ? s->t_stage : s->b_stage;
	u32 old = s->rc;
	u64 rt = s->rt;

	sroce_dcqcn_stage_inc(stage);
	if (lo > p->threshold)
		rt += (u64)(lo - p->threshold) * p->hai_rate;
	else if (hi >= p->threshold)
		rt += p->ai_rate;
	if (rt > p->max_rate)
		rt = p->max_rate;
	s->rt = (u32)rt;

	if (s->rc < s->rt)
		s->rc += (s->rt - s->rc + 1) / 2;
	else
		s->rc = s->rt;	/* only if max_rate was lowered meanwhile */

	if (s->rc >= p->max_rate)
		sroce_dcqcn_init(s, p);
	return s->rc != old;
}

/**
 * sroce_dcqcn_rate_timer() - rate-increase timer expiry, every @time_reset
 * @s: reaction point state
 * @p: checked parameters
 *
 * Return: true when R_C changed.  Does nothing for an unthrottled QP.
 */
bool sroce_dcqcn_rate_timer(struct sroce_dcqcn *s,
			    const struct sroce_dcqcn_params *p)
{
	if (!s->limited)
		return false;
	return sroce_dcqcn_increase(s, p, &s->t_stage);
}

/**
 * sroce_dcqcn_tx_bytes() - byte counter: account for sent bytes
 * @s: reaction point state
 * @p: checked parameters
 * @bytes: bytes just sent
 *
 * Every @byte_reset bytes is one increase event, so a large @bytes may
 * fire several.  The loop ends once the QP is back at line rate: after
 * F fast-recovery events each one adds at least @ai_rate to R_T, so about
 * F + max_rate / ai_rate + 20 events at most, whatever @bytes is.
 *
 * Return: true when R_C changed.  Does nothing for an unthrottled QP.
 */
bool sroce_dcqcn_tx_bytes(struct sroce_dcqcn *s,
			  const struct sroce_dcqcn_params *p, u32 bytes)
{
	u64 total, n;
	bool changed = false;

	if (!s->limited)
		return false;
	total = (u64)s->bytes + bytes;
	n = sroce_div_u64_u32(total, p->byte_reset);
	s->bytes = (u32)(total - n * p->byte_reset);
	for (; n && s->limited; n--)
		if (sroce_dcqcn_increase(s, p, &s->b_stage))
			changed = true;
	return changed;
}

/**
 * sroce_cc_tx_time_ns() - wire time of @bytes at @rate_mbps
 * @rate_mbps: rate in Mb/s; 0 means unpaced
 * @bytes: bytes on the wire
 *
 * Return: bytes * 8 * 1000 / rate ns, rounded down; 0 for rate 0.  The
 * product is at most 2^32 * 8000 < 2^45, so it cannot overflow.
 */
u64 sroce_cc_tx_time_ns(u32 rate_mbps, u32 bytes)
{
	if (!rate_mbps)
		return 0;
	return sroce_div_u64_u32((u64)bytes * 8000, rate_mbps);
}

/**
 * sroce_np_cnp_allowed() - may the NP send a CNP for this QP now?
 * @last_ns: per-QP time of the last CNP, SROCE_NP_CNP_NONE before the first
 * @now_ns: current time
 * @min_gap_us: minimum spacing (paper's N, mlx5's min_time_between_cnps)
 *
 * The unsigned difference is right across a u64 wrap, and a clock that
 * moved backwards only lets one CNP through early.
 *
 * Return: true, and @last_ns set to @now_ns, when a CNP may be sent.
 */
bool sroce_np_cnp_allowed(u64 *last_ns, u64 now_ns, u32 min_gap_us)
{
	if (*last_ns != SROCE_NP_CNP_NONE &&
	    now_ns - *last_ns < (u64)min_gap_us * 1000)
		return false;
	*last_ns = now_ns;
	return true;
}

/**
 * sroce_cwnd_init() - a new QP's window, in slow start up to @max
 * @w: state
 * @max: largest window (raised to SROCE_CWND_MIN)
 */
void sroce_cwnd_init(struct sroce_cwnd *w, u32 max)
{
	if (max < SROCE_CWND_MIN)
		max = SROCE_CWND_MIN;
	w->max = max;
	w->cwnd = max < SROCE_CWND_INIT ? max : SROCE_CWND_INIT;
	w->ssthresh = max;
	w->acc = 0;
}

/**
 * sroce_cwnd_acked() - @n more PSNs were acknowledged
 * @w: state
 * @n: newly acknowledged PSNs (any count; a 24-bit PSN distance)
 */
void sroce_cwnd_acked(struct sroce_cwnd *w, u32 n)
{
	u32 room;

	if (w->cwnd < w->ssthresh) {
		room = w->ssthresh - w->cwnd;
		if (n <= room) {
			w->cwnd += n;
			return;
		}
		w->cwnd = w->ssthresh;
		n -= room;
	}
	if (w->cwnd >= w->max) {
		w->acc = 0;
		return;
	}
	/* n < 2^24 and acc < cwnd <= max: no overflow. */
	w->acc += n;
	while (w->acc >= w->cwnd && w->cwnd < w->max) {
		w->acc -= w->cwnd;
		w->cwnd++;
	}
	if (w->cwnd >= w->max)
		w->acc = 0;
}

/**
 * sroce_cwnd_timeout() - the transport timer expired
 * @w: state
 */
void sroce_cwnd_timeout(struct sroce_cwnd *w)
{
	w->ssthresh = w->cwnd / 2;
	if (w->ssthresh < SROCE_CWND_MIN)
		w->ssthresh = SROCE_CWND_MIN;
	w->cwnd = SROCE_CWND_MIN;
	w->acc = 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests: DCQCN reaction point / notification point arithmetic.
 * Expected values were worked out by hand from the formulas in
 * sroce_cc.c (and cross-checked with an independent model), so every
 * rounding step is pinned down.
 */
#include "ktap.h"
#include "sroce/sroce_cc.h"

#define ONE SROCE_CC_ALPHA_ONE

static struct sroce_dcqcn_params defaults(void)
{
	struct sroce_dcqcn_params p;

	memset(&p, 0xa5, sizeof(p));	/* every field must be written */
	sroce_dcqcn_params_default(&p);
	return p;
}

static void test_params(void)
{
	struct sroce_dcqcn_params d = defaults(), p;

	CHECK(sroce_dcqcn_params_check(&d) == 0, "defaults pass the check");
	CHECK(d.ai_rate == 5 && d.hai_rate == 50 && d.time_reset == 300 &&
	      d.byte_reset == 32767 && d.threshold == 5 && d.gd == 8 &&
	      d.min_dec_fac == 50 && d.min_rate == 1 &&
	      d.max_rate == 100000 && d.initial_alpha == 1023 &&
	      d.rate_on_first_cnp == 0 && d.dce_tcp_rtt == 55 &&
	      d.np_min_time_between_cnps == 4,
	      "default values (mlx5's, F = 5 from the paper)");

#define REJECT(field, val) do {						\
	u32 v_ = (val);							\
	p = d;								\
	p.field = v_;							\
	CHECK(sroce_dcqcn_params_check(&p) == -22,			\
	      "%s = %u rejected", #field, v_);				\
} while (0)
#define ACCEPT(field, val) do {						\
	u32 v_ = (val);							\
	p = d;								\
	p.field = v_;							\
	CHECK(sroce_dcqcn_params_check(&p) == 0,			\
	      "%s = %u accepted", #field, v_);				\
} while (0)

	REJECT(max_rate, 0);
	REJECT(max_rate, 400001);
	ACCEPT(max_rate, 400000);
	REJECT(min_rate, 0);
	REJECT(min_rate, 100001);
	ACCEPT(min_rate, 100000);
	REJECT(ai_rate, 0);
	REJECT(ai_rate, 100001);
	ACCEPT(ai_rate, 100000);
	REJECT(hai_rate, 0);
	REJECT(hai_rate, 100001);
	ACCEPT(hai_rate, 100000);
	REJECT(time_reset, 0);
	REJECT(time_reset, 10000001);
	ACCEPT(time_reset, 10000000);
	REJECT(dce_tcp_rtt, 0);
	REJECT(dce_tcp_rtt, 10000001);
	ACCEPT(dce_tcp_rtt, 1);
	REJECT(np_min_time_between_cnps, 10000001);
	ACCEPT(np_min_time_between_cnps, 0);
	REJECT(byte_reset, 63);
	REJECT(byte_reset, 0);
	ACCEPT(byte_reset, 64);
	ACCEPT(byte_reset, 0xffffffff);
	REJECT(threshold, 0);
	REJECT(threshold, 32);
	ACCEPT(threshold, 31);
	REJECT(gd, 0);
	REJECT(gd, 16);
	ACCEPT(gd, 15);
	REJECT(min_dec_fac, 0);
	REJECT(min_dec_fac, 101);
	ACCEPT(min_dec_fac, 100);
	REJECT(initial_alpha, 1025);
	ACCEPT(initial_alpha, 1024);
	ACCEPT(initial_alpha, 0);
	REJECT(rate_on_first_cnp, 100001);
	ACCEPT(rate_on_first_cnp, 100000);
	ACCEPT(rate_on_first_cnp, 1);

	p = d;
	p.min_rate = 100;
	p.rate_on_first_cnp = 99;
	CHECK(sroce_dcqcn_params_check(&p) == -22,
	      "rate_on_first_cnp below min_rate rejected");
	p = d;
	p.max_rate = 1000;
	p.min_rate = 1001;
	CHECK(sroce_dcqcn_params_check(&p) == -22,
	      "min_rate above a lowered max_rate rejected");
#undef REJECT
#undef ACCEPT
}

static void test_init(void)
{
	struct sroce_dcqcn_params p = defaults();
	struct sroce_dcqcn s;
	bool r, r2;

	memset(&s, 0x5a, sizeof(s));
	sroce_dcqcn_init(&s, &p);
	CHECK(s.rc == 100000 && s.rt == 100000, "init: RC = RT = max_rate");
	CHECK(s.alpha == 1023U << 10 && sroce_dcqcn_alpha_1024(&s) == 1023,
	      "init: alpha = initial_alpha (1023/1024 = %u)", s.alpha);
	CHECK(!s.t_stage && !s.b_stage && !s.bytes && !s.cnp_in_period &&
	      !s.limited && !s.seen_cnp, "init: counters and flags clear");
	r = sroce_dcqcn_rate_timer(&s, &p);
	CHECK(!r && s.rc == 100000 && !s.t_stage,
	      "rate timer does nothing while unthrottled");
	r2 = sroce_dcqcn_tx_bytes(&s, &p, 1000000);
	CHECK(!r2 && !s.bytes && !s.b_stage,
	      "byte counter does nothing while unthrottled");

	p.initial_alpha = 1024;
	sroce_dcqcn_init(&s, &p);
	CHECK(s.alpha == ONE && sroce_dcqcn_alpha_1024(&s) == 1024,
	      "initial_alpha 1024 is exactly ONE");
}

static void test_cut(void)
{
	struct sroce_dcqcn_params p = defaults();
	struct sroce_dcqcn s;
	unsigned int i;
	bool r, ok;

	/* 100000 * 1047552 >> 21 = 49951 */
	sroce_dcqcn_init(&s, &p);
	r = sroce_dcqcn_on_cnp(&s, &p);
	CHECK(r, "first CNP changes the rate");
	CHECK(s.rc == 50049 && s.rt == 100000,
	      "first CNP: RT = old RC, RC = RC (1 - alpha / 2) = %u", s.rc);
	CHECK(s.alpha == 1047556,
	      "alpha = alpha - alpha / 256 + ONE / 256 = %u", s.alpha);
	CHECK(s.limited && s.seen_cnp && s.cnp_in_period,
	      "first CNP: limited, seen_cnp, cnp_in_period");
	r = sroce_dcqcn_on_cnp(&s, &p);
	CHECK(r && s.rc == 25049 && s.rt == 50049 && s.alpha == 1047560,
	      "second CNP: RT = 50049, RC = 25049, alpha = 1047560");

	p.rate_on_first_cnp = 20000;
	sroce_dcqcn_init(&s, &p);
	r = sroce_dcqcn_on_cnp(&s, &p);
	CHECK(r && s.rc == 20000 && s.rt == 100000,
	      "first CNP with rate_on_first_cnp: RC = 20000, RT = 100000");
	CHECK(s.alpha == 1047556, "... and alpha still updates");
	r = sroce_dcqcn_on_cnp(&s, &p);
	CHECK(r && s.rc == 10010 && s.rt == 20000,
	      "second CNP cuts by alpha, not to rate_on_first_cnp (RC %u)",
	      s.rc);

	/* alpha = ONE cuts exactly in half, then the floors apply. */
	p = defaults();
	p.initial_alpha = 1024;
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	CHECK(s.rc == 50000 && s.alpha == ONE,
	      "alpha = ONE halves RC and stays ONE");
	p.min_dec_fac = 80;
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	CHECK(s.rc == 80000, "min_dec_fac 80: one cut keeps 80%% of RC");
	p.min_dec_fac = 100;
	sroce_dcqcn_init(&s, &p);
	r = sroce_dcqcn_on_cnp(&s, &p);
	CHECK(!r && s.rc == 100000 && !s.limited,
	      "min_dec_fac 100: no cut, QP stays unthrottled");
	p.min_dec_fac = 50;
	p.min_rate = 60000;
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	CHECK(s.rc == 60000, "min_rate 60000 floors a cut to 50000");
	r = sroce_dcqcn_on_cnp(&s, &p);
	CHECK(!r && s.rc == 60000 && s.rt == 60000,
	      "CNP at min_rate: RC unchanged, reported as no change");

	p = defaults();
	p.min_rate = 7;
	sroce_dcqcn_init(&s, &p);
	ok = true;
	for (i = 0; i < 100; i++) {
		sroce_dcqcn_on_cnp(&s, &p);
		if (s.rc < 7 || s.rc > s.rt)
			ok = false;
	}
	CHECK(ok && s.rc == 7, "100 CNPs: RC settles at min_rate, never below");
}

static void test_alpha(void)
{
	struct sroce_dcqcn_params p = defaults();
	struct sroce_dcqcn s;
	unsigned int i;
	bool ok;

	p.initial_alpha = 1024;
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	sroce_dcqcn_alpha_timer(&s, &p);
	CHECK(s.alpha == ONE && !s.cnp_in_period,
	      "alpha timer after a CNP: no decay, flag cleared");
	sroce_dcqcn_alpha_timer(&s, &p);
	CHECK(s.alpha == 1044480,
	      "alpha timer without CNP: alpha = ONE - ONE / 256 = %u",
	      s.alpha);
	sroce_dcqcn_on_cnp(&s, &p);
	CHECK(s.alpha == 1044496,
	      "CNP: 1044480 - 4080 + 4096 = %u", s.alpha);

	p.gd = 1;
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	sroce_dcqcn_alpha_timer(&s, &p);
	sroce_dcqcn_alpha_timer(&s, &p);
	CHECK(s.alpha == ONE / 2, "gd 1: one decay halves alpha");

	p = defaults();
	sroce_dcqcn_init(&s, &p);
	ok = true;
	for (i = 0; i < 10000; i++) {
		sroce_dcqcn_alpha_timer(&s, &p);
		if (s.alpha > ONE)
			ok = false;
	}
	CHECK(ok && s.alpha == 255 && sroce_dcqcn_alpha_1024(&s) == 0,
	      "10000 decays: alpha stops at 255 (2^gd - 1), never below 0");

	p.gd = 15;
	sroce_dcqcn_init(&s, &p);
	ok = true;
	for (i = 0; i < 2000000 && ok; i++) {
		sroce_dcqcn_on_cnp(&s, &p);
		if (s.alpha > ONE)
			ok = false;
	}
	CHECK(ok && s.alpha == ONE,
	      "2e6 CNPs at gd 15: alpha reaches ONE exactly, never above");

	p.gd = 8;
	p.initial_alpha = 0;
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	CHECK(s.alpha == ONE / 256 && s.rc == 100000 && !s.limited,
	      "initial_alpha 0: no cut, alpha = g");
	CHECK(sroce_dcqcn_alpha_1024(&s) == 4, "alpha_1024(ONE / 256) = 4");
}

static void test_increase(void)
{
	static const unsigned int fr[] = { 37500, 43750, 46875, 48438, 49219 };
	static const unsigned int bc_rc[] = {
		49913, 49967, 49996, 50013, 50024, 50032 };
	struct sroce_dcqcn_params p = defaults();
	struct sroce_dcqcn s;
	unsigned int i, prev_gap;
	bool r, ok;

	/* Two CNPs at alpha = ONE: RT = 50000, RC = 25000. */
	p.initial_alpha = 1024;
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	CHECK(s.rc == 25000 && s.rt == 50000, "setup: RC 25000, RT 50000");

	ok = true;
	prev_gap = s.rt - s.rc;
	for (i = 0; i < 5; i++) {
		r = sroce_dcqcn_rate_timer(&s, &p);
		if (!r || s.rc != fr[i] || s.rt != 50000 ||
		    s.t_stage != i + 1 || s.rt - s.rc > (prev_gap + 1) / 2)
			ok = false;
		prev_gap = s.rt - s.rc;
	}
	CHECK(ok, "fast recovery: 5 (F) timer events halve RT - RC, RT fixed");

	r = sroce_dcqcn_rate_timer(&s, &p);
	CHECK(r && s.rt == 50005 && s.rc == 49612 && s.t_stage == 6,
	      "additive increase: RT += 5, RC = ceil((RT + RC) / 2) = %u",
	      s.rc);
	r = sroce_dcqcn_rate_timer(&s, &p);
	CHECK(r && s.rt == 50010 && s.rc == 49811,
	      "additive increase again: RT 50010, RC 49811");

	ok = true;
	for (i = 0; i < 6; i++) {
		r = sroce_dcqcn_tx_bytes(&s, &p, 32767);
		if (!r || s.rc != bc_rc[i] || s.rt != 50015 + 5 * i ||
		    s.b_stage != i + 1 || s.bytes)
			ok = false;
	}
	CHECK(ok, "byte counter below F while the timer is past it: additive");

	r = sroce_dcqcn_rate_timer(&s, &p);
	CHECK(r && s.rt == 50090 && s.rc == 50061,
	      "hyper increase (T 7, BC 6): RT += 1 * 50 = 50090, RC 50061");
	r = sroce_dcqcn_tx_bytes(&s, &p, 32767);
	CHECK(r && s.rt == 50140 && s.rc == 50101,
	      "hyper increase (T 8, BC 6): RT 50140, RC 50101");
	r = sroce_dcqcn_rate_timer(&s, &p);
	CHECK(r && s.rt == 50240 && s.rc == 50171,
	      "hyper increase (T 8, BC 7): RT += 2 * 50 = 50240, RC 50171");

	r = sroce_dcqcn_on_cnp(&s, &p);
	CHECK(r && s.rt == 50171 && !s.t_stage && !s.b_stage && !s.bytes,
	      "CNP resets stages and byte counter; RT = RC at the cut");
}

static void test_byte_counter(void)
{
	struct sroce_dcqcn_params p = defaults();
	struct sroce_dcqcn s;
	bool r, r2;

	p.initial_alpha = 1024;
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	r = sroce_dcqcn_tx_bytes(&s, &p, 3 * 32767 + 100);
	CHECK(r && s.b_stage == 3 && s.bytes == 100 && s.rc == 46875,
	      "3.x byte_reset at once: three events, 100 bytes carried");
	r = sroce_dcqcn_tx_bytes(&s, &p, 32666);
	CHECK(!r && s.bytes == 32766 && s.b_stage == 3,
	      "one byte short of an event: no change");
	r = sroce_dcqcn_tx_bytes(&s, &p, 1);
	CHECK(r && s.bytes == 0 && s.b_stage == 4 && s.rc == 48438,
	      "the last byte fires the fourth event");

	sroce_dcqcn_on_cnp(&s, &p);
	r = sroce_dcqcn_tx_bytes(&s, &p, 0xffffffff);
	CHECK(r && !s.limited && s.rc == 100000 && !s.bytes,
	      "4 GiB at once climbs back to max_rate and stops counting");

	p.byte_reset = 0xffffffff;
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	r = sroce_dcqcn_tx_bytes(&s, &p, 0xfffffffe);
	r2 = sroce_dcqcn_tx_bytes(&s, &p, 0xffffffff);
	CHECK(!r && r2 && s.bytes == 0xfffffffe && s.b_stage == 1,
	      "byte_reset 2^32 - 1: carry without u32 overflow");
}

static void test_clamp(void)
{
	static const unsigned int rc[] = {
		75025, 87513, 93757, 96879, 98440, 99220, 99610, 99805,
		99903, 99952, 99976, 99988, 99994, 99997, 99999 };
	struct sroce_dcqcn_params p = defaults();
	struct sroce_dcqcn s;
	unsigned int i;
	bool r, ok = true;

	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	for (i = 0; i < 15; i++) {
		r = sroce_dcqcn_rate_timer(&s, &p);
		if (!r || s.rc != rc[i] || s.rt != 100000 || !s.limited)
			ok = false;
	}
	CHECK(ok, "RT clamps at max_rate; RC approaches it, rounding up");
	r = sroce_dcqcn_rate_timer(&s, &p);
	CHECK(r && s.rc == 100000 && s.rt == 100000 && !s.limited,
	      "16th event reaches max_rate: unthrottled");
	CHECK(s.alpha == 1023U << 10 && !s.seen_cnp && !s.t_stage &&
	      !s.b_stage && !s.bytes && !s.cnp_in_period,
	      "unthrottled state equals a fresh init");
	r = sroce_dcqcn_rate_timer(&s, &p);
	CHECK(!r && !s.t_stage, "timers stop having effect once unthrottled");
	p.rate_on_first_cnp = 30000;
	r = sroce_dcqcn_on_cnp(&s, &p);
	CHECK(r && s.rc == 30000, "the next CNP is a first CNP again");

	/* A huge hyper step clamps RT instead of overflowing. */
	p = defaults();
	p.hai_rate = 100000;
	p.threshold = 1;
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	s.t_stage = SROCE_DCQCN_STAGE_MAX;
	s.b_stage = SROCE_DCQCN_STAGE_MAX;
	r = sroce_dcqcn_rate_timer(&s, &p);
	CHECK(r && s.rt == 100000 && s.rc == 75025 &&
	      s.t_stage == SROCE_DCQCN_STAGE_MAX,
	      "saturated stages x max hai: RT clamps, stage saturates");

	/* max_rate lowered under a QP: RC follows RT down. */
	p = defaults();
	sroce_dcqcn_init(&s, &p);
	sroce_dcqcn_on_cnp(&s, &p);
	p.max_rate = 40000;
	r = sroce_dcqcn_rate_timer(&s, &p);
	CHECK(r && s.rt == 40000 && s.rc == 40000 && !s.limited &&
	      s.alpha == 1023U << 10,
	      "lowered max_rate: RT and RC clamp, QP unthrottled");
}

static void test_tx_time(void)
{
	CHECK(sroce_cc_tx_time_ns(1000, 1000) == 8000, "1000 B at 1 Gb/s");
	CHECK(sroce_cc_tx_time_ns(40000, 1082) == 216,
	      "1082 B at 40 Gb/s = 216.4 ns, rounded down");
	CHECK(sroce_cc_tx_time_ns(400000, 1) == 0, "1 B at 400 Gb/s: 0 ns");
	CHECK(sroce_cc_tx_time_ns(3, 1) == 2666, "1 B at 3 Mb/s");
	CHECK(sroce_cc_tx_time_ns(0, 4096) == 0, "rate 0: unpaced");
	CHECK(sroce_cc_tx_time_ns(1, 0xffffffff) == 34359738360000ULL,
	      "4 GiB at 1 Mb/s: no overflow");
	CHECK(sroce_cc_tx_time_ns(400000, 0xffffffff) == 85899345ULL,
	      "4 GiB at 400 Gb/s");
}

static void test_np(void)
{
	u64 last;
	bool a, b, c;

	sroce_np_init(&last);
	a = sroce_np_cnp_allowed(&last, 0, 4);
	CHECK(a && last == 0, "first CNP allowed, even at time 0");
	a = sroce_np_cnp_allowed(&last, 3999, 4);
	CHECK(!a && last == 0, "within the gap: refused, last unchanged");
	a = sroce_np_cnp_allowed(&last, 4000, 4);
	CHECK(a && last == 4000, "exactly one gap later: allowed");
	a = sroce_np_cnp_allowed(&last, 4001, 4);
	b = sroce_np_cnp_allowed(&last, 1000000, 4);
	CHECK(!a && b && last == 1000000,
	      "refused right after, allowed much later");
	a = sroce_np_cnp_allowed(&last, 1000000, 0);
	b = sroce_np_cnp_allowed(&last, 1000000, 0);
	CHECK(a && b, "gap 0: always allowed, even at the same instant");
	a = sroce_np_cnp_allowed(&last, 0ULL - 1000, 4);
	b = sroce_np_cnp_allowed(&last, 2999, 4);
	c = sroce_np_cnp_allowed(&last, 3000, 4);
	CHECK(a && !b && c && last == 3000,
	      "u64 wrap: spacing measured across it");
	sroce_np_init(&last);
	a = sroce_np_cnp_allowed(&last, 5000000000000ULL, 10000000);
	b = sroce_np_cnp_allowed(&last, 5000000000000ULL + 9999999999ULL,
				 10000000);
	c = sroce_np_cnp_allowed(&last, 5000000000000ULL + 10000000000ULL,
				 10000000);
	CHECK(a && !b && c, "10 s gap: no u32 overflow in us -> ns");
}

static void test_cwnd(void)
{
	struct sroce_cwnd w;
	u32 i;

	sroce_cwnd_init(&w, 128);
	CHECK(w.cwnd == SROCE_CWND_INIT && w.ssthresh == 128,
	      "starts small, in slow start up to max");
	sroce_cwnd_acked(&w, SROCE_CWND_INIT);
	CHECK(w.cwnd == 2 * SROCE_CWND_INIT, "a window acknowledged doubles it");
	sroce_cwnd_acked(&w, 1000);
	CHECK(w.cwnd == 128, "never above max");
	sroce_cwnd_timeout(&w);
	CHECK(w.cwnd == SROCE_CWND_MIN && w.ssthresh == 64,
	      "timeout: window to the minimum, threshold halved");
	sroce_cwnd_acked(&w, 1);
	sroce_cwnd_acked(&w, 2);
	sroce_cwnd_acked(&w, 4);
	CHECK(w.cwnd == 8, "slow start: +1 per acknowledged PSN");
	sroce_cwnd_acked(&w, 100);
	CHECK(w.cwnd == 64 && w.acc == 44,
	      "up to the threshold, the rest counts toward +1 per window");
	sroce_cwnd_timeout(&w);
	sroce_cwnd_timeout(&w);
	sroce_cwnd_timeout(&w);
	CHECK(w.cwnd == 1 && w.ssthresh == 1, "threshold floors at the minimum");
	for (i = 0; i < 1 + 2 + 3 + 1; i++)
		sroce_cwnd_acked(&w, 1);
	CHECK(w.cwnd == 4 && w.acc == 1,
	      "congestion avoidance from 1: 1+2+3 to reach 4");
	sroce_cwnd_acked(&w, 0xffffff);
	CHECK(w.cwnd == 128 && w.acc == 0, "a 2^24 jump reaches max, no overflow");
	sroce_cwnd_init(&w, 0);
	CHECK(w.max == SROCE_CWND_MIN && w.cwnd == SROCE_CWND_MIN,
	      "max below the minimum is raised to it");
	sroce_cwnd_init(&w, 4);
	CHECK(w.cwnd == 4, "a max below the initial window caps it");
}

int main(void)
{
	KTAP_START();
	test_params();
	test_init();
	test_cut();
	test_alpha();
	test_increase();
	test_byte_counter();
	test_clamp();
	test_tx_time();
	test_np();
	test_cwnd();
	return KTAP_DONE();
}

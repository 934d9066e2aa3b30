// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce-sim: discrete-event model of DCQCN over one bottleneck, driven by
 * the driver's own portable core (drivers/.../core/sroce_cc.c, compiled
 * natively).  See README.md for the model and its parameters.
 *
 *   sroce-sim [-o DIR] [-s SEED] [-q] [SCENARIO...]   (2flows, 8flows)
 *
 * Exit status: 0 when every scenario converged (Jain >= 0.95 and >= 90%
 * of the bottleneck used over the second half, no drops, mean queue below
 * Kmax), 1 otherwise, 2 on usage or I/O errors.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sroce/sroce_cc.h"
#include "plot.h"

#define PS_PER_NS	1000ULL
#define PS_PER_US	1000000ULL
#define PS_PER_MS	1000000000ULL

#define MAX_FLOWS	PLOT_NSERIES
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* --- model parameters (README.md explains the choices) ---------------- */

#define LINK_MBPS	40000U		/* bottleneck and sender line rate */
#define PAYLOAD		1024U
/* Ethernet 14 + FCS 4, IPv4 20, UDP 8, BTH 12, ICRC 4 */
#define WIRE_BYTES	(PAYLOAD + 62U)
#define HOP_DELAY_PS	(1 * PS_PER_US)	/* per link, propagation */
#define CNP_DELAY_PS	(2 * PS_PER_US)	/* receiver to sender */
#define KMIN_BYTES	5000U
#define KMAX_BYTES	200000U
#define PMAX_PPM	10000U		/* 1% */
#define BUFFER_BYTES	1000000U
#define SAMPLE_PS	(10 * PS_PER_US)
#define SEED		0x5eed5eedULL	/* -s overrides, for exploration */

#define JAIN_MIN	0.95
#define UTIL_MIN	0.90

struct scenario {
	const char *name;
	int nflows;
	u64 duration;		/* ps */
	u64 start_gap;		/* flow i starts at i * start_gap */
};

static const struct scenario scenarios[] = {
	{ "2flows", 2, 100 * PS_PER_MS, 5 * PS_PER_MS },
	{ "8flows", 8, 100 * PS_PER_MS, 1 * PS_PER_MS },
};

static void sim_params(struct sroce_dcqcn_params *p)
{
	sroce_dcqcn_params_default(p);
	p->max_rate = LINK_MBPS;
	p->min_rate = 10;
	p->ai_rate = 40;
	p->hai_rate = 400;
	p->time_reset = 55;
	p->dce_tcp_rtt = 55;
	p->byte_reset = 10000000;
	p->threshold = 5;
	p->gd = 8;
	p->initial_alpha = 1024;
	p->np_min_time_between_cnps = 50;
}

/* --- event queue: binary min-heap on (time, insertion order) ----------- */

enum ev_type {
	EV_START, EV_SEND, EV_ARRIVE, EV_CNP, EV_RATE, EV_ALPHA, EV_SAMPLE
};

struct event {
	u64 t;
	u64 seq;
	int type;
	int flow;
	u32 gen;
};

struct heap {
	struct event *e;
	size_t n, cap;
	u64 seq;
};

static int ev_before(const struct event *a, const struct event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push(struct heap *h, u64 t, int type, int flow, u32 gen)
{
	struct event ev = { t, h->seq++, type, flow, gen }, tmp;
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->e = realloc(h->e, h->cap * sizeof(*h->e));
		if (!h->e) {
			perror("realloc");
			exit(2);
		}
	}
	i = h->n++;
	h->e[i] = ev;
	while (i && ev_before(&h->e[i], &h->e[(i - 1) / 2])) {
		tmp = h->e[i];
		h->e[i] = h->e[(i - 1) / 2];
		h->e[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct event pop(struct heap *h)
{
	struct event top = h->e[0], tmp;
	size_t i = 0, l, m;

	h->e[0] = h->e[--h->n];
	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < h->n && ev_before(&h->e[l], &h->e[m]))
			m = l;
		if (l + 1 < h->n && ev_before(&h->e[l + 1], &h->e[m]))
			m = l + 1;
		if (m == i)
			break;
		tmp = h->e[i];
		h->e[i] = h->e[m];
		h->e[m] = tmp;
		i = m;
	}
	return top;
}

/* --- model state ------------------------------------------------------- */

struct flow {
	struct sroce_dcqcn cc;
	bool started;
	u64 last_send;		/* ps */
	u32 send_gen, rate_gen, alpha_gen;
	bool alpha_on;		/* an EV_ALPHA chain is pending */
	u64 np_last;		/* NP's last CNP, ns */
	u64 bytes_half;		/* delivered in the second half */
	u64 pkts, marks, cnps, drops;
};

struct sim {
	const struct scenario *sc;
	struct sroce_dcqcn_params p;
	struct heap h;
	struct flow f[MAX_FLOWS];
	u64 now;
	u64 link_free;		/* bottleneck busy until (ps) */
	u64 rng;
	u64 q_max, q_max_half;	/* bytes, after enqueue */
	u64 drops;
	/* samples */
	size_t ns, cap;
	double *t_ms, *rate_gbps, *queue_kb;	/* rate: [flow * cap + k] */
};

/* splitmix64: deterministic, good enough for marking decisions. */
static u64 rng_next(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Serialisation time in ps; exact to the ps, unlike the core's ns. */
static u64 ser_ps(u32 mbps, u32 bytes)
{
	return (u64)bytes * 8000000ULL / mbps;
}

static u64 queue_bytes(const struct sim *s, u64 t)
{
	return s->link_free > t ?
	       (s->link_free - t) * LINK_MBPS / 8000000ULL : 0;
}

/* RED on the instantaneous queue, as in the paper's switch config. */
static bool red_mark(struct sim *s, u64 q)
{
	u64 p_ppm;

	if (q <= KMIN_BYTES)
		return false;
	if (q > KMAX_BYTES)
		return true;
	p_ppm = (q - KMIN_BYTES) * PMAX_PPM / (KMAX_BYTES - KMIN_BYTES);
	return rng_next(&s->rng) % 1000000 < p_ppm;
}

static void arm_send(struct sim *s, int i)
{
	struct flow *f = &s->f[i];
	u64 t = f->last_send + ser_ps(f->cc.rc, WIRE_BYTES);

	if (!f->pkts || t < s->now)
		t = s->now;
	push(&s->h, t, EV_SEND, i, ++f->send_gen);
}

/* A packet of flow @i reaches the bottleneck switch now. */
static void enqueue(struct sim *s, int i)
{
	struct flow *f = &s->f[i];
	u64 ta = s->now;
	u64 q = queue_bytes(s, ta), done, rx;
	bool half = ta >= s->sc->duration / 2;

	if (q + WIRE_BYTES > BUFFER_BYTES) {
		f->drops++;
		s->drops++;
		return;
	}
	done = (s->link_free > ta ? s->link_free : ta) +
	       ser_ps(LINK_MBPS, WIRE_BYTES);
	s->link_free = done;
	if (q + WIRE_BYTES > s->q_max)
		s->q_max = q + WIRE_BYTES;
	if (half && q + WIRE_BYTES > s->q_max_half)
		s->q_max_half = q + WIRE_BYTES;
	if (done >= s->sc->duration / 2 && done < s->sc->duration)
		f->bytes_half += WIRE_BYTES;

	if (!red_mark(s, q))
		return;
	f->marks++;
	/* NP: the receiver sees the packet one hop after it leaves. */
	rx = done + HOP_DELAY_PS;
	if (sroce_np_cnp_allowed(&f->np_last, rx / PS_PER_NS,
				 s->p.np_min_time_between_cnps)) {
		f->cnps++;
		push(&s->h, rx + CNP_DELAY_PS, EV_CNP, i, 0);
	}
}

static void on_cnp(struct sim *s, int i)
{
	struct flow *f = &s->f[i];
	bool changed = sroce_dcqcn_on_cnp(&f->cc, &s->p);

	if (f->cc.limited) {
		/* A cut restarts the increase timer (paper, section 3.1). */
		push(&s->h, s->now + s->p.time_reset * PS_PER_US, EV_RATE, i,
		     ++f->rate_gen);
		if (!f->alpha_on) {
			f->alpha_on = true;
			push(&s->h, s->now + s->p.dce_tcp_rtt * PS_PER_US,
			     EV_ALPHA, i, ++f->alpha_gen);
		}
	}
	if (changed)
		arm_send(s, i);
}

static void sample(struct sim *s)
{
	size_t k = s->ns++;
	int i;

	s->t_ms[k] = (double)s->now / PS_PER_MS;
	for (i = 0; i < s->sc->nflows; i++)
		s->rate_gbps[(size_t)i * s->cap + k] =
			s->f[i].started ? s->f[i].cc.rc / 1000.0 : 0;
	s->queue_kb[k] = queue_bytes(s, s->now) / 1000.0;
	if (s->now + SAMPLE_PS <= s->sc->duration)
		push(&s->h, s->now + SAMPLE_PS, EV_SAMPLE, 0, 0);
}

static void run(struct sim *s)
{
	struct event ev;
	struct flow *f;
	int i;

	for (i = 0; i < s->sc->nflows; i++)
		push(&s->h, (u64)i * s->sc->start_gap, EV_START, i, 0);
	push(&s->h, 0, EV_SAMPLE, 0, 0);

	while (s->h.n) {
		ev = pop(&s->h);
		if (ev.t > s->sc->duration)
			break;
		s->now = ev.t;
		f = &s->f[ev.flow];
		switch (ev.type) {
		case EV_START:
			sroce_dcqcn_init(&f->cc, &s->p);
			sroce_np_init(&f->np_last);
			f->started = true;
			arm_send(s, ev.flow);
			break;
		case EV_SEND:
			if (ev.gen != f->send_gen)
				break;
			/* Store and forward over the sender's link. */
			push(&s->h, s->now + ser_ps(LINK_MBPS, WIRE_BYTES) +
			     HOP_DELAY_PS, EV_ARRIVE, ev.flow, 0);
			f->pkts++;
			f->last_send = s->now;
			sroce_dcqcn_tx_bytes(&f->cc, &s->p, WIRE_BYTES);
			arm_send(s, ev.flow);
			break;
		case EV_ARRIVE:
			enqueue(s, ev.flow);
			break;
		case EV_CNP:
			on_cnp(s, ev.flow);
			break;
		case EV_RATE:
			/* Stale (a cut restarted it) or unthrottled: stop. */
			if (ev.gen != f->rate_gen || !f->cc.limited)
				break;
			if (sroce_dcqcn_rate_timer(&f->cc, &s->p))
				arm_send(s, ev.flow);
			if (f->cc.limited)
				push(&s->h, s->now + s->p.time_reset * PS_PER_US,
				     EV_RATE, ev.flow, ev.gen);
			break;
		case EV_ALPHA:
			if (ev.gen != f->alpha_gen)
				break;
			if (!f->cc.limited) {
				f->alpha_on = false;
				break;
			}
			sroce_dcqcn_alpha_timer(&f->cc, &s->p);
			push(&s->h, s->now + s->p.dce_tcp_rtt * PS_PER_US,
			     EV_ALPHA, ev.flow, ev.gen);
			break;
		case EV_SAMPLE:
			sample(s);
			break;
		}
	}
}

/* --- reporting --------------------------------------------------------- */

static int write_csv(const struct sim *s, const char *path)
{
	FILE *fp = fopen(path, "w");
	size_t k;
	int i;

	if (!fp)
		return -1;
	fprintf(fp, "time_us");
	for (i = 0; i < s->sc->nflows; i++)
		fprintf(fp, ",rate_f%d_mbps", i);
	fprintf(fp, ",queue_kb\n");
	for (k = 0; k < s->ns; k++) {
		fprintf(fp, "%.0f", s->t_ms[k] * 1000);
		for (i = 0; i < s->sc->nflows; i++)
			fprintf(fp, ",%.0f",
				s->rate_gbps[(size_t)i * s->cap + k] * 1000);
		fprintf(fp, ",%.3f\n", s->queue_kb[k]);
	}
	return fclose(fp) ? -1 : 0;
}

static int write_png(const struct sim *s, const char *path)
{
	struct canvas c;
	struct panel top = {
		.x = 110, .y = 60, .w = 1060, .h = 380,
		.xmax = (double)s->sc->duration / PS_PER_MS,
		.ymax = LINK_MBPS / 1000.0 * 1.1,	/* line rate visible */
		.xlabel = "time (ms)", .ylabel = "RC (Gb/s)",
	};
	struct panel bot = top;
	char title[96], name[16];
	double qmax = 0;
	size_t k;
	int i, rc, x;

	snprintf(title, sizeof(title), "DCQCN, %d flows: per-flow rate",
		 s->sc->nflows);
	top.title = title;
	for (k = 0; k < s->ns; k++)
		if (s->queue_kb[k] > qmax)
			qmax = s->queue_kb[k];
	bot.y = 560;
	bot.h = 300;
	bot.ymax = nice_step(qmax > 1 ? qmax : 1, 5) *
		   ceil((qmax > 1 ? qmax : 1) /
			nice_step(qmax > 1 ? qmax : 1, 5));
	bot.ylabel = "queue (KB)";
	bot.title = "bottleneck queue";

	if (canvas_init(&c, 1200, 940))
		return -1;
	panel_draw(&c, &top, s->t_ms, s->rate_gbps, s->ns, s->sc->nflows,
		   s->cap);
	panel_draw(&c, &bot, s->t_ms, s->queue_kb, s->ns, 1, s->cap);
	/* Legend under the title row of the top panel. */
	for (i = 0, x = top.x + 520; i < s->sc->nflows; i++, x += 70) {
		snprintf(name, sizeof(name), "f%d", i);
		canvas_text(&c, x, 10, 2, COL_SERIES + i, "-");
		canvas_text(&c, x + 14, 10, 2, COL_SERIES + i, name);
	}
	rc = canvas_write_png(&c, path);
	canvas_free(&c);
	return rc;
}

/* Returns 1 when the scenario passes its checks. */
static int report(const struct sim *s, const char *txt, FILE *out)
{
	double half_s = (double)s->sc->duration / 2 / (PS_PER_MS * 1000.0);
	double sum = 0, sum2 = 0, x, jain, util, qsum = 0;
	size_t k, nq = 0;
	FILE *fp = fopen(txt, "w");
	FILE *o[2] = { out, fp };
	int i, j, ok;

	for (i = 0; i < s->sc->nflows; i++) {
		x = s->f[i].bytes_half * 8 / half_s / 1e9;
		sum += x;
		sum2 += x * x;
	}
	jain = sum2 > 0 ? sum * sum / (s->sc->nflows * sum2) : 0;
	util = sum / (LINK_MBPS / 1000.0);
	for (k = 0; k < s->ns; k++) {
		if (s->t_ms[k] * PS_PER_MS < s->sc->duration / 2)
			continue;
		qsum += s->queue_kb[k];
		nq++;
	}
	qsum = nq ? qsum / nq : 0;
	ok = jain >= JAIN_MIN && util >= UTIL_MIN && !s->drops &&
	     qsum * 1000 < KMAX_BYTES;

	for (j = 0; j < 2; j++) {
		if (!o[j])
			continue;
		fprintf(o[j], "scenario %s: %d flows, %.0f ms, bottleneck %u Gb/s\n",
			s->sc->name, s->sc->nflows,
			(double)s->sc->duration / PS_PER_MS, LINK_MBPS / 1000);
		fprintf(o[j], "  %4s  %8s  %13s  %8s  %6s  %5s  %13s  %10s\n",
			"flow", "start_ms", "gbps_2nd_half", "pkts", "marks",
			"cnps", "final_rc_mbps", "alpha/1024");
		for (i = 0; i < s->sc->nflows; i++) {
			const struct flow *f = &s->f[i];

			fprintf(o[j], "  %4d  %8.1f  %13.3f  %8llu  %6llu  %5llu  %13u  %10u\n",
				i, (double)i * s->sc->start_gap / PS_PER_MS,
				f->bytes_half * 8 / half_s / 1e9, f->pkts,
				f->marks, f->cnps, f->cc.rc,
				sroce_dcqcn_alpha_1024(&f->cc));
		}
		fprintf(o[j], "  total %.3f Gb/s = %.1f%% of the bottleneck (need >= %.0f%%)\n",
			sum, 100 * util, 100 * UTIL_MIN);
		fprintf(o[j], "  Jain's fairness index %.4f (need >= %.2f)\n",
			jain, JAIN_MIN);
		fprintf(o[j], "  queue: mean %.1f KB (2nd half, need < %u), ",
			qsum, KMAX_BYTES / 1000);
		fprintf(o[j], "max %.1f KB (2nd half), %.1f KB (run); drops %llu\n",
			s->q_max_half / 1000.0, s->q_max / 1000.0, s->drops);
		fprintf(o[j], "  %s\n", ok ? "PASS" : "FAIL");
	}
	if (fp && fclose(fp))
		perror(txt);
	return ok;
}

static u64 seed = SEED;

static int run_scenario(const struct scenario *sc, const char *dir,
			FILE *out)
{
	struct sim *s = calloc(1, sizeof(*s));
	char path[4096];
	int ok, i;

	if (!s)
		return -1;
	s->sc = sc;
	sim_params(&s->p);
	if (sroce_dcqcn_params_check(&s->p)) {
		fprintf(stderr, "sim: parameters rejected by the core\n");
		exit(2);
	}
	s->rng = seed ^ (u64)sc->nflows;
	s->cap = sc->duration / SAMPLE_PS + 2;
	s->t_ms = calloc(s->cap, sizeof(double));
	s->queue_kb = calloc(s->cap, sizeof(double));
	s->rate_gbps = calloc(s->cap * sc->nflows, sizeof(double));
	if (!s->t_ms || !s->queue_kb || !s->rate_gbps) {
		perror("calloc");
		exit(2);
	}
	for (i = 0; i < sc->nflows; i++)
		sroce_np_init(&s->f[i].np_last);

	run(s);

	snprintf(path, sizeof(path), "%s/dcqcn_%s.csv", dir, sc->name);
	if (write_csv(s, path))
		goto io_err;
	snprintf(path, sizeof(path), "%s/dcqcn_%s.png", dir, sc->name);
	if (write_png(s, path))
		goto io_err;
	snprintf(path, sizeof(path), "%s/dcqcn_%s.txt", dir, sc->name);
	ok = report(s, path, out);

	free(s->h.e);
	free(s->t_ms);
	free(s->queue_kb);
	free(s->rate_gbps);
	free(s);
	return ok;
io_err:
	perror(path);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dir = "results/sim";
	int i, a, quiet = 0, fails = 0, ran = 0;

	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "-o") && a + 1 < argc) {
			dir = argv[++a];
		} else if (!strcmp(argv[a], "-s") && a + 1 < argc) {
			seed = strtoull(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "-q")) {
			quiet = 1;
		} else {
			fprintf(stderr, "usage: %s [-o DIR] [-s SEED] [-q] [2flows|8flows]...\n",
				argv[0]);
			return 2;
		}
	}
	if (mkdir(dir, 0777) && errno != EEXIST) {
		perror(dir);
		return 2;
	}
	for (i = 0; i < (int)ARRAY_SIZE(scenarios); i++) {
		int k, want = a == argc;

		for (k = a; k < argc; k++)
			if (!strcmp(argv[k], scenarios[i].name))
				want = 1;
		if (!want)
			continue;
		ran++;
		if (run_scenario(&scenarios[i], dir, quiet ? NULL : stdout) != 1)
			fails++;
	}
	if (!ran) {
		fprintf(stderr, "sim: no such scenario\n");
		return 2;
	}
	printf("results in %s/ (dcqcn_*.csv, .txt, .png): %s\n", dir,
	       fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench_plot: the `make bench` figure from the reporter's text on stdin,
 * drawn with the simulator's dependency-free PNG plotter.
 *
 *   bench_plot OUT.png < lines
 *
 * Lines (fields separated by blanks, names without blanks):
 *   title TEXT...            the figure's heading
 *   series NAME              next bandwidth series (at most 8)
 *   point I X Y              a point of series I: log2(size / 1 KiB), Gb/s
 *                            (a point not given is a gap)
 *   bar LABEL A B            a latency group: rdma_rxe A, sroce B (us)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "../sroce-sim/plot.h"

#define MAX_PTS		16
#define MAX_BARS	8

struct fig {
	char title[128];
	char names[PLOT_NSERIES][32];
	int nser;
	double xs[MAX_PTS];
	double ys[PLOT_NSERIES * MAX_PTS];
	int npts;
	char blabel[MAX_BARS][32];
	double bv[MAX_BARS][2];
	int nbars;
};

static int x_index(struct fig *f, double x)
{
	int k;

	for (k = 0; k < f->npts; k++)
		if (f->xs[k] == x)
			return k;
	if (f->npts == MAX_PTS)
		return -1;
	f->xs[f->npts] = x;
	for (k = 0; k < PLOT_NSERIES; k++)
		f->ys[k * MAX_PTS + f->npts] = NAN;
	return f->npts++;
}

static int parse(struct fig *f, FILE *in)
{
	char line[256], a[64];
	double x, y, b;
	int i, k;

	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "title ", 6)) {
			snprintf(f->title, sizeof(f->title), "%.127s", line + 6);
		} else if (sscanf(line, "series %31s", a) == 1) {
			if (f->nser == PLOT_NSERIES)
				return -1;
			snprintf(f->names[f->nser++], 32, "%.31s", a);
		} else if (sscanf(line, "point %d %lf %lf", &i, &x, &y) == 3) {
			k = x_index(f, x);
			if (i < 0 || i >= f->nser || k < 0)
				return -1;
			f->ys[i * MAX_PTS + k] = y;
		} else if (sscanf(line, "bar %31s %lf %lf", a, &y, &b) == 3) {
			if (f->nbars == MAX_BARS)
				return -1;
			snprintf(f->blabel[f->nbars], 32, "%.31s", a);
			f->bv[f->nbars][0] = y;
			f->bv[f->nbars++][1] = b;
		} else if (line[0]) {
			return -1;
		}
	}
	return 0;
}

/* A y range with room above the largest value. */
static double top_of(double m)
{
	double s = nice_step(m > 0 ? m : 1, 5);

	return s * ceil((m > 0 ? m : 1) * 1.05 / s);
}

static void bars(struct canvas *c, const struct fig *f, int x0, int y0,
		 int w, int h)
{
	struct panel p = { x0, y0, w, h, 1, 0, "", "us (8 B, typical)",
			   "latency: rdma_rxe (blue) vs sroce (orange)", 1, 0 };
	double m = 0, nul = 0;
	int g, j, gw, bx, bh;

	for (g = 0; g < f->nbars; g++)
		for (j = 0; j < 2; j++)
			m = fmax(m, f->bv[g][j]);
	p.ymax = top_of(m);
	/* Axes and grid from the line panel, with no series. */
	panel_draw(c, &p, &nul, &nul, 0, 0, 0);
	if (!f->nbars)
		return;
	gw = w / f->nbars;
	for (g = 0; g < f->nbars; g++) {
		for (j = 0; j < 2; j++) {
			bh = (int)lround(f->bv[g][j] / p.ymax * (h - 1));
			bx = x0 + g * gw + gw / 6 + j * (gw / 3);
			canvas_rect(c, bx, y0 + h - 1 - bh, gw / 3 - 4, bh,
				    COL_SERIES + (j ? 1 : 0));
		}
		canvas_text(c, x0 + g * gw + gw / 6, y0 + h + 34, 2,
			    COL_BLACK, f->blabel[g]);
	}
}

int main(int argc, char **argv)
{
	static struct fig f;
	struct canvas c;
	struct panel top = { 110, 90, 1040, 420, 10, 0,
			     "log2(message size / 1 KiB): 2 = 4 KiB, 6 = 64 KiB, 10 = 1 MiB",
			     "Gb/s", "bandwidth vs message size", 0, 1 };
	double m = 0;
	int i, k, x, rc;

	if (argc != 2 || parse(&f, stdin)) {
		fprintf(stderr, "usage: bench_plot OUT.png < data (see source)\n");
		return 2;
	}
	for (i = 0; i < f.nser; i++)
		for (k = 0; k < f.npts; k++)
			if (!isnan(f.ys[i * MAX_PTS + k]))
				m = fmax(m, f.ys[i * MAX_PTS + k]);
	top.ymax = top_of(m);
	if (canvas_init(&c, 1200, 1000))
		return 1;
	canvas_text(&c, 20, 10, 2, COL_BLACK, f.title);
	/* Series drawn one by one: a missing point (-1) breaks no other. */
	panel_draw(&c, &top, f.xs, f.ys, f.npts, f.nser, MAX_PTS);
	for (i = 0, x = 20; i < f.nser; i++) {
		canvas_text(&c, x, 40, 2, COL_SERIES + i, f.names[i]);
		x += canvas_text_width(2, f.names[i]) + 24;
	}
	bars(&c, &f, 110, 620, 1040, 300);
	rc = canvas_write_png(&c, argv[1]);
	canvas_free(&c);
	if (rc) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Dependency-free line plots written as PNG: an 8-bit palette canvas, a
 * 5x7 bitmap font and a small deflate encoder (fixed Huffman codes, run
 * and previous-row matches).  Enough for time-series figures on a machine
 * with nothing but a C compiler.
 */
#ifndef SROCE_SIM_PLOT_H
#define SROCE_SIM_PLOT_H

#include <stddef.h>

enum {
	COL_WHITE, COL_BLACK, COL_GRID, COL_GREY,
	COL_SERIES,		/* first of PLOT_NSERIES series colours */
};

#define PLOT_NSERIES	8

struct canvas {
	int w, h;
	unsigned char *px;	/* w * h palette indices */
};

int canvas_init(struct canvas *c, int w, int h);
void canvas_free(struct canvas *c);
void canvas_text(struct canvas *c, int x, int y, int scale, int col,
		 const char *s);
int canvas_text_width(int scale, const char *s);
/* A filled rectangle, clipped to the canvas. */
void canvas_rect(struct canvas *c, int x, int y, int w, int h, int col);

/*
 * One panel: axes with ticks and labels in the rectangle (x, y, w, h),
 * then @nser series of @n points each; series i's y values are
 * ys[i * stride + k] at xs[k]; a NaN y is a missing point (a gap).
 */
struct panel {
	int x, y, w, h;
	double xmax, ymax;	/* axes start at 0 */
	const char *xlabel, *ylabel, *title;
	int no_xticks;		/* grid lines only on x (bar charts) */
	int markers;		/* a square at each point */
};

void panel_draw(struct canvas *c, const struct panel *p, const double *xs,
		const double *ys, size_t n, int nser, size_t stride);

/* Returns 0 or -1 (errno set). */
int canvas_write_png(const struct canvas *c, const char *path);

/* 1, 2 or 5 times a power of ten, at least @v / @ticks. */
double nice_step(double v, int ticks);

#endif

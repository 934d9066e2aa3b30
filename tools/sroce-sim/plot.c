// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PNG line plots without libraries: see plot.h.  The encoder emits one
 * fixed-Huffman deflate block (RFC 1951 3.2.6) whose matches are only
 * runs (distance 1) and copies of the row above (distance = row length);
 * plots are mostly flat background, so that already compresses well.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

/* tab10-like series colours after white, black, grid, grey. */
static const unsigned char palette[][3] = {
	{ 255, 255, 255 }, { 0, 0, 0 }, { 225, 225, 225 }, { 120, 120, 120 },
	{ 31, 119, 180 }, { 255, 127, 14 }, { 44, 160, 44 }, { 214, 39, 40 },
	{ 148, 103, 189 }, { 140, 86, 75 }, { 227, 119, 194 },
	{ 188, 189, 34 },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NCOLOURS	((int)ARRAY_SIZE(palette))

/*
 * 5x7 glyphs, '#' = ink; characters not listed render as blanks.  g, p, q
 * and y are drawn two rows lower (DESCENDERS) so their tails hang below
 * the baseline.
 */
#define DESCENDERS	"gpqy"
struct glyph {
	char c;
	const char *row[7];
};

static const struct glyph font[] = {
	{ '0', { " ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### " } },
	{ '1', { "  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### " } },
	{ '2', { " ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####" } },
	{ '3', { "#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### " } },
	{ '4', { "   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # " } },
	{ '5', { "#####", "#    ", "#### ", "    #", "    #", "#   #", " ### " } },
	{ '6', { "  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### " } },
	{ '7', { "#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   " } },
	{ '8', { " ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### " } },
	{ '9', { " ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  " } },
	{ 'A', { " ### ", "#   #", "#   #", "#####", "#   #", "#   #", "#   #" } },
	{ 'B', { "#### ", "#   #", "#   #", "#### ", "#   #", "#   #", "#### " } },
	{ 'C', { " ### ", "#   #", "#    ", "#    ", "#    ", "#   #", " ### " } },
	{ 'D', { "###  ", "#  # ", "#   #", "#   #", "#   #", "#  # ", "###  " } },
	{ 'E', { "#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#####" } },
	{ 'F', { "#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#    " } },
	{ 'G', { " ### ", "#   #", "#    ", "# ###", "#   #", "#   #", " ####" } },
	{ 'H', { "#   #", "#   #", "#   #", "#####", "#   #", "#   #", "#   #" } },
	{ 'I', { " ### ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### " } },
	{ 'J', { "  ###", "   # ", "   # ", "   # ", "   # ", "#  # ", " ##  " } },
	{ 'K', { "#   #", "#  # ", "# #  ", "##   ", "# #  ", "#  # ", "#   #" } },
	{ 'L', { "#    ", "#    ", "#    ", "#    ", "#    ", "#    ", "#####" } },
	{ 'M', { "#   #", "## ##", "# # #", "# # #", "#   #", "#   #", "#   #" } },
	{ 'N', { "#   #", "#   #", "##  #", "# # #", "#  ##", "#   #", "#   #" } },
	{ 'O', { " ### ", "#   #", "#   #", "#   #", "#   #", "#   #", " ### " } },
	{ 'P', { "#### ", "#   #", "#   #", "#### ", "#    ", "#    ", "#    " } },
	{ 'Q', { " ### ", "#   #", "#   #", "#   #", "# # #", "#  # ", " ## #" } },
	{ 'R', { "#### ", "#   #", "#   #", "#### ", "# #  ", "#  # ", "#   #" } },
	{ 'S', { " ####", "#    ", "#    ", " ### ", "    #", "    #", "#### " } },
	{ 'T', { "#####", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  " } },
	{ 'U', { "#   #", "#   #", "#   #", "#   #", "#   #", "#   #", " ### " } },
	{ 'V', { "#   #", "#   #", "#   #", "#   #", "#   #", " # # ", "  #  " } },
	{ 'W', { "#   #", "#   #", "#   #", "# # #", "# # #", "# # #", " # # " } },
	{ 'X', { "#   #", "#   #", " # # ", "  #  ", " # # ", "#   #", "#   #" } },
	{ 'Y', { "#   #", "#   #", " # # ", "  #  ", "  #  ", "  #  ", "  #  " } },
	{ 'Z', { "#####", "    #", "   # ", "  #  ", " #   ", "#    ", "#####" } },
	{ 'a', { "     ", "     ", " ### ", "    #", " ####", "#   #", " ####" } },
	{ 'b', { "#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#### " } },
	{ 'c', { "     ", "     ", " ### ", "#    ", "#    ", "#   #", " ### " } },
	{ 'd', { "    #", "    #", " ## #", "#  ##", "#   #", "#   #", " ####" } },
	{ 'e', { "     ", "     ", " ### ", "#   #", "#####", "#    ", " ### " } },
	{ 'f', { "  ## ", " #  #", " #   ", "###  ", " #   ", " #   ", " #   " } },
	{ 'g', { "     ", " ####", "#   #", "#   #", " ####", "    #", " ### " } },
	{ 'h', { "#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#   #" } },
	{ 'i', { "  #  ", "     ", " ##  ", "  #  ", "  #  ", "  #  ", " ### " } },
	{ 'j', { "   # ", "     ", "  ## ", "   # ", "   # ", "#  # ", " ##  " } },
	{ 'k', { "#    ", "#    ", "#  # ", "# #  ", "##   ", "# #  ", "#  # " } },
	{ 'l', { " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### " } },
	{ 'm', { "     ", "     ", "## # ", "# # #", "# # #", "#   #", "#   #" } },
	{ 'n', { "     ", "     ", "# ## ", "##  #", "#   #", "#   #", "#   #" } },
	{ 'o', { "     ", "     ", " ### ", "#   #", "#   #", "#   #", " ### " } },
	{ 'p', { "     ", "#### ", "#   #", "#   #", "#### ", "#    ", "#    " } },
	{ 'q', { "     ", " ####", "#   #", "#   #", " ####", "    #", "    #" } },
	{ 'r', { "     ", "     ", "# ## ", "##  #", "#    ", "#    ", "#    " } },
	{ 's', { "     ", "     ", " ### ", "#    ", " ### ", "    #", "#### " } },
	{ 't', { " #   ", " #   ", "###  ", " #   ", " #   ", " #  #", "  ## " } },
	{ 'u', { "     ", "     ", "#   #", "#   #", "#   #", "#  ##", " ## #" } },
	{ 'v', { "     ", "     ", "#   #", "#   #", "#   #", " # # ", "  #  " } },
	{ 'w', { "     ", "     ", "#   #", "#   #", "# # #", "# # #", " # # " } },
	{ 'x', { "     ", "     ", "#   #", " # # ", "  #  ", " # # ", "#   #" } },
	{ 'y', { "     ", "#   #", "#   #", "#   #", " ####", "    #", " ### " } },
	{ 'z', { "     ", "     ", "#####", "   # ", "  #  ", " #   ", "#####" } },
	{ '.', { "     ", "     ", "     ", "     ", "     ", " ##  ", " ##  " } },
	{ ',', { "     ", "     ", "     ", "     ", " ##  ", "  #  ", " #   " } },
	{ ':', { "     ", " ##  ", " ##  ", "     ", " ##  ", " ##  ", "     " } },
	{ '/', { "     ", "    #", "   # ", "  #  ", " #   ", "#    ", "     " } },
	{ '(', { "   # ", "  #  ", " #   ", " #   ", " #   ", "  #  ", "   # " } },
	{ ')', { " #   ", "  #  ", "   # ", "   # ", "   # ", "  #  ", " #   " } },
	{ '-', { "     ", "     ", "     ", "#####", "     ", "     ", "     " } },
	{ '+', { "     ", "  #  ", "  #  ", "#####", "  #  ", "  #  ", "     " } },
	{ '=', { "     ", "     ", "#####", "     ", "#####", "     ", "     " } },
	{ '%', { "##   ", "##  #", "   # ", "  #  ", " #   ", "#  ##", "   ##" } },
	{ '_', { "     ", "     ", "     ", "     ", "     ", "     ", "#####" } },
	{ '>', { " #   ", "  #  ", "   # ", "    #", "   # ", "  #  ", " #   " } },
	{ '<', { "   # ", "  #  ", " #   ", "#    ", " #   ", "  #  ", "   # " } },
};

int canvas_init(struct canvas *c, int w, int h)
{
	c->w = w;
	c->h = h;
	c->px = calloc((size_t)w * h, 1);	/* COL_WHITE == 0 */
	return c->px ? 0 : -1;
}

void canvas_free(struct canvas *c)
{
	free(c->px);
	c->px = NULL;
}

static void dot(struct canvas *c, int x, int y, int col)
{
	if (x >= 0 && y >= 0 && x < c->w && y < c->h)
		c->px[(size_t)y * c->w + x] = (unsigned char)col;
}

void canvas_rect(struct canvas *c, int x, int y, int w, int h, int col)
{
	int i, j;

	for (j = 0; j < h; j++)
		for (i = 0; i < w; i++)
			dot(c, x + i, y + j, col);
}

/* Bresenham, clipped to the canvas per pixel. */
static void line(struct canvas *c, int x0, int y0, int x1, int y1, int col)
{
	int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
	int dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
	int err = dx + dy, e2;

	for (;;) {
		dot(c, x0, y0, col);
		if (x0 == x1 && y0 == y1)
			break;
		e2 = 2 * err;
		if (e2 >= dy) {
			err += dy;
			x0 += sx;
		}
		if (e2 <= dx) {
			err += dx;
			y0 += sy;
		}
	}
}

int canvas_text_width(int scale, const char *s)
{
	return (int)strlen(s) * 6 * scale;
}

void canvas_text(struct canvas *c, int x, int y, int scale, int col,
		 const char *s)
{
	size_t g;
	int r, k, dy;

	for (; *s; s++, x += 6 * scale) {
		for (g = 0; g < ARRAY_SIZE(font); g++)
			if (font[g].c == *s)
				break;
		if (g == ARRAY_SIZE(font))
			continue;
		dy = strchr(DESCENDERS, *s) ? 2 * scale : 0;
		for (r = 0; r < 7; r++)
			for (k = 0; k < 5; k++)
				if (font[g].row[r][k] == '#')
					canvas_rect(c, x + k * scale,
					     y + dy + r * scale, scale, scale,
					     col);
	}
}

double nice_step(double v, int ticks)
{
	double raw = v / ticks, mag, f;

	if (raw <= 0)
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void fmt_tick(char *buf, size_t len, double v)
{
	if (fabs(v) < 1e-9)	/* no "-0" or 1e-17 from the float steps */
		v = 0;
	snprintf(buf, len, "%g", v);
}

void panel_draw(struct canvas *c, const struct panel *p, const double *xs,
		const double *ys, size_t n, int nser, size_t stride)
{
	double xstep = nice_step(p->xmax, 10), ystep = nice_step(p->ymax, 5);
	double v;
	char buf[32];
	size_t k;
	int i, px, py, lx = 0, ly = 0;

	/* Grid and tick labels. */
	for (v = 0; v <= p->xmax * 1.0000001; v += xstep) {
		px = p->x + (int)lround(v / p->xmax * (p->w - 1));
		line(c, px, p->y, px, p->y + p->h - 1, COL_GRID);
		if (p->no_xticks)
			continue;
		fmt_tick(buf, sizeof(buf), v);
		canvas_text(c, px - canvas_text_width(2, buf) / 2,
			    p->y + p->h + 8, 2, COL_BLACK, buf);
	}
	for (v = 0; v <= p->ymax * 1.0000001; v += ystep) {
		py = p->y + p->h - 1 - (int)lround(v / p->ymax * (p->h - 1));
		line(c, p->x, py, p->x + p->w - 1, py, COL_GRID);
		fmt_tick(buf, sizeof(buf), v);
		canvas_text(c, p->x - 10 - canvas_text_width(2, buf), py - 7,
			    2, COL_BLACK, buf);
	}

	/* Series, clipped to the plot area. */
	for (i = 0; i < nser; i++) {
		for (k = 0; k < n; k++) {
			double y = ys[(size_t)i * stride + k];

			if (isnan(y)) {
				lx = -1;
				continue;
			}
			if (y < 0)
				y = 0;
			if (y > p->ymax)
				y = p->ymax;
			px = p->x + (int)lround(xs[k] / p->xmax * (p->w - 1));
			py = p->y + p->h - 1 -
			     (int)lround(y / p->ymax * (p->h - 1));
			if (k && lx >= 0)
				line(c, lx, ly, px, py,
				     COL_SERIES + i % PLOT_NSERIES);
			if (p->markers)
				canvas_rect(c, px - 3, py - 3, 7, 7,
					    COL_SERIES + i % PLOT_NSERIES);
			lx = px;
			ly = py;
		}
	}

	/* Frame and labels last, so data never hides them. */
	line(c, p->x, p->y, p->x + p->w - 1, p->y, COL_BLACK);
	line(c, p->x, p->y + p->h - 1, p->x + p->w - 1, p->y + p->h - 1,
	     COL_BLACK);
	line(c, p->x, p->y, p->x, p->y + p->h - 1, COL_BLACK);
	line(c, p->x + p->w - 1, p->y, p->x + p->w - 1, p->y + p->h - 1,
	     COL_BLACK);
	canvas_text(c, p->x, p->y - 24, 2, COL_BLACK, p->title);
	canvas_text(c, p->x + p->w - canvas_text_width(2, p->ylabel),
		    p->y - 24, 2, COL_GREY, p->ylabel);
	canvas_text(c, p->x + (p->w - canvas_text_width(2, p->xlabel)) / 2,
		    p->y + p->h + 30, 2, COL_BLACK, p->xlabel);
}

/* --- PNG / zlib / deflate --------------------------------------------- */

struct buf {
	unsigned char *d;
	size_t len, cap;
	uint32_t acc;		/* bit accumulator, LSB first */
	int nbits;
	int oom;
};

static void buf_byte(struct buf *b, unsigned char v)
{
	if (b->len == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 65536;
		unsigned char *d = realloc(b->d, cap);

		if (!d) {
			b->oom = 1;
			return;
		}
		b->d = d;
		b->cap = cap;
	}
	b->d[b->len++] = v;
}

static void put_bits(struct buf *b, uint32_t v, int n)
{
	b->acc |= v << b->nbits;
	b->nbits += n;
	while (b->nbits >= 8) {
		buf_byte(b, (unsigned char)b->acc);
		b->acc >>= 8;
		b->nbits -= 8;
	}
}

/* Huffman codes go out most significant bit first (RFC 1951 3.1.1). */
static void put_code(struct buf *b, uint32_t code, int len)
{
	uint32_t r = 0;
	int i;

	for (i = 0; i < len; i++)
		r |= ((code >> i) & 1) << (len - 1 - i);
	put_bits(b, r, len);
}

/* Fixed literal/length code (RFC 1951 3.2.6). */
static void put_sym(struct buf *b, int sym)
{
	if (sym <= 143)
		put_code(b, 0x30 + sym, 8);
	else if (sym <= 255)
		put_code(b, 0x190 + sym - 144, 9);
	else if (sym <= 279)
		put_code(b, sym - 256, 7);
	else
		put_code(b, 0xc0 + sym - 280, 8);
}

static const unsigned short len_base[29] = {
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51,
	59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const unsigned char len_extra[29] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4,
	4, 5, 5, 5, 5, 0 };
static const unsigned short dist_base[30] = {
	1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385,
	513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385,
	24577 };
static const unsigned char dist_extra[30] = {
	0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10,
	10, 11, 11, 12, 12, 13, 13 };

static void put_match(struct buf *b, int len, int dist)
{
	int i;

	for (i = 28; len_base[i] > len; i--)
		;
	put_sym(b, 257 + i);
	put_bits(b, len - len_base[i], len_extra[i]);
	for (i = 29; dist_base[i] > dist; i--)
		;
	put_code(b, i, 5);
	put_bits(b, dist - dist_base[i], dist_extra[i]);
}

static void deflate_fixed(struct buf *out, const unsigned char *d, size_t n,
			  size_t stride)
{
	size_t i = 0, dists[2] = { 1, stride }, l, best, bdist;
	int k;

	put_bits(out, 1, 1);		/* BFINAL */
	put_bits(out, 1, 2);		/* BTYPE 01: fixed Huffman */
	while (i < n) {
		best = 0;
		bdist = 0;
		for (k = 0; k < 2; k++) {
			if (dists[k] > i || dists[k] > 32768)
				continue;
			for (l = 0; l < 258 && i + l < n &&
			     d[i + l] == d[i + l - dists[k]]; l++)
				;
			if (l > best) {
				best = l;
				bdist = dists[k];
			}
		}
		if (best >= 3) {
			put_match(out, (int)best, (int)bdist);
			i += best;
		} else {
			put_sym(out, d[i++]);
		}
	}
	put_sym(out, 256);
	if (out->nbits)
		put_bits(out, 0, 8 - out->nbits);
}

static uint32_t crc_table[256];

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	size_t i;
	int k;

	if (!crc_table[1]) {
		for (i = 0; i < 256; i++) {
			uint32_t c = (uint32_t)i;

			for (k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			crc_table[i] = c;
		}
	}
	for (i = 0; i < n; i++)
		crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static int chunk(FILE *f, const char *type, const unsigned char *data,
		 size_t len)
{
	unsigned char hdr[8], tail[4];
	uint32_t crc;

	put_be32(hdr, (uint32_t)len);
	memcpy(hdr + 4, type, 4);
	crc = crc32_update(0xffffffffu, hdr + 4, 4);
	crc = crc32_update(crc, data, len);
	put_be32(tail, crc ^ 0xffffffffu);
	return fwrite(hdr, 1, 8, f) == 8 &&
	       (!len || fwrite(data, 1, len, f) == len) &&
	       fwrite(tail, 1, 4, f) == 4 ? 0 : -1;
}

int canvas_write_png(const struct canvas *c, const char *path)
{
	static const unsigned char sig[8] = {
		0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	size_t stride = (size_t)c->w + 1, n = stride * c->h, i;
	unsigned char ihdr[13], plte[3 * NCOLOURS], *raw;
	struct buf z = { 0 };
	uint32_t a = 1, b = 0;
	FILE *f;
	int y, rc;

	raw = malloc(n);
	if (!raw)
		return -1;
	for (y = 0; y < c->h; y++) {
		raw[y * stride] = 0;	/* filter: none */
		memcpy(raw + y * stride + 1, c->px + (size_t)y * c->w, c->w);
	}
	for (i = 0; i < n; i++) {	/* Adler-32 */
		a = (a + raw[i]) % 65521;
		b = (b + a) % 65521;
	}
	buf_byte(&z, 0x78);		/* deflate, 32 KiB window */
	buf_byte(&z, 0x01);		/* no dictionary; check bits */
	deflate_fixed(&z, raw, n, stride);
	for (i = 0; i < 4; i++)
		buf_byte(&z, (unsigned char)(((b << 16 | a) >> (24 - 8 * i))));
	free(raw);
	if (z.oom) {
		free(z.d);
		errno = ENOMEM;
		return -1;
	}

	put_be32(ihdr, (uint32_t)c->w);
	put_be32(ihdr + 4, (uint32_t)c->h);
	ihdr[8] = 8;			/* bit depth */
	ihdr[9] = 3;			/* palette */
	ihdr[10] = 0;			/* deflate */
	ihdr[11] = 0;			/* adaptive filtering */
	ihdr[12] = 0;			/* no interlace */
	memcpy(plte, palette, sizeof(plte));

	f = fopen(path, "wb");
	if (!f) {
		free(z.d);
		return -1;
	}
	rc = fwrite(sig, 1, 8, f) == 8 ? 0 : -1;
	rc |= chunk(f, "IHDR", ihdr, sizeof(ihdr));
	rc |= chunk(f, "PLTE", plte, sizeof(plte));
	rc |= chunk(f, "IDAT", z.d, z.len);
	rc |= chunk(f, "IEND", NULL, 0);
	free(z.d);
	if (fclose(f))
		rc = -1;
	return rc;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CRC-32 behind the ICRC, chosen at module load.
 *
 * Candidates, all with crc32_le() semantics (no inversion):
 *  - "crypto": the crypto API's "crc32" (crc32-pclmul on x86 CPUs with
 *    PCLMULQDQ, otherwise crc32-generic);
 *  - "lib": the kernel's crc32_le() (slice-by-8 tables);
 *  - "table": the portable core's byte table (sroce_crc32_le()).
 * "auto" (the default) checks each against the core on a known vector,
 * times it on 4 KiB and keeps the fastest: carry-less multiply wins on
 * hardware, loses under an emulator such as qemu TCG.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/module.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <crypto/hash.h>

#include "sroce_net.h"

sroce_crc32_fn sroce_crc32 __read_mostly = sroce_crc32_le;

enum sroce_crc_impl {
	SROCE_CRC_AUTO,
	SROCE_CRC_CRYPTO,
	SROCE_CRC_LIB,
	SROCE_CRC_TABLE,
	SROCE_CRC_NR,
};

static const char *const sroce_crc_names[SROCE_CRC_NR] = {
	[SROCE_CRC_AUTO] = "auto",
	[SROCE_CRC_CRYPTO] = "crypto",
	[SROCE_CRC_LIB] = "lib",
	[SROCE_CRC_TABLE] = "table",
};

static enum sroce_crc_impl sroce_crc_want = SROCE_CRC_AUTO;
static enum sroce_crc_impl sroce_crc_chosen = SROCE_CRC_TABLE;
static struct crypto_shash *sroce_crc_tfm;

static int sroce_crc_param_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(sroce_crc_names, val);

	if (i < 0)
		return -EINVAL;
	sroce_crc_want = i;
	return 0;
}

/* Shows what is in use, e.g. "lib (auto)". */
static int sroce_crc_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s (%s)\n", sroce_crc_names[sroce_crc_chosen],
			  sroce_crc_names[sroce_crc_want]);
}

static const struct kernel_param_ops sroce_crc_param_ops = {
	.set = sroce_crc_param_set,
	.get = sroce_crc_param_get,
};
module_param_cb(icrc, &sroce_crc_param_ops, NULL, 0444);
MODULE_PARM_DESC(icrc, "ICRC CRC-32: auto (fastest at load), crypto, lib, table");

static u32 sroce_crc32_lib(u32 crc, const u8 *buf, size_t len)
{
	return crc32_le(crc, buf, len);
}

/*
 * The "crc32" shash keeps its running value, uninverted and in CPU
 * order, as its whole descriptor context (checked at load): seed it
 * there, update, read it back.  One descriptor per call on the stack,
 * so every CPU and context shares the transform without a lock.
 */
static u32 sroce_crc32_crypto(u32 crc, const u8 *buf, size_t len)
{
	SHASH_DESC_ON_STACK(desc, sroce_crc_tfm);
	u32 *ctx = shash_desc_ctx(desc);

	desc->tfm = sroce_crc_tfm;
	*ctx = crc;
	if (crypto_shash_update(desc, buf, len))
		crc = crc32_le(crc, buf, len);	/* not for "crc32" */
	else
		crc = *ctx;
	shash_desc_zero(desc);
	return crc;
}

static const sroce_crc32_fn sroce_crc_fns[SROCE_CRC_NR] = {
	[SROCE_CRC_CRYPTO] = sroce_crc32_crypto,
	[SROCE_CRC_LIB] = sroce_crc32_lib,
	[SROCE_CRC_TABLE] = sroce_crc32_le,
};

#define SROCE_CRC_BENCH_LEN	4096
#define SROCE_CRC_BENCH_ROUNDS	8

/* Best-of-rounds nanoseconds for 4 KiB; U64_MAX if @fn gets it wrong. */
static u64 sroce_crc_time(sroce_crc32_fn fn, const u8 *buf, u32 want)
{
	u64 best = U64_MAX, t;
	int r;

	/* The CRC-32 check value: "123456789" -> 0xcbf43926. */
	if (~fn(~0U, "123456789", 9) != 0xcbf43926 ||
	    fn(~0U, buf, SROCE_CRC_BENCH_LEN) != want)
		return U64_MAX;
	for (r = 0; r < SROCE_CRC_BENCH_ROUNDS; r++) {
		local_bh_disable();
		t = local_clock();
		fn(~0U, buf, SROCE_CRC_BENCH_LEN);
		t = local_clock() - t;
		local_bh_enable();
		best = min(best, t);
	}
	return best;
}

/* For the log: -1 for "not timed". */
static s64 sroce_crc_ns(u64 ns)
{
	return ns == U64_MAX ? -1 : (s64)ns;
}

/**
 * sroce_crc_init() - pick the ICRC's CRC-32 (module parameter icrc=)
 *
 * Return: 0, -ENOENT if the implementation asked for is unavailable or
 * wrong, -ENOMEM.
 */
int sroce_crc_init(void)
{
	u64 ns[SROCE_CRC_NR];
	enum sroce_crc_impl i, best = SROCE_CRC_TABLE;
	u32 want;
	u8 *buf;

	buf = kmalloc(SROCE_CRC_BENCH_LEN, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (want = 0; want < SROCE_CRC_BENCH_LEN; want++)
		buf[want] = want * 131 + (want >> 8);
	want = sroce_crc32_le(~0U, buf, SROCE_CRC_BENCH_LEN);

	sroce_crc_tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(sroce_crc_tfm) ||
	    crypto_shash_descsize(sroce_crc_tfm) != sizeof(u32)) {
		if (!IS_ERR(sroce_crc_tfm))
			crypto_free_shash(sroce_crc_tfm);
		sroce_crc_tfm = NULL;
	}

	for (i = 0; i < SROCE_CRC_NR; i++)
		ns[i] = U64_MAX;
	for (i = SROCE_CRC_CRYPTO; i < SROCE_CRC_NR; i++) {
		if (i == SROCE_CRC_CRYPTO && !sroce_crc_tfm)
			continue;
		if (sroce_crc_want != SROCE_CRC_AUTO && sroce_crc_want != i)
			continue;
		ns[i] = sroce_crc_time(sroce_crc_fns[i], buf, want);
		if (ns[i] < ns[best])
			best = i;
	}
	kfree(buf);

	if (ns[best] == U64_MAX) {
		pr_err("ICRC: CRC-32 \"%s\" unavailable or incorrect\n",
		       sroce_crc_names[sroce_crc_want]);
		if (sroce_crc_tfm)
			crypto_free_shash(sroce_crc_tfm);
		sroce_crc_tfm = NULL;
		return -ENOENT;
	}
	sroce_crc_chosen = best;
	sroce_crc32 = sroce_crc_fns[best];
	if (best != SROCE_CRC_CRYPTO && sroce_crc_tfm) {
		crypto_free_shash(sroce_crc_tfm);
		sroce_crc_tfm = NULL;
	}
	pr_info("ICRC: %s%s%s (ns per 4 KiB: crypto %lld, lib %lld, table %lld)\n",
		sroce_crc_names[best], best == SROCE_CRC_CRYPTO ? " " : "",
		best == SROCE_CRC_CRYPTO ?
			crypto_shash_driver_name(sroce_crc_tfm) : "",
		sroce_crc_ns(ns[SROCE_CRC_CRYPTO]),
		sroce_crc_ns(ns[SROCE_CRC_LIB]),
		sroce_crc_ns(ns[SROCE_CRC_TABLE]));
	return 0;
}

/* Module exit, once no packet can be in flight. */
void sroce_crc_exit(void)
{
	if (sroce_crc_tfm)
		crypto_free_shash(sroce_crc_tfm);
	sroce_crc_tfm = NULL;
}

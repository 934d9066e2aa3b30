/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 wire format: constants, Base Transport Header access and the
 * netdev-MTU to path-MTU arithmetic.  Part of the portable core: every
 * accessor checks bounds, nothing here touches kernel objects.
 *
 * References: IBTA vol. 1 rel. 1.4 ch. 9.2 (BTH), Annex A17 (RoCEv2).
 */
#ifndef SROCE_WIRE_H
#define SROCE_WIRE_H

#include "sroce_shim.h"

/* Annex A17.2.3: the IANA-assigned UDP destination port of RoCEv2. */
#define SROCE_UDP_DPORT		4791

#define SROCE_BTH_BYTES		12
#define SROCE_ICRC_BYTES	4
#define SROCE_IPV4_BYTES	20
#define SROCE_IPV6_BYTES	40
#define SROCE_UDP_BYTES		8

/* IBTA path MTUs, in bytes; the IB enum is log2(bytes) - 7. */
#define SROCE_MTU_MIN		256
#define SROCE_MTU_MAX		4096

/*
 * Worst-case header overhead on top of the IP payload that a path MTU must
 * leave room for: IPv6 header, UDP, BTH, the largest extended-header set
 * (XRCETH + AtomicETH) and ICRC.  This matches what ib_core's rdma_cm
 * assumes (iboe_get_mtu), so both sides of a connection agree.
 */
#define SROCE_MTU_OVERHEAD	(SROCE_IPV6_BYTES + SROCE_UDP_BYTES + \
				 SROCE_BTH_BYTES + 4 + 28 + SROCE_ICRC_BYTES)

/** struct sroce_bth - decoded Base Transport Header (IBTA 9.2) */
struct sroce_bth {
	u8 opcode;
	bool se;	/* solicited event */
	bool mig;	/* migration state */
	u8 pad;		/* pad count, 0..3 */
	u8 tver;	/* transport header version */
	u16 pkey;
	bool fecn;
	bool becn;
	u32 dqpn;	/* 24 bits */
	bool ack_req;
	u32 psn;	/* 24 bits */
};

/** enum sroce_verdict - outcome of parsing peer-controlled bytes */
enum sroce_verdict {
	SROCE_OK = 0,
	SROCE_ERR_SHORT,	/* buffer shorter than the header needs */
	SROCE_ERR_TVER,		/* unsupported transport header version */
	SROCE_ERR_PAD,		/* pad count inconsistent with the payload */
	SROCE_ERR_OPCODE,	/* opcode not in the sroce opcode table */
	SROCE_ERR_LEN,		/* payload length not allowed for the opcode */
	SROCE_ERR_MTU,		/* payload longer than the path MTU */
	SROCE_ERR_SPACE,	/* output buffer too small (builders) */
	SROCE_ERR_IP,		/* IP header unusable for the ICRC */
	SROCE_ERR_ICRC,		/* ICRC trailer does not match */
	SROCE_VERDICT_MAX,
};

const char *sroce_verdict_name(enum sroce_verdict v);

enum sroce_verdict sroce_bth_parse(const u8 *buf, size_t len,
				   struct sroce_bth *bth);
void sroce_bth_build(u8 *buf, const struct sroce_bth *bth);
void sroce_bth_set_ack_req(u8 *buf);

unsigned int sroce_path_mtu(unsigned int netdev_mtu);
unsigned int sroce_min_netdev_mtu(void);

/** sroce_mtu_to_ib_enum() - bytes (256..4096, power of two) to IB enum 1..5 */
static inline unsigned int sroce_mtu_to_ib_enum(unsigned int mtu)
{
	unsigned int e = 0;

	while (mtu > 128 && e < 5) {
		mtu >>= 1;
		e++;
	}
	return e;
}

#endif /* SROCE_WIRE_H */

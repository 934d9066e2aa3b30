// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion control, RoCEv2 Annex A17.9.
 *
 * Egress: packets carry the device's DSCP and ECT(0) while congestion
 * control is on, so switches mark them CE instead of dropping them.
 *
 * Notification point: a CE-marked packet for an RC/UC QP makes the
 * receive softirq send a CNP to the QP's peer, at most one per
 * np_min_time_between_cnps per QP.
 *
 * Reaction point: a CNP feeds the device's algorithm (an ops table:
 * "dcqcn", the default, or "none"), which sets the QP's rate; the
 * requester is paced to it (sroce_cc_tx_wait()).  DCQCN's arithmetic is
 * the portable core's (core/sroce_cc.c).  Its two timers run lazily: the
 * periods that ended since the QP last sent or heard a CNP are applied,
 * in time order, when it next does; an idle QP costs no timer.
 *
 * Settings live per device under /sys/class/infiniband/<dev>/ports/1/cc/
 * (mlx5's names).  A change takes effect on live QPs at their next event:
 * each starts over, unthrottled, with the new settings.
 *
 * Context: sroce_cc_rx() runs in the receive softirq; the tx hooks in the
 * requester (process context or softirq); sysfs in process context.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/rcupdate.h>
#include <net/inet_ecn.h>
#include <net/ipv6.h>
#include <rdma/ib_sysfs.h>
#include <rdma/rdma_netlink.h>

#include "sroce/sroce_hdr.h"
#include "sroce_cc.h"
#include "sroce_dev.h"
#include "sroce_qp.h"
#include "sroce_req.h"
#include "sroce_stats.h"
#include "sroce_tx.h"

/* Timer periods replayed at most per event; beyond, the QP has recovered. */
#define SROCE_CC_MAX_STEPS	4096

#define SROCE_CC_DSCP		26	/* data: AF31, common for RoCE */
#define SROCE_CC_CNP_DSCP	48	/* CNPs: CS6, mlx5's default */

/* ---- algorithms --------------------------------------------------------- */

static void sroce_dcqcn_qp_init(struct sroce_cc_qp *c,
				const struct sroce_cc_cfg *cfg, u64 now)
{
	sroce_dcqcn_init(&c->st, &cfg->p);
}

static void sroce_dcqcn_advance(struct sroce_cc_qp *c,
				const struct sroce_cc_cfg *cfg, u64 now)
{
	u64 ta = (u64)cfg->p.dce_tcp_rtt * NSEC_PER_USEC;
	u64 tr = (u64)cfg->p.time_reset * NSEC_PER_USEC;
	int n = 0;

	/*
	 * A QP that had nothing to send learned nothing about the path: the
	 * rate-increase timer does not count its idle time (as TCP does not
	 * grow an application-limited window, RFC 7661), or it would come
	 * back from a pause at a rate no CNP ever checked.  Alpha still
	 * decays.
	 */
	if (c->st.limited && c->last_tx_ns + tr < now && c->next_rate_ns < now)
		c->next_rate_ns = now + tr;
	while (c->st.limited && min(c->next_alpha_ns, c->next_rate_ns) <= now) {
		if (++n > SROCE_CC_MAX_STEPS) {
			sroce_dcqcn_init(&c->st, &cfg->p);
			break;
		}
		if (c->next_alpha_ns <= c->next_rate_ns) {
			sroce_dcqcn_alpha_timer(&c->st, &cfg->p);
			c->next_alpha_ns += ta;
		} else {
			sroce_dcqcn_rate_timer(&c->st, &cfg->p);
			c->next_rate_ns += tr;
		}
	}
}

static bool sroce_dcqcn_cnp(struct sroce_cc_qp *c,
			    const struct sroce_cc_cfg *cfg, u64 now)
{
	bool was_limited = c->st.limited;
	bool changed = sroce_dcqcn_on_cnp(&c->st, &cfg->p);

	/* The paper restarts the increase timer with every cut. */
	c->next_rate_ns = now + (u64)cfg->p.time_reset * NSEC_PER_USEC;
	if (!was_limited)
		c->next_alpha_ns = now + (u64)cfg->p.dce_tcp_rtt *
					 NSEC_PER_USEC;
	return changed;
}

static void sroce_dcqcn_sent(struct sroce_cc_qp *c,
			     const struct sroce_cc_cfg *cfg, u32 bytes,
			     u64 now)
{
	c->last_tx_ns = now;
	if (!c->st.limited)
		return;
	sroce_dcqcn_tx_bytes(&c->st, &cfg->p, bytes);
	if (c->st.limited)
		c->next_tx_ns = max(c->next_tx_ns, now) +
				sroce_cc_tx_time_ns(c->st.rc, bytes);
}

static const struct sroce_cc_ops sroce_cc_dcqcn = {
	.name		= "dcqcn",
	.qp_init	= sroce_dcqcn_qp_init,
	.advance	= sroce_dcqcn_advance,
	.on_cnp		= sroce_dcqcn_cnp,
	.sent		= sroce_dcqcn_sent,
};

/* No reaction: CNPs are counted as ignored, the QP is never paced. */
static void sroce_none_qp_init(struct sroce_cc_qp *c,
			       const struct sroce_cc_cfg *cfg, u64 now)
{
	sroce_dcqcn_init(&c->st, &cfg->p);
	c->st.limited = false;
}

static const struct sroce_cc_ops sroce_cc_none = {
	.name		= "none",
	.qp_init	= sroce_none_qp_init,
};

static const struct sroce_cc_ops *const sroce_cc_algos[] = {
	&sroce_cc_dcqcn,
	&sroce_cc_none,
};

/* ---- per device --------------------------------------------------------- */

int sroce_cc_dev_init(struct sroce_dev *sdev)
{
	struct sroce_cc_cfg *cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);

	if (!cfg)
		return -ENOMEM;
	cfg->ops = &sroce_cc_dcqcn;
	cfg->enable = true;
	cfg->dscp = SROCE_CC_DSCP;
	cfg->cnp_dscp = SROCE_CC_CNP_DSCP;
	sroce_dcqcn_params_default(&cfg->p);
	mutex_init(&sdev->cc_mutex);
	atomic_set(&sdev->cc_gen, 1);
	RCU_INIT_POINTER(sdev->cc, cfg);
	return 0;
}

void sroce_cc_dev_fini(struct sroce_dev *sdev)
{
	/* Called once no QP and no packet can reach the device. */
	kfree(rcu_dereference_protected(sdev->cc, true));
	RCU_INIT_POINTER(sdev->cc, NULL);
}

/**
 * sroce_cc_tclass() - the IP TOS / traffic class byte of a data packet
 * @sdev: device
 * @tclass: the path's traffic class (from the AH or the QP's GRH)
 *
 * With congestion control on: the path's DSCP, or the device's when the
 * path sets none, and ECT(0).  Off: the path's byte unchanged.
 */
u8 sroce_cc_tclass(struct sroce_dev *sdev, u8 tclass)
{
	const struct sroce_cc_cfg *cfg;
	u8 tc = tclass;

	rcu_read_lock();
	cfg = rcu_dereference(sdev->cc);
	if (cfg && cfg->enable) {
		tc = tclass >> 2 ? tclass & ~INET_ECN_MASK : cfg->dscp << 2;
		tc |= INET_ECN_ECT_0;
	}
	rcu_read_unlock();
	return tc;
}

/* ---- per QP --------------------------------------------------------------- */

static bool sroce_cc_qp_type(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC;
}

static enum hrtimer_restart sroce_cc_pace_timer(struct hrtimer *t)
{
	struct sroce_qp *qp = container_of(t, struct sroce_qp, cc.pace_timer);

	sroce_req_kick(qp);
	return HRTIMER_NORESTART;
}

void sroce_cc_qp_init(struct sroce_qp *qp)
{
	struct sroce_cc_qp *c = &qp->cc;

	spin_lock_init(&c->lock);
	sroce_np_init(&c->np_last_cnp);
	c->gen = 0;	/* set up at the first event */
	hrtimer_init(&c->pace_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	c->pace_timer.function = sroce_cc_pace_timer;
}

/* After the requester and the receive path have let go of the QP. */
void sroce_cc_qp_fini(struct sroce_qp *qp)
{
	hrtimer_cancel(&qp->cc.pace_timer);
}

/*
 * The QP's state for the current settings, under c->lock: a QP set up
 * under older settings (or never) starts over, unthrottled.
 */
static void sroce_cc_sync(struct sroce_dev *sdev, struct sroce_cc_qp *c,
			  const struct sroce_cc_cfg *cfg, u64 now)
{
	u32 gen = atomic_read(&sdev->cc_gen);

	if (c->gen == gen)
		return;
	c->gen = gen;
	c->next_tx_ns = 0;
	c->last_tx_ns = now;
	cfg->ops->qp_init(c, cfg, now);
}

/**
 * sroce_cc_tx_wait() - must the requester hold back its next packet?
 * @qp: RC or UC queue pair
 *
 * True when the QP is throttled and its next packet is not due yet; the
 * pace timer then kicks the requester when it is.
 */
bool sroce_cc_tx_wait(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_cc_qp *c = &qp->cc;
	const struct sroce_cc_cfg *cfg;
	unsigned long flags;
	bool wait = false;
	u64 now;

	/* Racy peek: an unthrottled QP costs no lock and no clock read. */
	if (!READ_ONCE(c->st.limited) || !sroce_cc_qp_type(qp))
		return false;
	rcu_read_lock();
	cfg = rcu_dereference(sdev->cc);
	spin_lock_irqsave(&c->lock, flags);
	now = ktime_get_ns();
	sroce_cc_sync(sdev, c, cfg, now);
	if (cfg->enable && cfg->ops->advance)
		cfg->ops->advance(c, cfg, now);
	if (cfg->enable && c->st.limited && c->next_tx_ns > now) {
		hrtimer_start(&c->pace_timer, ns_to_ktime(c->next_tx_ns),
			      HRTIMER_MODE_ABS);
		wait = true;
	}
	spin_unlock_irqrestore(&c->lock, flags);
	rcu_read_unlock();
	return wait;
}

/**
 * sroce_cc_tx_done() - account a packet the requester sent
 * @qp: RC or UC queue pair
 * @bytes: its size on the wire from the BTH on
 */
void sroce_cc_tx_done(struct sroce_qp *qp, u32 bytes)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_cc_qp *c = &qp->cc;
	const struct sroce_cc_cfg *cfg;
	unsigned long flags;
	u64 now;

	/* As in sroce_cc_tx_wait(). */
	if (!READ_ONCE(c->st.limited) || !sroce_cc_qp_type(qp))
		return;
	rcu_read_lock();
	cfg = rcu_dereference(sdev->cc);
	if (cfg->enable && cfg->ops->sent) {
		spin_lock_irqsave(&c->lock, flags);
		now = ktime_get_ns();
		sroce_cc_sync(sdev, c, cfg, now);
		cfg->ops->sent(c, cfg, bytes, now);
		spin_unlock_irqrestore(&c->lock, flags);
	}
	rcu_read_unlock();
}

/** sroce_cc_rx_ce() - does @skb's IP header say Congestion Experienced? */
bool sroce_cc_rx_ce(const struct sk_buff *skb)
{
	u8 tos;

	if (skb->protocol == htons(ETH_P_IP))
		tos = ip_hdr(skb)->tos;
	else if (skb->protocol == htons(ETH_P_IPV6))
		tos = ipv6_get_dsfield(ipv6_hdr(skb));
	else
		return false;
	return (tos & INET_ECN_MASK) == INET_ECN_CE;
}

/* Annex A17.9.2: the CNP goes to the QP that sent the marked packet. */
static void sroce_cc_send_cnp(struct sroce_dev *sdev, struct sroce_qp *qp,
			      const struct sroce_cc_cfg *cfg)
{
	struct sk_buff *skb;
	int len;

	skb = sroce_tx_alloc(sdev, SROCE_CNP_BYTES - SROCE_ICRC_BYTES);
	if (!skb) {
		sroce_count(sdev->stats, SROCE_CNT_TX_ERRORS, 1);
		return;
	}
	len = sroce_cnp_build(skb->data, SROCE_CNP_BYTES - SROCE_ICRC_BYTES,
			      0xffff, qp->attr.dest_qp_num);
	if (WARN_ON_ONCE(len != SROCE_CNP_BYTES - SROCE_ICRC_BYTES)) {
		kfree_skb(skb);
		return;
	}
	/* Not ECN-capable: a CNP must not be marked (and cause another). */
	if (!sroce_tx_send_tc(sdev, &qp->av, sroce_qp_sport(qp), skb,
			      cfg->cnp_dscp << 2))
		sroce_count(sdev->stats, SROCE_CNT_NP_CNP_SENT, 1);
}

/**
 * sroce_cc_rx() - congestion control's part of receiving a packet
 * @sdev: device
 * @qp: the packet's destination QP
 * @skb: the packet
 * @cnp: it is a CNP (which the caller then drops)
 *
 * Context: receive softirq, under rcu_read_lock().
 */
void sroce_cc_rx(struct sroce_dev *sdev, struct sroce_qp *qp,
		 struct sk_buff *skb, bool cnp)
{
	const struct sroce_cc_cfg *cfg = rcu_dereference(sdev->cc);
	struct sroce_cc_qp *c = &qp->cc;
	bool changed = false, send = false;
	unsigned long flags;
	u64 now;

	if (cnp) {
		if (!cfg->enable || !cfg->ops->on_cnp ||
		    !sroce_cc_qp_type(qp)) {
			sroce_count(sdev->stats, SROCE_CNT_RP_CNP_IGNORED, 1);
			return;
		}
		spin_lock_irqsave(&c->lock, flags);
		now = ktime_get_ns();
		sroce_cc_sync(sdev, c, cfg, now);
		cfg->ops->advance(c, cfg, now);
		changed = cfg->ops->on_cnp(c, cfg, now);
		spin_unlock_irqrestore(&c->lock, flags);
		sroce_count(sdev->stats, SROCE_CNT_RP_CNP_HANDLED, 1);
		if (changed)
			ibdev_dbg(&sdev->ibdev, "qp %u: CNP, rate %u Mb/s\n",
				  qp->ibqp.qp_num, READ_ONCE(c->st.rc));
		return;
	}

	if (!sroce_cc_rx_ce(skb))
		return;
	sroce_count(sdev->stats, SROCE_CNT_NP_ECN_MARKED, 1);
	if (!cfg->enable || !sroce_cc_qp_type(qp) ||
	    (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS))
		return;
	spin_lock_irqsave(&c->lock, flags);
	send = sroce_np_cnp_allowed(&c->np_last_cnp, ktime_get_ns(),
				    cfg->p.np_min_time_between_cnps);
	spin_unlock_irqrestore(&c->lock, flags);
	if (send)
		sroce_cc_send_cnp(sdev, qp, cfg);
}

/* `rdma resource show qp -dd`: the QP's rate and congestion estimate. */
int sroce_cc_fill_res_qp(struct sk_buff *msg, struct sroce_qp *qp)
{
	struct sroce_cc_qp *c = &qp->cc;
	unsigned long flags;
	struct nlattr *table;
	u32 rc, rt, alpha;
	bool limited;

	if (!sroce_cc_qp_type(qp))
		return 0;
	spin_lock_irqsave(&c->lock, flags);
	limited = c->st.limited;
	rc = c->st.rc;
	rt = c->st.rt;
	alpha = sroce_dcqcn_alpha_1024(&c->st);
	spin_unlock_irqrestore(&c->lock, flags);
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "cc_limited", limited) ||
	    rdma_nl_put_driver_u32(msg, "cc_rate_mbps", limited ? rc : 0) ||
	    rdma_nl_put_driver_u32(msg, "cc_target_mbps", limited ? rt : 0) ||
	    rdma_nl_put_driver_u32(msg, "cc_alpha", alpha)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* ---- sysfs: /sys/class/infiniband/<dev>/ports/1/cc/ ---------------------- */

enum sroce_cc_knob {
	SROCE_KNOB_ENABLE,
	SROCE_KNOB_ALGO,
	SROCE_KNOB_DSCP,
	SROCE_KNOB_CNP_DSCP,
	SROCE_KNOB_PARAM,	/* a u32 of struct sroce_dcqcn_params */
};

struct sroce_cc_attr {
	struct ib_port_attribute attr;
	enum sroce_cc_knob knob;
	size_t off;		/* SROCE_KNOB_PARAM: offset in the params */
};

static ssize_t sroce_cc_show(struct ib_device *ibdev, u32 port,
			     struct ib_port_attribute *a, char *buf)
{
	struct sroce_cc_attr *ca = container_of(a, struct sroce_cc_attr, attr);
	struct sroce_dev *sdev = to_sroce_dev(ibdev);
	const struct sroce_cc_cfg *cfg;
	ssize_t n;

	rcu_read_lock();
	cfg = rcu_dereference(sdev->cc);
	switch (ca->knob) {
	case SROCE_KNOB_ENABLE:
		n = sysfs_emit(buf, "%u\n", cfg->enable);
		break;
	case SROCE_KNOB_ALGO:
		n = sysfs_emit(buf, "%s\n", cfg->ops->name);
		break;
	case SROCE_KNOB_DSCP:
		n = sysfs_emit(buf, "%u\n", cfg->dscp);
		break;
	case SROCE_KNOB_CNP_DSCP:
		n = sysfs_emit(buf, "%u\n", cfg->cnp_dscp);
		break;
	default:
		n = sysfs_emit(buf, "%u\n",
			       *(const u32 *)((const u8 *)&cfg->p + ca->off));
		break;
	}
	rcu_read_unlock();
	return n;
}

static int sroce_cc_parse(struct sroce_cc_cfg *cfg,
			  const struct sroce_cc_attr *ca, const char *buf)
{
	unsigned int i;
	u32 v;

	if (ca->knob == SROCE_KNOB_ALGO) {
		for (i = 0; i < ARRAY_SIZE(sroce_cc_algos); i++) {
			if (sysfs_streq(buf, sroce_cc_algos[i]->name)) {
				cfg->ops = sroce_cc_algos[i];
				return 0;
			}
		}
		return -EINVAL;
	}
	if (kstrtou32(buf, 0, &v))
		return -EINVAL;
	switch (ca->knob) {
	case SROCE_KNOB_ENABLE:
		if (v > 1)
			return -EINVAL;
		cfg->enable = v;
		return 0;
	case SROCE_KNOB_DSCP:
	case SROCE_KNOB_CNP_DSCP:
		if (v > 63)
			return -EINVAL;
		if (ca->knob == SROCE_KNOB_DSCP)
			cfg->dscp = v;
		else
			cfg->cnp_dscp = v;
		return 0;
	default:
		*(u32 *)((u8 *)&cfg->p + ca->off) = v;
		return sroce_dcqcn_params_check(&cfg->p) ? -EINVAL : 0;
	}
}

static ssize_t sroce_cc_store(struct ib_device *ibdev, u32 port,
			      struct ib_port_attribute *a, const char *buf,
			      size_t count)
{
	struct sroce_cc_attr *ca = container_of(a, struct sroce_cc_attr, attr);
	struct sroce_dev *sdev = to_sroce_dev(ibdev);
	struct sroce_cc_cfg *old, *new;
	int err;

	new = kmalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	mutex_lock(&sdev->cc_mutex);
	old = rcu_dereference_protected(sdev->cc,
					lockdep_is_held(&sdev->cc_mutex));
	*new = *old;
	err = sroce_cc_parse(new, ca, buf);
	if (err) {
		mutex_unlock(&sdev->cc_mutex);
		kfree(new);
		return err;
	}
	rcu_assign_pointer(sdev->cc, new);
	/* QPs see the new generation and start over with the new settings. */
	atomic_inc(&sdev->cc_gen);
	mutex_unlock(&sdev->cc_mutex);
	kfree_rcu(old, rcu);
	return count;
}

#define SROCE_CC_ATTR(_name, _knob, _off)				\
	static struct sroce_cc_attr sroce_cc_attr_##_name = {		\
		.attr = __ATTR(_name, 0644, sroce_cc_show,		\
			       sroce_cc_store),				\
		.knob = _knob,						\
		.off = _off,						\
	}
#define SROCE_CC_PARAM(_name, _field)					\
	SROCE_CC_ATTR(_name, SROCE_KNOB_PARAM,				\
		      offsetof(struct sroce_dcqcn_params, _field))

SROCE_CC_ATTR(enable, SROCE_KNOB_ENABLE, 0);
SROCE_CC_ATTR(algo, SROCE_KNOB_ALGO, 0);
SROCE_CC_ATTR(dscp, SROCE_KNOB_DSCP, 0);
SROCE_CC_ATTR(np_cnp_dscp, SROCE_KNOB_CNP_DSCP, 0);
SROCE_CC_PARAM(np_min_time_between_cnps, np_min_time_between_cnps);
SROCE_CC_PARAM(rp_ai_rate, ai_rate);
SROCE_CC_PARAM(rp_hai_rate, hai_rate);
SROCE_CC_PARAM(rp_time_reset, time_reset);
SROCE_CC_PARAM(rp_byte_reset, byte_reset);
SROCE_CC_PARAM(rp_threshold, threshold);
SROCE_CC_PARAM(rp_gd, gd);
SROCE_CC_PARAM(rp_min_dec_fac, min_dec_fac);
SROCE_CC_PARAM(rp_min_rate, min_rate);
SROCE_CC_PARAM(rp_max_rate, max_rate);
SROCE_CC_PARAM(rp_initial_alpha_value, initial_alpha);
SROCE_CC_PARAM(rp_rate_to_set_on_first_cnp, rate_on_first_cnp);
SROCE_CC_PARAM(rp_dce_tcp_rtt, dce_tcp_rtt);

static struct attribute *sroce_cc_attrs[] = {
	&sroce_cc_attr_enable.attr.attr,
	&sroce_cc_attr_algo.attr.attr,
	&sroce_cc_attr_dscp.attr.attr,
	&sroce_cc_attr_np_cnp_dscp.attr.attr,
	&sroce_cc_attr_np_min_time_between_cnps.attr.attr,
	&sroce_cc_attr_rp_ai_rate.attr.attr,
	&sroce_cc_attr_rp_hai_rate.attr.attr,
	&sroce_cc_attr_rp_time_reset.attr.attr,
	&sroce_cc_attr_rp_byte_reset.attr.attr,
	&sroce_cc_attr_rp_threshold.attr.attr,
	&sroce_cc_attr_rp_gd.attr.attr,
	&sroce_cc_attr_rp_min_dec_fac.attr.attr,
	&sroce_cc_attr_rp_min_rate.attr.attr,
	&sroce_cc_attr_rp_max_rate.attr.attr,
	&sroce_cc_attr_rp_initial_alpha_value.attr.attr,
	&sroce_cc_attr_rp_rate_to_set_on_first_cnp.attr.attr,
	&sroce_cc_attr_rp_dce_tcp_rtt.attr.attr,
	NULL,
};

static const struct attribute_group sroce_cc_group = {
	.name = "cc",
	.attrs = sroce_cc_attrs,
};

const struct attribute_group *sroce_cc_port_groups[] = {
	&sroce_cc_group,
	NULL,
};

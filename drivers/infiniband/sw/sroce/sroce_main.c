// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce: a software RoCEv2 provider.  Module glue, `rdma link` operations,
 * device creation/teardown and the netdev notifier.
 *
 * Locking: sroce_newlink_mutex serializes device creation only; it is never
 * taken under RTNL, because ib_register_device() takes RTNL itself (GID
 * table population).  sroce_list_mutex protects sroce_dev_list and is
 * never held across a call into ib_core.  The netdev notifier runs under
 * RTNL and takes neither: it finds devices through ib_core.
 *
 * Lifetime: ib_core owns device memory.  Once ib_register_device()
 * succeeded, every teardown path (rdma link delete, netdev unregister,
 * module unload) ends in sroce_dealloc_driver(), exactly once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

#include "sroce/sroce_wire.h"
#include "sroce_cc.h"
#include "sroce_compat.h"
#include "sroce_dev.h"
#include "sroce_mcast.h"
#include "sroce_net.h"
#include "sroce_stats.h"
#include "sroce_tx.h"
#include "sroce_verbs.h"

/* The rxe user ABI version rdma-core's rxe provider speaks. */
#define SROCE_UVERBS_ABI_VERSION	2

static DEFINE_MUTEX(sroce_newlink_mutex);
static DEFINE_MUTEX(sroce_list_mutex);
static LIST_HEAD(sroce_dev_list);

struct sroce_dev_entry {
	struct list_head node;
	struct sroce_dev *sdev;
};

static const char *sroce_port_state_name(enum ib_port_state state)
{
	return state == IB_PORT_ACTIVE ? "ACTIVE" : "DOWN";
}

/**
 * sroce_port_state() - IB port state derived from the netdev
 * @sdev: the device
 *
 * A RoCE port is ACTIVE when its netdev is up and has carrier.
 */
enum ib_port_state sroce_port_state(struct sroce_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;

	return netif_running(ndev) && netif_carrier_ok(ndev) ?
	       IB_PORT_ACTIVE : IB_PORT_DOWN;
}

/**
 * sroce_port_update() - report a port state change as an async event
 * @sdev: the device
 *
 * Called from the netdev notifier (process context, RTNL held).
 */
void sroce_port_update(struct sroce_dev *sdev)
{
	enum ib_port_state state = sroce_port_state(sdev);
	struct ib_event ev = {
		.device			= &sdev->ibdev,
		.element.port_num	= 1,
	};
	bool changed;

	spin_lock_bh(&sdev->state_lock);
	changed = sdev->port_state != state;
	sdev->port_state = state;
	spin_unlock_bh(&sdev->state_lock);

	if (!changed)
		return;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	sroce_dbg(sdev, "port 1 %s\n", sroce_port_state_name(state));
	ib_dispatch_event(&ev);
}

static ssize_t parent_show(struct device *device, struct device_attribute *a,
			   char *buf)
{
	struct sroce_dev *sdev =
		rdma_device_to_drv_device(device, struct sroce_dev, ibdev);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}
static DEVICE_ATTR_RO(parent);

static struct attribute *sroce_dev_attrs[] = {
	&dev_attr_parent.attr,
	NULL,
};

static const struct attribute_group sroce_attr_group = {
	.attrs = sroce_dev_attrs,
};

static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sroce_dev(ibdev);
	struct sroce_dev_entry *e, *tmp;

	mutex_lock(&sroce_list_mutex);
	list_for_each_entry_safe(e, tmp, &sroce_dev_list, node) {
		if (e->sdev == sdev) {
			list_del(&e->node);
			kfree(e);
		}
	}
	mutex_unlock(&sroce_list_mutex);

	/* Leaves IP groups through the sockets: before sroce_net_put(). */
	sroce_mcast_cleanup(sdev);
	if (sdev->snet) {
		sroce_net_unpublish(sdev);
		sroce_net_put(sdev->snet);
		sdev->snet = NULL;
	}
	free_percpu(sdev->stats);
	sdev->stats = NULL;
	sroce_cc_dev_fini(sdev);
	/* Freed MRs release their pages through this device (sroce_mr.c). */
	sroce_mem_drain();
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
	/* ib_core destroyed every MR, AH, QP and SRQ before calling us. */
	WARN_ON(!xa_empty(&sdev->mr_xa));
	xa_destroy(&sdev->mr_xa);
	WARN_ON(!xa_empty(&sdev->ah_xa));
	xa_destroy(&sdev->ah_xa);
	WARN_ON(!xa_empty(&sdev->qp_xa));
	xa_destroy(&sdev->qp_xa);
	WARN_ON(!ida_is_empty(&sdev->srq_ida));
	ida_destroy(&sdev->srq_ida);
}

/*
 * ib_core asks for the port's netdev here (RoCE GIDs, rdma link show).
 * Return: @sdev->ndev with a reference for the caller, or NULL once it is
 * being unregistered.
 */
static struct net_device *sroce_get_netdev(struct ib_device *ibdev,
					   u32 port_num)
{
	struct sroce_dev *sdev = to_sroce_dev(ibdev);
	struct net_device *ndev = sdev->ndev;

	if (!ndev || READ_ONCE(sdev->ndev_gone))
		return NULL;
	dev_hold(ndev);
	return ndev;
}

static const struct ib_device_ops sroce_dev_ops = {
	.owner		= THIS_MODULE,
	/* rdma-core's rxe provider binds to this id and drives us unchanged. */
	.driver_id	= RDMA_DRIVER_RXE,
	.uverbs_abi_ver	= SROCE_UVERBS_ABI_VERSION,
	.dealloc_driver	= sroce_dealloc_driver,
	.get_netdev	= sroce_get_netdev,
	.device_group	= &sroce_attr_group,
	.port_groups	= sroce_cc_port_groups,
};

/* Lookup helper: our device bound to @ndev, with a reference, or NULL. */
static struct sroce_dev *sroce_get_dev_by_netdev(struct net_device *ndev)
{
	struct sroce_dev *sdev = NULL;
	struct sroce_dev_entry *e;

	mutex_lock(&sroce_list_mutex);
	list_for_each_entry(e, &sroce_dev_list, node) {
		if (e->sdev->ndev == ndev && ib_device_try_get(&e->sdev->ibdev)) {
			sdev = e->sdev;
			break;
		}
	}
	mutex_unlock(&sroce_list_mutex);
	return sdev;
}

static int sroce_check_netdev(const char *name, struct net_device *ndev)
{
	unsigned int min_mtu = sroce_min_netdev_mtu();
	struct ib_device *other;

	if (ndev->type != ARPHRD_ETHER) {
		pr_err_ratelimited("%s: %s is not an Ethernet device\n",
				   name, netdev_name(ndev));
		return -EINVAL;
	}
	if (ndev->mtu < min_mtu) {
		pr_err_ratelimited("%s: %s MTU %u is below the %u RoCEv2 needs\n",
				   name, netdev_name(ndev), ndev->mtu, min_mtu);
		return -EINVAL;
	}
	other = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		ib_device_put(other);
		pr_err_ratelimited("%s: an RDMA device of that name exists\n",
				   name);
		return -EEXIST;
	}
	other = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (!other) {
		struct sroce_dev *sdev = sroce_get_dev_by_netdev(ndev);

		other = sdev ? &sdev->ibdev : NULL;
	}
	if (other) {
		pr_err_ratelimited("%s: %s is already bound to %s\n", name,
				   netdev_name(ndev), dev_name(&other->dev));
		ib_device_put(other);
		return -EEXIST;
	}
	return 0;
}

/*
 * Make registered device @sdev known to the netdev notifier (the list),
 * unless its netdev started unregistering or moved to another namespace
 * meanwhile: the notifier could not see the device then, so it is
 * unregistered here.  A move unregisters the netdev in its namespace and
 * registers it anew in the other: a device left bound to it would keep
 * the old namespace's sockets, and that namespace's exit would wait for
 * them for good.  Under RTNL, so the check and the notifier cannot
 * interleave; the device reference keeps it from being torn down in
 * between.
 *
 * Return: 0, or -ENODEV when the device is going again.
 */
static int sroce_dev_enlist(struct sroce_dev *sdev,
			    struct sroce_dev_entry *entry)
{
	struct net_device *ndev = sdev->ndev;
	int err = -ENODEV;

	rtnl_lock();
	if (!ib_device_try_get(&sdev->ibdev))
		goto out;	/* someone unregisters it already */
	if (ndev->reg_state != NETREG_REGISTERED ||
	    !net_eq(dev_net(ndev), sdev->snet->net)) {
		ib_unregister_device_queued(&sdev->ibdev);
	} else {
		entry->sdev = sdev;
		mutex_lock(&sroce_list_mutex);
		list_add_tail(&entry->node, &sroce_dev_list);
		mutex_unlock(&sroce_list_mutex);
		entry = NULL;
		sroce_port_update(sdev);
		sroce_info(sdev, "created on %s (%s)\n", netdev_name(ndev),
			   sroce_port_state_name(sroce_port_state(sdev)));
		err = 0;
	}
	ib_device_put(&sdev->ibdev);
out:
	rtnl_unlock();
	kfree(entry);
	return err;
}

static int sroce_dev_add(const char *name, struct net_device *ndev)
{
	struct sroce_dev_entry *entry;
	struct sroce_dev *sdev;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev) {
		kfree(entry);
		return -ENOMEM;
	}
	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	INIT_LIST_HEAD(&sdev->net_node);
	spin_lock_init(&sdev->state_lock);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	ida_init(&sdev->srq_ida);
	sroce_mcast_init(sdev);

	/* From here on ib_dealloc_device() cleans up via dealloc_driver. */
	ib_set_device_ops(&sdev->ibdev, &sroce_dev_ops);
	ib_set_device_ops(&sdev->ibdev, &sroce_verbs_ops);

	sdev->stats = alloc_percpu(struct sroce_stats);
	if (!sdev->stats) {
		err = -ENOMEM;
		goto err_dealloc;
	}
	err = sroce_cc_dev_init(sdev);
	if (err)
		goto err_dealloc;

	err = sroce_net_get(dev_net(ndev), &sdev->snet);
	if (err)
		goto err_dealloc;
	/*
	 * Visible to ingress from now on, before registration: without a QP
	 * nothing is reachable there, and every teardown (dealloc_driver)
	 * unpublishes it, one that races with the rest of this function
	 * included.
	 */
	sroce_net_publish(sdev);

	sdev->ibdev.node_type = RDMA_NODE_IB_CA;
	sdev->ibdev.phys_port_cnt = 1;
	sdev->ibdev.num_comp_vectors = num_possible_cpus();
	sdev->ibdev.local_dma_lkey = 0;
	/*
	 * Legacy write() commands ib_core only enables on request.  The rxe
	 * provider arms CQ notification through the kernel and rings the send
	 * doorbell with an empty POST_SEND.
	 */
	sdev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
				       BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
	/* Parent = the NIC, so sysfs device/net/ names the netdev. */
	sdev->ibdev.dev.parent = ndev->dev.parent;
	strscpy(sdev->ibdev.node_desc, "sroce", sizeof(sdev->ibdev.node_desc));
	sroce_verbs_init_attrs(sdev);

	/*
	 * The memory stays ours until we return: once registered, the device
	 * may be unregistered and freed by `rdma link delete` at any time.
	 */
	get_device(&sdev->ibdev.dev);
	err = ib_register_device(&sdev->ibdev, name, NULL);
	if (err) {
		pr_err_ratelimited("%s: ib_register_device failed: %d\n", name,
				   err);
		put_device(&sdev->ibdev.dev);
		goto err_dealloc;
	}
	err = sroce_dev_enlist(sdev, entry);
	put_device(&sdev->ibdev.dev);
	return err;

err_dealloc:
	ib_dealloc_device(&sdev->ibdev);
	kfree(entry);
	return err;
}

static int sroce_newlink(const char *name, struct net_device *ndev)
{
	int err;

	mutex_lock(&sroce_newlink_mutex);
	err = sroce_check_netdev(name, ndev);
	if (!err)
		err = sroce_dev_add(name, ndev);
	mutex_unlock(&sroce_newlink_mutex);
	return err;
}

static struct rdma_link_ops sroce_link_ops = {
	.type		= "sroce",
	.newlink	= sroce_newlink,
};

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev;

	sdev = sroce_get_dev_by_netdev(ndev);
	if (!sdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		WRITE_ONCE(sdev->ndev_gone, true);
		/* Deferred: unregistration must not run under RTNL. */
		ib_unregister_device_queued(&sdev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		sroce_port_update(sdev);
		break;
	case NETDEV_CHANGEMTU:
		sroce_dbg(sdev, "netdev MTU %u, path MTU %u\n", ndev->mtu,
			  sroce_path_mtu(ndev->mtu));
		break;
	default:
		break;
	}
	ib_device_put(&sdev->ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block sroce_netdev_nb = {
	.notifier_call = sroce_netdev_event,
};

/*
 * Unregister every sroce device synchronously.  ib_unregister_driver()
 * cannot be used: it selects by driver id, which we share with rdma_rxe.
 * A queued unregistration racing with us is harmless: ib_core serializes
 * on the device's unregistration lock and dealloc_driver runs once.
 */
static struct sroce_dev *sroce_get_first_dev(void)
{
	struct sroce_dev_entry *e;
	struct sroce_dev *sdev = NULL;

	mutex_lock(&sroce_list_mutex);
	e = list_first_entry_or_null(&sroce_dev_list, struct sroce_dev_entry,
				     node);
	if (e) {
		sdev = e->sdev;
		get_device(&sdev->ibdev.dev);
	}
	mutex_unlock(&sroce_list_mutex);
	return sdev;
}

static void sroce_unregister_all(void)
{
	struct sroce_dev *sdev;

	while ((sdev = sroce_get_first_dev())) {
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

/* Requester and READ-response work; reclaim-safe for storage ULPs. */
struct workqueue_struct *sroce_wq;

static int __init sroce_module_init(void)
{
	int err;

	err = sroce_crc_init();
	if (err)
		return err;
	sroce_wq = alloc_workqueue("sroce", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!sroce_wq) {
		err = -ENOMEM;
		goto err_crc;
	}
	err = sroce_net_init();
	if (err)
		goto err_wq;

	err = register_netdevice_notifier(&sroce_netdev_nb);
	if (err)
		goto err_net;

	rdma_link_register(&sroce_link_ops);
	pr_info("loaded\n");
	return 0;

err_net:
	sroce_net_exit();
err_wq:
	destroy_workqueue(sroce_wq);
err_crc:
	sroce_crc_exit();
	return err;
}

static void __exit sroce_module_exit(void)
{
	rdma_link_unregister(&sroce_link_ops);
	unregister_netdevice_notifier(&sroce_netdev_nb);
	sroce_unregister_all();
	sroce_net_exit();
	pr_info("unloaded\n");
	destroy_workqueue(sroce_wq);
	sroce_tx_exit();
	sroce_crc_exit();
}

module_init(sroce_module_init);
module_exit(sroce_module_exit);

MODULE_ALIAS_RDMA_LINK("sroce");
MODULE_DESCRIPTION("Software RoCEv2 provider");
MODULE_AUTHOR("The sroce developers");
MODULE_LICENSE("Dual BSD/GPL");

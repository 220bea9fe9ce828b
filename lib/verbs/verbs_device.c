/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs devices: one per configured droce port (DROCE_DEVICES), opened into a
 * context whose ops and verbs_context entries are droce's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "droce_wire_hdr.h"
#include "verbs_limits.h"
#include "verbs_priv.h"

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct droce_device *devices[DROCE_DEVICES_MAX];
static int device_count = -1; /* -1: not loaded yet */

/*
 * RoCEv2 GID table as Linux builds it for a netdev: the link-local IPv6
 * address, then IPv4 addresses as IPv4-mapped IPv6, then the other IPv6
 * addresses. Every entry is of type RoCEv2.
 */
static void build_gid_table(struct droce_device *d)
{
	unsigned int i, n = 0;

	droce_ipv6_link_local(d->port.mac, d->gid[n++].raw);
	for (i = 0; i < d->port.n_ipv4; i++)
		droce_ipv4_mapped(d->port.ipv4[i], d->gid[n++].raw);
	for (i = 0; i < d->port.n_ipv6; i++)
		memcpy(d->gid[n++].raw, d->port.ipv6[i], 16);
	d->gid_count = n;
}

static struct droce_device *device_new(const struct droce_port_cfg *cfg, int index)
{
	static const uint8_t zero[6];
	struct droce_device *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	d->port = *cfg;
	if (memcmp(d->port.mac, zero, 6) == 0) {
		/* locally administered default, stable per device index; a DPDK device's own
		 * MAC replaces it when the engine opens it (two processes on one link must not
		 * share one) */
		static const uint8_t base[6] = {0x02, 0xd0, 0x0c, 0x00, 0x00, 0x00};

		memcpy(d->port.mac, base, 6);
		d->port.mac[5] = (uint8_t)(index + 1);
		d->mac_from_device = cfg->vdev[0] != '\0';
	}
	d->ibdev.node_type = IBV_NODE_CA;
	d->ibdev.transport_type = IBV_TRANSPORT_IB;
	/* names are at most DROCE_NAME_MAX - 1 characters (checked by the parser) */
	snprintf(d->ibdev.name, sizeof(d->ibdev.name), "%.63s", cfg->name);
	snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "uverbs-%.56s", cfg->name);
	snprintf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path), "/sys/class/infiniband_verbs/%.63s",
		 d->ibdev.dev_name);
	snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path), "/sys/class/infiniband/%.63s",
		 cfg->name);
	/* node GUID: EUI-64 of the MAC, as RoCE devices derive it */
	droce_eui64_from_mac(d->port.mac, (uint8_t *)&d->node_guid);
	build_gid_table(d);
	return d;
}

void droce_device_set_mac(struct droce_device *d, const uint8_t mac[6])
{
	memcpy(d->port.mac, mac, 6);
	droce_eui64_from_mac(d->port.mac, (uint8_t *)&d->node_guid);
	build_gid_table(d);
}

/* Load DROCE_DEVICES once; a bad value gives no device and a message on stderr. */
static int devices_load(void)
{
	struct droce_port_cfg cfg[DROCE_DEVICES_MAX];
	const char *env = getenv("DROCE_DEVICES");
	char err[256];
	int n, i;

	if (device_count >= 0)
		return 0;
	device_count = 0;
	if (droce_remote_mode()) {
		/* droced's devices: no DPDK device here, nothing starts in this process */
		n = droce_remote_devices(cfg, DROCE_DEVICES_MAX);
		if (n < 0)
			return n;
	} else {
		if (env == NULL || env[0] == '\0')
			return 0;
		n = droce_config_parse(env, cfg, DROCE_DEVICES_MAX, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "droce: DROCE_DEVICES: %s\n", err);
			return n;
		}
	}
	for (i = 0; i < n; i++) {
		devices[i] = device_new(&cfg[i], i);
		if (devices[i] == NULL)
			return -ENOMEM;
		if (droce_remote_mode()) {
			devices[i]->remote = true;
			devices[i]->remote_index = (uint32_t)i;
			devices[i]->mac_from_device = false; /* droced sent the port's own */
		}
		device_count = i + 1;
	}
	return 0;
}

struct droce_device *const *droce_devices(int *n)
{
	pthread_mutex_lock(&devices_lock);
	*n = device_count > 0 ? device_count : 0;
	pthread_mutex_unlock(&devices_lock);
	return devices;
}

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;
	int i, rc;

	pthread_mutex_lock(&devices_lock);
	rc = devices_load();
	list = calloc((size_t)device_count + 1, sizeof(*list));
	if (list != NULL)
		for (i = 0; i < device_count; i++)
			list[i] = &devices[i]->ibdev;
	pthread_mutex_unlock(&devices_lock);
	if (list == NULL || rc == -ENOMEM) {
		free(list);
		errno = ENOMEM;
		return NULL;
	}
	if (num_devices != NULL)
		*num_devices = device_count;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return to_ddev(device)->node_guid;
}

int ibv_get_device_index(struct ibv_device *device)
{
	int i;

	for (i = 0; i < device_count; i++)
		if (&devices[i]->ibdev == device)
			return i;
	return -1;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct droce_context *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->dev = to_ddev(device);
	/*
	 * Semaphore mode: one count per queued event, so the fd stays readable
	 * while events remain. Blocking, as libibverbs' async_fd: the application
	 * sets O_NONBLOCK itself (ibv_get_async_event(3)).
	 */
	c->async_efd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->async_efd < 0) {
		free(c);
		return NULL;
	}
	/*
	 * cmd_fd: libibverbs gives every context a descriptor of its own, which
	 * programs dup() and hand to ibv_import_device(). droce's commands go
	 * through no descriptor, so this one is an empty memfd: a file of this
	 * context alone (its own inode), open as long as the context is.
	 */
	c->vctx.context.cmd_fd = memfd_create("droce-context", MFD_CLOEXEC);
	if (c->vctx.context.cmd_fd < 0) {
		close(c->async_efd);
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->async_lock, NULL);
	pthread_mutex_init(&c->vctx.context.mutex, NULL);
	c->vctx.context.device = device;
	c->vctx.context.async_fd = c->async_efd;
	c->vctx.context.num_comp_vectors = 1;
	c->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->vctx.sz = sizeof(c->vctx);
	droce_context_ops_init(c);
	/* the backend, once: droced's objects or this process's engine */
	c->ops = c->dev->remote ? &droce_remote_ops : &droce_embedded_ops;
	rc = c->ops->open(c);
	if (rc != 0) {
		close(c->async_efd);
		close(c->vctx.context.cmd_fd);
		pthread_mutex_destroy(&c->lock);
		pthread_mutex_destroy(&c->async_lock);
		pthread_mutex_destroy(&c->vctx.context.mutex);
		free(c);
		errno = -rc;
		return NULL;
	}
	return &c->vctx.context;
}

int ibv_close_device(struct ibv_context *context)
{
	struct droce_context *c = to_dctx(context);

	c->ops->close(c);
	close(c->async_efd);
	close(context->cmd_fd);
	droce_async_fini(c);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&context->mutex);
	free(c);
	return 0;
}

enum ibv_mtu droce_mtu_for_eth(uint32_t eth_mtu)
{
	/* an IPv6 packet of the path MTU with its longest headers must fit too */
	uint32_t room = eth_mtu > DROCE_ROCE_OVERHEAD_MAX ? eth_mtu - DROCE_ROCE_OVERHEAD_MAX : 0;

	if (room >= 4096)
		return IBV_MTU_4096;
	if (room >= 2048)
		return IBV_MTU_2048;
	if (room >= 1024)
		return IBV_MTU_1024;
	if (room >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

static void fill_device_attr(const struct droce_device *d, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "droce %s", DROCE_VERSION);
	a->node_guid = d->node_guid;
	a->sys_image_guid = d->node_guid;
	a->max_mr_size = DROCE_MAX_MR_SIZE;
	a->page_size_cap = 0xfffff000; /* any power of two from 4 KiB */
	a->vendor_id = DROCE_VENDOR_ID;
	a->vendor_part_id = DROCE_VENDOR_PART_ID;
	a->hw_ver = 1;
	a->max_qp = DROCE_MAX_QP;
	a->max_qp_wr = DROCE_MAX_QP_WR;
	/* no IBV_DEVICE_SRQ_RESIZE: ibv_modify_srq(IBV_SRQ_MAX_WR) is refused (doc/verbs.md) */
	a->device_cap_flags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |
			      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_CHANGE_PHY_PORT | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_MEM_MGT_EXTENSIONS;
	a->max_sge = DROCE_MAX_SGE;
	a->max_sge_rd = DROCE_MAX_SGE_RD;
	a->max_cq = DROCE_MAX_CQ;
	a->max_cqe = DROCE_MAX_CQE;
	a->max_mr = DROCE_MAX_MR;
	a->max_pd = DROCE_MAX_PD;
	a->max_qp_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_res_rd_atom = DROCE_MAX_RD_ATOMIC * DROCE_MAX_QP;
	a->max_qp_init_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_mw = DROCE_MAX_MW;
	a->max_ah = DROCE_MAX_AH;
	a->max_srq = DROCE_MAX_SRQ;
	a->max_srq_wr = DROCE_MAX_SRQ_WR;
	a->max_srq_sge = DROCE_MAX_SRQ_SGE;
	a->max_pkeys = DROCE_PKEY_TABLE_LEN;
	a->local_ca_ack_delay = DROCE_LOCAL_ACK_DELAY;
	a->phys_port_cnt = 1;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	fill_device_attr(to_dctx(context)->dev, device_attr);
	return 0;
}

static int query_device_ex(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;

	if ((input != NULL && input->comp_mask != 0) || attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	fill_device_attr(to_dctx(context)->dev, &a.orig_attr);
	a.phys_port_cnt_ex = 1;
	/* a caller built with a newer, larger struct gets zeros past what droce knows */
	memset(attr, 0, attr_size);
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

/*
 * IB speed and width codes for an Ethernet link speed (PortInfo ActiveSpeed:
 * 1 SDR, 2 DDR, 8 FDR10, 32 EDR, 64 HDR, 128 NDR; ActiveWidth: 1 1x, 2 4x),
 * picking the pair whose product is closest below the link speed.
 */
static void port_speed(uint32_t mbps, uint8_t *speed, uint8_t *width)
{
	static const struct {
		uint32_t mbps;
		uint8_t speed, width;
	} table[] = {
		{400000, 128, 2}, {200000, 64, 2}, {100000, 32, 2}, {50000, 64, 1}, {40000, 8, 2},
		{25000, 32, 1},   {20000, 2, 2},   {10000, 8, 1},   {0, 1, 1},
	};
	unsigned int i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]) - 1; i++)
		if (mbps >= table[i].mbps)
			break;
	*speed = table[i].speed;
	*width = table[i].width;
}

static void fill_port_attr(struct droce_context *c, struct ibv_port_attr *a)
{
	const struct droce_device *d = c->dev;
	bool link_up = false, known;
	uint32_t speed = d->port.speed_mbps;

	memset(a, 0, sizeof(*a));
	/* the link is up only while the engine runs the port and its PMD says so */
	known = c->ops->query_port(c, &link_up, &speed);
	if (known && d->port.speed_mbps != 0)
		speed = d->port.speed_mbps; /* configured speeds win over the PMD's */
	a->state = link_up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a->phys_state = a->state == IBV_PORT_ACTIVE ? 5 /* LinkUp */ : 3 /* Disabled */;
	a->max_mtu = droce_mtu_for_eth(d->port.eth_mtu);
	a->active_mtu = a->max_mtu;
	a->gid_tbl_len = DROCE_GID_TABLE_LEN;
	a->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a->max_msg_sz = DROCE_MAX_MSG_SZ;
	a->pkey_tbl_len = DROCE_PKEY_TABLE_LEN;
	a->max_vl_num = 1;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	port_speed(speed, &a->active_speed, &a->active_width);
}

static int query_port(struct ibv_context *context, uint8_t port_num,
		      struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	struct ibv_port_attr a;

	if (port_num != 1)
		return EINVAL;
	fill_port_attr(to_dctx(context), &a);
	/* a caller built with a newer, larger struct gets zeros past what droce knows */
	memset(port_attr, 0, port_attr_len);
	memcpy(port_attr, &a, port_attr_len < sizeof(a) ? port_attr_len : sizeof(a));
	return 0;
}

/* The exported symbol behind the ibv_query_port() macro of old binaries. */
#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	/* the compat struct is the prefix of struct ibv_port_attr up to flags */
	int rc = query_port(context, port_num, (struct ibv_port_attr *)port_attr,
			    offsetof(struct ibv_port_attr, flags) + sizeof(uint8_t));

	/* libibverbs: 0 or the errno value, as the inline wrapper returns */
	if (rc != 0)
		errno = rc;
	return rc;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	const struct droce_device *d = to_dctx(context)->dev;

	if (port_num != 1 || index < 0 || index >= DROCE_GID_TABLE_LEN) {
		errno = EINVAL;
		return -1;
	}
	/* unused entries read as the zero GID, as on Linux */
	if ((unsigned int)index < d->gid_count)
		*gid = d->gid[index];
	else
		memset(gid, 0, sizeof(*gid));
	return 0;
}

static void fill_gid_entry(const struct droce_device *d, unsigned int index,
			   struct ibv_gid_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->gid = d->gid[index];
	e->gid_index = index;
	e->port_num = 1;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	const struct droce_device *d = to_dctx(context)->dev;
	struct ibv_gid_entry e;

	if (flags != 0 || port_num != 1 || entry_size < sizeof(e) ||
	    gid_index >= DROCE_GID_TABLE_LEN)
		return EINVAL;
	/* an entry of the table (gid_tbl_len) holding no GID, as the kernel answers */
	if (gid_index >= d->gid_count)
		return ENODATA;
	fill_gid_entry(d, gid_index, &e);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	const struct droce_device *d = to_dctx(context)->dev;
	unsigned int i;

	if (flags != 0 || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	if (max_entries < d->gid_count)
		return -EINVAL;
	for (i = 0; i < d->gid_count; i++)
		fill_gid_entry(d, i, (struct ibv_gid_entry *)((char *)entries + i * entry_size));
	return d->gid_count;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	(void)context;
	if (port_num != 1 || index < 0 || index >= DROCE_PKEY_TABLE_LEN) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(0xffff); /* the default partition, full membership */
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	(void)context;
	if (port_num != 1 || (be16toh(pkey) & 0x7fff) != 0x7fff) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

void droce_context_ops_init(struct droce_context *c)
{
	struct verbs_context *v = &c->vctx;

	v->query_port = query_port;
	v->query_device_ex = query_device_ex;
	droce_context_ops_init_objects(c);
}

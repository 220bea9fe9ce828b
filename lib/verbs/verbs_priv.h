/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/verbs private declarations: droce's objects behind the libibverbs
 * handles, grouped by the file that defines them. Never installed.
 *
 * Every public handle (struct ibv_context, ibv_pd, ...) is the first member
 * (or, for the context, the last member of the embedded verbs_context) of a
 * droce object; to_d*() recover the droce object, as providers do.
 */
#ifndef DROCE_VERBS_PRIV_H
#define DROCE_VERBS_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define DROCE_CONTAINER_OF(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* ------------------------------------------------------------ verbs_config.c */

#define DROCE_NAME_MAX      64
#define DROCE_PORT_ADDR_MAX 8

/** One port as configured: the verbs device droceN is made from it. */
struct droce_port_cfg {
	char name[DROCE_NAME_MAX]; /**< device name, e.g. droce0 */
	char vdev[128];            /**< DPDK device (vdev arguments or PCI address) */
	uint8_t mac[6];
	uint32_t eth_mtu;    /**< Ethernet MTU (IP packet size), 1500 by default */
	uint32_t speed_mbps; /**< link speed the port reports, 0 = unknown */
	unsigned int n_ipv4;
	uint8_t ipv4[DROCE_PORT_ADDR_MAX][4];
	unsigned int n_ipv6;
	uint8_t ipv6[DROCE_PORT_ADDR_MAX][16];
};

#define DROCE_DEVICES_MAX 16

/**
 * Parse a device list: devices separated by blanks or ';', each
 * "NAME:key=value,key=value...". Keys: mac, ip (IPv4 or IPv6, repeatable),
 * mtu, speed, vdev. Returns the device count or -EINVAL with a message in
 * @p err.
 */
int droce_config_parse(const char *text, struct droce_port_cfg *ports, int max, char *err,
		       size_t errlen);

/* ------------------------------------------------------------ verbs_device.c */

/** GID table entries per port: the link-local address plus the configured ones. */
#define DROCE_GID_TABLE_LEN (1 + 2 * DROCE_PORT_ADDR_MAX)

struct droce_device {
	struct ibv_device ibdev;
	struct droce_port_cfg port;
	__be64 node_guid;
	unsigned int gid_count;
	union ibv_gid gid[DROCE_GID_TABLE_LEN];
	/** set by the engine when it runs the port and the link is up */
	bool link_up;
};

static inline struct droce_device *to_ddev(struct ibv_device *d)
{
	return DROCE_CONTAINER_OF(d, struct droce_device, ibdev);
}

struct droce_context {
	struct verbs_context vctx; /* ends with the struct ibv_context handed out */
	struct droce_device *dev;
	int async_efd;        /**< eventfd behind context->async_fd */
	pthread_mutex_t lock; /**< serialises the control path of this context */
	unsigned int pd_count;
};

static inline struct droce_context *to_dctx(struct ibv_context *c)
{
	return DROCE_CONTAINER_OF(c, struct droce_context, vctx.context);
}

/** MTU enum for an Ethernet MTU: the largest IB MTU whose packets fit in it. */
enum ibv_mtu droce_mtu_for_eth(uint32_t eth_mtu);

/** Fill the context's op tables (device verbs here, object verbs in their files). */
void droce_context_ops_init(struct droce_context *c);
void droce_context_ops_init_objects(struct droce_context *c);

/* -------------------------------------------------------------- verbs_pd.c */

struct droce_pd {
	struct ibv_pd ibpd;
	uint32_t id;
	uint32_t users; /**< MRs, MWs, QPs, SRQs, AHs made in it (atomic) */
};

static inline void droce_pd_get(struct droce_pd *pd)
{
	__atomic_fetch_add(&pd->users, 1, __ATOMIC_RELAXED);
}

static inline void droce_pd_put(struct droce_pd *pd)
{
	__atomic_fetch_sub(&pd->users, 1, __ATOMIC_RELEASE);
}

static inline struct droce_pd *to_dpd(struct ibv_pd *p)
{
	return DROCE_CONTAINER_OF(p, struct droce_pd, ibpd);
}

/* ------------------------------------------------------------ verbs_sysfs.c */

/*
 * Exported by libibverbs without a declaration in <infiniband/verbs.h>
 * (rdma-core keeps them in headers it does not install); Debian's binaries
 * and librdmacm import them.
 */
int ibv_get_sysfs_path(char *buf, size_t size);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

#endif /* DROCE_VERBS_PRIV_H */

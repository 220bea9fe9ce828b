/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm ids: creation and destruction, binding, options, moving to another channel, and
 * the calls droce answers as librdmacm does on a device without the feature (multicast,
 * ECE).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmacm_priv.h"

const char *const rdmacm_state_name[RDMACM_STATE_COUNT] = {
	[RDMACM_IDLE] = "idle",
	[RDMACM_ADDR_QUERY] = "addr_query",
	[RDMACM_ADDR_RESOLVED] = "addr_resolved",
	[RDMACM_ROUTE_QUERY] = "route_query",
	[RDMACM_ROUTE_RESOLVED] = "route_resolved",
	[RDMACM_CONNECT] = "connect",
	[RDMACM_CONNECT_RESPONSE] = "connect_response",
	[RDMACM_REQUEST] = "request",
	[RDMACM_ACCEPTED] = "accepted",
	[RDMACM_LISTEN] = "listen",
	[RDMACM_ESTABLISHED] = "established",
	[RDMACM_DISCONNECT] = "disconnect",
};

static int fail(int err)
{
	errno = err;
	return -1;
}

struct rdmacm_id *rdmacm_id_new(struct rdmacm_channel *ch, void *context, enum rdma_port_space ps,
				enum ibv_qp_type qp_type)
{
	struct rdmacm_id *rid = calloc(1, sizeof(*rid));

	if (rid == NULL)
		return NULL;
	if (ch == NULL) {
		/* a synchronous id: a channel of its own, each call waits for its event */
		ch = rdmacm_channel_new();
		if (ch == NULL) {
			free(rid);
			return NULL;
		}
		rid->sync = true;
	}
	rid->id.channel = &ch->ch;
	rid->id.context = context;
	rid->id.ps = ps;
	rid->id.qp_type = qp_type;
	return rid;
}

void rdmacm_id_free(struct rdmacm_id *rid)
{
	if (rid->sync)
		rdmacm_channel_free(to_rch(rid->id.channel));
	free(rid->ep_qp_attr);
	free(rid);
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps)
{
	enum ibv_qp_type qp_type;
	struct rdmacm_id *rid;
	int rc;

	if (id == NULL)
		return fail(EINVAL);
	switch (ps) {
	case RDMA_PS_TCP:
	case RDMA_PS_IB:
		qp_type = IBV_QPT_RC;
		break;
	case RDMA_PS_UDP:
		qp_type = IBV_QPT_UD;
		break;
	case RDMA_PS_IPOIB:
		return fail(EPROTONOSUPPORT); /* IPoIB's space has no meaning on Ethernet */
	default:
		return fail(EINVAL);
	}
	rc = rdmacm_devices_open();
	if (rc < 0)
		return fail(-rc);
	rid = rdmacm_id_new(channel == NULL ? NULL : to_rch(channel), context, ps, qp_type);
	if (rid == NULL)
		return -1;
	*id = &rid->id;
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rdmacm_id *rid = to_rid(id);
	const struct droce_rdmacm_backend_ops *be;
	int err;

	if (id == NULL)
		return fail(EINVAL);
	be = rdmacm_backend(&err);
	rdmacm_lock();
	if (rid->cm != NULL)
		be->destroy_id(rid->cm); /* REJ, DREQ or DREP as its state wants */
	rid->cm = NULL;
	rdmacm_unlock();
	rdmacm_channel_forget(to_rch(id->channel), rid, rdmacm_child_orphan);
	if (rid->sync && id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	rdmacm_events_wait(rid);
	rdmacm_port_unbind(rid);
	rdmacm_id_free(rid);
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct rdmacm_id *rid = to_rid(id);
	int rc = 0;

	if (id == NULL || addr == NULL)
		return fail(EINVAL);
	if (rdmacm_sockaddr_len(addr) == 0)
		return fail(EAFNOSUPPORT);
	rdmacm_lock();
	if (rid->state != RDMACM_IDLE || rid->bound)
		rc = -EINVAL;
	/* an address: the device that has it (ENODEV: none of droce's) */
	if (rc == 0 && !rdmacm_sockaddr_any(addr))
		rc = rdmacm_id_bind_device(rid, addr);
	if (rc == 0)
		rc = rdmacm_port_bind(rid, addr);
	if (rc < 0 && rid->id.verbs != NULL) {
		rid->id.verbs = NULL;
		rid->dev = NULL;
	}
	rdmacm_unlock();
	return rc < 0 ? fail(-rc) : 0;
}

static int set_id_option(struct rdmacm_id *rid, int name, const void *val, size_t len)
{
	switch (name) {
	case RDMA_OPTION_ID_TOS:
		if (len != sizeof(uint8_t))
			return -EINVAL;
		rid->tos = *(const uint8_t *)val;
		rid->tos_set = true;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (len != sizeof(int))
			return -EINVAL;
		/* Linux: only before the id is bound (or while it has nothing but a binding) */
		if (rid->state != RDMACM_IDLE)
			return -EINVAL;
		rid->reuseaddr = *(const int *)val != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (len != sizeof(int))
			return -EINVAL;
		if (rid->bound)
			return -EINVAL;
		rid->afonly = *(const int *)val != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (len != sizeof(uint8_t))
			return -EINVAL;
		rid->ack_timeout = *(const uint8_t *)val;
		if (rid->ack_timeout > 31)
			rid->ack_timeout = 31; /* the 5-bit field's largest */
		rid->timeout_set = true;
		return 0;
	default:
		return -ENOSYS;
	}
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	int rc;

	if (id == NULL || optval == NULL)
		return fail(EINVAL);
	if (level != RDMA_OPTION_ID)
		return fail(ENOSYS); /* RDMA_OPTION_IB_PATH: an InfiniBand path, not RoCE's */
	rdmacm_lock();
	rc = set_id_option(to_rid(id), optname, optval, optlen);
	rdmacm_unlock();
	return rc < 0 ? fail(-rc) : 0;
}

static void channel_move(struct rdmacm_channel *from, struct rdmacm_channel *to,
			 struct rdmacm_id *rid)
{
	struct rdmacm_event *e, *next;

	pthread_mutex_lock(&from->lock);
	for (e = TAILQ_FIRST(&from->queue); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (e->ev.id != &rid->id)
			continue;
		TAILQ_REMOVE(&from->queue, e, link);
		pthread_mutex_lock(&to->lock);
		TAILQ_INSERT_TAIL(&to->queue, e, link);
		pthread_mutex_unlock(&to->lock);
		/* one more to read on the new descriptor; the old one's count is skipped */
		uint64_t one = 1;

		if (write(to->ch.fd, &one, sizeof(one)) != sizeof(one))
			continue;
	}
	pthread_mutex_unlock(&from->lock);
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct rdmacm_id *rid = to_rid(id);
	struct rdmacm_channel *old, *to;
	bool was_sync;

	if (id == NULL)
		return fail(EINVAL);
	to = channel == NULL ? rdmacm_channel_new() : to_rch(channel);
	if (to == NULL)
		return -1;
	rdmacm_lock();
	old = to_rch(id->channel);
	was_sync = rid->sync;
	channel_move(old, to, rid);
	id->channel = &to->ch;
	rid->sync = channel == NULL;
	rdmacm_unlock();
	/* as librdmacm: the events already handed out are acknowledged before it returns */
	if (was_sync && id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	rdmacm_events_wait(rid);
	if (was_sync)
		rdmacm_channel_free(old);
	return 0;
}

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]) && names[event] != NULL)
		return names[event];
	return "UNKNOWN EVENT";
}

/* droce sends no multicast (no IGMP/MLD, no multicast GIDs): refused, nothing joined */
int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)context;
	if (id == NULL || addr == NULL)
		return fail(EINVAL);
	return fail(EOPNOTSUPP);
}

int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr,
			   void *context)
{
	(void)context;
	if (id == NULL || mc_join_attr == NULL)
		return fail(EINVAL);
	return fail(EOPNOTSUPP);
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	if (id == NULL || addr == NULL)
		return fail(EINVAL);
	return fail(EADDRNOTAVAIL); /* never joined */
}

/*
 * ECE: droce's devices have none (ibv_query_ece answers EOPNOTSUPP), so as librdmacm on such
 * a device the local options are kept but never sent and the peer's read back as zero.
 */
int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || id->qp != NULL || ece == NULL || ece->vendor_id == 0 ||
	    ece->comp_mask != 0)
		return fail(EINVAL);
	return 0;
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || id->qp != NULL || ece == NULL)
		return fail(EINVAL);
	memset(ece, 0, sizeof(*ece));
	return 0;
}

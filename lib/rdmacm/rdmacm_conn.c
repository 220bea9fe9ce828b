/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connections: rdma_listen, rdma_connect, rdma_accept, rdma_reject, rdma_disconnect and
 * rdma_establish as CM messages (IBTA chapter 12), the rdma_cm addressing on top (annex
 * A11: the service ID of the port space and port, the 36-byte header ahead of the private
 * data), and the CM's events turned into rdma_cm events as Linux's rdma_cm and librdmacm do.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "droce_wire.h"
#include "rdmacm_priv.h"

static int fail(int err)
{
	errno = err;
	return -1;
}

static uint32_t random_psn(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)random();
	return v & 0xffffff; /* 24 bits (IBTA 9.7.1) */
}

static uint16_t port_space(const struct rdmacm_id *rid)
{
	switch (rid->id.ps) {
	case RDMA_PS_UDP:
		return DROCE_CMA_PS_UDP;
	case RDMA_PS_IB:
		return DROCE_CMA_PS_IB;
	default:
		return DROCE_CMA_PS_TCP;
	}
}

static uint64_t service_id(const struct rdmacm_id *rid, const struct sockaddr *sa)
{
	return droce_cma_service_id(port_space(rid), ntohs(rdmacm_sockaddr_port(sa)));
}

/* an address as the rdma_cm header carries it (IPv4 in the first four bytes) */
static void addr_bytes(const struct sockaddr *sa, uint8_t out[16])
{
	memset(out, 0, 16);
	if (sa->sa_family == AF_INET)
		memcpy(out, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa->sa_family == AF_INET6)
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

static void bytes_addr(uint8_t ip_version, const uint8_t in[16], uint16_t port,
		       struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (ip_version == 4) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		memcpy(&a->sin_addr, in, 4);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		memcpy(&a->sin6_addr, in, 16);
	}
}

/* the header and the user's private data after it, into @p buf: its length or -errno */
static int private_with_header(const struct rdmacm_id *rid, const void *user, size_t user_len,
			       size_t max, uint8_t *buf)
{
	const struct sockaddr *src = &rid->id.route.addr.src_addr;
	struct droce_cma_fields f;
	int rc;

	if (user_len > max - DROCE_CMA_HDR_LEN)
		return -EINVAL;
	memset(&f, 0, sizeof(f));
	f.version = DROCE_CMA_VERSION;
	f.ip_version = src->sa_family == AF_INET ? 4 : 6;
	f.port = ntohs(rdmacm_sockaddr_port(src));
	addr_bytes(src, f.src);
	addr_bytes(&rid->id.route.addr.dst_addr, f.dst);
	rc = droce_cma_hdr_encode(buf, max, &f);
	if (rc < 0)
		return rc;
	if (user_len > 0)
		memcpy(buf + DROCE_CMA_HDR_LEN, user, user_len);
	return (int)(DROCE_CMA_HDR_LEN + user_len);
}

static int cm_path(const struct rdmacm_id *rid, struct droce_cm_addr *p)
{
	if (rid->dev == NULL || !rid->dev->has_engine_port)
		return -ENODEV;
	memset(p, 0, sizeof(*p));
	p->port = rid->dev->engine_port;
	memcpy(p->sgid, rid->id.route.addr.addr.ibaddr.sgid.raw, 16);
	memcpy(p->dgid, rid->id.route.addr.addr.ibaddr.dgid.raw, 16);
	p->traffic_class = rid->tos;
	p->hop_limit = rid->path.hop_limit;
	p->flow_label = be32toh(rid->path.flow_label);
	p->pkey = 0xffff;
	return 0;
}

/* the backend, with a backend id for @p rid: 0 or -errno */
static int cm_open(struct rdmacm_id *rid, const struct droce_rdmacm_backend_ops **be)
{
	int err = 0;

	*be = rdmacm_backend(&err);
	if (*be == NULL)
		return err;
	if (rid->cm != NULL)
		return 0;
	return (*be)->create_id(rid, &rid->cm);
}

int rdmacm_sync_complete(struct rdmacm_id *rid)
{
	struct rdma_cm_event *ev;

	if (!rid->sync)
		return 0;
	if (rid->id.event != NULL) {
		rdma_ack_cm_event(rid->id.event);
		rid->id.event = NULL;
	}
	if (rdma_get_cm_event(rid->id.channel, &ev) != 0)
		return -errno;
	rid->id.event = ev;
	if (ev->status == 0)
		return 0;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return -ECONNREFUSED;
	return ev->status < 0 ? ev->status : -ev->status;
}

/* ------------------------------------------------------------ the passive side */

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct rdmacm_id *rid = to_rid(id);
	const struct droce_rdmacm_backend_ops *be;
	struct sockaddr_in any = {.sin_family = AF_INET};
	int rc = 0;

	(void)backlog; /* the agent holds every request until it is answered or times out */
	if (id == NULL)
		return fail(EINVAL);
	rdmacm_lock();
	if (rid->state == RDMACM_LISTEN)
		goto out;
	if (rid->state != RDMACM_IDLE) {
		rc = -EINVAL;
		goto out;
	}
	if (!rid->bound)
		rc = rdmacm_port_bind(rid, (struct sockaddr *)&any);
	if (rc == 0)
		rc = rdmacm_port_check_listen(rid);
	if (rc == 0)
		rc = cm_open(rid, &be);
	if (rc == 0)
		rc = be->listen(rid->cm, service_id(rid, &id->route.addr.src_addr));
	if (rc == 0)
		rid->state = RDMACM_LISTEN;
out:
	rdmacm_unlock();
	return rc < 0 ? fail(-rc) : 0;
}

/* does the listener @p l take a request for @p dst? */
static bool listener_takes(const struct rdmacm_id *l, const struct sockaddr_storage *dst)
{
	const struct sockaddr *own = &l->id.route.addr.src_addr;
	union ibv_gid a, b;

	if (rdmacm_sockaddr_any(own))
		return own->sa_family == dst->ss_family ||
		       (own->sa_family == AF_INET6 && !l->afonly);
	if (own->sa_family != dst->ss_family)
		return false;
	rdmacm_sockaddr_gid(own, &a);
	rdmacm_sockaddr_gid((const struct sockaddr *)dst, &b);
	return memcmp(&a, &b, sizeof(a)) == 0;
}

static uint8_t gid_index_of(struct ibv_context *verbs, const uint8_t gid[16])
{
	struct ibv_port_attr pa;
	union ibv_gid g;

	if (ibv_query_port(verbs, 1, &pa) != 0)
		return 0;
	for (int i = 0; i < pa.gid_tbl_len && i < 256; i++)
		if (ibv_query_gid(verbs, 1, i, &g) == 0 && memcmp(g.raw, gid, 16) == 0)
			return (uint8_t)i;
	return 0;
}

/* a new id for the request @p ev that came through @p l: NULL when refused */
static struct rdmacm_id *child_new(struct rdmacm_id *l, void *cm, const struct droce_cm_event *ev,
				   struct droce_cma_fields *f)
{
	struct sockaddr_storage src, dst;
	struct rdmacm_device *dev;
	struct rdmacm_id *c;

	if (droce_cma_hdr_decode(ev->private_data, ev->private_data_len, f) < 0)
		return NULL;
	bytes_addr(f->ip_version, f->dst, ntohs(rdmacm_sockaddr_port(&l->id.route.addr.src_addr)),
		   &dst);
	bytes_addr(f->ip_version, f->src, f->port, &src);
	if (!listener_takes(l, &dst))
		return NULL;
	dev = rdmacm_device_at_port(ev->from.port);
	if (dev == NULL)
		return NULL;
	c = rdmacm_id_new(l->sync ? NULL : to_rch(l->id.channel), l->id.context, l->id.ps,
			  l->id.qp_type);
	if (c == NULL)
		return NULL;
	c->cm = cm;
	c->listen = l;
	c->state = RDMACM_REQUEST;
	c->dev = dev;
	c->id.verbs = dev->verbs;
	c->id.port_num = 1;
	c->tos = ev->from.traffic_class;
	c->sgid_index = gid_index_of(dev->verbs, ev->from.sgid);
	memcpy(&c->id.route.addr.src_addr, &dst, rdmacm_sockaddr_len((struct sockaddr *)&dst));
	memcpy(&c->id.route.addr.dst_addr, &src, rdmacm_sockaddr_len((struct sockaddr *)&src));
	memcpy(c->id.route.addr.addr.ibaddr.sgid.raw, ev->from.sgid, 16);
	memcpy(c->id.route.addr.addr.ibaddr.dgid.raw, ev->from.dgid, 16);
	c->id.route.addr.addr.ibaddr.pkey = 0xffff;
	c->path.sgid = c->id.route.addr.addr.ibaddr.sgid;
	c->path.dgid = c->id.route.addr.addr.ibaddr.dgid;
	c->path.pkey = htobe16(0xffff);
	c->path.hop_limit = ev->from.hop_limit;
	c->path.traffic_class = ev->from.traffic_class;
	c->path.flow_label = htobe32(ev->from.flow_label);
	c->path.reversible = htobe32(1);
	c->path.numb_path = 1;
	c->path.mtu_selector = 2;
	c->path.rate_selector = 2;
	c->path.packet_life_time_selector = 2;
	c->path.packet_life_time = RDMACM_PACKET_LIFETIME;
	c->id.route.path_rec = &c->path;
	c->id.route.num_paths = 1;
	c->remote_psn = random_psn(); /* our RQ's, offered in the REP */
	return c;
}

static void on_request(struct rdmacm_id *l, void *cm, const struct droce_cm_event *ev)
{
	const struct droce_rdmacm_backend_ops *be;
	const uint64_t *v = ev->msg->value;
	struct rdma_cm_event param;
	struct droce_cma_fields f;
	struct rdmacm_id *c;
	int err;

	be = rdmacm_backend(&err);
	c = l->state == RDMACM_LISTEN ? child_new(l, cm, ev, &f) : NULL;
	if (c == NULL) {
		/* not for this listener: the agent refuses it (REJ, consumer defined) */
		be->destroy_id(cm);
		return;
	}
	be->set_owner(cm, c);
	memset(&param, 0, sizeof(param));
	if (ev->type == DROCE_CM_EV_REQ_RCVD) {
		c->path.mtu = (uint8_t)v[DROCE_CM_REQ_PATH_MTU];
		c->remote_qpn = (uint32_t)v[DROCE_CM_REQ_LOCAL_QPN];
		rdmacm_take_starting_psn(c, (uint32_t)v[DROCE_CM_REQ_STARTING_PSN]);
		/* what the peer reads from us is what we take in, and the reverse */
		c->responder_resources = (uint8_t)v[DROCE_CM_REQ_INITIATOR_DEPTH];
		c->initiator_depth = (uint8_t)v[DROCE_CM_REQ_RESPONDER_RESOURCES];
		c->retry_count = (uint8_t)v[DROCE_CM_REQ_RETRY_COUNT];
		c->rnr_retry_count = (uint8_t)v[DROCE_CM_REQ_RNR_RETRY_COUNT];
		c->srq = v[DROCE_CM_REQ_SRQ] != 0;
		param.param.conn.responder_resources = c->responder_resources;
		param.param.conn.initiator_depth = c->initiator_depth;
		param.param.conn.flow_control = (uint8_t)v[DROCE_CM_REQ_END_TO_END_FLOW_CONTROL];
		param.param.conn.retry_count = c->retry_count;
		param.param.conn.rnr_retry_count = c->rnr_retry_count;
		param.param.conn.srq = c->srq;
		param.param.conn.qp_num = c->remote_qpn;
	}
	rdmacm_event_queue(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, l,
			   ev->private_data + DROCE_CMA_HDR_LEN,
			   ev->private_data_len - DROCE_CMA_HDR_LEN, &param);
}

void rdmacm_child_orphan(struct rdmacm_id *child)
{
	const struct droce_rdmacm_backend_ops *be;
	int err;

	be = rdmacm_backend(&err);
	rdmacm_lock();
	if (child->cm != NULL && be != NULL)
		be->destroy_id(child->cm);
	child->cm = NULL;
	rdmacm_unlock();
	rdmacm_id_free(child);
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rdmacm_id *l = to_rid(listen);
	struct rdma_cm_event *ev;
	struct rdmacm_id *c;
	int rc;

	if (listen == NULL || id == NULL)
		return fail(EINVAL);
	if (!l->sync)
		return fail(EINVAL); /* as librdmacm: for ids made without a channel */
	rc = rdmacm_sync_complete(l);
	if (rc < 0)
		return fail(-rc);
	ev = listen->event;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return fail(EINVAL);
	listen->event = NULL;
	c = to_rid(ev->id);
	if (l->ep_qp_attr != NULL) {
		struct ibv_qp_init_attr a = *l->ep_qp_attr;

		rc = rdma_create_qp(&c->id, listen->pd, &a);
		if (rc != 0) {
			rc = errno;
			rdma_ack_cm_event(ev);
			rdma_destroy_id(&c->id);
			return fail(rc);
		}
	}
	c->id.event = ev;
	*id = &c->id;
	return 0;
}

static int accept_rc(struct rdmacm_id *rid, const struct rdma_conn_param *p)
{
	const struct droce_rdmacm_backend_ops *be;
	struct droce_cm_rep_param rep;
	int rc, err;

	if (p != NULL && p->private_data_len > RDMACM_REP_PRIVATE_MAX)
		return -EINVAL;
	if (p != NULL && p->initiator_depth != RDMA_MAX_INIT_DEPTH)
		rid->initiator_depth = p->initiator_depth;
	else if (rid->initiator_depth > rid->dev->max_init_rd_atom)
		rid->initiator_depth = rid->dev->max_init_rd_atom;
	if (p != NULL && p->responder_resources != RDMA_MAX_RESP_RES)
		rid->responder_resources = p->responder_resources;
	else if (rid->responder_resources > rid->dev->max_rd_atom)
		rid->responder_resources = rid->dev->max_rd_atom;
	if (rid->id.qp == NULL && p == NULL)
		return -EINVAL;
	if (rid->id.qp != NULL) {
		/* as librdmacm: the QP is ready to receive and send before REP goes out */
		rc = rdmacm_qp_modify(rid, IBV_QPS_INIT);
		if (rc == 0)
			rc = rdmacm_qp_modify(rid, IBV_QPS_RTR);
		if (rc == 0)
			rc = rdmacm_qp_modify(rid, IBV_QPS_RTS);
		if (rc < 0)
			return rc;
	}
	memset(&rep, 0, sizeof(rep));
	rep.local_qpn = rid->id.qp != NULL ? rid->id.qp->qp_num : p->qp_num;
	rep.starting_psn = rdmacm_offered_psn(rid);
	rep.responder_resources = rid->responder_resources;
	rep.initiator_depth = rid->initiator_depth;
	rep.target_ack_delay = rid->dev->ack_delay;
	rep.rnr_retry_count = p != NULL ? (p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count) : 7;
	rep.flow_control = p != NULL ? p->flow_control != 0 : true;
	rep.srq = rid->id.qp != NULL ? rid->id.qp->srq != NULL : (p->srq != 0);
	rep.private_data = p != NULL ? p->private_data : NULL;
	rep.private_data_len = p != NULL ? p->private_data_len : 0;
	be = rdmacm_backend(&err);
	rdmacm_lock();
	rc = rid->state == RDMACM_REQUEST && rid->cm != NULL ? be->send_rep(rid->cm, &rep)
							     : -EINVAL;
	if (rc == 0)
		rid->state = RDMACM_ACCEPTED;
	rdmacm_unlock();
	return rc;
}

static int accept_ud(struct rdmacm_id *rid, const struct rdma_conn_param *p)
{
	const struct droce_rdmacm_backend_ops *be;
	struct droce_cm_sidr_rep_param rep;
	int rc, err;

	if (p != NULL && p->private_data_len > RDMACM_SIDR_REP_PRIVATE_MAX)
		return -EINVAL;
	if (rid->id.qp == NULL && p == NULL)
		return -EINVAL;
	memset(&rep, 0, sizeof(rep));
	rep.status = DROCE_CM_SIDR_VALID;
	rep.qpn = rid->id.qp != NULL ? rid->id.qp->qp_num : p->qp_num;
	rep.qkey = RDMA_UDP_QKEY;
	rep.private_data = p != NULL ? p->private_data : NULL;
	rep.private_data_len = p != NULL ? p->private_data_len : 0;
	be = rdmacm_backend(&err);
	rdmacm_lock();
	rc = rid->state == RDMACM_REQUEST && rid->cm != NULL ? be->send_sidr_rep(rid->cm, &rep)
							     : -EINVAL;
	if (rc == 0)
		rid->state = RDMACM_ESTABLISHED;
	rdmacm_unlock();
	return rc;
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct rdmacm_id *rid = to_rid(id);
	int rc;

	if (id == NULL)
		return fail(EINVAL);
	if (rid->state != RDMACM_REQUEST || rid->dev == NULL)
		return fail(EINVAL);
	rc = id->qp_type == IBV_QPT_UD ? accept_ud(rid, conn_param) : accept_rc(rid, conn_param);
	if (rc == 0 && id->qp_type != IBV_QPT_UD)
		rc = rdmacm_sync_complete(rid); /* a synchronous id waits for ESTABLISHED */
	return rc < 0 ? fail(-rc) : 0;
}

static int reject(struct rdmacm_id *rid, uint16_t reason, const void *pd, uint8_t len)
{
	const struct droce_rdmacm_backend_ops *be;
	struct droce_cm_sidr_rep_param rep;
	int rc, err;

	be = rdmacm_backend(&err);
	rdmacm_lock();
	if (rid->cm == NULL ||
	    (rid->state != RDMACM_REQUEST && rid->state != RDMACM_CONNECT_RESPONSE)) {
		rc = -EINVAL;
	} else if (rid->id.qp_type == IBV_QPT_UD) {
		memset(&rep, 0, sizeof(rep));
		rep.status = DROCE_CM_SIDR_REJECT;
		rep.private_data = pd;
		rep.private_data_len = len;
		rc = len > RDMACM_SIDR_REP_PRIVATE_MAX ? -EINVAL : be->send_sidr_rep(rid->cm, &rep);
	} else {
		rc = len > RDMACM_REJ_PRIVATE_MAX ? -EINVAL
						  : be->send_rej(rid->cm, reason, pd, len);
	}
	if (rc == 0)
		rid->state = RDMACM_DISCONNECT;
	rdmacm_unlock();
	return rc;
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	int rc;

	if (id == NULL || (private_data == NULL && private_data_len > 0))
		return fail(EINVAL);
	rc = reject(to_rid(id), DROCE_CM_REJ_CONSUMER_DEFINED, private_data, private_data_len);
	return rc < 0 ? fail(-rc) : 0;
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	int rc;

	if (id == NULL || (private_data == NULL && private_data_len > 0))
		return fail(EINVAL);
	/* REJ reason 35, vendor option not supported (IBTA 12.6.7.2 table 109) */
	rc = reject(to_rid(id), 35, private_data, private_data_len);
	return rc < 0 ? fail(-rc) : 0;
}

/* ------------------------------------------------------------ the active side */

static int connect_rc(struct rdmacm_id *rid, const struct rdma_conn_param *p,
		      const struct droce_rdmacm_backend_ops *be)
{
	uint8_t priv[RDMACM_REQ_PRIVATE_MAX];
	struct droce_cm_req_param req;
	int len, rc;

	if (rid->id.qp == NULL && p == NULL)
		return -EINVAL;
	if (p != NULL && ((p->responder_resources != RDMA_MAX_RESP_RES &&
			   p->responder_resources > rid->dev->max_rd_atom) ||
			  (p->initiator_depth != RDMA_MAX_INIT_DEPTH &&
			   p->initiator_depth > rid->dev->max_init_rd_atom)))
		return -EINVAL;
	len = private_with_header(rid, p != NULL ? p->private_data : NULL,
				  p != NULL ? p->private_data_len : 0, sizeof(priv), priv);
	if (len < 0)
		return len;
	rid->initiator_depth = p != NULL && p->initiator_depth != RDMA_MAX_INIT_DEPTH
				       ? p->initiator_depth
				       : rid->dev->max_init_rd_atom;
	rid->responder_resources = p != NULL && p->responder_resources != RDMA_MAX_RESP_RES
					   ? p->responder_resources
					   : rid->dev->max_rd_atom;
	rid->retry_count = p != NULL ? (p->retry_count > 7 ? 7 : p->retry_count) : 7;
	rid->rnr_retry_count = p != NULL ? (p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count) : 7;
	rid->remote_psn = random_psn(); /* our RQ's, offered in the REQ */
	memset(&req, 0, sizeof(req));
	rc = cm_path(rid, &req.path);
	if (rc < 0)
		return rc;
	req.service_id = service_id(rid, &rid->id.route.addr.dst_addr);
	req.local_qpn = rid->id.qp != NULL ? rid->id.qp->qp_num : p->qp_num;
	req.starting_psn = rdmacm_offered_psn(rid);
	req.transport =
		rid->id.qp_type == IBV_QPT_UC ? DROCE_CM_TRANSPORT_UC : DROCE_CM_TRANSPORT_RC;
	req.responder_resources = rid->responder_resources;
	req.initiator_depth = rid->initiator_depth;
	req.remote_cm_response_timeout = RDMACM_CM_RESPONSE_TIMEOUT;
	req.local_cm_response_timeout = RDMACM_CM_RESPONSE_TIMEOUT;
	req.max_cm_retries = RDMACM_MAX_CM_RETRIES;
	req.retry_count = rid->retry_count;
	req.rnr_retry_count = rid->rnr_retry_count;
	req.local_ack_timeout = rdmacm_local_ack_timeout(rid);
	req.path_mtu = rid->path.mtu;
	req.packet_life_time = RDMACM_PACKET_LIFETIME;
	req.flow_control = p != NULL ? p->flow_control != 0 : true;
	req.srq = rid->id.qp != NULL ? rid->id.qp->srq != NULL : (p->srq != 0);
	req.private_data = priv;
	req.private_data_len = (uint8_t)len;
	return be->send_req(rid->cm, &req);
}

static int connect_ud(struct rdmacm_id *rid, const struct rdma_conn_param *p,
		      const struct droce_rdmacm_backend_ops *be)
{
	uint8_t priv[RDMACM_SIDR_REQ_PRIVATE_MAX];
	struct droce_cm_sidr_req_param req;
	int len, rc;

	len = private_with_header(rid, p != NULL ? p->private_data : NULL,
				  p != NULL ? p->private_data_len : 0, sizeof(priv), priv);
	if (len < 0)
		return len;
	memset(&req, 0, sizeof(req));
	rc = cm_path(rid, &req.path);
	if (rc < 0)
		return rc;
	req.service_id = service_id(rid, &rid->id.route.addr.dst_addr);
	req.timeout = RDMACM_CM_RESPONSE_TIMEOUT;
	req.max_cm_retries = RDMACM_MAX_CM_RETRIES;
	req.private_data = priv;
	req.private_data_len = (uint8_t)len;
	return be->send_sidr_req(rid->cm, &req);
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct rdmacm_id *rid = to_rid(id);
	const struct droce_rdmacm_backend_ops *be;
	int rc;

	if (id == NULL)
		return fail(EINVAL);
	rdmacm_lock();
	rc = rid->state == RDMACM_ROUTE_RESOLVED ? cm_open(rid, &be) : -EINVAL;
	if (rc == 0)
		rc = id->qp_type == IBV_QPT_UD ? connect_ud(rid, conn_param, be)
					       : connect_rc(rid, conn_param, be);
	if (rc == 0)
		rid->state = RDMACM_CONNECT;
	rdmacm_unlock();
	if (rc == 0)
		rc = rdmacm_sync_complete(rid);
	return rc < 0 ? fail(-rc) : 0;
}

/* CONNECT_RESPONSE with a QP: RTR, RTS, RTU, as librdmacm does before the program sees it */
static void connect_response(struct rdmacm_event *e)
{
	struct rdmacm_id *rid = to_rid(e->ev.id);
	const struct droce_rdmacm_backend_ops *be;
	int rc, err;

	rc = rdmacm_qp_modify(rid, IBV_QPS_INIT);
	if (rc == 0)
		rc = rdmacm_qp_modify(rid, IBV_QPS_RTR);
	if (rc == 0)
		rc = rdmacm_qp_modify(rid, IBV_QPS_RTS);
	be = rdmacm_backend(&err);
	rdmacm_lock();
	if (rid->cm == NULL || rid->state != RDMACM_CONNECT_RESPONSE)
		rc = rc < 0 ? rc : -EINVAL;
	else if (rc == 0)
		rc = be->send_rtu(rid->cm, NULL, 0);
	if (rc == 0) {
		rid->state = RDMACM_ESTABLISHED;
		e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
	} else {
		if (rid->cm != NULL && rid->state == RDMACM_CONNECT_RESPONSE)
			be->send_rej(rid->cm, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		rid->state = RDMACM_DISCONNECT;
		e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
		e->ev.status = rc;
	}
	rdmacm_unlock();
}

void rdmacm_event_process(struct rdmacm_event *e)
{
	struct rdmacm_id *rid = to_rid(e->ev.id);

	if (e->ev.event == RDMA_CM_EVENT_CONNECT_RESPONSE && rid->id.qp != NULL)
		connect_response(e);
	else if (e->ev.event == RDMA_CM_EVENT_REJECTED)
		rdmacm_qp_to_err(rid); /* as Linux's rdma_cm on a REJ */
}

int rdma_establish(struct rdma_cm_id *id)
{
	struct rdmacm_id *rid = to_rid(id);
	const struct droce_rdmacm_backend_ops *be;
	int rc, err;

	if (id == NULL || id->qp != NULL)
		return fail(EINVAL);
	be = rdmacm_backend(&err);
	rdmacm_lock();
	rc = rid->cm != NULL && rid->state == RDMACM_CONNECT_RESPONSE
		     ? be->send_rtu(rid->cm, NULL, 0)
		     : -EINVAL;
	if (rc == 0)
		rid->state = RDMACM_ESTABLISHED;
	rdmacm_unlock();
	return rc < 0 ? fail(-rc) : 0;
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct rdmacm_id *rid = to_rid(id);
	const struct droce_rdmacm_backend_ops *be;
	int rc, err;

	if (id == NULL)
		return fail(EINVAL);
	if (event != IBV_EVENT_COMM_EST)
		return fail(EINVAL);
	be = rdmacm_backend(&err);
	rdmacm_lock();
	if (rid->cm == NULL)
		rc = -EINVAL;
	else if (rid->state == RDMACM_ESTABLISHED)
		rc = -EISCONN;
	else
		rc = be->established(rid->cm); /* the passive side's first packet came (12.9.6) */
	rdmacm_unlock();
	return rc < 0 ? fail(-rc) : 0;
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	struct rdmacm_id *rid = to_rid(id);
	const struct droce_rdmacm_backend_ops *be;
	enum droce_cm_state s;
	int rc = 0, err;

	if (id == NULL)
		return fail(EINVAL);
	be = rdmacm_backend(&err);
	rdmacm_lock();
	if (rid->cm == NULL ||
	    (rid->state != RDMACM_ESTABLISHED && rid->state != RDMACM_ACCEPTED &&
	     rid->state != RDMACM_CONNECT_RESPONSE && rid->state != RDMACM_DISCONNECT))
		rc = -EINVAL;
	rdmacm_unlock();
	if (rc < 0)
		return fail(-rc);
	rdmacm_qp_to_err(rid); /* as librdmacm: flush the QP before the CM message */
	rdmacm_lock();
	s = rid->cm != NULL ? be->state(rid->cm) : DROCE_CM_IDLE;
	if (s == DROCE_CM_DREQ_RCVD)
		rc = be->send_drep(rid->cm, NULL, 0);
	else if (s == DROCE_CM_ESTABLISHED || s == DROCE_CM_REP_SENT || s == DROCE_CM_MRA_REP_RCVD)
		rc = be->send_dreq(rid->cm, NULL, 0);
	else
		rc = -EINVAL;
	bool wait = rc == 0 && s != DROCE_CM_DREQ_RCVD;
	rdmacm_unlock();
	if (rc < 0 && s != DROCE_CM_IDLE)
		rc = 0; /* already on its way down: as Linux, nothing to do */
	if (rc == 0 && wait)
		rc = rdmacm_sync_complete(rid);
	return rc < 0 ? fail(-rc) : 0;
}

/* ------------------------------------------------------------ events of the agent */

static void on_rep(struct rdmacm_id *rid, const struct droce_cm_event *ev)
{
	const uint64_t *v = ev->msg->value;
	struct rdma_cm_event param;

	rid->remote_qpn = (uint32_t)v[DROCE_CM_REP_LOCAL_QPN];
	rdmacm_take_starting_psn(rid, (uint32_t)v[DROCE_CM_REP_STARTING_PSN]);
	/* the peer's resources bound what we send at once, and the reverse (12.7.29) */
	if (rid->initiator_depth > v[DROCE_CM_REP_RESPONDER_RESOURCES])
		rid->initiator_depth = (uint8_t)v[DROCE_CM_REP_RESPONDER_RESOURCES];
	if (rid->responder_resources > v[DROCE_CM_REP_INITIATOR_DEPTH])
		rid->responder_resources = (uint8_t)v[DROCE_CM_REP_INITIATOR_DEPTH];
	rid->rnr_retry_count = (uint8_t)v[DROCE_CM_REP_RNR_RETRY_COUNT];
	rid->target_ack_delay = (uint8_t)v[DROCE_CM_REP_TARGET_ACK_DELAY];
	memset(&param, 0, sizeof(param));
	param.param.conn.responder_resources = (uint8_t)v[DROCE_CM_REP_INITIATOR_DEPTH];
	param.param.conn.initiator_depth = (uint8_t)v[DROCE_CM_REP_RESPONDER_RESOURCES];
	param.param.conn.flow_control = (uint8_t)v[DROCE_CM_REP_END_TO_END_FLOW_CONTROL];
	param.param.conn.rnr_retry_count = rid->rnr_retry_count;
	param.param.conn.srq = (uint8_t)v[DROCE_CM_REP_SRQ];
	param.param.conn.qp_num = rid->remote_qpn;
	rid->state = RDMACM_CONNECT_RESPONSE;
	rdmacm_event_queue(rid, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, NULL, ev->private_data,
			   ev->private_data_len, &param);
}

static void on_sidr_rep(struct rdmacm_id *rid, const struct droce_cm_event *ev)
{
	const uint64_t *v = ev->msg->value;
	struct rdma_cm_event param;

	if (ev->status != DROCE_CM_SIDR_VALID) {
		rid->state = RDMACM_ROUTE_RESOLVED;
		rdmacm_event_queue(rid, RDMA_CM_EVENT_UNREACHABLE, ev->status, NULL,
				   ev->private_data, ev->private_data_len, NULL);
		return;
	}
	memset(&param, 0, sizeof(param));
	rdmacm_ah_attr(rid, &param.param.ud.ah_attr);
	param.param.ud.qp_num = (uint32_t)v[DROCE_CM_SIDR_REP_QPN];
	param.param.ud.qkey = (uint32_t)v[DROCE_CM_SIDR_REP_QKEY];
	rid->remote_qpn = param.param.ud.qp_num;
	rid->remote_qkey = param.param.ud.qkey;
	rid->state = RDMACM_ESTABLISHED;
	rdmacm_event_queue(rid, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, ev->private_data,
			   ev->private_data_len, &param);
}

/* DREQ received, DREP received, DREQ timed out: the connection is down (reported once) */
static void on_disconnect(struct rdmacm_id *rid, const struct droce_cm_event *ev)
{
	if (rid->disconnect_reported ||
	    (rid->state != RDMACM_ESTABLISHED && rid->state != RDMACM_ACCEPTED &&
	     rid->state != RDMACM_CONNECT_RESPONSE && rid->state != RDMACM_DISCONNECT))
		return;
	rid->disconnect_reported = true;
	rid->state = RDMACM_DISCONNECT;
	rdmacm_event_queue(rid, RDMA_CM_EVENT_DISCONNECTED,
			   ev->type == DROCE_CM_EV_DREQ_ERROR ? -ETIMEDOUT : 0, NULL,
			   ev->private_data, ev->private_data_len, NULL);
}

void rdmacm_on_cm_event(void *owner, void *listen_owner, void *cm, const struct droce_cm_event *ev)
{
	struct rdmacm_id *rid = owner;

	if (rid == NULL) {
		if (listen_owner != NULL &&
		    (ev->type == DROCE_CM_EV_REQ_RCVD || ev->type == DROCE_CM_EV_SIDR_REQ_RCVD))
			on_request(listen_owner, cm, ev);
		return;
	}
	switch (ev->type) {
	case DROCE_CM_EV_REP_RCVD:
		if (rid->state == RDMACM_CONNECT)
			on_rep(rid, ev);
		break;
	case DROCE_CM_EV_RTU_RCVD:
	case DROCE_CM_EV_USER_ESTABLISHED:
		if (rid->state == RDMACM_ACCEPTED) {
			rid->state = RDMACM_ESTABLISHED;
			rdmacm_event_queue(rid, RDMA_CM_EVENT_ESTABLISHED, 0, NULL,
					   ev->private_data, ev->private_data_len, NULL);
		}
		break;
	case DROCE_CM_EV_REQ_ERROR:
	case DROCE_CM_EV_REP_ERROR:
	case DROCE_CM_EV_SIDR_REQ_ERROR:
		rid->state = RDMACM_DISCONNECT;
		rdmacm_event_queue(rid, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, NULL, 0, NULL);
		break;
	case DROCE_CM_EV_REJ_RCVD:
		rid->state = RDMACM_DISCONNECT;
		rdmacm_event_queue(rid, RDMA_CM_EVENT_REJECTED, ev->status, NULL, ev->private_data,
				   ev->private_data_len, NULL);
		break;
	case DROCE_CM_EV_DREQ_RCVD:
	case DROCE_CM_EV_DREP_RCVD:
	case DROCE_CM_EV_DREQ_ERROR:
		on_disconnect(rid, ev);
		break;
	case DROCE_CM_EV_TIMEWAIT_EXIT:
		rdmacm_event_queue(rid, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL, NULL, 0, NULL);
		break;
	case DROCE_CM_EV_SIDR_REP_RCVD:
		if (rid->state == RDMACM_CONNECT)
			on_sidr_rep(rid, ev);
		break;
	default:
		break; /* MRA: the agent waits longer; nothing for the program */
	}
}

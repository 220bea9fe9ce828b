/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connections through the rdma_cm API over the engine's CM, droce0 (10.0.0.1, fd00::1) to
 * droce1 (10.0.0.2, fd01::2) on one ring link in one process: connect, accept with private
 * data both ways, data over the QPs, disconnect from either side; REJ from nobody listening
 * and from the consumer; UD through SIDR.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "rdmacm_env.h"

/* the next event of @p ch within 10 s, which must be @p type */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	cr_assert_eq(poll(&p, 1, 10000), 1, "no event within 10 s (waiting for %s)",
		     rdma_event_str(type));
	cr_assert_eq(rdma_get_cm_event(ch, &ev), 0, "%s", strerror(errno));
	cr_assert_eq(ev->event, type, "%s, expected %s (status %d)", rdma_event_str(ev->event),
		     rdma_event_str(type), ev->status);
	return ev;
}

struct side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
};

static const struct ibv_qp_init_attr qp_attr = {
	.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1},
	.sq_sig_all = 1,
};

static void listen_on(struct side *s, const char *a, uint16_t port, enum rdma_port_space ps)
{
	struct sockaddr_storage sa = addr(a, port);

	s->ch = rdma_create_event_channel();
	cr_assert_not_null(s->ch);
	cr_assert_eq(rdma_create_id(s->ch, &s->id, NULL, ps), 0);
	cr_assert_eq(rdma_bind_addr(s->id, SA(sa)), 0, "bind: %s", strerror(errno));
	cr_assert_eq(rdma_listen(s->id, 8), 0, "listen: %s", strerror(errno));
}

static void route_to(struct side *c, const char *src, const char *dst, uint16_t port,
		     enum rdma_port_space ps)
{
	struct sockaddr_storage s = addr(src, 0), d = addr(dst, port);
	struct ibv_qp_init_attr a = qp_attr;

	c->ch = rdma_create_event_channel();
	cr_assert_eq(rdma_create_id(c->ch, &c->id, NULL, ps), 0);
	cr_assert_eq(rdma_resolve_addr(c->id, SA(s), SA(d), 2000), 0);
	rdma_ack_cm_event(expect(c->ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	cr_assert_eq(rdma_resolve_route(c->id, 2000), 0);
	rdma_ack_cm_event(expect(c->ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	cr_assert_eq(rdma_create_qp(c->id, NULL, &a), 0, "client QP: %s", strerror(errno));
}

static void close_side(struct side *s)
{
	if (s->id->qp != NULL)
		rdma_destroy_qp(s->id);
	cr_assert_eq(rdma_destroy_id(s->id), 0);
	rdma_destroy_event_channel(s->ch);
}

/* client sends one message, server receives it */
static void traffic(struct rdma_cm_id *client, struct rdma_cm_id *server)
{
	char out[32] = "over the connection", in[32] = {0};
	struct ibv_mr *mo = rdma_reg_msgs(client, out, sizeof(out));
	struct ibv_mr *mi = rdma_reg_msgs(server, in, sizeof(in));
	struct ibv_wc wc;

	cr_assert_not_null(mo);
	cr_assert_not_null(mi);
	cr_assert_eq(rdma_post_recv(server, NULL, in, sizeof(in), mi), 0);
	cr_assert_eq(rdma_post_send(client, NULL, out, sizeof(out), mo, 0), 0);
	cr_assert_eq(rdma_get_send_comp(client, &wc), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(rdma_get_recv_comp(server, &wc), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "recv: %s", ibv_wc_status_str(wc.status));
	cr_assert_str_eq(in, "over the connection");
	rdma_dereg_mr(mo);
	rdma_dereg_mr(mi);
}

static void connect_accept_disconnect(const char *src, const char *dst, bool client_first)
{
	struct side srv, cli;
	struct rdma_conn_param cp = {.private_data = "hello",
				     .private_data_len = 6,
				     .responder_resources = 2,
				     .initiator_depth = 3,
				     .retry_count = 5,
				     .rnr_retry_count = 6};
	struct rdma_conn_param ap = {.private_data = "world",
				     .private_data_len = 6,
				     .responder_resources = 3,
				     .initiator_depth = 2};
	struct ibv_qp_init_attr a = qp_attr;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *child;

	rdmacm_test_env();
	listen_on(&srv, dst, 7471, RDMA_PS_TCP);
	route_to(&cli, src, dst, 7471, RDMA_PS_TCP);
	cr_assert_eq(rdma_connect(cli.id, &cp), 0, "connect: %s", strerror(errno));
	ev = expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_eq(ev->listen_id, srv.id, "through the listener");
	child = ev->id;
	cr_assert_neq(child, srv.id, "a new id");
	cr_assert_geq(ev->param.conn.private_data_len, 6, "the user's private data");
	cr_assert_str_eq(ev->param.conn.private_data, "hello", "after the rdma_cm header");
	cr_assert_eq(ev->param.conn.responder_resources, 3, "the peer's initiator depth");
	cr_assert_eq(ev->param.conn.initiator_depth, 2, "the peer's responder resources");
	cr_assert_eq(ev->param.conn.retry_count, 5);
	cr_assert_eq(ev->param.conn.rnr_retry_count, 6);
	cr_assert_eq(ev->param.conn.qp_num, cli.id->qp->qp_num, "the peer's QPN");
	cr_assert_not_null(child->verbs, "the child has the device");
	cr_assert_str_eq(ibv_get_device_name(child->verbs->device), "droce1");
	cr_assert_eq(rdma_get_dst_port(child), rdma_get_src_port(cli.id), "the peer's port");
	cr_assert_eq(ntohs(rdma_get_src_port(child)), 7471);
	cr_assert_eq(rdma_create_qp(child, NULL, &a), 0, "server QP: %s", strerror(errno));
	rdma_ack_cm_event(ev);
	cr_assert_eq(rdma_accept(child, &ap), 0, "accept: %s", strerror(errno));
	ev = expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_str_eq(ev->param.conn.private_data, "world", "REP's private data");
	cr_assert_eq(ev->param.conn.qp_num, child->qp->qp_num);
	rdma_ack_cm_event(ev);
	rdma_ack_cm_event(expect(srv.ch, RDMA_CM_EVENT_ESTABLISHED));
	traffic(cli.id, child);
	if (client_first) {
		cr_assert_eq(rdma_disconnect(cli.id), 0, "%s", strerror(errno));
		rdma_ack_cm_event(expect(srv.ch, RDMA_CM_EVENT_DISCONNECTED));
		cr_assert_eq(rdma_disconnect(child), 0, "answer with DREP: %s", strerror(errno));
		rdma_ack_cm_event(expect(cli.ch, RDMA_CM_EVENT_DISCONNECTED));
	} else {
		cr_assert_eq(rdma_disconnect(child), 0, "%s", strerror(errno));
		rdma_ack_cm_event(expect(cli.ch, RDMA_CM_EVENT_DISCONNECTED));
		cr_assert_eq(rdma_disconnect(cli.id), 0, "%s", strerror(errno));
		rdma_ack_cm_event(expect(srv.ch, RDMA_CM_EVENT_DISCONNECTED));
	}
	rdma_destroy_qp(child);
	cr_assert_eq(rdma_destroy_id(child), 0);
	close_side(&cli);
	close_side(&srv);
}

Test(rdmacm_connect, ipv4_client_disconnects, .timeout = 60)
{
	connect_accept_disconnect("10.0.0.1", "10.0.0.2", true);
}

Test(rdmacm_connect, ipv4_server_disconnects, .timeout = 60)
{
	connect_accept_disconnect("10.0.0.1", "10.0.0.2", false);
}

Test(rdmacm_connect, ipv6, .timeout = 60)
{
	connect_accept_disconnect("fd00::1", "fd01::2", true);
}

Test(rdmacm_connect, nobody_listens_rejected, .timeout = 60)
{
	struct rdma_conn_param cp = {.retry_count = 7};
	struct rdma_cm_event *ev;
	struct side cli;

	rdmacm_test_env();
	route_to(&cli, "10.0.0.1", "10.0.0.2", 9999, RDMA_PS_TCP);
	cr_assert_eq(rdma_connect(cli.id, &cp), 0);
	ev = expect(cli.ch, RDMA_CM_EVENT_REJECTED);
	cr_assert_eq(ev->status, 8, "REJ reason 8, invalid service ID: %d", ev->status);
	rdma_ack_cm_event(ev);
	close_side(&cli);
}

Test(rdmacm_connect, consumer_reject, .timeout = 60)
{
	struct rdma_conn_param cp = {.retry_count = 7};
	struct rdma_cm_event *ev;
	struct side srv, cli;

	rdmacm_test_env();
	listen_on(&srv, "10.0.0.2", 7472, RDMA_PS_TCP);
	route_to(&cli, "10.0.0.1", "10.0.0.2", 7472, RDMA_PS_TCP);
	cr_assert_eq(rdma_connect(cli.id, &cp), 0);
	ev = expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_eq(rdma_reject(ev->id, "no", 3), 0, "%s", strerror(errno));
	struct rdma_cm_id *child = ev->id;

	rdma_ack_cm_event(ev);
	ev = expect(cli.ch, RDMA_CM_EVENT_REJECTED);
	cr_assert_eq(ev->status, 28, "consumer defined: %d", ev->status);
	cr_assert_geq(ev->param.conn.private_data_len, 3);
	cr_assert_str_eq(ev->param.conn.private_data, "no", "REJ's private data");
	rdma_ack_cm_event(ev);
	rdma_destroy_id(child);
	close_side(&cli);
	close_side(&srv);
}

Test(rdmacm_connect, second_listener_in_use, .timeout = 60)
{
	struct side a;
	struct rdma_cm_id *b;
	struct sockaddr_storage sa = addr("0.0.0.0", 7473);

	rdmacm_test_env();
	listen_on(&a, "10.0.0.2", 7473, RDMA_PS_TCP);
	cr_assert_eq(rdma_create_id(NULL, &b, NULL, RDMA_PS_TCP), 0);
	errno = 0;
	cr_assert_eq(rdma_bind_addr(b, SA(sa)), -1, "the port is a listener's");
	cr_assert_eq(errno, EADDRINUSE);
	rdma_destroy_id(b);
	close_side(&a);
}

Test(rdmacm_connect, ud_sidr, .timeout = 60)
{
	struct rdma_conn_param cp = {.private_data = "ud?", .private_data_len = 4};
	struct rdma_conn_param ap = {.private_data = "ud!", .private_data_len = 4};
	struct ibv_qp_init_attr a = qp_attr;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *child;
	struct side srv, cli;

	rdmacm_test_env();
	listen_on(&srv, "10.0.0.2", 7474, RDMA_PS_UDP);
	route_to(&cli, "10.0.0.1", "10.0.0.2", 7474, RDMA_PS_UDP);
	cr_assert_eq(rdma_connect(cli.id, &cp), 0, "%s", strerror(errno));
	ev = expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	cr_assert_str_eq(ev->param.ud.private_data, "ud?");
	cr_assert_eq(rdma_create_qp(child, NULL, &a), 0);
	rdma_ack_cm_event(ev);
	cr_assert_eq(rdma_accept(child, &ap), 0, "%s", strerror(errno));
	ev = expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(ev->param.ud.qp_num, child->qp->qp_num, "the peer's UD QPN");
	cr_assert_eq(ev->param.ud.qkey, RDMA_UDP_QKEY, "rdma_cm's Q_Key");
	cr_assert_eq(ev->param.ud.ah_attr.is_global, 1);
	cr_assert_eq(
		memcmp(&ev->param.ud.ah_attr.grh.dgid, &cli.id->route.addr.addr.ibaddr.dgid, 16), 0,
		"the AH reaches the peer");
	cr_assert_str_eq(ev->param.ud.private_data, "ud!");
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(child);
	rdma_destroy_id(child);
	close_side(&cli);
	close_side(&srv);
}

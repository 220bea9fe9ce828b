/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The argument rules libibverbs documents hold in both backends: each rule is
 * written once, in the ibv_* entry point above the embedded and the droced
 * backend (doc/verbs.md), and each is tested here twice, on a device of this
 * process and on a device of droced (an application process forked from the
 * test, DROCE_DAEMON set).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "droce_shared.h"
#include "verbs_harness.h"

#define WHY_LEN 256
#define BUF_LEN 65536u

/* Why a rule failed, written by the process that ran it (shared with the test). */
static char *why;

typedef int (*rule_fn)(struct ibv_context *ctx, struct ibv_pd *pd);

#define EXPECT(cond, ...)                                    \
	do {                                                 \
		if (!(cond)) {                               \
			snprintf(why, WHY_LEN, __VA_ARGS__); \
			return 1;                            \
		}                                            \
	} while (0)

/* ------------------------------------------------------------------ runners */

static void run_embedded(rule_fn fn)
{
	struct ibv_pd *pd;
	struct ibv_context *ctx;

	why = test_shared_mem(WHY_LEN);
	ctx = harness_open(&pd);
	cr_assert_eq(fn(ctx, pd), 0, "embedded: %s", why);
}

static struct test_daemon daemon_;

static int app_main(void *arg)
{
	rule_fn fn = (rule_fn)arg;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list != NULL && list[0] != NULL ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx != NULL ? ibv_alloc_pd(ctx) : NULL;

	EXPECT(pd != NULL, "no PD on droced's device: %s", strerror(errno));
	return fn(ctx, pd);
}

static void run_droced(rule_fn fn)
{
	int rc;

	why = test_shared_mem(WHY_LEN);
	test_daemon_start(&daemon_, NULL);
	rc = test_app_wait(test_app_start(&daemon_, app_main, (void *)fn), 30);
	cr_expect_eq(rc, 0, "droced: %s", why);
	cr_expect_eq(test_daemon_stop(&daemon_), 0, "%s", test_daemon_log(&daemon_));
}

/* One rule, two tests: the same function on each backend. */
#define RULE(name)                                                   \
	static int name(struct ibv_context *ctx, struct ibv_pd *pd); \
	Test(verbs_rules_embedded, name, .timeout = 60)              \
	{                                                            \
		run_embedded(name);                                  \
	}                                                            \
	Test(verbs_rules_droced, name, .timeout = 60)                \
	{                                                            \
		run_droced(name);                                    \
	}                                                            \
	static int name(struct ibv_context *ctx, struct ibv_pd *pd)

/* Memory both backends can register: droced maps it too. */
static void *buffer(void)
{
	return droce_alloc_shared(BUF_LEN, 0);
}

/* --------------------------------------------------------------- MRs, MWs */

RULE(reg_mr_of_no_bytes_is_einval)
{
	void *buf = buffer();

	(void)ctx;
	errno = 0;
	EXPECT(ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE) == NULL, "registered 0 bytes");
	EXPECT(errno == EINVAL, "errno %d, not EINVAL", errno);
	return 0;
}

RULE(reg_mr_remote_write_without_local_write_is_einval)
{
	void *buf = buffer();

	(void)ctx;
	errno = 0;
	EXPECT(ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_REMOTE_WRITE) == NULL,
	       "REMOTE_WRITE without LOCAL_WRITE registered");
	EXPECT(errno == EINVAL, "errno %d, not EINVAL", errno);
	errno = 0;
	EXPECT(ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_REMOTE_ATOMIC) == NULL,
	       "REMOTE_ATOMIC without LOCAL_WRITE registered");
	EXPECT(errno == EINVAL, "errno %d, not EINVAL", errno);
	return 0;
}

RULE(reg_mr_on_demand_is_eopnotsupp)
{
	void *buf = buffer();

	(void)ctx;
	errno = 0;
	EXPECT(ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND) == NULL,
	       "on-demand paging registered");
	EXPECT(errno == EOPNOTSUPP, "errno %d, not EOPNOTSUPP", errno);
	return 0;
}

RULE(rereg_mr_with_an_unknown_flag_is_an_input_error)
{
	void *buf = buffer();
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);

	(void)ctx;
	EXPECT(mr != NULL, "reg_mr: %s", strerror(errno));
	errno = 0;
	EXPECT(ibv_rereg_mr(mr, 0x100, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT,
	       "an unknown flag was taken");
	EXPECT(errno == EINVAL, "errno %d, not EINVAL", errno);
	EXPECT(ibv_dereg_mr(mr) == 0, "the MR is still there to deregister");
	return 0;
}

/* Past rdma-core's front checks a refusal is the command's: ERR_CMD with errno set. */
RULE(rereg_mr_refused_past_the_front_checks_is_a_command_error)
{
	void *buf = buffer();
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	int rc;

	(void)ctx;
	EXPECT(mr != NULL, "reg_mr: %s", strerror(errno));
	errno = 0;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE);
	EXPECT(rc == IBV_REREG_MR_ERR_CMD, "REMOTE_WRITE without LOCAL_WRITE: returned %d", rc);
	EXPECT(errno == EINVAL, "REMOTE_WRITE without LOCAL_WRITE: errno %d, not EINVAL", errno);
	errno = 0;
	rc = ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0);
	EXPECT(rc == IBV_REREG_MR_ERR_CMD, "flags 0: returned %d", rc);
	EXPECT(errno != 0, "flags 0: no errno");
	EXPECT(ibv_dereg_mr(mr) == 0, "the MR is still there to deregister");
	return 0;
}

RULE(alloc_mw_of_an_unknown_type_is_einval)
{
	(void)ctx;
	errno = 0;
	EXPECT(ibv_alloc_mw(pd, (enum ibv_mw_type)7) == NULL, "a window of type 7");
	EXPECT(errno == EINVAL, "errno %d, not EINVAL", errno);
	return 0;
}

RULE(dealloc_pd_with_an_mr_is_ebusy)
{
	void *buf = buffer();
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);

	(void)ctx;
	EXPECT(mr != NULL, "reg_mr: %s", strerror(errno));
	EXPECT(ibv_dealloc_pd(pd) == EBUSY, "the PD of a live MR went");
	EXPECT(ibv_dereg_mr(mr) == 0, "dereg_mr");
	EXPECT(ibv_dealloc_pd(pd) == 0, "the PD goes once the MR went");
	return 0;
}

/* ---------------------------------------------------------- CQs, channels */

RULE(create_cq_out_of_bounds_is_einval)
{
	struct ibv_device_attr a;

	(void)pd;
	EXPECT(ibv_query_device(ctx, &a) == 0, "query_device");
	errno = 0;
	EXPECT(ibv_create_cq(ctx, 0, NULL, NULL, 0) == NULL, "a CQ of 0 entries");
	EXPECT(errno == EINVAL, "cqe 0: errno %d, not EINVAL", errno);
	errno = 0;
	EXPECT(ibv_create_cq(ctx, a.max_cqe + 1, NULL, NULL, 0) == NULL, "a CQ above max_cqe");
	EXPECT(errno == EINVAL, "cqe max + 1: errno %d, not EINVAL", errno);
	errno = 0;
	EXPECT(ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors) == NULL,
	       "a CQ on a completion vector the device has not");
	EXPECT(errno == EINVAL, "comp_vector: errno %d, not EINVAL", errno);
	return 0;
}

RULE(destroy_cq_used_by_a_qp_is_ebusy)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RC, .cap = {1, 1, 1, 1, 0}};
	struct ibv_qp *qp;

	EXPECT(cq != NULL, "create_cq: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	EXPECT(qp != NULL, "create_qp: %s", strerror(errno));
	EXPECT(ibv_destroy_cq(cq) == EBUSY, "the CQ of a live QP went");
	EXPECT(ibv_destroy_qp(qp) == 0, "destroy_qp");
	EXPECT(ibv_destroy_cq(cq) == 0, "the CQ goes once its QP went");
	return 0;
}

RULE(destroy_channel_used_by_a_cq_is_ebusy)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq;

	(void)pd;
	EXPECT(ch != NULL, "create_comp_channel: %s", strerror(errno));
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	EXPECT(cq != NULL, "create_cq: %s", strerror(errno));
	EXPECT(ibv_destroy_comp_channel(ch) == EBUSY, "the channel of a live CQ went");
	EXPECT(ibv_destroy_cq(cq) == 0, "destroy_cq");
	EXPECT(ibv_destroy_comp_channel(ch) == 0, "the channel goes once its CQ went");
	return 0;
}

RULE(get_cq_event_without_an_event_is_eagain_on_a_nonblocking_channel)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq, *got;
	void *cq_ctx;

	(void)pd;
	EXPECT(ch != NULL, "create_comp_channel: %s", strerror(errno));
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	EXPECT(cq != NULL, "create_cq: %s", strerror(errno));
	EXPECT(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0, "O_NONBLOCK");
	errno = 0;
	EXPECT(ibv_get_cq_event(ch, &got, &cq_ctx) == -1, "an event out of nothing");
	EXPECT(errno == EAGAIN, "errno %d, not EAGAIN", errno);
	EXPECT(ibv_destroy_cq(cq) == 0, "destroy_cq");
	EXPECT(ibv_destroy_comp_channel(ch) == 0, "destroy_comp_channel");
	return 0;
}

/* ------------------------------------------------------------------- QPs */

RULE(create_qp_of_an_unknown_type_is_eopnotsupp)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RAW_PACKET, .cap = {1, 1, 1, 1, 0}};

	EXPECT(cq != NULL, "create_cq: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = cq;
	errno = 0;
	EXPECT(ibv_create_qp(pd, &qa) == NULL, "a raw packet QP");
	EXPECT(errno == EOPNOTSUPP, "errno %d, not EOPNOTSUPP", errno);
	return 0;
}

RULE(create_qp_above_the_device_limits_is_einval)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_device_attr a;
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RC, .cap = {1, 1, 1, 1, 0}};

	EXPECT(cq != NULL, "create_cq: %s", strerror(errno));
	EXPECT(ibv_query_device(ctx, &a) == 0, "query_device");
	qa.send_cq = qa.recv_cq = cq;
	qa.cap.max_send_wr = (uint32_t)a.max_qp_wr + 1;
	errno = 0;
	EXPECT(ibv_create_qp(pd, &qa) == NULL, "max_send_wr above max_qp_wr");
	EXPECT(errno == EINVAL, "errno %d, not EINVAL", errno);
	return 0;
}

RULE(modify_qp_from_reset_to_rts_is_einval)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RC, .cap = {1, 1, 1, 1, 0}};
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_RTS};
	struct ibv_qp *qp;

	EXPECT(cq != NULL, "create_cq: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	EXPECT(qp != NULL, "create_qp: %s", strerror(errno));
	EXPECT(ibv_modify_qp(qp, &attr, IBV_QP_STATE) == EINVAL, "RESET -> RTS taken");
	EXPECT(qp->state == IBV_QPS_RESET, "the QP left RESET");
	return 0;
}

/* ------------------------------------------------------------------ SRQs */

RULE(create_srq_of_no_wr_is_einval)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 0, .max_sge = 1}};

	(void)ctx;
	errno = 0;
	EXPECT(ibv_create_srq(pd, &sa) == NULL, "an SRQ of 0 WRs");
	EXPECT(errno == EINVAL, "errno %d, not EINVAL", errno);
	return 0;
}

RULE(modify_srq_limit_above_max_wr_is_einval)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_srq_attr a = {.srq_limit = sa.attr.max_wr + 1};

	(void)ctx;
	EXPECT(srq != NULL, "create_srq: %s", strerror(errno));
	EXPECT(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT) == EINVAL, "a limit above max_wr");
	EXPECT(ibv_destroy_srq(srq) == 0, "destroy_srq");
	return 0;
}

RULE(destroy_srq_used_by_a_qp_is_ebusy)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RC, .cap = {1, 0, 1, 0, 0}};
	struct ibv_qp *qp;

	EXPECT(srq != NULL && cq != NULL, "create_srq/cq: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = cq;
	qa.srq = srq;
	qp = ibv_create_qp(pd, &qa);
	EXPECT(qp != NULL, "create_qp: %s", strerror(errno));
	EXPECT(ibv_destroy_srq(srq) == EBUSY, "the SRQ of a live QP went");
	EXPECT(ibv_destroy_qp(qp) == 0, "destroy_qp");
	EXPECT(ibv_destroy_srq(srq) == 0, "the SRQ goes once its QP went");
	return 0;
}

/* ------------------------------------------------ AHs, ports, neighbours */

RULE(create_ah_without_a_grh_is_einval)
{
	struct ibv_ah_attr a = {.port_num = 1, .is_global = 0};

	(void)ctx;
	errno = 0;
	EXPECT(ibv_create_ah(pd, &a) == NULL, "a RoCE AH without a GRH");
	EXPECT(errno == EINVAL, "errno %d, not EINVAL", errno);
	return 0;
}

RULE(query_port_of_no_such_port_is_einval)
{
	struct ibv_port_attr a;

	(void)pd;
	EXPECT(ibv_query_port(ctx, 2, &a) == EINVAL, "port 2 of a one-port device");
	return 0;
}

/* rdma-core returns the negative errno value from this one call */
RULE(resolve_l2_without_a_grh_or_port_is_minus_einval)
{
	struct ibv_ah_attr a = {.port_num = 1, .is_global = 1};
	uint8_t mac[6];
	uint16_t vid;

	(void)pd;
	EXPECT(ibv_query_gid(ctx, 1, 0, &a.grh.dgid) == 0, "query_gid");
	a.port_num = 2;
	EXPECT(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid) == -EINVAL, "port 2");
	a.port_num = 1;
	a.is_global = 0;
	EXPECT(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid) == -EINVAL, "no GRH");
	a.is_global = 1;
	a.grh.sgid_index = 200;
	EXPECT(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid) == -EINVAL, "no such source GID");
	return 0;
}

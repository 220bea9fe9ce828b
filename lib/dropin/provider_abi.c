/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The provider interface of rdma-core 44 (version IBVERBS_PRIVATE_34) as far as
 * Debian's provider libraries import it. perftest links libmlx5 and libefa
 * directly and every binary is built with BIND_NOW, so these symbols must exist
 * for such binaries to start on the drop-in library at all. droce loads no
 * kernel provider: a provider's registration is accepted and ignored (droce
 * lists only its own devices), and nothing reaches the command helpers, which
 * fail with EOPNOTSUPP if ever called. Their real prototypes live in
 * rdma-core's uninstalled driver.h; none is called with droce devices, so they
 * are declared here without parameters.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/* rdma-core exports this flag for providers: disassociated devices may be destroyed. */
bool verbs_allow_disassociate_destroy;

#define PROVIDER_ABI_FAIL(name)    \
	int name(void);            \
	int name(void)             \
	{                          \
		return EOPNOTSUPP; \
	}

#define PROVIDER_ABI_NULL(name)     \
	void *name(void);           \
	void *name(void)            \
	{                           \
		errno = EOPNOTSUPP; \
		return NULL;        \
	}

#define PROVIDER_ABI_IGNORE(name) \
	void name(void);          \
	void name(void) {}

/* Registration (each provider library's constructor calls it) and logging: ignored. */
PROVIDER_ABI_IGNORE(__verbs_log)
PROVIDER_ABI_IGNORE(verbs_init_cq)
PROVIDER_ABI_IGNORE(verbs_register_driver_34)
PROVIDER_ABI_IGNORE(verbs_set_ops)
PROVIDER_ABI_IGNORE(verbs_uninit_context)

/* Kernel command helpers and context setup for providers: unreachable with droce. */
PROVIDER_ABI_NULL(_verbs_init_and_alloc_context)
PROVIDER_ABI_FAIL(execute_ioctl)
PROVIDER_ABI_FAIL(ibv_cmd_advise_mr)
PROVIDER_ABI_FAIL(ibv_cmd_alloc_dm)
PROVIDER_ABI_FAIL(ibv_cmd_alloc_mw)
PROVIDER_ABI_FAIL(ibv_cmd_alloc_pd)
PROVIDER_ABI_FAIL(ibv_cmd_attach_mcast)
PROVIDER_ABI_FAIL(ibv_cmd_close_xrcd)
PROVIDER_ABI_FAIL(ibv_cmd_create_ah)
PROVIDER_ABI_FAIL(ibv_cmd_create_counters)
PROVIDER_ABI_FAIL(ibv_cmd_create_cq)
PROVIDER_ABI_FAIL(ibv_cmd_create_cq_ex)
PROVIDER_ABI_FAIL(ibv_cmd_create_flow)
PROVIDER_ABI_FAIL(ibv_cmd_create_flow_action_esp)
PROVIDER_ABI_FAIL(ibv_cmd_create_qp_ex)
PROVIDER_ABI_FAIL(ibv_cmd_create_qp_ex2)
PROVIDER_ABI_FAIL(ibv_cmd_create_rwq_ind_table)
PROVIDER_ABI_FAIL(ibv_cmd_create_srq)
PROVIDER_ABI_FAIL(ibv_cmd_create_srq_ex)
PROVIDER_ABI_FAIL(ibv_cmd_create_wq)
PROVIDER_ABI_FAIL(ibv_cmd_dealloc_mw)
PROVIDER_ABI_FAIL(ibv_cmd_dealloc_pd)
PROVIDER_ABI_FAIL(ibv_cmd_dereg_mr)
PROVIDER_ABI_FAIL(ibv_cmd_destroy_ah)
PROVIDER_ABI_FAIL(ibv_cmd_destroy_counters)
PROVIDER_ABI_FAIL(ibv_cmd_destroy_cq)
PROVIDER_ABI_FAIL(ibv_cmd_destroy_flow)
PROVIDER_ABI_FAIL(ibv_cmd_destroy_flow_action)
PROVIDER_ABI_FAIL(ibv_cmd_destroy_qp)
PROVIDER_ABI_FAIL(ibv_cmd_destroy_rwq_ind_table)
PROVIDER_ABI_FAIL(ibv_cmd_destroy_srq)
PROVIDER_ABI_FAIL(ibv_cmd_destroy_wq)
PROVIDER_ABI_FAIL(ibv_cmd_detach_mcast)
PROVIDER_ABI_FAIL(ibv_cmd_free_dm)
PROVIDER_ABI_FAIL(ibv_cmd_get_context)
PROVIDER_ABI_FAIL(ibv_cmd_modify_cq)
PROVIDER_ABI_FAIL(ibv_cmd_modify_flow_action_esp)
PROVIDER_ABI_FAIL(ibv_cmd_modify_qp)
PROVIDER_ABI_FAIL(ibv_cmd_modify_qp_ex)
PROVIDER_ABI_FAIL(ibv_cmd_modify_srq)
PROVIDER_ABI_FAIL(ibv_cmd_modify_wq)
PROVIDER_ABI_FAIL(ibv_cmd_open_qp)
PROVIDER_ABI_FAIL(ibv_cmd_open_xrcd)
PROVIDER_ABI_FAIL(ibv_cmd_query_context)
PROVIDER_ABI_FAIL(ibv_cmd_query_device_any)
PROVIDER_ABI_FAIL(ibv_cmd_query_mr)
PROVIDER_ABI_FAIL(ibv_cmd_query_port)
PROVIDER_ABI_FAIL(ibv_cmd_query_qp)
PROVIDER_ABI_FAIL(ibv_cmd_query_srq)
PROVIDER_ABI_FAIL(ibv_cmd_read_counters)
PROVIDER_ABI_FAIL(ibv_cmd_reg_dm_mr)
PROVIDER_ABI_FAIL(ibv_cmd_reg_dmabuf_mr)
PROVIDER_ABI_FAIL(ibv_cmd_reg_mr)
PROVIDER_ABI_FAIL(ibv_cmd_rereg_mr)
PROVIDER_ABI_FAIL(ibv_cmd_resize_cq)
PROVIDER_ABI_FAIL(verbs_open_device)

/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The libibverbs functions droce exports whose prototypes rdma-core 44 keeps in
 * headers it does not install (Debian's libibverbs-dev ships verbs.h, sa.h and
 * <rdma/ib_user_*.h>, not these): the provider interface and the sysfs helpers
 * of rdma-core 44's libibverbs/driver.h, the execute_ioctl() of its cmd_ioctl.h,
 * the kernel-structure copies of its marshall.h and the flag of its cmd_write.h.
 * The prototypes are rdma-core 44's, type for type: every droce file that
 * defines one of these functions sees this header (lib/verbs and lib/dropin
 * force-include it), so a definition whose type differs from libibverbs' does
 * not compile. tests/unit/test_verbs_abi.c checks the prototypes themselves.
 *
 * The kernel command structures and the provider structures appear only
 * behind pointers: droce declares their tags, never their layout.
 */
#ifndef DROCE_IBVERBS_ABI_H
#define DROCE_IBVERBS_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* kernel command structures (rdma-core 44's kern-abi.h) */
struct ibv_alloc_mw;
struct ibv_alloc_pd;
struct ibv_create_cq;
struct ibv_create_cq_ex;
struct ibv_create_qp;
struct ibv_create_qp_ex;
struct ibv_create_srq;
struct ibv_create_wq;
struct ibv_create_xsrq;
struct ibv_get_context;
struct ibv_modify_cq;
struct ibv_modify_qp;
struct ibv_modify_qp_ex;
struct ibv_modify_srq;
struct ibv_modify_wq;
struct ibv_open_qp;
struct ibv_open_xrcd;
struct ibv_query_port;
struct ibv_query_qp;
struct ibv_query_srq;
struct ibv_reg_mr;
struct ibv_rereg_mr;
struct ibv_resize_cq;

/* provider structures (rdma-core 44's driver.h and cmd_ioctl.h) */
struct ibv_command_buffer;
struct verbs_context;
struct verbs_context_ops;
struct verbs_counters;
struct verbs_cq;
struct verbs_device_ops;
struct verbs_dm;
struct verbs_flow_action;
struct verbs_mr;
struct verbs_qp;
struct verbs_srq;
struct verbs_xrcd;

/* driver.h: how a provider library registers and builds its contexts */
void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id);
void verbs_register_driver_34(const struct verbs_device_ops *ops);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context, struct ibv_comp_channel *channel,
		   void *cq_context);
struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data);

/* cmd_ioctl.h and cmd_write.h */
int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd);
extern bool verbs_allow_disassociate_destroy;

/* driver.h: the kernel command helpers providers call */
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		      struct ibv_sge *sg_list, uint32_t num_sge);
int ibv_cmd_alloc_dm(struct ibv_context *ctx, const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type, struct ibv_mw *mw,
		     struct ibv_alloc_mw *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_create_counters(struct ibv_context *context, struct ibv_counters_init_attr *init_attr,
			    struct verbs_counters *vcounters, struct ibv_command_buffer *link);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		      int comp_vector, struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp, size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context, const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags);
int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd, size_t ucmd_size);
int ibv_cmd_create_flow_action_esp(struct ibv_context *ctx, struct ibv_flow_action_esp_attr *attr,
				   struct verbs_flow_action *flow_action,
				   struct ibv_command_buffer *driver);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex, struct ibv_create_qp *cmd,
			 size_t cmd_size, struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd,
			  size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex, struct ibv_create_xsrq *cmd,
			  size_t cmd_size, struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr,
		      struct ibv_wq *wq, struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
int ibv_cmd_destroy_counters(struct verbs_counters *vcounters);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_destroy_flow(struct ibv_flow *flow_id);
int ibv_cmd_destroy_flow_action(struct verbs_flow_action *action);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_destroy_wq(struct ibv_wq *wq);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int ibv_cmd_free_dm(struct verbs_dm *dm);
int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp, size_t resp_size);
int ibv_cmd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr, struct ibv_modify_cq *cmd,
		      size_t cmd_size);
int ibv_cmd_modify_flow_action_esp(struct verbs_flow_action *flow_action,
				   struct ibv_flow_action_esp_attr *attr,
				   struct ibv_command_buffer *driver);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp_ex(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			 struct ibv_modify_qp_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_modify_qp_resp *resp, size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask,
		       struct ibv_modify_srq *cmd, size_t cmd_size);
int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr, struct ibv_modify_wq *cmd,
		      size_t cmd_size);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp, int vqp_sz,
		    struct ibv_qp_open_attr *attr, struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd, int vxrcd_size,
		      struct ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_query_context(struct ibv_context *ctx, struct ibv_command_buffer *driver);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size);
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr, uint32_t mr_handle);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, struct ibv_query_port *cmd,
		       size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr, int attr_mask,
		     struct ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd,
		     size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, struct ibv_query_srq *cmd,
		      size_t cmd_size);
int ibv_cmd_read_counters(struct verbs_counters *vcounters, uint64_t *counters_value,
			  uint32_t ncounters, uint32_t flags, struct ibv_command_buffer *link);
int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm, uint64_t offset, size_t length,
		      unsigned int access, struct verbs_mr *vmr, struct ibv_command_buffer *link);
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
			  int access, struct verbs_mr *vmr);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
		   struct verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr, size_t length,
		     uint64_t hca_va, int access, struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp, size_t resp_sz);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);

/* driver.h: what ibv_fork_init() would madvise (nothing with droce) */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

/* driver.h: the sysfs helpers (librdmacm calls the first two at start-up) */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};

const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type);

/* marshall.h: kernel structures to and from the verbs ones */
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_IBVERBS_ABI_H */

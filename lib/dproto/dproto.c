/* SPDX-License-Identifier: BSD-3-Clause */
/* droced's control-socket protocol: body sizes per operation and datagram framing. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "droce_dproto.h"

/* Body sizes of each operation's request and reply: the receiver accepts nothing else. */
static const struct {
	const char *name;
	size_t req, rep;
} op_table[DPROTO_OP_COUNT] = {
	[DPROTO_HELLO] = {"HELLO", sizeof(struct droce_dproto_hello_req),
			  sizeof(struct droce_dproto_hello_rep)},
	[DPROTO_OPEN] = {"OPEN", sizeof(struct droce_dproto_open_req),
			 sizeof(struct droce_dproto_open_rep)},
	[DPROTO_QUERY_PORT] = {"QUERY_PORT", 0, sizeof(struct droce_dproto_port_rep)},
	[DPROTO_ALLOC_PD] = {"ALLOC_PD", 0, 0},
	[DPROTO_DEALLOC_PD] = {"DEALLOC_PD", 0, 0},
	[DPROTO_REG_MR] = {"REG_MR", sizeof(struct droce_dproto_reg_mr_req),
			   sizeof(struct droce_dproto_reg_mr_rep)},
	[DPROTO_DEREG_MR] = {"DEREG_MR", 0, 0},
	[DPROTO_ALLOC_MW] = {"ALLOC_MW", sizeof(struct droce_dproto_alloc_mw_req),
			     sizeof(struct droce_dproto_alloc_mw_rep)},
	[DPROTO_DEALLOC_MW] = {"DEALLOC_MW", 0, 0},
	[DPROTO_CREATE_CHANNEL] = {"CREATE_CHANNEL", 0, 0},
	[DPROTO_DESTROY_CHANNEL] = {"DESTROY_CHANNEL", 0, 0},
	[DPROTO_CREATE_CQ] = {"CREATE_CQ", sizeof(struct droce_dproto_create_cq_req),
			      sizeof(struct droce_dproto_create_cq_rep)},
	[DPROTO_DESTROY_CQ] = {"DESTROY_CQ", 0, 0},
	[DPROTO_CREATE_SRQ] = {"CREATE_SRQ", sizeof(struct droce_dproto_create_srq_req),
			       sizeof(struct droce_dproto_create_srq_rep)},
	[DPROTO_DESTROY_SRQ] = {"DESTROY_SRQ", 0, 0},
	[DPROTO_CREATE_QP] = {"CREATE_QP", sizeof(struct droce_dproto_create_qp_req),
			      sizeof(struct droce_dproto_create_qp_rep)},
	[DPROTO_MODIFY_QP] = {"MODIFY_QP", sizeof(struct droce_dproto_modify_qp_req), 0},
	[DPROTO_DESTROY_QP] = {"DESTROY_QP", 0, 0},
	[DPROTO_CREATE_AH] = {"CREATE_AH", sizeof(struct droce_dproto_create_ah_req),
			      sizeof(struct droce_dproto_create_ah_rep)},
	[DPROTO_DESTROY_AH] = {"DESTROY_AH", 0, 0},
	[DPROTO_RESOLVE_L2] = {"RESOLVE_L2", sizeof(struct droce_dproto_resolve_req),
			       sizeof(struct droce_dproto_resolve_rep)},
	[DPROTO_REREG_MR] = {"REREG_MR", sizeof(struct droce_dproto_rereg_mr_req),
			     sizeof(struct droce_dproto_reg_mr_rep)},
};

enum droce_dproto_element droce_dproto_event_element(enum ibv_event_type type)
{
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		return DPROTO_ELEMENT_CQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return DPROTO_ELEMENT_QP;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return DPROTO_ELEMENT_SRQ;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		return DPROTO_ELEMENT_PORT;
	case IBV_EVENT_DEVICE_FATAL:
		return DPROTO_ELEMENT_DEVICE;
	default:
		return DPROTO_ELEMENT_NONE;
	}
}

ssize_t droce_dproto_body_size(uint32_t op, bool reply)
{
	if (op == 0 || op >= DPROTO_OP_COUNT)
		return -1;
	return (ssize_t)(reply ? op_table[op].rep : op_table[op].req);
}

int droce_dproto_memfd(const char *name, size_t len, unsigned int mfd_flags, size_t *len_out)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | mfd_flags), err;
	size_t block = 4096;
	struct stat st;

	if (fd < 0)
		return -errno;
	/* hugetlbfs reports its hugepage size as the block */
	if (fstat(fd, &st) == 0 && st.st_blksize > 0)
		block = (size_t)st.st_blksize;
	len = (len + block - 1) / block * block;
	if (ftruncate(fd, (off_t)len) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		err = errno;
		close(fd);
		return -err;
	}
	if (len_out != NULL)
		*len_out = len;
	return fd;
}

const char *droce_dproto_op_name(uint32_t op)
{
	return op > 0 && op < DPROTO_OP_COUNT ? op_table[op].name : "?";
}

int droce_dproto_send(int sock, const struct droce_dproto_hdr *hdr, const void *body, size_t len,
		      const int *fds, unsigned int nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * DROCE_DPROTO_FDS_MAX)];
	} ctl;
	struct iovec iov[2] = {{(void *)hdr, sizeof(*hdr)}, {(void *)body, len}};
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1};
	ssize_t n;

	if (nfds > DROCE_DPROTO_FDS_MAX)
		return -EINVAL;
	if (nfds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do {
		/* MSG_NOSIGNAL: a peer that went away is an error, not a SIGPIPE */
		n = sendmsg(sock, &m, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == sizeof(*hdr) + len ? 0 : -EMSGSIZE;
}

/* Close the descriptors a rejected message brought. */
static void close_fds(const int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		close(fds[i]);
}

ssize_t droce_dproto_recv(int sock, struct droce_dproto_hdr *hdr, void *body, size_t cap, int *fds,
			  unsigned int *nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * DROCE_DPROTO_FDS_MAX)];
	} ctl;
	struct iovec iov[2] = {{hdr, sizeof(*hdr)}, {body, cap}};
	struct msghdr m = {.msg_iov = iov,
			   .msg_iovlen = 2,
			   .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf)};
	unsigned int room = *nfds, got = 0;
	int got_fds[DROCE_DPROTO_FDS_MAX];
	ssize_t n;

	*nfds = 0;
	do {
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (got < DROCE_DPROTO_FDS_MAX)
				got_fds[got++] = fd;
			else
				close(fd);
		}
	}
	if (n == 0) {
		close_fds(got_fds, got);
		return -ECONNRESET; /* SOCK_SEQPACKET: a 0-byte read is the peer's close */
	}
	if ((m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t)n < sizeof(*hdr) || got > room) {
		close_fds(got_fds, got);
		return -EMSGSIZE;
	}
	memcpy(fds, got_fds, got * sizeof(int));
	*nfds = got;
	return n - (ssize_t)sizeof(*hdr);
}

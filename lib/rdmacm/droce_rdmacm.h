/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droce's librdmacm: the rdma_cm API of <rdma/rdma_cma.h> over droce's devices and its
 * connection manager (lib/cm). Programs call the API itself (the drop-in librdmacm.so.1
 * exports it with rdma-core 44's symbol versions); this header names what droce adds.
 *
 * Errors: 0 or -errno.
 */
#ifndef DROCE_RDMACM_H
#define DROCE_RDMACM_H

#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The device and GID an id uses to reach @p dst from @p src (doc/rdmacm.md):
 * - @p src an address (not the wildcard): the device whose GID table holds it;
 * - else the GID of @p dst's family (IPv4-mapped for AF_INET) sharing the longest prefix with
 *   @p dst, over every droce device in the order of ibv_get_device_list() and every GID index
 *   from 0 (the first wins a tie).
 * Returns 0 with *@p verbs (a device rdma_get_devices() opened) and *@p gid_index; -ENODEV
 * when no device has such a GID, -EAFNOSUPPORT for a family other than AF_INET/AF_INET6,
 * -EINVAL for a NULL argument.
 */
int droce_rdmacm_choose_gid(const struct sockaddr *src, const struct sockaddr *dst,
			    struct ibv_context **verbs, uint8_t *gid_index);

/** Bits two 16-byte addresses share from the first (0..128). */
unsigned int droce_rdmacm_prefix_len(const uint8_t a[16], const uint8_t b[16]);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_RDMACM_H */

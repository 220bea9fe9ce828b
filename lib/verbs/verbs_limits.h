/* SPDX-License-Identifier: BSD-3-Clause */
/* The limits droce's devices report (ibv_query_device) and enforce. */
#ifndef DROCE_VERBS_LIMITS_H
#define DROCE_VERBS_LIMITS_H

#define DROCE_MAX_QP          16384
#define DROCE_MAX_QP_WR       16384
#define DROCE_MAX_SGE         32
#define DROCE_MAX_SGE_RD      32
#define DROCE_MAX_INLINE      512
#define DROCE_MAX_CQ          16384
#define DROCE_MAX_CQE         (1 << 20)
#define DROCE_MAX_MR          (1 << 20)
#define DROCE_MAX_MW          (1 << 16)
#define DROCE_MAX_PD          (1 << 16)
#define DROCE_MAX_AH          (1 << 16)
#define DROCE_MAX_SRQ         4096
#define DROCE_MAX_SRQ_WR      16384
#define DROCE_MAX_SRQ_SGE     32
#define DROCE_MAX_RD_ATOMIC   128
#define DROCE_MAX_MSG_SZ      0x80000000u /* 2^31 bytes (IBTA 9.4) */
#define DROCE_MAX_MR_SIZE     (~0ull)
#define DROCE_PKEY_TABLE_LEN  1
#define DROCE_VENDOR_ID       0xffffff /* no IEEE OUI of its own */
#define DROCE_VENDOR_PART_ID  0x0d0c
#define DROCE_LOCAL_ACK_DELAY 15

#endif /* DROCE_VERBS_LIMITS_H */

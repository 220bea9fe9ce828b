/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Timer encodings carried in QP attributes and on the wire.
 */
#ifndef DROCE_WIRE_TIMER_H
#define DROCE_WIRE_TIMER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Number of RNR NAK timer codes (5-bit field of the AETH). */
#define DROCE_RNR_TIMER_CODES 32

/** Microseconds a requester waits after an RNR NAK carrying each code (IBTA 9.7.5.2). */
extern const uint32_t droce_rnr_timer_usec[DROCE_RNR_TIMER_CODES];

static inline uint32_t droce_rnr_timer_to_usec(uint8_t code)
{
	return droce_rnr_timer_usec[code & (DROCE_RNR_TIMER_CODES - 1)];
}

/**
 * Local ACK timeout in nanoseconds for the 5-bit QP attribute @p timeout:
 * 4.096 us * 2^timeout (IBTA 9.7, Local ACK Timeout); 0 means infinite and returns 0.
 */
static inline uint64_t droce_ack_timeout_ns(uint8_t timeout)
{
	timeout &= 0x1f;
	if (timeout == 0)
		return 0;
	return 4096ull << timeout;
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_TIMER_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * lib/wire: RoCEv2 packets byte for byte. Knows bytes only: no state, no I/O.
 */
#ifndef DROCE_WIRE_H
#define DROCE_WIRE_H

#include "droce_wire_hdr.h"
#include "droce_wire_icrc.h"
#include "droce_wire_mad.h"
#include "droce_wire_opcode.h"
#include "droce_wire_pkt.h"
#include "droce_wire_timer.h"

#endif /* DROCE_WIRE_H */

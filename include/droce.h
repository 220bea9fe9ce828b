/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droce umbrella header: everything an application needs.
 */
#ifndef DROCE_H
#define DROCE_H

#include "droce_wire.h"
#include "droce_mr.h"
#include "droce_ring.h"
#include "droce_wqe.h"
#include "droce_cm_service.h"

#endif /* DROCE_H */

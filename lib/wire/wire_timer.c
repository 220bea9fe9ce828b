/* SPDX-License-Identifier: BSD-3-Clause */
#include "droce_wire_timer.h"

/* Code 0 is the longest wait, 655.36 ms; codes 1..31 grow roughly by 1.5x. */
const uint32_t droce_rnr_timer_usec[DROCE_RNR_TIMER_CODES] = {
	655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,    320,
	480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240,  15360,
	20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

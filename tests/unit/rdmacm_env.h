/* SPDX-License-Identifier: BSD-3-Clause */
/* The devices of the rdmacm tests: two on one ring link, IPv4 and IPv6 each. */
#ifndef RDMACM_ENV_H
#define RDMACM_ENV_H

#include <stdlib.h>

#define RDMACM_TEST_DEVICES                                            \
	"droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,ip=fd00::1,link=l0 " \
	"droce1:mac=02:00:00:00:00:02,ip=10.0.0.2,ip=10.1.0.2,ip=fd01::2,link=l0"

/* before the first librdmacm or verbs call: the engine starts with these devices */
static inline void rdmacm_test_env(void)
{
	setenv("DROCE_DEVICES", RDMACM_TEST_DEVICES, 1);
	setenv("DROCE_NO_HUGE", "1", 1);
}

#endif /* RDMACM_ENV_H */

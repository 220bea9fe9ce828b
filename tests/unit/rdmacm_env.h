/* SPDX-License-Identifier: BSD-3-Clause */
/* The devices of the rdmacm tests: two on one ring link, IPv4 and IPv6 each. */
#ifndef RDMACM_ENV_H
#define RDMACM_ENV_H

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define RDMACM_TEST_DEVICES                                            \
	"droce0:mac=02:00:00:00:00:01,ip=10.0.0.1,ip=fd00::1,link=l0 " \
	"droce1:mac=02:00:00:00:00:02,ip=10.0.0.2,ip=10.1.0.2,ip=fd01::2,link=l0"

/* before the first librdmacm or verbs call: the engine starts with these devices */
static inline void rdmacm_test_env(void)
{
	setenv("DROCE_DEVICES", RDMACM_TEST_DEVICES, 1);
	setenv("DROCE_NO_HUGE", "1", 1);
}

/* The socket address of @p a (IPv6 when it holds a ':') and @p port. */
static inline struct sockaddr_storage addr(const char *a, uint16_t port)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (strchr(a, ':') != NULL) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		cr_assert_eq(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		cr_assert_eq(inet_pton(AF_INET, a, &s->sin_addr), 1);
	}
	return ss;
}

#define SA(ss) ((struct sockaddr *)&(ss))

#endif /* RDMACM_ENV_H */

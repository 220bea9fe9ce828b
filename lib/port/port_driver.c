/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What droce knows of DPDK drivers by name: which copy frames in software,
 * which may have to wait for a peer. The rest of droce asks these questions of
 * a port and never names a driver.
 */
#include <stdbool.h>
#include <string.h>

#include <rte_ethdev.h>

#include "droce_port.h"

/* drivers whose TX copies every frame in software, so the IOVA of an
 * external buffer is never used and the mbuf is freed at once or by droce */
static const char *const software_copy_drivers[] = {
	"net_memif", "net_ring", "net_af_packet", "net_tap", "net_vhost",
};

bool droce_port_driver_copies_in_software(const struct droce_port *p)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(p->port_id, &info) != 0 || info.driver_name == NULL)
		return false;
	for (size_t i = 0; i < RTE_DIM(software_copy_drivers); i++)
		if (strcmp(info.driver_name, software_copy_drivers[i]) == 0)
			return true;
	return false;
}

bool droce_port_devargs_waits_for_peer(const char *devargs)
{
	/* a memif client fails to start while its server's socket does not exist */
	return strstr(devargs, "net_memif") != NULL && strstr(devargs, "role=client") != NULL;
}

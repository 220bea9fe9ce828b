/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device list of an embedded droce: which ports exist, their MAC, MTU and
 * addresses. doc/verbs.md documents the syntax; DROCE_DEVICES carries it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_wire_hdr.h"
#include "verbs_priv.h"

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	if (mac[0] & 1)
		return -EINVAL; /* multicast MACs cannot be a port's address */
	return 0;
}

static int parse_ip(struct droce_port_cfg *p, const char *s)
{
	uint8_t a[16];

	if (inet_pton(AF_INET, s, a) == 1) {
		if (p->n_ipv4 == DROCE_PORT_ADDR_MAX)
			return -ENOSPC;
		memcpy(p->ipv4[p->n_ipv4++], a, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, a) == 1) {
		if (p->n_ipv6 == DROCE_PORT_ADDR_MAX)
			return -ENOSPC;
		memcpy(p->ipv6[p->n_ipv6++], a, 16);
		return 0;
	}
	return -EINVAL;
}

/* neigh=IP@MAC: a static neighbour entry (IPv4 kept IPv4-mapped, as the GIDs are). */
static int parse_neigh(struct droce_port_cfg *p, const char *s)
{
	struct droce_engine_neigh *n;
	char ip[INET6_ADDRSTRLEN];
	const char *at = strchr(s, '@');
	uint8_t a[4];

	if (at == NULL || (size_t)(at - s) >= sizeof(ip))
		return -EINVAL;
	if (p->n_neigh == DROCE_ENGINE_NEIGH_MAX)
		return -ENOSPC;
	memcpy(ip, s, (size_t)(at - s));
	ip[at - s] = '\0';
	n = &p->neigh[p->n_neigh];
	if (inet_pton(AF_INET, ip, a) == 1)
		droce_ipv4_mapped(a, n->ip);
	else if (inet_pton(AF_INET6, ip, n->ip) != 1)
		return -EINVAL;
	if (parse_mac(at + 1, n->mac) != 0 || (n->mac[0] & 1) != 0) /* a unicast MAC */
		return -EINVAL;
	p->n_neigh++;
	return 0;
}

static int parse_kv(struct droce_port_cfg *p, char *kv, char *err, size_t errlen)
{
	char *val = strchr(kv, '=');
	int rc;

	if (val == NULL) {
		snprintf(err, errlen, "%s: '%s' is not key=value", p->name, kv);
		return -EINVAL;
	}
	*val++ = '\0';
	if (strcmp(kv, "mac") == 0)
		rc = parse_mac(val, p->mac);
	else if (strcmp(kv, "ip") == 0)
		rc = parse_ip(p, val);
	else if (strcmp(kv, "capture") == 0)
		rc = val[0] != '\0' && (size_t)snprintf(p->capture, sizeof(p->capture), "%s", val) <
					       sizeof(p->capture)
			     ? 0
			     : -EINVAL;
	else if (strcmp(kv, "neigh") == 0)
		rc = parse_neigh(p, val);
	else if (strcmp(kv, "mtu") == 0)
		rc = droce_engine_parse_u32(val, 576, 9216, &p->eth_mtu);
	else if (strcmp(kv, "speed") == 0)
		rc = droce_engine_parse_u32(val, 0, 800000, &p->speed_mbps);
	else if (strcmp(kv, "window") == 0) {
		/* PSNs in flight: at least two AckReq periods, at most half the PSN space */
		if (strcmp(val, "none") == 0) {
			p->window = UINT32_MAX;
			rc = 0;
		} else {
			rc = droce_engine_parse_u32(val, DROCE_ENGINE_WINDOW_MIN, 1u << 22,
						    &p->window);
		}
	} else if (strcmp(kv, "zero_copy") == 0) {
		/* auto: where the port's device copies in software and injects no faults */
		rc = strcmp(val, "off") == 0 || strcmp(val, "auto") == 0 ? 0 : -EINVAL;
		p->zero_copy_auto = strcmp(val, "auto") == 0;
	} else if (strcmp(kv, "zero_copy_min") == 0) {
		/* payload bytes per packet from which zero copy is used */
		rc = droce_engine_parse_u32(val, 1, 65536, &p->zero_copy_min);
	} else if (strcmp(kv, "vdev") == 0) {
		rc = (size_t)snprintf(p->vdev, sizeof(p->vdev), "%s", val) < sizeof(p->vdev)
			     ? 0
			     : -EINVAL;
		/* devargs separate their keys with ',' like this list does: written as '+' */
		for (char *c = p->vdev; *c != '\0'; c++)
			if (*c == '+')
				*c = ',';
	} else if (strcmp(kv, "fault") == 0) {
		rc = strlen(val) < 256 ? droce_engine_fault_parse(val, &p->fault) : -EINVAL;
	} else if (strcmp(kv, "link") == 0) {
		rc = val[0] != '\0' && (size_t)snprintf(p->link, sizeof(p->link), "%s", val) <
					       sizeof(p->link)
			     ? 0
			     : -EINVAL;
	} else {
		snprintf(err, errlen, "%s: unknown key '%s'", p->name, kv);
		return -EINVAL;
	}
	if (rc != 0)
		snprintf(err, errlen, "%s: bad %s '%s'%s", p->name, kv, val,
			 rc == -ENOSPC ? " (too many addresses)" : "");
	return rc == -ENOSPC ? -EINVAL : rc;
}

static int parse_device(struct droce_port_cfg *p, char *spec, char *err, size_t errlen)
{
	char *colon = strchr(spec, ':');
	char *kv, *save = NULL;

	memset(p, 0, sizeof(*p));
	p->eth_mtu = 1500;
	if (colon != NULL)
		*colon = '\0';
	if (spec[0] == '\0' || strlen(spec) >= sizeof(p->name) ||
	    strspn(spec, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(spec)) {
		snprintf(err, errlen, "bad device name '%s'", spec);
		return -EINVAL;
	}
	strcpy(p->name, spec);
	if (colon == NULL)
		return 0;
	for (kv = strtok_r(colon + 1, ",", &save); kv != NULL; kv = strtok_r(NULL, ",", &save)) {
		int rc = parse_kv(p, kv, err, errlen);

		if (rc != 0)
			return rc;
	}
	return 0;
}

int droce_config_parse(const char *text, struct droce_port_cfg *ports, int max, char *err,
		       size_t errlen)
{
	char *copy = strdup(text), *spec, *save = NULL;
	int n = 0, rc = 0;

	if (copy == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (spec = strtok_r(copy, " \t\n;", &save); spec != NULL;
	     spec = strtok_r(NULL, " \t\n;", &save)) {
		if (n == max) {
			snprintf(err, errlen, "more than %d devices", max);
			rc = -EINVAL;
			break;
		}
		rc = parse_device(&ports[n], spec, err, errlen);
		if (rc != 0)
			break;
		for (int i = 0; i < n; i++) {
			if (strcmp(ports[i].name, ports[n].name) == 0) {
				snprintf(err, errlen, "device %s named twice", ports[n].name);
				rc = -EINVAL;
			}
		}
		if (rc != 0)
			break;
		n++;
	}
	free(copy);
	return rc != 0 ? rc : n;
}

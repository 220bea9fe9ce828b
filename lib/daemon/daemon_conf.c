/* SPDX-License-Identifier: BSD-3-Clause */
/* droced's configuration: keys, their checks, the file format. */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_daemon.h"
#include "droce_dproto.h"
#include "droce_engine.h"

void droce_daemon_conf_init(struct droce_daemon_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket_path, sizeof(c->socket_path), "%s", DROCE_DPROTO_SOCKET_DEFAULT);
	c->socket_mode = 0660;
	c->socket_gid = (gid_t)-1;
	c->idle_sleep_us = -1;
	c->max_clients = 64;
	c->max_objects = 4096;
	c->max_objects_total = 32768;
}

static int set_str(char *dst, size_t cap, const char *key, const char *value, char *err,
		   size_t errlen)
{
	if (strlen(value) >= cap) {
		snprintf(err, errlen, "%s: longer than %zu characters", key, cap - 1);
		return -EINVAL;
	}
	memcpy(dst, value, strlen(value) + 1);
	return 0;
}

static int set_uint(unsigned long *out, unsigned long max, int base, const char *key,
		    const char *value, char *err, size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(value, &end, base);
	if (value[0] == '\0' || value[0] == '-' || *end != '\0' || errno != 0 || v > max) {
		snprintf(err, errlen, "%s: '%s' is not a number from 0 to %lu", key, value, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int droce_daemon_conf_set(struct droce_daemon_conf *c, const char *key, const char *value,
			  char *err, size_t errlen)
{
	unsigned long v;
	int rc;

	if (strcmp(key, "socket") == 0) {
		if (value[0] != '/') {
			snprintf(err, errlen, "socket: '%s' is not an absolute path", value);
			return -EINVAL;
		}
		return set_str(c->socket_path, sizeof(c->socket_path), key, value, err, errlen);
	}
	if (strcmp(key, "socket_mode") == 0) {
		rc = set_uint(&v, 0777, 8, key, value, err, errlen);
		if (rc == 0)
			c->socket_mode = (mode_t)v;
		return rc;
	}
	if (strcmp(key, "socket_group") == 0) {
		struct group *g = getgrnam(value);

		if (g != NULL) {
			c->socket_gid = g->gr_gid;
			return 0;
		}
		rc = set_uint(&v, 0x7fffffff, 10, key, value, err, errlen);
		if (rc != 0)
			snprintf(err, errlen, "socket_group: no group '%s'", value);
		else
			c->socket_gid = (gid_t)v;
		return rc;
	}
	if (strcmp(key, "device") == 0) {
		if (c->n_devices == DROCE_DAEMON_DEVICES_MAX) {
			snprintf(err, errlen, "device: more than %d devices",
				 DROCE_DAEMON_DEVICES_MAX);
			return -EINVAL;
		}
		if (strchr(value, ':') == NULL || strpbrk(value, " \t;") != NULL) {
			snprintf(err, errlen, "device: '%s' is not NAME:key=value,...", value);
			return -EINVAL;
		}
		rc = set_str(c->device[c->n_devices], sizeof(c->device[0]), key, value, err,
			     errlen);
		if (rc == 0)
			c->n_devices++;
		return rc;
	}
	if (strcmp(key, "eal") == 0)
		return set_str(c->eal_args, sizeof(c->eal_args), key, value, err, errlen);
	if (strcmp(key, "memory") == 0) {
		rc = set_uint(&v, 1u << 20, 10, key, value, err, errlen);
		if (rc == 0)
			c->memory_mb = (unsigned int)v;
		return rc;
	}
	if (strcmp(key, "lcores") == 0) {
		rc = set_uint(&v, DROCE_ENGINE_LCORES_MAX, 10, key, value, err, errlen);
		if (rc == 0 && v == 0) {
			snprintf(err, errlen, "%s: must be at least 1", key);
			rc = -EINVAL;
		}
		if (rc == 0)
			c->lcores = (unsigned int)v;
		return rc;
	}
	if (strcmp(key, "idle_sleep_us") == 0) {
		rc = set_uint(&v, 1000000, 10, key, value, err, errlen);
		if (rc == 0)
			c->idle_sleep_us = (int)v;
		return rc;
	}
	if (strcmp(key, "max_clients") == 0 || strcmp(key, "max_objects") == 0 ||
	    strcmp(key, "max_objects_total") == 0) {
		rc = set_uint(&v, 1u << 24, 10, key, value, err, errlen);
		if (rc == 0 && v == 0) {
			snprintf(err, errlen, "%s: must be at least 1", key);
			rc = -EINVAL;
		}
		if (rc == 0 && strcmp(key, "max_clients") == 0)
			c->max_clients = (unsigned int)v;
		else if (rc == 0 && strcmp(key, "max_objects") == 0)
			c->max_objects = (unsigned int)v;
		else if (rc == 0)
			c->max_objects_total = (unsigned int)v;
		return rc;
	}
	snprintf(err, errlen, "unknown key '%s'", key);
	return -EINVAL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int droce_daemon_conf_load(struct droce_daemon_conf *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char line[1024], msg[256];
	unsigned int lineno = 0;
	int rc = 0;

	if (f == NULL) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *s, *eq;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long", path, lineno);
			rc = -EINVAL;
			break;
		}
		s = trim(line);
		if (s[0] == '\0' || s[0] == '#')
			continue;
		eq = strchr(s, '=');
		if (eq == NULL) {
			snprintf(err, errlen, "%s:%u: not 'key = value'", path, lineno);
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		rc = droce_daemon_conf_set(c, trim(s), trim(eq + 1), msg, sizeof(msg));
		if (rc != 0)
			snprintf(err, errlen, "%s:%u: %s", path, lineno, msg);
	}
	fclose(f);
	return rc;
}

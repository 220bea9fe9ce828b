/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared memory for queues: each queue's rings live in a memfd mapping, so
 * that droced can hand the file descriptor to the application it serves. The
 * size is sealed: an application holding the descriptor cannot shrink the
 * file under the engine's mapping (which would be a SIGBUS in droced).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_priv.h"

int droce_shm_alloc(struct droce_shm *m, size_t len, const char *name)
{
	m->fd = droce_dproto_memfd(name, len, 0, &m->len);
	if (m->fd < 0) {
		int err = m->fd;

		m->fd = -1;
		m->addr = NULL;
		return err;
	}
	m->addr = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (m->addr == MAP_FAILED)
		goto out_close;
	return 0;
out_close : {
	int err = errno;

	close(m->fd);
	m->fd = -1;
	m->addr = NULL;
	return -err;
}
}

void droce_shm_free(struct droce_shm *m)
{
	if (m->addr != NULL)
		munmap(m->addr, m->len);
	if (m->fd >= 0)
		close(m->fd);
	m->addr = NULL;
	m->fd = -1;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory registration through droced (doc/daemon.md): droced maps the very
 * pages the application registers, from the file they are mapped from, and
 * never copies. So the memory must be a shared mapping of a file droced can
 * map and the application cannot shrink under it: a memfd sealed with
 * F_SEAL_SHRINK (droce_alloc_shared() makes one, hugepages optional). The
 * file is found from /proc/self/maps and a descriptor this process holds.
 *
 * With DROCE_SHARE_PRIVATE=1, private anonymous memory (malloc's) is moved
 * onto such a memfd in place at registration, so that unmodified programs
 * register their buffers: same addresses, same bytes, now shared with droced.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <dirent.h>

#include "droce_dproto.h"
#include "droce_shared.h"
#include "verbs_priv.h"

/* The file mapping behind [addr, addr + len): one file, shared, contiguous. */
struct backing {
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	uint64_t file_off; /* of addr */
	char path[PATH_MAX];
};

/* One line of /proc/self/maps. */
struct maps_line {
	uintptr_t lo, hi;
	char perms[8];
	unsigned long long off, ino;
	unsigned int maj, min;
	char path[PATH_MAX];
};

/* The next mapping of @p f (a /proc/self/maps stream): true, or false at its end. */
static bool maps_next(FILE *f, struct maps_line *m)
{
	char line[PATH_MAX + 128];

	while (fgets(line, sizeof(line), f) != NULL) {
		m->path[0] = '\0';
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx %x:%x %llu %4095[^\n]", &m->lo,
			   &m->hi, m->perms, &m->off, &m->maj, &m->min, &m->ino, m->path) >= 7)
			return true;
	}
	return false;
}

static int find_backing(uintptr_t addr, size_t len, struct backing *b)
{
	FILE *f = fopen("/proc/self/maps", "re");
	struct maps_line m;
	uintptr_t want = addr, end = addr + len;
	bool first = true;
	int rc = -EFAULT; /* nothing mapped there */

	if (f == NULL)
		return -errno;
	while (want < end && maps_next(f, &m)) {
		if (m.hi <= want)
			continue;
		if (m.lo > want)
			break; /* a hole */
		if (m.perms[3] != 's' || m.ino == 0) {
			rc = -EINVAL; /* private or anonymous: droced cannot see these pages */
			break;
		}
		if (first) {
			b->dev_major = m.maj;
			b->dev_minor = m.min;
			b->ino = m.ino;
			b->file_off = m.off + (want - m.lo);
			snprintf(b->path, sizeof(b->path), "%s",
				 m.path[0] == ' ' ? m.path + 1 : m.path);
			first = false;
		} else if (m.maj != b->dev_major || m.min != b->dev_minor || m.ino != b->ino ||
			   m.off + (want - m.lo) != b->file_off + (want - addr)) {
			rc = -EINVAL; /* another file, or the same one out of order */
			break;
		}
		want = m.hi;
	}
	fclose(f);
	return want >= end ? 0 : rc;
}

static bool same_file(int fd, const struct backing *b)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_ino == b->ino &&
	       major(st.st_dev) == b->dev_major && minor(st.st_dev) == b->dev_minor;
}

/* A descriptor of the file: one this process holds (a memfd), else the path. */
static int backing_fd(const struct backing *b)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;

	if (d != NULL) {
		while (fd < 0 && (e = readdir(d)) != NULL) {
			char *endp;
			long n = strtol(e->d_name, &endp, 10);

			if (*endp != '\0' || n < 0 || n == dirfd(d) || n > INT_MAX)
				continue;
			if (same_file((int)n, b))
				fd = fcntl((int)n, F_DUPFD_CLOEXEC, 0);
		}
		closedir(d);
	}
	if (fd < 0 && b->path[0] == '/' && strstr(b->path, " (deleted)") == NULL) {
		fd = open(b->path, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && !same_file(fd, b)) {
			close(fd);
			fd = -1;
		}
	}
	return fd;
}

/* One mapping of the range to move: where, and its protection. */
struct piece {
	uintptr_t lo, hi;
	int prot;
};

#define PIECES_MAX 16

/*
 * The pages of [lo, hi): private anonymous mappings only (the heap, malloc's
 * mmaps), readable, at most PIECES_MAX of them, no hole. The stack and file
 * mappings are never moved. Count, or -EINVAL.
 */
static int private_pieces(uintptr_t lo, uintptr_t hi, struct piece *p)
{
	FILE *f = fopen("/proc/self/maps", "re");
	struct maps_line m;
	uintptr_t want = lo;
	int n = 0;

	if (f == NULL)
		return -errno;
	while (want < hi && maps_next(f, &m)) {
		if (m.hi <= want)
			continue;
		if (m.lo > want || n == PIECES_MAX || m.perms[3] != 'p' || m.perms[0] != 'r' ||
		    m.ino != 0 || (m.path[0] != '\0' && strcmp(m.path, "[heap]") != 0))
			break;
		p[n].lo = want;
		p[n].hi = m.hi < hi ? m.hi : hi;
		p[n].prot = PROT_READ | (m.perms[1] == 'w' ? PROT_WRITE : 0) |
			    (m.perms[2] == 'x' ? PROT_EXEC : 0);
		want = p[n].hi;
		n++;
	}
	fclose(f);
	return want >= hi ? n : -EINVAL;
}

/*
 * Move the private pages under [addr, addr + len) onto a sealed memfd, in
 * place: copy them into the file, then map the file over them with
 * MAP_FIXED. A store another thread makes to those pages between the copy and
 * the mapping is lost, so it is opt-in (DROCE_SHARE_PRIVATE=1) and meant for
 * buffers registered before they are used. The descriptor stays open: it is
 * how a later registration finds the file. 0 or -errno.
 */
static int share_private(uintptr_t addr, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = addr & ~(page - 1), hi = (addr + len + page - 1) & ~(page - 1);
	struct piece p[PIECES_MAX];
	int n = private_pieces(lo, hi, p), fd, err;
	void *tmp;

	if (n < 0)
		return n;
	fd = droce_dproto_memfd("droce-shared-private", hi - lo, 0, NULL);
	if (fd < 0)
		return fd;
	tmp = mmap(NULL, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED)
		goto fail;
	memcpy(tmp, (const void *)lo, hi - lo);
	munmap(tmp, hi - lo);
	for (int i = 0; i < n; i++)
		if (mmap((void *)p[i].lo, p[i].hi - p[i].lo, p[i].prot, MAP_SHARED | MAP_FIXED, fd,
			 (off_t)(p[i].lo - lo)) == MAP_FAILED)
			goto fail; /* pieces before it moved already: their bytes are the same */
	return 0;
fail:
	err = errno;
	close(fd);
	return -err;
}

static bool share_private_wanted(void)
{
	const char *v = getenv("DROCE_SHARE_PRIVATE");

	return v != NULL && strcmp(v, "1") == 0;
}

int droce_remote_reg_mr(struct droce_mr *mr, struct ibv_pd *pd, void *addr, size_t length,
			uint64_t iova, unsigned int access)
{
	struct droce_dproto_reg_mr_req req = {
		.pd = to_dpd(pd)->remote_handle,
		.access = access,
		.iova = iova,
		.length = length,
	};
	struct droce_dproto_reg_mr_rep rep;
	struct backing b;
	int fd, rc;

	rc = find_backing((uintptr_t)addr, length, &b);
	if (rc == -EINVAL && share_private_wanted() && share_private((uintptr_t)addr, length) == 0)
		rc = find_backing((uintptr_t)addr, length, &b);
	fd = rc == 0 ? backing_fd(&b) : -1;
	if (rc == 0 && fd < 0)
		rc = -EINVAL;
	if (rc == -EINVAL) {
		fprintf(stderr,
			"droce: ibv_reg_mr(%p, %zu): droced cannot map this memory; allocate "
			"it with droce_alloc_shared() or map a memfd sealed with F_SEAL_SHRINK, "
			"or set DROCE_SHARE_PRIVATE=1 for malloc memory (doc/daemon.md)\n",
			addr, length);
	}
	if (rc != 0)
		return rc;
	req.file_off = b.file_off;
	rc = droce_remote_call(to_dctx(pd->context), DPROTO_REG_MR, 0, &req, sizeof(req), fd, &rep,
			       sizeof(rep), &mr->remote_handle, NULL);
	close(fd);
	if (rc == -EINVAL)
		fprintf(stderr,
			"droce: ibv_reg_mr(%p, %zu): droced refused the memory's file (it must be "
			"a memfd sealed with F_SEAL_SHRINK: doc/daemon.md)\n",
			addr, length);
	if (rc != 0)
		return rc;
	mr->ibmr.lkey = rep.lkey;
	mr->ibmr.rkey = rep.rkey;
	return 0;
}

/*
 * Through droced. New rights or PD keep the range and the keys: droced changes the MR in
 * place (REREG_MR). A new range gives new keys anyway (ibv_rereg_mr(3)), and its memory must
 * reach droced as a registration's does: the new range is registered (with the PD and rights
 * it is to have), then the old MR deregistered; if either fails the old MR stays as it was.
 */
int droce_remote_rereg_mr(struct droce_mr *mr, unsigned int flags, struct ibv_pd *pd, void *addr,
			  size_t length, unsigned int access)
{
	struct droce_context *c = to_dctx(mr->ibmr.context);
	struct droce_dproto_rereg_mr_req req = {
		.flags = flags & (IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS),
		.pd = to_dpd(pd)->remote_handle,
		.access = access,
	};
	struct droce_dproto_reg_mr_rep rep;
	struct droce_mr fresh;
	int rc;

	if (!(flags & IBV_REREG_MR_CHANGE_TRANSLATION)) {
		rc = droce_remote_call(c, DPROTO_REREG_MR, mr->remote_handle, &req, sizeof(req), -1,
				       &rep, sizeof(rep), NULL, NULL);
		if (rc != 0)
			return rc;
		mr->ibmr.lkey = rep.lkey;
		mr->ibmr.rkey = rep.rkey;
		return 0;
	}
	memset(&fresh, 0, sizeof(fresh));
	fresh.ibmr.context = mr->ibmr.context;
	rc = droce_remote_reg_mr(&fresh, pd, addr, length, (uintptr_t)addr,
				 (flags & IBV_REREG_MR_CHANGE_ACCESS) ? access : mr->access);
	if (rc != 0)
		return rc;
	rc = droce_remote_destroy(mr->ibmr.context, DPROTO_DEREG_MR, mr->remote_handle, NULL);
	if (rc != 0) {
		/* the old MR stays (windows bound to it: EBUSY); the new one goes */
		droce_remote_destroy(mr->ibmr.context, DPROTO_DEREG_MR, fresh.remote_handle, NULL);
		return rc;
	}
	mr->remote_handle = fresh.remote_handle;
	mr->ibmr.lkey = fresh.ibmr.lkey;
	mr->ibmr.rkey = fresh.ibmr.rkey;
	return 0;
}

int droce_remote_dereg_mr(struct droce_mr *mr)
{
	/* droced deregisters, waits for its engine and unmaps */
	return droce_remote_destroy(mr->ibmr.context, DPROTO_DEREG_MR, mr->remote_handle, NULL);
}

void *droce_alloc_shared(size_t length, unsigned int flags)
{
	size_t len;
	void *p;
	int fd;

	if (length == 0 || (flags & ~DROCE_SHARED_HUGEPAGES)) {
		errno = EINVAL;
		return NULL;
	}
	/* sealed: no process can shrink the file under droced's mapping (SIGBUS) */
	fd = droce_dproto_memfd("droce-shared", length,
				(flags & DROCE_SHARED_HUGEPAGES) ? MFD_HUGETLB : 0, &len);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int err = errno;

		close(fd);
		errno = err;
		return NULL;
	}
	/* the descriptor stays open: ibv_reg_mr() finds the file through it */
	return p;
}

int droce_free_shared(void *addr, size_t length)
{
	struct backing b;
	struct stat st;
	int fd = -1;

	if (addr == NULL)
		return 0;
	if (find_backing((uintptr_t)addr, length ? length : 1, &b) == 0)
		fd = backing_fd(&b);
	/* hugetlb mappings go in whole hugepages */
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_blksize > 0)
		length = (length + (size_t)st.st_blksize - 1) / (size_t)st.st_blksize *
			 (size_t)st.st_blksize;
	if (munmap(addr, length ? length : 1) != 0) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		return -err;
	}
	if (fd >= 0) {
		/* close the allocation's own descriptor too: ours is a duplicate of it */
		DIR *d = opendir("/proc/self/fd");
		struct dirent *e;

		while (d != NULL && (e = readdir(d)) != NULL) {
			long n = strtol(e->d_name, NULL, 10);

			if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && n != fd &&
			    n != dirfd(d) && same_file((int)n, &b))
				close((int)n);
		}
		if (d != NULL)
			closedir(d);
		close(fd);
	}
	return 0;
}

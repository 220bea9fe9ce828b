/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory registration through droced: what droced can map (droce_alloc_shared(),
 * an application's own sealed memfd, hugepages when there are some) registers
 * and carries RDMA; what it cannot (malloc memory, an unsealed memfd, shared
 * anonymous memory) fails with EINVAL; with DROCE_SHARE_PRIVATE=1 malloc memory
 * is moved onto shared memory in place, its bytes and address kept; ibv_rereg_mr
 * keeps the keys for new rights and gives new ones with a new range.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "droce_shared.h"

#define LEN (256u << 10)

static struct test_daemon daemon_;
static char *why;

static void setup(void)
{
	why = test_shared_mem(256);
	test_daemon_start(&daemon_, NULL);
}

static void teardown(void)
{
	cr_expect_eq(test_daemon_stop(&daemon_), 0, "%s", test_daemon_log(&daemon_));
}

TestSuite(daemon_memory, .init = setup, .fini = teardown, .timeout = 90);

#define FAIL(...)                                \
	do {                                     \
		snprintf(why, 256, __VA_ARGS__); \
		return 1;                        \
	} while (0)

/* Two ends in one application, end 0 connected to end 1 over droced's link. */
static int two_ends(struct test_app_end *e)
{
	struct test_app_addr a[2];

	for (int i = 0; i < 2; i++)
		if (test_app_end_open(&e[i], i, IBV_QPT_RC, 65536) != 0)
			return 1;
	test_app_end_addr(&e[0], &a[0]);
	test_app_end_addr(&e[1], &a[1]);
	return test_app_end_connect(&e[0], &a[1]) != 0 || test_app_end_connect(&e[1], &a[0]) != 0;
}

/* RDMA WRITE @p len bytes of end 0's buffer into @p mr at @p dst. 0 when it completed. */
static int write_into(struct test_app_end *e, struct ibv_mr *mr, uint8_t *dst, uint32_t len)
{
	struct ibv_sge s = {.addr = (uintptr_t)e[0].buf, .length = len, .lkey = e[0].mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &s,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = {.remote_addr = (uintptr_t)dst, .rkey = mr->rkey}},
			   *bad;
	struct ibv_wc wc;

	if (ibv_post_send(e[0].qp, &wr, &bad) != 0 || test_app_end_poll(&e[0], &wc) != 1)
		return 1;
	return wc.status != IBV_WC_SUCCESS;
}

static const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

static int share_private_app(void *arg)
{
	struct test_app_end e[2];
	uint8_t *p = aligned_alloc(4096, LEN), *q;
	struct ibv_mr *mr;

	(void)arg;
	if (p == NULL || two_ends(e) != 0)
		FAIL("set-up");
	for (size_t i = 0; i < LEN; i++)
		p[i] = (uint8_t)(i * 13);
	q = p;
	mr = ibv_reg_mr(e[1].pd, p, LEN, acc);
	if (mr == NULL)
		FAIL("DROCE_SHARE_PRIVATE=1: malloc memory refused: %s", strerror(errno));
	if (mr->addr != p || q != p)
		FAIL("the address moved");
	for (size_t i = 0; i < LEN; i++)
		if (p[i] != (uint8_t)(i * 13))
			FAIL("byte %zu changed when the memory was moved", i);
	memset(e[0].buf, 0xa5, 4096);
	if (write_into(e, mr, p + 8192, 4096) != 0)
		FAIL("WRITE into the moved memory failed");
	for (size_t i = 0; i < 4096; i++)
		if (p[8192 + i] != 0xa5)
			FAIL("the WRITE did not land in the application's own pages");
	if (p[8191] != (uint8_t)(8191 * 13) || p[8192 + 4096] != (uint8_t)((8192 + 4096) * 13))
		FAIL("the WRITE went past its range");
	if (ibv_dereg_mr(mr) != 0)
		FAIL("dereg");
	p[0] = 1; /* still the application's memory */
	free(p);
	test_app_end_close(&e[0]);
	test_app_end_close(&e[1]);
	return 0;
}

Test(daemon_memory, share_private_moves_malloc_memory_in_place)
{
	setenv("DROCE_SHARE_PRIVATE", "1", 1);
	cr_expect_eq(test_app_wait(test_app_start(&daemon_, share_private_app, NULL), 60), 0, "%s",
		     why);
}

static int own_memfd_app(void *arg)
{
	struct test_app_end e[2];
	struct ibv_mr *mr;
	uint8_t *p;
	int fd;

	(void)arg;
	if (two_ends(e) != 0)
		FAIL("set-up");
	/* unsealed: an application could shrink it under droced */
	fd = memfd_create("app", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, LEN) != 0)
		FAIL("memfd");
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		FAIL("mmap");
	if (ibv_reg_mr(e[1].pd, p, LEN, acc) != NULL || errno != EINVAL)
		FAIL("an unsealed memfd registered (errno %d)", errno);
	/* sealed: it registers, the middle of it too, and RDMA reaches it */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0)
		FAIL("seal");
	mr = ibv_reg_mr(e[1].pd, p + 4096 + 100, 8192, acc);
	if (mr == NULL)
		FAIL("a sealed memfd refused: %s", strerror(errno));
	memset(e[0].buf, 0x3c, 8192);
	if (write_into(e, mr, p + 4096 + 100, 8192) != 0 || p[4096 + 100] != 0x3c ||
	    p[4096 + 100 + 8191] != 0x3c || p[4096 + 99] != 0 || p[4096 + 100 + 8192] != 0)
		FAIL("WRITE into an unaligned range of the memfd");
	ibv_dereg_mr(mr);
	munmap(p, LEN);
	close(fd);
	/* shared anonymous memory has no file droced could open */
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ibv_reg_mr(e[1].pd, p, LEN, acc) != NULL || errno != EINVAL)
		FAIL("shared anonymous memory registered (errno %d)", errno);
	munmap(p, LEN);
	/* nothing mapped there at all */
	if (ibv_reg_mr(e[1].pd, (void *)0x1000, 4096, acc) != NULL || errno != EFAULT)
		FAIL("an unmapped range: errno %d, not EFAULT", errno);
	test_app_end_close(&e[0]);
	test_app_end_close(&e[1]);
	return 0;
}

Test(daemon_memory, own_memfds_must_be_sealed_and_anonymous_memory_is_refused)
{
	cr_expect_eq(test_app_wait(test_app_start(&daemon_, own_memfd_app, NULL), 60), 0, "%s",
		     why);
}

static int hugepage_app(void *arg)
{
	struct test_app_end e[2];
	struct ibv_mr *mr;
	uint8_t *p;

	(void)arg;
	if (two_ends(e) != 0)
		FAIL("set-up");
	p = droce_alloc_shared(LEN, DROCE_SHARED_HUGEPAGES);
	if (p == NULL)
		return 77; /* no free hugepages here */
	mr = ibv_reg_mr(e[1].pd, p + 100, 4096, acc);
	if (mr == NULL)
		FAIL("hugepage memory refused: %s", strerror(errno));
	memset(e[0].buf, 0x77, 4096);
	if (write_into(e, mr, p + 100, 4096) != 0 || p[100] != 0x77 || p[4195] != 0x77 ||
	    p[4196] != 0)
		FAIL("WRITE into hugepage memory");
	ibv_dereg_mr(mr);
	if (droce_free_shared(p, LEN) != 0)
		FAIL("free");
	test_app_end_close(&e[0]);
	test_app_end_close(&e[1]);
	return 0;
}

Test(daemon_memory, hugepage_memory_registers_in_whole_pages)
{
	int rc = test_app_wait(test_app_start(&daemon_, hugepage_app, NULL), 60);

	if (rc == 77)
		cr_skip_test("no free hugepages for a memfd");
	cr_expect_eq(rc, 0, "%s", why);
}

/*
 * ibv_rereg_mr through droced: new rights keep the keys and govern the rkey the peer holds
 * (a read-only MR made writable: droced's mapping becomes writable), a new range gives new
 * keys and RDMA reaches the new range.
 */
static int rereg_app(void *arg)
{
	struct test_app_end e[2];
	struct ibv_mr *mr;
	uint32_t lkey, rkey;
	uint8_t *p;

	(void)arg;
	if (two_ends(e) != 0)
		FAIL("set-up");
	p = droce_alloc_shared(LEN, 0);
	if (p == NULL)
		FAIL("droce_alloc_shared");
	mr = ibv_reg_mr(e[1].pd, p, 8192, 0);
	if (mr == NULL)
		FAIL("reg: %s", strerror(errno));
	lkey = mr->lkey;
	rkey = mr->rkey;
	memset(e[0].buf, 0x5a, 4096);
	if (ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, acc) != 0)
		FAIL("rereg access: %s", strerror(errno));
	if (mr->lkey != lkey || mr->rkey != rkey)
		FAIL("new rights changed the keys");
	if (write_into(e, mr, p, 4096) != 0 || p[0] != 0x5a || p[4095] != 0x5a)
		FAIL("WRITE under the kept rkey with the new rights");
	if (ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, p + 65536, 8192, 0) != 0)
		FAIL("rereg translation: %s", strerror(errno));
	if (mr->rkey == rkey || mr->lkey == lkey)
		FAIL("a new range kept the keys");
	if (mr->addr != p + 65536 || mr->length != 8192)
		FAIL("the MR does not say its new range");
	memset(e[0].buf, 0x6b, 4096);
	if (write_into(e, mr, p + 65536, 4096) != 0 || p[65536] != 0x6b || p[0] != 0x5a)
		FAIL("WRITE into the new range");
	if (ibv_dereg_mr(mr) != 0)
		FAIL("dereg");
	droce_free_shared(p, LEN);
	test_app_end_close(&e[0]);
	test_app_end_close(&e[1]);
	return 0;
}

Test(daemon_memory, rereg_keeps_keys_for_new_rights_and_moves_to_a_new_range)
{
	cr_expect_eq(test_app_wait(test_app_start(&daemon_, rereg_app, NULL), 60), 0, "%s", why);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Throughput of the CRC-32 implementations the RoCEv2 ICRC could use: zlib crc32() (the
 * baseline of every ratio), ISA-L crc32_gzip_refl(), DPDK rte_net_crc_calc() with each of its
 * algorithms, a byte-wise table as the naive reference, and droce_icrc_calc() on whole
 * RoCEv2 frames with each droce implementation.
 *
 * Figures only, nothing asserts on time. The exit status is non-zero when an implementation
 * disagrees with zlib or a frame cannot be built as expected.
 *
 * Usage: bench_icrc [-t ms_per_cell] [-r repetitions] [-c]
 * -c times the thread's CPU time instead of the wall clock (a machine shared with other work).
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <isa-l/crc.h>
#include <zlib.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_net_crc.h>
#include <rte_version.h>

#include "droce_wire.h"

#ifndef BENCH_ISAL_VERSION
#define BENCH_ISAL_VERSION "?"
#endif

static const size_t bench_sizes[] = {64, 256, 1024, 4096, 9000, 65536};
#define BUF_MAX   65536
#define FRAME_CAP (BUF_MAX + 256)

/* What one call works on: a plain buffer, or a RoCEv2 frame carrying the same bytes. */
struct bench_data {
	const uint8_t *buf;
	size_t len;
	const uint8_t *l3; /* the frame's IP header; NULL when no frame could be built */
	size_t ip_hdr_len;
	size_t icrc_off; /* bytes the ICRC covers, from l3 */
};

struct bench_impl {
	const char *name;
	bool frame;                                  /* runs on the frame, not the buffer */
	bool chainable;                              /* takes a seed: can resume a CRC */
	void (*select)(void);                        /* called before it runs, may be NULL */
	uint32_t (*run)(const struct bench_data *d); /* the timed call */
	uint32_t (*seeded)(uint32_t crc, const uint8_t *p, size_t len); /* chainable only */
};

/* Results of every call end here so that no call can be optimised away. */
static volatile uint32_t bench_sink;

/* ---------------------------------------------------------- CRC-32 under test */

static uint32_t crc_zlib_seeded(uint32_t crc, const uint8_t *p, size_t len)
{
	return (uint32_t)crc32(crc, p, (uInt)len);
}

static uint32_t crc_isal_seeded(uint32_t crc, const uint8_t *p, size_t len)
{
	return crc32_gzip_refl(crc, p, len);
}

static uint32_t crc_table[256];

static void crc_table_init(void)
{
	uint32_t i, c;
	int k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
		crc_table[i] = c;
	}
}

/* One table lookup per byte, zlib's seed convention: the naive reference. */
static uint32_t crc_table_seeded(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint32_t run_zlib(const struct bench_data *d)
{
	return crc_zlib_seeded(0, d->buf, d->len);
}

static uint32_t run_isal(const struct bench_data *d)
{
	return crc_isal_seeded(0, d->buf, d->len);
}

static uint32_t run_table(const struct bench_data *d)
{
	return crc_table_seeded(0, d->buf, d->len);
}

/* rte_net_crc has no seed: it can only compute the CRC of one whole buffer. */
static uint32_t run_rte(const struct bench_data *d)
{
	return rte_net_crc_calc(d->buf, (uint32_t)d->len, RTE_NET_CRC32_ETH);
}

static void select_rte_avx512(void)
{
	rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
}

static void select_rte_sse42(void)
{
	rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
}

static void select_rte_scalar(void)
{
	rte_net_crc_set_alg(RTE_NET_CRC_SCALAR);
}

static uint32_t run_icrc(const struct bench_data *d)
{
	return droce_icrc_calc(d->l3, d->ip_hdr_len, false, d->icrc_off);
}

/*
 * The straightforward recipe, what droce_icrc_calc() did before it corrected
 * the seed instead: copy the masked headers (IPv4 here) to the stack, force
 * the variant fields to ones, one CRC over the copy and one over the rest.
 */
static uint32_t run_icrc_copy(const struct bench_data *d)
{
	size_t n = droce_icrc_masked_len(d->ip_hdr_len);
	uint8_t hdr[60 + 8 + 12];
	uint32_t crc;

	memcpy(hdr, d->l3, n);
	hdr[1] = 0xff;                 /* TOS */
	hdr[8] = 0xff;                 /* TTL */
	hdr[10] = hdr[11] = 0xff;      /* header checksum */
	hdr[d->ip_hdr_len + 6] = 0xff; /* UDP checksum */
	hdr[d->ip_hdr_len + 7] = 0xff;
	hdr[d->ip_hdr_len + 8 + 4] = 0xff; /* FECN, BECN, resv6 */
	crc = droce_crc32(DROCE_ICRC_PSEUDO_LRH_CRC, hdr, n);
	return droce_crc32(crc, d->l3 + n, d->icrc_off - n);
}

static void select_droce_isal(void)
{
	droce_crc32_set_impl(DROCE_CRC_ISAL);
}

static void select_droce_zlib(void)
{
	droce_crc32_set_impl(DROCE_CRC_ZLIB);
}

static const struct bench_impl bench_impls[] = {
	{"zlib crc32", false, true, NULL, run_zlib, crc_zlib_seeded},
	{"isa-l crc32_gzip_refl", false, true, NULL, run_isal, crc_isal_seeded},
	{"rte_net_crc avx512", false, false, select_rte_avx512, run_rte, NULL},
	{"rte_net_crc sse42", false, false, select_rte_sse42, run_rte, NULL},
	{"rte_net_crc scalar", false, false, select_rte_scalar, run_rte, NULL},
	{"byte-wise table", false, true, NULL, run_table, crc_table_seeded},
	{"droce_icrc_calc isa-l", true, true, select_droce_isal, run_icrc, NULL},
	{"droce_icrc_calc zlib", true, true, select_droce_zlib, run_icrc, NULL},
	{"masked copy isa-l", true, true, select_droce_isal, run_icrc_copy, NULL},
};

/* ---------------------------------------------------------- data and frames */

static void fill_random(uint8_t *p, size_t len)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 32);
	}
}

/* Build an IPv4 RC SEND_ONLY frame carrying @p len bytes of @p payload; 0 or -errno. */
static int build_frame(uint8_t *frame, const uint8_t *payload, size_t len, struct bench_data *d)
{
	static const struct droce_parse_cfg parse_cfg = {
		.udp_port = DROCE_ROCEV2_UDP_PORT,
		.max_payload = UINT16_MAX,
		.verify_icrc = true,
		.verify_ip_csum = true,
	};
	struct droce_addr a = {
		.dst_mac = {0x02, 0, 0, 0, 0, 0x02},
		.src_mac = {0x02, 0, 0, 0, 0, 0x01},
		.ipv4_df = true,
		.src_ip = {192, 168, 100, 1},
		.dst_ip = {192, 168, 100, 2},
		.tclass = 0x02,
		.ttl = 64,
		.udp_dport = DROCE_ROCEV2_UDP_PORT,
	};
	struct droce_hdr_fields f = {
		.opcode = DROCE_OP_RC_SEND_ONLY,
		.ackreq = true,
		.pkey = 0xffff,
		.dqpn = 0x12,
		.psn = 0x1000,
	};
	struct droce_pkt pkt;
	enum droce_parse_status st;
	ssize_t n;

	a.udp_sport = droce_udp_sport_for_qps(0, 0x11, 0x12);
	n = droce_build_frame(frame, FRAME_CAP, &a, 1, &f, payload, (uint32_t)len);
	if (n < 0)
		return (int)n;
	st = droce_parse(frame, (size_t)n, &parse_cfg, &pkt);
	if (st != DROCE_PARSE_OK) {
		fprintf(stderr, "frame of %zu bytes of payload does not parse: %s\n", len,
			droce_parse_status_name[st]);
		return -EPROTO;
	}
	d->l3 = frame + pkt.l3_off;
	d->ip_hdr_len = pkt.ip_hdr_len;
	d->icrc_off = (size_t)(pkt.icrc_off - pkt.l3_off);
	return 0;
}

/*
 * The ICRC straight from its definition (IBTA annex A17) with zlib: 8 bytes of 0xff, then
 * the IPv4 header, UDP header and BTH with their variant fields set to ones, then the rest.
 */
static uint32_t icrc_oracle(const struct bench_data *d)
{
	static uint8_t copy[8 + FRAME_CAP];
	uint8_t *ip = copy + 8;
	size_t udp = d->ip_hdr_len, bth = d->ip_hdr_len + 8;

	memset(copy, 0xff, 8);
	memcpy(ip, d->l3, d->icrc_off);
	ip[1] = 0xff;                     /* TOS */
	ip[8] = 0xff;                     /* TTL */
	ip[10] = ip[11] = 0xff;           /* header checksum */
	ip[udp + 6] = ip[udp + 7] = 0xff; /* UDP checksum */
	ip[bth + 4] = 0xff;               /* FECN, BECN, resv6 */
	return (uint32_t)crc32(0, copy, (uInt)(8 + d->icrc_off));
}

/* ---------------------------------------------------------- correctness */

/* Lengths checked against zlib besides bench_sizes, each from two start alignments. */
static const size_t check_sizes[] = {1,  2,  3,   7,   15,   16,   17,   31,   33,
				     63, 65, 127, 255, 1023, 1500, 4097, 8999, 65535};

static bool check_buffer_len(const struct bench_impl *im, const uint8_t *buf, size_t len)
{
	struct bench_data d = {.buf = buf, .len = len};
	uint32_t want = (uint32_t)crc32(0, buf, (uInt)len);
	uint32_t got = im->run(&d);
	size_t cut = len / 3;
	bool ok = true;

	if (got != want) {
		fprintf(stderr, "%s: %zu bytes: crc %08x, zlib %08x\n", im->name, len, got, want);
		ok = false;
	}
	if (im->seeded != NULL) {
		got = im->seeded(im->seeded(0, buf, cut), buf + cut, len - cut);
		if (got != want) {
			fprintf(stderr, "%s: %zu bytes in two pieces: crc %08x, zlib %08x\n",
				im->name, len, got, want);
			ok = false;
		}
	}
	return ok;
}

static bool check_buffer_impl(const struct bench_impl *im, const uint8_t *buf)
{
	bool ok = true;
	size_t i;

	if (im->select != NULL)
		im->select();
	for (i = 0; i < RTE_DIM(bench_sizes); i++) {
		ok &= check_buffer_len(im, buf, bench_sizes[i]);
		ok &= check_buffer_len(im, buf + 1, bench_sizes[i] - 1);
	}
	for (i = 0; i < RTE_DIM(check_sizes); i++) {
		ok &= check_buffer_len(im, buf, check_sizes[i]);
		ok &= check_buffer_len(im, buf + 1, check_sizes[i]);
	}
	return ok;
}

static bool check_frame_impl(const struct bench_impl *im, const struct bench_data *d)
{
	uint32_t want = icrc_oracle(d);
	uint32_t stored = droce_icrc_load(d->l3 + d->icrc_off);
	uint32_t got;

	im->select();
	got = im->run(d);
	if (got == want && stored == want)
		return true;
	fprintf(stderr, "%s: payload %zu: icrc %08x, stored %08x, zlib oracle %08x\n", im->name,
		d->len, got, stored, want);
	return false;
}

/* ---------------------------------------------------------- timing */

/* -c: the CPU time of this thread, which time spent descheduled on a shared machine leaves out */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(bench_clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t time_calls(const struct bench_impl *im, const struct bench_data *d, uint64_t iters)
{
	uint32_t acc = 0;
	uint64_t i, t0;

	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		/* the data may have changed: keeps the compiler from hoisting a call */
		__asm__ volatile("" : : "r"(d) : "memory");
		acc ^= im->run(d);
	}
	bench_sink ^= acc;
	return now_ns() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median ns per call over @p reps repetitions filling @p cell_ns in all. */
static double measure(const struct bench_impl *im, const struct bench_data *d, uint64_t cell_ns,
		      unsigned int reps)
{
	double ns[32];
	uint64_t iters = 1, t;
	unsigned int r;

	if (im->select != NULL)
		im->select();
	/* warm up and calibrate: double the count until a run takes 1 ms */
	for (;;) {
		t = time_calls(im, d, iters);
		if (t >= 1000000 || iters >= (1ull << 40))
			break;
		iters *= 2;
	}
	iters = (uint64_t)((double)iters * (double)(cell_ns / reps) / (double)(t ? t : 1));
	if (iters == 0)
		iters = 1;
	for (r = 0; r < reps; r++)
		ns[r] = (double)time_calls(im, d, iters) / (double)iters;
	qsort(ns, reps, sizeof(ns[0]), cmp_double);
	return reps % 2 ? ns[reps / 2] : (ns[reps / 2 - 1] + ns[reps / 2]) / 2;
}

/* ---------------------------------------------------------- environment */

static bool has_flag(const char *flags, const char *name)
{
	size_t n = strlen(name);
	const char *p = flags;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == flags || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

static void print_cpu(void)
{
	static const char *const flags[] = {"pclmulqdq", "vpclmulqdq", "sse4_2",   "avx2",
					    "avx512f",   "avx512bw",   "avx512dq", "avx512vl"};
	char line[4096], model[256] = "unknown", family[32] = "?", mod[32] = "?", fl[4096] = "";
	FILE *f = fopen("/proc/cpuinfo", "r");
	char *v;
	size_t i;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		v = strchr(line, ':');
		if (v == NULL)
			continue;
		v += 1 + (v[1] == ' ');
		v[strcspn(v, "\n")] = '\0';
		if (strncmp(line, "model name", 10) == 0 && strcmp(model, "unknown") == 0)
			snprintf(model, sizeof(model), "%s", v);
		else if (strncmp(line, "cpu family", 10) == 0 && family[0] == '?')
			snprintf(family, sizeof(family), "%s", v);
		else if (strncmp(line, "model\t", 6) == 0 && mod[0] == '?')
			snprintf(mod, sizeof(mod), "%s", v);
		else if (strncmp(line, "flags", 5) == 0 && fl[0] == '\0')
			snprintf(fl, sizeof(fl), "%s", v);
	}
	if (f != NULL)
		fclose(f);
	printf("cpu: %s (family %s, model %s), %ld online\n", model, family, mod,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("cpu flags:");
	for (i = 0; i < RTE_DIM(flags); i++)
		printf(" %s=%s", flags[i], has_flag(fl, flags[i]) ? "yes" : "no");
	printf("\n");
	printf("libraries: zlib %s, isa-l %s, %s\n", zlibVersion(), BENCH_ISAL_VERSION,
	       rte_version());
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * rte_net_crc works without the EAL, but its SIMD paths are gated by the EAL's maximum SIMD
 * bitwidth, which is 0 until rte_eal_init() and then 256 by default: without the EAL every
 * algorithm silently runs the scalar code, and AVX512 needs the bitwidth forced to 512.
 * With --no-shconf the EAL keeps nothing in its runtime folder: it is removed at once, so
 * that an interrupted run leaves nothing behind.
 */
static int eal_start(void)
{
	char prefix[64], lcore[16];
	char *argv[] = {"bench_icrc",
			"--no-huge",
			"--no-pci",
			"--no-shconf",
			"--no-telemetry",
			"--log-level=lib.eal:warning",
			"--force-max-simd-bitwidth=512",
			"-m",
			"64",
			"-l",
			lcore,
			prefix};
	int cpu = sched_getcpu();
	int rc;

	snprintf(prefix, sizeof(prefix), "--file-prefix=bench-icrc-%d", (int)getpid());
	snprintf(lcore, sizeof(lcore), "%d", cpu < 0 ? 0 : cpu);
	rc = rte_eal_init((int)RTE_DIM(argv), argv);
	if (rte_eal_get_runtime_dir()[0] != '\0')
		nftw(rte_eal_get_runtime_dir(), remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	return rc < 0 ? -1 : 0;
}

/* ---------------------------------------------------------- main */

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t ms_per_cell] [-r repetitions (1..31)] [-c: thread CPU time]\n",
		prog);
}

int main(int argc, char **argv)
{
	static uint8_t buf[BUF_MAX + 1];
	static uint8_t frame[FRAME_CAP];
	double zlib_ns = 0, ns;
	unsigned int reps = 5, cell_ms = 200;
	struct bench_data d;
	bool ok = true;
	size_t s, i;
	int opt, rc;

	while ((opt = getopt(argc, argv, "t:r:ch")) != -1) {
		switch (opt) {
		case 't':
			cell_ms = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			reps = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'c':
			bench_clock = CLOCK_THREAD_CPUTIME_ID;
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (cell_ms == 0 || reps == 0 || reps > 31) {
		usage(argv[0]);
		return 2;
	}

	print_cpu();
	if (eal_start() < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return 1;
	}
	crc_table_init();
	fill_random(buf, sizeof(buf));

	/* every implementation must agree with zlib before anything is timed */
	for (i = 0; i < RTE_DIM(bench_impls); i++)
		if (!bench_impls[i].frame)
			ok &= check_buffer_impl(&bench_impls[i], buf);
	for (s = 0; s < RTE_DIM(bench_sizes); s++) {
		d.buf = buf;
		d.len = bench_sizes[s];
		rc = build_frame(frame, buf, d.len, &d);
		if (rc == -EMSGSIZE)
			continue; /* too long for IPv4: reported as n/a below */
		if (rc < 0) {
			ok = false;
			continue;
		}
		for (i = 0; i < RTE_DIM(bench_impls); i++)
			if (bench_impls[i].frame)
				ok &= check_frame_impl(&bench_impls[i], &d);
	}
	if (!ok) {
		fprintf(stderr, "CRC mismatch: nothing timed\n");
		rte_eal_cleanup();
		return 1;
	}
	printf("check: every implementation equals zlib crc32() on %zu buffer lengths, the "
	       "seedable ones also in two pieces, and every ICRC equals a zlib oracle\n\n",
	       2 * (RTE_DIM(bench_sizes) + RTE_DIM(check_sizes)));

	printf("median of %u repetitions, ~%u ms per cell; frame rows: IPv4 RC SEND_ONLY frame, "
	       "bytes = ICRC coverage\n",
	       reps, cell_ms);
	printf("%-7s %-24s %-6s %7s %11s %9s %8s\n", "payload", "implementation", "chain", "bytes",
	       "ns/call", "GB/s", "x zlib");
	for (s = 0; s < RTE_DIM(bench_sizes); s++) {
		d.buf = buf;
		d.len = bench_sizes[s];
		d.l3 = NULL;
		rc = build_frame(frame, buf, d.len, &d);
		for (i = 0; i < RTE_DIM(bench_impls); i++) {
			const struct bench_impl *im = &bench_impls[i];
			size_t bytes;

			if (im->frame && rc < 0) {
				printf("%-7zu %-24s %-6s %7s %11s %9s %8s  (frame over 65535 bytes "
				       "of IP)\n",
				       d.len, im->name, "yes", "-", "n/a", "n/a", "n/a");
				continue;
			}
			bytes = im->frame ? d.icrc_off : d.len;
			ns = measure(im, &d, (uint64_t)cell_ms * 1000000u, reps);
			if (i == 0)
				zlib_ns = ns; /* bench_impls[0], the baseline */
			printf("%-7zu %-24s %-6s %7zu %11.1f %9.2f %8.2f\n", d.len, im->name,
			       im->chainable ? "yes" : "no", bytes, ns, (double)bytes / ns,
			       zlib_ns / ns);
			fflush(stdout);
		}
	}
	droce_crc32_set_impl(DROCE_CRC_ISAL);
	rte_eal_cleanup();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perftest's output: the header block between dashed lines, one address pair
 * per QP, a table with one row per message size, and the same numbers as JSON
 * (--out_json). MB/sec is 2^20 bytes a second and Gb/sec 10^9 bits, as
 * perftest's; latencies are microseconds.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "droce_perf.h"

#define RESULT_LINE                                                                               \
	"---------------------------------------------------------------------------------------" \
	"\n"
#define BW_TITLE_MB \
	" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
#define BW_TITLE_GB \
	" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
#define LAT_TITLE                                                                             \
	" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]  " \
	"  t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"

/* perftest's: "<verb> [<atomic op>] [Bidirectional] [Post List] BW|Latency Test" */
const char *perf_test_title(const struct perf_opts *o)
{
	static const char *const verbs[] = {
		[PERF_WRITE] = "RDMA_Write",
		[PERF_SEND] = "Send",
		[PERF_READ] = "RDMA_Read",
		[PERF_ATOMIC] = "Atomic",
	};
	static char title[96];

	snprintf(title, sizeof(title), "%s %s%s%s%s Test", verbs[o->verb],
		 o->verb != PERF_ATOMIC ? ""
		 : o->atomic_cas        ? "CMP_AND_SWAP "
					: "FETCH_AND_ADD ",
		 o->kind == PERF_BW && o->bidirectional ? "Bidirectional " : "",
		 o->kind == PERF_BW && o->post_list > 1 ? "Post List " : "",
		 o->kind == PERF_BW ? "BW" : "Latency");
	return title;
}

static unsigned int mtu_bytes(enum ibv_mtu m)
{
	return 128u << m;
}

static const char *link_name(const struct perf_ctx *c)
{
	return c->end[c->me].port.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "IB";
}

void perf_report_header(const struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;

	printf(RESULT_LINE);
	printf("                    %s\n", perf_test_title(o));
	/* -e: perftest names the device's completion vector its CQs use (0) */
	if (o->events)
		printf(" Test with events. Using %s_comp0\n", c->dev_name[c->me]);
	printf(" Dual-port       : OFF\t\tDevice         : %s\n", c->dev_name[c->me]);
	printf(" Number of qps   : %u\t\tTransport type : IB\n", o->num_qps);
	printf(" Connection type : %s\t\tUsing SRQ      : %s\n", perf_conn_name(o->qp_type),
	       o->use_srq ? "ON" : "OFF");
	printf(" PCIe relax order: OFF\n");
	printf(" ibv_wr* API     : OFF\n");
	/* as perftest: the sender's depth, the receiver's (-b: both sides are both) */
	if (c->role != PERF_ROLE_SERVER || o->bidirectional)
		printf(" TX depth        : %u\n", o->tx_depth);
	if (o->kind == PERF_BW && o->post_list > 1)
		printf(" Post List       : %u\n", o->post_list);
	if (o->verb == PERF_SEND && o->kind == PERF_BW &&
	    (c->role != PERF_ROLE_CLIENT || o->bidirectional))
		printf(" RX depth        : %u\n", c->rx_depth);
	if (o->kind == PERF_BW)
		printf(" CQ Moderation   : %u\n", o->cq_mod);
	printf(" Mtu             : %u[B]\n", mtu_bytes(c->mtu));
	printf(" Link type       : %s\n", link_name(c));
	printf(" GID index       : %d\n", c->end[c->me].gid_index);
	if (perf_verb_one_sided(o->verb))
		printf(" Outstand reads  : %u\n", c->outs);
	else
		printf(" Max inline data : %u[B]\n", c->max_inline);
	printf(" rdma_cm QPs\t : OFF\n");
	if (c->role == PERF_ROLE_LOOPBACK)
		printf(" Data ex. method : loopback (%s <-> %s)\n", c->dev_name[0], c->dev_name[1]);
	else
		printf(" Data ex. method : Ethernet\n");
	if (o->check)
		printf(" Data check      : ON\n");
	printf(RESULT_LINE);
}

/* perftest prints GIDs as 16 decimal bytes */
static void print_gid(const union ibv_gid *g)
{
	printf(" GID: ");
	for (int i = 0; i < 16; i++)
		printf("%02d%s", g->raw[i], i < 15 ? ":" : "\n");
}

/* perftest's address line: READs add the reads the QP answers; atomics and SENDs no key */
static void print_address(const struct perf_ctx *c, const char *side, const struct perf_dest *d)
{
	printf(" %s address: LID %#04x QPN %#06x PSN %#06x", side, d->lid, d->qpn, d->psn);
	if (c->o->verb == PERF_READ)
		printf(" OUT %#04x", d->out_reads);
	if (c->o->verb == PERF_READ || c->o->verb == PERF_WRITE)
		printf(" RKey %#08x VAddr %#016" PRIx64, d->rkey, d->vaddr);
	printf("\n");
	print_gid(&d->gid);
}

void perf_report_addresses(const struct perf_ctx *c)
{
	for (unsigned int i = 0; i < c->o->num_qps; i++)
		print_address(c, "local", &c->end[c->me].local[i]);
	for (unsigned int i = 0; i < c->o->num_qps; i++)
		print_address(c, "remote", &c->peer[i]);
	printf(RESULT_LINE);
}

static const char *title(const struct perf_ctx *c)
{
	if (c->o->kind == PERF_LAT)
		return LAT_TITLE;
	return c->o->report_gbits ? BW_TITLE_GB : BW_TITLE_MB;
}

void perf_report_table_title(const struct perf_ctx *c)
{
	printf("%s", title(c));
}

/* One row: every value starts in its column of the title (values as text). */
static void print_row(const struct perf_ctx *c, const char *const *col, const char *const *val,
		      unsigned int n)
{
	const char *t = title(c);
	char line[512];
	size_t at = 0;

	for (unsigned int i = 0; i < n; i++) {
		size_t start = (size_t)(strstr(t, col[i]) - t);

		while (at < start && at < sizeof(line) - 1)
			line[at++] = ' ';
		if (at > 0 && line[at - 1] != ' ' && at < sizeof(line) - 1)
			line[at++] = ' ';
		at += (size_t)snprintf(line + at, sizeof(line) - at, "%s", val[i]);
		if (at >= sizeof(line))
			at = sizeof(line) - 1;
	}
	printf("%s\n", line);
}

static double bw_unit(const struct perf_ctx *c, double bytes_per_sec)
{
	return c->o->report_gbits ? bytes_per_sec * 8 / 1e9 : bytes_per_sec / (1 << 20);
}

/* A bandwidth row in the table's units: what perftest's client reports to its server. */
void perf_report_oob(const struct perf_ctx *c, const struct perf_bw_result *r,
		     struct perf_oob_report *out)
{
	out->size = r->bytes;
	out->iters = r->iters;
	out->bw_peak = bw_unit(c, r->bw_peak);
	out->bw_avg = bw_unit(c, r->bw_avg);
	out->msg_rate = r->msg_rate / 1e6;
}

/* A row whose figures are already in the table's units. */
void perf_report_remote_bw(const struct perf_ctx *c, const struct perf_oob_report *r)
{
	static const char *const col[] = {"#bytes", "#iterations", "BW peak", "BW average",
					  "MsgRate"};
	char v[5][32];
	const char *val[5] = {v[0], v[1], v[2], v[3], v[4]};

	snprintf(v[0], sizeof(v[0]), "%" PRIu64, r->size);
	snprintf(v[1], sizeof(v[1]), "%" PRIu64, r->iters);
	snprintf(v[2], sizeof(v[2]), "%.2f", r->bw_peak);
	snprintf(v[3], sizeof(v[3]), "%.2f", r->bw_avg);
	snprintf(v[4], sizeof(v[4]), "%.6f", r->msg_rate);
	print_row(c, col, val, 5);
	fflush(stdout);
}

void perf_report_bw(const struct perf_ctx *c, const struct perf_bw_result *r)
{
	struct perf_oob_report row;

	perf_report_oob(c, r, &row);
	perf_report_remote_bw(c, &row);
}

/* perftest's -b row: its own size and iterations, both directions' figures added */
static struct perf_bw_result both(const struct perf_bw_result *own,
				  const struct perf_bw_result *other)
{
	return (struct perf_bw_result){.bytes = own->bytes,
				       .iters = own->iters,
				       .bw_peak = own->bw_peak + other->bw_peak,
				       .bw_avg = own->bw_avg + other->bw_avg,
				       .msg_rate = own->msg_rate + other->msg_rate};
}

void perf_report_bw_both(const struct perf_ctx *c, const struct perf_bw_result *own,
			 const struct perf_bw_result *other)
{
	struct perf_bw_result sum = both(own, other);

	perf_report_bw(c, &sum);
}

static void each_table(const struct perf_ctx *c, const char *name, const struct perf_bw_result *r,
		       unsigned int n)
{
	printf(RESULT_LINE);
	printf("\n %s results: \n", name);
	printf(RESULT_LINE);
	perf_report_table_title(c);
	for (unsigned int i = 0; i < n; i++)
		perf_report_bw(c, &r[i]);
}

/* perftest's --report-both layout; the caller closes the last table */
void perf_report_bw_each(const struct perf_ctx *c, const struct perf_bw_result *own,
			 const struct perf_bw_result *other, unsigned int n)
{
	each_table(c, "Local", own, n);
	each_table(c, "Remote", other, n);
}

void perf_report_lat(const struct perf_ctx *c, const struct perf_lat_result *r)
{
	static const char *const col[] = {"#bytes",  "#iterations",    "t_min",
					  "t_max",   "t_typical",      "t_avg",
					  "t_stdev", "99% percentile", "99.9% percentile"};
	const double t[7] = {r->t_min,   r->t_max, r->t_typical, r->t_avg,
			     r->t_stdev, r->p99,   r->p999};
	char v[9][32];
	const char *val[9];

	snprintf(v[0], sizeof(v[0]), "%" PRIu64, r->bytes);
	snprintf(v[1], sizeof(v[1]), "%" PRIu64, r->iters);
	for (int i = 0; i < 7; i++)
		snprintf(v[2 + i], sizeof(v[2 + i]), "%.2f", t[i]);
	for (int i = 0; i < 9; i++)
		val[i] = v[i];
	print_row(c, col, val, 9);
	fflush(stdout);
}

void perf_report_end(const struct perf_ctx *c)
{
	printf(RESULT_LINE);
	if (c->o->check)
		printf(" Data check: %" PRIu64 " messages verified, 0 errors, %" PRIu64 " lost\n",
		       c->checked, c->lost);
}

/* -u as the QP holds it (RC only: UC and UD have no ACKs to time) */
static void json_qp_timeout(FILE *f, const struct perf_ctx *c)
{
	const struct perf_end *e = &c->end[c->me];
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (c->o->qp_type == IBV_QPT_RC && e->qp != NULL &&
	    ibv_query_qp(e->qp[0], &a, IBV_QP_TIMEOUT, &ia) == 0)
		fprintf(f, "  \"qp_timeout\": %u,\n", a.timeout);
	else
		fprintf(f, "  \"qp_timeout\": null,\n");
}

static void json_header(FILE *f, const struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;

	fprintf(f, "{\n");
	fprintf(f, "  \"test\": \"%s\",\n", o->test_name);
	fprintf(f, "  \"title\": \"%s\",\n", perf_test_title(o));
	fprintf(f, "  \"device\": \"%s\",\n", c->dev_name[c->me]);
	if (c->role == PERF_ROLE_LOOPBACK) {
		fprintf(f, "  \"peer_device\": \"%s\",\n", c->dev_name[1]);
	} else {
		fprintf(f, "  \"role\": \"%s\",\n",
			c->role == PERF_ROLE_CLIENT ? "client" : "server");
		fprintf(f, "  \"peer\": \"%s\",\n", c->peer_name);
	}
	fprintf(f, "  \"connection\": \"%s\",\n", perf_conn_name(o->qp_type));
	fprintf(f, "  \"num_qps\": %u,\n", o->num_qps);
	fprintf(f, "  \"tx_depth\": %u,\n", o->tx_depth);
	fprintf(f, "  \"mtu\": %u,\n", mtu_bytes(c->mtu));
	fprintf(f, "  \"link_type\": \"%s\",\n", link_name(c));
	fprintf(f, "  \"gid_index\": %d,\n", c->end[c->me].gid_index);
	fprintf(f, "  \"max_inline\": %u,\n", c->max_inline);
	fprintf(f, "  \"duration\": %u,\n", o->duration);
	fprintf(f, "  \"check\": %s,\n", o->check ? "true" : "false");
	fprintf(f, "  \"checked_messages\": %" PRIu64 ",\n", c->checked);
	fprintf(f, "  \"lost_messages\": %" PRIu64 ",\n", c->lost);
	fprintf(f, "  \"bidirectional\": %s,\n", o->bidirectional ? "true" : "false");
	fprintf(f, "  \"events\": %s,\n", o->events ? "true" : "false");
	fprintf(f, "  \"cq_events\": %" PRIu64 ",\n", c->cq_events);
	fprintf(f, "  \"use_srq\": %s,\n", o->use_srq ? "true" : "false");
	fprintf(f, "  \"srq_receives\": %" PRIu64 ",\n", c->srq_recvs);
	json_qp_timeout(f, c);
	if (o->kind == PERF_BW)
		fprintf(f, "  \"bw_unit\": \"%s\",\n", o->report_gbits ? "Gb/sec" : "MB/sec");
	else
		fprintf(f, "  \"time_unit\": \"usec\",\n");
}

static void json_bw(FILE *f, const struct perf_ctx *c, const struct perf_bw_result *r)
{
	fprintf(f,
		"\"bytes\": %" PRIu64 ", \"iterations\": %" PRIu64
		", \"bw_peak\": %.2f, \"bw_average\": %.2f, \"msg_rate\": %.6f",
		r->bytes, r->iters, bw_unit(c, r->bw_peak), bw_unit(c, r->bw_avg),
		r->msg_rate / 1e6);
}

/* A row: -b's is the sum the table shows, then each direction's own figures. */
static void json_bw_row(FILE *f, const struct perf_ctx *c, const struct perf_bw_result *own,
			const struct perf_bw_result *other)
{
	struct perf_bw_result sum;

	if (other == NULL) {
		fprintf(f, "{");
		json_bw(f, c, own);
		fprintf(f, "}");
		return;
	}
	sum = both(own, other);
	fprintf(f, "{");
	json_bw(f, c, &sum);
	fprintf(f, ",\n     \"local\": {");
	json_bw(f, c, own);
	fprintf(f, "},\n     \"remote\": {");
	json_bw(f, c, other);
	fprintf(f, "}}");
}

/* The rows as the table shows them: same rounding, so the numbers are the same. */
int perf_report_json(const struct perf_ctx *c, const struct perf_bw_result *bw,
		     const struct perf_bw_result *other, const struct perf_lat_result *lat,
		     unsigned int n)
{
	FILE *f = fopen(c->o->json_path, "w");

	if (f == NULL) {
		fprintf(stderr, "droce-perf: %s: %s\n", c->o->json_path, strerror(errno));
		return -1;
	}
	json_header(f, c);
	fprintf(f, "  \"results\": [");
	for (unsigned int i = 0; i < n; i++) {
		fprintf(f, "%s\n    ", i ? "," : "");
		if (bw != NULL)
			json_bw_row(f, c, &bw[i], other != NULL ? &other[i] : NULL);
		else
			fprintf(f,
				"{\"bytes\": %" PRIu64 ", \"iterations\": %" PRIu64
				", \"t_min\": %.2f, \"t_max\": %.2f, \"t_typical\": %.2f, "
				"\"t_avg\": "
				"%.2f, \"t_stdev\": %.2f, \"p99\": %.2f, \"p99_9\": %.2f}",
				lat[i].bytes, lat[i].iters, lat[i].t_min, lat[i].t_max,
				lat[i].t_typical, lat[i].t_avg, lat[i].t_stdev, lat[i].p99,
				lat[i].p999);
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "droce-perf: %s: %s\n", c->o->json_path, strerror(errno));
		return -1;
	}
	return 0;
}

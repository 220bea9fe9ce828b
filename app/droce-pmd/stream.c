/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streams and the thread that runs them. A stream is one QP posting messages
 * of one operation to its peer; the stream thread posts for every running
 * stream, polls the CQs of their QPs and hands each completion to the stream
 * its work request id names (a QP may send for one stream and respond for
 * another). The console starts, stops and reads streams under one lock, which
 * the thread holds for each pass over the streams and gives up between passes.
 *
 * Stopping: no new message is posted; the stream waits for the completions of
 * what it posted, SEND streams use up the receives they left posted with
 * zero-length SENDs, and the buffers are freed. What does not complete within
 * DRAIN_NS (a QP moved to a state that never completes) keeps its buffers
 * until its QP is reset or destroyed: nothing is freed while the engine may
 * still write it.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "droce_pmd.h"

#define POLL_BATCH  32
#define DRAIN_NS    (10ull * 1000000000ull)
#define IDLE_PASSES 1024 /* passes without work before the thread naps */
#define IDLE_NAP_NS 50000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int ctl_waiting; /* the console waits for the lock: the thread lets it in */
static pthread_t thread;
static bool thread_on, thread_quit;
static uint64_t loops, busy_loops;
static int thread_cpu = -1;

/* records, oldest first; ids grow and are never used again */
static struct pmd_stream *streams[PMD_STREAMS_MAX];
static unsigned int n_streams, next_id;

void pmd_lock(void)
{
	__atomic_add_fetch(&ctl_waiting, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&lock);
	__atomic_sub_fetch(&ctl_waiting, 1, __ATOMIC_RELAXED);
}

void pmd_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

const char *pmd_op_name(enum pmd_op op)
{
	static const char *const names[] = {
		[PMD_OP_WRITE] = "write",
		[PMD_OP_READ] = "read",
		[PMD_OP_SEND] = "send",
		[PMD_OP_ATOMIC] = "atomic",
	};

	return names[op];
}

const char *pmd_stream_state_name(int state)
{
	static const char *const names[] = {
		[PMD_STREAM_RUNNING] = "running", [PMD_STREAM_STOPPING] = "stopping",
		[PMD_STREAM_DONE] = "done",       [PMD_STREAM_STOPPED] = "stopped",
		[PMD_STREAM_FAILED] = "failed",
	};

	return names[state];
}

bool pmd_stream_finished(const struct pmd_stream *s)
{
	return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) > PMD_STREAM_STOPPING;
}

struct pmd_stream *pmd_stream_by_id(unsigned int id)
{
	for (unsigned int i = 0; i < n_streams; i++)
		if (streams[i]->id == id)
			return streams[i];
	return NULL;
}

unsigned int pmd_streams(struct pmd_stream **out, unsigned int max)
{
	unsigned int n = n_streams < max ? n_streams : max;

	memcpy(out, streams, n * sizeof(*out));
	return n;
}

void pmd_stream_thread_stats(uint64_t *l, uint64_t *b, int *cpu)
{
	*l = __atomic_load_n(&loops, __ATOMIC_RELAXED);
	*b = __atomic_load_n(&busy_loops, __ATOMIC_RELAXED);
	*cpu = __atomic_load_n(&thread_cpu, __ATOMIC_RELAXED);
}

/* Make room for one more record: the oldest finished one whose buffers are gone leaves. */
static int room(void)
{
	if (n_streams < PMD_STREAMS_MAX)
		return 0;
	for (unsigned int i = 0; i < n_streams; i++)
		if (pmd_stream_finished(streams[i]) && !streams[i]->live) {
			free(streams[i]);
			memmove(&streams[i], &streams[i + 1],
				(n_streams - i - 1) * sizeof(streams[0]));
			n_streams--;
			return 0;
		}
	return pmd_err("%d streams run or keep buffers: stop some first", PMD_STREAMS_MAX);
}

static int check_start(struct pmd_qp *req, struct pmd_qp *resp, enum pmd_op op, uint32_t size,
		       uint32_t depth)
{
	enum ibv_qp_state st = pmd_qp_state(req);
	uint32_t mtu = 128u << (req->port->attr.active_mtu < req->peer_port->attr.active_mtu
					? req->port->attr.active_mtu
					: req->peer_port->attr.active_mtu);

	if (resp == NULL)
		return pmd_err("qp %u has no peer: it was destroyed", req->id);
	if (st != IBV_QPS_RTS)
		return pmd_err("qp %u is in %s: a stream needs RTS", req->id,
			       pmd_qp_state_name(st));
	if ((op == PMD_OP_READ || op == PMD_OP_ATOMIC) && req->type != IBV_QPT_RC)
		return pmd_err("%s needs an RC QP; qp %u is %s", pmd_op_name(op), req->id,
			       pmd_qp_type_name(req->type));
	if (op == PMD_OP_WRITE && req->type == IBV_QPT_UD)
		return pmd_err("write needs an RC or UC QP; qp %u is UD", req->id);
	if (op == PMD_OP_ATOMIC && size != 8)
		return pmd_err("atomic operations are 8 bytes: size 8");
	if (req->type == IBV_QPT_UD && size > mtu)
		return pmd_err("a UD message fits one packet: size up to %u", mtu);
	if ((uint64_t)((size + PMD_UD_GRH + 63) & ~63u) * depth > PMD_MEM_MAX)
		return pmd_err("size x depth above %u MiB", PMD_MEM_MAX >> 20);
	if (req->tx != NULL)
		return pmd_err("qp %u %s stream %u%s", req->id,
			       pmd_stream_finished(req->tx) ? "still has buffers of" : "runs",
			       req->tx->id,
			       pmd_stream_finished(req->tx)
				       ? ": its work requests never completed (modify qp ... "
					 "state reset frees them)"
				       : "");
	if (resp->rx != NULL)
		return pmd_err("qp %u %s stream %u%s", resp->id,
			       pmd_stream_finished(resp->rx) ? "still has buffers of" : "takes",
			       resp->rx->id,
			       pmd_stream_finished(resp->rx)
				       ? ": receives it posted were never used (modify qp ... "
					 "state reset frees them)"
				       : "");
	return 0;
}

struct pmd_stream *pmd_stream_start(struct pmd_qp *req, enum pmd_op op, uint32_t size,
				    uint32_t depth, double rate, uint64_t count)
{
	struct pmd_qp *resp = pmd_qp_by_id(req->peer);
	struct pmd_stream *s;

	if (check_start(req, resp, op, size, depth) != 0 || room() != 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		pmd_err("out of memory");
		return NULL;
	}
	s->id = next_id;
	s->req = req;
	s->resp = resp;
	s->req_id = req->id;
	s->resp_id = resp->id;
	s->type = req->type;
	s->op = op;
	s->size = size;
	s->depth = depth;
	s->rate = rate;
	s->count = count;
	/* a UC WRITE completes when it leaves: nothing says when to look at the target */
	s->checked = !(op == PMD_OP_WRITE && s->type == IBV_QPT_UC) &&
		     !(op == PMD_OP_SEND && s->type != IBV_QPT_RC && size < 8);
	s->numbered = op == PMD_OP_SEND && size >= 8;
	if (pmd_stream_mem_init(s) != 0) {
		free(s);
		return NULL;
	}
	next_id++;
	req->tx = s;
	resp->rx = s;
	s->t_start_ns = pmd_now_ns();
	s->last_rx_ns = s->t_start_ns;
	s->state = PMD_STREAM_RUNNING;
	s->live = true;
	streams[n_streams++] = s;
	pthread_cond_signal(&wake);
	return s;
}

void pmd_stream_request_stop(struct pmd_stream *s)
{
	s->stop = true;
}

void pmd_streams_qp_gone(struct pmd_qp *q, bool destroyed)
{
	for (unsigned int i = 0; i < n_streams; i++) {
		struct pmd_stream *s = streams[i];

		if (s->req == q) {
			s->sends_gone = true;
			if (destroyed)
				s->req = NULL;
		}
		if (s->resp == q) {
			s->recvs_gone = true;
			if (destroyed)
				s->resp = NULL;
		}
	}
	if (destroyed) {
		q->tx = NULL;
		q->rx = NULL;
	}
}

/* ------------------------------------------------------------ the thread */

static struct pmd_stream *live_by_id(unsigned int id)
{
	for (unsigned int i = 0; i < n_streams; i++)
		if (streams[i]->id == id && streams[i]->live)
			return streams[i];
	return NULL;
}

static unsigned int poll_qp(struct pmd_qp *q, uint64_t now)
{
	struct ibv_wc wc[POLL_BATCH];
	int n;

	if (q == NULL)
		return 0;
	n = ibv_poll_cq(q->cq, POLL_BATCH, wc);
	for (int i = 0; i < n; i++) {
		struct pmd_stream *s = live_by_id(PMD_WR_STREAM(wc[i].wr_id));

		if (s != NULL)
			pmd_stream_complete(s, &wc[i], now);
		else
			q->stale_cqes++;
	}
	return n > 0 ? (unsigned int)n : 0;
}

static uint64_t sends_outstanding(const struct pmd_stream *s)
{
	return s->sends_gone ? 0 : s->posted + s->drains_posted - s->send_cqes;
}

static uint64_t recvs_outstanding(const struct pmd_stream *s)
{
	return s->recvs_gone ? 0 : s->rx_posted - s->rx_cqes;
}

static bool count_reached(const struct pmd_stream *s)
{
	if (s->count == 0 || s->posted < s->count || sends_outstanding(s) > 0)
		return false;
	if (s->op != PMD_OP_SEND)
		return true;
	return s->received + s->lost >= s->count;
}

static void enter_stopping(struct pmd_stream *s, int final, uint64_t now)
{
	s->final = final;
	s->stop_ns = now;
	s->state = PMD_STREAM_STOPPING;
}

void pmd_stream_fail(struct pmd_stream *s, const char *fmt, ...)
{
	va_list ap;

	if (s->error[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(s->error, sizeof(s->error), fmt, ap);
		va_end(ap);
	}
	if (s->state == PMD_STREAM_RUNNING)
		enter_stopping(s, PMD_STREAM_FAILED, pmd_now_ns());
	else if (s->state == PMD_STREAM_STOPPING)
		s->final = PMD_STREAM_FAILED;
}

static void release(struct pmd_stream *s)
{
	pmd_stream_mem_free(s);
	if (s->req != NULL && s->req->tx == s)
		s->req->tx = NULL;
	if (s->resp != NULL && s->resp->rx == s)
		s->resp->rx = NULL;
	s->live = false;
}

/* A finished stream whose work requests may still complete: free once nothing is out. */
static void retired_pass(struct pmd_stream *s)
{
	if (sends_outstanding(s) == 0 && recvs_outstanding(s) == 0)
		release(s);
}

static void finish(struct pmd_stream *s, uint64_t now)
{
	if (s->final != PMD_STREAM_FAILED && s->check_errors > 0)
		s->final = PMD_STREAM_FAILED;
	/* UC, UD: once the drains came back, what did not arrive never will */
	if (s->op == PMD_OP_SEND && s->type != IBV_QPT_RC)
		s->lost = s->posted > s->received ? s->posted - s->received : 0;
	s->t_end_ns = now;
	/* pairs with the acquire load of pmd_stream_finished(): the totals are final */
	__atomic_store_n(&s->state, s->final, __ATOMIC_RELEASE);
}

static void stopping_pass(struct pmd_stream *s, uint64_t now)
{
	bool drained;

	if (s->type != IBV_QPT_RC && s->op == PMD_OP_SEND)
		pmd_stream_lost_check(s, now);
	if (sends_outstanding(s) > 0 && now - s->stop_ns < DRAIN_NS)
		return;
	drained = recvs_outstanding(s) == 0 ||
		  (s->final != PMD_STREAM_FAILED && pmd_stream_drain_recvs(s, now));
	if (!drained && s->final != PMD_STREAM_FAILED && now - s->stop_ns < DRAIN_NS)
		return;
	finish(s, now);
	retired_pass(s); /* what is still out keeps the buffers */
}

static unsigned int stream_pass(struct pmd_stream *s, uint64_t now)
{
	unsigned int work = poll_qp(s->req, now);

	if (s->resp != s->req)
		work += poll_qp(s->resp, now);
	switch (s->state) {
	case PMD_STREAM_RUNNING:
		if (s->stop)
			enter_stopping(s, PMD_STREAM_STOPPED, now);
		else if (count_reached(s))
			enter_stopping(s, PMD_STREAM_DONE, now);
		else if (s->sends_gone || s->recvs_gone)
			pmd_stream_fail(s, "qp %u was reset or destroyed under the stream",
					s->sends_gone ? s->req_id : s->resp_id);
		else {
			uint64_t before = s->posted + s->rx_posted;

			if (s->type != IBV_QPT_RC && s->op == PMD_OP_SEND)
				pmd_stream_lost_check(s, now);
			pmd_stream_post(s, now);
			work += s->posted + s->rx_posted != before;
		}
		break;
	case PMD_STREAM_STOPPING:
		stopping_pass(s, now);
		work++;
		break;
	default:
		retired_pass(s);
		break;
	}
	return work;
}

/* The engine polls on the last CPU (doc/verbs.md): this thread spins too, so it keeps off it. */
static void leave_engine_cpu(void)
{
	cpu_set_t set;
	int last = -1;

	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 2)
		return;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			last = i;
	CPU_CLR(last, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

static bool any_live(void)
{
	for (unsigned int i = 0; i < n_streams; i++)
		if (streams[i]->live)
			return true;
	return false;
}

static void *thread_main(void *arg)
{
	unsigned int idle = 0;

	(void)arg;
	leave_engine_cpu();
	__atomic_store_n(&thread_cpu, sched_getcpu(), __ATOMIC_RELAXED);
	pthread_mutex_lock(&lock);
	while (!thread_quit) {
		unsigned int work = 0;
		uint64_t now;

		if (!any_live()) {
			pthread_cond_wait(&wake, &lock);
			continue;
		}
		now = pmd_now_ns();
		for (unsigned int i = 0; i < n_streams; i++)
			if (streams[i]->live)
				work += stream_pass(streams[i], now);
		__atomic_store_n(&loops, loops + 1, __ATOMIC_RELAXED);
		if (work > 0)
			__atomic_store_n(&busy_loops, busy_loops + 1, __ATOMIC_RELAXED);
		if ((loops & 1023) == 0)
			__atomic_store_n(&thread_cpu, sched_getcpu(), __ATOMIC_RELAXED);
		pthread_mutex_unlock(&lock);
		while (__atomic_load_n(&ctl_waiting, __ATOMIC_RELAXED) > 0)
			sched_yield();
		idle = work > 0 ? 0 : idle + 1;
		if (idle > IDLE_PASSES)
			pmd_sleep_ns(
				IDLE_NAP_NS); /* a slow rate or a quiet link: the CPU is shared */
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int pmd_stream_thread_start(void)
{
	int rc = pthread_create(&thread, NULL, thread_main, NULL);

	if (rc != 0)
		return pmd_err("pthread_create: %s", strerror(rc));
	thread_on = true;
	return 0;
}

void pmd_stream_thread_stop(void)
{
	if (!thread_on)
		return;
	pmd_lock();
	thread_quit = true;
	pthread_cond_signal(&wake);
	pmd_unlock();
	pthread_join(thread, NULL);
	thread_on = false;
}

void pmd_streams_stop_all(void)
{
	bool waiting = true;

	pmd_lock();
	for (unsigned int i = 0; i < n_streams; i++)
		pmd_stream_request_stop(streams[i]);
	pmd_unlock();
	while (waiting) {
		waiting = false;
		pmd_lock();
		for (unsigned int i = 0; i < n_streams; i++)
			waiting = waiting || !pmd_stream_finished(streams[i]);
		pmd_unlock();
		if (waiting)
			pmd_sleep_ns(1000000);
	}
}

void pmd_streams_free_all(void)
{
	for (unsigned int i = 0; i < n_streams; i++) {
		pmd_stream_mem_free(streams[i]);
		free(streams[i]);
	}
	n_streams = 0;
}

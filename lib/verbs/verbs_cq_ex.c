/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended poll API of a CQ (ibv_start_poll / ibv_next_poll / ibv_end_poll
 * and the ibv_wc_read_* accessors) over the same CQE ring as ibv_poll_cq().
 * Between start and end the CQ's lock is held (unless single-threaded); a
 * next_poll that finds another entry releases the one read before, and
 * end_poll releases the last one read. Entries of QPs reset since are
 * skipped here too (verbs_cq_purge.c).
 */
#include <errno.h>
#include <string.h>

#include "verbs_priv.h"

static struct droce_cq *to_dcq_ex(struct ibv_cq_ex *cq)
{
	return DROCE_CONTAINER_OF(cq, struct droce_cq, ibcq);
}

/*
 * Read the entry at the tail into cq->cur, releasing first those of QPs reset
 * since (verbs_cq_purge.c); ENOENT when the ring has nothing else.
 */
static int load_current(struct droce_cq *cq)
{
	for (;;) {
		int avail = droce_ring_cons_avail(&cq->cons);

		if (avail < 0)
			return EIO; /* the engine corrupted the ring */
		if (avail == 0)
			return ENOENT;
		memcpy(&cq->cur, droce_ring_cons_slot(&cq->cons, 0), sizeof(cq->cur));
		if (cq->purge_count == 0 || !droce_cq_purged(cq, cq->cons.tail, &cq->cur))
			break;
		droce_ring_cons_release(&cq->cons, 1);
		droce_cq_purge_expire(cq);
	}
	cq->cur_held = true;
	cq->ibcq.status = (enum ibv_wc_status)cq->cur.status;
	cq->ibcq.wr_id = cq->cur.wr_id;
	return 0;
}

static int start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct droce_cq *cq = to_dcq_ex(ibcq);
	int rc;

	if (attr->comp_mask != 0)
		return EINVAL;
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
	rc = load_current(cq);
	/* on ENOENT the application does not call end_poll: unlock now */
	if (rc != 0 && !cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
	return rc;
}

static int next_poll(struct ibv_cq_ex *ibcq)
{
	struct droce_cq *cq = to_dcq_ex(ibcq);
	int avail = droce_ring_cons_avail(&cq->cons);

	if (avail < 0)
		return EIO; /* the engine corrupted the ring */
	/*
	 * The entry read last is still held. With nothing after it, keep it:
	 * the application calls end_poll() after ENOENT too, and that releases
	 * it (releasing here as well would release an entry not yet read).
	 */
	if (!cq->cur_held || avail < 2)
		return ENOENT;
	droce_ring_cons_release(&cq->cons, 1);
	cq->cur_held = false;
	/* all that followed may be skipped entries: then nothing is held for end_poll */
	return load_current(cq);
}

static void end_poll(struct ibv_cq_ex *ibcq)
{
	struct droce_cq *cq = to_dcq_ex(ibcq);

	if (cq->cur_held) {
		droce_ring_cons_release(&cq->cons, 1);
		cq->cur_held = false;
		if (cq->purge_count != 0)
			droce_cq_purge_expire(cq);
	}
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *c)
{
	return (enum ibv_wc_opcode)to_dcq_ex(c)->cur.opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *c)
{
	return to_dcq_ex(c)->cur.vendor_err;
}

static uint32_t read_byte_len(struct ibv_cq_ex *c)
{
	return to_dcq_ex(c)->cur.byte_len;
}

static __be32 read_imm_data(struct ibv_cq_ex *c)
{
	return to_dcq_ex(c)->cur.imm;
}

static uint32_t read_qp_num(struct ibv_cq_ex *c)
{
	return to_dcq_ex(c)->cur.qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *c)
{
	return to_dcq_ex(c)->cur.src_qp;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *c)
{
	return to_dcq_ex(c)->cur.wc_flags;
}

static uint32_t read_slid(struct ibv_cq_ex *c)
{
	return to_dcq_ex(c)->cur.slid;
}

static uint8_t read_sl(struct ibv_cq_ex *c)
{
	return to_dcq_ex(c)->cur.sl;
}

static uint8_t read_dlid_path_bits(struct ibv_cq_ex *c)
{
	return to_dcq_ex(c)->cur.dlid_path_bits;
}

void droce_cq_ex_init(struct droce_cq *cq)
{
	struct ibv_cq_ex *c = &cq->ibcq;

	c->start_poll = start_poll;
	c->next_poll = next_poll;
	c->end_poll = end_poll;
	/* opcode, vendor error and flags are always readable; others as requested */
	c->read_opcode = read_opcode;
	c->read_vendor_err = read_vendor_err;
	c->read_wc_flags = read_wc_flags;
	if (cq->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		c->read_byte_len = read_byte_len;
	if (cq->wc_flags & IBV_WC_EX_WITH_IMM)
		c->read_imm_data = read_imm_data;
	if (cq->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		c->read_qp_num = read_qp_num;
	if (cq->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		c->read_src_qp = read_src_qp;
	if (cq->wc_flags & IBV_WC_EX_WITH_SLID)
		c->read_slid = read_slid;
	if (cq->wc_flags & IBV_WC_EX_WITH_SL)
		c->read_sl = read_sl;
	if (cq->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		c->read_dlid_path_bits = read_dlid_path_bits;
}

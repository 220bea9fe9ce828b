/* SPDX-License-Identifier: BSD-3-Clause */
/* Names of the CM states and events, for counters and logs. */
#include "cm_priv.h"

const char *const droce_cm_state_name[DROCE_CM_STATE_COUNT] = {
	[DROCE_CM_IDLE] = "idle",
	[DROCE_CM_LISTEN] = "listen",
	[DROCE_CM_REQ_SENT] = "req_sent",
	[DROCE_CM_REQ_RCVD] = "req_rcvd",
	[DROCE_CM_MRA_REQ_SENT] = "mra_req_sent",
	[DROCE_CM_MRA_REQ_RCVD] = "mra_req_rcvd",
	[DROCE_CM_REP_SENT] = "rep_sent",
	[DROCE_CM_REP_RCVD] = "rep_rcvd",
	[DROCE_CM_MRA_REP_SENT] = "mra_rep_sent",
	[DROCE_CM_MRA_REP_RCVD] = "mra_rep_rcvd",
	[DROCE_CM_ESTABLISHED] = "established",
	[DROCE_CM_DREQ_SENT] = "dreq_sent",
	[DROCE_CM_DREQ_RCVD] = "dreq_rcvd",
	[DROCE_CM_TIMEWAIT] = "timewait",
	[DROCE_CM_SIDR_REQ_SENT] = "sidr_req_sent",
	[DROCE_CM_SIDR_REQ_RCVD] = "sidr_req_rcvd",
};

const char *const droce_cm_event_name[DROCE_CM_EV_COUNT] = {
	[DROCE_CM_EV_REQ_RCVD] = "req_rcvd",
	[DROCE_CM_EV_REQ_ERROR] = "req_error",
	[DROCE_CM_EV_REP_RCVD] = "rep_rcvd",
	[DROCE_CM_EV_REP_ERROR] = "rep_error",
	[DROCE_CM_EV_RTU_RCVD] = "rtu_rcvd",
	[DROCE_CM_EV_USER_ESTABLISHED] = "user_established",
	[DROCE_CM_EV_MRA_RCVD] = "mra_rcvd",
	[DROCE_CM_EV_REJ_RCVD] = "rej_rcvd",
	[DROCE_CM_EV_DREQ_RCVD] = "dreq_rcvd",
	[DROCE_CM_EV_DREQ_ERROR] = "dreq_error",
	[DROCE_CM_EV_DREP_RCVD] = "drep_rcvd",
	[DROCE_CM_EV_TIMEWAIT_EXIT] = "timewait_exit",
	[DROCE_CM_EV_SIDR_REQ_RCVD] = "sidr_req_rcvd",
	[DROCE_CM_EV_SIDR_REP_RCVD] = "sidr_rep_rcvd",
	[DROCE_CM_EV_SIDR_REQ_ERROR] = "sidr_req_error",
};

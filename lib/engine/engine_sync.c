/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waiting for the engine lcore to finish the pass it is in. A key that was
 * deregistered may still be in use by a packet the lcore is processing; once
 * a command has gone through the lcore's loop top, no packet that found the
 * old key is still being copied.
 */
#include "engine_priv.h"

void droce_engine_sync(void)
{
	struct engine_cmd c = {.type = CMD_NONE};

	/* CMD_NONE changes nothing; its only effect is the round trip */
	(void)engine_cmd_run(&c);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A memif client port opened before its server exists: it opens configured but
 * stopped (link down, nothing received, what is sent dropped and counted), and
 * starts once the server is there; then frames cross. The server is another
 * process (memif does not join two ends of one process).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <droce_port.h>

#include "droce_test.h"

static char dir[64], client_args[160], server_args[160];
static struct droce_port client;
static pid_t server_pid;
static int go[2], got_tag[2];

/* The server process: waits to be told, opens its end, reports the first frame's tag. */
static void server_main(void)
{
	struct droce_port_conf c = {.nb_queues = 1, .nb_mbufs = 1023, .socket = SOCKET_ID_ANY};
	struct droce_port server;
	struct rte_mbuf *m;
	uint8_t b;

	if (read(go[0], &b, 1) != 1)
		_exit(2);
	droce_test_eal_init("port_memif_server");
	c.device = server_args;
	if (droce_port_open(&server, &c) != 0)
		_exit(3);
	if (write(got_tag[1], "o", 1) != 1) /* open */
		_exit(4);
	fcntl(go[0], F_SETFL, O_NONBLOCK);
	/* until the test closes its end of the pipe */
	while (read(go[0], &b, 1) != 0) {
		if (droce_port_rx(&server, 0, &m, 1) == 1) {
			b = rte_pktmbuf_mtod(m, uint8_t *)[10];
			if (write(got_tag[1], &b, 1) != 1)
				_exit(5);
			rte_pktmbuf_free(m);
		}
		usleep(500);
	}
	droce_port_close(&server);
	droce_test_eal_fini();
	_exit(0);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/droce-memif-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(client_args, sizeof(client_args),
		 "net_memif7,role=client,id=3,socket=%s/m.sock,socket-abstract=no", dir);
	snprintf(server_args, sizeof(server_args),
		 "net_memif8,role=server,id=3,socket=%s/m.sock,socket-abstract=no", dir);
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(got_tag), 0);
	/* before this process's EAL: the child starts its own */
	server_pid = fork();
	cr_assert_geq(server_pid, 0);
	if (server_pid == 0) {
		close(go[1]); /* its EOF is the server's signal to go */
		close(got_tag[0]);
		server_main();
	}
	close(go[0]);
	close(got_tag[1]);
	droce_test_eal_init("port_memif");
}

static void teardown(void)
{
	char cmd[96];

	close(go[1]); /* the server cleans up and exits */
	waitpid(server_pid, NULL, 0);
	droce_port_close(&client);
	droce_test_eal_fini();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		(void)0;
}

TestSuite(port_memif, .init = setup, .fini = teardown, .timeout = 60);

static struct rte_mbuf *frame(struct droce_port *p, uint8_t tag)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	uint8_t *d;

	cr_assert_not_null(m);
	d = (uint8_t *)rte_pktmbuf_append(m, 64);
	cr_assert_not_null(d);
	memset(d, tag, 64);
	return m;
}

Test(port_memif, a_client_before_its_server_starts_later)
{
	struct droce_port_conf c = {.nb_queues = 1, .nb_mbufs = 1023, .socket = SOCKET_ID_ANY};
	struct rte_mbuf *got[4];
	uint8_t tag = 0;

	c.device = client_args;
	cr_expect_neq(droce_port_open(&client, &c), 0, "without start_later the open fails");
	c.start_later = true;
	cr_assert_eq(droce_port_open(&client, &c), 0);
	cr_expect(client.configured);
	cr_expect_not(client.started, "no server: not started");
	cr_expect_not(droce_port_link_up(&client));
	cr_expect_eq(droce_port_rx(&client, 0, got, 4), 0);
	droce_port_tx(&client, 0, frame(&client, 1));
	droce_port_tx_flush(&client, 0);
	cr_expect_eq(client.qstats[0].tx_dropped, 1, "sent while stopped: dropped and counted");
	cr_expect_neq(droce_port_try_start(&client), 0, "still no server");
	/* the server comes; the client starts on its next try */
	cr_assert_eq(write(go[1], "g", 1), 1);
	cr_assert_eq(read(got_tag[0], &tag, 1), 1);
	cr_assert_eq(tag, 'o', "the server opened");
	cr_assert_eq(droce_port_try_start(&client), 0, "the server is there");
	cr_expect(client.started);
	for (int i = 0; i < 5000 && !droce_port_link_up(&client); i++)
		usleep(1000);
	cr_assert(droce_port_link_up(&client), "memif connected");
	droce_port_tx(&client, 0, frame(&client, 7));
	droce_port_tx_flush(&client, 0);
	cr_assert_eq(read(got_tag[0], &tag, 1), 1);
	cr_expect_eq(tag, 7, "the frame crossed");
}

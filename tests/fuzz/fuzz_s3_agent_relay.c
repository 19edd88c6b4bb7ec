/* SPDX-License-Identifier: MIT */
/*
 * The agent process of fuzz_s3_agent's application side: s3-agent starts LLMIO_AGENT_EXE with
 * its socket on fd 3; this program hands that socket to the harness (over the abstract unix
 * socket LLMIO_FUZZ_RELAY names) and exits, so that the harness plays the agent in its own
 * process with the fuzzer's bytes.  Built without sanitizers: it starts once per input.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(void)
{
	const char *name = getenv("LLMIO_FUZZ_RELAY");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char ctl[CMSG_SPACE(sizeof(int))] = {0}, byte = 0;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov,
	                   .msg_iovlen = 1,
	                   .msg_control = ctl,
	                   .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int fd = 3, s = socket(AF_UNIX, SOCK_STREAM, 0);
	size_t len;

	if (!name || s < 0 || (len = strlen(name)) + 1 > sizeof(sa.sun_path))
		return 1;
	memcpy(sa.sun_path + 1, name, len); /* abstract: sun_path[0] is 0 */
	if (connect(s, (struct sockaddr *)&sa,
	            (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)))
		return 1;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	return sendmsg(s, &m, 0) == 1 ? 0 : 1;
}

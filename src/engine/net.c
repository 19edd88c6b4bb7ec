/* SPDX-License-Identifier: MIT */
/*
 * net: reads and writes on a socket instead of a file (fio's net engine, engines/net.c), so
 * that a job file of fio's net engine runs as in fio: a sender's writes are send(), a
 * receiver's (listen) reads are recv(), bs bytes each; `size` ends the transfer on each side
 * and the receiver also ends when the sender closes.  Its figures are network bytes, not
 * storage's (docs/engines.md).
 *
 * What fio's peers say to each other is kept, so that either side can be fio: a sender ends
 * with fio's 8-byte close message (its magic and command little-endian), and a UDP sender
 * opens with fio's open message (big-endian, as fio sends it) that the receiver waits for.  A
 * read cut short by the end of the stream drops a close message at its tail: it is not data.
 *
 * Blocking calls wait in slices (SLICE_MS) that look at the job's stop flag, so that a run
 * ends on time and Ctrl-C ends an accept() that no sender comes to.  llmio never removes a
 * unix socket it did not make, and without SO_REUSEPORT a port in use is an error that names
 * it, not a second listener.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/engine.h"
#include "base/error.h"

enum { PROTO_TCP, PROTO_UDP, PROTO_UNIX, PROTO_TCPV6, PROTO_UDPV6 };
static const char *const proto_names[] = {"tcp", "udp", "unix", "tcpv6", "udpv6"};

struct net_opts {
	char hostname[256]; /* a DNS name (253) or a unix socket path (sun_path, 108) */
	int port;
	int protocol;
	int listen;
	int nodelay;
	int pingpong;
	int window_size;
	int mss;
	int ttl;
};

/* fio's link messages: magic "link", then the command */
#define LINK_MAGIC 0x6c696e6bu
#define LINK_CLOSE 0x89u
#define LINK_OPEN  0x98u
#define SLICE_MS   100 /* how often a blocked call looks at the stop flag */

static const struct llmio_optdesc net_options[] = {
        {
                .name = "hostname",
                .type = OPTD_STRING,
                OPTD_FIELD(struct net_opts, hostname),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "",
                .help = "the receiver a sender connects to (a name or address; a unix "
                        "socket's path); with listen, the address to listen on (fio: any)",
                .fio_kind = OPTD_FIO_CUSTOM,
        },
        {
                .name = "port",
                .type = OPTD_INT,
                OPTD_FIELD(struct net_opts, port),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .min = 0,
                .max = 65535,
                .help = "TCP or UDP port (1-65535; required but for unix)",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "protocol",
                .alias = "proto",
                .type = OPTD_ENUM,
                OPTD_FIELD(struct net_opts, protocol),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "tcp",
                .choices = "tcp|udp|unix|tcpv6|udpv6",
                .help = "the socket's protocol",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "listen",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct net_opts, listen),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "wait for one sender to connect (the receiver) instead of connecting",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "nodelay",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct net_opts, nodelay),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "TCP_NODELAY: send each write at once (tcp)",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "pingpong",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct net_opts, pingpong),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "each write waits for its echo and each read is echoed back, so an "
                        "I/O's latency is a round trip",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "window_size",
                .type = OPTD_INT,
                OPTD_FIELD(struct net_opts, window_size),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .min = 0,
                .max = 1 << 30,
                .help = "socket buffer bytes (SO_SNDBUF and SO_RCVBUF); 0 = the kernel's",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "mss",
                .type = OPTD_INT,
                OPTD_FIELD(struct net_opts, mss),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .min = 0,
                .max = 65535,
                .help = "TCP maximum segment size (TCP_MAXSEG); 0 = the kernel's",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "ttl",
                .type = OPTD_INT,
                OPTD_FIELD(struct net_opts, ttl),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "1",
                .min = 0,
                .max = 255,
                .help = "time to live of a sender's multicast datagrams (udp to a group)",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {.name = NULL},
};

struct net_data {
	struct net_opts o;
	const atomic_int *stop;
	int fd;
	bool udp, listen, mcast, eof;
	struct sockaddr_storage peer; /* udp: where data, replies and the close message go */
	socklen_t peer_len;
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* a unix socket we made */
};

static bool stopped(const struct net_data *d)
{
	return d->stop && atomic_load_explicit(d->stop, memory_order_relaxed);
}

static bool is_udp(int proto)
{
	return proto == PROTO_UDP || proto == PROTO_UDPV6;
}

static bool is_v6(int proto)
{
	return proto == PROTO_TCPV6 || proto == PROTO_UDPV6;
}

/* Wait until fd is ready for events; 1 ready, 0 stopped, -errno. */
static int wait_fd(const struct net_data *d, int fd, short events)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int n;

		if (stopped(d))
			return 0;
		n = poll(&p, 1, SLICE_MS);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int set_int(int fd, int level, int name, int v)
{
	return setsockopt(fd, level, name, &v, sizeof(v)) ? -errno : 0;
}

/* window_size, mss, nodelay on a socket; 0 or -errno with the option named in e. */
static int tune(const struct net_data *d, int fd, struct llmio_error *e)
{
	const struct net_opts *o = &d->o;
	const bool tcp = !is_udp(o->protocol) && o->protocol != PROTO_UNIX;
	int ret = 0;
	const char *what = "";

	if (o->window_size && ((ret = set_int(fd, SOL_SOCKET, SO_SNDBUF, o->window_size)) ||
	                       (ret = set_int(fd, SOL_SOCKET, SO_RCVBUF, o->window_size))))
		what = "window_size (SO_SNDBUF, SO_RCVBUF)";
	else if (tcp && o->mss && (ret = set_int(fd, IPPROTO_TCP, TCP_MAXSEG, o->mss)))
		what = "mss (TCP_MAXSEG)";
	else if (tcp && o->nodelay && (ret = set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1)))
		what = "nodelay (TCP_NODELAY)";
	return ret ? llmio_err(e, ret, "engine net: cannot set %s: %s", what, strerror(-ret)) : 0;
}

/* The address of hostname:port (any address when hostname is empty); 0 or -errno with e. */
static int resolve(const struct net_opts *o, struct sockaddr_storage *ss, socklen_t *len,
                   struct llmio_error *e)
{
	const int af = is_v6(o->protocol) ? AF_INET6 : AF_INET;
	struct addrinfo hints = {.ai_family = af,
	                         .ai_socktype = is_udp(o->protocol) ? SOCK_DGRAM : SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	char port[8];
	int g;

	snprintf(port, sizeof(port), "%d", o->port);
	g = getaddrinfo(o->hostname[0] ? o->hostname : NULL, port, &hints, &res);
	if (g || !res)
		return llmio_err(e, g == EAI_SYSTEM && errno ? -errno : -EINVAL,
		                 "engine net: cannot resolve hostname=%s for %s: %s; give a name "
		                 "or address of this protocol's family",
		                 o->hostname, af == AF_INET6 ? "IPv6" : "IPv4", gai_strerror(g));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int unix_addr(const struct net_opts *o, struct sockaddr_un *un, struct llmio_error *e)
{
	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	if (!o->hostname[0] || strlen(o->hostname) >= sizeof(un->sun_path))
		return llmio_err(e, -EINVAL,
		                 "engine net: protocol=unix needs hostname=PATH, the socket's path "
		                 "(under %zu bytes)",
		                 sizeof(un->sun_path));
	memcpy(un->sun_path, o->hostname, strlen(o->hostname) + 1);
	return 0;
}

/* A socket of the job's protocol; -errno with e. */
static int open_socket(const struct net_opts *o, struct llmio_error *e)
{
	const int af = o->protocol == PROTO_UNIX ? AF_UNIX
	               : is_v6(o->protocol)      ? AF_INET6
	                                         : AF_INET;
	int fd = socket(af, (is_udp(o->protocol) ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);

	return fd < 0 ? llmio_err(e, -errno, "engine net: socket: %s", strerror(errno)) : fd;
}

/* fio's link message cmd (open big-endian, close little-endian: as fio sends them). */
static void link_msg(uint8_t msg[8], uint32_t cmd)
{
	for (int i = 0; i < 4; i++) {
		if (cmd == LINK_OPEN) {
			msg[i] = (uint8_t)(LINK_MAGIC >> (24 - 8 * i));
			msg[4 + i] = (uint8_t)(cmd >> (24 - 8 * i));
		} else {
			msg[i] = (uint8_t)(LINK_MAGIC >> (8 * i));
			msg[4 + i] = (uint8_t)(cmd >> (8 * i));
		}
	}
}

static bool is_close(const void *p, size_t n)
{
	uint8_t msg[8];

	link_msg(msg, LINK_CLOSE);
	return n == sizeof(msg) && !memcmp(p, msg, sizeof(msg));
}

/* The receiver: bind, then accept one sender (tcp, unix) or wait for fio's open (udp). */
static int do_listen(struct net_data *d, struct llmio_error *e)
{
	const struct net_opts *o = &d->o;
	struct sockaddr_storage ss;
	struct sockaddr_un un;
	socklen_t len = 0;
	int lfd, ret;

	if (o->protocol == PROTO_UNIX) {
		struct stat st;

		ret = unix_addr(o, &un, e);
		if (ret)
			return ret;
		if (!lstat(o->hostname, &st))
			return llmio_err(e, -EEXIST,
			                 "engine net: %s exists already; llmio listens only on a "
			                 "socket it makes: remove it or give another hostname=PATH",
			                 o->hostname);
		memcpy(&ss, &un, sizeof(un));
		len = sizeof(un);
	} else if ((ret = resolve(o, &ss, &len, e))) {
		return ret;
	}
	lfd = open_socket(o, e);
	if (lfd < 0)
		return lfd;
	/* a port in TIME_WAIT is free again; UDP shares a port only among a group's members */
	ret = (!d->udp && o->protocol != PROTO_UNIX) || d->mcast
	              ? set_int(lfd, SOL_SOCKET, SO_REUSEADDR, 1)
	              : 0;
	if (!ret)
		ret = tune(d, lfd, e);
	else
		llmio_err(e, ret, "engine net: SO_REUSEADDR: %s", strerror(-ret));
	if (!ret && d->mcast) {
		struct ip_mreq mr = {.imr_multiaddr = ((struct sockaddr_in *)&ss)->sin_addr,
		                     .imr_interface.s_addr = htonl(INADDR_ANY)};

		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_ANY);
		if (setsockopt(lfd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)))
			ret = llmio_err(e, -errno, "engine net: joining group %s: %s", o->hostname,
			                strerror(errno));
	}
	if (!ret && bind(lfd, (struct sockaddr *)&ss, len))
		ret = llmio_err(e, -errno,
		                errno == EADDRINUSE
		                        ? "engine net: port %d is in use (another listener): give "
		                          "another port=, or end the program that holds it"
		                        : "engine net: cannot listen on port %d: %s",
		                o->port, strerror(errno));
	if (ret)
		goto fail;
	if (o->protocol == PROTO_UNIX) /* the path unix_addr checked: it fits sun_path */
		memcpy(d->sock_path, un.sun_path, sizeof(d->sock_path));
	if (d->udp) {
		uint8_t msg[8], want[8];
		ssize_t n;

		/* as fio's receiver: the run starts with the sender's open message */
		link_msg(want, LINK_OPEN);
		do {
			ret = wait_fd(d, lfd, POLLIN);
			if (ret <= 0)
				goto gone;
			d->peer_len = sizeof(d->peer);
			n = recvfrom(lfd, msg, sizeof(msg), 0, (struct sockaddr *)&d->peer,
			             &d->peer_len);
		} while (n != sizeof(msg) || memcmp(msg, want, sizeof(msg)));
		d->fd = lfd;
		return 0;
	}
	if (listen(lfd, 1)) {
		ret = llmio_err(e, -errno, "engine net: listen: %s", strerror(errno));
		goto fail;
	}
	ret = wait_fd(d, lfd, POLLIN);
	if (ret <= 0)
		goto gone;
	d->fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (d->fd < 0) {
		ret = llmio_err(e, -errno, "engine net: accept: %s", strerror(errno));
		goto fail;
	}
	close(lfd);
	return tune(d, d->fd, e);
gone:
	ret = ret ? llmio_err(e, ret, "engine net: waiting for a sender: %s", strerror(-ret))
	          : llmio_err(e, -ECANCELED, "engine net: stopped while waiting for a sender");
fail:
	close(lfd);
	return ret;
}

/* The sender: connect to hostname:port (udp: only its address, then fio's open message). */
static int do_connect(struct net_data *d, struct llmio_error *e)
{
	const struct net_opts *o = &d->o;
	struct sockaddr_storage ss;
	socklen_t len;
	int ret;

	if (o->protocol == PROTO_UNIX) {
		struct sockaddr_un un;

		ret = unix_addr(o, &un, e);
		memcpy(&ss, &un, sizeof(un));
		len = sizeof(un);
	} else if (!o->hostname[0]) {
		ret = llmio_err(e, -EINVAL,
		                "engine net: a sender needs hostname=HOST to connect to (or listen "
		                "for a receiver)");
	} else {
		ret = resolve(o, &ss, &len, e);
	}
	if (ret)
		return ret;
	d->fd = open_socket(o, e);
	if (d->fd < 0)
		return d->fd;
	ret = tune(d, d->fd, e);
	if (ret)
		return ret;
	if (d->udp) {
		uint8_t msg[8];

		/* unconnected, as fio's: a pingpong echo comes from the receiver's own address */
		memcpy(&d->peer, &ss, len);
		d->peer_len = len;
		if (d->mcast && (ret = set_int(d->fd, IPPROTO_IP, IP_MULTICAST_TTL, o->ttl)))
			return llmio_err(e, ret, "engine net: ttl (IP_MULTICAST_TTL): %s",
			                 strerror(-ret));
		link_msg(msg, LINK_OPEN);
		if (sendto(d->fd, msg, sizeof(msg), 0, (struct sockaddr *)&d->peer, d->peer_len) <
		    0)
			return llmio_err(e, -errno, "engine net: udp open message to %s: %s",
			                 o->hostname, strerror(errno));
		return 0;
	}
	if (connect(d->fd, (struct sockaddr *)&ss, len))
		return llmio_err(e, -errno,
		                 "engine net: cannot connect to %s port %d: %s (is the receiver, a "
		                 "job with listen, running?)",
		                 o->hostname, o->port, strerror(errno));
	return 0;
}

static int net_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

static void net_cleanup(struct engine_ctx *ctx);

static int net_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	const struct net_opts *o = s->opts;
	struct net_data *d;
	struct in_addr group;
	int ret;

	if (!o || (!o->port && o->protocol != PROTO_UNIX))
		return llmio_err(e, -EINVAL, "engine net needs port=N (1-65535), or protocol=unix");
	if (s->nworkers > 1)
		return llmio_err(e, -EINVAL,
		                 "engine net: numjobs=%u: fio gives each clone a port of its own "
		                 "(port + N); here give each connection a job of its own",
		                 s->nworkers);
	/* fio's: over udp and unix sockets the job that reads is the receiver */
	if (o->listen && (is_udp(o->protocol) || o->protocol == PROTO_UNIX))
		return llmio_err(e, -EINVAL,
		                 "engine net: listen is for tcp: over %s the job that reads "
		                 "receives (as in fio); drop listen",
		                 proto_names[o->protocol]);
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->o = *o;
	d->stop = s->stop;
	d->fd = -1;
	d->udp = is_udp(o->protocol);
	d->listen = o->listen || ((d->udp || o->protocol == PROTO_UNIX) && !s->writable);
	d->mcast = o->protocol == PROTO_UDP && inet_aton(o->hostname, &group) &&
	           IN_MULTICAST(ntohl(group.s_addr));
	ctx->priv = d;
	ret = d->listen ? do_listen(d, e) : do_connect(d, e);
	if (ret) {
		net_cleanup(ctx);
		return ret;
	}
	snprintf(ctx->notes, sizeof(ctx->notes), "net: %s %s, %s port %d%s%s",
	         d->listen ? "received from a sender on" : "sent to",
	         o->hostname[0] ? o->hostname : "any address", proto_names[o->protocol], o->port,
	         o->nodelay ? ", nodelay" : "", o->pingpong ? ", pingpong" : "");
	return 0;
}

/* One send without waiting: udp to its peer (unconnected), a stream on its connection. */
static ssize_t to_peer(const struct net_data *d, const void *buf, size_t len)
{
	return sendto(d->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL,
	              d->udp ? (const struct sockaddr *)&d->peer : NULL, d->udp ? d->peer_len : 0);
}

/* Send all of buf; its length, or -errno (-ECANCELED: stopped). */
static int64_t send_all(struct net_data *d, const uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = to_peer(d, buf + done, len - done);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		n = wait_fd(d, d->fd, POLLOUT);
		if (n <= 0)
			return n ? n : -ECANCELED;
	}
	return (int64_t)done;
}

/*
 * Receive len bytes (udp: one datagram); fewer at the end of the stream, 0 once it ended (or
 * fio's close message came), -errno (-ECANCELED: stopped).
 */
static int64_t recv_all(struct net_data *d, uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (!d->eof && done < len) {
		ssize_t n = recv(d->fd, buf + done, len - done, MSG_DONTWAIT);

		if (n > 0 && d->udp) {
			if (is_close(buf, (size_t)n)) {
				d->eof = true;
				return 0;
			}
			return n;
		}
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0) {
			d->eof = true;
			break;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		n = wait_fd(d, d->fd, POLLIN);
		if (n <= 0)
			return n ? n : -ECANCELED;
	}
	if (d->eof && done >= 8 && is_close(buf + done - 8, 8))
		done -= 8; /* fio's sender said goodbye: not data */
	return (int64_t)done;
}

static int net_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct net_data *d = ctx->priv;
	int64_t r;

	if (io->op == ENGINE_OP_WRITE) {
		r = send_all(d, io->buf, io->len);
		if (r > 0 && d->o.pingpong)
			r = recv_all(d, io->buf, (size_t)r);
	} else {
		r = recv_all(d, io->buf, io->len);
		if (r > 0 && d->o.pingpong)
			r = send_all(d, io->buf, (size_t)r);
	}
	if (r == 0)
		ctx->ended = true; /* the peer ended the transfer: the job's last I/O */
	io->res = r; /* -ECANCELED only once stopped: the worker neither counts nor reports it */
	return ENGINE_Q_COMPLETED;
}

static void net_cleanup(struct engine_ctx *ctx)
{
	struct net_data *d = ctx->priv;

	if (!d)
		return;
	if (d->fd >= 0 && !d->listen) {
		uint8_t msg[8];

		/* as fio's sender: its receiver ends at this, whatever its size */
		link_msg(msg, LINK_CLOSE);
		(void)!to_peer(d, msg, sizeof(msg));
	}
	if (d->fd >= 0)
		close(d->fd);
	if (d->sock_path[0])
		unlink(d->sock_path); /* the socket this job made */
	free(d);
	ctx->priv = NULL;
}

static void net_fio_option(const struct llmio_optdesc *o, int v, struct engine_fio_job *j)
{
	const struct net_opts *no = j->opts;

	(void)o, (void)v;
	if (no->hostname[0])
		fprintf(j->f, "hostname=%s\n", no->hostname);
}

const struct engine_ops engine_net = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "net",
        .summary = "a socket, not a file: writes send, reads receive (tcp, udp, unix; fio's "
                   "net); network bytes",
        .caps = ENGINE_CAP_NO_IO | ENGINE_CAP_SOCKET,
        .opts = net_options,
        .opts_size = sizeof(struct net_opts),
        .probe = net_probe,
        .init = net_init,
        .queue = net_queue,
        .cleanup = net_cleanup,
        .fio_option = net_fio_option,
};

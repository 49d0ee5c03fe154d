/* The --health-check client; see healthcheck.h. */
#include "daemon/healthcheck.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Waits for fd to become readable or writable before the deadline. */
static int wait_fd(int fd, short ev, double deadline)
{
	for (;;) {
		int ms = (int)((deadline - now_s()) * 1000);
		if (ms <= 0)
			return -1;
		struct pollfd p = {fd, ev, 0};
		int r = poll(&p, 1, ms);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

int healthcheck(const char *url, double timeout_s, char *msg, size_t len)
{
	double deadline = now_s() + timeout_s;
	if (strncasecmp(url, "http://", 7)) {
		snprintf(msg, len, "'%s': only http:// URLs are supported", url);
		return -1;
	}
	char host[256], port[16] = "80", path[1024] = "/readyz";
	const char *h = url + 7, *slash = strchr(h, '/');
	size_t hl = slash ? (size_t)(slash - h) : strlen(h);
	if (!hl || hl >= sizeof host) {
		snprintf(msg, len, "'%s': no host", url);
		return -1;
	}
	memcpy(host, h, hl);
	host[hl] = 0;
	if (slash && slash[1])
		snprintf(path, sizeof path, "%s", slash);
	char *colon = host[0] == '[' ? strstr(host, "]:") : strrchr(host, ':');
	if (colon) {
		if (host[0] == '[')
			colon++;
		snprintf(port, sizeof port, "%s", colon + 1);
		*colon = 0;
	}
	char *hn = host;
	if (hn[0] == '[') {
		hn++;
		char *e = strchr(hn, ']');
		if (e)
			*e = 0;
	}
	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(hn, port, &hints, &ai);
	if (rc) {
		snprintf(msg, len, "%s: %s", hn, gai_strerror(rc));
		return -1;
	}
	int fd = -1, ok = -1;
	for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		int c = connect(fd, a->ai_addr, a->ai_addrlen);
		int e = 0;
		socklen_t el = sizeof e;
		if ((c && errno != EINPROGRESS) || wait_fd(fd, POLLOUT, deadline) ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) || e) {
			snprintf(msg, len, "connect to %s:%s: %s", hn, port,
			         strerror(e ? e : errno ? errno : ETIMEDOUT));
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return -1;
	char req[1400];
	int rl = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n"
	                  "User-Agent: fftbloomd-health-check\r\n\r\n", path, hn, port);
	for (int off = 0; off < rl;) {
		if (wait_fd(fd, POLLOUT, deadline))
			goto timeout;
		ssize_t w = send(fd, req + off, (size_t)(rl - off), MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			snprintf(msg, len, "send: %s", strerror(errno));
			goto out;
		}
		if (w > 0)
			off += (int)w;
	}
	char buf[64];
	size_t got = 0;
	while (got < sizeof buf - 1 && !memchr(buf, '\n', got)) {
		if (wait_fd(fd, POLLIN, deadline))
			goto timeout;
		ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
		if (r == 0)
			break;
		if (r < 0 && errno != EAGAIN && errno != EINTR) {
			snprintf(msg, len, "recv: %s", strerror(errno));
			goto out;
		}
		if (r > 0)
			got += (size_t)r;
	}
	buf[got] = 0;
	int status = 0;
	if (sscanf(buf, "HTTP/%*d.%*d %d", &status) != 1) {
		snprintf(msg, len, "not an HTTP answer");
		goto out;
	}
	snprintf(msg, len, "%s answered %d", url, status);
	ok = status == 200 ? 0 : -1;
	goto out;
timeout:
	snprintf(msg, len, "%s: no answer within %g s", url, timeout_s);
out:
	close(fd);
	return ok;
}

/* The --health-check client; see healthcheck.h. */
#include "daemon/healthcheck.h"
#include "core/clock.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

/* Waits for fd to become readable or writable before the deadline. */
static int wait_fd(int fd, short ev, double deadline)
{
	for (;;) {
		int ms = (int)((deadline - clock_s()) * 1000);
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

/* Sends on fd, or through the TLS session when there is one. Returns the bytes sent (> 0),
 * -2 at the deadline, -1 on an error. */
static ssize_t io_send(int fd, gnutls_session_t ses, const char *p, size_t n, double deadline)
{
	for (;;) {
		if (wait_fd(fd, POLLOUT, deadline))
			return -2;
		if (ses) {
			ssize_t w = gnutls_record_send(ses, p, n);
			if (w > 0)
				return w;
			if (w != GNUTLS_E_AGAIN && w != GNUTLS_E_INTERRUPTED)
				return -1;
			continue;
		}
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w > 0)
			return w;
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
	}
}

/* Receives likewise: bytes (> 0), 0 at the end of the stream, -2 at the deadline, -1. */
static ssize_t io_recv(int fd, gnutls_session_t ses, char *p, size_t n, double deadline)
{
	for (;;) {
		if (ses && gnutls_record_check_pending(ses) == 0 && wait_fd(fd, POLLIN, deadline))
			return -2;
		if (!ses && wait_fd(fd, POLLIN, deadline))
			return -2;
		if (ses) {
			ssize_t r = gnutls_record_recv(ses, p, n);
			if (r >= 0)
				return r;
			if (r == GNUTLS_E_PREMATURE_TERMINATION)
				return 0;
			if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED)
				return -1;
			continue;
		}
		ssize_t r = recv(fd, p, n, 0);
		if (r >= 0)
			return r;
		if (errno != EAGAIN && errno != EINTR)
			return -1;
	}
}

/* A TLS client session over the connected, non-blocking fd, handshaken before the deadline.
 * The server's certificate is not verified: the check asks whether the daemon answers, on the
 * same host or in the same container, not who it is. */
static int tls_open(int fd, const char *host, double deadline, gnutls_session_t *ses,
                    gnutls_certificate_credentials_t *cred, char *msg, size_t len)
{
	int rc = gnutls_certificate_allocate_credentials(cred);
	if (rc == GNUTLS_E_SUCCESS)
		rc = gnutls_init(ses, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
	if (rc == GNUTLS_E_SUCCESS)
		rc = gnutls_set_default_priority(*ses);
	if (rc == GNUTLS_E_SUCCESS)
		rc = gnutls_credentials_set(*ses, GNUTLS_CRD_CERTIFICATE, *cred);
	struct in6_addr a;
	if (rc == GNUTLS_E_SUCCESS && inet_pton(AF_INET, host, &a) != 1 &&
	    inet_pton(AF_INET6, host, &a) != 1)
		gnutls_server_name_set(*ses, GNUTLS_NAME_DNS, host, strlen(host));
	if (rc == GNUTLS_E_SUCCESS) {
		gnutls_transport_set_int(*ses, fd);
		do {
			rc = gnutls_handshake(*ses);
			if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
				short ev = gnutls_record_get_direction(*ses) ? POLLOUT : POLLIN;
				if (wait_fd(fd, ev, deadline)) {
					snprintf(msg, len, "TLS handshake with %s: no answer in time", host);
					return -1;
				}
			}
		} while (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED);
	}
	if (rc != GNUTLS_E_SUCCESS) {
		snprintf(msg, len, "TLS handshake with %s: %s", host, gnutls_strerror(rc));
		return -1;
	}
	return 0;
}

int healthcheck(const char *url, double timeout_s, char *msg, size_t len)
{
	double deadline = clock_s() + timeout_s;
	int tls = !strncasecmp(url, "https://", 8);
	if (!tls && strncasecmp(url, "http://", 7)) {
		snprintf(msg, len, "'%s': only http:// and https:// URLs are supported", url);
		return -1;
	}
	char host[256], port[16], path[1024] = "/readyz";
	snprintf(port, sizeof port, "%s", tls ? "443" : "80");
	const char *h = url + (tls ? 8 : 7), *slash = strchr(h, '/');
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
	gnutls_session_t ses = NULL;
	gnutls_certificate_credentials_t cred = NULL;
	if (tls && tls_open(fd, hn, deadline, &ses, &cred, msg, len))
		goto out;
	char req[1400];
	int rl = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n"
	                  "User-Agent: fftbloomd-health-check\r\n\r\n", path, hn, port);
	for (int off = 0; off < rl;) {
		ssize_t w = io_send(fd, ses, req + off, (size_t)(rl - off), deadline);
		if (w == -2)
			goto timeout;
		if (w < 0) {
			snprintf(msg, len, "send: %s", ses ? "TLS error" : strerror(errno));
			goto out;
		}
		off += (int)w;
	}
	char buf[64];
	size_t got = 0;
	while (got < sizeof buf - 1 && !memchr(buf, '\n', got)) {
		ssize_t r = io_recv(fd, ses, buf + got, sizeof buf - 1 - got, deadline);
		if (r == -2)
			goto timeout;
		if (r == 0)
			break;
		if (r < 0) {
			snprintf(msg, len, "recv: %s", ses ? "TLS error" : strerror(errno));
			goto out;
		}
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
	if (ses)
		gnutls_deinit(ses);
	if (cred)
		gnutls_certificate_free_credentials(cred);
	close(fd);
	return ok;
}

int healthcheck_url(const char *listen, int port, int tls, const char *path, char *url,
                    size_t url_len, char *msg, size_t len)
{
	if (port <= 0) {
		snprintf(msg, len, "port %d: the daemon's port is chosen at start; give a URL", port);
		return -1;
	}
	char host[80];
	snprintf(host, sizeof host, "%s", listen);
	if (host[0] == '[') { /* [::] */
		memmove(host, host + 1, strlen(host));
		char *e = strchr(host, ']');
		if (e)
			*e = 0;
	}
	if (!host[0] || !strcmp(host, "0.0.0.0") || !strcmp(host, "localhost"))
		snprintf(host, sizeof host, "127.0.0.1");
	else if (!strcmp(host, "::"))
		snprintf(host, sizeof host, "::1");
	int v6 = strchr(host, ':') != NULL;
	snprintf(url, url_len, "%s://%s%s%s:%d%s", tls ? "https" : "http", v6 ? "[" : "", host,
	         v6 ? "]" : "", port, path);
	return 0;
}

/* sd_notify(3) and sd_listen_fds(3) as their documented protocol; see sdnotify.h. */
#include "daemon/sdnotify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sdnotify {
	int fd;                              /* datagram socket to NOTIFY_SOCKET, -1: none */
	struct sockaddr_un addr;
	socklen_t addr_len;
	unsigned long long watchdog_usec;    /* 0: no watchdog for this process */
	int nlisten;                         /* passed descriptors from SDNOTIFY_LISTEN_FDS_START */
	char names[SDNOTIFY_MAX_FDS][SDNOTIFY_NAME_MAX];
	char *credentials;                   /* NULL: none */
};

const char *sdnotify_strerror(int code)
{
	switch (code) {
	case SDNOTIFY_OK: return "ok";
	case SDNOTIFY_E_ADDR: return "NOTIFY_SOCKET is not an absolute path or an '@' abstract name";
	case SDNOTIFY_E_VALUE: return "malformed service manager variable";
	case SDNOTIFY_E_SOCKET: return "socket error";
	case SDNOTIFY_E_SEND: return "notification not sent";
	case SDNOTIFY_E_FD: return "a passed descriptor is not an open socket";
	case SDNOTIFY_E_NOMEM: return "out of memory";
	default: return "unknown error";
	}
}

int sdnotify_parse_address(const char *s, struct sockaddr_un *sa, socklen_t *len)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (!s)
		return SDNOTIFY_E_ADDR;
	size_t l = strlen(s);
	if (s[0] == '@') { /* abstract namespace: sun_path starts with NUL, no terminator */
		if (l < 2 || l > sizeof sa->sun_path)
			return SDNOTIFY_E_ADDR;
		memcpy(sa->sun_path + 1, s + 1, l - 1);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + l);
		return 0;
	}
	if (s[0] != '/' || l >= sizeof sa->sun_path)
		return SDNOTIFY_E_ADDR;
	memcpy(sa->sun_path, s, l + 1);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + l + 1);
	return 0;
}

int sdnotify_parse_u64(const char *s, unsigned long long *v)
{
	if (!s || !*s)
		return SDNOTIFY_E_VALUE;
	unsigned long long x = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return SDNOTIFY_E_VALUE;
		unsigned d = (unsigned)(*p - '0');
		if (x > (~0ULL - d) / 10)
			return SDNOTIFY_E_VALUE;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

/* A pid variable: a positive number that fits pid_t. */
static int parse_pid(const char *s, pid_t *pid)
{
	unsigned long long v;
	if (sdnotify_parse_u64(s, &v) || v == 0 || v > 0x7fffffffULL)
		return SDNOTIFY_E_VALUE;
	*pid = (pid_t)v;
	return 0;
}

int sdnotify_parse_watchdog(const char *usec, const char *pid, pid_t self,
                            unsigned long long *usec_out)
{
	*usec_out = 0;
	if (!usec)
		return 0;
	unsigned long long v;
	if (sdnotify_parse_u64(usec, &v) || v == 0)
		return SDNOTIFY_E_VALUE;
	if (pid) {
		pid_t p;
		if (parse_pid(pid, &p))
			return SDNOTIFY_E_VALUE;
		if (p != self)
			return 0;
	}
	*usec_out = v;
	return 0;
}

int sdnotify_parse_listen(const char *fds, const char *pid, const char *fdnames, pid_t self,
                          int *n, char (*names)[SDNOTIFY_NAME_MAX], int max_names)
{
	*n = 0;
	if (!fds || !pid)
		return 0;
	pid_t p;
	unsigned long long count;
	if (parse_pid(pid, &p) || sdnotify_parse_u64(fds, &count))
		return SDNOTIFY_E_VALUE;
	if (p != self)
		return 0;
	if (count > SDNOTIFY_MAX_FDS || (names && count > (unsigned long long)max_names))
		return SDNOTIFY_E_VALUE;
	int c = (int)count;
	if (fdnames) {
		int k = 0;
		const char *s = fdnames;
		for (;;) {
			const char *e = strchr(s, ':');
			size_t l = e ? (size_t)(e - s) : strlen(s);
			if (k >= c || l >= SDNOTIFY_NAME_MAX)
				return SDNOTIFY_E_VALUE;
			if (names) {
				memcpy(names[k], s, l);
				names[k][l] = 0;
			}
			k++;
			if (!e)
				break;
			s = e + 1;
		}
		if (k != c)
			return SDNOTIFY_E_VALUE;
	} else if (names) {
		for (int i = 0; i < c; i++)
			snprintf(names[i], SDNOTIFY_NAME_MAX, "unknown");
	}
	*n = c;
	return 0;
}

int sdnotify_create_from(const struct sdnotify_env *env, pid_t self, struct sdnotify **out,
                         char err[SDNOTIFY_ERR_LEN])
{
	*out = NULL;
	struct sdnotify *n = calloc(1, sizeof *n);
	if (!n) {
		snprintf(err, SDNOTIFY_ERR_LEN, "out of memory");
		return SDNOTIFY_E_NOMEM;
	}
	n->fd = -1;
	int rc;
	if (env->notify_socket && env->notify_socket[0]) {
		if ((rc = sdnotify_parse_address(env->notify_socket, &n->addr, &n->addr_len))) {
			snprintf(err, SDNOTIFY_ERR_LEN, "NOTIFY_SOCKET '%.120s': %s", env->notify_socket,
			         sdnotify_strerror(rc));
			goto fail;
		}
		n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (n->fd < 0) {
			rc = SDNOTIFY_E_SOCKET;
			snprintf(err, SDNOTIFY_ERR_LEN, "NOTIFY_SOCKET: socket: %s", strerror(errno));
			goto fail;
		}
	}
	if ((rc = sdnotify_parse_watchdog(env->watchdog_usec, env->watchdog_pid, self,
	                                  &n->watchdog_usec))) {
		snprintf(err, SDNOTIFY_ERR_LEN, "WATCHDOG_USEC '%.40s' / WATCHDOG_PID '%.40s': %s",
		         env->watchdog_usec ? env->watchdog_usec : "",
		         env->watchdog_pid ? env->watchdog_pid : "", sdnotify_strerror(rc));
		goto fail;
	}
	if ((rc = sdnotify_parse_listen(env->listen_fds, env->listen_pid, env->listen_fdnames, self,
	                                &n->nlisten, n->names, SDNOTIFY_MAX_FDS))) {
		snprintf(err, SDNOTIFY_ERR_LEN, "LISTEN_FDS '%.40s' / LISTEN_PID '%.40s' / "
		         "LISTEN_FDNAMES '%.80s': %s", env->listen_fds ? env->listen_fds : "",
		         env->listen_pid ? env->listen_pid : "",
		         env->listen_fdnames ? env->listen_fdnames : "", sdnotify_strerror(rc));
		goto fail;
	}
	for (int i = 0; i < n->nlisten; i++) {
		int fd = SDNOTIFY_LISTEN_FDS_START + i;
		int fl = fcntl(fd, F_GETFD);
		struct stat st;
		if (fl < 0 || fstat(fd, &st) || !S_ISSOCK(st.st_mode)) {
			rc = SDNOTIFY_E_FD;
			snprintf(err, SDNOTIFY_ERR_LEN, "LISTEN_FDS: descriptor %d: %s", fd,
			         fl < 0 ? strerror(errno) : "not a socket");
			goto fail;
		}
		fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	}
	if (env->credentials_directory && env->credentials_directory[0] &&
	    !(n->credentials = strdup(env->credentials_directory))) {
		rc = SDNOTIFY_E_NOMEM;
		snprintf(err, SDNOTIFY_ERR_LEN, "out of memory");
		goto fail;
	}
	*out = n;
	return 0;
fail:
	sdnotify_destroy(n);
	return rc;
}

int sdnotify_create(struct sdnotify **out, char err[SDNOTIFY_ERR_LEN])
{
	struct sdnotify_env e = {
		getenv("NOTIFY_SOCKET"), getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"),
		getenv("LISTEN_FDS"), getenv("LISTEN_PID"), getenv("LISTEN_FDNAMES"),
		getenv("CREDENTIALS_DIRECTORY"),
	};
	int rc = sdnotify_create_from(&e, getpid(), out, err);
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDNAMES");
	return rc;
}

void sdnotify_destroy(struct sdnotify *n)
{
	if (!n)
		return;
	if (n->fd >= 0)
		close(n->fd);
	free(n->credentials);
	free(n);
}

int sdnotify_enabled(const struct sdnotify *n)
{
	return n && n->fd >= 0;
}

int sdnotify_send(struct sdnotify *n, const char *msg)
{
	if (!sdnotify_enabled(n))
		return 0;
	size_t l = strlen(msg);
	ssize_t w;
	do
		w = sendto(n->fd, msg, l, MSG_NOSIGNAL, (const struct sockaddr *)&n->addr, n->addr_len);
	while (w < 0 && errno == EINTR);
	return w == (ssize_t)l ? 0 : SDNOTIFY_E_SEND;
}

int sdnotify_sendf(struct sdnotify *n, const char *fmt, ...)
{
	if (!sdnotify_enabled(n))
		return 0;
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return sdnotify_send(n, buf);
}

unsigned long long sdnotify_watchdog_usec(const struct sdnotify *n)
{
	return n ? n->watchdog_usec : 0;
}

int sdnotify_listen_count(const struct sdnotify *n)
{
	return n ? n->nlisten : 0;
}

const char *sdnotify_listen_name(const struct sdnotify *n, int i)
{
	return n && i >= 0 && i < n->nlisten ? n->names[i] : NULL;
}

const char *sdnotify_credentials_dir(const struct sdnotify *n)
{
	return n ? n->credentials : NULL;
}

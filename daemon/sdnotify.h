/* The service manager's side of a daemon's life, spoken without libsystemd: readiness, status,
 * watchdog and stopping notices as datagrams to $NOTIFY_SOCKET (sd_notify(3)); listening sockets
 * handed over in LISTEN_FDS / LISTEN_PID / LISTEN_FDNAMES (sd_listen_fds(3)); the credentials
 * folder $CREDENTIALS_DIRECTORY (LoadCredential=).
 *
 * Why not libsystemd: the protocol is a few documented environment variables and one datagram
 * each, while libsystemd0 would be one more runtime library in the container image and on every
 * GPU host (most of them run the daemon in a container where no systemd listens); without a
 * service manager every call here is a no-op and the daemon behaves as before.
 *
 * These variables are protocol, not configuration: they are read here alone (the one getenv of
 * the daemon outside the option table), never listed in the config table or /v1/info. */
#ifndef FFTBLOOM_SDNOTIFY_H
#define FFTBLOOM_SDNOTIFY_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#define SDNOTIFY_ERR_LEN 256
#define SDNOTIFY_LISTEN_FDS_START 3 /* SD_LISTEN_FDS_START: the first passed descriptor */
#define SDNOTIFY_MAX_FDS 64         /* more passed sockets than this is refused */
#define SDNOTIFY_NAME_MAX 256       /* a LISTEN_FDNAMES entry (systemd allows 255 characters) */

enum sdnotify_error {
	SDNOTIFY_OK = 0,
	SDNOTIFY_E_ADDR = -1,    /* NOTIFY_SOCKET is not an absolute path or an abstract '@' name */
	SDNOTIFY_E_VALUE = -2,   /* a protocol variable is malformed (not a number, out of range) */
	SDNOTIFY_E_SOCKET = -3,  /* a socket call failed */
	SDNOTIFY_E_SEND = -4,    /* the datagram was not sent whole */
	SDNOTIFY_E_FD = -5,      /* a passed descriptor is not open or not a socket */
	SDNOTIFY_E_NOMEM = -6,
};

const char *sdnotify_strerror(int code);

/* The protocol variables as found in the environment; NULL where unset. */
struct sdnotify_env {
	const char *notify_socket;         /* NOTIFY_SOCKET */
	const char *watchdog_usec;         /* WATCHDOG_USEC */
	const char *watchdog_pid;          /* WATCHDOG_PID */
	const char *listen_fds;            /* LISTEN_FDS */
	const char *listen_pid;            /* LISTEN_PID */
	const char *listen_fdnames;        /* LISTEN_FDNAMES */
	const char *credentials_directory; /* CREDENTIALS_DIRECTORY */
};

/* Parsers of the protocol, pure and unit tested. */

/* NOTIFY_SOCKET as a socket address: "/path" (length with the NUL) or "@name" (abstract: a
 * leading NUL, length without a trailing one). Returns 0 or SDNOTIFY_E_ADDR (empty, relative,
 * "@" alone, or too long for sun_path). */
int sdnotify_parse_address(const char *s, struct sockaddr_un *sa, socklen_t *len);

/* A decimal number with no sign, spaces or suffix that fits in unsigned long long. Returns 0 or
 * SDNOTIFY_E_VALUE. */
int sdnotify_parse_u64(const char *s, unsigned long long *v);

/* WATCHDOG_USEC / WATCHDOG_PID: *usec is the interval when the watchdog is meant for process
 * self (WATCHDOG_PID unset or equal), else 0 (also when WATCHDOG_USEC is unset). Returns 0, or
 * SDNOTIFY_E_VALUE when either is malformed or WATCHDOG_USEC is 0. */
int sdnotify_parse_watchdog(const char *usec, const char *pid, pid_t self,
                            unsigned long long *usec_out);

/* LISTEN_FDS / LISTEN_PID / LISTEN_FDNAMES: *n is the number of descriptors passed to process
 * self, starting at SDNOTIFY_LISTEN_FDS_START (0 when LISTEN_FDS or LISTEN_PID is unset or
 * LISTEN_PID names another process, as sd_listen_fds does). names[i] gets the i-th name of
 * LISTEN_FDNAMES (colon-separated), or "unknown" where it is unset, as systemd names them.
 * Returns 0, or SDNOTIFY_E_VALUE when a number is malformed, LISTEN_FDS is over
 * SDNOTIFY_MAX_FDS, or LISTEN_FDNAMES does not hold exactly *n names. */
int sdnotify_parse_listen(const char *fds, const char *pid, const char *fdnames, pid_t self,
                          int *n, char (*names)[SDNOTIFY_NAME_MAX], int max_names);

struct sdnotify;

/* Reads the protocol variables from the environment, unsets LISTEN_FDS, LISTEN_PID and
 * LISTEN_FDNAMES (so nothing started later takes the sockets for its own), marks the passed
 * descriptors close-on-exec and checks that each is a socket, and opens the datagram socket
 * when NOTIFY_SOCKET is set. Call before starting threads (setenv/unsetenv are not
 * thread-safe). Returns 0, or a negative code with the reason in err. */
int sdnotify_create(struct sdnotify **out, char err[SDNOTIFY_ERR_LEN]);

/* The same from given variables and pid (tests); does not touch the environment. */
int sdnotify_create_from(const struct sdnotify_env *env, pid_t self, struct sdnotify **out,
                         char err[SDNOTIFY_ERR_LEN]);

/* Closes the datagram socket (not the listening ones) and frees. NULL-safe. */
void sdnotify_destroy(struct sdnotify *n);

/* 1 when NOTIFY_SOCKET was set: notices go somewhere. */
int sdnotify_enabled(const struct sdnotify *n);

/* Sends msg ("READY=1", "STATUS=...", several assignments separated by newlines) as one
 * datagram. Thread-safe. Returns 0 (also when there is no NOTIFY_SOCKET: nothing to do), or
 * SDNOTIFY_E_SEND. */
int sdnotify_send(struct sdnotify *n, const char *msg);
int sdnotify_sendf(struct sdnotify *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The watchdog interval in microseconds the manager expects WATCHDOG=1 within (0: none). The
 * documented practice is to ping at half of it. */
unsigned long long sdnotify_watchdog_usec(const struct sdnotify *n);

/* Listening descriptors passed to this process: their count; descriptor i is
 * SDNOTIFY_LISTEN_FDS_START + i and named sdnotify_listen_name(n, i). */
int sdnotify_listen_count(const struct sdnotify *n);
const char *sdnotify_listen_name(const struct sdnotify *n, int i);

/* $CREDENTIALS_DIRECTORY, or NULL when unset or empty. */
const char *sdnotify_credentials_dir(const struct sdnotify *n);

#endif

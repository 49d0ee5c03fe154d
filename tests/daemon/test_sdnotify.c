/* The systemd protocol without libsystemd (sdnotify): NOTIFY_SOCKET addresses (paths and
 * abstract names, their length limits), WATCHDOG_USEC/PID, LISTEN_FDS/PID/FDNAMES, datagrams
 * received by a socket bound here, passed descriptors checked and marked close-on-exec; and the
 * GPU threads' state that decides READY=1 and the watchdog (lifecycle_gpu_state). The daemon
 * end to end, with systemd's side played by a test, is tests/deploy/test_systemd.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/lifecycle.h"
#include "daemon/sdnotify.h"

static const size_t PATH_OFF = offsetof(struct sockaddr_un, sun_path);

static void test_address(void **state)
{
	(void)state;
	struct sockaddr_un sa;
	socklen_t len = 0;
	assert_int_equal(sdnotify_parse_address("/run/systemd/notify", &sa, &len), 0);
	assert_int_equal(sa.sun_family, AF_UNIX);
	assert_string_equal(sa.sun_path, "/run/systemd/notify");
	assert_int_equal(len, PATH_OFF + strlen("/run/systemd/notify") + 1);

	assert_int_equal(sdnotify_parse_address("@sd-notify/x", &sa, &len), 0);
	assert_int_equal(sa.sun_path[0], 0);
	assert_memory_equal(sa.sun_path + 1, "sd-notify/x", 11);
	assert_int_equal(len, PATH_OFF + 1 + 11); /* no terminating NUL for abstract names */

	const char *bad[] = {"", "@", "relative/notify", "notify", " /run/x", NULL};
	for (int i = 0; bad[i]; i++) {
		printf("bad address '%s'\n", bad[i]);
		assert_int_equal(sdnotify_parse_address(bad[i], &sa, &len), SDNOTIFY_E_ADDR);
	}
	assert_int_equal(sdnotify_parse_address(NULL, &sa, &len), SDNOTIFY_E_ADDR);

	/* Limits: a path and its NUL fill sun_path at most; an abstract name fills it after its
	 * leading NUL. */
	char p[sizeof sa.sun_path + 2];
	memset(p, 'a', sizeof p);
	p[0] = '/';
	p[sizeof sa.sun_path - 1] = 0; /* 107 characters */
	assert_int_equal(sdnotify_parse_address(p, &sa, &len), 0);
	assert_int_equal(len, PATH_OFF + sizeof sa.sun_path);
	p[sizeof sa.sun_path - 1] = 'a';
	p[sizeof sa.sun_path] = 0;     /* 108: no room for the NUL */
	assert_int_equal(sdnotify_parse_address(p, &sa, &len), SDNOTIFY_E_ADDR);
	p[0] = '@';                    /* '@' and 107 name bytes fill sun_path exactly */
	assert_int_equal(sdnotify_parse_address(p, &sa, &len), 0);
	assert_int_equal(len, PATH_OFF + sizeof sa.sun_path);
	p[sizeof sa.sun_path] = 'a';
	p[sizeof sa.sun_path + 1] = 0;
	assert_int_equal(sdnotify_parse_address(p, &sa, &len), SDNOTIFY_E_ADDR);
}

static void test_numbers(void **state)
{
	(void)state;
	unsigned long long v = 7;
	assert_int_equal(sdnotify_parse_u64("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(sdnotify_parse_u64("30000000", &v), 0);
	assert_int_equal(v, 30000000ULL);
	assert_int_equal(sdnotify_parse_u64("18446744073709551615", &v), 0);
	assert_true(v == ~0ULL);
	const char *bad[] = {"18446744073709551616", "99999999999999999999", "-1", "+1", " 1", "1 ",
	                     "1x", "0x10", "", NULL};
	for (int i = 0; bad[i]; i++) {
		v = 5;
		printf("bad number '%s'\n", bad[i]);
		assert_int_equal(sdnotify_parse_u64(bad[i], &v), SDNOTIFY_E_VALUE);
		assert_int_equal(v, 5); /* untouched on failure */
	}
	assert_int_equal(sdnotify_parse_u64(NULL, &v), SDNOTIFY_E_VALUE);
}

static void test_watchdog(void **state)
{
	(void)state;
	unsigned long long us = 1;
	assert_int_equal(sdnotify_parse_watchdog(NULL, NULL, 100, &us), 0);
	assert_int_equal(us, 0);
	assert_int_equal(sdnotify_parse_watchdog("30000000", NULL, 100, &us), 0);
	assert_int_equal(us, 30000000ULL);
	assert_int_equal(sdnotify_parse_watchdog("30000000", "100", 100, &us), 0);
	assert_int_equal(us, 30000000ULL);
	assert_int_equal(sdnotify_parse_watchdog("30000000", "101", 100, &us), 0);
	assert_int_equal(us, 0); /* meant for another process (a parent that forked us) */
	assert_int_equal(sdnotify_parse_watchdog("0", NULL, 100, &us), SDNOTIFY_E_VALUE);
	assert_int_equal(sdnotify_parse_watchdog("3s", NULL, 100, &us), SDNOTIFY_E_VALUE);
	assert_int_equal(sdnotify_parse_watchdog("100", "x", 100, &us), SDNOTIFY_E_VALUE);
	assert_int_equal(sdnotify_parse_watchdog("100", "0", 100, &us), SDNOTIFY_E_VALUE);
	assert_int_equal(sdnotify_parse_watchdog("100", "4294967296", 100, &us), SDNOTIFY_E_VALUE);
}

static void test_listen(void **state)
{
	(void)state;
	char names[4][SDNOTIFY_NAME_MAX];
	int n = -1;
	assert_int_equal(sdnotify_parse_listen("2", "42", NULL, 42, &n, names, 4), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "unknown");
	assert_string_equal(names[1], "unknown");
	assert_int_equal(sdnotify_parse_listen("2", "42", "http:admin", 42, &n, names, 4), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "http");
	assert_string_equal(names[1], "admin");
	assert_int_equal(sdnotify_parse_listen("1", "42", "", 42, &n, names, 4), 0);
	assert_int_equal(n, 1);
	assert_string_equal(names[0], "");
	assert_int_equal(sdnotify_parse_listen("0", "42", NULL, 42, &n, names, 4), 0);
	assert_int_equal(n, 0);
	/* not ours, or not all there: no sockets, no error (as sd_listen_fds) */
	assert_int_equal(sdnotify_parse_listen("2", "43", NULL, 42, &n, names, 4), 0);
	assert_int_equal(n, 0);
	assert_int_equal(sdnotify_parse_listen(NULL, "42", NULL, 42, &n, names, 4), 0);
	assert_int_equal(n, 0);
	assert_int_equal(sdnotify_parse_listen("1", NULL, NULL, 42, &n, names, 4), 0);
	assert_int_equal(n, 0);
	/* malformed */
	struct {
		const char *fds, *pid, *names;
	} bad[] = {{"2", "42", "http"},   {"2", "42", "a:b:c"}, {"x", "42", NULL},
	           {"-1", "42", NULL},    {"1", "4x", NULL},    {"65", "42", NULL},
	           {"5", "42", NULL} /* more than the caller's 4 names */};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		n = -1;
		printf("bad listen %s %s %s\n", bad[i].fds, bad[i].pid, bad[i].names ? bad[i].names : "-");
		assert_int_equal(sdnotify_parse_listen(bad[i].fds, bad[i].pid, bad[i].names, 42, &n,
		                                       names, 4), SDNOTIFY_E_VALUE);
		assert_int_equal(n, 0);
	}
	char longname[SDNOTIFY_NAME_MAX + 1];
	memset(longname, 'n', SDNOTIFY_NAME_MAX);
	longname[SDNOTIFY_NAME_MAX] = 0;
	assert_int_equal(sdnotify_parse_listen("1", "42", longname, 42, &n, names, 4),
	                 SDNOTIFY_E_VALUE);
}

/* A datagram socket bound to addr (as NOTIFY_SOCKET names it); receives with a timeout. */
static int bind_receiver(const char *addr)
{
	struct sockaddr_un sa;
	socklen_t len;
	assert_int_equal(sdnotify_parse_address(addr, &sa, &len), 0);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	struct timeval tv = {2, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return fd;
}

static void expect_datagram(int fd, const char *want)
{
	char buf[4096];
	ssize_t r = recv(fd, buf, sizeof buf - 1, 0);
	assert_true(r >= 0);
	buf[r] = 0;
	printf("received '%s'\n", buf);
	assert_string_equal(buf, want);
}

static void send_through(const char *addr)
{
	int rx = bind_receiver(addr);
	struct sdnotify_env env = {.notify_socket = addr};
	struct sdnotify *n;
	char err[SDNOTIFY_ERR_LEN];
	assert_int_equal(sdnotify_create_from(&env, getpid(), &n, err), 0);
	assert_int_equal(sdnotify_enabled(n), 1);
	assert_int_equal(sdnotify_send(n, "READY=1\nSTATUS=warm"), 0);
	expect_datagram(rx, "READY=1\nSTATUS=warm");
	assert_int_equal(sdnotify_sendf(n, "STATUS=queue %d of %d", 3, 32), 0);
	expect_datagram(rx, "STATUS=queue 3 of 32");
	close(rx); /* nobody listens any more: the send fails, and says so */
	assert_int_equal(sdnotify_send(n, "WATCHDOG=1"), SDNOTIFY_E_SEND);
	sdnotify_destroy(n);
}

static void test_send(void **state)
{
	(void)state;
	char abs_name[64], dir[] = "/tmp/sdnotify-test-XXXXXX", path[128];
	snprintf(abs_name, sizeof abs_name, "@fftbloom-test-sdnotify-%d", (int)getpid());
	send_through(abs_name);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/notify", dir);
	send_through(path);
	unlink(path);
	rmdir(dir);

	/* no NOTIFY_SOCKET: every notice is a no-op that succeeds */
	struct sdnotify_env none = {0};
	struct sdnotify *n;
	char err[SDNOTIFY_ERR_LEN];
	assert_int_equal(sdnotify_create_from(&none, getpid(), &n, err), 0);
	assert_int_equal(sdnotify_enabled(n), 0);
	assert_int_equal(sdnotify_send(n, "READY=1"), 0);
	assert_int_equal(sdnotify_watchdog_usec(n), 0);
	assert_int_equal(sdnotify_listen_count(n), 0);
	assert_null(sdnotify_credentials_dir(n));
	sdnotify_destroy(n);
	sdnotify_destroy(NULL);

	struct sdnotify_env bad = {.notify_socket = "relative"};
	n = (struct sdnotify *)1;
	assert_int_equal(sdnotify_create_from(&bad, getpid(), &n, err), SDNOTIFY_E_ADDR);
	assert_null(n);
	printf("%s\n", err);
}

static void test_passed_fds(void **state)
{
	(void)state;
	int a = socket(AF_INET, SOCK_STREAM, 0), b = socket(AF_INET6, SOCK_STREAM, 0);
	assert_true(a >= 0 && b >= 0);
	a = fcntl(a, F_DUPFD, 10); /* copies above 3 and 4; dup2 below replaces what is there */
	b = fcntl(b, F_DUPFD, 10);
	assert_int_equal(dup2(a, 3), 3); /* passed descriptors are 3, 4, ... without CLOEXEC */
	assert_int_equal(dup2(b, 4), 4);
	close(a);
	close(b);
	assert_int_equal(fcntl(3, F_GETFD) & FD_CLOEXEC, 0);
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	struct sdnotify_env env = {.listen_fds = "2", .listen_pid = pid,
	                           .listen_fdnames = "http:other", .watchdog_usec = "5000000",
	                           .credentials_directory = "/run/credentials/fftbloomd.service"};
	struct sdnotify *n;
	char err[SDNOTIFY_ERR_LEN];
	assert_int_equal(sdnotify_create_from(&env, getpid(), &n, err), 0);
	assert_int_equal(sdnotify_listen_count(n), 2);
	assert_string_equal(sdnotify_listen_name(n, 0), "http");
	assert_string_equal(sdnotify_listen_name(n, 1), "other");
	assert_null(sdnotify_listen_name(n, 2));
	assert_int_equal(sdnotify_watchdog_usec(n), 5000000ULL);
	assert_string_equal(sdnotify_credentials_dir(n), "/run/credentials/fftbloomd.service");
	assert_int_equal(sdnotify_enabled(n), 0);
	assert_int_not_equal(fcntl(3, F_GETFD) & FD_CLOEXEC, 0);
	assert_int_not_equal(fcntl(4, F_GETFD) & FD_CLOEXEC, 0);
	sdnotify_destroy(n);

	/* a descriptor that is not a socket, or not open, is refused */
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(dup2(p[0], 4), 4);
	n = (struct sdnotify *)1;
	assert_int_equal(sdnotify_create_from(&env, getpid(), &n, err), SDNOTIFY_E_FD);
	assert_null(n);
	printf("%s\n", err);
	close(4);
	assert_int_equal(sdnotify_create_from(&env, getpid(), &n, err), SDNOTIFY_E_FD);
	printf("%s\n", err);
	close(3);
	close(p[0]);
	close(p[1]);
	/* the same variables meant for another process: nothing passed, nothing checked */
	struct sdnotify_env other = env;
	other.listen_pid = "1";
	assert_int_equal(sdnotify_create_from(&other, getpid(), &n, err), 0);
	assert_int_equal(sdnotify_listen_count(n), 0);
	sdnotify_destroy(n);
}

/* A jobs_status of n GPU threads, all alive, warmed and heard from 0.5 s ago. */
static struct jobs_status status_up(int n)
{
	struct jobs_status st;
	memset(&st, 0, sizeof st);
	st.ngpus = n;
	for (int i = 0; i < n; i++) {
		st.gpu[i].alive = 1;
		st.gpu[i].warmed = 1;
		st.gpu[i].heartbeat_age = 0.5;
	}
	return st;
}

static void expect_state(const struct jobs_status *st, int want, const char *want_why)
{
	char why[200];
	int s = lifecycle_gpu_state(st, 60, why, sizeof why);
	printf("state %d (%s)\n", s, why);
	assert_int_equal(s, want);
	assert_string_equal(why, want_why);
}

static void test_gpu_state(void **state)
{
	(void)state;
	struct jobs_status st = status_up(3);
	expect_state(&st, LIFECYCLE_UP, "");
	st.gpu[2].heartbeat_age = 60; /* at the limit: still fresh */
	expect_state(&st, LIFECYCLE_UP, "");
	st.gpu[2].heartbeat_age = 60.5;
	expect_state(&st, LIFECYCLE_STALE, "gpu 2: no heartbeat for 60.5 s (limit 60 s)");
	st.gpu[2].heartbeat_age = NAN; /* never counts as fresh */
	assert_int_equal(lifecycle_gpu_state(&st, 60, NULL, 0), LIFECYCLE_STALE);

	st = status_up(3);
	st.gpu[1].warmed = 0;
	expect_state(&st, LIFECYCLE_WARMING, "gpu 1: warming up");
	st.gpu[0].alive = 0;
	st.gpu[0].warmed = 0;
	expect_state(&st, LIFECYCLE_WARMING, "gpu 0: no context yet");
	st.gpu[2].heartbeat_age = 100; /* a stale warmed thread outranks warming ones */
	expect_state(&st, LIFECYCLE_STALE, "gpu 2: no heartbeat for 100.0 s (limit 60 s)");
	st.gpu[1].warm_failed = 1;     /* and a failed warm-up outranks everything */
	expect_state(&st, LIFECYCLE_FAILED, "gpu 1: warm-up failed");

	st = status_up(2);
	st.gpu[1].alive = 0; /* warmed, then its thread ended (shutdown) */
	expect_state(&st, LIFECYCLE_FAILED, "gpu 1: thread ended");

	st = status_up(0);
	expect_state(&st, LIFECYCLE_UP, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_address),  cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_watchdog), cmocka_unit_test(test_listen),
		cmocka_unit_test(test_send),     cmocka_unit_test(test_passed_fds),
		cmocka_unit_test(test_gpu_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* fftbloomd's HTTP server: its listeners (libmicrohttpd on an address, both loopbacks for
 * localhost, or the socket a service manager passed), the engine facts every render's ETag names,
 * and the start, quiescing and stop; a request's life is server.c. See server.h, http.h. */
#include "daemon/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon/etag.h"
#include "daemon/http.h"
#include "core/log.h"
#include "core/clock.h"

static int load_addr(const char *listen, int port, struct sockaddr_storage *ss, int *v6)
{
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, listen, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((unsigned short)port);
		*v6 = 0;
		return 0;
	}
	const char *l = listen;
	char buf[64];
	if (*l == '[') { /* [::1] */
		snprintf(buf, sizeof buf, "%s", l + 1);
		char *e = strchr(buf, ']');
		if (e)
			*e = 0;
		l = buf;
	}
	if (inet_pton(AF_INET6, l, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((unsigned short)port);
		*v6 = 1;
		return 0;
	}
	return -1;
}

/* libmicrohttpd's own messages go through the daemon's log (one format, escaped). */
static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	log_vmsg(LOG_WARN, "libmicrohttpd: ", fmt, ap);
}

/* 1 when this host can bind IPv6's loopback (a container or kernel without IPv6 cannot). */
static int ipv6_loopback(void)
{
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd < 0)
		return 0;
	struct sockaddr_in6 a;
	memset(&a, 0, sizeof a);
	a.sin6_family = AF_INET6;
	a.sin6_addr = in6addr_loopback;
	int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
	close(fd);
	return ok;
}

/* Starts libmicrohttpd on a listening socket: one server_bind bound, or the one the service
 * manager passed. addr and port name it in messages. */
static struct MHD_Daemon *start_one(struct server *S, const char *addr, int port, int listen_fd,
                                    char err[SERVER_ERR_LEN])
{
	const struct server_opts *o = &S->o;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	int v6 = getsockname(listen_fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_INET6;
	/* A thread per connection: a request waits for its job in its own thread (start_job) */
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
	                 MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	if (v6)
		flags |= MHD_USE_IPv6;
	if (o->tls_cert) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			snprintf(err, SERVER_ERR_LEN, "this libmicrohttpd has no TLS support");
			return NULL;
		}
		flags |= MHD_USE_TLS;
	}
	struct MHD_OptionItem opts[24];
	int n = 0;
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT,
	                                    (intptr_t)(S->cfg.max_connections +
	                                               CONN_SPARE(S->cfg.max_connections)), NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	                                    (intptr_t)S->cfg.max_per_ip, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT,
	                                    (intptr_t)S->cfg.conn_timeout, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, 64 * 1024, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_STACK_SIZE, 512 * 1024, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, S};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, S};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, S};
	if (o->tls_cert) {
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)o->tls_cert};
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)o->tls_key};
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
		                                    (void *)S->cfg.tls_priorities};
	}
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	struct MHD_Daemon *d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, S,
	                                        MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, S,
	                                        MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (!d)
		snprintf(err, SERVER_ERR_LEN, "cannot serve HTTP on %.64s port %d%s", addr, port,
		         o->tls_cert ? " (a bad TLS certificate or key?)" : "");
	return d;
}

/* A socket bound to addr:port (not listening yet), or -1 with the reason in err. */
static int bind_one(const struct config *cfg, const char *addr, int port,
                    char err[SERVER_ERR_LEN])
{
	struct sockaddr_storage ss;
	int v6;
	if (load_addr(addr, port, &ss, &v6)) {
		snprintf(err, SERVER_ERR_LEN, "listen: '%.64s' is not an IPv4 or IPv6 address or "
		         "localhost", addr);
		return -1;
	}
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, SERVER_ERR_LEN, "listen %.64s: no socket: %s", addr, strerror(errno));
		return -1;
	}
	int one = 1;
	/* a restart binds over its predecessor's TIME_WAIT connections; a second daemon on the
	 * port fails, unless --reuse-port asks both to share it */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (cfg->reuse_port)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
	if (v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (!bind(fd, (struct sockaddr *)&ss, v6 ? sizeof(struct sockaddr_in6)
	                                         : sizeof(struct sockaddr_in)))
		return fd;
	int e = errno;
	close(fd);
	if (e == EADDRINUSE)
		snprintf(err, SERVER_ERR_LEN, "port %d in use on %.64s (another process listens there; "
		         "--reuse-port lets fftbloomd processes share it)", port, addr);
	else if (e == EACCES)
		snprintf(err, SERVER_ERR_LEN, "port %d on %.64s: permission denied (ports below 1024 "
		         "need privileges)", port, addr);
	else if (e == EADDRNOTAVAIL)
		snprintf(err, SERVER_ERR_LEN, "listen: %.64s is not an address of this host", addr);
	else
		snprintf(err, SERVER_ERR_LEN, "cannot bind %.64s port %d: %s", addr, port, strerror(e));
	return -1;
}

int server_bind(const struct config *cfg, struct server_bound *b, char err[SERVER_ERR_LEN])
{
	memset(b, 0, sizeof *b);
	int local = !strcmp(cfg->listen, "localhost");
	b->fd[0] = bind_one(cfg, local ? "127.0.0.1" : cfg->listen, cfg->port, err);
	if (b->fd[0] < 0)
		return -1;
	b->n = 1;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	getsockname(b->fd[0], (struct sockaddr *)&ss, &sl);
	b->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                                         : ((struct sockaddr_in *)&ss)->sin_port);
	if (local && !ipv6_loopback()) {
		log_msg(LOG_WARN, "listen localhost: this host has no IPv6 loopback; 127.0.0.1 only");
	} else if (local) { /* ::1 on the port 127.0.0.1 got (--port 0 picks one) */
		if ((b->fd[1] = bind_one(cfg, "::1", b->port, err)) < 0) {
			server_bound_close(b);
			return -1;
		}
		b->n = 2;
	}
	return 0;
}

void server_bound_close(struct server_bound *b)
{
	for (int i = 0; b && i < b->n; i++)
		if (b->fd[i] >= 0)
			close(b->fd[i]);
	if (b)
		b->n = 0;
}

int server_create(const struct server_opts *o, struct server **out, char err[SERVER_ERR_LEN])
{
	*out = NULL;
	char missing[64];
	if (!routes_complete(missing, sizeof missing)) {
		snprintf(err, SERVER_ERR_LEN, "the operation '%s' has no handler", missing);
		return -1;
	}
	struct server *S = calloc(1, sizeof *S);
	if (!S) {
		snprintf(err, SERVER_ERR_LEN, "out of memory");
		return -1;
	}
	S->o = *o;
	S->cfg = *o->cfg;
	/* The engine that every render's ETag names: this executable, the GPUs' renderers and
	 * drivers, and the options that change an answer's pixels. */
	char facts[4096];
	size_t fl = (size_t)snprintf(facts, sizeof facts, "fftbloomd %s; jpeg-planes %d; "
	                             "jpeg-gpu-dct %d; jpeg-gpu-entropy %d; jpeg-gpu-idct %d; "
	                             "jpeg-gpu-entropy-decode %d; "
	                             "jpeg-subsampling %d; avif-speed %d", FFTBLOOMD_VERSION,
	                             S->cfg.jpeg_planes, S->cfg.jpeg_gpu_dct,
	                             S->cfg.jpeg_planes && S->cfg.jpeg_gpu_dct && S->cfg.jpeg_gpu_entropy,
	                             S->cfg.jpeg_planes && S->cfg.jpeg_gpu_idct,
	                             /* noise at quality 100 goes through the GPU's inverse DCT
	                                instead of libjpeg's planes */
	                             S->cfg.jpeg_planes && S->cfg.jpeg_gpu_idct &&
	                             S->cfg.jpeg_gpu_entropy_decode,
	                             S->cfg.jpeg_subsampling, S->cfg.avif_speed);
	if (o->jobs) {
		struct jobs_status st;
		jobs_status(o->jobs, &st);
		for (int i = 0; i < st.ngpus && fl < sizeof facts; i++)
			fl += (size_t)snprintf(facts + fl, sizeof facts - fl, "; gpu %.200s / %.100s",
			                       st.gpu[i].renderer, st.gpu[i].version);
	}
	if (etag_engine("/proc/self/exe", facts, S->engine))
		log_msg(LOG_WARN, "cannot read /proc/self/exe: render ETags name the version and the "
		        "GPUs, not the build");
	for (int i = 0; i < 32; i++)
		snprintf(S->engine_hex + 2 * i, 3, "%02x", S->engine[i]);
	pthread_mutex_init(&S->lock, NULL);
	pthread_cond_init(&S->stop_cv, NULL);
	S->conns.next = S->conns.prev = &S->conns;
	S->last_change = clock_s();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	S->id_salt = ((unsigned long long)ts.tv_nsec << 20) ^ (unsigned long long)ts.tv_sec ^
	             ((unsigned long long)(size_t)S << 7);
	if (o->listen_fd > 0) { /* socket activation: the service manager bound and listens */
		if (!(S->d[0] = start_one(S, "the socket passed", 0, o->listen_fd, err)))
			goto fail;
		S->nd = 1;
		const union MHD_DaemonInfo *di = MHD_get_daemon_info(S->d[0],
		                                                     MHD_DAEMON_INFO_BIND_PORT);
		S->port = di ? di->port : S->cfg.port;
	} else {
		struct server_bound *b = o->bound;
		int local = !strcmp(S->cfg.listen, "localhost");
		S->port = b->port;
		for (int i = 0; i < b->n; i++) {
			const char *addr = !local ? S->cfg.listen : i ? "::1" : "127.0.0.1";
			if (listen(b->fd[i], SOMAXCONN)) {
				snprintf(err, SERVER_ERR_LEN, "cannot listen on %.64s port %d: %s", addr,
				         b->port, strerror(errno));
				goto fail;
			}
			/* libmicrohttpd closes the socket once started (MHD_stop_daemon) */
			if (!(S->d[i] = start_one(S, addr, b->port, b->fd[i], err)))
				goto fail;
			S->nd = i + 1;
		}
	}
	if (pthread_create(&S->sweeper, NULL, sweeper_main, S)) {
		snprintf(err, SERVER_ERR_LEN, "cannot start the connection sweeper thread");
		goto fail;
	}
	S->sweeper_started = 1;
	pthread_setname_np(S->sweeper, "fb-sweeper");
	if (o->listen_fd <= 0)
		o->bound->n = 0; /* the daemons own the sockets now */
	*out = S;
	return 0;
fail:
	for (int i = 0; i < 2; i++)
		if (S->d[i]) {
			MHD_stop_daemon(S->d[i]); /* closed its socket */
			if (o->listen_fd <= 0)
				o->bound->fd[i] = -1;
		}
	pthread_cond_destroy(&S->stop_cv);
	pthread_mutex_destroy(&S->lock);
	free(S);
	return -1;
}

int server_port(const struct server *s)
{
	return s->port;
}

int server_listeners(const struct server *s)
{
	return s->nd;
}

void server_quiesce(struct server *s)
{
	s->quiescing = 1;
	for (int i = 0; i < s->nd; i++) {
		MHD_socket fd = MHD_quiesce_daemon(s->d[i]);
		if (fd == MHD_INVALID_SOCKET)
			continue;
		/* a socket of our own is shut down before the close: a worker thread still polling
		 * it holds it open past close(), and the kernel would go on completing handshakes
		 * into its backlog (a connection made after "no new connections" was logged, under
		 * load). A passed socket stays listening in its owner, the service manager, whose
		 * next start answers what waits in it, and one shared with a successor process
		 * accepts on in it: closed only. */
		if (s->o.listen_fd <= 0 && !s->o.shared_listen)
			shutdown(fd, SHUT_RDWR);
		close(fd);
	}
}

int server_active(struct server *s)
{
	pthread_mutex_lock(&s->lock);
	int n = s->active;
	pthread_mutex_unlock(&s->lock);
	return n;
}

double server_idle_s(struct server *s)
{
	pthread_mutex_lock(&s->lock);
	double t = clock_s() - s->last_change;
	pthread_mutex_unlock(&s->lock);
	return t;
}

void server_destroy(struct server *s)
{
	if (!s)
		return;
	if (s->sweeper_started) {
		pthread_mutex_lock(&s->lock);
		s->stop = 1;
		pthread_cond_signal(&s->stop_cv);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->sweeper, NULL);
	}
	for (int i = 0; i < s->nd; i++)
		MHD_stop_daemon(s->d[i]);
	pthread_cond_destroy(&s->stop_cv);
	pthread_mutex_destroy(&s->lock);
	free(s);
}


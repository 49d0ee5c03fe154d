/* The HTTP server's shared state, private to its files (server.c: libmicrohttpd's callbacks and
 * the request's life; server_listen.c: the listeners, start and stop; http.c: answers and
 * connection deadlines; routes_image.c: the GPU routes; routes_kernel.c, routes_info.c,
 * routes_metrics.c and routes_admin.c: the rest, over routes_status.c). Not for use
 * outside daemon/server*, http*, routes_*. */
#ifndef FFTBLOOM_HTTP_H
#define FFTBLOOM_HTTP_H

#include <microhttpd.h>
#include <jansson.h>
#include <pthread.h>
#include <stddef.h>

#include "daemon/server.h"
#include "api/errors.h"
#include "api/operation.h"
#include "api/request.h"

#define DISCARD_MAX (16u << 20) /* bytes past --max-body of a chunked body read (and dropped) so
                                   that its 413 can be answered; a longer one is cut off */
/* multipart parts a request may have: every parameter of the operation with the most request
 * table rows (REQUEST_MAX_PARAMS bounds them) as a form field of its own, plus its files and
 * params (image or file, kernel, params; input, weight, bias, params). Bounded: each is a
 * struct multipart_part on the handling thread's stack (64 x 272 bytes) */
#define BODY_AHEAD (1u << 20) /* bytes of a Content-Length body's buffer made (and held of
                                  --memory-budget) before they arrive; it grows with them */
#define MAX_PARTS 64
_Static_assert(REQUEST_MAX_PARAMS + 4 <= MAX_PARTS, "a part for every parameter and each file");
#define SWEEP_MS 200            /* how often connection deadlines are checked */
/* Connections libmicrohttpd accepts past --max-connections, each at once making room by closing
 * an idle one (make_room): a full server still admits new clients while idle ones wait. */
#define CONN_SPARE(max) ((max) / 8 + 8)

/* A TCP connection's deadlines (libmicrohttpd's own timeout is for idleness, which a client
 * trickling a byte at a time never reaches): its request's headers must be complete within
 * --header-timeout, and its body must average --min-body-rate once that long has passed. */
enum conn_phase {
	CONN_HEADERS = 0, /* waiting for the request line and headers */
	CONN_BODY,        /* receiving a body */
	CONN_BUSY,        /* handled: queued, on a GPU, or answering */
	CONN_IDLE,        /* between requests (keep-alive; --idle-timeout) */
};

struct conn {
	struct conn *prev, *next; /* the server's list, under its lock */
	int fd;
	int phase;                /* enum conn_phase */
	double since;             /* start of the phase (headers: the connection or request line) */
	unsigned long long body;  /* bytes of the body received */
	int first;                /* no request has begun on it yet */
	int cut;                  /* shut down for missing a deadline */
	char addr[64];            /* the client's address (client_addr) */
	struct req *pending;      /* a request begun by on_uri that on_request has not seen yet:
	                             libmicrohttpd drops a request it cannot parse without calling
	                             on_completed, so the connection's close ends it (only the
	                             connection's own thread touches it) */
};

struct server {
	struct server_opts o;
	struct config cfg;
	struct MHD_Daemon *d[2]; /* one per address: localhost listens on 127.0.0.1 and ::1 */
	int nd;
	int port;
	pthread_mutex_t lock;
	int active;          /* guarded by lock */
	double last_change;  /* guarded by lock */
	struct conn conns;   /* list head, guarded by lock */
	unsigned long long cut_headers, cut_body, cut_idle, evicted, refused_full; /* connections
	                       cut or refused, guarded by lock */
	int nconns;          /* connections open, guarded by lock */
	pthread_t sweeper;
	int sweeper_started, stop; /* stop guarded by lock */
	pthread_cond_t stop_cv;
	volatile int quiescing;
	unsigned long long next_id;
	unsigned long long id_salt;
	unsigned char engine[32]; /* etag_engine's digest: part of every render's ETag */
	char engine_hex[65];
};

struct req {
	struct server *S;
	struct MHD_Connection *conn;
	struct conn *tcp;     /* the connection's deadlines */
	int init;             /* the first call with the headers ran */
	int route;            /* enum op_id */
	char method[8];
	char path[128];
	char raw[256];        /* the request target as sent (before percent-decoding), cut */
	int raw_bad;          /* the target holds %00 or a control byte */
	char code[32];        /* the error code answered, for the log */
	char name[65];        /* named routes: the kernel's or the stored image's name */
	char id[65];          /* X-Request-Id */
	char client[64];
	int cors;             /* the Origin is allowed: answer with CORS headers */
	int bad_name;         /* a named route with an invalid name */
	int by_key;           /* access needed the API key (no valid signature): not public */
	struct image_entry *stored; /* GET renders: the stored image, referenced while the
	                               request lives (released when it completes) */
	char etag[48];        /* GET renders: the answer's ETag ("" for other routes) */
	char cache_key[RESULT_CACHE_KEY_LEN + 1]; /* GET renders with --result-cache: the key
	                         its answer is stored under ("" otherwise) */
	unsigned char *fetched; /* GET renders from src=: the origin's bytes, freed with r */
	const char *result_cache; /* "hit" or "miss" for X-Result-Cache; NULL: not looked up */
	double origin_s;      /* src= renders: seconds the fetch from the origin took */
	char location[96];    /* a 201's Location */
	int vary_accept;      /* GET renders: the format follows Accept (no format=) */
	int checked;          /* precheck ran */
	char origin[256];
	double t0;
	unsigned char *body;
	size_t len, cap;
	unsigned long long held; /* bytes of --memory-budget held for the body (its buffer) */
	unsigned long long announced; /* the body's Content-Length (0: chunked) */
	int too_large;        /* the body passed --max-body while streaming */
	int over_budget;      /* a chunked body's buffer did not fit --memory-budget: its
	                         JOBS_E_BUDGET_SPENT or JOBS_E_OVER_BUDGET */
	size_t discarded;
	int started;          /* a job was started */
	int job_done;         /* its done() ran; guarded by done_mu */
	pthread_mutex_t done_mu;
	pthread_cond_t done_cv;
	struct job job;
	int status;           /* of the answer queued; 0 until then */
	size_t bytes;
};

/* server.c: libmicrohttpd's callbacks for a request */
/* 1 when every operation has a handler; else 0 with the first one without named in missing. */
int routes_complete(char *missing, size_t len);
enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                           const char *method, const char *version, const char *upload,
                           size_t *upload_size, void **con_cls);
void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                  enum MHD_RequestTerminationCode toe);
void *on_uri(void *cls, const char *uri, struct MHD_Connection *c);
/* Ends a request that libmicrohttpd dropped before on_request saw it (its connection closed):
 * logged and freed as on_completed would. */
void req_dropped(struct server *S, struct MHD_Connection *c, struct req *r);

/* http.c */
void touch(struct server *S, int delta);
/* Queues an answer with the headers every answer carries. body: owned (freed with free) when
 * `owned`, else copied. extra: NULL-terminated name/value pairs. */
enum MHD_Result respond(struct req *r, int status, const char *ctype, void *body, size_t len,
                        int owned, const char *const *extra);
enum MHD_Result respond_json(struct req *r, int status, json_t *o, const char *const *extra);
/* Queues the error body {"error": {"status", "code", "message"}} of the error table's row error
 * (enum api_error; API_E_NONE answers 500 internal), with the message made from fmt. */
enum MHD_Result respond_error_x(struct req *r, int error, const char *const *extra,
                                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define respond_error(r, error, ...) respond_error_x(r, error, NULL, __VA_ARGS__)
/* --retry-after as a Retry-After value, written into buf. */
const char *retry_after(const struct req *r, char buf[16]);
/* The error (a 503 row) with Retry-After. */
enum MHD_Result respond_busy(struct req *r, int error, const char *msg);
void client_addr(struct MHD_Connection *c, char *buf, size_t len);
int client_fd(struct MHD_Connection *c);
struct conn *conn_of(struct MHD_Connection *c);
void set_phase(struct server *S, struct conn *t, int phase);
void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                   enum MHD_ConnectionNotificationCode toe);
void *sweeper_main(void *arg);

/* routes_image.c */
int sniffed(const unsigned char *p, size_t len);
/* The 415 for a body of `what` ("image", "kernel") that sniffed refused: its message names
 * every format read, from the format table. */
enum MHD_Result respond_not_image(struct req *r, const char *what);
/* The steps the job routes share, in this order; each returns 0 to go on, or 1 when it answered
 * (*ret holds the result). job_from_query: r's job as its route's operation (the job kind, the
 * request's defaults), then every query-string parameter through the request table (skip_sig:
 * a signed URL's sig= and exp= left out, checked before); a bad one is a 400. job_accept, after
 * request_finish: the answer's formats from the Accept header; 406 where it allows none of
 * the formats made and no format= names one. job_named_kernel: the kernel kernel=NAME names
 * into the job (released with it); 400 where none has that name. */
int job_from_query(struct req *r, int skip_sig, enum MHD_Result *ret);
int job_accept(struct req *r, enum MHD_Result *ret);
int job_named_kernel(struct req *r, enum MHD_Result *ret);
enum MHD_Result start_job(struct req *r);
enum MHD_Result route_image(struct req *r);
/* 406 for an Accept header allowing none of the formats made (listed in the answer). */
enum MHD_Result not_acceptable(struct req *r, const char *accept);
enum MHD_Result route_tensor(struct req *r);

/* routes_store.c */
enum MHD_Result route_image_store(struct req *r);  /* PUT, GET, DELETE /v1/images/NAME */
enum MHD_Result route_images(struct req *r);       /* GET /v1/images */
enum MHD_Result route_render(struct req *r);       /* GET /v1/bloom/NAME, /v1/convolve/NAME */
/* GET /v1/bloom?src=URL, /v1/convolve?src=URL: the image fetched from an allowed origin
 * (origin.h) off this thread, rendered as route_render does a stored one; its ETag from the
 * origin's ETag / Last-Modified (or its bytes) and the parameters. */
enum MHD_Result route_render_src(struct req *r);
/* The headers a successful job's answer adds (Location of a 201; a render's ETag,
 * Cache-Control, Vary, X-Result-Cache) at extra[e...] (room for 10 entries); returns the new
 * e. */
int store_answer_headers(struct req *r, const struct job *j, const char **extra, int e);
/* Whether a GET render may go on: with --url-signing-key-file, a valid Bearer key (bearer) or
 * a valid sig=; without, the API key's rule of /v1/. API_E_NONE, or the error to answer (401, 403)
 * with its message (msg). Sets r->by_key when the API key was what granted it. */
int store_access(struct req *r, int bearer, char *msg, size_t len);

/* routes_kernel.c */
enum MHD_Result route_kernel(struct req *r);  /* PUT, GET, DELETE /v1/kernels/NAME */
enum MHD_Result route_kernels(struct req *r); /* GET /v1/kernels */
/* routes_info.c */
enum MHD_Result route_info(struct req *r);    /* GET /v1/info */
/* routes_metrics.c */
enum MHD_Result route_metrics(struct req *r); /* GET /metrics */
/* routes_admin.c */
enum MHD_Result route_get(struct req *r);
enum MHD_Result route_faults(struct req *r); /* POST /v1/faults: arms a GPU fault (test builds) */

/* routes_status.c: the service's state as the admin routes report it. */
/* This process's jobs, or with several GPUs every worker's (this one's fresh, the others' as
 * they last published), their GPU threads in worker order (a worker not running keeps its
 * place, alive 0). Queue figures are summed. */
void routes_status(struct server *S, struct jobs_status *st);
/* /readyz's rule: 1 ready, or 0 with why; *workers (when not NULL) gets each worker's state. */
int routes_ready(struct server *S, char *why, size_t len, json_t **workers);
/* The connection counters: this process's, or summed over the workers (this one's fresh). */
void routes_conns(struct server *S, struct service_conns *c);
/* "gpu" or "cpu": the engine the daemon resolved at start (--engine). */
const char *routes_engine(const struct server *S);
/* The software renderers among the GPU threads' contexts, as warnings; NULL when none. */
json_t *routes_warnings(const struct jobs_status *st);

#endif

/* A headless OpenGL ES 3.1 context with no window system: the EGL device platform
 * (EGL_EXT_platform_device: NVIDIA and other vendors) or Mesa's surfaceless platform (llvmpipe
 * when there is no GPU), with the facts about the context that planning needs.
 *
 * GL contract: egl_ctx_create makes the context current on the calling thread; from then on only
 * that thread may issue GL calls until egl_ctx_release is called. Changes no other GL state. */
#ifndef FFTBLOOM_EGL_H
#define FFTBLOOM_EGL_H

#include "core/log.h"

#define EGL_ERR_LEN 512

/* EGLP_CURRENT: the caller's context current on the calling thread, used and not owned
 * (egl_ctx_destroy forgets it, leaving it current; egl_ctx_create_shared refuses it). */
enum egl_platform { EGLP_AUTO = 0, EGLP_DEVICE, EGLP_SURFACELESS, EGLP_CURRENT };

enum egl_error {
	EGLC_OK = 0,
	EGLC_E_NO_DISPLAY = -1,  /* no platform gave a display */
	EGLC_E_INIT = -2,        /* eglInitialize failed */
	EGLC_E_CONTEXT = -3,     /* no ES 3.1 context */
	EGLC_E_DEVICE = -4,      /* device index out of range */
	EGLC_E_NOMEM = -5,
	EGLC_E_CURRENT = -6,     /* eglMakeCurrent failed */
};

struct egl_opts {
	int platform;     /* enum egl_platform */
	int device_index; /* for EGLP_DEVICE (and AUTO's device attempt): which EGL device */
	int debug;        /* KHR_debug context; messages go to the log sink */
	int keep_display; /* 1: egl_ctx_destroy leaves the display initialized (a library's
	                     context: the process's other contexts may be on the same display, and
	                     eglTerminate would take it from them) */
};

struct egl_info {
	char platform[16];       /* "device", "surfaceless" or "current" */
	int device_index;        /* -1 for surfaceless */
	int device_count;        /* EGL devices seen (0 if the extension is missing) */
	char egl_vendor[128], egl_version[64], device_ext[256];
	char gl_vendor[128], renderer[256], version[128], glsl_version[128];
	int max_shared_memory;      /* GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, bytes */
	int max_invocations;        /* GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS */
	int max_group_size[3];      /* GL_MAX_COMPUTE_WORK_GROUP_SIZE */
	int max_group_count[3];     /* GL_MAX_COMPUTE_WORK_GROUP_COUNT */
	long long max_ssbo_size;    /* GL_MAX_SHADER_STORAGE_BLOCK_SIZE, bytes */
	int max_ssbo_bindings;      /* GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS */
	int timer_query;            /* GL_EXT_disjoint_timer_query */
	int subgroup;               /* GL_KHR_shader_subgroup */
	int subgroup_size;          /* 0 if unknown */
	int subgroup_shuffle;       /* subgroup shuffles in compute shaders (GL_KHR_shader_subgroup's
	                               supported stages and features) */
	int subgroup_pairs;         /* ... and invocations 2t and 2t + 1 of a work group of local
	                               width 2 are subgroup neighbours (ID ^ 1), as a dispatch
	                               found */
	int fp16;                   /* GL_EXT_shader_16bit_storage or explicit fp16 arithmetic */
	int debug_output;           /* GL_KHR_debug active */
	int buffer_storage;         /* GL_EXT_buffer_storage: persistently mapped buffers */
	int robustness;             /* GL_KHR_robustness or GL_EXT_robustness */
	int reset_notification;     /* the context learns of GPU resets (lose-context-on-reset) */
	int software;               /* the renderer is a CPU rasterizer (llvmpipe, SwiftShader...) */
};

struct egl_ctx;

/* Creates the context and makes it current on this thread. AUTO tries the device platform, then
 * surfaceless. On failure returns a negative egl_error and writes into err every platform tried
 * with the EGL error by name (e.g. "device: eglInitialize failed: EGL_NOT_INITIALIZED"). */
int egl_ctx_create(const struct egl_opts *o, const struct log_sink *log, struct egl_ctx **out,
                   char err[EGL_ERR_LEN]);
void egl_ctx_destroy(struct egl_ctx *c); /* NULL-safe; releases the context from this thread */

/* A second context in main's share group (programs and buffers are the same objects in both),
 * not current anywhere: another thread makes it current (egl_ctx_make_current), works, and
 * releases it (egl_ctx_release) before it is destroyed, which happens before main's. Its info
 * is main's. */
int egl_ctx_create_shared(struct egl_ctx *main, struct egl_ctx **out, char err[EGL_ERR_LEN]);

const struct egl_info *egl_ctx_info(const struct egl_ctx *c);

/* Number of EGL devices (0 when EGL_EXT_device_enumeration is missing), without a context. */
int egl_device_count(void);
/* The EGL devices that are not software rasterizers (no EGL_MESA_device_software), their
 * indices in list (max at most); returns how many. */
int egl_gpu_devices(int *list, int max);

/* Makes the context current on the calling thread / releases it from the calling thread. */
int egl_ctx_make_current(struct egl_ctx *c);
void egl_ctx_release(struct egl_ctx *c);

/* What glGetGraphicsResetStatus says of the context: a GPU reset (GL_KHR_robustness) loses
 * it and everything in it, and only a new context works again. EGL_RESET_NONE where the
 * context cannot tell (no robustness extension). */
enum egl_reset { EGL_RESET_NONE = 0, EGL_RESET_GUILTY, EGL_RESET_INNOCENT, EGL_RESET_UNKNOWN };
int egl_ctx_reset_status(struct egl_ctx *c);
const char *egl_reset_name(int status);

/* Name of an EGL error code ("EGL_BAD_ACCESS"). */
const char *egl_error_name(int code);
const char *egl_strerror(int code);

#endif

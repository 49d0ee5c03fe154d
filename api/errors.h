/* The HTTP API's errors, declared once: one row per answer the daemon can give with an error
 * body {"error": {"status", "code", "message"}}: its code, its HTTP status and what it means.
 * The daemon answers by row, OpenAPI lists the codes from it and the docs' error list is made
 * from it (fftbloomd --print-errors). The engines keep their own codes (*_strerror); the daemon
 * maps them to rows in one place (api/engine_errors.c), which the CLI shares. */
#ifndef FFTBLOOM_ERRORS_H
#define FFTBLOOM_ERRORS_H

#include <stdio.h>

/* Rows, grouped by status. A code may have two rows when one failure is the client's in one
 * place and the server's in another (out_of_memory: 503 before the work, 500 after it). */
enum api_error {
	API_E_NONE = 0, /* no error: not a row of the list */
	API_E_BAD_REQUEST,
	API_E_BAD_PARAMETER,
	API_E_BAD_MULTIPART,
	API_E_EMPTY_BODY,
	API_E_MISSING_IMAGE,
	API_E_MISSING_TENSOR,
	API_E_UNKNOWN_KERNEL,
	API_E_BAD_KERNEL_NAME,
	API_E_BAD_IMAGE_NAME,
	API_E_KERNEL_NAME_REJECTED,
	API_E_UNAUTHORIZED,
	API_E_SIGNATURE_REQUIRED,
	API_E_BAD_SIGNATURE,
	API_E_URL_EXPIRED,
	API_E_EXPIRY_REQUIRED,
	API_E_NOT_FOUND,
	API_E_KERNEL_NOT_FOUND,
	API_E_IMAGE_NOT_FOUND,
	API_E_METHOD_NOT_ALLOWED,
	API_E_NOT_ACCEPTABLE,
	API_E_KERNEL_REGISTRY_FULL,
	API_E_KERNEL_MEMORY_FULL,
	API_E_IMAGE_STORE_FULL,
	API_E_IMAGE_MEMORY_FULL,
	API_E_BODY_TOO_LARGE,
	API_E_IMAGE_TOO_LARGE,
	API_E_KERNEL_TOO_LARGE,
	API_E_TENSOR_TOO_LARGE,
	API_E_TOO_LARGE_FOR_GPU,
	API_E_UNSUPPORTED_MEDIA_TYPE,
	API_E_UNSUPPORTED_IMAGE,
	API_E_INVALID_REQUEST,
	API_E_INVALID_SHAPE,
	API_E_IMAGE_EMPTY,
	API_E_IMAGE_TRUNCATED,
	API_E_IMAGE_CORRUPT,
	API_E_TENSOR_CORRUPT,
	API_E_RESULT_NOT_FINITE,
	API_E_INPUT_NOT_FINITE,
	API_E_TOO_LARGE_FOR_FORMAT,
	API_E_TOO_MANY_NEW_SIZES,
	API_E_CLIENT_GONE,
	API_E_INTERNAL,
	API_E_ANSWER_NOMEM,
	API_E_ENCODE_FAILED,
	API_E_GPU_ERROR,
	API_E_KERNEL_REJECTED,
	API_E_NOT_IMPLEMENTED,
	API_E_QUEUE_FULL,
	API_E_SHUTTING_DOWN,
	API_E_MEMORY_BUDGET,
	API_E_OUT_OF_MEMORY,
	API_E_GPU_OUT_OF_MEMORY,
	API_E_GPU_RESET,
	API_E_DEADLINE_EXCEEDED,
	/* rendering from an origin (GET /v1/bloom?src=URL) */
	API_E_BAD_SRC,
	API_E_ORIGIN_OFF,
	API_E_ORIGIN_NOT_ALLOWED,
	API_E_ORIGIN_ADDRESS,
	API_E_ORIGIN_NOT_FOUND,
	API_E_ORIGIN_TOO_LARGE,
	API_E_ORIGIN_NOT_IMAGE,
	API_E_ORIGIN_ERROR,
	API_E_ORIGIN_TIMEOUT,
	API_E_ORIGIN_BUSY,
	API_E_OUTPUT_TOO_LARGE,
	API_E_ORIGIN_TLS,
	API_E_COUNT
};

struct api_error_def {
	const char *code;  /* the error body's "code" */
	int status;        /* the HTTP status answered */
	const char *text;  /* what it means and what to do: the docs' and OpenAPI's words */
};

/* Indexed by enum api_error; row 0 (API_E_NONE) is {"", 0, ""}. */
extern const struct api_error_def api_errors[API_E_COUNT];

/* The row of e; row 0 for a value out of range. */
const struct api_error_def *api_error(int e);

/* The first row whose code is code (status 0: any status), or API_E_NONE. */
int api_error_find(const char *code, int status);

/* The exit status of the command-line tool (fftbloom) for a failure of row e: 2 where the
 * command as written cannot work (a parameter, a kernel name, or shapes that do not fit each
 * other, the parameters, the GPU's limits or the format), as for a usage error; 1 for every
 * other row (an input that cannot be decoded, memory, the GPU, the server); 0 for API_E_NONE. */
int api_error_exit_status(int e);

/* The Markdown error list (a table of status, code and meaning, by status), to f. */
void api_errors_markdown(FILE *f);

#endif

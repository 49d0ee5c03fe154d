/* The HTTP API's error table; see errors.h. */
#include "api/errors.h"

#include <string.h>

#include "core/urlsign.h"

_Static_assert(URLSIGN_EXP_SKEW == 30, "url_expired's text states the clock-skew allowance");

const struct api_error_def api_errors[API_E_COUNT] = {
	[API_E_NONE] = {"", 0, ""},
	[API_E_BAD_REQUEST] = {"bad_request", 400, "the request's framing: a NUL or control byte "
		"in the target, a bad header field, Host missing or twice, Content-Length or "
		"Transfer-Encoding ambiguous, or a body on a method that takes none (the connection "
		"closes)"},
	[API_E_BAD_PARAMETER] = {"bad_parameter", 400, "a parameter unknown, not taken by the "
		"operation, given twice, out of its bounds, or excluding another (the message names "
		"it and its bounds)"},
	[API_E_BAD_MULTIPART] = {"bad_multipart", 400, "a multipart/form-data body without a valid "
		"boundary, malformed, or with a part the operation does not take or a part given twice "
		"(a form field twice included)"},
	[API_E_EMPTY_BODY] = {"empty_body", 400, "no body, or an empty image, kernel or tensor "
		"part"},
	[API_E_MISSING_IMAGE] = {"missing_image", 400, "a multipart body without an image (or file) "
		"part"},
	[API_E_MISSING_TENSOR] = {"missing_tensor", 400, "a multipart body without the input and "
		"weight parts"},
	[API_E_UNKNOWN_KERNEL] = {"unknown_kernel", 400, "kernel= names no registered kernel"},
	[API_E_BAD_KERNEL_NAME] = {"bad_kernel_name", 400, "a kernel name that is not 1-64 "
		"characters of A-Z a-z 0-9 . _ - (not starting with '.')"},
	[API_E_BAD_IMAGE_NAME] = {"bad_image_name", 400, "an image name that is not 1-64 "
		"characters of A-Z a-z 0-9 . _ - (not starting with '.')"},
	[API_E_KERNEL_NAME_REJECTED] = {"kernel_rejected", 400, "the kernel registry refused the "
		"name"},
	[API_E_UNAUTHORIZED] = {"unauthorized", 401, "the API key is set and the request lacks "
		"Authorization: Bearer KEY, or has another (WWW-Authenticate: Bearer)"},
	[API_E_SIGNATURE_REQUIRED] = {"signature_required", 403, "URL signing is on and a GET render "
		"has neither sig= nor the API key"},
	[API_E_BAD_SIGNATURE] = {"bad_signature", 403, "a GET render's sig= does not sign its path "
		"and parameters"},
	[API_E_URL_EXPIRED] = {"url_expired", 403, "a signed GET render whose exp= (Unix seconds, "
		"covered by the signature) is more than 30 s past: sign a new URL"},
	[API_E_EXPIRY_REQUIRED] = {"expiry_required", 403, "--url-require-expiry is on and a signed "
		"GET render has no exp="},
	[API_E_NOT_FOUND] = {"not_found", 404, "no route of that path (or, in a build without fault "
		"injection, /v1/faults)"},
	[API_E_KERNEL_NOT_FOUND] = {"kernel_not_found", 404, "no registered kernel of that name"},
	[API_E_IMAGE_NOT_FOUND] = {"image_not_found", 404, "no stored image of that name"},
	[API_E_METHOD_NOT_ALLOWED] = {"method_not_allowed", 405, "a method the route does not take "
		"(Allow lists those it does)"},
	[API_E_NOT_ACCEPTABLE] = {"not_acceptable", 406, "no format= and an Accept header allowing "
		"none of the image types made (listed in error.formats)"},
	[API_E_KERNEL_REGISTRY_FULL] = {"kernel_registry_full", 409, "--max-kernels kernels are "
		"registered already: delete one first"},
	[API_E_KERNEL_MEMORY_FULL] = {"kernel_memory_full", 409, "the kernels registered hold the "
		"--kernel-memory this one needs: delete one first"},
	[API_E_IMAGE_STORE_FULL] = {"image_store_full", 409, "--max-images images are stored "
		"already: delete one first"},
	[API_E_IMAGE_MEMORY_FULL] = {"image_memory_full", 409, "the images stored hold the "
		"--image-memory this one needs: delete one first"},
	[API_E_BODY_TOO_LARGE] = {"body_too_large", 413, "a body larger than --max-body, or than "
		"the whole --memory-budget (from Content-Length before reading; a chunked body once it "
		"passes the limit)"},
	[API_E_IMAGE_TOO_LARGE] = {"image_too_large", 413, "an image above --max-side or "
		"--max-pixels, or one to store above the whole --image-memory"},
	[API_E_KERNEL_TOO_LARGE] = {"kernel_too_large", 413, "a kernel above --kernel-max-pixels or "
		"the whole --kernel-memory"},
	[API_E_TENSOR_TOO_LARGE] = {"tensor_too_large", 413, "a tensor, or the output, larger than "
		"the --memory-budget"},
	[API_E_TOO_LARGE_FOR_GPU] = {"too_large_for_gpu", 413, "a padded size or shape beyond the "
		"GPU's limits"},
	[API_E_UNSUPPORTED_MEDIA_TYPE] = {"unsupported_media_type", 415, "a body in none of the "
		"formats read (by its first bytes; the format table, formats.md, lists them), or not "
		"multipart/form-data where the operation needs it"},
	[API_E_UNSUPPORTED_IMAGE] = {"unsupported_image", 415, "an image format, or a feature of "
		"one, the decoder does not read"},
	[API_E_INVALID_REQUEST] = {"invalid_request", 422, "parameters or a kernel the engine "
		"cannot use together (the message says why)"},
	[API_E_INVALID_SHAPE] = {"invalid_shape", 422, "tensor shapes that do not fit each other or "
		"the parameters"},
	[API_E_IMAGE_EMPTY] = {"image_empty", 422, "an image of zero width or height"},
	[API_E_IMAGE_TRUNCATED] = {"image_truncated", 422, "an image whose data ends early"},
	[API_E_IMAGE_CORRUPT] = {"image_corrupt", 422, "an image that could not be decoded"},
	[API_E_TENSOR_CORRUPT] = {"tensor_corrupt", 422, "not an NPY file, or a malformed one"},
	[API_E_RESULT_NOT_FINITE] = {"result_not_finite", 422, "float32 overflowed in the "
		"convolution (an image or kernel value near 3.4e38, or infinite): scale it down"},
	[API_E_INPUT_NOT_FINITE] = {"input_not_finite", 422, "an image, kernel or tensor with NaN "
		"or infinite samples (the message counts them): every operation refuses them"},
	[API_E_TOO_LARGE_FOR_FORMAT] = {"too_large_for_format", 422, "format= cannot hold the "
		"result's size (WebP past 16383 a side)"},
	[API_E_TOO_MANY_NEW_SIZES] = {"too_many_new_sizes", 429, "more new image sizes from this "
		"client within a minute than --new-sizes-per-minute (Retry-After)"},
	[API_E_CLIENT_GONE] = {"client_gone", 499, "the client closed the connection before the "
		"answer (logged, never sent)"},
	[API_E_INTERNAL] = {"internal", 500, "a job that ended without a result or an error, or an "
		"ETag that could not be computed"},
	[API_E_ANSWER_NOMEM] = {"out_of_memory", 500, "the work was done but memory ran out "
		"building its answer"},
	[API_E_ENCODE_FAILED] = {"encode_failed", 500, "the result could not be encoded"},
	[API_E_GPU_ERROR] = {"gpu_error", 500, "a GL or program failure on the GPU"},
	[API_E_KERNEL_REJECTED] = {"kernel_rejected", 500, "the kernel registry could not take the "
		"kernel"},
	[API_E_NOT_IMPLEMENTED] = {"not_implemented", 501, "a transfer coding other than chunked"},
	[API_E_QUEUE_FULL] = {"queue_full", 503, "the job queue is full (Retry-After)"},
	[API_E_SHUTTING_DOWN] = {"shutting_down", 503, "the server is draining: the job was not run, "
		"or its GPU work was abandoned (Retry-After)"},
	[API_E_MEMORY_BUDGET] = {"memory_budget", 503, "the requests in progress hold the "
		"--memory-budget this one needs (Retry-After)"},
	[API_E_OUT_OF_MEMORY] = {"out_of_memory", 503, "host memory ran out for this request "
		"(Retry-After)"},
	[API_E_GPU_OUT_OF_MEMORY] = {"gpu_out_of_memory", 503, "GPU memory ran out, even in tiles "
		"(Retry-After)"},
	[API_E_GPU_RESET] = {"gpu_reset", 503, "the GPU was reset while the job ran; its context is "
		"being rebuilt (Retry-After)"},
	[API_E_DEADLINE_EXCEEDED] = {"deadline_exceeded", 504, "the job waited past --deadline for a "
		"codec thread or a GPU (dropped), or its GPU work ran past --gpu-timeout (abandoned "
		"before its next dispatch)"},
	[API_E_BAD_SRC] = {"bad_src", 400, "src= is missing or not a URL that may be fetched: only "
		"http and https, no userinfo or fragment, a numeric host in dotted decimal only, no "
		"encoded dots or slashes in the path"},
	[API_E_ORIGIN_OFF] = {"origin_off", 403, "src= given, but the server fetches from no "
		"origin (no --origin-allow)"},
	[API_E_ORIGIN_NOT_ALLOWED] = {"origin_not_allowed", 403, "src= (or a redirect it led to) "
		"is under no --origin-allow entry (scheme, host, port and path prefix)"},
	[API_E_ORIGIN_ADDRESS] = {"origin_address_refused", 403, "src='s host is or resolves to a "
		"private, loopback, link-local, multicast, unspecified or reserved address that no "
		"--origin-allow entry names as an IP literal"},
	[API_E_ORIGIN_NOT_FOUND] = {"origin_not_found", 404, "the origin answered 404 or 410 for "
		"src= (passed on, so that a CDN may cache it as missing)"},
	[API_E_ORIGIN_TOO_LARGE] = {"origin_too_large", 422, "the origin's image is larger than "
		"--origin-max-bytes (by its Content-Length or by the bytes that came)"},
	[API_E_ORIGIN_NOT_IMAGE] = {"origin_not_image", 422, "the origin's answer is not an image "
		"this server reads (by its first bytes)"},
	[API_E_ORIGIN_ERROR] = {"origin_error", 502, "the origin could not be fetched: an error "
		"status (5xx, 403, ...), no connection, no address, more than 5 redirects, a redirect "
		"to something not a URL taken here, a broken transfer"},
	[API_E_ORIGIN_TIMEOUT] = {"origin_timeout", 502, "the origin did not answer within "
		"--origin-connect-timeout or --origin-timeout"},
	[API_E_ORIGIN_BUSY] = {"origin_busy", 503, "every fetch thread is busy and --origin-queue "
		"fetches wait (Retry-After)"},
	[API_E_ORIGIN_TLS] = {"origin_tls", 502, "an https origin's certificate was not accepted "
		"(not from a CA the server trusts: the system's, or --origin-ca; expired; or not for the "
		"URL's host) or its TLS handshake failed"},
	[API_E_OUTPUT_TOO_LARGE] = {"output_too_large", 413, "width, height and dpr ask for an "
		"answer with a side above 16384 or above --max-side, or more pixels than --max-pixels "
		"(checked before the image is decoded)"},
};

const struct api_error_def *api_error(int e)
{
	return &api_errors[e > API_E_NONE && e < API_E_COUNT ? e : API_E_NONE];
}

int api_error_find(const char *code, int status)
{
	for (int e = API_E_NONE + 1; e < API_E_COUNT; e++)
		if (!strcmp(api_errors[e].code, code) && (!status || api_errors[e].status == status))
			return e;
	return API_E_NONE;
}

int api_error_exit_status(int e)
{
	switch (e) {
	case API_E_NONE: return 0;
	case API_E_BAD_PARAMETER:
	case API_E_MISSING_IMAGE:
	case API_E_MISSING_TENSOR:
	case API_E_UNKNOWN_KERNEL:
	case API_E_BAD_KERNEL_NAME:
	case API_E_BAD_IMAGE_NAME:
	case API_E_INVALID_REQUEST:
	case API_E_INVALID_SHAPE:
	case API_E_TOO_LARGE_FOR_GPU:
	case API_E_TOO_LARGE_FOR_FORMAT:
	case API_E_NOT_ACCEPTABLE: return 2;
	default: return 1;
	}
}

void api_errors_markdown(FILE *f)
{
	fputs("| Status | Code | Meaning |\n|---|---|---|\n", f);
	for (int e = API_E_NONE + 1; e < API_E_COUNT; e++)
		fprintf(f, "| %d | `%s` | %s |\n", api_errors[e].status, api_errors[e].code,
		        api_errors[e].text);
}

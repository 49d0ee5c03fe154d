/* GET /openapi.json: the OpenAPI 3 description of the daemon's API, generated from the same
 * tables the server reads (the request parameter table, the output formats), so the document
 * cannot drift from what the parser accepts. */
#ifndef FFTBLOOM_OPENAPI_H
#define FFTBLOOM_OPENAPI_H

#include <jansson.h>

/* A new reference to the document, or NULL when out of memory. api_key: /v1/ needs the bearer
 * key; url_signing: the GET render URLs take a signature (or the key) instead. */
json_t *openapi_document(const char *version, int api_key, int url_signing);

#endif

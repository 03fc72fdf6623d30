#ifndef SIGNIN_CCURL_SHIM_H
#define SIGNIN_CCURL_SHIM_H
#include <curl/curl.h>

/* Swift cannot call C variadic functions: one typed wrapper per argument kind. */
static inline CURLcode signin_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode signin_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode signin_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode signin_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
typedef size_t (*signin_curl_write_cb)(char *, size_t, size_t, void *);
static inline CURLcode signin_curl_setopt_write(CURL *h, CURLoption o, signin_curl_write_cb v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode signin_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
#endif

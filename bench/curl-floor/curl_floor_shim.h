// The few libcurl calls the curl floor makes, typed (Swift cannot call curl_easy_setopt's variadic form).
#include <curl/curl.h>
static inline CURLcode floor_setopt_string(CURL *c, CURLoption o, const char *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode floor_setopt_long(CURL *c, CURLoption o, long v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode floor_setopt_slist(CURL *c, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(c, o, v); }
static size_t floor_discard(char *p, size_t s, size_t n, void *u) { (void)p; (void)u; return s * n; }
static inline CURLcode floor_discard_body(CURL *c) { return curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, floor_discard); }

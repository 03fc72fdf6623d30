#ifndef SIGNIN_CCURL_H
#define SIGNIN_CCURL_H
/*
 * libcurl, loaded on first use. signin's cached commands (token, whoami) never touch the network, so they
 * should not pay for loading libcurl and the dozens of libraries it links (TLS, HTTP/2, SSH, LDAP, Kerberos...).
 * These typed wrappers dlopen libcurl.so.4 the first time one is called. They also stand in for the C
 * variadic functions (curl_easy_setopt, curl_easy_getinfo), which Swift cannot call.
 */
#include <curl/curl.h>

/* Loads libcurl once; returns 0 on success, or -1 with a message in `signin_curl_load_error()`. */
int signin_curl_load(void);
const char *signin_curl_load_error(void);

CURL *signin_curl_easy_init(void);
void signin_curl_easy_cleanup(CURL *h);
/* Back to the options of a new handle, keeping its live connections (a pool's handle, reused keep-alive). */
void signin_curl_easy_reset(CURL *h);
CURLcode signin_curl_easy_perform(CURL *h);
const char *signin_curl_easy_strerror(CURLcode code);
struct curl_slist *signin_curl_slist_append(struct curl_slist *list, const char *s);
void signin_curl_slist_free_all(struct curl_slist *list);

CURLcode signin_curl_setopt_long(CURL *h, CURLoption o, long v);
CURLcode signin_curl_setopt_string(CURL *h, CURLoption o, const char *v);
CURLcode signin_curl_setopt_pointer(CURL *h, CURLoption o, void *v);
CURLcode signin_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v);
typedef size_t (*signin_curl_write_cb)(char *, size_t, size_t, void *);
CURLcode signin_curl_setopt_write(CURL *h, CURLoption o, signin_curl_write_cb v);
CURLcode signin_curl_getinfo_long(CURL *h, CURLINFO i, long *v);
/* The transfer's progress callback (CURLOPT_XFERINFOFUNCTION, with progress on): a non-zero answer aborts it. */
typedef int (*signin_curl_xferinfo_cb)(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
CURLcode signin_curl_setopt_xferinfo(CURL *h, void *context, signin_curl_xferinfo_cb cb);
/*
 * signin opens and closes the transfer's sockets itself: close-on-exec (no child process inherits one), and
 * reported to `hook(context, fd, opened)` on open (opened = 1; a non-zero answer refuses the socket) and before
 * close (opened = 0), so that a canceller can shut a waiting transfer down at once.
 */
typedef int (*signin_curl_socket_hook)(void *context, int fd, int opened);
CURLcode signin_curl_watch_sockets(CURL *h, void *context, signin_curl_socket_hook hook);
#endif

#include "ccurl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = -1;
static char error[256] = "libcurl not loaded";

#define SYM(field, name) \
    if (!(*(void **)&api.field = dlsym(h, name))) { snprintf(error, sizeof error, "libcurl lacks %s", name); return; }

#ifdef SIGNIN_STATIC_EXECUTABLE
/* The static half of the release build cannot load shared libraries: it hands the command to the dynamic half
 * (SignInKit's DynamicSibling), which does not return. */
extern void signin_needs_dynamic(int need); /* 1: the network (DynamicSibling.Need) */
#endif

static void load(void) {
#ifdef SIGNIN_STATIC_EXECUTABLE
    signin_needs_dynamic(1);
#endif
    void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libcurl.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(error, sizeof error, "cannot load libcurl (install libcurl4): %s", dlerror());
        return;
    }
    SYM(global_init, "curl_global_init")
    SYM(easy_init, "curl_easy_init")
    SYM(easy_cleanup, "curl_easy_cleanup")
    SYM(easy_reset, "curl_easy_reset")
    SYM(easy_perform, "curl_easy_perform")
    SYM(easy_strerror, "curl_easy_strerror")
    SYM(easy_setopt, "curl_easy_setopt")
    SYM(easy_getinfo, "curl_easy_getinfo")
    SYM(slist_append, "curl_slist_append")
    SYM(slist_free_all, "curl_slist_free_all")
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(error, sizeof error, "curl_global_init failed");
        return;
    }
    loaded = 0;
}

int signin_curl_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *signin_curl_load_error(void) { return error; }

/* Callers check signin_curl_load() first; these assume it succeeded. */
CURL *signin_curl_easy_init(void) { return signin_curl_load() == 0 ? api.easy_init() : NULL; }
void signin_curl_easy_cleanup(CURL *h) { api.easy_cleanup(h); }
void signin_curl_easy_reset(CURL *h) { api.easy_reset(h); }
CURLcode signin_curl_easy_perform(CURL *h) { return api.easy_perform(h); }
const char *signin_curl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }
struct curl_slist *signin_curl_slist_append(struct curl_slist *l, const char *s) { return api.slist_append(l, s); }
void signin_curl_slist_free_all(struct curl_slist *l) { api.slist_free_all(l); }
CURLcode signin_curl_setopt_long(CURL *h, CURLoption o, long v) { return api.easy_setopt(h, o, v); }
CURLcode signin_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return api.easy_setopt(h, o, v); }
CURLcode signin_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return api.easy_setopt(h, o, v); }
CURLcode signin_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return api.easy_setopt(h, o, v); }
CURLcode signin_curl_setopt_write(CURL *h, CURLoption o, signin_curl_write_cb v) { return api.easy_setopt(h, o, v); }
CURLcode signin_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return api.easy_getinfo(h, i, v); }
CURLcode signin_curl_setopt_xferinfo(CURL *h, void *context, signin_curl_xferinfo_cb cb) {
    CURLcode rc = api.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cb);
    if (rc == CURLE_OK) rc = api.easy_setopt(h, CURLOPT_XFERINFODATA, context);
    if (rc == CURLE_OK) rc = api.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    return rc;
}

static _Atomic(signin_curl_socket_hook) socket_hook;

static curl_socket_t open_socket(void *context, curlsocktype purpose, struct curl_sockaddr *a) {
    (void)purpose;
    int fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);

    if (fd >= 0 && socket_hook && socket_hook(context, fd, 1) != 0) {
        close(fd);
        return CURL_SOCKET_BAD;
    }
    return fd < 0 ? CURL_SOCKET_BAD : fd;
}

static int close_socket(void *context, curl_socket_t fd) {
    if (socket_hook) socket_hook(context, fd, 0);
    return close(fd);
}

CURLcode signin_curl_watch_sockets(CURL *h, void *context, signin_curl_socket_hook hook) {
    socket_hook = hook;
    CURLcode rc = api.easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    if (rc == CURLE_OK) rc = api.easy_setopt(h, CURLOPT_OPENSOCKETDATA, context);
    if (rc == CURLE_OK) rc = api.easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    if (rc == CURLE_OK) rc = api.easy_setopt(h, CURLOPT_CLOSESOCKETDATA, context);
    return rc;
}


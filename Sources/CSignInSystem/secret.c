#define _GNU_SOURCE
#include "csystem.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few libsecret and GLib types this needs, as their headers define them (a stable ABI). */
typedef struct { const char *name; int type; } SecretSchemaAttribute;
typedef struct {
    const char *name;
    int flags;
    SecretSchemaAttribute attributes[32];
    int reserved;
    void *reserved1, *reserved2, *reserved3, *reserved4, *reserved5, *reserved6, *reserved7;
} SecretSchema;
typedef struct { unsigned int domain; int code; char *message; } GError;

static const SecretSchema schema = {
    "io.github.signin.StoreKey", 0, {{"store", 0}, {"folder", 0}, {NULL, 0}}, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

static struct {
    int (*store)(const SecretSchema *, const char *, const char *, const char *, void *, GError **, ...);
    char *(*lookup)(const SecretSchema *, void *, GError **, ...);
    int (*clear)(const SecretSchema *, void *, GError **, ...);
    void (*password_free)(char *);
    void (*error_free)(GError *);
    void *(*search)(const SecretSchema *, int, void *, GError **, ...);
    void (*list_free_full)(void *, void (*)(void *));
    void (*object_unref)(void *);
    void *(*service_get)(int, void *, GError **);
    void *(*service_collections)(void *);
    int (*collection_locked)(void *);
} api;

typedef struct List { void *data; struct List *next, *prev; } List;

/* Whether a collection of the Secret Service is locked (items in it are invisible to a lookup). */
static int any_collection_locked(void) {
    if (!api.service_get || !api.service_collections || !api.collection_locked) return 0;
    GError *e = NULL;
    void *service = api.service_get(1 << 2 /* SECRET_SERVICE_LOAD_COLLECTIONS */, NULL, &e);
    if (e) api.error_free(e);
    if (!service) return 0;
    int locked = 0;
    List *collections = api.service_collections(service);
    for (List *l = collections; l; l = l->next) locked |= api.collection_locked(l->data) != 0;
    if (collections) api.list_free_full(collections, api.object_unref);
    api.object_unref(service);
    return locked;
}
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256] = "";

#ifdef SIGNIN_STATIC_EXECUTABLE
/* The static half of the release build cannot load shared libraries: it hands the command to the dynamic half
 * (SignInKit's DynamicSibling), which does not return. */
extern void signin_needs_dynamic(int need); /* 2: the Secret Service (DynamicSibling.Need) */
#endif

static void load(void) {
#ifdef SIGNIN_STATIC_EXECUTABLE
    signin_needs_dynamic(2);
#endif
    void *h = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof load_error, "libsecret is not installed (Debian: libsecret-1-0): %s", dlerror());
        return;
    }
    *(void **)&api.store = dlsym(h, "secret_password_store_sync");
    *(void **)&api.lookup = dlsym(h, "secret_password_lookup_sync");
    *(void **)&api.clear = dlsym(h, "secret_password_clear_sync");
    *(void **)&api.password_free = dlsym(h, "secret_password_free");
    *(void **)&api.error_free = dlsym(h, "g_error_free");
    *(void **)&api.search = dlsym(h, "secret_password_search_sync");
    *(void **)&api.list_free_full = dlsym(h, "g_list_free_full");
    *(void **)&api.object_unref = dlsym(h, "g_object_unref");
    *(void **)&api.service_get = dlsym(h, "secret_service_get_sync");
    *(void **)&api.service_collections = dlsym(h, "secret_service_get_collections");
    *(void **)&api.collection_locked = dlsym(h, "secret_collection_get_locked");
    if (!api.store || !api.lookup || !api.clear || !api.password_free || !api.error_free)
        snprintf(load_error, sizeof load_error, "libsecret lacks the functions signin needs");
}

static int loaded(char **error) {
    pthread_once(&once, load);
    if (load_error[0]) {
        *error = strdup(load_error);
        return 0;
    }
    return 1;
}

static int failed(GError *e, const char *what, char **error) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s: %s", what, e && e->message ? e->message : "unknown error");
    if (e) api.error_free(e);
    *error = strdup(buf);
    return -1;
}

int signin_secret_store(const char *store_id, const char *folder, const char *label, const char *secret, char **error) {
    if (!loaded(error)) return -1;
    GError *e = NULL;
    if (!api.store(&schema, "default", label, secret, NULL, &e, "store", store_id, "folder", folder, NULL)) return failed(e, "could not store the key in the Secret Service", error);
    return 0;
}

int signin_secret_lookup(const char *store_id, char **secret, char **error) {
    *secret = NULL;
    if (!loaded(error)) return -1;
    GError *e = NULL;
    char *found = api.lookup(&schema, NULL, &e, "store", store_id, NULL);
    if (e) return failed(e, "could not read the key from the Secret Service", error);
    if (found) {
        *secret = strdup(found);
        api.password_free(found);  /* libsecret wipes its copy */
        return 0;
    }
    /* Nothing unlocked: is the item there but in a locked collection? (SECRET_SEARCH_ALL, no unlocking) */
    if (api.search && api.list_free_full && api.object_unref) {
        void *list = api.search(&schema, 1 << 1, NULL, &e, "store", store_id, NULL);
        if (e) api.error_free(e);
        if (list) {
            api.list_free_full(list, api.object_unref);
            return 1;
        }
    }
    return any_collection_locked() ? 1 : 0;
}

int signin_secret_clear(const char *store_id, char **error) {
    if (!loaded(error)) return -1;
    GError *e = NULL;
    api.clear(&schema, NULL, &e, "store", store_id, NULL);
    if (e) return failed(e, "could not remove the key from the Secret Service", error);
    return 0;
}

int signin_secret_clear_folder(const char *folder, char **error) {
    if (!loaded(error)) return -1;
    GError *e = NULL;
    api.clear(&schema, NULL, &e, "folder", folder, NULL);
    if (e) return failed(e, "could not remove the keys from the Secret Service", error);
    return 0;
}

void signin_secret_free(char *s) {
    if (!s) return;
    explicit_bzero(s, strlen(s));
    free(s);
}

#define _GNU_SOURCE
#include "csystem.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

/* The TPM 2.0 through the TSS libraries Debian ships (libtss2-esys, -tctildr, -mu), loaded (dlopen) only when a
 * store keeps its key in the TPM, as libcurl is loaded only for the network. Built without the headers
 * (no libtss2-dev), every call says so. */
#if __has_include(<tss2/tss2_esys.h>)
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_tctildr.h>

static struct {
    TSS2_RC (*tctildr_init)(const char *, TSS2_TCTI_CONTEXT **);
    void (*tctildr_finalize)(TSS2_TCTI_CONTEXT **);
    TSS2_RC (*initialize)(ESYS_CONTEXT **, TSS2_TCTI_CONTEXT *, TSS2_ABI_VERSION *);
    void (*finalize)(ESYS_CONTEXT **);
    TSS2_RC (*create_primary)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, const TPM2B_SENSITIVE_CREATE *,
                              const TPM2B_PUBLIC *, const TPM2B_DATA *, const TPML_PCR_SELECTION *, ESYS_TR *,
                              TPM2B_PUBLIC **, TPM2B_CREATION_DATA **, TPM2B_DIGEST **, TPMT_TK_CREATION **);
    TSS2_RC (*create)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, const TPM2B_SENSITIVE_CREATE *,
                      const TPM2B_PUBLIC *, const TPM2B_DATA *, const TPML_PCR_SELECTION *, TPM2B_PRIVATE **,
                      TPM2B_PUBLIC **, TPM2B_CREATION_DATA **, TPM2B_DIGEST **, TPMT_TK_CREATION **);
    TSS2_RC (*load)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, const TPM2B_PRIVATE *, const TPM2B_PUBLIC *, ESYS_TR *);
    TSS2_RC (*unseal)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, TPM2B_SENSITIVE_DATA **);
    TSS2_RC (*set_auth)(ESYS_CONTEXT *, ESYS_TR, TPM2B_AUTH const *);
    TSS2_RC (*flush)(ESYS_CONTEXT *, ESYS_TR);
    TSS2_RC (*get_random)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, UINT16, TPM2B_DIGEST **);
    TSS2_RC (*start_auth_session)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, const TPM2B_NONCE *, TPM2_SE,
                                  const TPMT_SYM_DEF *, TPMI_ALG_HASH, ESYS_TR *);
    TSS2_RC (*session_set_attributes)(ESYS_CONTEXT *, ESYS_TR, TPMA_SESSION, TPMA_SESSION);
    TSS2_RC (*sign)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, const TPM2B_DIGEST *, const TPMT_SIG_SCHEME *,
                    const TPMT_TK_HASHCHECK *, TPMT_SIGNATURE **);
    void (*esys_free)(void *);
    TSS2_RC (*pub_marshal)(TPM2B_PUBLIC const *, uint8_t[], size_t, size_t *);
    TSS2_RC (*pub_unmarshal)(uint8_t const[], size_t, size_t *, TPM2B_PUBLIC *);
    TSS2_RC (*priv_marshal)(TPM2B_PRIVATE const *, uint8_t[], size_t, size_t *);
    TSS2_RC (*priv_unmarshal)(uint8_t const[], size_t, size_t *, TPM2B_PRIVATE *);
    const char *(*decode)(TSS2_RC);
    TSS2_RC (*get_capability)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, TPM2_CAP, UINT32, UINT32, TPMI_YES_NO *, TPMS_CAPABILITY_DATA **);
    TSS2_RC (*tr_from_public)(ESYS_CONTEXT *, TPM2_HANDLE, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR *);
    TSS2_RC (*read_public)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, TPM2B_PUBLIC **, TPM2B_NAME **, TPM2B_NAME **);
    TSS2_RC (*tr_close)(ESYS_CONTEXT *, ESYS_TR *);
    TSS2_RC (*set_timeout)(ESYS_CONTEXT *, int32_t);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256] = "";

#ifdef SIGNIN_STATIC_EXECUTABLE
extern void signin_needs_dynamic(int need); /* 3: the TPM (DynamicSibling.Need) */
#endif

static void load(void) {
#ifdef SIGNIN_STATIC_EXECUTABLE
    signin_needs_dynamic(3);
#endif
    /* The TSS logs its own errors to standard error; signin says what failed in its own words. */
    setenv("TSS2_LOG", "all+none", 0);
    void *esys = dlopen("libtss2-esys.so.0", RTLD_NOW | RTLD_LOCAL);
    void *ldr = esys ? dlopen("libtss2-tctildr.so.0", RTLD_NOW | RTLD_LOCAL) : NULL;
    void *mu = ldr ? dlopen("libtss2-mu.so.0", RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!esys || !ldr || !mu) {
        snprintf(load_error, sizeof load_error, "the TPM libraries are not installed (Debian: libtss2-esys-3.0.2-0 libtss2-tctildr0): %s", dlerror());
        return;
    }
    void *rc = dlopen("libtss2-rc.so.0", RTLD_NOW | RTLD_LOCAL);
    *(void **)&api.tctildr_init = dlsym(ldr, "Tss2_TctiLdr_Initialize");
    *(void **)&api.tctildr_finalize = dlsym(ldr, "Tss2_TctiLdr_Finalize");
    *(void **)&api.initialize = dlsym(esys, "Esys_Initialize");
    *(void **)&api.finalize = dlsym(esys, "Esys_Finalize");
    *(void **)&api.create_primary = dlsym(esys, "Esys_CreatePrimary");
    *(void **)&api.create = dlsym(esys, "Esys_Create");
    *(void **)&api.load = dlsym(esys, "Esys_Load");
    *(void **)&api.unseal = dlsym(esys, "Esys_Unseal");
    *(void **)&api.set_auth = dlsym(esys, "Esys_TR_SetAuth");
    *(void **)&api.flush = dlsym(esys, "Esys_FlushContext");
    *(void **)&api.get_random = dlsym(esys, "Esys_GetRandom");
    *(void **)&api.sign = dlsym(esys, "Esys_Sign");
    *(void **)&api.start_auth_session = dlsym(esys, "Esys_StartAuthSession");
    *(void **)&api.session_set_attributes = dlsym(esys, "Esys_TRSess_SetAttributes");
    *(void **)&api.esys_free = dlsym(esys, "Esys_Free");
    *(void **)&api.pub_marshal = dlsym(mu, "Tss2_MU_TPM2B_PUBLIC_Marshal");
    *(void **)&api.pub_unmarshal = dlsym(mu, "Tss2_MU_TPM2B_PUBLIC_Unmarshal");
    *(void **)&api.priv_marshal = dlsym(mu, "Tss2_MU_TPM2B_PRIVATE_Marshal");
    *(void **)&api.priv_unmarshal = dlsym(mu, "Tss2_MU_TPM2B_PRIVATE_Unmarshal");
    if (rc) *(void **)&api.decode = dlsym(rc, "Tss2_RC_Decode");
    /* For recovering from a TPM left full by a killed signin; optional (without them, the shortage is only named). */
    *(void **)&api.get_capability = dlsym(esys, "Esys_GetCapability");
    *(void **)&api.tr_from_public = dlsym(esys, "Esys_TR_FromTPMPublic");
    *(void **)&api.read_public = dlsym(esys, "Esys_ReadPublic");
    *(void **)&api.tr_close = dlsym(esys, "Esys_TR_Close");
    *(void **)&api.set_timeout = dlsym(esys, "Esys_SetTimeout");
    if (!api.tctildr_init || !api.initialize || !api.create_primary || !api.create || !api.load || !api.unseal || !api.set_auth
        || !api.flush || !api.get_random || !api.sign || !api.start_auth_session || !api.session_set_attributes || !api.esys_free || !api.pub_marshal || !api.pub_unmarshal || !api.priv_marshal
        || !api.priv_unmarshal || !api.finalize || !api.tctildr_finalize) {
        snprintf(load_error, sizeof load_error, "the TPM libraries installed lack a function signin needs");
        memset(&api, 0, sizeof api);
    }
}

static int fail(char **error, int code, const char *what, TSS2_RC rc) {
    if (error) {
        const char *text = rc && api.decode ? api.decode(rc) : "";
        if (asprintf(error, rc ? "%s (TPM 0x%x%s%s)" : "%s", what, rc, *text ? ": " : "", text) < 0) *error = NULL;
    }
    return code;
}

/* The TPM's own error number with the parameter, handle and session bits cleared (format-one codes). */
static TSS2_RC base_code(TSS2_RC rc) {
    if (rc & 0xFFFF0000u) return rc;                 /* a TSS layer, not the TPM */
    return (rc & 0x80u) ? (rc & 0xBFu) : (rc & 0xFFFu);
}

typedef struct { ESYS_CONTEXT *esys; TSS2_TCTI_CONTEXT *tcti; ESYS_TR primary; } Session;

static void close_session(Session *s) {
    if (s->esys && s->primary != ESYS_TR_NONE) api.flush(s->esys, s->primary);
    if (s->esys) api.finalize(&s->esys);
    if (s->tcti) api.tctildr_finalize(&s->tcti);
}

/* Out of room for objects or sessions (TPM_RC_OBJECT_MEMORY, SESSION_MEMORY, MEMORY, SESSION_HANDLES,
 * OBJECT_HANDLES): a warning, not a verdict on the blob. On a TPM without a resource manager (swtpm over its socket,
 * /dev/tpm0) a process killed while using it leaves its objects and sessions loaded until they are flushed. */
static int is_shortage(TSS2_RC rc) {
    TSS2_RC b = base_code(rc);
    return b == TPM2_RC_OBJECT_MEMORY || b == TPM2_RC_SESSION_MEMORY || b == TPM2_RC_MEMORY || b == TPM2_RC_SESSION_HANDLES
        || b == TPM2_RC_OBJECT_HANDLES;
}

/* The storage key's template (open_session) and the attributes of a sealed key (signin_tpm_seal): what signin loads. */
#define SIGNIN_PRIMARY_ATTRIBUTES (TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM \
    | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_NODA)

/* Whether a loaded object is one signin left: a storage key of signin's template, or the very object `mine` (the
 * public area of the blob being loaded). */
static int is_signins(const TPM2B_PUBLIC *p, const TPM2B_PUBLIC *mine) {
    const TPMT_PUBLIC *a = &p->publicArea;
    if (a->type == TPM2_ALG_ECC && a->nameAlg == TPM2_ALG_SHA256 && a->objectAttributes == SIGNIN_PRIMARY_ATTRIBUTES
        && a->parameters.eccDetail.curveID == TPM2_ECC_NIST_P256 && a->parameters.eccDetail.symmetric.algorithm == TPM2_ALG_AES)
        return 1;
    if (!mine || a->type != mine->publicArea.type || a->objectAttributes != mine->publicArea.objectAttributes) return 0;
    if (a->type == TPM2_ALG_KEYEDHASH)
        return a->unique.keyedHash.size == mine->publicArea.unique.keyedHash.size
            && memcmp(a->unique.keyedHash.buffer, mine->publicArea.unique.keyedHash.buffer, a->unique.keyedHash.size) == 0;
    if (a->type == TPM2_ALG_ECC)
        return a->unique.ecc.x.size == mine->publicArea.unique.ecc.x.size
            && memcmp(a->unique.ecc.x.buffer, mine->publicArea.unique.ecc.x.buffer, a->unique.ecc.x.size) == 0;
    return 0;
}

/* Flushes the transient objects signin left loaded (is_signins), keeping `keep`; with `sessions`, also the loaded
 * sessions (whose owner the TPM cannot tell: only done when sessions are what ran out). Returns how many went. */
static int flush_leftovers(ESYS_CONTEXT *esys, ESYS_TR keep, const TPM2B_PUBLIC *mine, int sessions) {
    if (!api.get_capability || !api.tr_from_public || !api.read_public || !api.tr_close) return 0;
    int flushed = 0;
    TPM2_HANDLE firsts[2] = {TPM2_TRANSIENT_FIRST, TPM2_LOADED_SESSION_FIRST};
    for (int kind = 0; kind < (sessions ? 2 : 1); kind++) {
        TPMI_YES_NO more = 0;
        TPMS_CAPABILITY_DATA *cap = NULL;
        if (api.get_capability(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES, firsts[kind], TPM2_MAX_CAP_HANDLES, &more, &cap) || !cap)
            continue;
        for (UINT32 i = 0; i < cap->data.handles.count; i++) {
            ESYS_TR tr = ESYS_TR_NONE;
            if (api.tr_from_public(esys, cap->data.handles.handle[i], ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &tr)) continue;
            if (tr == keep) continue;
            int flush = kind == 1;
            if (kind == 0) {
                TPM2B_PUBLIC *pub = NULL;
                if (!api.read_public(esys, tr, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL, NULL) && pub) {
                    flush = is_signins(pub, mine);
                    api.esys_free(pub);
                }
            }
            if (flush && !api.flush(esys, tr)) flushed++;
            else api.tr_close(esys, &tr);
        }
        api.esys_free(cap);
    }
    return flushed;
}

static int shortage(char **error, TSS2_RC rc) {
    return fail(error, SIGNIN_TPM_FULL, "the TPM is out of room for objects or sessions, and what signin could flush of its own was not enough (another program holds them; on a TPM without a resource manager, `tpm2_flushcontext --transient-object --loaded-session` frees them, or use /dev/tpmrm0)", rc);
}

/* Connects and recreates the owner hierarchy's storage key: the same template under the same seed gives the same
 * key, so nothing of it is stored; another TPM (another seed) gives another key, under which a blob will not load. */
static int open_session(const char *tcti, Session *s, char **error) {
    pthread_once(&once, load);
    s->esys = NULL; s->tcti = NULL; s->primary = ESYS_TR_NONE;
    if (!api.initialize) return fail(error, SIGNIN_TPM_UNAVAILABLE, load_error, 0);
    TSS2_RC rc = api.tctildr_init(tcti && *tcti ? tcti : NULL, &s->tcti);
    if (rc) return fail(error, SIGNIN_TPM_UNAVAILABLE, "no TPM answers", rc);
    rc = api.initialize(&s->esys, s->tcti, NULL);
    if (rc) { close_session(s); return fail(error, SIGNIN_TPM_UNAVAILABLE, "the TPM could not be opened", rc); }
    /* A TPM that never answers (a dead socket, a trickling device) must not hold signin forever: each command's
     * answer is waited for at most this long (SIGNIN_TPM_TIMEOUT_SECONDS, default 20 s; a TPM answers in
     * milliseconds, an RSA key generation in seconds). */
    if (api.set_timeout) {
        const char *t = getenv("SIGNIN_TPM_TIMEOUT_SECONDS");
        long seconds = t && *t ? strtol(t, NULL, 10) : 20;
        if (seconds < 1 || seconds > 3600) seconds = 20;
        api.set_timeout(s->esys, (int32_t)(seconds * 1000));
    }
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_ECC, .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM
                | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_NODA,
            .parameters.eccDetail = {
                .symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB},
                .scheme = {.scheme = TPM2_ALG_NULL}, .curveID = TPM2_ECC_NIST_P256, .kdf = {.scheme = TPM2_ALG_NULL},
            },
        },
    };
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    rc = api.create_primary(s->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template,
                            &outside, &pcrs, &s->primary, NULL, NULL, NULL, NULL);
    if (rc && is_shortage(rc) && flush_leftovers(s->esys, ESYS_TR_NONE, NULL, base_code(rc) != TPM2_RC_OBJECT_MEMORY) > 0)
        rc = api.create_primary(s->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template,
                                &outside, &pcrs, &s->primary, NULL, NULL, NULL, NULL);
    if (rc && is_shortage(rc)) {
        s->primary = ESYS_TR_NONE;
        close_session(s);
        return shortage(error, rc);
    }
    if (rc) {
        s->primary = ESYS_TR_NONE;
        close_session(s);
        return fail(error, SIGNIN_TPM_UNAVAILABLE, "the TPM refused to make its storage key (is the owner hierarchy protected by a password?)", rc);
    }
    return 0;
}

/* A one-command HMAC session salted to the storage key, with parameter encryption both ways: what crosses the bus
 * to the TPM (a secret to seal, a password's proof) and back (an unsealed secret) is encrypted under a key only
 * this process and the TPM know, so a probe on the bus learns neither the passphrase nor the key. */
static TSS2_RC encrypted_session(Session *s, ESYS_TR *session) {
    TPMT_SYM_DEF symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB};
    TSS2_RC rc = api.start_auth_session(s->esys, s->primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL,
                                        TPM2_SE_HMAC, &symmetric, TPM2_ALG_SHA256, session);
    if (rc) return rc;
    TPMA_SESSION flags = TPMA_SESSION_DECRYPT | TPMA_SESSION_ENCRYPT;
    rc = api.session_set_attributes(s->esys, *session, flags, flags | TPMA_SESSION_CONTINUESESSION);
    if (rc) api.flush(s->esys, *session);
    return rc;
}

/* Makes an object from `template` under the storage key: its private part wrapped by it, its public part. */
static TSS2_RC create_object(Session *s, const TPM2B_SENSITIVE_CREATE *sensitive, const TPM2B_PUBLIC *template,
                             TPM2B_PRIVATE **priv, TPM2B_PUBLIC **pub) {
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    ESYS_TR session;
    TSS2_RC rc = encrypted_session(s, &session);
    if (rc) return rc;
    /* The session ends with a command that succeeds (no continueSession); one that fails leaves it to flush. */
    rc = api.create(s->esys, s->primary, session, ESYS_TR_NONE, ESYS_TR_NONE, sensitive, template, &outside, &pcrs,
                    priv, pub, NULL, NULL, NULL);
    if (rc) api.flush(s->esys, session);
    return rc;
}

int signin_tpm_probe(const char *tcti, char **error) {
    Session s;
    int r = open_session(tcti, &s, error);
    close_session(&s);
    return r;
}

/* A big-endian number of at most 32 bytes, as the TPM returns one, left-padded into `out`; 0 when it is longer. */
static int put32(uint8_t out[32], const uint8_t *value, size_t size) {
    if (size > 32) return 0;
    memset(out, 0, 32 - size);
    memcpy(out + 32 - size, value, size);
    return 1;
}

/* Writes a TPM object's public and private parts, marshalled, into a new buffer. */
static int marshal_object(TPM2B_PUBLIC *pub, TPM2B_PRIVATE *priv, uint8_t **blob, size_t *blob_len) {
    size_t cap = sizeof(TPM2B_PUBLIC) + sizeof(TPM2B_PRIVATE), off = 0;
    uint8_t *out = malloc(cap);
    TSS2_RC rc = out ? api.pub_marshal(pub, out, cap, &off) : 1;
    if (!rc) rc = api.priv_marshal(priv, out, cap, &off);
    if (rc) { free(out); return -1; }
    *blob = out; *blob_len = off;
    return 0;
}

int signin_tpm_seal(const char *tcti, const uint8_t *secret, size_t secret_len, const uint8_t *auth, size_t auth_len,
                    uint8_t **blob, size_t *blob_len, char **error) {
    *blob = NULL; *blob_len = 0;
    if (secret_len > sizeof(((TPM2B_SENSITIVE_DATA *)0)->buffer) || auth_len > sizeof(((TPM2B_AUTH *)0)->buffer))
        return fail(error, SIGNIN_TPM_FAILED, "the secret or its passphrase key is too long for the TPM", 0);
    Session s;
    int r = open_session(tcti, &s, error);
    if (r) return r;
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    sensitive.sensitive.data.size = (UINT16)secret_len;
    memcpy(sensitive.sensitive.data.buffer, secret, secret_len);
    sensitive.sensitive.userAuth.size = (UINT16)auth_len;
    if (auth_len) memcpy(sensitive.sensitive.userAuth.buffer, auth, auth_len);
    /* A sealed data object: fixed to this TPM and this parent; its passphrase, when it has one, counts against
     * the TPM's dictionary-attack lockout (no NODA), so guessing it means asking this TPM. */
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_KEYEDHASH, .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | (auth_len ? 0 : TPMA_OBJECT_NODA),
            .parameters.keyedHashDetail.scheme = {.scheme = TPM2_ALG_NULL},
        },
    };
    TPM2B_PRIVATE *priv = NULL;
    TPM2B_PUBLIC *pub = NULL;
    TSS2_RC rc = create_object(&s, &sensitive, &template, &priv, &pub);
    explicit_bzero(&sensitive, sizeof sensitive);
    if (rc) { close_session(&s); return fail(error, SIGNIN_TPM_FAILED, "the TPM refused to seal the key", rc); }
    int written = marshal_object(pub, priv, blob, blob_len);
    api.esys_free(priv);
    api.esys_free(pub);
    close_session(&s);
    return written == 0 ? 0 : fail(error, SIGNIN_TPM_FAILED, "the sealed key could not be written out", 0);
}

/* Opens a session and loads the object `blob` holds (`what` names it in errors); on failure the session is closed. */
static int load_object(const char *tcti, const uint8_t *blob, size_t blob_len, const char *what, Session *s, ESYS_TR *object, char **error) {
    TPM2B_PUBLIC pub = {0};
    TPM2B_PRIVATE priv = {0};
    size_t off = 0;
    *object = ESYS_TR_NONE;
    pthread_once(&once, load);
    if (!api.initialize) return fail(error, SIGNIN_TPM_UNAVAILABLE, load_error, 0);
    if (api.pub_unmarshal(blob, blob_len, &off, &pub) || api.priv_unmarshal(blob, blob_len, &off, &priv) || off != blob_len) {
        char text[96];
        snprintf(text, sizeof text, "the %s is damaged", what);
        return fail(error, SIGNIN_TPM_DAMAGED, text, 0);
    }
    int r = open_session(tcti, s, error);
    if (r) return r;
    TSS2_RC rc = api.load(s->esys, s->primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv, &pub, object);
    if (rc && is_shortage(rc) && flush_leftovers(s->esys, s->primary, &pub, base_code(rc) != TPM2_RC_OBJECT_MEMORY) > 0)
        rc = api.load(s->esys, s->primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv, &pub, object);
    if (rc && is_shortage(rc)) {
        close_session(s);
        return shortage(error, rc);
    }
    if (rc) {
        close_session(s);
        int kind = signin_tpm_load_failure(rc);
        char text[160];
        if (kind == SIGNIN_TPM_OTHER_TPM)
            snprintf(text, sizeof text, "this TPM cannot load the %s: another TPM made it (or this TPM was cleared)", what);
        else if (kind == SIGNIN_TPM_UNAVAILABLE)
            snprintf(text, sizeof text, "the TPM stopped answering while loading the %s (it failed or went away mid-use; try again once it is back)", what);
        else
            snprintf(text, sizeof text, "the TPM refused to load the %s", what);
        return fail(error, kind, text, rc);
    }
    return 0;
}

/* What a failed TPM2_Load says of the blob. Only an integrity or binding failure (the blob's HMAC does not check
 * under this TPM's storage key) means another TPM made it, or this one was cleared; a TSS layer's error (the TCTI
 * lost the TPM, a timeout, a resource manager gone) means the TPM could not answer, and anything else is a refusal
 * that says nothing of where the blob came from. Advice to sign out belongs to the first case alone. */
int signin_tpm_load_failure(uint32_t rc) {
    if (rc & 0xFFFF0000u) return SIGNIN_TPM_UNAVAILABLE;
    TSS2_RC b = base_code(rc);
    if (b == TPM2_RC_INTEGRITY || b == TPM2_RC_BINDING) return SIGNIN_TPM_OTHER_TPM;
    /* Warnings (format zero, 0x900 and up): TPM_RC_RETRY, TESTING, YIELDED, CANCELED, NV_UNAVAILABLE... */
    if ((rc & 0x80u) == 0 && (rc & 0x900u) == 0x900u) return SIGNIN_TPM_UNAVAILABLE;
    return SIGNIN_TPM_FAILED;
}

int signin_tpm_unseal(const char *tcti, const uint8_t *blob, size_t blob_len, const uint8_t *auth, size_t auth_len,
                      uint8_t **secret, size_t *secret_len, char **error) {
    *secret = NULL; *secret_len = 0;
    if (auth_len > sizeof(((TPM2B_AUTH *)0)->buffer)) return fail(error, SIGNIN_TPM_DAMAGED, "the passphrase key is too long for the TPM", 0);
    Session s;
    ESYS_TR object;
    int r = load_object(tcti, blob, blob_len, "sealed key", &s, &object, error);
    if (r) return r;
    /* The fault tests' crash point (SIGNIN_FAILPOINT, as Failpoint.swift): killed with the objects loaded. */
    const char *failpoint = getenv("SIGNIN_FAILPOINT");
    if (failpoint && strcmp(failpoint, "tpm-after-load") == 0) kill(getpid(), SIGKILL);
    TSS2_RC rc;
    TPM2B_AUTH a = {.size = (UINT16)auth_len};
    if (auth_len) memcpy(a.buffer, auth, auth_len);
    api.set_auth(s.esys, object, &a);
    explicit_bzero(&a, sizeof a);
    TPM2B_SENSITIVE_DATA *data = NULL;
    ESYS_TR session;
    rc = encrypted_session(&s, &session);
    if (!rc) {
        rc = api.unseal(s.esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &data);
        if (rc) api.flush(s.esys, session);
    }
    api.flush(s.esys, object);
    close_session(&s);
    if (rc) {
        TSS2_RC b = base_code(rc);
        if (b == TPM2_RC_LOCKOUT) return fail(error, SIGNIN_TPM_LOCKED_OUT, "the TPM is in dictionary-attack lockout after wrong passphrases (from any user who can use it): it allows one more try after its lockout interval (`tpm2_getcap properties-variable` shows TPM2_PT_LOCKOUT_INTERVAL: 1000 s on swtpm, often hours on a hardware TPM), or its owner clears it now with `tpm2_dictionarylockout --clear-lockout`", rc);
        if (b == TPM2_RC_AUTH_FAIL || b == TPM2_RC_BAD_AUTH) return fail(error, SIGNIN_TPM_WRONG_AUTH, "wrong passphrase", rc);
        return fail(error, SIGNIN_TPM_FAILED, "the TPM refused to unseal the key", rc);
    }
    uint8_t *out = malloc(data->size ? data->size : 1);
    if (!out) { explicit_bzero(data, sizeof *data); api.esys_free(data); return fail(error, SIGNIN_TPM_FAILED, "out of memory", 0); }
    memcpy(out, data->buffer, data->size);
    *secret_len = data->size;
    explicit_bzero(data, sizeof *data);
    api.esys_free(data);
    *secret = out;
    return 0;
}

int signin_tpm_create_signing_key(const char *tcti, uint8_t **blob, size_t *blob_len, uint8_t x[32], uint8_t y[32], char **error) {
    *blob = NULL; *blob_len = 0;
    Session s;
    int r = open_session(tcti, &s, error);
    if (r) return r;
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    /* An ECDSA P-256 key made inside the TPM, fixed to it: its private part leaves only wrapped by the storage key. */
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_ECC, .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
                | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_NODA,
            .parameters.eccDetail = {
                .symmetric = {.algorithm = TPM2_ALG_NULL},
                .scheme = {.scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256},
                .curveID = TPM2_ECC_NIST_P256, .kdf = {.scheme = TPM2_ALG_NULL},
            },
        },
    };
    TPM2B_PRIVATE *priv = NULL;
    TPM2B_PUBLIC *pub = NULL;
    TSS2_RC rc = create_object(&s, &sensitive, &template, &priv, &pub);
    close_session(&s);
    if (rc) return fail(error, SIGNIN_TPM_FAILED, "the TPM refused to make a signing key", rc);
    const TPMS_ECC_POINT *q = &pub->publicArea.unique.ecc;
    int ok = put32(x, q->x.buffer, q->x.size) && put32(y, q->y.buffer, q->y.size) && marshal_object(pub, priv, blob, blob_len) == 0;
    api.esys_free(priv);
    api.esys_free(pub);
    return ok ? 0 : fail(error, SIGNIN_TPM_FAILED, "the TPM's signing key could not be written out", 0);
}

int signin_tpm_sign(const char *tcti, const uint8_t *blob, size_t blob_len, const uint8_t digest[32], uint8_t r_out[32], uint8_t s_out[32], char **error) {
    Session s;
    ESYS_TR object;
    int r = load_object(tcti, blob, blob_len, "TPM signing key", &s, &object, error);
    if (r) return r;
    TSS2_RC rc;
    TPM2B_DIGEST d = {.size = 32};
    memcpy(d.buffer, digest, 32);
    TPMT_SIG_SCHEME scheme = {.scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256};
    /* A null ticket: the digest was not made by the TPM, which a key without `restricted` accepts. */
    TPMT_TK_HASHCHECK ticket = {.tag = TPM2_ST_HASHCHECK, .hierarchy = TPM2_RH_NULL};
    TPMT_SIGNATURE *sig = NULL;
    rc = api.sign(s.esys, object, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &d, &scheme, &ticket, &sig);
    api.flush(s.esys, object);
    close_session(&s);
    if (rc) return fail(error, SIGNIN_TPM_FAILED, "the TPM refused to sign", rc);
    const TPMS_SIGNATURE_ECC *e = &sig->signature.ecdsa;
    int ok = sig->sigAlg == TPM2_ALG_ECDSA && put32(r_out, e->signatureR.buffer, e->signatureR.size)
        && put32(s_out, e->signatureS.buffer, e->signatureS.size);
    api.esys_free(sig);
    return ok ? 0 : fail(error, SIGNIN_TPM_FAILED, "the TPM gave a signature signin cannot read", 0);
}

#else
static int unavailable(char **error) {
    if (error) *error = strdup("this signin was built without TPM support (libtss2-dev was not installed when it was built): install libtss2-dev, then rebuild from clean (`rm -rf .build && scripts/install`; an incremental build keeps the stubs)");
    return SIGNIN_TPM_UNAVAILABLE;
}
int signin_tpm_probe(const char *tcti, char **error) { (void)tcti; return unavailable(error); }
int signin_tpm_seal(const char *tcti, const uint8_t *secret, size_t secret_len, const uint8_t *auth, size_t auth_len,
                    uint8_t **blob, size_t *blob_len, char **error) {
    (void)tcti; (void)secret; (void)secret_len; (void)auth; (void)auth_len; *blob = NULL; *blob_len = 0;
    return unavailable(error);
}
int signin_tpm_unseal(const char *tcti, const uint8_t *blob, size_t blob_len, const uint8_t *auth, size_t auth_len,
                      uint8_t **secret, size_t *secret_len, char **error) {
    (void)tcti; (void)blob; (void)blob_len; (void)auth; (void)auth_len; *secret = NULL; *secret_len = 0;
    return unavailable(error);
}
int signin_tpm_create_signing_key(const char *tcti, uint8_t **blob, size_t *blob_len, uint8_t x[32], uint8_t y[32], char **error) {
    (void)tcti; (void)x; (void)y; *blob = NULL; *blob_len = 0;
    return unavailable(error);
}
int signin_tpm_sign(const char *tcti, const uint8_t *blob, size_t blob_len, const uint8_t digest[32], uint8_t r_out[32], uint8_t s_out[32], char **error) {
    (void)tcti; (void)blob; (void)blob_len; (void)digest; (void)r_out; (void)s_out;
    return unavailable(error);
}
#endif

void signin_tpm_free(void *p, size_t len) {
    if (p) explicit_bzero(p, len);
    free(p);
}

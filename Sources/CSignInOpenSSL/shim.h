#ifndef SIGNIN_COPENSSL_SHIM_H
#define SIGNIN_COPENSSL_SHIM_H
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED
/* OPENSSL_free and friends pass __FILE__ (this header's absolute path) to the allocator: a build path in the binary
 * would make two builds of one commit in two folders differ (docs/packaging.md, reproducible builds). */
#define OPENSSL_FILE "signin"
#define OPENSSL_LINE 0
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/ecdsa.h>

/* Macros and macro-built constants do not import into Swift. */
static inline void signin_openssl_free(void *p) { OPENSSL_free(p); }
enum { SIGNIN_EVP_PKEY_PUBLIC_KEY = EVP_PKEY_PUBLIC_KEY };
static inline int signin_gcm_set_ivlen(EVP_CIPHER_CTX *c, int len) { return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, len, NULL); }
static inline int signin_gcm_get_tag(EVP_CIPHER_CTX *c, unsigned char *tag, int len) { return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, len, tag); }
static inline int signin_gcm_set_tag(EVP_CIPHER_CTX *c, unsigned char *tag, int len) { return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, len, tag); }
/* Parameter names as static C strings: OSSL_PARAM_BLD keeps the key pointer, so a temporary Swift string would dangle. */
static inline const char *signin_param_rsa_n(void) { return OSSL_PKEY_PARAM_RSA_N; }
static inline const char *signin_param_rsa_e(void) { return OSSL_PKEY_PARAM_RSA_E; }
static inline const char *signin_param_group(void) { return OSSL_PKEY_PARAM_GROUP_NAME; }
static inline const char *signin_param_pub(void) { return OSSL_PKEY_PARAM_PUB_KEY; }
static inline const char *signin_group_p256(void) { return "prime256v1"; }
/* The release build links a private, static libcrypto (scripts/build-release) used only for the store's cipher,
 * ID-token signatures, digests and random numbers: it needs neither openssl.cnf nor error strings nor exit
 * handlers, which cost more than the decryption. TLS goes through libcurl and the system's shared libcrypto,
 * which reads the system's configuration as always. With the shared libcrypto this does nothing. */
static inline void signin_crypto_init(void) {
#ifdef SIGNIN_PRIVATE_LIBCRYPTO
    OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS | OPENSSL_INIT_NO_ATEXIT
                        | OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_ADD_ALL_DIGESTS, NULL);
#endif
}
#endif

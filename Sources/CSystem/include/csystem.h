#ifndef SIGNIN_CSYSTEM_H
#define SIGNIN_CSYSTEM_H
/*
 * Two process-level things Swift cannot do safely by itself:
 *  - holding SIGINT, SIGTERM and SIGHUP while a token request is in flight, in a handler that is
 *    async-signal-safe (only atomics and raise), so a one-use rotating refresh token is saved before the
 *    process acts on the signal;
 *  - closing every descriptor above standard error in a spawned child (a glibc extension Swift does not import).
 */
#include <spawn.h>

/* Installs the holding handlers for SIGINT, SIGTERM and SIGHUP, and unblocks them in the calling thread. Outside a held section a signal has its
 * default effect (the handler restores the default disposition and raises it again). Call once, early. */
void signin_signals_install_hold(void);
/* Enters / leaves a held section (they nest). Leaving the outermost one delivers a signal that arrived meanwhile. */
void signin_signals_hold_begin(void);
void signin_signals_hold_end(void);
/* The signal that arrived during a held section and is still pending, or 0. */
int signin_signals_pending(void);

/*
 * The freedesktop Secret Service through libsecret, loaded (dlopen) only when a store keeps its key there, as
 * libcurl is loaded only for the network. Items are found by the attribute "store" = `store_id`. Each call returns
 * 0 on success; on failure -1 with a message in `error` (free with signin_secret_free). A lookup that finds
 * nothing returns 0 with *secret NULL, and 1 when the item is there but its collection is locked. Secrets are text (the key in base64); free them with signin_secret_free,
 * which wipes them first.
 */
int signin_secret_store(const char *store_id, const char *label, const char *secret, char **error);
int signin_secret_lookup(const char *store_id, char **secret, char **error);
int signin_secret_clear(const char *store_id, char **error);
void signin_secret_free(char *s);

/*
 * The Linux kernel keyring, by raw system calls (no libkeyutils): a "user" key in the session keyring, readable
 * only by its possessor, that expires by itself. Each returns -1 with errno set on failure.
 */
long signin_kernel_key_add(const char *description, const void *data, unsigned long length, unsigned int timeout_seconds);
long signin_kernel_key_find(const char *description);
long signin_kernel_key_read(long id, void *buffer, unsigned long length);
long signin_kernel_key_remove(long id);

/*
 * The owner (uid) of a local TCP socket, asked of the kernel by its exact address and port (NETLINK_SOCK_DIAG,
 * as `ss` does), without reading the whole /proc/net/tcp table. `family` is AF_INET or AF_INET6; addresses are
 * in network byte order (4 or 16 bytes), ports in host order. Returns 0 and sets *uid when found, 1 when no
 * such socket exists, -1 (errno set) when the kernel cannot be asked.
 */
int signin_tcp_socket_uid(int family, const void *local_addr, unsigned short local_port,
                          const void *remote_addr, unsigned short remote_port, unsigned int *uid);

/* posix_spawn_file_actions_addclosefrom_np (glibc 2.34 and later). */
int signin_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);
#endif

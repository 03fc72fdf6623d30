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
 * libcurl is loaded only for the network. Items are found by the attribute "store" = `store_id`, and carry the store folder as "folder". Each call returns
 * 0 on success; on failure -1 with a message in `error` (free with signin_secret_free). A lookup that finds
 * nothing returns 0 with *secret NULL, and 1 when the item is there but its collection is locked. Secrets are text (the key in base64); free them with signin_secret_free,
 * which wipes them first.
 */
int signin_secret_store(const char *store_id, const char *folder, const char *label, const char *secret, char **error);
int signin_secret_lookup(const char *store_id, char **secret, char **error);
int signin_secret_clear(const char *store_id, char **error);
/* Removes every item of the store folder `folder` (attribute "folder"), whichever store ID it has. */
int signin_secret_clear_folder(const char *folder, char **error);
void signin_secret_free(char *s);

/*
 * The Linux kernel keyring, by raw system calls (no libkeyutils): a "user" key in the user keyring (@u: one per
 * uid, so it outlives a shell without a session keyring of its own, as sshd and su without pam_keyinit leave),
 * readable only by its owner's uid, whatever keyring another uid shares, expiring by itself. `find` returns -2
 * (and the owner in *foreign_uid) for a key of that name that another uid put there. Each returns -1 with errno
 * set on failure.
 */
/* Adds a key: its id, or minus the errno it failed with. */
long signin_kernel_key_add(const char *description, const void *data, unsigned long length, unsigned int timeout_seconds);
long signin_kernel_key_find(const char *description, unsigned int *foreign_uid);
long signin_kernel_key_read(long id, void *buffer, unsigned long length);
long signin_kernel_key_remove(long id);
/* Seconds until key `id` expires, as /proc/keys says it (rounded down to its unit); -2 when it never expires, -1
 * when it cannot be told. */
long signin_kernel_key_seconds_left(long id);
/* Removes every user key of ours in the user keyring whose description starts with `prefix`; the count, or -1. */
long signin_kernel_keys_remove_prefix(const char *prefix);
/* Removes a key of ours of that name from the session keyring, where earlier signins kept it. */
long signin_kernel_key_remove_legacy(const char *description);

/*
 * The owner (uid) of a local TCP socket, asked of the kernel by its exact address and port (NETLINK_SOCK_DIAG,
 * as `ss` does), without reading the whole /proc/net/tcp table. `family` is AF_INET or AF_INET6; addresses are
 * in network byte order (4 or 16 bytes), ports in host order. Returns 0 and sets *uid and *state (the TCP
 * state, 1 = ESTABLISHED) when found, 1 when no such socket exists, -1 (errno set) when the kernel cannot be asked.
 * A client that closed before we accepted is a time-wait socket, whose uid the kernel reports as 0: only an
 * established socket's uid means anything.
 */
int signin_tcp_socket_uid(int family, const void *local_addr, unsigned short local_port,
                          const void *remote_addr, unsigned short remote_port, unsigned int *uid, unsigned char *state);

/*
 * What a child starts with. `record_inherited` notes, once and first thing in main, which of the signals signin
 * ever ignores or catches our parent had us ignore (nohup); every child then starts with an empty signal mask and
 * those signals at their default (or ignored, as our parent had them), whichever thread starts it and whatever
 * signin was doing: `spawnattr_clean_signals` for posix_spawn, `reset_for_exec` just before execvp.
 */
void signin_signals_record_inherited(void);
int signin_spawnattr_clean_signals(posix_spawnattr_t *attr);
void signin_signals_reset_for_exec(void);
/* Replaces this process with `path` (searched in $PATH when `search`): the signal state reset on the calling thread,
 * whichever it is, with nothing between the reset and the exec. Returns only on failure, with errno's value. */
int signin_exec(const char *path, char *const argv[], int search);

/* No core file and no ptrace by processes of the same user (RLIMIT_CORE 0, PR_SET_DUMPABLE 0): signin's memory
 * holds tokens. Returns 0, or -1 when either was refused. `dumpable` is PR_GET_DUMPABLE. */
int signin_process_harden(void);
int signin_process_dumpable(void);

/* Echo off on a terminal for a hidden prompt, and back on by `restore` or by SIGINT, SIGTERM, SIGHUP or SIGQUIT
 * arriving meanwhile (restored, then the signal acts as before). -1 when `fd` is not a terminal. */
int signin_tty_echo_off(int fd);
void signin_tty_echo_restore(void);

/* SIGINT, SIGTERM and SIGHUP from now on write `message` (a string that must live for good) and exit with `code`. */
void signin_cancel_on_signals(int code, const char *message);

/* posix_spawn_file_actions_addclosefrom_np (glibc 2.34 and later). */
int signin_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);
/* A child signin watches over (exec --gce-metadata). `signin_forwarding_block` blocks, in the calling thread
 * and every thread it starts afterwards, the signals `signin_forwarding_wait` takes: call it first. The wait
 * passes each signal a process sends to signin on to `pid` (the terminal's own reach the child directly) and
 * returns 0 with the child's wait status once it ends, -1 on error. `signin_reraise` ends signin with `sig`. */
#include <sys/types.h>
void signin_forwarding_block(void);
int signin_forwarding_wait(pid_t pid, int *status);
void signin_reraise(int sig);
/* A server that runs until SIGINT, SIGTERM or SIGHUP (metadata-server): block them first (threads started later
 * inherit that), then wait; the wait returns the signal. */
void signin_stop_signals_block(void);
int signin_stop_signals_wait(void);

/* A descriptor that becomes readable when process `pid` ends (pidfd_open, Linux 5.3), or -1 with errno set. */
int signin_pidfd_open(int pid);
/* The process at the other end of a Unix socket (SO_PEERCRED, which needs _GNU_SOURCE's struct ucred). */
int signin_peer_credentials(int fd, int *pid, unsigned *uid, unsigned *gid);


/*
 * The TPM 2.0 through the TSS libraries (loaded on first use). `tcti` names the TPM as the TSS does
 * ("device:/dev/tpmrm0", "swtpm:host=127.0.0.1,port=2321"); NULL or "" lets the TSS pick. A secret (at most 128
 * bytes) is sealed under the owner hierarchy's storage key, recreated on each call from the TPM's seed; `auth`
 * (at most 32 bytes, may be empty) is the sealed object's password. The blob (public and private parts,
 * marshalled) is only usable on the TPM that made it. Each returns 0 or one of the codes below with a message in
 * `error` (free with free(3)); free blobs and secrets with signin_tpm_free, which wipes them first.
 */
#include <stddef.h>
#include <stdint.h>
enum {
    SIGNIN_TPM_UNAVAILABLE = 1,  /* no TSS libraries, or no TPM answers at `tcti` */
    SIGNIN_TPM_FAILED = 2,       /* the TPM refused for another reason */
    SIGNIN_TPM_DAMAGED = 3,      /* the blob does not parse */
    SIGNIN_TPM_OTHER_TPM = 4,    /* the blob was sealed by another TPM (or this one was cleared) */
    SIGNIN_TPM_WRONG_AUTH = 5,   /* `auth` is not the sealed object's password */
    SIGNIN_TPM_LOCKED_OUT = 6,   /* dictionary-attack lockout */
    SIGNIN_TPM_FULL = 7,         /* out of room for objects or sessions, after flushing what signin left */
};

/* The kind (SIGNIN_TPM_*) of a failed TPM2_Load's response code `rc`: another TPM only for an integrity or binding
 * failure; unavailable for a TSS layer's error or a TPM warning; failed otherwise. */
int signin_tpm_load_failure(uint32_t rc);
int signin_tpm_probe(const char *tcti, char **error);
int signin_tpm_seal(const char *tcti, const uint8_t *secret, size_t secret_len, const uint8_t *auth, size_t auth_len,
                    uint8_t **blob, size_t *blob_len, char **error);
int signin_tpm_unseal(const char *tcti, const uint8_t *blob, size_t blob_len, const uint8_t *auth, size_t auth_len,
                      uint8_t **secret, size_t *secret_len, char **error);
/* An ECDSA P-256 signing key made inside the TPM (its blob; its public point, 32 bytes each), and an ES256
 * signature (r, s) of a SHA-256 digest with it: the private key never leaves the TPM. */
int signin_tpm_create_signing_key(const char *tcti, uint8_t **blob, size_t *blob_len, uint8_t x[32], uint8_t y[32], char **error);
int signin_tpm_sign(const char *tcti, const uint8_t *blob, size_t blob_len, const uint8_t digest[32], uint8_t r_out[32], uint8_t s_out[32], char **error);
void signin_tpm_free(void *p, size_t len);

/*
 * The crash report: `signin_crash_prepare` (first thing in main) notes the version and the state folder (nothing
 * else: it is on every start); `signin_crash_report` (in a fatal signal's handler) writes the crashing thread's frames, as
 * module+offset and the symbol where the dynamic symbol table has one, to standard error and to STATE_DIR/crash.txt
 * (0600). No argument, register or memory is written.
 */
void signin_crash_prepare(const char *version, const char *state_dir);
void signin_crash_report(int sig);
#endif

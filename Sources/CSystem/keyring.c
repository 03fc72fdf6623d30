#define _GNU_SOURCE
#include "csystem.h"
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

/* From <linux/keyctl.h>. */
#define KEY_SPEC_SESSION_KEYRING -3
#define KEYCTL_REVOKE 3
#define KEYCTL_SETPERM 5
#define KEYCTL_UNLINK 9
#define KEYCTL_SEARCH 10
#define KEYCTL_READ 11
#define KEYCTL_SET_TIMEOUT 15
#define KEY_POS_ALL 0x3f000000u

long signin_kernel_key_add(const char *description, const void *data, unsigned long length, unsigned int timeout_seconds) {
    long id = syscall(SYS_add_key, "user", description, data, length, KEY_SPEC_SESSION_KEYRING);
    if (id < 0) return -1;
    /* Only a process that possesses it (through this session keyring) may see, read or change it. */
    if (syscall(SYS_keyctl, KEYCTL_SETPERM, id, KEY_POS_ALL) < 0 ||
        (timeout_seconds > 0 && syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, id, timeout_seconds) < 0)) {
        int e = errno;
        syscall(SYS_keyctl, KEYCTL_REVOKE, id);
        errno = e;
        return -1;
    }
    return id;
}

long signin_kernel_key_find(const char *description) {
    return syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, "user", description, 0);
}

long signin_kernel_key_read(long id, void *buffer, unsigned long length) {
    return syscall(SYS_keyctl, KEYCTL_READ, id, buffer, length);
}

long signin_kernel_key_remove(long id) {
    /* Revoked at once for every process that holds it, then unlinked. */
    long rc = syscall(SYS_keyctl, KEYCTL_REVOKE, id);
    syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_SESSION_KEYRING);
    return rc;
}

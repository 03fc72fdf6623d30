#define _GNU_SOURCE
#include "csystem.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* From <linux/keyctl.h>. */
#define KEY_SPEC_THREAD_KEYRING -1
#define KEY_SPEC_SESSION_KEYRING -3
#define KEY_SPEC_USER_KEYRING -4
#define KEYCTL_DESCRIBE 6
#define KEYCTL_REVOKE 3
#define KEYCTL_SETPERM 5
#define KEYCTL_UNLINK 9
#define KEYCTL_SEARCH 10
#define KEYCTL_READ 11
#define KEYCTL_SET_TIMEOUT 15
/* View, read, write, search, link, setattr for the key's owner (uid) only. Nothing for its possessor as such:
 * possession follows the session keyring, which another uid can share (su without pam_keyinit), and possessor
 * permissions are added to whatever else applies. */
#define KEY_USR_ALL 0x003f0000u

/* The owner uid of key `id`, or -1. */
static long key_owner(long id) {
    char buf[512];
    long n = syscall(SYS_keyctl, KEYCTL_DESCRIBE, id, buf, sizeof buf - 1);
    if (n < 0) return -1;
    buf[n < (long)sizeof buf ? n : (long)sizeof buf - 1] = 0;
    /* "type;uid;gid;perm;description" */
    char *semi = strchr(buf, ';');
    if (!semi) return -1;
    char *end = NULL;
    long uid = strtol(semi + 1, &end, 10);
    if (!end || *end != ';') return -1;
    return uid;
}

static long find_in(long keyring, const char *description) {
    return syscall(SYS_keyctl, KEYCTL_SEARCH, keyring, "user", description, 0);
}

#define KEYCTL_UPDATE 2
#define KEYCTL_LINK 8

static long key_add(const char *description, const void *data, unsigned long length, unsigned int timeout_seconds);

long signin_kernel_key_add(const char *description, const void *data, unsigned long length, unsigned int timeout_seconds) {
    long id = key_add(description, data, length, timeout_seconds);
    /* The error goes back as the answer, so no caller reads errno after the call. */
    return id < 0 ? -(long)(errno ? errno : EPERM) : id;
}

static long key_add(const char *description, const void *data, unsigned long length, unsigned int timeout_seconds) {
    /* A key of that name already there but not ours is unlinked first: add_key would update it in place, and its
     * owner could then read what we put in it. */
    long existing = find_in(KEY_SPEC_USER_KEYRING, description);
    if (existing >= 0 && key_owner(existing) != (long)getuid()) syscall(SYS_keyctl, KEYCTL_UNLINK, existing, KEY_SPEC_USER_KEYRING);
    if (existing >= 0 && key_owner(existing) == (long)getuid()) {
        syscall(SYS_keyctl, KEYCTL_REVOKE, existing);
        syscall(SYS_keyctl, KEYCTL_UNLINK, existing, KEY_SPEC_USER_KEYRING);
    }
    /* Made in this thread's own keyring, which only this thread possesses (so nothing planted elsewhere can be
     * updated in its place), so that we may set its permissions (a key in @u is not possessed where the session
     * keyring does not link @u); the permissions are set while it holds only zeros, then the key goes in, and it
     * moves to @u. */
    /* A "user" key holds at most 32767 bytes. */
    if (length == 0 || length > 32767) { errno = EINVAL; return -1; }
    unsigned char *zeros = calloc(1, length);
    if (!zeros) return -1;
    long id = syscall(SYS_add_key, "user", description, zeros, length, KEY_SPEC_THREAD_KEYRING);
    free(zeros);
    if (id < 0) return -1;
    int ok = key_owner(id) == (long)getuid() &&
             syscall(SYS_keyctl, KEYCTL_SETPERM, id, KEY_USR_ALL) == 0 &&
             syscall(SYS_keyctl, KEYCTL_UPDATE, id, data, length) == 0 &&
             (timeout_seconds == 0 || syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, id, timeout_seconds) == 0) &&
             syscall(SYS_keyctl, KEYCTL_LINK, id, KEY_SPEC_USER_KEYRING) == 0;
    int e = errno;
    syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_THREAD_KEYRING);
    if (!ok) {
        syscall(SYS_keyctl, KEYCTL_REVOKE, id);
        syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_USER_KEYRING);
        errno = e ? e : EPERM;
        return -1;
    }
    return id;
}

long signin_kernel_key_find(const char *description, unsigned int *foreign_uid) {
    long id = find_in(KEY_SPEC_USER_KEYRING, description);
    if (id < 0) return -1;
    long owner = key_owner(id);
    if (owner != (long)getuid()) {
        if (foreign_uid) *foreign_uid = (unsigned int)owner;
        errno = EACCES;
        return -2;
    }
    return id;
}

long signin_kernel_key_read(long id, void *buffer, unsigned long length) {
    return syscall(SYS_keyctl, KEYCTL_READ, id, buffer, length);
}

long signin_kernel_key_remove(long id) {
    /* Revoked at once for every process that holds it, then unlinked. */
    long rc = syscall(SYS_keyctl, KEYCTL_REVOKE, id);
    syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_USER_KEYRING);
    return rc;
}

long signin_kernel_key_remove_legacy(const char *description) {
    /* Earlier signins kept the key in the session keyring; only a key of our own uid is removed. */
    long id = find_in(KEY_SPEC_SESSION_KEYRING, description);
    if (id < 0 || key_owner(id) != (long)getuid()) return -1;
    long rc = syscall(SYS_keyctl, KEYCTL_REVOKE, id);
    syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_SESSION_KEYRING);
    return rc;
}

long signin_kernel_key_seconds_left(long id) {
    /* /proc/keys: "ID(hex) flags usage timeout perm uid gid type description...", timeout "perm", "expd" or a
     * number with a unit (s, m, h, d, w), rounded down by the kernel. */
    FILE *f = fopen("/proc/keys", "re");
    if (!f) return -1;
    char line[512];
    long left = -1;
    while (fgets(line, sizeof line, f)) {
        char *end = NULL;
        long kid = strtol(line, &end, 16);
        if (kid != id || !end) continue;
        char flags[32], timeout[32];
        long usage;
        if (sscanf(end, " %31s %ld %31s", flags, &usage, timeout) != 3) break;
        if (strcmp(timeout, "perm") == 0) { left = -2; break; }
        char *unit = NULL;
        long n = strtol(timeout, &unit, 10);
        long scale = !unit ? 0 : *unit == 's' ? 1 : *unit == 'm' ? 60 : *unit == 'h' ? 3600 : *unit == 'd' ? 86400 : *unit == 'w' ? 604800 : 0;
        left = scale ? n * scale : 0;
        break;
    }
    fclose(f);
    return left;
}

long signin_kernel_keys_remove_prefix(const char *prefix) {
    /* A keyring's payload is the array of its keys' 32-bit serial numbers (the kernel's own quota keeps it far
     * below this buffer). */
    int ids[4096];
    long n = syscall(SYS_keyctl, KEYCTL_READ, KEY_SPEC_USER_KEYRING, ids, sizeof ids);
    if (n < 0) return -1;
    long count = n / (long)sizeof(int), removed = 0;
    if (count > 4096) count = 4096;
    size_t plen = strlen(prefix);
    for (long i = 0; i < count; i++) {
        char buf[512];
        long m = syscall(SYS_keyctl, KEYCTL_DESCRIBE, ids[i], buf, sizeof buf - 1);
        if (m < 0) continue;
        buf[m < (long)sizeof buf ? m : (long)sizeof buf - 1] = 0;
        /* "type;uid;gid;perm;description": only our own user keys with the prefix. */
        char *fields[5] = {buf, NULL, NULL, NULL, NULL};
        for (int k = 1; k < 5; k++) {
            char *semi = strchr(fields[k - 1], ';');
            if (!semi) break;
            *semi = 0;
            fields[k] = semi + 1;
        }
        if (!fields[4] || strcmp(fields[0], "user") != 0 || strtol(fields[1], NULL, 10) != (long)getuid()) continue;
        if (strncmp(fields[4], prefix, plen) != 0) continue;
        if (signin_kernel_key_remove(ids[i]) == 0) removed++;
    }
    return removed;
}

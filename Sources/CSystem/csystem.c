#define _GNU_SOURCE
#include "csystem.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

static atomic_int hold_depth;
static atomic_int pending_signal;

static void deliver(int sig) {
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_signal(int sig) {
    if (atomic_load(&hold_depth) > 0) {
        int expected = 0;
        atomic_compare_exchange_strong(&pending_signal, &expected, sig);
        return;
    }
    deliver(sig);
}

void signin_signals_install_hold(void) {
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    /* A parent may start us with these blocked (some process launchers do); we take charge of them now. */
    sigset_t set;
    sigemptyset(&set);
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&set, sigs[i]);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction current;
        /* A signal ignored by whoever started us (nohup, a shell's background job) stays ignored. */
        if (sigaction(sigs[i], NULL, &current) == 0 && current.sa_handler == SIG_IGN) continue;
        struct sigaction a;
        memset(&a, 0, sizeof a);
        a.sa_handler = on_signal;
        sigemptyset(&a.sa_mask);
        a.sa_flags = SA_RESTART;
        sigaction(sigs[i], &a, NULL);
    }
}

void signin_signals_hold_begin(void) { atomic_fetch_add(&hold_depth, 1); }

void signin_signals_hold_end(void) {
    if (atomic_fetch_sub(&hold_depth, 1) == 1) {
        int sig = atomic_exchange(&pending_signal, 0);
        if (sig != 0) deliver(sig);
    }
}

int signin_signals_pending(void) { return atomic_load(&pending_signal); }

int signin_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

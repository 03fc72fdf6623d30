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

/* posix_spawn_file_actions_addclosefrom_np (glibc 2.34 and later). */
int signin_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);
#endif

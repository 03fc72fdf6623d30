#define _GNU_SOURCE
#include "csystem.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

void signin_tty_echo_restore(void);

static atomic_int hold_depth;
static atomic_int pending_signal;

static void deliver(int sig) {
    signal(sig, SIG_DFL);
    /* To the process, not to this thread (raise): the hold may end on a thread that has the signal blocked (one
     * started from Swift's cooperative pool, whose threads block every signal), where it would stay pending
     * until the thread ends, and be lost. Any thread that has it unblocked (the main thread) acts on it now. */
    kill(getpid(), sig);
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

#include <sys/prctl.h>
#include <sys/resource.h>

/* The signals signin itself ever sets to SIG_IGN (SIGPIPE, SIGXFSZ always; SIGINT, SIGTERM, SIGHUP during a
 * sign-in) or catches: what a child must get back. Others signin never touches, so a child gets what our parent
 * gave us, and a caught signal is reset to its default by exec anyway. */
static const int tracked[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};
#define TRACKED (sizeof tracked / sizeof tracked[0])
/* Which of them whoever started us had ignored (nohup, a shell's background job): recorded before we change any. */
static int inherited_ignored[TRACKED];

void signin_signals_record_inherited(void) {
    for (unsigned i = 0; i < TRACKED; i++) {
        struct sigaction current;
        inherited_ignored[i] = sigaction(tracked[i], NULL, &current) == 0 && current.sa_handler == SIG_IGN;
    }
}

int signin_spawnattr_clean_signals(posix_spawnattr_t *attr) {
    sigset_t empty, defaults;
    sigemptyset(&empty);
    sigemptyset(&defaults);
    for (unsigned i = 0; i < TRACKED; i++)
        if (!inherited_ignored[i]) sigaddset(&defaults, tracked[i]);
    if (posix_spawnattr_setsigmask(attr, &empty) != 0) return -1;
    if (posix_spawnattr_setsigdefault(attr, &defaults) != 0) return -1;
    return posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

/* `sig`'s disposition set to `handler` (SIG_DFL, SIG_IGN), with no flags and an empty mask. */
static void set_disposition(int sig, void (*handler)(int)) {
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = handler;
    sigemptyset(&a.sa_mask);
    sigaction(sig, &a, NULL);
}

void signin_signals_reset_for_exec(void) {
    for (unsigned i = 0; i < TRACKED; i++) set_disposition(tracked[i], inherited_ignored[i] ? SIG_IGN : SIG_DFL);
    sigset_t empty;
    sigemptyset(&empty);
    pthread_sigmask(SIG_SETMASK, &empty, NULL);
}

#include <errno.h>
#include <unistd.h>
int signin_exec(const char *path, char *const argv[], int search) {
    signin_signals_reset_for_exec();
    if (search) execvp(path, argv); else execv(path, argv);
    return errno;
}

int signin_process_harden(void) {
    struct rlimit none = {0, 0};
    int rc = setrlimit(RLIMIT_CORE, &none);
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) rc = -1;
    return rc;
}

int signin_process_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

#include <termios.h>
#include <unistd.h>

/* The terminal's settings while a hidden prompt is up, restored by any signal that ends the prompt. */
static struct termios tty_saved;
static volatile sig_atomic_t tty_fd = -1;
static struct sigaction tty_previous[4];
static const int tty_signals[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void tty_restore_and_reraise(int sig) {
    if (tty_fd >= 0) {
        tcsetattr(tty_fd, TCSAFLUSH, &tty_saved);
        (void)!write(tty_fd, "\n", 1);
        tty_fd = -1;
    }
    for (int i = 0; i < 4; i++)
        if (tty_signals[i] == sig) sigaction(sig, &tty_previous[i], NULL);
    raise(sig);
}

int signin_tty_echo_off(int fd) {
    struct termios quiet;
    if (tcgetattr(fd, &tty_saved) != 0) return -1;
    quiet = tty_saved;
    quiet.c_lflag &= ~(tcflag_t)ECHO;
    tty_fd = fd;
    for (int i = 0; i < 4; i++) {
        struct sigaction a;
        memset(&a, 0, sizeof a);
        a.sa_handler = tty_restore_and_reraise;
        sigemptyset(&a.sa_mask);
        a.sa_flags = SA_RESETHAND;
        sigaction(tty_signals[i], &a, &tty_previous[i]);
        /* A signal our parent had us ignore stays ignored. */
        if (tty_previous[i].sa_handler == SIG_IGN) sigaction(tty_signals[i], &tty_previous[i], NULL);
    }
    if (tcsetattr(fd, TCSAFLUSH, &quiet) != 0) {
        signin_tty_echo_restore();
        return -1;
    }
    return 0;
}

void signin_tty_echo_restore(void) {
    if (tty_fd >= 0) tcsetattr(tty_fd, TCSAFLUSH, &tty_saved);
    tty_fd = -1;
    for (int i = 0; i < 4; i++) sigaction(tty_signals[i], &tty_previous[i], NULL);
}

/* `signin init`: Ctrl-C (or SIGTERM, a closed terminal) while it asks ends it as canceled, with a message. */
static const char *cancel_message;
static int cancel_code;
static void cancel_now(int sig) {
    (void)sig;
    if (cancel_message) (void)!write(2, cancel_message, strlen(cancel_message));
    _exit(cancel_code);
}

void signin_cancel_on_signals(int code, const char *message) {
    cancel_code = code;
    cancel_message = message;
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (unsigned i = 0; i < 3; i++) {
        struct sigaction a;
        memset(&a, 0, sizeof a);
        a.sa_handler = cancel_now;
        sigemptyset(&a.sa_mask);
        sigaction(sigs[i], &a, NULL);
    }
}

/* A child that signin watches over (exec --gce-metadata): signals a process sends to signin go on to the
 * child; those the terminal sends reach the child by itself (it is in the foreground group), so they are not
 * sent twice. */
#include <errno.h>
#include <sys/wait.h>
#include <time.h>
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCHLD};
#define FORWARDED (sizeof forwarded / sizeof forwarded[0])

static void forwarded_set(sigset_t *set) {
    sigemptyset(set);
    for (unsigned i = 0; i < FORWARDED; i++) sigaddset(set, forwarded[i]);
}

void signin_forwarding_block(void) {
    /* Whoever started us may have SIGCHLD ignored, which would reap the child before we can read its status. */
    set_disposition(SIGCHLD, SIG_DFL);
    sigset_t set;
    forwarded_set(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int signin_forwarding_wait(pid_t pid, int *status) {
    sigset_t set;
    forwarded_set(&set);
    for (;;) {
        pid_t done = waitpid(pid, status, WNOHANG);
        if (done == pid) return 0;
        if (done < 0 && errno != EINTR) return -1;
        struct timespec tick = {1, 0}; /* also looks at the child each second, whatever happens to SIGCHLD */
        siginfo_t info;
        int sig = sigtimedwait(&set, &info, &tick);
        if (sig <= 0 || sig == SIGCHLD) continue;
        /* From the terminal (SI_KERNEL) the child has it already; from a process (kill, systemd), pass it on. */
        if (info.si_code != SI_KERNEL) kill(pid, sig);
    }
}

void signin_reraise(int sig) {
    set_disposition(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

static void stop_set(sigset_t *set) {
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

void signin_stop_signals_block(void) {
    sigset_t set;
    stop_set(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int signin_stop_signals_wait(void) {
    sigset_t set;
    stop_set(&set);
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {}
    return sig;
}

#include <sys/socket.h>
int signin_peer_credentials(int fd, int *pid, unsigned *uid, unsigned *gid) {
    struct ucred c;
    socklen_t len = sizeof c;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len) != 0) return -1;
    *pid = c.pid;
    *uid = c.uid;
    *gid = c.gid;
    return 0;
}

#include <sys/syscall.h>
#include <unistd.h>
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
int signin_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
}

/* ---- The crash report: what a person can send after an internal error ---- */
#include <stdint.h>
#include <stdio.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <sys/stat.h>

static char crash_header[160];
static char crash_dir[1024];
static char crash_file[1100];

static void crash_put(int fd, const char *s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static void crash_hex(int fd, uintptr_t v) {
    char buf[19] = "0x";
    char digits[16];
    int n = 0;
    do { digits[n++] = "0123456789abcdef"[v & 0xf]; v >>= 4; } while (v && n < 16);
    for (int i = 0; i < n; i++) buf[2 + i] = digits[n - 1 - i];
    buf[2 + n] = 0;
    crash_put(fd, buf);
}

static void crash_dec(int fd, long v) {
    char buf[24];
    int n = 0;
    if (v < 0) { crash_put(fd, "-"); v = -v; }
    do { buf[22 - n++] = (char)('0' + v % 10); v /= 10; } while (v && n < 22);
    buf[23] = 0;
    crash_put(fd, buf + 23 - n);
}

static void crash_frames(int fd, void **frames, int n) {
    /* The program's own frames are named by the file that runs (/proc/self/exe: signin-dynamic where the static half
     * handed the run over), not by argv[0], which dladdr gives for the main program and which says "signin". */
    char exe[1024];
    const char *exe_name = NULL;
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        const char *slash = strrchr(exe, '/');
        exe_name = slash ? slash + 1 : exe;
    }
    Dl_info self;
    void *main_base = dladdr((void *)crash_frames, &self) ? self.dli_fbase : NULL;
    for (int i = 0; i < n; i++) {
        Dl_info info;
        crash_put(fd, "  #");
        crash_dec(fd, i);
        crash_put(fd, " ");
        if (dladdr(frames[i], &info) && info.dli_fname) {
            const char *name = strrchr(info.dli_fname, '/');
            if (exe_name && main_base && info.dli_fbase == main_base) crash_put(fd, exe_name);
            else crash_put(fd, name ? name + 1 : info.dli_fname);
            crash_put(fd, "+");
            crash_hex(fd, (uintptr_t)frames[i] - (uintptr_t)info.dli_fbase);
            if (info.dli_sname) {
                crash_put(fd, " ");
                crash_put(fd, info.dli_sname);
            }
        } else {
            crash_hex(fd, (uintptr_t)frames[i]);
        }
        crash_put(fd, "\n");
    }
}

void signin_crash_prepare(const char *version, const char *state_dir) {
    /* No backtrace() here to warm the unwinder: in the static half it walks the whole binary's unwind tables (tens
     * of milliseconds, on every start of a cached `signin token`); the dynamic half has libgcc loaded already. */
    snprintf(crash_header, sizeof crash_header, "signin %s: internal error (signal ", version);
    if (state_dir && *state_dir && strlen(state_dir) < sizeof crash_dir) {
        snprintf(crash_dir, sizeof crash_dir, "%s", state_dir);
        snprintf(crash_file, sizeof crash_file, "%s/crash.txt", state_dir);
    }
}

void signin_crash_report(int sig) {
    void *frames[64];
    int n = backtrace(frames, 64);
    int fds[2] = {2, -1};
    if (crash_file[0]) {
        /* The state folder and the file are the user's own, 0700 and 0600; the newest report is appended last. */
        char parent[1024];
        snprintf(parent, sizeof parent, "%s", crash_dir);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) { *slash = 0; (void)mkdir(parent, 0700); }
        (void)mkdir(crash_dir, 0700);
        fds[1] = open(crash_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    for (int k = 0; k < 2; k++) {
        int fd = fds[k];
        if (fd < 0) continue;
        crash_put(fd, crash_header);
        crash_dec(fd, sig);
        crash_put(fd, "); the crashing thread's frames (no arguments, no memory), addresses as module+offset:\n");
        crash_frames(fd, frames, n);
    }
    if (fds[1] >= 0) {
        crash_put(2, "signin: this report is also in ");
        crash_put(2, crash_file);
        crash_put(2, " (send it with the version above; it holds no token).\n");
        close(fds[1]);
    }
}

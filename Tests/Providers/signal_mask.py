"""Runs a program with a chosen signal mask, as the tests need their children started:

    signal_mask.py clear PROGRAM [ARGS...]           no signal blocked (a daemon started from a test runner that
                                                    blocks some must still end on SIGTERM)
    signal_mask.py block-sigchld PROGRAM [ARGS...]   SIGCHLD blocked, as a careless parent leaves it (signin must
                                                    give COMMAND a clean mask all the same)

The program replaces this one (exec): its pid, streams and exit status are its own."""
import os
import signal
import sys

MASKS = {"clear": [], "block-sigchld": [signal.SIGCHLD]}

if len(sys.argv) < 3 or sys.argv[1] not in MASKS:
    sys.exit("usage: signal_mask.py clear|block-sigchld PROGRAM [ARGS...]")
signal.pthread_sigmask(signal.SIG_SETMASK, MASKS[sys.argv[1]])
os.execv(sys.argv[2], sys.argv[2:])

"""Ctrl-C in the `domino` command without a crash inside numba's argument conversion.

numba converts a numpy Generator argument of a compiled function by calling `ctypes.cast` (Python
code, so a pending SIGINT's handler runs inside it) and uses what that call returns without checking
it: a KeyboardInterrupt raised there ended `domino evaluate` with a segmentation fault (exit -11, no
message) in about one Ctrl-C of five. The `domino` command's SIGINT handler therefore raises
KeyboardInterrupt anywhere but in ctypes' own code; there it asks again 10 ms later, when the
conversion is done. Only the command installs it: a library sets no signal handler in its user's
program.
"""
from __future__ import annotations

import signal

RETRY_S = 0.01


def _in_ctypes(frame) -> bool:
    import ctypes

    return frame is not None and frame.f_code.co_filename == ctypes.__file__


def _on_sigint(signum, frame):
    if _in_ctypes(frame):
        import _thread
        import threading

        threading.Timer(RETRY_S, _thread.interrupt_main).start()  # the same handler, a moment later
        return
    raise KeyboardInterrupt


def guard_interrupts() -> None:
    """Install the handler where SIGINT has Python's default one (a caller that set its own keeps it)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)

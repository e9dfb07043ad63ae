"""`python -m uvdock` and the `uvdock` console script."""

import signal
import sys
from types import FrameType


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def entry() -> int:
    # A Ctrl-C or a `kill` while the CLI is still loading (about half of start-up) is an
    # interrupt like any later one: exit 130, never a traceback or a death by the signal.
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        from uvdock.cli.main import main

        return main()
    except KeyboardInterrupt:  # before main() handles interrupts, or after it returned
        sys.stderr.write("error: interrupted\n")
        return 130
    finally:
        # uvdock is on its way out: a signal now must not kill it or print a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(entry())

"""`python -m uvdock` and the `uvdock` console script."""

import gc
import sys


def entry() -> int:
    # A run is short and frees what it allocates by reference counting: collecting cycles
    # would cost about 5% of a quick command (`image check`) and free next to nothing.
    gc.disable()
    # A Ctrl-C or a `kill` while the CLI is still loading (about half of start-up) is an
    # interrupt like any later one: exit 130, never a traceback or a death by the signal.
    from uvdock.run.signals import as_interrupts

    with as_interrupts():
        try:
            from uvdock.cli.main import main

            return main()
        except KeyboardInterrupt:  # before main() handles interrupts, or after it returned
            sys.stderr.write("error: interrupted\n")
            return 130


if __name__ == "__main__":
    sys.exit(entry())

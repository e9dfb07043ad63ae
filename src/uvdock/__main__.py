import sys

from uvdock.cli import main

sys.exit(main())

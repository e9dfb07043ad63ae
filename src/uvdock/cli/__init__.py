"""The face: the command table and global options as data (spec), the argparse parsers built
from it (parse), and the one root handler that maps errors to exit codes (main)."""

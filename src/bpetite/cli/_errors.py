"""The one exception a command raises for a failure the user can act on."""


class CliError(Exception):
    """A failure the user can act on: printed as one line on stderr, exit code 1."""

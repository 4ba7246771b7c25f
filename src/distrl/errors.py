"""The error type for bad user input (task files, task ids, names): one line naming the problem.

The CLI prints these as ``distrl: error: <message>`` and exits with status 2; anything else that
escapes is a bug in distrl, not in the user's input.
"""


class InputError(ValueError):
    """Bad input from the user; ``str(error)`` is one line that names the input and the fix."""

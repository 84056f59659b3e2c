"""The exception of a timing plan that the walks (interpreted or generated) cannot model."""


class Unwalkable(Exception):
    """The plan cannot be walked as is (a loop step <= 0, a runaway loop): run the kernel's
    queue mode instead, which reports the fault located at its op."""

"""A tiny package for README's python_path example."""


def greet(who):
    return "hello, %s" % who

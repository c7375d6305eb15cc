#!/usr/bin/env python3
"""The install steps of the board build systems' recipes, run here (tools/check/check-boards):

  bitbake FILE.bb DIR VAR=VALUE...
      runs FILE's do_install shell body as BitBake would (`sh -e`, in DIR), every ${VAR}
      in it replaced by the VALUE given, or by the recipe's own `VAR ?= "..."` or
      `VAR = "..."` when it has one; a ${VAR} that is neither, or inline Python (${@...}),
      stops it with status 2, so a new variable in the recipe needs a value here
  kconfig KCONFIG OUT.config [SYMBOL=VALUE...]
      parses KCONFIG (Buildroot's top-level stand-in, which sources the external tree's
      Config.in files) with kconfiglib, with undefined symbols reported
      (KCONFIG_WARN_UNDEF), sets each SYMBOL (y, n or a string) and writes the
      configuration Buildroot's make would read; prints each warning on a line, status 1
      when there is one or a SYMBOL did not take its VALUE
"""
import os
import re
import subprocess
import sys


def recipe_values(text):
    """The recipe's plain assignments (`VAR = "v"`, `VAR ?= "v"`), one line each."""
    values = {}
    for match in re.finditer(r'^([A-Za-z0-9_]+)\s*\??=\s*"([^"\\]*)"\s*$', text, re.M):
        values.setdefault(match.group(1), match.group(2))
    return values


def task_body(text, task):
    """The shell body of `task() {` ... the `}` that starts a line."""
    match = re.search(r"^%s\(\)\s*\{\n(.*?)^\}" % re.escape(task), text, re.M | re.S)
    if not match:
        sys.exit("check-boards-install: no %s() in the recipe" % task)
    return match.group(1)


def bitbake(recipe, directory, assignments):
    text = open(recipe).read()
    values = recipe_values(text)
    values.update(dict(a.split("=", 1) for a in assignments))
    body = task_body(text, "do_install")
    if "${@" in body:
        sys.exit("check-boards-install: inline Python in do_install: give it a value here")

    def expand(match):
        name = match.group(1)
        if name not in values:
            sys.exit("check-boards-install: do_install uses ${%s}, which has no value here" % name)
        return values[name]

    # A value may name others (S = "${UNPACKDIR}/..."): expanded until none is left.
    for _ in range(10):
        body = re.sub(r"\$\{([A-Za-z0-9_]+)\}", expand, body)
    result = subprocess.run(["sh", "-e", "-c", body], cwd=directory)
    sys.exit(result.returncode)


def kconfig(top, out, settings):
    os.environ["KCONFIG_WARN_UNDEF"] = "y"
    # Buildroot's symbols carry their BR2_ prefix themselves: no CONFIG_ before them.
    os.environ["CONFIG_"] = ""
    import kconfiglib

    conf = kconfiglib.Kconfig(top, warn_to_stderr=False)
    failed = False
    for setting in settings:
        name, value = setting.split("=", 1)
        symbol = conf.syms[name]
        symbol.set_value(value)
        if symbol.str_value != value:
            print("%s is %r, not %r (its dependencies are not met)" % (name, symbol.str_value, value))
            failed = True
    for warning in conf.warnings:
        print(warning)
    conf.write_config(out)
    sys.exit(1 if failed or conf.warnings else 0)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "bitbake":
        bitbake(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "kconfig":
        kconfig(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)

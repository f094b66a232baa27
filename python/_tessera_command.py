"""The `tessera` command of an environment that pip-installed Tessera: it runs the program inside the package
(site-packages/tessera/bin/tessera). A module of its own, outside the `tessera` package, so that starting the
command does not import torch."""
import os
import sys
import sysconfig


def main():
    for root in {sysconfig.get_paths()["platlib"], sysconfig.get_paths()["purelib"], os.path.dirname(__file__)}:
        program = os.path.join(root, "tessera", "bin", "tessera")
        if os.path.exists(program):
            os.execv(program, [program, *sys.argv[1:]])
    sys.exit("tessera: the program tessera/bin/tessera is not installed beside this command "
             "(reinstall with `pip install --no-build-isolation --force-reinstall <your Tessera clone>`)")


if __name__ == "__main__":
    main()

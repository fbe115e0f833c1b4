"""`python -m tsattn` runs the same CLI as the `tsattn` script."""

from tsattn.cli.main import main

if __name__ == "__main__":
    main()

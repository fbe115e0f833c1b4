"""The `tsattn` command line (installed as ``tsattn.cli``): a thin click skin over the library."""

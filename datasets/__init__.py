"""Data files shipped with tsattn (installed as ``tsattn.datasets``); see README.md here for provenance."""

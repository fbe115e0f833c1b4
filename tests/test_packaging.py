"""Install tsattn non-editably into a fresh virtual environment and use it from another directory."""

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_regular_install_loads_sunspots_from_anywhere(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # tsattn itself is built and installed for real (no --editable); its heavy dependencies are reused
    # from this environment through a .pth line instead of being downloaded again.
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps",
                    str(ROOT)], check=True, cwd=tmp_path)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "zz_outer_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import tsattn; s = tsattn.load_dataset('sunspots'); print(len(s), s.index.freqstr); "
            "print(tsattn.__file__)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([str(python), "-c", code], cwd=elsewhere, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    first, location = result.stdout.strip().splitlines()
    assert first == "2820 MS"
    assert str(env_dir) in location  # the installed copy, not the source tree
    cli = subprocess.run([str(env_dir / "bin" / "tsattn"), "datasets"], cwd=elsewhere, capture_output=True,
                         text=True, env=env)
    assert cli.returncode == 0 and "sunspots" in cli.stdout and "fibonacci" in cli.stdout
    module = subprocess.run([str(python), "-m", "tsattn", "--version"], cwd=elsewhere, capture_output=True,
                            text=True, env=env)
    assert module.returncode == 0 and "tsattn, version" in module.stdout


def test_dev_installs_quietly_and_shows_pip_output_only_when_it_fails(monkeypatch, capsys):
    """Issue 24: `python3 dev.py tsattn fit --quiet` printed setuptools' editable-install warning block."""
    import importlib.util
    import types

    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "dev.py")
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    noisy = "BuildBackendWarning: Editable installation.\n!!\n****\n"
    monkeypatch.setattr(dev.subprocess, "run", lambda *a, **k: types.SimpleNamespace(returncode=0, stdout="",
                                                                                     stderr=noisy))
    dev.pip(Path("python"), "-e", ".")
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(dev.subprocess, "run", lambda *a, **k: types.SimpleNamespace(returncode=1, stdout="",
                                                                                     stderr="No matching dist\n"))
    with pytest.raises(SystemExit, match=r"pip install -e \. failed \(exit code 1\)"):
        dev.pip(Path("python"), "-e", ".")
    assert "No matching dist" in capsys.readouterr().err


def test_no_module_imports_tensorflow_or_keras_around_the_quiet_import():
    """TensorFlow 2.21 prints its oneDNN / CUDA notices on descriptor 2 at import: every import of it goes through
    tsattn._backend (which silences them); a direct `import keras` elsewhere leaked them from `tsattn compare`."""
    import re

    leaks = []
    for path in sorted((ROOT / "tsattn").glob("*.py")) + sorted((ROOT / "cli").glob("*.py")):
        if path.name == "_backend.py":
            continue
        text = path.read_text()
        for match in re.finditer(r"^[ \t]*(import (keras|tensorflow)\b|from (keras|tensorflow)\b)", text, re.M):
            line = text[:match.start()].count("\n") + 1
            # fine after a module-level `from . import _backend`, which has then run first
            if re.search(r"^from \. import _backend", text[:match.start()], re.M):
                continue
            leaks.append(f"{path.name}:{line}: {match.group(0).strip()}")
    assert not leaks, leaks

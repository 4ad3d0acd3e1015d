"""pytest: the Python module over libggfit (python/ggfit), installed as a
user installs it (tests/python.sh: pip install . into a fresh venv), against
the CLI's own --json."""
import json
import os
import subprocess
import threading

import pytest

import ggfit

ROOT = os.environ.get("GGFIT_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
CLI = os.environ.get("GGFIT_CLI") or os.path.join(ROOT, "build", "ggfit")
MODEL = os.path.join(ROOT, "data", "models", "qwen3-14b-Q4_K_M.gguf")
MOE = os.path.join(ROOT, "data", "models", "qwen3-30b-a3b-Q4_K_M.gguf")


def cli_json(*argv):
    """The CLI's plan as a batch line holds it: without the document's own
    "json_version" and "kind" (docs/json.md)."""
    r = subprocess.run([CLI, *argv, "--json"], capture_output=True, text=True, cwd=ROOT)
    assert r.stdout, r.stderr
    doc = json.loads(r.stdout)
    assert (doc.pop("json_version"), doc.pop("kind")) == (1, "plan")
    return doc


def test_installed_not_the_source_tree():
    # the package pip installed, carrying its library
    assert "site-packages" in ggfit.__file__
    assert ggfit.__version__ == ggfit.library_version()


def test_plan_is_the_cli_plan():
    p = ggfit.plan(MODEL, gpus=["rtx-3090"], host_mem="64GiB")
    assert p == cli_json("-m", MODEL, "--gpu", "rtx-3090", "--host-mem", "64GiB")
    assert p["verdict"]["status"] == "fits"
    assert p["n_ctx"] > 0 and p["argv"][:2] == ["-c", str(p["n_ctx"])]


def test_flags_and_pasted_line():
    p = ggfit.plan(MODEL, gpus=["rtx-3060-12gb"], host_mem="64GiB", flags=["-c", "8192"])
    assert p["n_ctx"] == 8192
    q = ggfit.plan(gpus="rtx-3060-12gb", host_mem="64GiB",
                   flags=["--", "llama-server", "-m", MODEL, "-c", "8192"])
    assert q["n_ctx"] == 8192 and q["n_gpu_layers"] == p["n_gpu_layers"]


def test_moe_experts_in_system_ram():
    p = ggfit.plan(MOE, gpus=["8GiB"], host_mem="64GiB", flags=["-c", "16384"])
    assert p["overrides"], "the experts kept in system RAM (-ot ...=CPU)"
    assert p == cli_json("-m", MOE, "--gpu", "8GiB", "--host-mem", "64GiB", "-c", "16384")


def test_llama_version():
    p = ggfit.plan(MODEL, gpus=["rtx-3090"], host_mem="64GiB", llama_version="b10309")
    assert p["llama"]["build"] == 10309


def test_errors_are_exceptions_with_ggfit_message():
    with pytest.raises(ggfit.GgfitError, match="nope.gguf: cannot open"):
        ggfit.plan("/nope.gguf", gpus=["rtx-3090"])
    with pytest.raises(ggfit.GgfitError, match="--bogus"):
        ggfit.plan(MODEL, gpus=["rtx-3090"], flags=["--bogus"])
    with pytest.raises(TypeError):
        ggfit.plan(MODEL, flags="-c 4096")


def test_batch_from_threads():
    machines = ["rtx-3090", "rtx-4090", "8GiB", "24GiB,12GiB"]
    want = [ggfit.plan(MODEL, gpus=[m], host_mem="64GiB") for m in machines]
    got = [None] * len(machines)
    with ggfit.Batch() as b:
        def one(i):
            got[i] = b.plan(["-m", MODEL, "--gpu", machines[i], "--host-mem", "64GiB"])
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(machines))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        a = b.answer(["-m", "/nope.gguf"], id=7)
    assert got == want
    assert a["id"] == 7 and "cannot open" in a["error"]


def test_closed_batch():
    b = ggfit.Batch()
    b.close()
    with pytest.raises(ggfit.GgfitError, match="closed"):
        b.plan(["-m", MODEL])

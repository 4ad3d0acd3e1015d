"""ggfit from Python: what llama.cpp's fit decides, from a GGUF header.

A thin client of libggfit through ctypes (no compiler at install time):
each call is one line of ggfit's batch mode (ggfit_batch_answer in
ggfit_app.h), whose answer is the JSON `ggfit --json` prints.

    import ggfit
    p = ggfit.plan("model.gguf", gpus=["rtx-3090"], flags=["-c", "32768"])
    p["n_ctx"], p["verdict"]["status"], p["argv"]

The library is looked for in this order: $GGFIT_LIBRARY (a path), the
copy beside this file (`make python` puts the built one there before
`pip install .`), then the system's (ldconfig's libggfit.so.1, as
`make install` puts it).
"""
import ctypes
import ctypes.util
import json
import os
import threading

__all__ = ["plan", "plan_argv", "Batch", "GgfitError", "library_version"]
__version__ = "0.1.0"   # libggfit's (GGFIT_VERSION); the tests hold them equal

ABI = 1   # the soname's number: libggfit.so.1


class GgfitError(Exception):
    """ggfit refused the request; str() is its message (what is wrong, the fix)."""


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    tries = [os.environ.get("GGFIT_LIBRARY"), os.path.join(here, "libggfit.so.%d" % ABI),
             "libggfit.so.%d" % ABI, ctypes.util.find_library("ggfit")]
    errors = []
    for path in tries:
        if not path:
            continue
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
            continue
        lib.ggfit_batch_new.restype = ctypes.c_void_p
        lib.ggfit_batch_new.argtypes = []
        lib.ggfit_batch_free.restype = None
        lib.ggfit_batch_free.argtypes = [ctypes.c_void_p]
        # a char * the caller frees: kept as a void * so ctypes leaves it alone
        lib.ggfit_batch_answer.restype = ctypes.c_void_p
        lib.ggfit_batch_answer.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.ggfit_free.restype = None
        lib.ggfit_free.argtypes = [ctypes.c_void_p]
        lib.ggfit_version.restype = ctypes.c_char_p
        lib.ggfit_version.argtypes = []
        lib.ggfit_abi_version.restype = ctypes.c_int
        lib.ggfit_abi_version.argtypes = []
        if lib.ggfit_abi_version() != ABI:
            errors.append("%s: ABI %d, this module speaks %d" % (path, lib.ggfit_abi_version(), ABI))
            continue
        return lib
    raise GgfitError("libggfit.so.%d not found (%s): build it with make, then `make python` "
                     "before pip install ., or set GGFIT_LIBRARY to its path"
                     % (ABI, "; ".join(errors) or "none of $GGFIT_LIBRARY, the package's "
                        "copy, the system's"))


_lib = None
_lock = threading.RLock()


def _library():
    global _lib
    with _lock:
        if _lib is None:
            _lib = _load()
        return _lib


def library_version():
    """libggfit's version string."""
    return _library().ggfit_version().decode()


class Batch:
    """A batch: headers read once and kept, with the graphs their fits
    build, across the plans asked of it (ggfit_batch_new). Safe from
    several threads. Close it, or use it in a with block."""

    def __init__(self):
        self._lib = _library()
        self._b = self._lib.ggfit_batch_new()
        if not self._b:
            raise MemoryError("ggfit_batch_new")

    def close(self):
        if self._b:
            self._lib.ggfit_batch_free(self._b)
            self._b = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def answer(self, argv, id=0):
        """The answer to one request, as a dict: {"id", "plan",
        "exit_status"[, "warnings"]} or {"id", "error"}."""
        if not self._b:
            raise GgfitError("the batch is closed")
        if isinstance(argv, (str, bytes)) or not all(isinstance(a, str) for a in argv):
            raise TypeError("argv: a list of strings, e.g. ['-m', 'model.gguf']")
        line = json.dumps({"id": id, "argv": list(argv)}).encode()
        p = self._lib.ggfit_batch_answer(self._b, line, len(line))
        if not p:
            raise MemoryError("ggfit_batch_answer")
        try:
            text = ctypes.string_at(p).decode()
        finally:
            self._lib.ggfit_free(p)
        return json.loads(text)

    def plan(self, argv):
        """The plan of one argv (ggfit's own arguments, as `ggfit ARGV
        --json` takes them), as a dict; GgfitError with ggfit's message
        when it refuses them."""
        a = self.answer(argv)
        if "error" in a:
            raise GgfitError(a["error"])
        return a["plan"]


def _argv(model, gpus, host_mem, flags, llama_version):
    argv = []
    if model is not None:
        argv += ["-m", os.fspath(model)]
    if gpus is not None:
        argv += ["--gpu", ",".join(gpus) if not isinstance(gpus, str) else gpus]
    if host_mem is not None:
        argv += ["--host-mem", str(host_mem)]
    if llama_version is not None:
        argv += ["--llama-version", str(llama_version)]
    if isinstance(flags, str):
        raise TypeError("flags: a list of words, e.g. ['-c', '32768']")
    return argv + list(flags)


_shared = None


def plan_argv(argv):
    """The plan of ggfit's own arguments (a list of words) as a dict, on
    one batch kept for the module's calls (headers read once)."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = Batch()
        b = _shared
    return b.plan(argv)


def plan(model=None, gpus=None, flags=(), host_mem=None, llama_version=None):
    """What llama.cpp's fit decides for model on gpus (catalog names such
    as "rtx-3090", sizes such as "24GiB", "none"; None: this machine's)
    with llama.cpp's flags (a list of words: ["-c", "32768", "-fa", "on"],
    or a pasted line after "--"), as `ggfit --json` prints it.
    host_mem: "64GiB" or "64GiB/48GiB" (TOTAL/FREE). Raises GgfitError
    with ggfit's message when the request cannot be planned."""
    return plan_argv(_argv(model, gpus, host_mem, flags, llama_version))

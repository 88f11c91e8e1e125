"""capslint runtime probe.

Imports what the workload loads (the user's modules first, then the usual numeric stack where
it is installed), then writes one JSON object to the report descriptor: threadpoolctl's
threadpool_info() verbatim, the pools of the ML libraries threadpoolctl does not see (each
library's own report of its thread count: torch, numba, polars, ONNX Runtime, and OpenCV and
TensorFlow when the workload imported them), joblib.cpu_count() and, when asked, cpu.stat read around a short BLAS
workload. The descriptor is an anonymous in-memory file that capslint reads once the probe's
process tree is gone, so a helper process the imported code forks cannot hold the channel open.

Usage: python -c <this file> '<json config>'
config: {"imports": [module, ...], "measure_seconds": float or null, "cpu_stat": path or null,
         "report_fd": descriptor}
Compatible with Python 3.6 and later.
"""

import importlib
import importlib.util
import json
import os
import sys
import time
import traceback

# Modules whose import loads a BLAS or OpenMP runtime that threadpoolctl can see.
STACK = (
    "numpy",
    "scipy",
    "scipy.linalg",
    "numexpr",
    "sklearn",
    "sklearn.utils._openmp_helpers",
    "lightgbm",
    "xgboost",
    "catboost",
    "torch",
    "numba",
    "polars",
    "onnxruntime",
)

# The smallest ONNX model (one Relu on a float of shape [1]): a session on it builds ONNX Runtime's
# intra-op pool with the default size, which the library does not report otherwise.
ONNX_RELU_MODEL = (
    b"\x08\x07\x12\x00:3\n\x0c\n\x01A\x12\x01C\"\x04Relu\x12\x01gZ\x0f\n\x01A\x12\n\n\x08\x08\x01"
    b"\x12\x04\n\x02\x08\x01b\x0f\n\x01C\x12\n\n\x08\x08\x01\x12\x04\n\x02\x08\x01B\x04\n\x00\x10\r"
)


def installed(name):
    try:
        return importlib.util.find_spec(name.split(".")[0]) is not None
    except (ImportError, ValueError):
        return False


def describe(error):
    return "".join(traceback.format_exception_only(type(error), error)).strip()


def import_stack():
    loaded, failed = [], {}
    for name in STACK:
        if not installed(name):
            continue
        try:
            importlib.import_module(name)
            loaded.append(name)
        except BaseException as error:  # a broken optional library must not stop the probe
            if isinstance(error, KeyboardInterrupt):
                raise
            failed[name] = describe(error)
    return loaded, failed


def read_comm(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def unnamed_threads():
    """The threads that kept the interpreter's name (the ones a library did not name), or None."""
    own = read_comm("/proc/self/comm")
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    return set(task for task in tasks if read_comm("/proc/self/task/%s/comm" % task) == own)


def pool(library, name, threads, reported_by, version):
    return {"library": library, "pool": name, "num_threads": threads, "reported_by": reported_by,
            "version": version}


def torch_pools(module):
    version = getattr(module, "__version__", None)
    return [
        pool("torch", "intra-op", module.get_num_threads(), "torch.get_num_threads()", version),
        pool("torch", "inter-op", module.get_num_interop_threads(), "torch.get_num_interop_threads()",
             version),
    ]


def numba_pools(module):
    threads = module.config.NUMBA_NUM_THREADS
    return [pool("numba", "parallel", threads, "numba.config.NUMBA_NUM_THREADS",
                 getattr(module, "__version__", None))]


def polars_pools(module):
    return [pool("polars", "compute", module.thread_pool_size(), "polars.thread_pool_size()",
                 getattr(module, "__version__", None))]


def onnxruntime_pools(module):
    # The intra-op pool holds the calling thread and the threads the session starts, which keep the
    # interpreter's name (other libraries name theirs: polars-0, tokio-rt-worker, jemalloc_bg_thd).
    before = unnamed_threads()
    session = module.InferenceSession(ONNX_RELU_MODEL, providers=["CPUExecutionProvider"])
    after = unnamed_threads()
    del session
    threads = None if before is None or after is None else len(after - before) + 1
    return [pool("onnxruntime", "intra-op", threads, "threads a default InferenceSession starts",
                 getattr(module, "__version__", None))]


def opencv_pools(module):
    return [pool("cv2", "parallel_for", module.getNumThreads(), "cv2.getNumThreads()",
                 getattr(module, "__version__", None))]


def tensorflow_pools(module):
    # The getters give 0 unless code set the size. Then TensorFlow reads its variable, which the
    # caps judge, and without it starts one thread per CPU of the affinity mask.
    threading = module.config.threading
    version = getattr(module, "__version__", None)
    pools = []
    for name, getter, variable in (
        ("intra-op", "get_intra_op_parallelism_threads", "TF_NUM_INTRAOP_THREADS"),
        ("inter-op", "get_inter_op_parallelism_threads", "TF_NUM_INTEROP_THREADS"),
    ):
        threads = getattr(threading, getter)()
        reported_by = "tf.config.threading.%s()" % getter
        if not threads:
            threads = None
            if variable not in os.environ and hasattr(os, "sched_getaffinity"):
                threads = len(os.sched_getaffinity(0))
                reported_by = "the default without %s: the CPUs of the affinity mask" % variable
        pools.append(pool("tensorflow", name, threads, reported_by, version))
    return pools


# What each library reports about its pools, read only when the library is already imported.
# ONNX Runtime comes first: its count is the threads its session starts, and polars starts its pool's
# threads lazily.
LIBRARY_POOLS = (
    ("onnxruntime", onnxruntime_pools),
    ("torch", torch_pools),
    ("numba", numba_pools),
    ("polars", polars_pools),
    ("cv2", opencv_pools),
    ("tensorflow", tensorflow_pools),
)


def library_pools():
    pools, errors = [], {}
    for name, read in LIBRARY_POOLS:
        module = sys.modules.get(name)
        if module is None:
            continue
        try:
            pools.extend(read(module))
        except BaseException as error:  # a library's getter must not stop the probe
            if isinstance(error, KeyboardInterrupt):
                raise
            errors[name] = describe(error)
    return pools, errors


def read_text(path):
    with open(path) as handle:
        return handle.read()


def measure(seconds, cpu_stat):
    import numpy

    size = 384
    matrix = numpy.random.RandomState(0).standard_normal((size, size))
    matrix @ matrix  # start the BLAS thread pool before the first reading
    before = read_text(cpu_stat)
    start = time.monotonic()
    iterations = 0
    while time.monotonic() - start < seconds:
        matrix @ matrix
        iterations += 1
    elapsed = time.monotonic() - start
    after = read_text(cpu_stat)
    return {
        "seconds": elapsed,
        "iterations": iterations,
        "cpu_stat_before": before,
        "cpu_stat_after": after,
    }


def probe(config):
    result = {
        "ok": True,
        "python": sys.version.split()[0],
        "executable": sys.executable,
    }
    for name in config.get("imports", []):
        try:
            importlib.import_module(name)
        except BaseException as error:
            if isinstance(error, KeyboardInterrupt):
                raise
            return {"ok": False, "error": "import_failed", "module": name,
                    "message": describe(error)}
    result["imported"] = list(config.get("imports", []))
    result["stack"], result["stack_errors"] = import_stack()

    try:
        import threadpoolctl
    except ImportError as error:
        return {"ok": False, "error": "threadpoolctl_missing", "message": describe(error)}
    result["threadpoolctl_version"] = getattr(threadpoolctl, "__version__", None)
    result["pools"] = threadpoolctl.threadpool_info()
    result["library_pools"], result["library_pool_errors"] = library_pools()

    result["joblib_version"] = None
    result["joblib_cpu_count"] = None
    if installed("joblib"):
        try:
            import joblib

            result["joblib_version"] = getattr(joblib, "__version__", None)
            result["joblib_cpu_count"] = joblib.cpu_count()
        except Exception as error:
            result["joblib_error"] = describe(error)

    seconds = config.get("measure_seconds")
    if seconds:
        if not installed("numpy"):
            return {"ok": False, "error": "measure_failed",
                    "message": "--measure runs a numpy workload, and numpy is not installed"}
        try:
            result["measure"] = measure(seconds, config["cpu_stat"])
        except Exception as error:
            return {"ok": False, "error": "measure_failed", "message": describe(error)}
    return result


def main():
    # Whatever the imported code prints goes to stderr.
    os.dup2(2, 1)
    config = json.loads(sys.argv[1])
    result = probe(config)
    sys.stdout.flush()
    data = json.dumps(result, default=str).encode("utf-8")
    while data:
        data = data[os.write(config["report_fd"], data):]


main()

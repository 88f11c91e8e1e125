"""capslint runtime probe.

Imports what the workload loads (the user's modules first, then the usual numeric stack where
it is installed), then writes one JSON object to the report descriptor: threadpoolctl's
threadpool_info() verbatim, joblib.cpu_count() and, when asked, cpu.stat read around a short BLAS
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

"""One ML library's parallel call, measured from inside the process: the threads each of its pools
holds during the call (from /proc/self/task and the threads' names) and the library's own report.

Usage: python ml_pools.py LIBRARY; prints one JSON object:
{"library", "version", "reported": {getter: value}, "pools": {pool: threads}}
"""
import binascii
import collections
import json
import os
import sys
import threading
import time

LIBRARY = sys.argv[1]
# A MatMul of two 256x256 float tensors (ONNX IR 7, opset 13), built once with the onnx package.
MATMUL_ONNX = (
    "080712003a5b0a110a01410a014212014322064d61744d756c1201675a150a014112100a0e0801120a0a030880020a03"
    "0880025a150a014212100a0e0801120a0a030880020a0308800262150a014312100a0e0801120a0a030880020a030880"
    "0242040a00100d"
)


def names():
    counts = collections.Counter()
    for task in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/comm" % task) as handle:
                counts[handle.read().strip()] += 1
        except OSError:
            pass
    return counts


class Monitor(object):
    """Samples the process's threads by name every 2 ms, keeping each name's peak."""

    def __init__(self):
        self.peak = collections.Counter()
        self.running = True
        self.thread = threading.Thread(target=self.run)
        self.thread.daemon = True

    def sample(self):
        for name, count in names().items():
            self.peak[name] = max(self.peak[name], count)

    def run(self):
        while self.running:
            self.sample()
            time.sleep(0.002)

    def __enter__(self):
        self.before = names()
        self.thread.start()
        time.sleep(0.01)
        return self

    def __exit__(self, *exc):
        # A pool started just before the call returns may never meet the sampler (a throttled
        # cgroup can hold it off for a whole period); the pools live on, so one last look sees them.
        self.sample()
        self.running = False
        self.thread.join()

    def started(self, name=None):
        """Threads started during the call (of one name, or of every name)."""
        keys = [name] if name else set(self.peak) | set(self.before)
        # The monitor itself is one more "python" thread.
        return sum(max(self.peak[key] - self.before[key] - (key == "python"), 0) for key in keys)


def numba_call():
    import numba
    import numpy

    @numba.njit(parallel=True)
    def total(values):
        acc = 0.0
        for i in numba.prange(values.shape[0]):
            acc += numpy.sqrt(values[i])
        return acc

    values = numpy.ones(4000000)
    reported = {"numba.config.NUMBA_NUM_THREADS": numba.config.NUMBA_NUM_THREADS}
    # The pool starts with the first parallel run.
    with Monitor() as seen:
        total(values)
    reported["numba.get_num_threads()"] = numba.get_num_threads()
    # The calling thread runs a share of the loop.
    return numba.__version__, reported, {"parallel": seen.started() + 1}


def polars_call():
    import numpy
    import polars

    frame = polars.DataFrame({"k": numpy.arange(2000000) % 1000, "v": numpy.ones(2000000)})
    with Monitor() as seen:
        frame.group_by("k").agg(polars.col("v").sum())
        frame.sort("v")
    reported = {"polars.thread_pool_size()": polars.thread_pool_size()}
    # The compute pool's threads are named polars-0, polars-1, ...
    pool = sum(count for name, count in seen.peak.items() if name.startswith("polars-") and name[7:].isdigit())
    return polars.__version__, reported, {"compute": pool}


def onnxruntime_call():
    import numpy
    import onnxruntime

    model = binascii.unhexlify(MATMUL_ONNX)
    matrix = numpy.ones((256, 256), numpy.float32)
    with Monitor() as seen:
        session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
        for _ in range(20):
            session.run(None, {"A": matrix, "B": matrix})
    # The intra-op pool counts the calling thread.
    return onnxruntime.__version__, {}, {"intra-op": seen.started() + 1}


def cv2_call():
    import cv2
    import numpy

    image = numpy.zeros((3000, 3000, 3), numpy.uint8)
    with Monitor() as seen:
        cv2.GaussianBlur(image, (31, 31), 0)
    # parallel_for's pool counts the calling thread.
    return cv2.__version__, {"cv2.getNumThreads()": cv2.getNumThreads()}, {"parallel_for": seen.started() + 1}


def tokenizers_call():
    import tokenizers

    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    with Monitor() as seen:
        tokenizer.encode_batch(["a b a"] * 50000)
    # rayon's global pool: the calling thread waits for its workers.
    return tokenizers.__version__, {}, {"rayon": seen.started()}


def tensorflow_call():
    import tensorflow

    # The pools start with the first operation.
    with Monitor() as seen:
        matrix = tensorflow.ones((512, 512))
        for _ in range(5):
            tensorflow.linalg.matmul(matrix, matrix).numpy()
    threading_config = tensorflow.config.threading
    reported = {
        "get_intra_op_parallelism_threads()": threading_config.get_intra_op_parallelism_threads(),
        "get_inter_op_parallelism_threads()": threading_config.get_inter_op_parallelism_threads(),
    }
    inter = seen.started("tf_Compute")
    # The intra-op (Eigen) threads keep the interpreter's name, next to one graph-runner thread.
    intra = seen.started("python")
    return tensorflow.__version__, reported, {"inter-op": inter, "intra-op": intra}


def torch_call():
    import torch

    # The intra-op pool (OpenMP here) starts with the first parallel operation: filling the matrix.
    with Monitor() as seen:
        matrix = torch.ones((1024, 1024))
        for _ in range(10):
            torch.mm(matrix, matrix)
    reported = {"torch.get_num_threads()": torch.get_num_threads()}
    # The intra-op pool counts the calling thread.
    return torch.__version__, reported, {"intra-op": seen.started() + 1}


CALLS = {
    "torch": torch_call,
    "numba": numba_call,
    "polars": polars_call,
    "onnxruntime": onnxruntime_call,
    "cv2": cv2_call,
    "tokenizers": tokenizers_call,
    "tensorflow": tensorflow_call,
}

version, reported, pools = CALLS[LIBRARY]()
print(json.dumps({"library": LIBRARY, "version": version, "reported": reported, "pools": pools}))

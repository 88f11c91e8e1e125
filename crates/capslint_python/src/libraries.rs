//! What capslint knows about the Python numeric stack: canonical names, parallelism keywords, the
//! variables read at load time, and which libraries read them, and the ML libraries' own pools (one table per
//! library: [`ML_LIBRARIES`]). Sources: `research/python-knobs.md`, `docs/ml-stack.md`, each table's `source`.

pub use capslint_cpu::keywords::{THREAD_COUNT_KEYWORDS, is_thread_count_field, is_thread_count_keyword};

/// Rewrites re-exports and submodule paths to the canonical public name, so rules match one spelling.
/// `()` marks a call result: `multiprocessing.get_context().Pool` is a `multiprocessing.Pool`.
const CANONICAL_PREFIXES: &[(&str, &str)] = &[
    ("sklearn.externals.joblib.", "joblib."),
    ("sklearn.utils.parallel.Parallel", "joblib.Parallel"),
    ("sklearn.utils.parallel_backend", "joblib.parallel_backend"),
    ("sklearn.utils.parallel_config", "joblib.parallel_config"),
    ("sklearn.utils.fixes.parallel_backend", "joblib.parallel_backend"),
    ("joblib.parallel.", "joblib."),
    ("joblib.externals.loky.", "loky."),
    ("loky.process_executor.", "loky."),
    ("loky.reusable_executor.", "loky."),
    ("loky.backend.context.", "loky."),
    ("lightgbm.sklearn.", "lightgbm."),
    // optuna's LightGBM integration: `train`/`cv` and the tuners take LightGBM's params dict.
    ("optuna.integration.lightgbm.", "lightgbm."),
    ("optuna.integration._lightgbm_tuner.", "lightgbm."),
    ("optuna_integration.lightgbm.", "lightgbm."),
    ("optuna_integration._lightgbm_tuner.", "lightgbm."),
    ("lightgbm.engine.", "lightgbm."),
    ("lightgbm.basic.", "lightgbm."),
    ("xgboost.sklearn.", "xgboost."),
    ("xgboost.training.", "xgboost."),
    ("xgboost.core.", "xgboost."),
    ("catboost.core.", "catboost."),
    ("multiprocessing.get_context().", "multiprocessing."),
    ("multiprocessing.context.", "multiprocessing."),
    ("multiprocessing.pool.Pool", "multiprocessing.Pool"),
    // PyTorch's wrapper re-exports the standard module (`from multiprocessing import *`).
    ("torch.multiprocessing.", "multiprocessing."),
    ("concurrent.futures.process.", "concurrent.futures."),
    ("concurrent.futures.thread.", "concurrent.futures."),
    ("threadpoolctl.ThreadpoolController().limit", "threadpoolctl.threadpool_limits"),
    ("airflow.providers.cncf.kubernetes.operators.pod.", "airflow.KubernetesPodOperator."),
    ("airflow.providers.cncf.kubernetes.operators.kubernetes_pod.", "airflow.KubernetesPodOperator."),
    ("airflow.contrib.operators.kubernetes_pod_operator.", "airflow.KubernetesPodOperator."),
    ("airflow.providers.google.cloud.operators.kubernetes_engine.", "airflow.KubernetesPodOperator."),
    ("airflow.providers.amazon.aws.operators.eks.", "airflow.KubernetesPodOperator."),
    ("airflow.providers.microsoft.azure.operators.aks.", "airflow.KubernetesPodOperator."),
    ("astronomer.providers.cncf.kubernetes.operators.kubernetes_pod.", "airflow.KubernetesPodOperator."),
    ("astronomer.providers.google.cloud.operators.kubernetes_engine.", "airflow.KubernetesPodOperator."),
    ("airflow.sdk.task.kubernetes", "airflow.KubernetesPodOperator.KubernetesPodOperator"),
    ("airflow.decorators.task.kubernetes", "airflow.KubernetesPodOperator.KubernetesPodOperator"),
    ("psutil._pslinux.", "psutil."),
    ("onnxruntime.capi.onnxruntime_inference_collection.", "onnxruntime."),
    ("onnxruntime.capi._pybind_state.", "onnxruntime."),
    ("tensorflow.compat.v2.config.", "tensorflow.config."),
    ("spacy.load().", "spacy.Language."),
    ("spacy.blank().", "spacy.Language."),
    ("spacy.language.Language.", "spacy.Language."),
    ("optuna.study.", "optuna."),
    ("optuna.create_study().", "optuna.Study."),
    ("optuna.load_study().", "optuna.Study."),
    ("dask.distributed.deploy.local.", "dask.distributed."),
    ("dask.distributed.client.", "dask.distributed."),
    ("distributed.deploy.local.", "dask.distributed."),
    ("distributed.deploy.", "dask.distributed."),
    ("distributed.client.", "dask.distributed."),
    ("distributed.", "dask.distributed."),
    ("torch.utils.data.dataloader.", "torch.utils.data."),
];

/// The canonical spelling of a qualified name (see [`CANONICAL_PREFIXES`]).
pub fn canonical(qualified: &str) -> std::borrow::Cow<'_, str> {
    let package = qualified.split('.').next().unwrap_or(qualified);
    for (prefix, replacement) in canonical_prefixes_of(package) {
        if let Some(rest) = qualified.strip_prefix(prefix) {
            return std::borrow::Cow::Owned(format!("{replacement}{rest}"));
        }
    }
    std::borrow::Cow::Borrowed(qualified)
}

/// The [`CANONICAL_PREFIXES`] under the top-level package `package`, in their order: every prefix names
/// a package and a dot, so only those can start a name of that package.
fn canonical_prefixes_of(package: &str) -> &'static [(&'static str, &'static str)] {
    static BY_PACKAGE: std::sync::OnceLock<rustc_hash::FxHashMap<&str, Vec<(&str, &str)>>> = std::sync::OnceLock::new();
    let by_package = BY_PACKAGE.get_or_init(|| {
        let mut by_package: rustc_hash::FxHashMap<&str, Vec<(&str, &str)>> = rustc_hash::FxHashMap::default();
        for &(prefix, replacement) in CANONICAL_PREFIXES {
            let package = prefix.split('.').next().unwrap_or(prefix);
            by_package.entry(package).or_default().push((prefix, replacement));
        }
        by_package
    });
    by_package.get(package).map_or(&[], Vec::as_slice)
}

/// Keyword arguments that receive a worker or thread count (CAP105).
pub const PARALLELISM_KEYWORDS: &[&str] = &[
    "n_jobs",
    "thread_count",
    "nthread",
    "nthreads",
    "num_threads",
    "num_thread",
    "n_threads",
    "processes",
    "max_workers",
    "num_workers",
    // Hugging Face `datasets` (`Dataset.map`, `filter`, `load_dataset`): a pool of that many processes.
    "num_proc",
    "inner_max_num_threads",
    "limits",
];

/// Calls whose positional argument at the given index is a thread or worker count.
pub const POSITIONAL_PARALLELISM: &[(&str, usize)] = &[
    ("torch.set_num_threads", 0),
    ("torch.set_num_interop_threads", 0),
    ("numexpr.set_num_threads", 0),
    ("numba.set_num_threads", 0),
    ("mkl.set_num_threads", 0),
    ("faiss.omp_set_num_threads", 0),
    ("cv2.setNumThreads", 0),
    ("tensorflow.config.threading.set_intra_op_parallelism_threads", 0),
    ("tensorflow.config.threading.set_inter_op_parallelism_threads", 0),
    ("threadpoolctl.threadpool_limits", 0),
    ("concurrent.futures.ThreadPoolExecutor", 0),
    ("multiprocessing.pool.ThreadPool", 0),
    ("joblib.Parallel", 0),
    ("multiprocessing.Pool", 0),
    ("concurrent.futures.ProcessPoolExecutor", 0),
    ("loky.get_reusable_executor", 0),
    ("loky.ProcessPoolExecutor", 0),
];

/// Libraries whose estimators parallelise through joblib (`n_jobs` is a joblib worker count), so a
/// joblib cluster backend (`parallel_backend("dask")`) decides where their workers run. LightGBM's,
/// XGBoost's and CatBoost's thread counts are OpenMP threads of this process: not among them.
const JOBLIB_ESTIMATOR_LIBRARIES: &[&str] = &["sklearn", "imblearn", "skopt"];

/// Whether a canonical name belongs to a library whose estimators parallelise through joblib.
pub fn is_joblib_estimator_library(canonical_name: &str) -> bool {
    canonical_name.split('.').next().is_some_and(|package| JOBLIB_ESTIMATOR_LIBRARIES.contains(&package))
}

/// Calls that only compute a number and start nothing, so `n_jobs=-1` there is harmless.
pub fn is_query_call(canonical_name: &str) -> bool {
    let last = canonical_name.rsplit('.').next().unwrap_or(canonical_name);
    matches!(last, "effective_n_jobs" | "_effective_n_jobs" | "_get_n_jobs" | "cpu_count")
}

/// Functions that count the node's CPUs (or the affinity mask), not the cgroup quota.
pub const NODE_CPU_COUNT_CALLS: &[&str] =
    &["os.cpu_count", "os.process_cpu_count", "multiprocessing.cpu_count", "psutil.cpu_count"];

/// How a CPU-counting call reads in a message, and what it really counts.
pub fn describe_counter(call: &str) -> (&'static str, &'static str) {
    match call {
        "os.sched_getaffinity" => {
            ("len(os.sched_getaffinity(0))", "the CPUs of the affinity mask, which ignores the CFS quota")
        }
        "os.process_cpu_count" => {
            ("os.process_cpu_count()", "the CPUs of the affinity mask, which ignores the CFS quota")
        }
        "multiprocessing.cpu_count" => ("multiprocessing.cpu_count()", "the node's CPUs, not the pod's CPU limit"),
        "psutil.cpu_count" => ("psutil.cpu_count()", "the node's CPUs, not the pod's CPU limit"),
        _ => ("os.cpu_count()", "the node's CPUs, not the pod's CPU limit"),
    }
}

/// Functions that count CPUs with the cgroup quota taken into account.
pub const QUOTA_AWARE_CPU_COUNT_CALLS: &[&str] = &["joblib.cpu_count", "loky.cpu_count"];

/// The names of the process and thread pools the rules check, as a call or an import writes them
/// (`multiprocessing.Pool`, `cf.ProcessPoolExecutor`, `from multiprocessing.pool import ThreadPool`).
pub const POOL_CLASSES: &[&str] = &["Pool", "ThreadPool", "ProcessPoolExecutor", "ThreadPoolExecutor"];

/// Process pools and where their worker count goes (keyword name, positional index).
pub const PROCESS_POOLS: &[(&str, &str, usize)] = &[
    ("multiprocessing.Pool", "processes", 0),
    ("concurrent.futures.ProcessPoolExecutor", "max_workers", 0),
    ("loky.get_reusable_executor", "max_workers", 0),
    ("loky.ProcessPoolExecutor", "max_workers", 0),
];

/// The values of a pool-size knob that mean "every CPU of the node" (CAP101).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllCpus {
    /// No value does: each one is a count, "one", "off", or an error.
    Never,
    /// `0` ("the library picks": its node-sized default).
    Zero,
    /// Any negative value.
    Negative,
    /// `-1` only (other negative values are errors).
    MinusOne,
}

impl AllCpus {
    /// Whether `value` means every CPU.
    pub const fn matches(self, value: i64) -> bool {
        match self {
            AllCpus::Never => false,
            AllCpus::Zero => value == 0,
            AllCpus::Negative => value < 0,
            AllCpus::MinusOne => value == -1,
        }
    }
}

/// Where a knob takes its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobSite {
    /// An argument of a call of `callee`: its keyword, and its position when it can be passed by one.
    Argument {
        /// The keyword.
        keyword: &'static str,
        /// The positional index, if any.
        position: Option<usize>,
    },
    /// An attribute assigned on an object that a call of `callee` made (`options.intra_op_num_threads = 4`).
    Attribute(&'static str),
}

/// One knob by which an ML library sizes a pool of its own.
#[derive(Debug, Clone, Copy)]
pub struct PoolKnob {
    /// The canonical callee (for an attribute, the call that makes the object).
    pub callee: &'static str,
    /// Where the count goes.
    pub site: KnobSite,
    /// The values that mean every CPU of the node.
    pub all: AllCpus,
    /// What those values mean, for the finding's label.
    pub all_meaning: &'static str,
}

impl PoolKnob {
    /// The keyword or attribute name.
    pub const fn name(&self) -> &'static str {
        match self.site {
            KnobSite::Argument { keyword, .. } | KnobSite::Attribute(keyword) => keyword,
        }
    }
}

/// What capslint knows of one ML library's own pools: what sizes them by default, its knobs, and where that
/// was read.
#[derive(Debug, Clone, Copy)]
pub struct MlLibrary {
    /// The library's name.
    pub name: &'static str,
    /// What its default pool size is taken from.
    pub default_size: &'static str,
    /// The knobs that size its pools.
    pub knobs: &'static [PoolKnob],
    /// Where the facts come from.
    pub source: &'static str,
}

const fn argument(callee: &'static str, keyword: &'static str, position: Option<usize>) -> PoolKnob {
    PoolKnob { callee, site: KnobSite::Argument { keyword, position }, all: AllCpus::Never, all_meaning: "" }
}

const fn all_cpus(knob: PoolKnob, all: AllCpus, all_meaning: &'static str) -> PoolKnob {
    PoolKnob { all, all_meaning, ..knob }
}

/// PyTorch: both pools default to the physical cores, the quota ignored; `set_num_threads(n)` and
/// `set_num_interop_threads(n)` reject `n <= 0`; `DataLoader(num_workers=0)` loads in the main process.
pub const TORCH: MlLibrary = MlLibrary {
    name: "PyTorch",
    default_size: "the node's physical cores (intra-op: OMP_NUM_THREADS/MKL_NUM_THREADS when set; inter-op: nothing)",
    knobs: &[
        argument("torch.set_num_threads", "num_threads", Some(0)),
        argument("torch.set_num_interop_threads", "num_threads", Some(0)),
        argument("torch.utils.data.DataLoader", "num_workers", Some(5)),
    ],
    source: "aten/src/ATen/ParallelCommon.cpp, aten/src/ATen/ParallelThreadPoolNative.cpp, torch/utils/data/dataloader.py; docs/ml-stack.md",
};

/// TensorFlow: `0` means "the system picks": every CPU of the affinity mask (a negative inter-op value runs
/// ops in the caller's thread).
pub const TENSORFLOW: MlLibrary = MlLibrary {
    name: "TensorFlow",
    default_size: "the CPUs of the affinity mask, the quota ignored",
    knobs: &[
        all_cpus(
            argument("tensorflow.config.threading.set_intra_op_parallelism_threads", "num_threads", Some(0)),
            AllCpus::Zero,
            "TensorFlow treats 0 as \"the system picks\": every CPU of the affinity mask",
        ),
        all_cpus(
            argument("tensorflow.config.threading.set_inter_op_parallelism_threads", "num_threads", Some(0)),
            AllCpus::Zero,
            "TensorFlow treats 0 as \"the system picks\": every CPU of the affinity mask",
        ),
    ],
    source: "tensorflow/core/common_runtime/process_util.cc; docs/ml-stack.md (tensorflow-cpu 2.21.0 in a 1-CPU quota)",
};

/// OpenCV: `setNumThreads(0)` turns threading off; a negative value restores the default,
/// `cv::getNumberOfCPUs()`.
pub const OPENCV: MlLibrary = MlLibrary {
    name: "OpenCV",
    default_size: "`cv::getNumberOfCPUs()`: the affinity mask, and the quota only of the root cgroup",
    knobs: &[all_cpus(
        argument("cv2.setNumThreads", "nthreads", Some(0)),
        AllCpus::Negative,
        "OpenCV treats a negative value as \"the default\": `cv::getNumberOfCPUs()`, every CPU it sees",
    )],
    source: "modules/core/include/opencv2/core/utility.hpp `setNumThreads`; docs/ml-stack.md (OpenCV 5.0.0)",
};

/// numba: `set_num_threads(n)` accepts `1 <= n <= NUMBA_NUM_THREADS`.
pub const NUMBA: MlLibrary = MlLibrary {
    name: "numba",
    default_size: "the CPUs of the affinity mask (`NUMBA_NUM_THREADS` when set)",
    knobs: &[argument("numba.set_num_threads", "n", Some(0))],
    source: "numba/core/config.py, numba/np/ufunc/parallel.py; docs/ml-stack.md (numba 0.68.1)",
};

/// ONNX Runtime: `intra_op_num_threads = 0` (the default) is one thread per physical core; negative values
/// are rejected.
pub const ONNXRUNTIME: MlLibrary = MlLibrary {
    name: "ONNX Runtime",
    default_size: "the node's physical cores (`ORT_INTRA_OP_NUM_THREADS` when set, from 1.32)",
    knobs: &[
        all_cpus(
            PoolKnob {
                callee: "onnxruntime.SessionOptions",
                site: KnobSite::Attribute("intra_op_num_threads"),
                all: AllCpus::Never,
                all_meaning: "",
            },
            AllCpus::Zero,
            "ONNX Runtime treats 0 as its default: one thread per physical core of the node",
        ),
        all_cpus(
            PoolKnob {
                callee: "onnxruntime.SessionOptions",
                site: KnobSite::Attribute("inter_op_num_threads"),
                all: AllCpus::Never,
                all_meaning: "",
            },
            AllCpus::Zero,
            "ONNX Runtime treats 0 as its default: one thread per physical core of the node",
        ),
    ],
    source: "onnxruntime/core/session/inference_session.cc, onnxruntime/core/platform/env.h; docs/ml-stack.md (1.32.0)",
};

/// spaCy: `Language.pipe(n_process=-1)` starts `multiprocessing.cpu_count()` processes.
pub const SPACY: MlLibrary = MlLibrary {
    name: "spaCy",
    default_size: "one process (`n_process=1`)",
    knobs: &[all_cpus(
        argument("spacy.Language.pipe", "n_process", None),
        AllCpus::MinusOne,
        "spaCy treats -1 as `multiprocessing.cpu_count()`: one process per node core",
    )],
    source: "spacy/language.py `Language.pipe`",
};

/// Ray: `ray.init()` without `num_cpus` reads the cgroup quota (`_get_docker_cpus`), so only an explicit
/// count can be node-sized.
pub const RAY: MlLibrary = MlLibrary {
    name: "Ray",
    default_size: "the cgroup quota when there is one (`ray._private.utils.get_num_cpus`), else the node's CPUs",
    knobs: &[argument("ray.init", "num_cpus", None)],
    source: "python/ray/_private/utils.py `get_num_cpus`, `_get_docker_cpus`",
};

/// Dask: `LocalCluster()` sizes itself from `dask.system.CPU_COUNT`, which reads the affinity mask and the
/// cgroup quota, so only explicit counts can be node-sized. `Client(...)` hands them to `LocalCluster`.
pub const DASK: MlLibrary = MlLibrary {
    name: "Dask",
    default_size: "`dask.system.CPU_COUNT`: the affinity mask and the cgroup quota",
    knobs: &[
        argument("dask.distributed.LocalCluster", "n_workers", None),
        argument("dask.distributed.LocalCluster", "threads_per_worker", None),
        argument("dask.distributed.Client", "n_workers", None),
        argument("dask.distributed.Client", "threads_per_worker", None),
    ],
    source: "dask/system.py `cpu_count`; distributed/deploy/local.py `LocalCluster`",
};

/// optuna: `Study.optimize(n_jobs=-1)` runs `os.cpu_count()` trials at once in threads.
pub const OPTUNA: MlLibrary = MlLibrary {
    name: "optuna",
    default_size: "one trial at a time (`n_jobs=1`)",
    knobs: &[all_cpus(
        argument("optuna.Study.optimize", "n_jobs", None),
        AllCpus::MinusOne,
        "optuna treats -1 as `os.cpu_count()`: one trial thread per node core",
    )],
    source: "optuna/study/_optimize.py `_optimize`",
};

/// The ML libraries whose own pools capslint knows.
pub const ML_LIBRARIES: &[&MlLibrary] =
    &[&TORCH, &TENSORFLOW, &OPENCV, &NUMBA, &ONNXRUNTIME, &SPACY, &RAY, &DASK, &OPTUNA];

/// The knobs taken as arguments of a call of `callee`.
pub fn argument_knobs(callee: &str) -> impl Iterator<Item = &'static PoolKnob> + '_ {
    ML_LIBRARIES
        .iter()
        .flat_map(|library| library.knobs.iter())
        .filter(move |knob| knob.callee == callee && matches!(knob.site, KnobSite::Argument { .. }))
}

/// The knob set as attribute `attribute` of an object a call of `maker` made.
pub fn attribute_knob(maker: &str, attribute: &str) -> Option<&'static PoolKnob> {
    ML_LIBRARIES
        .iter()
        .flat_map(|library| library.knobs.iter())
        .find(|knob| knob.callee == maker && matches!(knob.site, KnobSite::Attribute(name) if name == attribute))
}

/// The keywords of the ML libraries' knobs taken by keyword only (a call with one may matter to the
/// rules; the callees of knobs also taken by position pass [`is_interesting_attribute`]).
fn ml_knob_keywords() -> impl Iterator<Item = &'static str> {
    ML_LIBRARIES.iter().flat_map(|library| library.knobs.iter()).filter_map(|knob| match knob.site {
        KnobSite::Argument { keyword, position: None } => Some(keyword),
        _ => None,
    })
}

/// Whether a call's keyword `keyword` may matter to a rule: a parallelism keyword
/// ([`PARALLELISM_KEYWORDS`]) or the keyword of an ML library's knob. One set lookup, as every keyword of
/// every call of a checked file is asked.
pub fn is_rule_keyword(keyword: &str) -> bool {
    static KEYWORDS: std::sync::OnceLock<rustc_hash::FxHashSet<&str>> = std::sync::OnceLock::new();
    KEYWORDS.get_or_init(|| PARALLELISM_KEYWORDS.iter().copied().chain(ml_knob_keywords()).collect()).contains(keyword)
}

/// Calls whose result is an object of a library capslint knows, followed by name: `so = ort.SessionOptions()`
/// makes `so.intra_op_num_threads` a knob, `nlp = spacy.load(...)` makes `nlp.pipe` spaCy's.
pub const OBJECT_MAKERS: &[&str] =
    &["onnxruntime.SessionOptions", "spacy.load", "spacy.blank", "optuna.create_study", "optuna.load_study"];

/// The joblib entry points checked by CAP101 and CAP103.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoblibCall {
    /// `joblib.Parallel(...)`.
    Parallel,
    /// `joblib.parallel_config(...)` (joblib >= 1.3; `n_jobs` defaults to unset).
    ParallelConfig,
    /// `joblib.parallel_backend(...)` (`n_jobs` defaults to -1).
    ParallelBackend,
}

impl JoblibCall {
    /// Classifies a canonical callee name.
    pub fn from_name(canonical_name: &str) -> Option<JoblibCall> {
        match canonical_name {
            "joblib.Parallel" => Some(JoblibCall::Parallel),
            "joblib.parallel_config" => Some(JoblibCall::ParallelConfig),
            "joblib.parallel_backend" => Some(JoblibCall::ParallelBackend),
            _ => None,
        }
    }

    /// The callee as users write it.
    pub const fn display(self) -> &'static str {
        match self {
            JoblibCall::Parallel => "Parallel",
            JoblibCall::ParallelConfig => "parallel_config",
            JoblibCall::ParallelBackend => "parallel_backend",
        }
    }
}

/// A gradient-boosting library whose models run OpenMP thread pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Booster {
    /// LightGBM.
    LightGbm,
    /// XGBoost.
    XgBoost,
    /// CatBoost.
    CatBoost,
}

/// How a booster entry point takes its thread count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoosterEntry {
    /// A scikit-learn style estimator or model class: keyword arguments (CatBoost also `params=`).
    Estimator,
    /// A native training function (`lightgbm.train(params, ...)`): a params dict, first positional.
    Train,
}

/// joblib backends that run on a cluster (`joblib.parallel_backend("ray", n_jobs=-1)`): their `n_jobs`
/// counts the cluster's workers, not this node's cores.
pub const JOBLIB_CLUSTER_BACKENDS: &[&str] = &["ray", "dask", "spark", "ipyparallel"];

/// Top-level packages that are libraries, never modules of the project being checked: an import of them
/// is not looked up among the project's files.
const KNOWN_PACKAGES: &[&str] = &[
    "numpy",
    "pandas",
    "scipy",
    "sklearn",
    "joblib",
    "loky",
    "threadpoolctl",
    "lightgbm",
    "xgboost",
    "catboost",
    "optuna",
    "optuna_integration",
    "torch",
    "tensorflow",
    "keras",
    "onnxruntime",
    "cv2",
    "numba",
    "spacy",
    "distributed",
    "jax",
    "ray",
    "dask",
    "pyspark",
    "airflow",
    "kubernetes",
    "pytest",
    "matplotlib",
    "seaborn",
    "tqdm",
    "yaml",
    "hydra",
    "omegaconf",
];

/// The standard library's top-level modules (CPython 3.11's `sys.stdlib_module_names`, without the
/// private ones and the few whose names a project may well give a module of its own: `code`, `profile`,
/// `site`, `this` and the tool packages), with `__future__`: an import of one is the interpreter's, never
/// looked up among the project's files, as a module of the project that shadowed it would break the
/// program's own imports of it.
#[rustfmt::skip]
const STANDARD_LIBRARY: &[&str] = &[
    "abc", "aifc", "argparse", "array", "ast", "asynchat", "asyncio", "asyncore", "atexit", "audioop", "base64",
    "bdb", "binascii", "bisect", "builtins", "bz2", "cProfile", "calendar", "cgi", "cgitb", "chunk", "cmath",
    "cmd", "codecs", "codeop", "collections", "colorsys", "compileall", "concurrent", "configparser",
    "contextlib", "contextvars", "copy", "copyreg", "crypt", "csv", "ctypes", "curses", "dataclasses",
    "datetime", "dbm", "decimal", "difflib", "dis", "distutils", "doctest", "email", "encodings", "ensurepip",
    "enum", "errno", "faulthandler", "fcntl", "filecmp", "fileinput", "fnmatch", "fractions", "ftplib",
    "functools", "gc", "genericpath", "getopt", "getpass", "gettext", "glob", "graphlib", "grp", "gzip",
    "hashlib", "heapq", "hmac", "html", "http", "imaplib", "imghdr", "imp", "importlib", "inspect", "io",
    "ipaddress", "itertools", "json", "keyword", "lib2to3", "linecache", "locale", "logging", "lzma", "mailbox",
    "mailcap", "marshal", "math", "mimetypes", "mmap", "modulefinder", "msilib", "msvcrt", "multiprocessing",
    "netrc", "nis", "nntplib", "nt", "ntpath", "nturl2path", "numbers", "opcode", "operator", "optparse", "os",
    "ossaudiodev", "pathlib", "pdb", "pickle", "pickletools", "pipes", "pkgutil", "platform", "plistlib",
    "poplib", "posix", "posixpath", "pprint", "pstats", "pty", "pwd", "py_compile", "pyclbr", "pydoc",
    "pyexpat", "queue", "quopri", "random", "re", "readline", "reprlib", "resource", "rlcompleter", "runpy",
    "sched", "secrets", "select", "selectors", "shelve", "shlex", "shutil", "signal", "smtpd", "smtplib",
    "sndhdr", "socket", "socketserver", "spwd", "sqlite3", "sre_compile", "sre_constants", "sre_parse", "ssl",
    "stat", "statistics", "string", "stringprep", "struct", "subprocess", "sunau", "symtable", "sys",
    "sysconfig", "syslog", "tabnanny", "tarfile", "telnetlib", "tempfile", "termios", "textwrap", "threading",
    "time", "timeit", "tkinter", "token", "tokenize", "tomllib", "trace", "traceback", "tracemalloc", "tty",
    "turtle", "types", "typing", "unicodedata", "unittest", "urllib", "uu", "uuid", "venv", "warnings", "wave",
    "weakref", "webbrowser", "winreg", "winsound", "wsgiref", "xdrlib", "xml", "xmlrpc", "zipapp", "zipfile",
    "zipimport", "zlib", "zoneinfo", "__future__",
];

/// Whether a canonical name is a callee some rule knows: a booster, joblib, a process pool, a CPU count, a
/// pod operator.
pub fn is_known_callee(canonical_name: &str) -> bool {
    booster_entry(canonical_name).is_some()
        || JoblibCall::from_name(canonical_name).is_some()
        || PROCESS_POOLS.iter().any(|(name, _, _)| *name == canonical_name)
        || NODE_CPU_COUNT_CALLS.contains(&canonical_name)
        || QUOTA_AWARE_CPU_COUNT_CALLS.contains(&canonical_name)
        || is_pod_operator(canonical_name)
}

/// Whether the top-level package `name` is a library (one capslint knows, or the standard library's)
/// rather than a module of the project.
pub fn is_known_package(name: &str) -> bool {
    static PACKAGES: std::sync::OnceLock<rustc_hash::FxHashSet<&str>> = std::sync::OnceLock::new();
    PACKAGES.get_or_init(|| KNOWN_PACKAGES.iter().chain(STANDARD_LIBRARY).copied().collect()).contains(name)
}

/// Whether a canonical callee is an Airflow pod operator: `KubernetesPodOperator`, the provider's
/// variants and subclasses that capslint knows (canonically `airflow.KubernetesPodOperator.<class>`).
pub fn is_pod_operator(callee: &str) -> bool {
    callee
        .strip_prefix("airflow.KubernetesPodOperator.")
        .is_some_and(|class| class.ends_with("PodOperator") || class.ends_with("PodOperatorAsync"))
}

/// Classifies a canonical callee as a booster entry point.
pub fn booster_entry(canonical_name: &str) -> Option<(Booster, BoosterEntry)> {
    let (module, name) = canonical_name.split_once('.')?;
    booster_member(module, name)
}

/// The GBDT entry point `name` of top-level module `module`, if it is one.
fn booster_member(module: &str, name: &str) -> Option<(Booster, BoosterEntry)> {
    match (module, name) {
        ("lightgbm", "LGBMModel" | "LGBMClassifier" | "LGBMRegressor" | "LGBMRanker") => {
            Some((Booster::LightGbm, BoosterEntry::Estimator))
        }
        ("lightgbm", "train" | "cv" | "LightGBMTuner" | "LightGBMTunerCV") => {
            Some((Booster::LightGbm, BoosterEntry::Train))
        }
        (
            "xgboost",
            "XGBModel" | "XGBClassifier" | "XGBRegressor" | "XGBRanker" | "XGBRFClassifier" | "XGBRFRegressor",
        ) => Some((Booster::XgBoost, BoosterEntry::Estimator)),
        ("xgboost", "train" | "cv") => Some((Booster::XgBoost, BoosterEntry::Train)),
        ("catboost", "CatBoost" | "CatBoostClassifier" | "CatBoostRegressor" | "CatBoostRanker") => {
            Some((Booster::CatBoost, BoosterEntry::Estimator))
        }
        _ => None,
    }
}

impl Booster {
    /// Whether a callee belongs to a library where any thread count `<= 0` means all cores
    /// (XGBoost everywhere; LightGBM natively and, for `0`, in its scikit-learn wrapper too).
    pub fn from_module(canonical_name: &str) -> Option<Booster> {
        match canonical_name.split('.').next()? {
            "lightgbm" => Some(Booster::LightGbm),
            "xgboost" => Some(Booster::XgBoost),
            "catboost" => Some(Booster::CatBoost),
            _ => None,
        }
    }

    /// The library's name.
    pub const fn name(self) -> &'static str {
        match self {
            Booster::LightGbm => "LightGBM",
            Booster::XgBoost => "XGBoost",
            Booster::CatBoost => "CatBoost",
        }
    }

    /// The keyword this library documents for the thread count.
    pub const fn thread_keyword(self, entry: BoosterEntry) -> &'static str {
        match (self, entry) {
            (Booster::LightGbm, BoosterEntry::Train) => "num_threads",
            (Booster::XgBoost, BoosterEntry::Train) => "nthread",
            (Booster::CatBoost, _) => "thread_count",
            (_, BoosterEntry::Estimator) => "n_jobs",
        }
    }

    /// What the library does when no thread count is given, precisely, by version.
    pub const fn default_behaviour(self, entry: BoosterEntry) -> &'static str {
        match (self, entry) {
            (Booster::LightGbm, BoosterEntry::Train) => {
                "native LightGBM without `num_threads` uses the OpenMP default: every core the process can \
                 see, the CFS quota ignored"
            }
            (Booster::LightGbm, BoosterEntry::Estimator) => {
                "LightGBM >= 4 sizes `n_jobs=None` from joblib's physical-core count, which reads the quota \
                 but rounds it up (LightGBM < 4 used the OpenMP default: every core)"
            }
            (Booster::XgBoost, _) => {
                "XGBoost uses every core OpenMP sees, reduced to the CFS quota only on XGBoost >= 1.6 \
                 (cgroup v1) / >= 2.1 (cgroup v2), and rounded up on v2"
            }
            (Booster::CatBoost, _) => {
                "CatBoost's default `thread_count=-1` uses the core count, reduced to the quota rounded to \
                 the nearest CPU where its cgroup support applies"
            }
        }
    }
}

/// Top-level packages that load a BLAS or OpenMP runtime when imported, and so read the OpenMP and BLAS
/// variables at that moment.
const BLAS_OR_OPENMP_LOADERS: &[&str] = &[
    "numpy",
    "scipy",
    "sklearn",
    "pandas",
    "lightgbm",
    "xgboost",
    "catboost",
    "torch",
    "tensorflow",
    "numexpr",
    "numba",
    "statsmodels",
    "faiss",
    "cv2",
    "mkl",
];

/// The top-level packages whose import reads `variable` once (empty if the variable is not load-time).
pub fn loaders_of(variable: &str) -> &'static [&'static str] {
    match variable {
        "NUMEXPR_NUM_THREADS" | "NUMEXPR_MAX_THREADS" => &["numexpr", "pandas"],
        "NUMBA_NUM_THREADS" => &["numba"],
        "POLARS_MAX_THREADS" => &["polars"],
        _ if capslint_cpu::thread_variables::is_read_at_load(variable) => BLAS_OR_OPENMP_LOADERS,
        _ => &[],
    }
}

/// What loading `package` starts that reads the variable, for the label at the import.
pub fn what_loads(package: &str) -> &'static str {
    match package {
        "numpy" | "scipy" => "loads OpenBLAS or MKL, which size their thread pool now",
        "sklearn" | "statsmodels" => "loads numpy/scipy (OpenBLAS or MKL) and OpenMP, which read their variables now",
        "pandas" => "loads numpy and numexpr, which read their variables now",
        "numexpr" => "sizes its thread pool now",
        "numba" => "reads NUMBA_NUM_THREADS now",
        "polars" => "reads POLARS_MAX_THREADS when its pool starts",
        _ => "loads OpenMP and BLAS, which read their variables now",
    }
}

/// Whether a call through an attribute named `attribute` (`jb.Parallel`, `ctx.Pool`, `os.environ.update`)
/// can be one that a rule checks by its callee. Calls through other attributes are not resolved at all,
/// which keeps the walk cheap on large files; calls of bare names are always resolved (they may be
/// aliases such as `from joblib import Parallel as P`).
pub fn is_interesting_attribute(attribute: &str) -> bool {
    matches!(
        attribute,
        "Parallel"
            | "parallel_config"
            | "parallel_backend"
            | "train"
            | "cv"
            | "get_reusable_executor"
            | "set_num_threads"
            | "set_num_interop_threads"
            | "omp_set_num_threads"
            | "setNumThreads"
            | "set_intra_op_parallelism_threads"
            | "set_inter_op_parallelism_threads"
            | "threadpool_limits"
            | "limit"
            | "setdefault"
            | "update"
            | "putenv"
            | "__setitem__"
            | "kubernetes"
            | "add_argument"
            | "option"
            | "Option"
            | "DEFINE_integer"
            | "InferenceSession"
            | "DataLoader"
    ) || POOL_CLASSES.contains(&attribute)
        || attribute.ends_with("PodOperator")
        || attribute.ends_with("PodOperatorAsync")
        || ["lightgbm", "xgboost", "catboost"].iter().any(|module| booster_member(module, attribute).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pool_a_rule_checks_goes_by_a_pool_class_name() {
        let callees = PROCESS_POOLS
            .iter()
            .map(|(callee, ..)| *callee)
            .chain(POSITIONAL_PARALLELISM.iter().map(|(callee, _)| *callee))
            .chain(CANONICAL_PREFIXES.iter().flat_map(|(from, to)| [*from, *to]));
        for callee in callees {
            let name = callee.rsplit('.').next().unwrap_or(callee);
            assert!(!name.contains("Pool") || POOL_CLASSES.contains(&name), "{callee}");
        }
    }

    #[test]
    fn a_rule_keyword_is_a_parallelism_keyword_or_a_knob_s() {
        for keyword in PARALLELISM_KEYWORDS.iter().copied().chain(ml_knob_keywords()) {
            assert!(is_rule_keyword(keyword), "{keyword}");
        }
        for keyword in ["n_job", "alpha", "verbose", "N_JOBS", ""] {
            assert!(!is_rule_keyword(keyword), "{keyword}");
        }
    }

    #[test]
    fn the_standard_library_and_known_libraries_are_never_the_project_s() {
        for package in ["warnings", "numbers", "abc", "__future__", "unittest", "os", "numpy", "sklearn"] {
            assert!(is_known_package(package), "{package}");
        }
        // Names a project may give its own modules, and project packages.
        for package in ["test", "tests", "code", "site", "profile", "utils", "forecasting", "warnings2"] {
            assert!(!is_known_package(package), "{package}");
        }
    }

    /// Canonical names are looked up by their package: every prefix must name one and a dot.
    #[test]
    fn every_canonical_prefix_names_a_package_and_is_found_by_it() {
        for (prefix, replacement) in CANONICAL_PREFIXES {
            assert!(prefix.contains('.'), "{prefix}");
            let name = format!("{prefix}x");
            let expected = format!("{replacement}x");
            // An earlier prefix of the same package may match first; it must rewrite the name too.
            assert_ne!(canonical(&name), std::borrow::Cow::Borrowed(name.as_str()), "{prefix} -> {expected}");
        }
        assert_eq!(canonical("sklearn.utils.parallel.Parallel"), "joblib.Parallel");
        assert_eq!(canonical("sklearnx.utils.parallel.Parallel"), "sklearnx.utils.parallel.Parallel");
    }

    /// Every callee a rule matches must pass the attribute filter, or the rule would never see it.
    #[test]
    fn every_checked_callee_passes_the_attribute_filter() {
        let mut callees: Vec<&str> = vec![
            "joblib.Parallel",
            "joblib.parallel_config",
            "joblib.parallel_backend",
            "lightgbm.LGBMClassifier",
            "lightgbm.train",
            "xgboost.XGBRFRegressor",
            "xgboost.cv",
            "catboost.CatBoostRanker",
            "os.environ.setdefault",
            "os.environ.update",
            "os.putenv",
            "airflow.KubernetesPodOperator.GKEStartPodOperator",
        ];
        callees.extend(POSITIONAL_PARALLELISM.iter().map(|(name, _)| *name));
        callees.extend(PROCESS_POOLS.iter().map(|(name, ..)| *name));
        for callee in callees {
            let attribute = callee.rsplit('.').next().unwrap();
            assert!(is_interesting_attribute(attribute), "`{callee}` would never be resolved");
        }
        // An ML knob taken by position is found only when its callee is resolved.
        for library in ML_LIBRARIES {
            for knob in library.knobs {
                if let KnobSite::Argument { position: Some(_), .. } = knob.site {
                    let attribute = knob.callee.rsplit('.').next().unwrap();
                    assert!(is_interesting_attribute(attribute), "`{}` would never be resolved", knob.callee);
                }
            }
        }
        for (_, canonical_name) in CANONICAL_PREFIXES {
            if let Some(attribute) = canonical_name.rsplit('.').next().filter(|name| !name.is_empty()) {
                assert!(
                    is_interesting_attribute(attribute) || canonical_name.ends_with('.'),
                    "`{canonical_name}` would never be resolved"
                );
            }
        }
    }
}

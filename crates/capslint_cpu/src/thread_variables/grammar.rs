//! How each library parses the text of a count variable, as found in its sources and checked by
//! running it (`docs/ml-stack.md`): the sentence capslint gives when it refuses a value that the
//! library would read differently from the plain decimal form.

/// A library's parser for one count variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grammar {
    /// OpenMP's list, one count per nesting level; libgomp reads each with `strtoul` after ASCII
    /// white space, LLVM's runtime rejects a sign.
    OpenMpList,
    /// OpenBLAS's `atoi`: the leading digits, 0 or less taken as unset.
    Atoi,
    /// BLIS's `strtol` on the leading digits.
    Strtol,
    /// MKL's own parser, which its documentation does not describe.
    MklUndocumented,
    /// MKL's domain list (`MKL_DOMAIN_ALL=2, MKL_DOMAIN_BLAS=1`).
    MklDomains,
    /// Apple Accelerate's parser, which its documentation does not describe.
    AccelerateUndocumented,
    /// Python's `int()` (numexpr, loky): Unicode spaces skipped, Unicode digits read, an error
    /// on anything else.
    PythonInt,
    /// numba's `int()` (`numba/core/config.py` `_readenv`): white space and a sign skipped; a value
    /// `int()` rejects (a list, a suffix, the empty string) gives a warning and the default (every CPU
    /// of the affinity mask); 0 or less fails at import.
    NumbaInt,
    /// CPython's own parser for `PYTHON_CPU_COUNT`.
    CpythonInt,
    /// polars: the value trimmed of white space, then Rust's `str::parse::<usize>` (a `+` sign
    /// accepted); 0 or anything else gives the default (every CPU).
    PolarsUsize,
    /// rayon's `str::parse::<usize>` without trimming (a `+` sign accepted); white space, lists,
    /// 0 and anything else give the default, one thread per CPU.
    Rayon,
    /// TensorFlow's `ReadInt64FromEnvVar` (`strings::safe_strto64`): white space around the digits
    /// skipped; 0 means the default (one per CPU); anything else is an error logged before the
    /// default is used.
    TensorFlowInt64,
    /// OpenCV's configuration parser (`std::stoull`, nothing allowed after the digits): any other
    /// text, the empty string included, makes the first parallel call raise `cv2.error`; 0 means the
    /// default (every CPU).
    OpenCvSize,
    /// ONNX Runtime's `ParseEnvironmentVariable<int>`: the whole text must be an integer (white space
    /// or a `+` sign raise at session creation); 0 or the empty string mean the default (one per
    /// physical core); a negative value raises.
    OnnxRuntimeInt,
}

impl Grammar {
    /// How the library reads a value, for the sentence that refuses one.
    pub fn describe(self) -> &'static str {
        match self {
            Self::OpenMpList => "libgomp's strtoul (white space skipped, one count per nesting level)",
            Self::Atoi => {
                "atoi, which reads the leading digits and takes 0 or less as unset (the next variable, then every CPU)"
            }
            Self::Strtol => "strtol on the leading digits",
            Self::MklUndocumented | Self::AccelerateUndocumented | Self::MklDomains => "a grammar it does not document",
            Self::PythonInt => "int(), which skips Unicode spaces and reads Unicode digits",
            Self::NumbaInt => {
                "int(), which skips white space and a sign; a value int() rejects gives a warning and one thread per CPU"
            }
            Self::CpythonInt => "its own integer parser",
            Self::PolarsUsize => "Rust's str::parse after trimming white space, and takes 0 as one thread per CPU",
            Self::Rayon => "Rust's str::parse, which rejects white space, and takes 0 as one thread per CPU",
            Self::TensorFlowInt64 => {
                "safe_strto64, which skips white space, takes 0 as one thread per CPU and logs an error on anything \
                 else before using the default"
            }
            Self::OpenCvSize => {
                "std::stoull with nothing after the digits: other text makes its first parallel call raise, 0 is \
                 one thread per CPU"
            }
            Self::OnnxRuntimeInt => {
                "its own integer parser, which raises at session creation on white space or a sign, and takes 0 as \
                 one thread per physical core"
            }
        }
    }
}

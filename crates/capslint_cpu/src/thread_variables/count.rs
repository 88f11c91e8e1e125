//! How the libraries read a count variable, and the one form capslint accepts.
//!
//! Each library parses its variables with its own grammar: libgomp skips ASCII white space and
//! takes `strtoul`'s optional sign, OpenBLAS and BLIS read the leading digits with `atoi`, LLVM's
//! OpenMP runtime (shipped with MKL and PyTorch) rejects a sign and fills empty list elements with
//! one thread per CPU, Python readers (numexpr, numba, loky) call `int()`, which skips Unicode
//! spaces, and polars uses Rust's `parse`. A value those grammars read differently is where a cap
//! that looks safe starts one thread per CPU. capslint therefore accepts exactly the form that
//! every reader reads alike, plain decimal digits (for `OMP_NUM_THREADS` and its device variants, a
//! comma-separated list of them, one per nesting level), and refuses anything else with the reason
//! the readers disagree.

use std::fmt::Write as _;

use super::grammar::Grammar;
pub use super::table::MKL_DOMAIN_NUM_THREADS;

/// More significant digits than this do not fit the C `int` that `atoi` readers return.
const MAX_DIGITS: usize = 9;

/// How one value of a count variable is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Count {
    /// Set to the empty string: every reader falls back to its default, as when unset.
    Empty,
    /// A count every reader reads alike: one entry, or one per nesting level for an OpenMP list.
    Levels(Vec<u64>),
    /// A value the readers reject or read differently; the sentence says how.
    Refused(String),
}

impl Count {
    /// The outermost count, when the value is read alike.
    pub fn first(&self) -> Option<u64> {
        match self {
            Self::Levels(levels) => levels.first().copied(),
            _ => None,
        }
    }
}

/// Whether `name` takes OpenMP's per-nesting-level list syntax (`4,2`).
pub fn takes_list(name: &str) -> bool {
    name == "OMP_NUM_THREADS" || name.starts_with("OMP_NUM_THREADS_")
}

/// Reads the value `raw` of the count variable `name`.
pub fn read(name: &str, raw: &str) -> Count {
    if raw.is_empty() {
        return Count::Empty;
    }
    if name == MKL_DOMAIN_NUM_THREADS {
        return mkl_domains(raw);
    }
    match levels(name, raw) {
        Ok(levels) => Count::Levels(levels),
        Err(deviation) => Count::Refused(describe(name, &deviation)),
    }
}

/// The value of a variable that is set to bytes that are not UTF-8.
pub fn not_utf8() -> Count {
    Count::Refused("the value is not UTF-8 text: capslint cannot tell how the libraries read it".to_owned())
}

/// How a value departs from the plain form.
#[derive(Debug)]
enum Deviation<'a> {
    NonAscii(char),
    OnlySpace,
    Space,
    List,
    EmptyElement,
    Sign(&'a str),
    Negative(&'a str),
    NotDecimal(&'a str),
    Zero(&'a str),
    TooLong(&'a str),
    LeadingZeros(&'a str, &'a str),
}

fn levels<'a>(name: &str, raw: &'a str) -> Result<Vec<u64>, Deviation<'a>> {
    if let Some(odd) = raw.chars().find(|c| !c.is_ascii()) {
        return Err(Deviation::NonAscii(odd));
    }
    let space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
    if raw.bytes().all(|b| space(&b)) {
        return Err(Deviation::OnlySpace);
    }
    if raw.bytes().any(|b| space(&b)) {
        return Err(Deviation::Space);
    }
    let elements: Vec<&str> = raw.split(',').collect();
    if elements.len() > 1 && !takes_list(name) {
        return Err(Deviation::List);
    }
    elements.into_iter().map(element_count).collect()
}

/// MKL's domain list: names (letters and `_`), separators (`=`, `,`, `;`, `:`, spaces) and counts.
/// Whatever the grammar's details, its digits are only counts, so the largest bounds every domain.
fn mkl_domains(raw: &str) -> Count {
    let allowed =
        |c: char| c.is_ascii_uppercase() || matches!(c, '_' | '=' | ',' | ';' | ':' | ' ' | '\t') || c.is_ascii_digit();
    if let Some(odd) = raw.chars().find(|&c| !allowed(c)) {
        return Count::Refused(format!(
            "{odd:?} is not part of MKL's domain syntax (`MKL_DOMAIN_ALL=2, MKL_DOMAIN_BLAS=1`)"
        ));
    }
    let mut most = None;
    for run in raw.split(|c: char| !c.is_ascii_digit()).filter(|run| !run.is_empty()) {
        match element_count(run) {
            Ok(count) => most = Some(most.map_or(count, |most: u64| most.max(count))),
            Err(deviation) => return Count::Refused(describe(MKL_DOMAIN_NUM_THREADS, &deviation)),
        }
    }
    match most {
        Some(most) => Count::Levels(vec![most]),
        None => Count::Refused("no count in MKL's domain list: MKL falls back to one thread per core".to_owned()),
    }
}

fn element_count(element: &str) -> Result<u64, Deviation<'_>> {
    match element.as_bytes().first() {
        None => return Err(Deviation::EmptyElement),
        Some(b'+') => return Err(Deviation::Sign(element)),
        Some(b'-') => return Err(Deviation::Negative(element)),
        Some(_) => {}
    }
    if !element.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Deviation::NotDecimal(element));
    }
    let significant = element.trim_start_matches('0');
    if significant.is_empty() {
        return Err(Deviation::Zero(element));
    }
    if significant.len() > MAX_DIGITS {
        return Err(Deviation::TooLong(element));
    }
    if significant.len() != element.len() {
        return Err(Deviation::LeadingZeros(element, significant));
    }
    significant.parse::<u64>().map_err(|_| Deviation::TooLong(element))
}

/// Who reads a variable other than an OpenMP count, and with what grammar (from the table; a
/// variable it lacks is read as Python's `int()` reads it).
fn reader(name: &str) -> (&'static str, &'static str) {
    match super::table::find(name) {
        Some(variable) => (variable.library, variable.grammar.unwrap_or(Grammar::PythonInt).describe()),
        None => ("its Python reader", Grammar::PythonInt.describe()),
    }
}

/// The sentence for a refused value: what is wrong, and how the readers of `name` take it.
fn describe(name: &str, deviation: &Deviation<'_>) -> String {
    if takes_list(name) {
        return describe_openmp(deviation);
    }
    let what = match deviation {
        Deviation::NonAscii(odd) => format!("it contains the non-ASCII character U+{:04X}", u32::from(*odd)),
        Deviation::OnlySpace => "it is only white space".to_owned(),
        Deviation::Space => "it contains white space".to_owned(),
        Deviation::List => "a comma-separated list is OMP_NUM_THREADS's syntax".to_owned(),
        Deviation::EmptyElement => "it has an empty element".to_owned(),
        Deviation::Sign(element) => format!("{element:?} carries a sign"),
        Deviation::Negative(element) => format!("{element:?} is negative"),
        Deviation::NotDecimal(element) => format!("{element:?} is not a decimal count"),
        Deviation::Zero(element) => format!("{element:?} is zero"),
        Deviation::TooLong(element) => format!("{element:?} does not fit a C int"),
        Deviation::LeadingZeros(element, significant) => format!("{element:?} has leading zeros (write {significant})"),
    };
    let (library, grammar) = reader(name);
    format!(
        "{what}: capslint accepts only plain decimal digits, the form every reader reads alike; {library} reads {name} with {grammar}"
    )
}

/// The sentence for a refused OpenMP count, read by libgomp, LLVM's OpenMP runtime and, as a
/// fallback, OpenBLAS.
fn describe_openmp(deviation: &Deviation<'_>) -> String {
    match deviation {
        Deviation::NonAscii(odd) => format!(
            "it contains the non-ASCII character U+{:04X}: libgomp and OpenBLAS do not skip it, so they reject the \
             value or read 0 and start one thread per CPU, while Python's int() skips Unicode spaces",
            u32::from(*odd)
        ),
        Deviation::OnlySpace => "it is only white space: libgomp rejects it and starts one thread per CPU".to_owned(),
        Deviation::Space => "it contains white space: libgomp and OpenBLAS skip it, LLVM's OpenMP runtime (MKL's, \
                             PyTorch's) skips only spaces and tabs and rejects a space inside a list"
            .to_owned(),
        Deviation::List => "a list".to_owned(),
        Deviation::EmptyElement => "an element of the list is empty: libgomp rejects the list and LLVM's OpenMP \
                                    runtime fills the element with one thread per CPU"
            .to_owned(),
        Deviation::Sign(element) => format!(
            "{element:?} carries a sign: libgomp and OpenBLAS read it as {}, LLVM's OpenMP runtime (MKL's, \
             PyTorch's) rejects it and starts one thread per CPU",
            leading_digits(&element[1..])
        ),
        Deviation::Negative(element) => format!(
            "{element:?} is negative: libgomp rejects it and OpenBLAS reads it as unset, so both start one thread \
             per CPU"
        ),
        Deviation::NotDecimal(element) => {
            let mut why =
                format!("{element:?} is not a decimal count: libgomp rejects it and starts one thread per CPU");
            let leading = leading_digits(element);
            if !leading.is_empty() {
                let _ = write!(why, ", while OpenBLAS's atoi reads its leading digits ({leading})");
            }
            why
        }
        Deviation::Zero(element) => format!(
            "{element:?} is zero: libgomp rejects it and OpenBLAS reads it as unset, so both start one thread per CPU"
        ),
        Deviation::TooLong(element) => format!(
            "{element:?} does not fit a C int: libgomp rejects it and starts one thread per CPU, OpenBLAS's atoi \
             wraps it around"
        ),
        Deviation::LeadingZeros(element, significant) => format!(
            "{element:?} has leading zeros: write {significant}, the form every reader takes as decimal (a C reader \
             with base 0 takes a leading 0 as octal)"
        ),
    }
}

/// The leading ASCII digits of `text`, as `atoi` would read them (without the sign).
fn leading_digits(text: &str) -> &str {
    let end = text.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(text.len());
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(name: &str, raw: &str) -> String {
        match read(name, raw) {
            Count::Refused(why) => why,
            other => panic!("{name}={raw:?} was read as {other:?}"),
        }
    }

    #[test]
    fn plain_digits_are_read_alike() {
        assert_eq!(read("MKL_NUM_THREADS", "2"), Count::Levels(vec![2]));
        assert_eq!(read("OMP_NUM_THREADS", "4,2,1"), Count::Levels(vec![4, 2, 1]));
        assert_eq!(read("OMP_NUM_THREADS_ALL", "3,1"), Count::Levels(vec![3, 1]));
        assert_eq!(read("LOKY_MAX_CPU_COUNT", "999999999"), Count::Levels(vec![999_999_999]));
        assert_eq!(read("OMP_NUM_THREADS", ""), Count::Empty);
    }

    #[test]
    fn every_form_the_readers_disagree_on_is_refused_with_its_reason() {
        let cases = [
            ("OMP_NUM_THREADS", "\u{a0}1", "U+00A0"),
            ("OMP_NUM_THREADS", "\u{2003}1", "U+2003"),
            ("OMP_NUM_THREADS", "1\u{3000}", "U+3000"),
            ("OMP_NUM_THREADS", "\u{ff11}", "U+FF11"),
            ("OMP_NUM_THREADS", " 1", "white space"),
            ("OMP_NUM_THREADS", "1\n", "white space"),
            ("OMP_NUM_THREADS", "1\x0b", "white space"),
            ("OMP_NUM_THREADS", "1, 2", "white space"),
            ("OMP_NUM_THREADS", "   ", "only white space"),
            ("OMP_NUM_THREADS", "+1", "sign"),
            ("OMP_NUM_THREADS", "-1", "negative"),
            ("OMP_NUM_THREADS", "0", "zero"),
            ("OMP_NUM_THREADS", "00", "zero"),
            ("OMP_NUM_THREADS", "1,0", "zero"),
            ("OMP_NUM_THREADS", "01", "leading zeros"),
            ("OMP_NUM_THREADS", "0x10", "not a decimal count"),
            ("OMP_NUM_THREADS", "1e3", "leading digits (1)"),
            ("OMP_NUM_THREADS", "2.0", "leading digits (2)"),
            ("OMP_NUM_THREADS", "four", "not a decimal count"),
            ("OMP_NUM_THREADS", "1000000000", "C int"),
            ("OMP_NUM_THREADS", "99999999999999999999999", "C int"),
            ("OMP_NUM_THREADS", ",4", "empty"),
            ("OMP_NUM_THREADS", "4,", "empty"),
            ("OMP_NUM_THREADS", "4,,2", "empty"),
            ("OPENBLAS_NUM_THREADS", "1,64", "OpenBLAS reads OPENBLAS_NUM_THREADS with atoi"),
            ("OPENBLAS_NUM_THREADS", "0", "takes 0 or less as unset"),
            ("MKL_NUM_THREADS", "1;2", "not a decimal count"),
            ("LOKY_MAX_CPU_COUNT", "\u{a0}2", "int(), which skips Unicode spaces"),
            ("POLARS_MAX_THREADS", " 2", "polars reads POLARS_MAX_THREADS with Rust's str::parse after trimming"),
            (
                "RAYON_NUM_THREADS",
                "2 ",
                "rayon reads RAYON_NUM_THREADS with Rust's str::parse, which rejects white space",
            ),
            ("RAYON_NUM_THREADS", "0", "takes 0 as one thread per CPU"),
            ("OPENCV_FOR_THREADS_NUM", "2,3", "OpenCV reads OPENCV_FOR_THREADS_NUM with std::stoull"),
            ("ORT_INTRA_OP_NUM_THREADS", "+2", "raises at session creation"),
            ("TF_NUM_INTRAOP_THREADS", "abc", "TensorFlow reads TF_NUM_INTRAOP_THREADS with safe_strto64"),
            ("NUMBA_NUM_THREADS", "-1", "numba reads NUMBA_NUM_THREADS with int()"),
        ];
        for (name, raw, says) in cases {
            let why = refused(name, raw);
            assert!(why.contains(says), "{name}={raw:?}: {why}");
        }
        assert!(matches!(not_utf8(), Count::Refused(_)));
    }

    #[test]
    fn mkl_domains_count_their_largest_number() {
        assert_eq!(read(MKL_DOMAIN_NUM_THREADS, "MKL_DOMAIN_ALL=1, MKL_DOMAIN_BLAS=4"), Count::Levels(vec![4]));
        assert_eq!(read(MKL_DOMAIN_NUM_THREADS, "MKL_BLAS 2;MKL_FFT:1"), Count::Levels(vec![2]));
        for bad in ["MKL_DOMAIN_BLAS=0", "MKL_DOMAIN_BLAS=+2", "mkl_domain_all=2", "MKL_DOMAIN_ALL", "MKL_ALL=02"] {
            assert!(matches!(read(MKL_DOMAIN_NUM_THREADS, bad), Count::Refused(_)), "{bad:?}");
        }
    }

    #[test]
    fn only_openmp_counts_take_lists() {
        assert!(takes_list("OMP_NUM_THREADS") && takes_list("OMP_NUM_THREADS_DEV_0"));
        assert!(!takes_list("OPENBLAS_NUM_THREADS") && !takes_list("OMP_THREAD_LIMIT"));
        assert_eq!(read("OMP_NUM_THREADS", "1,64").first(), Some(1));
        assert_eq!(read("OMP_NUM_THREADS", "x").first(), None);
    }
}

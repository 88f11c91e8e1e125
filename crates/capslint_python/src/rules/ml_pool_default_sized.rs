//! CAP110 ml-pool-default-sized: an ML library's own pool left at its default size, which the library
//! takes from the node rather than the pod's CPU limit. Today: an ONNX Runtime `InferenceSession` without
//! session options, or whose `SessionOptions` (made in the call or bound to a name and followed) never set
//! `intra_op_num_threads` (nor `inter_op_num_threads` in the parallel execution mode). Ray and Dask are not
//! reported: their defaults read the cgroup quota (see `libraries::RAY`, `libraries::DASK`).

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

use crate::checker::Checker;
use crate::semantic::{BindingKind, ObjectUseKind};
use crate::value::At;
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// The canonical callee of an ONNX Runtime session.
const INFERENCE_SESSION: &str = "onnxruntime.InferenceSession";
/// The canonical callee that makes session options.
const SESSION_OPTIONS: &str = "onnxruntime.SessionOptions";
/// The variables ONNX Runtime (>= 1.32) reads when the options leave the pool sizes at 0.
const ORT_VARIABLES: [&str; 2] = ["ORT_INTRA_OP_NUM_THREADS", "ORT_INTER_OP_NUM_THREADS"];

/// What to do about the pool that `attribute` sizes.
fn help(attribute: &str) -> String {
    format!(
        "set `{attribute}` on the session options to a count derived from the pod's CPU limit (e.g. \
         `options.{attribute} = int(os.environ[\"OMP_NUM_THREADS\"])`) and pass them as `sess_options`; ONNX \
         Runtime >= 1.32 also reads `{}`, which `capslint exec` sets",
        if attribute == "intra_op_num_threads" { ORT_VARIABLES[0] } else { ORT_VARIABLES[1] }
    )
}

/// What the session options of a call leave at the default.
enum Options {
    /// No options, or `None`: every pool at its default.
    Absent(TextRange),
    /// Options made in the call or bound to a name: what they never set.
    Made {
        /// Where they are made.
        made_at: TextRange,
        /// Whether `intra_op_num_threads` is set.
        intra: bool,
        /// Whether `inter_op_num_threads` is set.
        inter: bool,
        /// Whether `execution_mode` is set to `ORT_PARALLEL`.
        parallel: bool,
    },
    /// Anything capslint cannot follow: a parameter, a call's result, options handed to a function.
    Unknown,
}

/// `ort.InferenceSession(path)` and `ort.InferenceSession(path, sess_options=options)` where `options` never
/// sets the thread counts.
pub fn call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall, callee: Option<&str>) {
    if !checker.enabled(Rule::MlPoolDefaultSized) || callee != Some(INFERENCE_SESSION) {
        return;
    }
    // The environment caps the default pools: a file that names the variables sets them (or reads them).
    if ORT_VARIABLES.iter().any(|variable| checker.mentions_quoted_key(variable)) {
        return;
    }
    let options = session_options(checker, call);
    let display = checker.callee_display(call);
    let (range, label, made_at, missing) = match options {
        Options::Unknown => return,
        Options::Absent(range) => {
            (range, "no `sess_options`: ONNX Runtime's default pool".to_string(), None, "intra_op_num_threads")
        }
        Options::Made { made_at, intra, inter, parallel } => {
            let missing = if !intra {
                "intra_op_num_threads"
            } else if parallel && !inter {
                "inter_op_num_threads"
            } else {
                return;
            };
            let range = call_argument_range(call).unwrap_or(call.func.range());
            (range, format!("these options never set `{missing}`"), Some(made_at), missing)
        }
    };
    let pool = if missing == "intra_op_num_threads" { "intra-op" } else { "inter-op (parallel execution mode)" };
    let mut finding = Finding::new(
        Rule::MlPoolDefaultSized,
        range,
        format!(
            "`{display}(...)` runs its {pool} pool at ONNX Runtime's default size: one thread per physical core \
             of the node, not the pod's CPU limit"
        ),
    )
    .label(label)
    .help(help(missing));
    if let Some(made_at) = made_at.filter(|made_at| !range.contains_range(*made_at)) {
        finding = checker.point_to(finding, made_at, "session options made here");
    }
    checker.report(finding);
}

/// The range of the `sess_options` argument as written, if written.
fn call_argument_range(call: &ast::ExprCall) -> Option<TextRange> {
    call.arguments
        .find_keyword("sess_options")
        .map(Ranged::range)
        .or_else(|| call.arguments.args.get(1).map(Ranged::range))
}

/// What the call's session options leave at the default.
fn session_options<'a>(checker: &Checker<'_, 'a>, call: &'a ast::ExprCall) -> Options {
    let arguments = checker.arguments(call);
    if call.arguments.args.iter().any(Expr::is_starred_expr) {
        return Options::Unknown;
    }
    let Some(argument) = arguments.argument("sess_options", Some(1)) else {
        return if arguments.is_open() { Options::Unknown } else { Options::Absent(call.func.range()) };
    };
    let Some((expr, at)) = argument.expr() else { return Options::Unknown };
    match expr {
        Expr::NoneLiteral(none) => Options::Absent(none.range()),
        Expr::Call(made) if is_session_options(checker, made, at) => {
            Options::Made { made_at: made.range(), intra: false, inter: false, parallel: false }
        }
        Expr::Name(name) => followed(checker, name, at, call),
        _ => Options::Unknown,
    }
}

/// Whether `made` makes ONNX Runtime session options.
fn is_session_options<'a>(checker: &Checker<'_, 'a>, made: &'a ast::ExprCall, at: At) -> bool {
    checker.qualified_name_at(&made.func, at).as_deref() == Some(SESSION_OPTIONS)
}

/// Options bound to `name` once, from `SessionOptions()`, and what is set on them before the session is
/// made (in another scope that sees the same name: at any time). Handed to any call before, they are unknown.
fn followed<'a>(checker: &Checker<'_, 'a>, name: &'a ast::ExprName, at: At, call: &ast::ExprCall) -> Options {
    let model = checker.resolver.model();
    let Some((scope, [binding])) = model.reaching_bindings(name.id.as_str(), at.scope, at.offset) else {
        return Options::Unknown;
    };
    let BindingKind::Assign(Expr::Call(made)) = binding.kind else { return Options::Unknown };
    if !is_session_options(checker, made, At { scope, offset: binding.range.start() }) {
        return Options::Unknown;
    }
    let uses = model.object_uses(name.id.as_str());
    // Reading the uses is paid for, so many sessions over many uses stay within the file's budget.
    if !checker.resolver.spend_walk(uses.len() as u64, call.start()) {
        return Options::Unknown;
    }
    let (mut intra, mut inter, mut parallel) = (false, false, false);
    for used in uses {
        let counts = if used.scope == scope {
            binding.range.start() < used.offset && used.offset < call.start()
        } else {
            // Another scope (a helper, a closure) that sees this name: it may run at any time. One that binds
            // the name itself holds another object.
            model.reaching_bindings(name.id.as_str(), used.scope, used.offset).is_some_and(|(found, _)| found == scope)
        };
        if !counts {
            continue;
        }
        match used.kind {
            // Another session reads the options and changes nothing.
            ObjectUseKind::Passed(other)
                if checker.qualified_name_at(&other.func, At { scope: used.scope, offset: used.offset }).as_deref()
                    == Some(INFERENCE_SESSION) => {}
            ObjectUseKind::Passed(_) => return Options::Unknown,
            ObjectUseKind::SetAttribute { attribute, value } => match attribute {
                "intra_op_num_threads" => intra = true,
                "inter_op_num_threads" => inter = true,
                "execution_mode" => {
                    let at = At { scope: used.scope, offset: used.offset };
                    parallel |= checker.qualified_name_at(value, at).is_some_and(|mode| mode.ends_with("ORT_PARALLEL"));
                }
                _ => {}
            },
        }
    }
    Options::Made { made_at: made.range(), intra, inter, parallel }
}

//! CAP106 late-thread-cap: a variable that a native library reads once, when it loads, set after the
//! module imported that library. Module execution order decides: module-level code runs top to bottom,
//! a module-level function runs where the module calls it (or after every module-level import when it
//! is never called at module level), and imports under `if TYPE_CHECKING:` never run.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::checker::{Checker, HeldBack};
use crate::env::EnvWrite;
use crate::libraries::{loaders_of, what_loads};
use crate::semantic::{ScopeId, ScopeKind};
use capslint_diagnostics::diagnostic::Finding;
use capslint_diagnostics::registry::Rule;

/// The calls that start processes running a fresh interpreter, which reads the thread variables again
/// when it loads the libraries: `subprocess`, `os.exec*` and `os.spawn*`, PyTorch's `spawn` and
/// `start_processes` (its wrapper of `multiprocessing`, read as that module), and `torchrun`'s entry point.
const FRESH_INTERPRETER_LAUNCHES: &[&str] = &[
    "subprocess.run",
    "subprocess.Popen",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "os.system",
    "os.popen",
    "os.execv",
    "os.execve",
    "os.execvp",
    "os.execvpe",
    "os.execl",
    "os.execle",
    "os.execlp",
    "os.execlpe",
    "os.spawnv",
    "os.spawnve",
    "os.spawnvp",
    "os.spawnvpe",
    "os.spawnl",
    "os.spawnle",
    "os.spawnlp",
    "os.spawnlpe",
    "os.posix_spawn",
    "os.posix_spawnp",
    "multiprocessing.spawn",
    "multiprocessing.start_processes",
    "torch.distributed.run.main",
    "torch.distributed.run.run",
];

/// The `multiprocessing` calls that choose a start method, which start fresh interpreters with
/// `"spawn"` and `"forkserver"` (a forked child keeps the libraries its parent loaded).
const START_METHOD_CALLS: &[&str] = &["multiprocessing.get_context", "multiprocessing.set_start_method"];

/// Whether `call` starts processes that run a fresh interpreter, or makes the processes started after it
/// do so (`multiprocessing.set_start_method("spawn")`).
fn starts_fresh_interpreters<'a>(checker: &Checker<'_, 'a>, call: &'a ast::ExprCall) -> bool {
    let Some(callee) = checker.callee(call) else { return false };
    if FRESH_INTERPRETER_LAUNCHES.contains(&callee.as_str()) {
        return true;
    }
    START_METHOD_CALLS.contains(&callee.as_str())
        && call
            .arguments
            .find_argument_value("method", 0)
            .is_some_and(|method| matches!(method, Expr::StringLiteral(text) if matches!(text.value.to_str(), "spawn" | "forkserver")))
}

/// Drops the held-back findings whose variable `call` hands to fresh interpreters: a call after the
/// write, in the same function (or both at module level).
pub fn call<'a>(checker: &mut Checker<'_, 'a>, call: &'a ast::ExprCall) {
    let function = checker.resolver.model().enclosing_function(checker.scope);
    let start = call.start();
    if !checker.late_caps.iter().any(|held| held.function == function && held.offset < start) {
        return;
    }
    if starts_fresh_interpreters(checker, call) {
        checker.late_caps.retain(|held| !(held.function == function && held.offset < start));
    }
}

/// When the write runs, as an offset into module-level execution, and the function scope it runs in.
fn execution_point(checker: &Checker<'_, '_>, write: &EnvWrite<'_>) -> (TextSize, Option<ScopeId>) {
    let model = checker.resolver.model();
    let function = model.enclosing_function(checker.scope);
    match checker.enclosing_module_function() {
        None => (write.range.start(), None),
        Some(Some(name)) => {
            let first_call = model.module_calls(name).iter().copied().min();
            (first_call.unwrap_or(TextSize::from(u32::MAX)), function)
        }
        Some(None) => (TextSize::from(u32::MAX), function),
    }
}

/// Whether an import in `scope` runs as part of module execution (module level or a class body).
fn runs_at_module_level(checker: &Checker<'_, '_>, mut scope: ScopeId) -> bool {
    let model = checker.resolver.model();
    loop {
        match model.scope_kind(scope) {
            ScopeKind::Module => return true,
            ScopeKind::Class => match model.parent(scope) {
                Some(parent) => scope = parent,
                None => return true,
            },
            _ => return false,
        }
    }
}

/// Checks one environment write.
pub fn env_write(checker: &mut Checker<'_, '_>, write: &EnvWrite<'_>) {
    if !checker.enabled(Rule::LateThreadCap) {
        return;
    }
    let (point, function) = execution_point(checker, write);
    let model = checker.resolver.model();
    for (variable, _) in &write.variables {
        let loaders = loaders_of(variable);
        if loaders.is_empty() {
            continue;
        }
        let earlier = model.imports().iter().find(|import| {
            if import.type_checking {
                return false;
            }
            let package = import.module.split('.').next().unwrap_or_default();
            if !loaders.contains(&package) {
                return false;
            }
            let module_level = runs_at_module_level(checker, import.scope) && import.range.start() < point;
            let same_function = function.is_some_and(|function| {
                model.enclosing_function(import.scope) == Some(function) && import.range.start() < write.range.start()
            });
            module_level || same_function
        });
        let Some(import) = earlier else { continue };
        let package = import.module.split('.').next().unwrap_or_default().to_string();
        let import_range: TextRange = import.range;
        let finding = Finding::new(
            Rule::LateThreadCap,
            write.range,
            format!("`{variable}` is set after `{package}` was imported: the library read it when it loaded, so this has no effect"),
        )
        .label(format!("too late for `{package}`"))
        .help("set the thread caps before any import (in the entrypoint, e.g. `capslint exec`, or at the very top of the module), or use `threadpoolctl.threadpool_limits` at run time");
        let finding =
            checker.point_to(finding, import_range, &format!("`{package}` imported here {}", what_loads(&package)));
        let function = model.enclosing_function(checker.scope);
        checker.late_caps.push(HeldBack { finding, function, offset: write.range.start() });
        // One finding per write: the first late variable names the problem.
        break;
    }
}

//! Python files built from the fuzz input as a grammar of chains, the shapes that blow up analyses:
//! expression chains (operators, brackets, lambdas, attribute and call chains), splat and merge chains of
//! dicts, rebinding chains with dict mutations, min/max chains over `os.cpu_count()`, many findings in one
//! file, long lines. Every file must be answered (findings or CAP003), never with an internal error, and
//! the resolver's steps are capped by the per-file budget, so no input hangs.
#![no_main]

#[path = "common.rs"]
mod common;

use capslint_workspace::discover::FileKind;
use libfuzzer_sys::fuzz_target;

/// One chain of the grammar: its kind and length come from two input bytes.
fn chain(kind: u8, length: usize, out: &mut String, names: &mut usize) {
    let name = |index: usize| format!("v{index}");
    let previous = name(*names);
    match kind % 12 {
        // Expression chains, one statement.
        0 => out.push_str(&format!("x = {}1\n", "-".repeat(length))),
        1 => out.push_str(&format!("x = {}1\n", "1 + ".repeat(length))),
        2 => out.push_str(&format!("x = {}1{}\n", "(".repeat(length), ")".repeat(length))),
        3 => out.push_str(&format!("x = {}1\n", "lambda a, b=1: ".repeat(length))),
        4 => out.push_str(&format!("x = a{}\n", ".b(1)[2]".repeat(length))),
        5 => out.push_str(&format!("x = {}0{}\n", "f'{".repeat(length), "}'".repeat(length))),
        // Definition chains: each level uses the one before several times.
        6 | 7 | 8 | 9 => {
            let forms = [
                "max({p}, {p}, {p}, {p})",
                "{{**{p}, **{p}, 'n_jobs': {p}.get('n_jobs')}}",
                "({p} | {p}) if {p} else dict({p}, **{p}).copy()",
                "min({p}, int({p})) + {p}",
            ];
            let form = forms[usize::from(kind % 12 - 6)];
            out.push_str(&format!("{previous} = {{'n_jobs': os.cpu_count()}} if c else os.cpu_count()\n"));
            for _ in 0..length {
                *names += 1;
                let current = name(*names);
                let before = name(*names - 1);
                out.push_str(&format!("{current} = {}\n", form.replace("{p}", &before)));
            }
            let last = name(*names);
            out.push_str(&format!("Pool({last})\nlgb.train({last}, d)\nParallel(n_jobs={last})\n"));
            *names += 1;
        }
        // Rebinding chains with dict mutations.
        10 => {
            out.push_str(&format!("{previous} = {{'num_threads': 2}}\n"));
            for _ in 0..length {
                out.push_str(&format!(
                    "{previous} = {previous}\n{previous}['n_jobs'] = -1\n{previous}.update({previous})\n"
                ));
            }
            out.push_str(&format!("lgb.train({previous}, d)\n"));
        }
        // Many findings, on one long line.
        _ => out.push_str(&format!("{}\n", "Parallel(n_jobs=-1); Pool(); ".repeat(length))),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut text = String::from("import os\nimport lightgbm as lgb\nfrom joblib import Parallel\nfrom multiprocessing import Pool\n");
    let mut names = 0;
    for pair in data.chunks(2).take(64) {
        let length = usize::from(*pair.get(1).unwrap_or(&1)) * 64 + 1;
        chain(pair[0], length, &mut text, &mut names);
    }
    common::lint(text.as_bytes(), "shapes.py", FileKind::Python);
});

//! The limits of value resolution (`capslint_python::limits`): a chain within a limit resolves and fires
//! the rule as before, and a chain just beyond it is CAP003, naming the limit and where the chain was cut,
//! never silence. Each chain is built at run time from the limit it tests, at every length from one to
//! two beyond the longest that resolves: the answer flips once, from the rule's finding to CAP003.

use std::sync::Arc;

use capslint_diagnostics::diagnostic::Diagnostic;
use capslint_linter::lint::{self, Input};
use capslint_python::ProjectIndex;
use capslint_python::limits::{
    MAX_ALTERNATIVES, MAX_CALL_DEPTH, MAX_CALL_SITES, MAX_DEPTH, MAX_DICT_NESTING, MAX_ENV_SOURCE_NESTING, MAX_HOPS,
    MAX_MODULE_BYTES, MAX_MODULE_MODEL_BYTES,
};
use capslint_workspace::discover::FileKind;
use capslint_workspace::settings::Overrides;

use crate::support::*;

/// The codes of `diagnostics`, in report order.
fn codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    diagnostics.iter().map(|diagnostic| diagnostic.rule().code()).collect()
}

/// Lints `text` as the file `chain.py`.
fn lint_chain(text: &str) -> Vec<Diagnostic> {
    lint_text("chain.py", text, &settings(&Overrides::default()))
}

/// Writes `files` into a new directory and lints its `main.py` alone, with imports resolved through the
/// other files.
fn lint_project(files: &[(String, String)]) -> Vec<Diagnostic> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let path = dir.path().join("main.py");
    let input = Input {
        path: path.clone(),
        display_name: "main.py".to_string(),
        kind: FileKind::Python,
        contents: None,
        settings: Arc::new(settings(&Overrides::default())),
    };
    let confinement = Arc::new(capslint_workspace::confine::Confinement::new([dir.path().to_path_buf()]));
    let results = lint::check_each(vec![input], &ProjectIndex::new(dir.path().to_path_buf(), confinement));
    results.into_iter().flat_map(|result| result.diagnostics).collect()
}

#[test]
fn a_module_followed_into_is_checked_from_the_tree_the_call_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let utils = "from joblib import Parallel\n\n\ndef fan_out(tasks, jobs=1):\n    \
                 return Parallel(n_jobs=jobs)(tasks)\n\n\nPOOL = Parallel(n_jobs=-1)\n";
    std::fs::write(dir.path().join("utils.py"), utils).unwrap();
    std::fs::write(dir.path().join("main.py"), "from utils import fan_out\n\nfan_out([], jobs=-1)\n").unwrap();
    let input = |name: &str| Input {
        path: dir.path().join(name),
        display_name: name.to_string(),
        kind: FileKind::Python,
        contents: None,
        settings: Arc::new(settings(&Overrides::default())),
    };
    let index = || {
        let confinement = Arc::new(capslint_workspace::confine::Confinement::new([dir.path().to_path_buf()]));
        ProjectIndex::new(dir.path().to_path_buf(), confinement)
    };
    let diagnostics = |results: Vec<lint::FileResult>| -> Vec<Diagnostic> {
        results.into_iter().flat_map(|result| result.diagnostics).collect()
    };
    // The call in `main.py` is followed into `fan_out`, which parses `utils.py` and keeps its tree.
    let shared = index();
    assert_eq!(rows_and_codes(&diagnostics(lint::check_each(vec![input("main.py")], &shared))), [(3, "CAP101".into())]);
    assert!(shared.kept_tree(&dir.path().join("utils.py")).is_some(), "the call parsed `utils.py`");
    // `utils.py` checked from that tree reports what it reports from its own parse.
    let from_kept = diagnostics(lint::check_each(vec![input("utils.py")], &shared));
    let from_own = diagnostics(lint::check_each(vec![input("utils.py")], &index()));
    assert_eq!(rows_and_codes(&from_own), [(8, "CAP101".into())]);
    assert_eq!(render_json(&from_kept), render_json(&from_own));
}

/// Asserts that the chain `build(length)` reports exactly `within` for every length up to `longest`, and
/// one CAP003 whose message names the limit (`limit`) and the place of the cut for the next two lengths.
fn assert_cut_beyond(longest: usize, within: &[&str], limit: &str, build: impl Fn(usize) -> Vec<Diagnostic>) {
    for length in 1..=longest {
        let diagnostics = build(length);
        assert_eq!(codes(&diagnostics), within, "length {length}:\n{}", render_full(&diagnostics));
    }
    for length in longest + 1..=longest + 2 {
        let diagnostics = build(length);
        assert_eq!(codes(&diagnostics), ["CAP003"], "length {length}:\n{}", render_full(&diagnostics));
        let message = &diagnostics[0].finding.message;
        assert!(message.contains(limit), "length {length}: the limit is not named: {message}");
        assert!(message.contains("the chain was cut at "), "length {length}: the cut is not placed: {message}");
    }
}

#[test]
fn a_chain_of_aliases_is_resolved_to_the_depth_limit() {
    // `a0 = -1` spends two levels (the minus and its operand), each alias one more.
    assert_cut_beyond(MAX_DEPTH as usize - 1, &["CAP101"], "resolution depth limit", |names| {
        let mut text = String::from("from sklearn.ensemble import RandomForestClassifier\na0 = -1\n");
        for name in 1..names {
            text.push_str(&format!("a{name} = a{}\n", name - 1));
        }
        text.push_str(&format!("RandomForestClassifier(n_jobs=a{})\n", names - 1));
        lint_chain(&text)
    });
}

#[test]
fn a_chain_of_dict_merges_is_resolved_to_the_depth_limit() {
    // Each merge spends two levels: the dict, and the name it splats.
    assert_cut_beyond(MAX_DEPTH as usize / 2, &["CAP101"], "resolution depth limit", |dicts| {
        let mut text = String::from("import xgboost as xgb\np0 = {\"nthread\": 0, \"eta\": 0.1}\n");
        for dict in 1..dicts {
            text.push_str(&format!("p{dict} = {{**p{}, \"round\": {dict}}}\n", dict - 1));
        }
        text.push_str(&format!("booster = xgb.train(p{}, dtrain)\n", dicts - 1));
        lint_chain(&text)
    });
}

#[test]
fn a_chain_of_class_attributes_is_resolved_to_the_depth_limit() {
    // Each hop spends two levels: the attribute, and the class's binding of it.
    assert_cut_beyond(MAX_DEPTH as usize / 2 - 1, &["CAP101"], "resolution depth limit", |classes| {
        let mut text = String::from("from joblib import Parallel\nclass C0:\n    WORKERS = -1\n");
        for class in 1..classes {
            text.push_str(&format!("class C{class}:\n    WORKERS = C{}.WORKERS\n", class - 1));
        }
        text.push_str(&format!("Parallel(n_jobs=C{}.WORKERS)\n", classes - 1));
        lint_chain(&text)
    });
}

#[test]
fn a_chain_of_module_aliases_to_a_callee_is_resolved_to_the_depth_limit() {
    // The attribute spends one level, each alias one more.
    assert_cut_beyond(MAX_DEPTH as usize, &["CAP102"], "resolution depth limit", |names| {
        let mut text = String::from("import xgboost as m0\n");
        for name in 1..names {
            text.push_str(&format!("m{name} = m{}\n", name - 1));
        }
        text.push_str(&format!("model = m{}.XGBClassifier(max_depth=4)\n", names - 1));
        lint_chain(&text)
    });
}

#[test]
fn a_name_defined_on_many_paths_is_resolved_to_the_alternatives_limit() {
    assert_cut_beyond(MAX_ALTERNATIVES, &["CAP101"], "definitions followed per name", |definitions| {
        let mut text = String::from("import os\nfrom sklearn.ensemble import RandomForestClassifier\n");
        for definition in 0..definitions {
            text.push_str(&format!("if os.environ.get(\"FAST_{definition}\"):\n    workers = -1\n"));
        }
        text.push_str("RandomForestClassifier(n_jobs=workers)\n");
        lint_chain(&text)
    });
}

#[test]
fn an_operator_argument_named_through_aliases_is_followed_to_the_depth_limit() {
    let header = "from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator\n\
                  from kubernetes.client import models as k8s\n\
                  r0 = k8s.V1ResourceRequirements(limits={\"memory\": \"4Gi\"})\n";
    assert_cut_beyond(MAX_DEPTH as usize, &["CAP107"], "resolution depth limit", |names| {
        let mut text = String::from(header);
        for name in 1..names {
            text.push_str(&format!("r{name} = r{}\n", name - 1));
        }
        text.push_str(&format!(
            "train = KubernetesPodOperator(task_id=\"train\", image=\"trainer:1\", container_resources=r{}, \
             env_vars=[k8s.V1EnvVar(name=\"CPU_LIMIT\", value_from=k8s.V1EnvVarSource(\
             resource_field_ref=k8s.V1ResourceFieldSelector(resource=\"limits.cpu\")))])\n",
            names - 1
        ));
        lint_chain(&text)
    });
}

#[test]
fn an_environment_source_is_followed_to_its_nesting_limit() {
    let header = "from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator\n\
                  from kubernetes.client import models as k8s\n";
    assert_cut_beyond(MAX_ENV_SOURCE_NESTING as usize, &["CAP108"], "environment variable's source", |levels| {
        let mut source = String::from("{\"resource\": \"limits.memory\"}");
        for _ in 0..levels {
            source = format!("{{\"valueFrom\": {source}}}");
        }
        lint_chain(&format!(
            "{header}train = KubernetesPodOperator(task_id=\"train\", image=\"trainer:1\", \
             container_resources=k8s.V1ResourceRequirements(limits={{\"cpu\": \"2\"}}), \
             env_vars=[{source}])\n"
        ))
    });
}

#[test]
fn an_import_is_followed_through_modules_to_the_hop_limit() {
    assert_cut_beyond(MAX_HOPS as usize + 1, &["CAP101"], "modules followed per import", |modules| {
        let mut files = vec![("m0.py".to_string(), "N_JOBS = -1\n".to_string())];
        for module in 1..modules {
            files.push((format!("m{module}.py"), format!("from m{} import N_JOBS\n", module - 1)));
        }
        let main = format!(
            "from sklearn.ensemble import RandomForestClassifier\nfrom m{} import N_JOBS\n\
             RandomForestClassifier(n_jobs=N_JOBS)\n",
            modules - 1
        );
        files.push(("main.py".to_string(), main));
        lint_project(&files)
    });
}

#[test]
fn an_import_cycle_is_not_a_limit() {
    let files = [
        ("a.py", "from b import N_JOBS\n"),
        ("b.py", "from a import N_JOBS\n"),
        (
            "main.py",
            "from sklearn.ensemble import RandomForestClassifier\nfrom a import N_JOBS\nRandomForestClassifier(n_jobs=N_JOBS)\n",
        ),
    ];
    let files: Vec<(String, String)> = files.iter().map(|(name, text)| (name.to_string(), text.to_string())).collect();
    let diagnostics = lint_project(&files);
    assert!(diagnostics.is_empty(), "{}", render_full(&diagnostics));
}

#[test]
fn a_module_is_read_up_to_the_size_limit() {
    let module = |size: u64| {
        let mut text = String::from("N_JOBS = -1\n");
        let padding = size as usize - text.len() - 1;
        text.push_str(&format!("{}\n", "#".repeat(padding)));
        assert_eq!(text.len() as u64, size);
        text
    };
    let main = "from sklearn.ensemble import RandomForestClassifier\nfrom conf import N_JOBS\n\
                RandomForestClassifier(n_jobs=N_JOBS)\n";
    let at_limit = lint_project(&[("conf.py".into(), module(MAX_MODULE_BYTES)), ("main.py".into(), main.into())]);
    assert_eq!(codes(&at_limit), ["CAP101"], "{}", render_full(&at_limit));
    let beyond = lint_project(&[("conf.py".into(), module(MAX_MODULE_BYTES + 1)), ("main.py".into(), main.into())]);
    assert_eq!(codes(&beyond), ["CAP003"], "{}", render_full(&beyond));
    let message = &beyond[0].finding.message;
    assert!(message.contains("MiB limit on modules read for imports") && message.contains("`conf.py`"), "{message}");
}

#[test]
fn an_imported_dict_is_kept_to_the_nesting_limit() {
    assert_cut_beyond(MAX_DICT_NESTING as usize, &["CAP101"], "nested dicts kept per imported value", |dicts| {
        let mut value = String::from("{\"n_jobs\": -1}");
        for _ in 1..dicts {
            value = format!("{{\"inner\": {value}}}");
        }
        let path = "[\"inner\"]".repeat(dicts - 1);
        let main = format!(
            "from sklearn.ensemble import RandomForestClassifier\nfrom conf import PARAMS\n\
             RandomForestClassifier(n_jobs=PARAMS{path}[\"n_jobs\"])\n"
        );
        lint_project(&[("conf.py".into(), format!("PARAMS = {value}\n")), ("main.py".into(), main)])
    });
}

#[test]
fn an_imported_module_that_spends_its_budget_is_a_limit() {
    let main = "import lightgbm as lgb\nfrom conf import PARAMS\nlgb.train(PARAMS, data)\n";
    let module =
        |mutations: usize| format!("PARAMS = {{'n_jobs': -1}}\n{}", "PARAMS.update(PARAMS)\n".repeat(mutations));
    let within = lint_project(&[("conf.py".into(), module(10)), ("main.py".into(), main.into())]);
    assert_eq!(codes(&within), ["CAP101"], "{}", render_full(&within));
    // Every use of `PARAMS` applies every mutation before it: quadratic, beyond the module's budget.
    let beyond = lint_project(&[("conf.py".into(), module(20_000)), ("main.py".into(), main.into())]);
    assert_eq!(codes(&beyond), ["CAP003"], "{}", render_full(&beyond));
    assert!(beyond[0].finding.message.contains("that module's own analysis budget"), "{}", beyond[0].finding.message);
}

#[test]
fn a_cut_is_reported_once_where_the_value_is_needed_and_points_at_the_cut() {
    let mut text = String::from("from sklearn.ensemble import RandomForestClassifier\na0 = -1\n");
    for name in 1..=MAX_DEPTH {
        text.push_str(&format!("a{name} = a{}\n", name - 1));
    }
    text.push_str(&format!("RandomForestClassifier(n_jobs=a{MAX_DEPTH})\n"));
    let diagnostics = lint_chain(&text);
    let [cut] = diagnostics.as_slice() else { panic!("one finding expected:\n{}", render_full(&diagnostics)) };
    assert_eq!(cut.start().row, MAX_DEPTH as usize + 3, "at the use of the value");
    assert!(cut.finding.message.starts_with(&format!("resolving `a{MAX_DEPTH}` reached the resolution depth limit")));
    // One alias beyond the longest chain: the value `a0` is bound to, at its end, was not evaluated.
    assert!(cut.finding.message.contains("the chain was cut at `-1` (line 2)"), "{}", cut.finding.message);
    assert!(cut.finding.label.contains("resolution stopped here"), "{}", cut.finding.label);
}

#[test]
fn an_environment_source_merged_into_a_pod_template_is_followed_to_its_nesting_limit() {
    let template = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: placeholder-name\nspec:\n  restartPolicy: Never\n  \
                    containers:\n    - name: base\n      image: trainer:1\n      env:\n        \
                    - {name: OMP_NUM_THREADS, value: \"1\"}\n        \
                    - {name: OPENBLAS_NUM_THREADS, value: \"1\"}\n        \
                    - {name: MKL_NUM_THREADS, value: \"1\"}\n        \
                    - {name: NUMEXPR_NUM_THREADS, value: \"1\"}\n        \
                    - {name: LOKY_MAX_CPU_COUNT, value: \"1\"}\n        \
                    - {name: OMP_WAIT_POLICY, value: passive}\n";
    let dir = tempfile::tempdir().unwrap();
    let template_path = dir.path().join("pod.yaml");
    std::fs::write(&template_path, template).unwrap();
    let lint_dag = |levels: usize| {
        let mut source = String::from("{\"resource\": \"limits.cpu\"}");
        for _ in 0..levels {
            source = format!("{{\"resourceFieldRef\": {source}}}");
        }
        let dag = format!(
            "from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator\n\
             from kubernetes.client import models as k8s\n\
             train = KubernetesPodOperator(task_id=\"train\", pod_template_file={:?}, \
             container_resources=k8s.V1ResourceRequirements(limits={{\"cpu\": \"4\"}}), \
             env_vars=[{{\"name\": \"CPU_LIMIT\", \"valueFrom\": {source}}}])\n",
            template_path.display()
        );
        let path = dir.path().join("dag.py");
        std::fs::write(&path, dag).unwrap();
        let input = Input {
            path,
            display_name: "dag.py".to_string(),
            kind: FileKind::Python,
            contents: None,
            settings: Arc::new(settings(&Overrides::default())),
        };
        lint::check_inputs(vec![input]).diagnostics
    };
    // The source itself is one level: `resourceFieldRef` dicts nest it further.
    for levels in 1..=MAX_ENV_SOURCE_NESTING as usize {
        let diagnostics = lint_dag(levels);
        assert!(diagnostics.is_empty(), "{levels} levels:\n{}", render_full(&diagnostics));
    }
    let beyond = lint_dag(MAX_ENV_SOURCE_NESTING as usize + 1);
    let in_dag: Vec<&Diagnostic> =
        beyond.iter().filter(|diagnostic| diagnostic.file.display_name() == "dag.py").collect();
    assert_eq!(in_dag.len(), 1, "{}", render_full(&beyond));
    assert_eq!(in_dag[0].rule().code(), "CAP003");
    assert!(in_dag[0].finding.message.contains("environment variable's source"), "{}", in_dag[0].finding.message);
}

#[test]
fn a_getter_with_many_returns_is_followed_to_the_alternatives_limit() {
    assert_cut_beyond(MAX_ALTERNATIVES, &["CAP102"], "definitions followed per name", |returns| {
        let mut text = String::from("import os\n\n\ndef booster():\n    import lightgbm\n");
        for branch in 1..returns {
            text.push_str(&format!("    if os.environ.get(\"BOOSTER_{branch}\"):\n        return lightgbm\n"));
        }
        text.push_str("    return lightgbm\n\n\nmodel = booster().LGBMClassifier(num_leaves=31)\n");
        lint_chain(&text)
    });
}

#[test]
fn a_count_returned_through_a_chain_of_functions_is_resolved_to_the_depth_limit() {
    // The count's own call spends one level, each function returning the next one's result one more.
    assert_cut_beyond(MAX_DEPTH as usize, &["CAP105"], "resolution depth limit", |functions| {
        let mut text = String::from(
            "import os\nfrom concurrent.futures import ThreadPoolExecutor\n\n\ndef f0():\n    return os.cpu_count()\n",
        );
        for function in 1..functions {
            text.push_str(&format!("\n\ndef f{function}():\n    return f{}()\n", function - 1));
        }
        text.push_str(&format!("\n\nThreadPoolExecutor(max_workers=f{}())\n", functions - 1));
        lint_chain(&text)
    });
}

#[test]
fn a_function_with_many_returns_is_followed_to_the_alternatives_limit() {
    assert_cut_beyond(MAX_ALTERNATIVES, &["CAP105"], "definitions followed per name", |returns| {
        let mut text = String::from("import os\nfrom concurrent.futures import ThreadPoolExecutor\n\n\ndef cores():\n");
        for branch in 1..returns {
            text.push_str(&format!("    if os.environ.get(\"POOL_{branch}\"):\n        return os.cpu_count()\n"));
        }
        text.push_str("    return os.cpu_count()\n\n\nThreadPoolExecutor(max_workers=cores())\n");
        lint_chain(&text)
    });
}

#[test]
fn a_value_passed_down_calls_of_the_module_s_functions_is_followed_to_the_call_depth_limit() {
    assert_cut_beyond(MAX_CALL_DEPTH as usize, &["CAP101"], "nested calls", |length| {
        let mut text = String::from("from sklearn.ensemble import RandomForestClassifier\n\n");
        for level in 1..length {
            text.push_str(&format!("def f{level}(n):\n    return f{}(n)\n\n", level + 1));
        }
        text.push_str(&format!("def f{length}(n):\n    return RandomForestClassifier(n_jobs=n)\n\n\nf1(-1)\n"));
        lint_chain(&text)
    });
}

/// A chain of `length` modules, each function calling the next module's, the last passing its parameter
/// to an estimator; `main.py` calls the first with `-1`.
fn module_chain(length: usize) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for level in 1..length {
        let next = level + 1;
        files.push((
            format!("m{level}.py"),
            format!("from m{next} import f{next}\n\ndef f{level}(n_jobs):\n    return f{next}(n_jobs)\n"),
        ));
    }
    files.push((
        format!("m{length}.py"),
        format!("from sklearn.ensemble import RandomForestClassifier\n\ndef f{length}(n_jobs):\n    return RandomForestClassifier(n_jobs=n_jobs)\n"),
    ));
    files.push(("main.py".to_string(), "from m1 import f1\n\nf1(-1)\n".to_string()));
    files
}

#[test]
fn a_value_passed_down_calls_of_other_modules_functions_is_followed_to_the_call_depth_limit() {
    assert_cut_beyond(MAX_CALL_DEPTH as usize, &["CAP101"], "nested calls", |length| {
        lint_project(&module_chain(length))
    });
    // Ten modules deep: cut once, where the depth ran out.
    let diagnostics = lint_project(&module_chain(10));
    assert_eq!(codes(&diagnostics), ["CAP003"], "{}", render_full(&diagnostics));
}

#[test]
fn calls_of_another_module_s_function_are_followed_to_the_call_sites_limit() {
    let module = "from sklearn.ensemble import RandomForestClassifier\n\ndef fit(n_jobs):\n    \
                  return RandomForestClassifier(n_jobs=n_jobs)\n";
    let main: String = std::iter::once("from m import fit\n\n".to_string())
        .chain((0..1_000).map(|_| "fit(-1)\n".to_string()))
        .collect();
    let files = [("m.py".to_string(), module.to_string()), ("main.py".to_string(), main)];
    let diagnostics = lint_project(&files);
    let sites = MAX_CALL_SITES as usize;
    let codes = codes(&diagnostics);
    assert_eq!(codes.iter().filter(|code| **code == "CAP101").count(), sites, "{}", render_full(&diagnostics[..3]));
    assert_eq!(codes.iter().filter(|code| **code == "CAP003").count(), 1);
    let cut = diagnostics.iter().find(|diagnostic| diagnostic.rule().code() == "CAP003").unwrap();
    assert_eq!(cut.start().row, sites + 3, "the first call beyond the limit is cut: {}", cut.finding.message);
}

#[test]
fn calls_into_large_modules_are_followed_to_the_modelled_bytes_limit() {
    // A module of nearly 1 MiB: each call followed analyses it again.
    let padding = "# padding\n".repeat(90_000);
    let module = format!(
        "from sklearn.ensemble import RandomForestClassifier\n{padding}\ndef fit(n_jobs):\n    \
         return RandomForestClassifier(n_jobs=n_jobs)\n"
    );
    let followed = (MAX_MODULE_MODEL_BYTES / module.len() as u64) as usize;
    let main: String = std::iter::once("from m import fit\n\n".to_string())
        .chain((0..followed + 5).map(|_| "fit(-1)\n".to_string()))
        .collect();
    let diagnostics = lint_project(&[("m.py".to_string(), module), ("main.py".to_string(), main)]);
    let codes = codes(&diagnostics);
    assert_eq!(codes.iter().filter(|code| **code == "CAP101").count(), followed);
    let cuts: Vec<&Diagnostic> = diagnostics.iter().filter(|diagnostic| diagnostic.rule().code() == "CAP003").collect();
    assert_eq!(cuts.len(), 1, "{}", render_full(&diagnostics));
    assert!(cuts[0].finding.message.contains("other modules' code analysed per file"), "{}", cuts[0].finding.message);
    assert_eq!(cuts[0].start().row, followed + 3);
}

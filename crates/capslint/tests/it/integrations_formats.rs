//! Every output format, read the way its consumer reads it: SARIF against the structure GitHub code
//! scanning requires, GitHub workflow commands by their grammar, GitLab Code Quality by its schema,
//! JUnit as XML, JSON Lines line by line; plus `--output-file`, `--statistics` and exit codes.

use std::collections::HashSet;
use std::path::Path;

use capslint_diagnostics::registry::Rule;
use regex::Regex;
use serde_json::Value;

use crate::support::*;

fn sample() -> tempfile::TempDir {
    project(&[("src/train.py", TRAIN), (ODD_PATH, ODD), ("src/clean.py", CLEAN)])
}

fn json_of(dir: &Path, format: &str) -> Value {
    let (code, stdout, stderr) = run(check(dir).args(["--output-format", format]));
    assert_eq!(code, 1, "{format}: exit code with findings; stderr: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{format} is not JSON: {error}\n{stdout}"))
}

fn string<'a>(value: &'a Value, what: &str) -> &'a str {
    value.as_str().unwrap_or_else(|| panic!("{what} must be a string, got {value}"))
}

fn positive(value: &Value, what: &str) -> u64 {
    let number = value.as_u64().unwrap_or_else(|| panic!("{what} must be an integer, got {value}"));
    assert!(number >= 1, "{what} must be >= 1");
    number
}

/// The structure GitHub code scanning requires of an uploaded SARIF file ("SARIF support for code
/// scanning": required properties, their types, the value sets and the size limits it documents).
fn assert_github_sarif(log: &Value) {
    assert_eq!(log["version"], "2.1.0");
    assert!(string(&log["$schema"], "$schema").contains("sarif-2.1.0"));
    let runs = log["runs"].as_array().expect("runs is an array");
    assert!(!runs.is_empty() && runs.len() <= 20, "1 to 20 runs");
    for run in runs {
        let driver = &run["tool"]["driver"];
        string(&driver["name"], "tool.driver.name");
        if let Some(version) = driver.get("semanticVersion") {
            let version = string(version, "semanticVersion");
            assert!(version.split('.').count() >= 3, "semanticVersion {version} is not semver");
        }
        let rules = driver["rules"].as_array().expect("rules is an array");
        assert!(rules.len() <= 25_000);
        let mut ids = HashSet::new();
        for rule in rules {
            let id = string(&rule["id"], "rule id");
            assert!(ids.insert(id.to_string()), "duplicate rule id {id}");
            if let Some(name) = rule.get("name") {
                assert!(string(name, "rule name").chars().count() <= 255);
            }
            for description in ["shortDescription", "fullDescription"] {
                let text = string(&rule[description]["text"], description);
                assert!(!text.is_empty() && text.chars().count() <= 1024, "{id} {description} length");
            }
            string(&rule["help"]["text"], "help.text");
            if let Some(markdown) = rule["help"].get("markdown") {
                string(markdown, "help.markdown");
            }
            if let Some(level) = rule.get("defaultConfiguration").and_then(|configuration| configuration.get("level")) {
                assert!(["none", "note", "warning", "error"].contains(&string(level, "level")));
            }
            let properties = &rule["properties"];
            if let Some(tags) = properties.get("tags") {
                let tags = tags.as_array().expect("tags is an array");
                assert!(tags.len() <= 20 && tags.iter().all(Value::is_string), "{id} tags");
            }
            if let Some(precision) = properties.get("precision") {
                assert!(["very-high", "high", "medium", "low"].contains(&string(precision, "precision")));
            }
            if let Some(severity) = properties.get("problem.severity") {
                assert!(["error", "warning", "recommendation"].contains(&string(severity, "problem.severity")));
            }
        }
        let results = run["results"].as_array().expect("results is an array");
        assert!(results.len() <= 25_000);
        for result in results {
            let rule_id = string(&result["ruleId"], "ruleId");
            if let Some(index) = result.get("ruleIndex") {
                let index = index.as_u64().expect("ruleIndex is an integer") as usize;
                assert_eq!(rules[index]["id"], rule_id, "ruleIndex must point at the rule of ruleId");
            }
            if let Some(level) = result.get("level") {
                assert!(["none", "note", "warning", "error"].contains(&string(level, "level")));
            }
            assert!(!string(&result["message"]["text"], "message.text").is_empty());
            let locations = result["locations"].as_array().expect("locations is an array");
            assert!(!locations.is_empty() && locations.len() <= 1000, "1 to 1000 locations");
            let related = result.get("relatedLocations").and_then(Value::as_array).cloned().unwrap_or_default();
            for location in locations.iter().chain(&related) {
                let physical = &location["physicalLocation"];
                let uri = string(&physical["artifactLocation"]["uri"], "artifactLocation.uri");
                assert!(!uri.contains('\\') && !uri.contains(' '), "uri {uri} is not a URI reference");
                if physical["artifactLocation"].get("uriBaseId").is_some() {
                    assert!(!uri.contains("://") && !uri.starts_with('/'), "a based uri must be relative");
                }
                let region = &physical["region"];
                let start_line = positive(&region["startLine"], "startLine");
                let start_column = positive(&region["startColumn"], "startColumn");
                let end_line = positive(&region["endLine"], "endLine");
                let end_column = positive(&region["endColumn"], "endColumn");
                assert!(end_line >= start_line, "endLine before startLine");
                if end_line == start_line {
                    assert!(end_column >= start_column, "endColumn before startColumn");
                }
            }
            for location in &related {
                positive(&location["id"], "relatedLocations id");
                string(&location["message"]["text"], "related message");
            }
            if let Some(fingerprints) = result.get("partialFingerprints") {
                let fingerprints = fingerprints.as_object().expect("partialFingerprints is an object");
                assert!(fingerprints.values().all(Value::is_string));
            }
        }
    }
}

#[test]
fn sarif_meets_github_code_scanning_requirements() {
    let dir = sample();
    let sarif = json_of(dir.path(), "sarif");
    assert_github_sarif(&sarif);
    let run = &sarif["runs"][0];
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let root_uri = string(&run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "%SRCROOT%");
    assert!(root_uri.starts_with("file:///") && root_uri.ends_with('/'));

    // The whole catalogue, in code order, each with its page.
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), Rule::ALL.len());
    for (descriptor, rule) in rules.iter().zip(Rule::ALL) {
        assert_eq!(descriptor["id"], rule.code());
        assert_eq!(descriptor["name"], rule.name());
        assert_eq!(descriptor["shortDescription"]["text"], rule.summary());
        assert_eq!(descriptor["help"]["markdown"], rule.documentation());
        assert_eq!(descriptor["helpUri"], rule.url());
        assert_eq!(descriptor["defaultConfiguration"]["level"], rule.default_severity().as_str());
        let what = string(&descriptor["fullDescription"]["text"], "fullDescription");
        assert!(rule.documentation().replace('\n', " ").contains(&what[..40]), "{}: not from the page", rule.code());
    }

    // Results: the same regions as the JSON report, relative percent-encoded URIs, levels by severity.
    let json = json_of(dir.path(), "json");
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), json.as_array().unwrap().len());
    for (result, item) in results.iter().zip(json.as_array().unwrap()) {
        assert_eq!(result["ruleId"], item["code"]);
        let region = &result["locations"][0]["physicalLocation"]["region"];
        assert_eq!(region["startLine"], item["location"]["row"]);
        assert_eq!(region["startColumn"], item["location"]["column"]);
        assert_eq!(region["endLine"], item["end_location"]["row"]);
        assert_eq!(region["endColumn"], item["end_location"]["column"]);
    }
    let uris: Vec<&str> = results
        .iter()
        .map(|result| string(&result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "uri"))
        .collect();
    assert_eq!(uris[0], "odd%2Cdir%3A100%25/my%20%3Cmodel%3E%20%26%20%27co%27.py");
    assert!(uris[1..].iter().all(|uri| *uri == "src/train.py"));
    let level_of = |code: &str| results.iter().find(|result| result["ruleId"] == code).unwrap()["level"].clone();
    assert_eq!(level_of("CAP101"), "error");
    assert_eq!(level_of("CAP102"), "warning");
    // The non-ASCII characters before the span count as one column each.
    assert_eq!(results[0]["locations"][0]["physicalLocation"]["region"]["startColumn"], 29);
    // CAP103 points at the `os.cpu_count()` it traces to.
    let cap103 = results.iter().find(|result| result["ruleId"] == "CAP103").unwrap();
    let related = &cap103["relatedLocations"][0]["physicalLocation"]["region"];
    assert_eq!((related["startLine"].as_u64(), related["startColumn"].as_u64()), (Some(6), Some(11)));
}

#[test]
fn sarif_levels_follow_the_configured_severity() {
    let dir = project(&[("capslint.toml", "[severity]\nCAP102 = \"error\"\n"), ("train.py", TRAIN)]);
    let (_, stdout, _) = run(capslint(dir.path()).args(["check", "--output-format", "sarif"]));
    let sarif: Value = serde_json::from_str(&stdout).unwrap();
    let run = &sarif["runs"][0];
    let cap102 = run["results"].as_array().unwrap().iter().find(|result| result["ruleId"] == "CAP102").unwrap();
    assert_eq!(cap102["level"], "error");
    let index = cap102["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(run["tool"]["driver"]["rules"][index]["defaultConfiguration"]["level"], "warning");
}

fn fingerprints(dir: &Path) -> Vec<(String, String)> {
    let sarif = json_of(dir, "sarif");
    sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| {
            let fingerprint = string(&result["partialFingerprints"]["primaryLocationLineHash"], "hash");
            (result["ruleId"].as_str().unwrap().to_string(), fingerprint.to_string())
        })
        .collect()
}

#[test]
fn sarif_fingerprints_survive_unrelated_line_shifts() {
    let dir = project(&[("train.py", TRAIN)]);
    let before = fingerprints(dir.path());
    assert_eq!(before.iter().map(|(_, hash)| hash).collect::<HashSet<_>>().len(), before.len(), "unique");
    write(dir.path(), "train.py", &format!("\"\"\"Training.\"\"\"\n\nimport sys\n\n{TRAIN}"));
    assert_eq!(fingerprints(dir.path()), before, "inserting lines above keeps every fingerprint");
    write(dir.path(), "train.py", &TRAIN.replace("model = lgb", "clf = lgb"));
    let edited = fingerprints(dir.path());
    let changed: Vec<&str> = edited.iter().zip(&before).filter(|(a, b)| a != b).map(|(a, _)| a.0.as_str()).collect();
    assert_eq!(changed, ["CAP102"], "only the edited line's finding changes");
}

/// `::level key=value,...::data`: the workflow-command grammar, with the escaping the runner undoes.
fn github_command() -> Regex {
    let value = r"(?:[^%:,\r\n]|%25|%0D|%0A|%3A|%2C)*";
    Regex::new(&format!(
        r"^::(?P<level>error|warning|notice) file=(?P<file>{value}),line=(?P<line>[1-9][0-9]*)(?:,col=(?P<col>[1-9][0-9]*))?,endLine=(?P<end_line>[1-9][0-9]*)(?:,endColumn=(?P<end_col>[1-9][0-9]*))?,title=(?P<title>{value})::(?P<data>(?:[^%\r\n]|%25|%0D|%0A)*)$"
    ))
    .unwrap()
}

fn unescape(text: &str) -> String {
    text.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
}

#[test]
fn github_commands_follow_the_workflow_command_grammar() {
    let dir = sample();
    let workspace = dir.path().parent().unwrap();
    let repo = dir.path().file_name().unwrap().to_string_lossy().to_string();
    let (code, stdout, _) =
        run(check(dir.path()).env("GITHUB_WORKSPACE", workspace).args(["--output-format", "github"]));
    assert_eq!(code, 1);
    let grammar = github_command();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    for line in &lines {
        let captures = grammar.captures(line).unwrap_or_else(|| panic!("not a workflow command: {line}"));
        let (line_no, end_line) = (&captures["line"], &captures["end_line"]);
        assert_eq!(captures.name("col").is_some(), line_no == end_line, "col only on one-line spans: {line}");
        assert_eq!(captures.name("end_col").is_some(), line_no == end_line);
        let file = unescape(&captures["file"]);
        assert!(file.starts_with(&format!("{repo}/")), "{file} is relative to GITHUB_WORKSPACE");
        let data = unescape(&captures["data"]);
        let title = unescape(&captures["title"]);
        let code = title.split(' ').next().unwrap();
        assert!(data.starts_with(&format!("{file}:{line_no}:")), "data repeats the location: {data}");
        assert!(data.contains(&format!(" {code} ")));
        let rule = Rule::from_code_or_name(code).expect("a rule code in the title");
        assert_eq!(title, format!("{} {}", rule.code(), rule.name()));
        assert_eq!(&captures["level"], rule.default_severity().as_str());
        assert!(data.contains("\nhelp: "), "the help follows on its own line");
    }
    assert!(lines[0].contains("file=") && lines[0].contains("odd%2Cdir%3A100%25/my <model> & 'co'.py,line=4"));
}

#[test]
fn github_is_the_default_format_inside_github_actions() {
    let dir = project(&[("train.py", TRAIN)]);
    let (_, stdout, _) = run(check(dir.path()).env("GITHUB_ACTIONS", "true"));
    assert!(stdout.lines().all(|line| line.starts_with("::")), "{stdout}");
    let (_, stdout, _) = run(check(dir.path()).env("GITHUB_ACTIONS", "true").args(["--output-format", "concise"]));
    assert!(stdout.starts_with("train.py:7:20: CAP101"));
    let (_, stdout, _) = run(check(dir.path()).env("GITHUB_ACTIONS", "true").args(["-o", "report.txt"]));
    assert!(stdout.is_empty());
    let written = std::fs::read_to_string(dir.path().join("report.txt")).unwrap();
    assert!(written.contains("× `Parallel(n_jobs=-1)`"), "a file gets the full report:\n{written}");
    let (_, stdout, _) = run(check(dir.path()).env("CAPSLINT_OUTPUT_FORMAT", "json-lines"));
    assert_eq!(stdout.lines().count(), 3);
}

#[test]
fn gitlab_code_quality_report() {
    let dir = sample();
    let (code, stdout, _) = run(check(dir.path()).arg("--output-format=gitlab").env("CI_PROJECT_DIR", dir.path()));
    assert_eq!(code, 1);
    let issues: Value = serde_json::from_str(&stdout).unwrap();
    let issues = issues.as_array().unwrap();
    assert_eq!(issues.len(), 4);
    let mut fingerprints = HashSet::new();
    for issue in issues {
        let check_name = string(&issue["check_name"], "check_name");
        let rule = Rule::from_code_or_name(check_name).unwrap();
        assert!(string(&issue["description"], "description").starts_with(&format!("{check_name}: ")));
        assert!(fingerprints.insert(string(&issue["fingerprint"], "fingerprint").to_string()), "unique");
        let expected = if rule.default_severity().as_str() == "error" { "major" } else { "minor" };
        assert_eq!(issue["severity"], expected);
        assert!(["info", "minor", "major", "critical", "blocker"].contains(&string(&issue["severity"], "severity")));
        let positions = &issue["location"]["positions"];
        positive(&positions["begin"]["line"], "begin.line");
        positive(&positions["begin"]["column"], "begin.column");
        assert!(positions["end"]["line"].as_u64() >= positions["begin"]["line"].as_u64());
    }
    assert_eq!(issues[0]["location"]["path"], ODD_PATH);
    assert_eq!(issues[1]["location"]["path"], "src/train.py");
    // Run from a subdirectory: paths stay relative to $CI_PROJECT_DIR.
    let (_, stdout, _) = run(check(&dir.path().join("src"))
        .arg("--output-format=gitlab")
        .arg("train.py")
        .env("CI_PROJECT_DIR", dir.path()));
    let issues: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(issues[0]["location"]["path"], "src/train.py");
}

/// One element of a JUnit document, with its attributes (unescaped) and children.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
    text: String,
    children: Vec<Element>,
}

impl Element {
    fn attribute(&self, name: &str) -> &str {
        self.attributes.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str()).unwrap_or_default()
    }
}

/// Parses XML strictly (well-formedness, escaping) into a tree.
fn parse_xml(text: &str) -> Element {
    use quick_xml::events::{BytesStart, Event};
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let element = |start: &BytesStart<'_>| Element {
        name: start.name().as_ref().to_string(),
        attributes: start
            .attributes()
            .map(|attribute| {
                let attribute = attribute.expect("a well-formed attribute");
                let value = attribute.normalized_value(quick_xml::XmlVersion::Explicit1_0).expect("a valid escape");
                (attribute.key.as_ref().to_string(), value.into_owned())
            })
            .collect(),
        ..Element::default()
    };
    let mut stack = vec![Element::default()];
    loop {
        match reader.read_event().unwrap_or_else(|error| panic!("malformed XML: {error}\n{text}")) {
            Event::Start(start) => stack.push(element(&start)),
            Event::Empty(start) => stack.last_mut().unwrap().children.push(element(&start)),
            Event::End(_) => {
                let done = stack.pop().unwrap();
                stack.last_mut().unwrap().children.push(done);
            }
            Event::Text(text) => {
                stack.last_mut().unwrap().text.push_str(&text.xml_content(quick_xml::XmlVersion::Explicit1_0));
            }
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref().expect("a valid character reference") {
                    Some(character) => character.to_string(),
                    None => match reference.as_ref() {
                        "amp" => "&".to_string(),
                        "lt" => "<".to_string(),
                        "gt" => ">".to_string(),
                        "quot" => "\"".to_string(),
                        "apos" => "'".to_string(),
                        other => panic!("undefined entity &{other};"),
                    },
                };
                stack.last_mut().unwrap().text.push_str(&resolved);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(stack.len(), 1, "unclosed elements");
    let mut document = stack.pop().unwrap();
    assert_eq!(document.children.len(), 1, "one root element");
    document.children.pop().unwrap()
}

#[test]
fn junit_is_well_formed_xml_with_a_case_per_finding() {
    let dir = sample();
    let (code, stdout, _) = run(check(dir.path()).args(["--output-format", "junit"]));
    assert_eq!(code, 1);
    assert!(stdout.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    let suites = parse_xml(&stdout);
    assert_eq!(suites.name, "testsuites");
    assert_eq!((suites.attribute("tests"), suites.attribute("failures")), ("4", "4"));
    let names: Vec<&str> = suites.children.iter().map(|suite| suite.attribute("name")).collect();
    assert_eq!(names, [ODD_PATH, "src/train.py"]);
    let mut cases = 0;
    for suite in &suites.children {
        assert_eq!(suite.name, "testsuite");
        assert_eq!(suite.attribute("tests"), suite.children.len().to_string());
        for case in &suite.children {
            cases += 1;
            assert_eq!(case.name, "testcase");
            assert_eq!(case.attribute("file"), suite.attribute("name"));
            let failure = &case.children[0];
            assert_eq!(failure.name, "failure");
            let code = failure.attribute("type");
            assert!(case.attribute("name").starts_with(code));
            assert!(failure.text.starts_with(&format!("{}:{}:", case.attribute("file"), case.attribute("line"))));
            assert!(failure.text.contains(&format!(" {code} {}\nhelp: ", failure.attribute("message"))));
        }
    }
    assert_eq!(cases, 4);
    // Markup in messages survives the round trip.
    let cap102 = &suites.children[1].children[1].children[0];
    assert!(cap102.attribute("message").contains("LightGBM >= 4") && cap102.attribute("message").contains("< 4"));
    assert_eq!(suites.children[0].children[0].attribute("classname"), "odd,dir:100%/my <model> & 'co'");

    let clean = project(&[("clean.py", CLEAN)]);
    let (code, stdout, _) = run(check(clean.path()).args(["--output-format", "junit"]));
    assert_eq!(code, 0);
    let suites = parse_xml(&stdout);
    assert_eq!((suites.attribute("tests"), suites.attribute("failures")), ("1", "0"));
    let case = &suites.children[0].children[0];
    assert_eq!(case.name, "testcase");
    assert!(case.children.is_empty(), "the clean case passes");
}

#[test]
fn json_lines_carry_the_json_objects() {
    let dir = sample();
    let array = json_of(dir.path(), "json");
    let (_, stdout, _) = run(check(dir.path()).args(["--output-format", "json-lines"]));
    let lines: Vec<Value> = stdout.lines().map(|line| serde_json::from_str(line).expect("one object a line")).collect();
    assert_eq!(&lines, array.as_array().unwrap());
}

#[test]
fn statistics_count_findings_per_rule() {
    let dir = project(&[("a.py", TRAIN), ("b.py", TRAIN), ("c.py", CLEAN)]);
    let (code, stdout, _) = run(check(dir.path()).arg("--statistics"));
    assert_eq!(code, 1);
    assert_eq!(
        stdout,
        "2\tCAP101\tn-jobs-all-cores\n2\tCAP102\tmissing-thread-count\n2\tCAP103\tunbounded-joblib-parallel\n\
         Found 6 findings.\n"
    );
    let (_, stdout, _) = run(check(dir.path())
        .args(["--statistics", "--select", "CAP101,CAP102", "--ignore"])
        .arg("CAP102")
        .args(["--output-format", "json"]));
    let counts: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        counts,
        serde_json::json!([{"code": "CAP101", "name": "n-jobs-all-cores", "count": 2, "fixable": false}])
    );
    let (code, stdout, _) = run(check(dir.path()).args(["--statistics", "c.py"]));
    assert_eq!((code, stdout.as_str()), (0, "All checks passed.\n"));
}

#[test]
fn output_file_receives_the_report_and_the_exit_code_stays() {
    let dir = project(&[("train.py", TRAIN)]);
    let (code, stdout, _) =
        run(check(dir.path()).args(["--output-format", "sarif", "-o", "reports/nested/capslint.sarif"]));
    assert_eq!((code, stdout.as_str()), (1, ""));
    let written = std::fs::read_to_string(dir.path().join("reports/nested/capslint.sarif")).unwrap();
    assert_github_sarif(&serde_json::from_str(&written).unwrap());
    let (code, _, stderr) = run(check(dir.path()).args(["-o", "train.py/impossible"]));
    assert_eq!(code, 2, "an unwritable report is an error: {stderr}");
}

#[test]
fn every_format_keeps_the_exit_codes() {
    let dirty = project(&[("train.py", TRAIN)]);
    let clean = project(&[("clean.py", CLEAN)]);
    for format in ["full", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit"] {
        assert_eq!(run(check(dirty.path()).args(["--output-format", format])).0, 1, "{format}");
        assert_eq!(run(check(dirty.path()).args(["--output-format", format, "--exit-zero"])).0, 0, "{format}");
        let (code, stdout, _) = run(check(clean.path()).args(["--output-format", format]));
        assert_eq!(code, 0, "{format}");
        match format {
            "json" | "gitlab" => assert_eq!(stdout, "[]\n"),
            "json-lines" | "github" => assert_eq!(stdout, ""),
            "sarif" => assert_github_sarif(&serde_json::from_str(&stdout).unwrap()),
            _ => {}
        }
    }
}

//! Confinement, tested as an attack: a hostile repository, created at run time, names files outside itself in
//! every way a path enters capslint (kustomize `resources`, `bases`, `components`, patches of every form,
//! `replacements`; DAG pod templates, relative and absolute; imported Python modules; symbolic links met by
//! the walk or named on the command line; FIFOs and `/proc`). Beside it, a directory of secrets. No byte of
//! a secret may reach any output format, stdout or stderr, with or without `--fix`; no file outside the
//! repository may be opened (watched with inotify) or written; no run may hang.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::support::*;

/// The string every secret file holds: it must never be printed.
const MARKER: &str = "SECRET-7f3a9c";

/// A Pod whose findings would be printed with its lines, were it read.
fn secret_pod() -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {MARKER}\nspec:\n  containers:\n  - name: {MARKER}\n    image: python\n    args: [\"{MARKER}\"]\n"
    )
}

/// The hostile repository and the secrets beside it.
struct Scene {
    _dir: TempDir,
    repo: PathBuf,
    outside: PathBuf,
    /// The parent of both (a Python module here is "above" the repository).
    base: PathBuf,
}

fn mkfifo(path: &Path) {
    let name = CString::new(path.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0, "mkfifo {}", path.display());
}

fn scene() -> Scene {
    let dir = TempDir::new().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let repo = base.join("repo");
    let outside = base.join("outside");
    fs::create_dir_all(repo.join(".git")).unwrap();
    let secret = outside.join("secret.yaml");
    let secret_abs = secret.display().to_string();

    // The secrets: manifests, a kustomization, Python modules, a pod template.
    write(&outside, "secret.yaml", &secret_pod());
    write(&outside, "kustomization.yaml", "resources:\n- secret.yaml\n");
    write(&outside, "helper.py", &format!("N_JOBS = -1  # {MARKER}\n"));
    write(&outside, "templates/pod.yaml", &secret_pod());
    write(&base, "secretmod.py", &format!("N_JOBS = -1  # {MARKER}\n"));

    // Kustomizations that reach out in every field.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  containers:\n  - name: train\n    image: python\n";
    for (overlay, kustomization) in [
        ("relative", "resources:\n- ../../../outside/secret.yaml\n".to_string()),
        ("absolute", format!("resources:\n- {secret_abs}\n")),
        ("proc", "resources:\n- /proc/self/environ\n".to_string()),
        ("base-dir", "bases:\n- ../../../outside\n".to_string()),
        ("component", "resources:\n- pod.yaml\ncomponents:\n- ../../../outside\n".to_string()),
        ("patch", "resources:\n- pod.yaml\npatches:\n- path: ../../../outside/secret.yaml\n".to_string()),
        ("strategic", format!("resources:\n- pod.yaml\npatchesStrategicMerge:\n- {secret_abs}\n")),
        (
            "json6902",
            "resources:\n- pod.yaml\npatchesJson6902:\n- target: {kind: Pod, name: train}\n  path: ../../../outside/secret.yaml\n"
                .to_string(),
        ),
        ("replacements", "resources:\n- pod.yaml\nreplacements:\n- path: ../../../outside/secret.yaml\n".to_string()),
        ("fifo", "resources:\n- pod.yaml\n- fifo.yaml\n".to_string()),
        ("linked", "resources:\n- pod.yaml\n- link-to-secret.yaml\n".to_string()),
    ] {
        write(&repo, &format!("deploy/{overlay}/kustomization.yaml"), &kustomization);
        write(&repo, &format!("deploy/{overlay}/pod.yaml"), pod);
    }
    mkfifo(&repo.join("deploy/fifo/fifo.yaml"));
    symlink(&secret, repo.join("deploy/linked/link-to-secret.yaml")).unwrap();

    // Links met by the walk: to a file, to a directory, to /proc.
    symlink(&secret, repo.join("deploy/secret-link.yaml")).unwrap();
    symlink(&outside, repo.join("deploy/outside-dir")).unwrap();
    symlink("/proc/self/environ", repo.join("deploy/environ.yaml")).unwrap();
    symlink(outside.join("helper.py"), repo.join("helper.py")).unwrap();

    // Python that imports a module through a link, and one above the repository.
    write(
        &repo,
        "train.py",
        "from helper import N_JOBS\nfrom sklearn.svm import SVC\nfrom sklearn.ensemble import RandomForestClassifier\n\nRandomForestClassifier(n_jobs=N_JOBS)\n",
    );
    write(
        &repo,
        "pkg/job.py",
        "from secretmod import N_JOBS\nfrom sklearn.ensemble import RandomForestClassifier\n\nRandomForestClassifier(n_jobs=N_JOBS)\n",
    );
    // A DAG that names templates outside, relatively and absolutely.
    write(
        &repo,
        "dags/dag.py",
        &format!(
            "from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator\n\n\
             KubernetesPodOperator(task_id=\"abs\", pod_template_file=\"{}\")\n\
             KubernetesPodOperator(task_id=\"rel\", pod_template_file=\"../../outside/templates/pod.yaml\")\n",
            outside.join("templates/pod.yaml").display()
        ),
    );
    // A finding the runs must still report, with a fix.
    write(&repo, "zz_good_finding.py", "from joblib import Parallel\n\nParallel(n_jobs=-1)\n");
    Scene { _dir: dir, repo, outside, base }
}

/// Every file below `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let metadata = entry.metadata().unwrap();
            if metadata.is_dir() {
                pending.push(entry.path());
            } else if metadata.is_file() {
                files.push((entry.path(), fs::read(entry.path()).unwrap(), metadata.modified().unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// Opens of files in the watched directories, seen through inotify.
struct OpenWatch {
    fd: i32,
}

impl OpenWatch {
    fn new(directories: &[&Path]) -> OpenWatch {
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(fd >= 0, "inotify_init1");
        for directory in directories {
            let name = CString::new(directory.as_os_str().as_bytes()).unwrap();
            let watch = unsafe { libc::inotify_add_watch(fd, name.as_ptr(), libc::IN_OPEN | libc::IN_ACCESS) };
            assert!(watch >= 0, "inotify_add_watch {}", directory.display());
        }
        OpenWatch { fd }
    }

    /// How many files were opened or read since the watch began.
    fn events(&self) -> usize {
        let mut buffer = [0u8; 65536];
        let mut count = 0;
        loop {
            let read = unsafe { libc::read(self.fd, buffer.as_mut_ptr().cast(), buffer.len()) };
            if read <= 0 {
                return count;
            }
            let mut offset = 0;
            while offset < read as usize {
                let event =
                    unsafe { std::ptr::read_unaligned(buffer.as_ptr().add(offset).cast::<libc::inotify_event>()) };
                // Opening the repository's own directory is reported by its parent's watch.
                if event.mask & libc::IN_ISDIR == 0 {
                    count += 1;
                }
                offset += std::mem::size_of::<libc::inotify_event>() + event.len as usize;
            }
        }
    }
}

impl Drop for OpenWatch {
    fn drop(&mut self) {
        unsafe { libc::close(self.fd) };
    }
}

const FORMATS: &[&str] = &["full", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit"];

#[test]
fn no_byte_of_a_file_outside_the_repository_is_read_printed_or_written() {
    let scene = scene();
    let before_outside = snapshot(&scene.outside);
    let watch = OpenWatch::new(&[&scene.outside, &scene.outside.join("templates"), &scene.base]);
    let mut runs: Vec<Vec<&str>> = FORMATS.iter().map(|format| vec!["--output-format", format]).collect();
    runs.push(vec!["--diff", "--unsafe-fixes"]);
    runs.push(vec!["--statistics"]);
    runs.push(vec!["--show-files"]);
    for args in &runs {
        let output = capslint(&scene.repo).args(["check", "--isolated"]).args(args).output().unwrap();
        let (code, stdout, stderr) = outcome(&output);
        assert!(!stdout.contains(MARKER) && !stderr.contains(MARKER), "{args:?} printed a secret:\n{stdout}\n{stderr}");
        assert!(code == 1 || (code == 0 && args.contains(&"--show-files")), "{args:?}: exit {code}\n{stderr}");
        if args.contains(&"concise") {
            assert!(stdout.contains("zz_good_finding.py:3:10: CAP101"), "the repository's own findings: {stdout}");
            for note in [
                "`deploy/secret-link.yaml` resolves outside the scanned root: skipped",
                "`deploy/environ.yaml` is a system file: skipped",
                "`helper.py` resolves outside the scanned root: skipped",
                "deploy/relative: kustomization not rendered: the resource",
                "deploy/absolute: kustomization not rendered: the resource",
                "deploy/proc: kustomization not rendered: the resource `/proc/self/environ` is a system file",
                "deploy/base-dir: kustomization not rendered",
                "deploy/component: kustomization not rendered: the component",
                "deploy/patch: kustomization not rendered: the patch",
                "deploy/strategic: kustomization not rendered: the patch",
                "deploy/json6902: kustomization not rendered: the patch",
                "deploy/fifo: kustomization not rendered: the resource `deploy/fifo/fifo.yaml` is not a regular file",
                "deploy/linked: kustomization not rendered: the resource `deploy/linked/link-to-secret.yaml` resolves outside",
                "dags/dag.py: the `pod_template_file` `../../outside/templates/pod.yaml` resolves outside the scanned root",
                "is a path on the Airflow worker; it is checked when `[airflow] template-roots`",
            ] {
                assert!(stderr.contains(note), "missing note `{note}`:\n{stderr}");
            }
            // The overlays' own files are still checked, as written.
            assert!(stdout.contains("deploy/patch/pod.yaml:7:11: CAP201"), "{stdout}");
        }
    }
    for args in [vec!["--fix", "--unsafe-fixes"], vec!["--add-noqa"]] {
        let output = capslint(&scene.repo).args(["check", "--isolated"]).args(&args).output().unwrap();
        let (_, stdout, stderr) = outcome(&output);
        assert!(!stdout.contains(MARKER) && !stderr.contains(MARKER), "{args:?} printed a secret:\n{stdout}\n{stderr}");
    }
    assert_eq!(watch.events(), 0, "a file outside the repository was opened");
    assert_eq!(snapshot(&scene.outside), before_outside, "a file outside the repository changed");
    // The repository's own file was fixed.
    assert!(fs::read_to_string(scene.repo.join("zz_good_finding.py")).unwrap().contains("Parallel(n_jobs=1"));
}

#[test]
fn paths_named_on_the_command_line_are_confined_too() {
    let scene = scene();
    let watch = OpenWatch::new(&[&scene.outside]);
    // A link named explicitly: skipped with a note, as in the walk.
    let output = capslint(&scene.repo).args(["check", "--isolated", "deploy/secret-link.yaml"]).output().unwrap();
    let (code, stdout, stderr) = outcome(&output);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("`deploy/secret-link.yaml` resolves outside the scanned root: skipped"), "{stderr}");
    assert!(!stdout.contains(MARKER) && !stderr.contains(MARKER));
    // A path through a linked directory.
    let output =
        capslint(&scene.repo).args(["check", "--isolated", "deploy/outside-dir/secret.yaml"]).output().unwrap();
    let (_, stdout, stderr) = outcome(&output);
    assert!(stderr.contains("resolves outside the scanned root: skipped"), "{stderr}");
    assert!(!stdout.contains(MARKER) && !stderr.contains(MARKER));
    assert_eq!(watch.events(), 0, "a file outside the repository was opened");
    // A FIFO named explicitly is an error, and does not hang; so is a system file.
    let output = capslint(&scene.repo).args(["check", "--isolated", "deploy/fifo/fifo.yaml"]).output().unwrap();
    let (code, _, stderr) = outcome(&output);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
    let output = capslint(&scene.repo).args(["check", "--isolated", "/proc/self/environ"]).output().unwrap();
    let (code, stdout, stderr) = outcome(&output);
    assert_ne!(code, 1, "{stdout}{stderr}");
    assert!(stdout.is_empty() || !stdout.contains("CAP"), "{stdout}");
}

#[test]
fn a_file_reached_through_a_link_inside_the_root_is_checked_and_fixed_as_itself() {
    let dir = TempDir::new().unwrap();
    let repo = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir_all(repo.join(".git")).unwrap();
    write(&repo, "real/train.py", "from joblib import Parallel\n\nParallel(n_jobs=-1)\n");
    // The link sorts before the file it leads to.
    symlink(repo.join("real/train.py"), repo.join("a_alias.py")).unwrap();
    symlink(repo.join("real"), repo.join("a_dir")).unwrap();
    let output = capslint(&repo).args(["check", "--isolated", "--output-format", "concise"]).output().unwrap();
    let (code, stdout, _) = outcome(&output);
    assert_eq!(code, 1);
    assert_eq!(stdout.lines().filter(|line| line.contains("CAP101")).collect::<Vec<_>>().len(), 1, "{stdout}");
    assert!(stdout.contains("real/train.py:3:10: CAP101"), "the file is named as itself: {stdout}");
    // Named only through the link, it is checked, but never written through it.
    let output =
        capslint(&repo).args(["check", "--isolated", "--fix", "--unsafe-fixes", "a_alias.py"]).output().unwrap();
    let (code, _, stderr) = outcome(&output);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("a_alias.py: 1 fix not applied: it is reached through a symbolic link"), "{stderr}");
    assert!(fs::symlink_metadata(repo.join("a_alias.py")).unwrap().file_type().is_symlink());
    assert!(fs::read_to_string(repo.join("real/train.py")).unwrap().contains("n_jobs=-1"));
    let output =
        capslint(&repo).args(["check", "--isolated", "--fix", "--unsafe-fixes", "a_dir/train.py"]).output().unwrap();
    let (_, _, stderr) = outcome(&output);
    assert!(stderr.contains("reached through a symbolic link"), "{stderr}");
    assert!(fs::read_to_string(repo.join("real/train.py")).unwrap().contains("n_jobs=-1"));
    // Named as itself, it is fixed.
    capslint(&repo).args(["check", "--isolated", "--fix", "--unsafe-fixes", "."]).output().unwrap();
    assert!(fs::read_to_string(repo.join("real/train.py")).unwrap().contains("n_jobs=1"));
    assert!(fs::symlink_metadata(repo.join("a_alias.py")).unwrap().file_type().is_symlink());
}

#[test]
fn an_absolute_pod_template_is_found_under_the_configured_template_roots() {
    let dir = TempDir::new().unwrap();
    let repo = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir_all(repo.join(".git")).unwrap();
    write(&repo, "capslint.toml", "[airflow]\ntemplate-roots = [\"deploy/pod_templates\"]\n");
    write(
        &repo,
        "deploy/pod_templates/gpu/train.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  containers:\n  - name: base\n    image: python\n",
    );
    write(
        &repo,
        "dags/dag.py",
        "from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator\n\n\
         KubernetesPodOperator(task_id=\"t\", pod_template_file=\"/opt/airflow/pod_templates/gpu/train.yaml\")\n",
    );
    let output = capslint(&repo).args(["check", "--output-format", "concise"]).output().unwrap();
    let (code, stdout, stderr) = outcome(&output);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.contains("deploy/pod_templates/gpu/train.yaml:7:11: CAP201"), "{stdout}\n{stderr}");
    assert!(!stderr.contains("path on the Airflow worker"), "{stderr}");
}

#[test]
fn configuration_above_the_repository_does_not_apply_to_it() {
    let dir = TempDir::new().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    // A configuration in a directory above the repository would silence everything.
    write(&base, "capslint.toml", "ignore = [\"ALL\"]\n");
    let repo = base.join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    write(&repo, "train.py", "from joblib import Parallel\n\nParallel(n_jobs=-1)\n");
    let output = capslint(&repo).args(["check", "--output-format", "concise"]).output().unwrap();
    let (code, stdout, _) = outcome(&output);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("train.py:3:10: CAP101"), "{stdout}");
}

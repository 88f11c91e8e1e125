//! A run over paths that checks each file as soon as the walk finds it ([`check`]): the walk (system calls,
//! on the walk's own threads) and the checks (on the pool) overlap, instead of the checks waiting for the
//! whole tree to be listed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::iter::{ParallelBridge, ParallelIterator};

use capslint_python::ProjectIndex;
use capslint_workspace::discover::{self, Discovered, FileKind, Found, Identities, MissingPath};
use capslint_workspace::settings::{ResolveError, Settings, SettingsResolver};

use crate::lint::{FileResult, Input, RunResult, check_input_in, combine, drop_aside, scanned_yaml};

/// What [`check`] made of a walk.
#[derive(Debug)]
pub struct WalkedRun {
    /// What the walk met; its `files` are the files chosen to be checked.
    pub discovered: Discovered,
    /// The run over the files chosen and their inputs (contents not held), or the first error in
    /// resolving the settings of one of them.
    pub run: Result<(RunResult, Vec<Input>), ResolveError>,
}

/// [`check_inputs`](crate::lint::check_inputs) of the files under `paths`, each checked as soon as the
/// walk finds it, so that the walk and the checks overlap. The files reached by several paths are told
/// apart once the walk is done ([`discover::chosen`]), and only the results of the files chosen are kept:
/// the run is the one `check_inputs` makes of the files [`discover::discover`] chooses.
pub fn check(
    paths: &[PathBuf],
    resolver: &SettingsResolver,
    force_exclude: bool,
    cwd: &Path,
) -> Result<WalkedRun, MissingPath> {
    let project = ProjectIndex::new(cwd.to_path_buf(), resolver.confinement());
    let (sender, receiver) = std::sync::mpsc::channel::<Found>();
    let (walked, checked) = std::thread::scope(|scope| {
        let walker = scope.spawn(move || {
            discover::walk(paths, resolver, force_exclude, Identities::FromTheReader, &|file| {
                // The receiving end lives until the walk is done.
                let _ = sender.send(file);
            })
        });
        let checked: Vec<(Found, Checked)> = receiver
            .into_iter()
            .par_bridge()
            .map(|file| {
                let checked = resolver.for_file(&file.path).map(|settings| {
                    let input = input_of(&file.path, file.kind, settings, cwd);
                    let display_name = input.display_name.clone();
                    (input.settings.clone(), display_name, check_input_in(input, &project))
                });
                // The check read the file: its identity comes from that read.
                let id = checked.as_ref().ok().and_then(|(_, _, result)| result.file_id.clone());
                (file.identified_as(id), checked)
            })
            .collect();
        (walker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), checked)
    });
    let mut discovered = walked?;
    // Everything below runs on one thread while the pool waits: no path is hashed or shown again.
    let (found, checked): (Vec<Found>, Vec<Checked>) = checked.into_iter().unzip();
    let chosen = discover::chosen_indices(&found);
    discovered.files = chosen.iter().map(|&index| (found[index].path.clone(), found[index].kind)).collect();
    let mut checked: Vec<Option<Checked>> = checked.into_iter().map(Some).collect();
    let run = chosen
        .iter()
        .map(|&index| {
            let (settings, display_name, result) = checked[index].take().expect("each file is chosen once")?;
            let Found { path, kind, .. } = &found[index];
            let input = Input { path: path.clone(), display_name, kind: *kind, contents: None, settings };
            Ok((input, result))
        })
        .collect::<Result<(Vec<Input>, Vec<FileResult>), ResolveError>>()
        .map(|(inputs, results)| {
            let scanned = scanned_yaml(&inputs);
            drop_aside(project);
            (combine(results, &scanned), inputs)
        });
    Ok(WalkedRun { discovered, run })
}

/// A file checked while the walk ran: the settings it was checked with, its name as shown and its result,
/// or why its settings could not be resolved.
type Checked = Result<(Arc<Settings>, String, FileResult), ResolveError>;

/// The input of a file found on disk.
fn input_of(path: &Path, kind: FileKind, settings: Arc<Settings>, cwd: &Path) -> Input {
    Input { path: path.to_path_buf(), display_name: discover::display_name(path, cwd), kind, contents: None, settings }
}

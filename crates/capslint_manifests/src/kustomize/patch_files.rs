//! The fallback for kustomize patches whose overlay is not rendered (a remote base, a Helm chart, an
//! overlay outside the scan): a strategic-merge patch names a Deployment and the one container field it
//! changes, and gets the rest (image, limits, env) from the base. A manifest file that a
//! `kustomization.yaml` of its directory or one above lists under `patches`, `patchesStrategicMerge` or
//! `patchesJson6902` has its containers checked as partial: values it writes are checked, values it
//! leaves out are not reported missing.

use std::path::{Path, PathBuf};

use rustc_hash::{FxHashMap, FxHashSet};

use capslint_workspace::confine::ConfinedReader;
use capslint_workspace::paths;
use capslint_yaml::{self as yaml, Node};

use super::load::KUSTOMIZATION_FILES;

/// How many directories above a manifest a kustomization that patches it may be (an overlay's
/// `patches/` directory, a component's subdirectory).
const LEVELS_UP: usize = 3;

/// A kustomization larger than this is not read (they are a few hundred bytes).
const MAX_KUSTOMIZATION_BYTES: u64 = 1 << 20;

/// The absolute, normalised paths of the patch files listed by the kustomizations in the directories of
/// `manifests` and up to [`LEVELS_UP`] directories above them.
pub fn patch_files<'p>(
    manifests: impl IntoIterator<Item = &'p Path>,
    cwd: &Path,
    reader: &ConfinedReader,
) -> FxHashSet<PathBuf> {
    let mut directories: FxHashMap<PathBuf, ()> = FxHashMap::default();
    for manifest in manifests {
        let absolute = paths::absolute(manifest, cwd);
        for directory in absolute.ancestors().skip(1).take(LEVELS_UP + 1) {
            directories.insert(directory.to_path_buf(), ());
        }
    }
    let mut patches = FxHashSet::default();
    for directory in directories.keys() {
        for name in KUSTOMIZATION_FILES {
            let path = directory.join(name);
            if let Ok(text) = reader.read_to_string(&path, &path.display().to_string(), MAX_KUSTOMIZATION_BYTES) {
                listed_patches(&text, directory, &mut patches);
            }
        }
    }
    patches
}

/// Adds the patch files a kustomization lists, resolved against its `directory`.
fn listed_patches(text: &str, directory: &Path, patches: &mut FxHashSet<PathBuf>) {
    let mut add = |relative: &str| {
        if !relative.contains('\n') && !relative.trim().is_empty() {
            patches.insert(paths::normalize(&directory.join(relative.trim())));
        }
    };
    // A kustomization that does not parse is kustomize's to report; it lists nothing here.
    let _ = yaml::for_each_document(text, |document: Node<'_>| {
        for key in ["patches", "patchesJson6902"] {
            for patch in document.get(key).into_iter().flat_map(Node::items) {
                if let Some(path) = patch.get("path").and_then(Node::as_str) {
                    add(path);
                }
            }
        }
        // Paths, or inline patches (which name no file).
        for patch in document.get("patchesStrategicMerge").into_iter().flat_map(Node::items) {
            if let Some(path) = patch.as_str() {
                add(path);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use capslint_workspace::confine::Confinement;
    use std::sync::Arc;

    #[test]
    fn patches_listed_every_way_are_found_relative_to_their_kustomization() {
        let dir = tempfile::TempDir::new().unwrap();
        let overlay = dir.path().join("overlays/prod");
        std::fs::create_dir_all(overlay.join("patches")).unwrap();
        std::fs::write(
            overlay.join("kustomization.yaml"),
            "resources:\n- ../../base\npatches:\n- path: patches/cpu.yaml\n- patch: |-\n    - op: replace\n      path: /spec/replicas\n      value: 3\npatchesStrategicMerge:\n- env.yaml\n- |-\n  apiVersion: apps/v1\n  kind: Deployment\npatchesJson6902:\n- target: {kind: Deployment, name: train}\n  path: json/replicas.yaml\n",
        )
        .unwrap();
        let manifest = overlay.join("patches/cpu.yaml");
        let found = patch_files(
            [manifest.as_path()],
            dir.path(),
            &ConfinedReader::new(Arc::new(Confinement::new([dir.path().to_path_buf()]))),
        );
        let expected: FxHashSet<PathBuf> = ["patches/cpu.yaml", "env.yaml", "json/replicas.yaml"]
            .iter()
            .map(|relative| overlay.join(relative))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn no_kustomization_no_patches() {
        let dir = tempfile::TempDir::new().unwrap();
        let manifest = dir.path().join("deploy/train.yaml");
        assert!(
            patch_files(
                [manifest.as_path()],
                dir.path(),
                &ConfinedReader::new(Arc::new(Confinement::new([dir.path().to_path_buf()])))
            )
            .is_empty()
        );
    }
}

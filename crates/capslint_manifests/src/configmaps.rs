//! Every ConfigMap of the scan, found by name and namespace, so `envFrom` and `configMapKeyRef` can be
//! resolved across files.

use rustc_hash::FxHashMap;

use super::model::ConfigMapData;

/// Where a ConfigMap is: the file and object indices of the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigMapRef<'p> {
    /// The file.
    pub file: usize,
    /// The object in that file.
    pub object: usize,
    /// Its data.
    pub data: &'p ConfigMapData,
}

/// ConfigMaps by name, in scan order (files sorted by name, objects in document order).
#[derive(Debug, Default)]
pub struct ConfigMapIndex<'p> {
    by_name: FxHashMap<&'p str, Vec<ConfigMapRef<'p>>>,
}

impl<'p> ConfigMapIndex<'p> {
    /// Adds a ConfigMap.
    pub fn insert(&mut self, found: ConfigMapRef<'p>) {
        self.by_name.entry(found.data.name.as_str()).or_default().push(found);
    }

    /// The ConfigMap `name` as seen from a workload in `namespace` of `file`: one in the same namespace
    /// wins over one whose namespace is not written down (either side), and the same file wins over
    /// another; a ConfigMap in a different namespace is never used.
    pub fn find(&self, name: &str, namespace: Option<&str>, file: usize) -> Option<ConfigMapRef<'p>> {
        let candidates = self.by_name.get(name)?;
        let rank = |found: &ConfigMapRef<'p>| -> Option<u8> {
            let same_namespace = match (namespace, found.data.namespace.as_deref()) {
                (Some(wanted), Some(actual)) if wanted == actual => true,
                (Some(_), Some(_)) => return None,
                _ => false,
            };
            Some(u8::from(!same_namespace) * 2 + u8::from(found.file != file))
        };
        candidates
            .iter()
            .filter_map(|found| Some((rank(found)?, *found)))
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, found)| found)
    }
}

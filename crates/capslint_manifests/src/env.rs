//! The environment a container's process starts with, as far as the scan can tell: `envFrom` sources in
//! order, then `env` entries (later ones win, as the kubelet does), then what `capslint exec` sets for
//! the variables still unset. A ConfigMap that is not in the scan, or a Secret, makes the environment
//! incomplete: rules that need the whole set then stay silent unless `--strict`.
//!
//! Lookups are by name and nothing is copied, so a huge ConfigMap shared by many containers costs nothing
//! per container.

use super::configmaps::{ConfigMapIndex, ConfigMapRef};
use super::exec::starts_through_capslint;
use super::model::{Container, EnvFromSource, EnvSource, EnvVar, Value};

/// How many `$(VAR)` references are followed before giving up.
const MAX_REFERENCES: usize = 8;

/// Where a variable's value comes from.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'p> {
    /// An `env` entry; `position` is its index in `env`.
    Env {
        /// The entry.
        var: &'p EnvVar,
        /// Its index in `env`.
        position: usize,
    },
    /// A key of an `envFrom` ConfigMap.
    ConfigMap {
        /// The ConfigMap.
        map: ConfigMapRef<'p>,
        /// The value.
        value: &'p Value,
    },
    /// Set by `capslint exec` from the pod's CPU limit.
    Exec,
}

/// What a variable's value is, resolved through `$(VAR)` references and `configMapKeyRef`.
#[derive(Debug, Clone, Copy)]
pub enum Resolved<'p> {
    /// A literal, written in the container's file or in a ConfigMap.
    Literal {
        /// The value.
        value: &'p Value,
        /// The ConfigMap that holds it, when it is not the container's `env`.
        map: Option<ConfigMapRef<'p>>,
        /// The `env` entry that picks it from the ConfigMap with `configMapKeyRef`.
        reference: Option<&'p EnvVar>,
    },
    /// The Downward API: `valueFrom.resourceFieldRef`.
    ResourceField {
        /// The `env` entry that declares it.
        var: &'p EnvVar,
    },
    /// Derived from the CPU limit by `capslint exec`.
    Exec,
    /// Not known statically (a Secret, a `fieldRef`, a ConfigMap outside the scan).
    Unknown,
}

/// The effective environment of one container.
#[derive(Debug, Clone, Default)]
pub struct Env<'p> {
    vars: &'p [EnvVar],
    from: Vec<(ConfigMapRef<'p>, &'p str)>,
    /// Whether the container starts through `capslint exec`.
    pub exec: bool,
    /// The sources capslint could not read (`ConfigMap `caps``, `an envFrom Secret`).
    pub unresolved: Vec<String>,
}

impl<'p> Env<'p> {
    /// Resolves the environment of `container` in `namespace`, declared in file `file`.
    pub fn of(container: &'p Container, namespace: Option<&str>, file: usize, maps: &ConfigMapIndex<'p>) -> Env<'p> {
        let mut env = Env { vars: &container.env, exec: starts_through_capslint(&container.argv()), ..Env::default() };
        for from in &container.env_from {
            match &from.source {
                EnvFromSource::ConfigMap(name) => match maps.find(name, namespace, file) {
                    Some(map) => env.from.push((map, from.prefix.as_str())),
                    None => env.unresolved.push(format!("ConfigMap `{name}`")),
                },
                EnvFromSource::Opaque => env.unresolved.push("an `envFrom` Secret".to_string()),
            }
        }
        if container.env_open {
            env.unresolved.push("an `env` capslint cannot read".to_string());
        }
        env
    }

    /// Whether every source of the environment is known.
    pub fn complete(&self) -> bool {
        self.unresolved.is_empty()
    }

    /// Where `name` is set explicitly: the last `env` entry before `before`, else the last `envFrom`
    /// ConfigMap that has it.
    fn explicit_before(&self, name: &str, before: usize) -> Option<Origin<'p>> {
        let vars = &self.vars[..before.min(self.vars.len())];
        if let Some((position, var)) = vars.iter().enumerate().rev().find(|(_, var)| var.name == name) {
            return Some(Origin::Env { var, position });
        }
        self.from.iter().rev().find_map(|(map, prefix)| {
            let value = map.data.get(name.strip_prefix(prefix)?)?;
            Some(Origin::ConfigMap { map: *map, value })
        })
    }

    /// Where `name` is set explicitly (not by `capslint exec`).
    pub fn explicit(&self, name: &str) -> Option<Origin<'p>> {
        self.explicit_before(name, usize::MAX)
    }

    /// Where `name` is set, `capslint exec` included.
    pub fn get(&self, name: &str) -> Option<Origin<'p>> {
        self.explicit(name).or(self.exec.then_some(Origin::Exec))
    }

    /// What the value of a variable is, following `$(VAR)` (to variables defined before it, as the kubelet
    /// expands them) and `configMapKeyRef`.
    pub fn resolve(
        &self,
        origin: Origin<'p>,
        namespace: Option<&str>,
        file: usize,
        maps: &ConfigMapIndex<'p>,
    ) -> Resolved<'p> {
        let mut current = origin;
        for _ in 0..MAX_REFERENCES {
            match current {
                Origin::Exec => return Resolved::Exec,
                Origin::ConfigMap { map, value } => {
                    return Resolved::Literal { value, map: Some(map), reference: None };
                }
                Origin::Env { var, position } => match &var.source {
                    EnvSource::ResourceField { .. } => return Resolved::ResourceField { var },
                    EnvSource::Other => return Resolved::Unknown,
                    EnvSource::ConfigMapKey { name, key } => {
                        return match maps.find(name, namespace, file).and_then(|map| Some((map, map.data.get(key)?))) {
                            Some((map, value)) => Resolved::Literal { value, map: Some(map), reference: Some(var) },
                            None => Resolved::Unknown,
                        };
                    }
                    EnvSource::Literal(value) => {
                        let earlier = reference(&value.text).and_then(|target| self.explicit_before(target, position));
                        match earlier {
                            Some(next) => current = next,
                            // Not a reference, or one to an undefined variable: the text is the value.
                            None => return Resolved::Literal { value, map: None, reference: None },
                        }
                    }
                },
            }
        }
        Resolved::Unknown
    }
}

/// `NAME` when `text` is exactly `$(NAME)`.
fn reference(text: &str) -> Option<&str> {
    let name = text.strip_prefix("$(")?.strip_suffix(')')?;
    (!name.is_empty() && !name.contains(['(', ')', '$'])).then_some(name)
}

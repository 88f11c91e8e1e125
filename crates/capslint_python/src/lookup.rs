//! What resolution asks of the rest of the project: the value another module gives an imported name, and
//! the pod operator an imported class stands for. The project index answers ([`super::project`]); the
//! resolver only asks, so it does not depend on how modules are found, read and summarised.

use super::limits::Cut;
use super::value::{CapNames, Resolved};

/// The other modules of the project, as resolution sees them.
pub trait ProjectLookup {
    /// The value the project gives the imported name `qualified`, with its definition as the binding;
    /// `Ok(None)` when the project does not define it, the [`Cut`] when a limit stopped the lookup.
    fn value(&self, qualified: &str, caps: &CapNames) -> Result<Option<Resolved<'static>>, Cut>;

    /// The canonical pod operator the imported class `qualified` stands for, when it is a subclass of one
    /// without an `__init__` of its own that may set resources or environment; the [`Cut`] when a limit
    /// stopped the lookup.
    fn pod_operator(&self, qualified: &str, caps: &CapNames) -> Result<Option<String>, Cut>;
}

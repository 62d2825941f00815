//! The two shapes a HyperFleet spec is written in, named by one mechanism for the cluster and the
//! NodePool spec: HyperFleet's own (nested camelCase, the primary input) and the seed's flat
//! snake_case keys.
//!
//! - [`spec_names!`] declares, from one table, a struct with the name of each field a validator
//!   reads (the names violations and immutable changes give) and one constant of it per shape:
//!   each row names the field in both shapes side by side.
//! - [`ShapeKeys`] lists the keys only one shape has; [`ShapeKeys::shape_of`] tells which shape
//!   a spec is written in, or that it mixes both.

/// Declares a struct naming spec fields and one constant of it per shape, from one table. Each
/// row is `field: type = (in HyperFleet's shape, in the flat shape)`; the type is
/// `&'static str` when left out.
///
/// ```text
/// spec_names! {
///     /// The names of the NodePool settings both shapes have.
///     struct Keys {
///         /// HyperFleet's names.
///         const HYPERFLEET_KEYS;
///         /// The flat names.
///         const FLAT_KEYS;
///         zone = ("platform.gcp.zones", "platform.gcp.zone"),
///     }
/// }
/// ```
macro_rules! spec_names {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(#[$hyperfleet_meta:meta])*
            const $hyperfleet:ident;
            $(#[$flat_meta:meta])*
            const $flat:ident;
            $(
                $(#[$field_meta:meta])*
                $field_vis:vis $field:ident $(: $ty:ty)? = ($in_hyperfleet:expr, $in_flat:expr $(,)?),
            )*
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$field_meta])*
                $field_vis $field: $crate::hyperfleet::spec::shapes::spec_names!(@type $($ty)?),
            )*
        }

        $(#[$hyperfleet_meta])*
        $vis const $hyperfleet: $name = $name { $($field: $in_hyperfleet,)* };

        $(#[$flat_meta])*
        $vis const $flat: $name = $name { $($field: $in_flat,)* };
    };
    (@type) => { &'static str };
    (@type $ty:ty) => { $ty };
}
pub(crate) use spec_names;

/// The keys that tell a spec's two shapes apart.
#[derive(Debug)]
pub struct ShapeKeys {
    /// Keys only the flat shape has, each with where HyperFleet's shape carries its value.
    pub flat_only: &'static [(&'static str, &'static str)],
    /// Keys only HyperFleet's shape has.
    pub hyperfleet_only: &'static [&'static str],
}

/// The shape a spec is written in, by its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// HyperFleet's shape: no key only the flat shape has (an empty spec too, so what is missing
    /// is named as HyperFleet names it).
    HyperFleet,
    /// The flat shape: a key only it has, none only HyperFleet's has.
    Flat,
    /// Keys only one shape has from both: the flat ones (each with HyperFleet's name for it) and
    /// HyperFleet's, in [`ShapeKeys`] order.
    Mixed {
        flat: Vec<(&'static str, &'static str)>,
        hyperfleet: Vec<&'static str>,
    },
}

impl ShapeKeys {
    /// The shape of a spec that has the keys `has` says it has.
    pub fn shape_of(&self, has: impl Fn(&str) -> bool) -> Written {
        let flat: Vec<_> = self
            .flat_only
            .iter()
            .copied()
            .filter(|(key, _)| has(key))
            .collect();
        if flat.is_empty() {
            return Written::HyperFleet;
        }
        let hyperfleet: Vec<_> = self
            .hyperfleet_only
            .iter()
            .copied()
            .filter(|key| has(key))
            .collect();
        if hyperfleet.is_empty() {
            return Written::Flat;
        }
        Written::Mixed { flat, hyperfleet }
    }
}

//! Tests of the HyperFleet input as a whole (beside each module's own).

mod oracle;

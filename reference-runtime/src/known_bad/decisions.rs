//! The `decisions!` macro: a table of rows `decision => Defect` declaring, on a type holding a
//! defect set in its `defects` field, one method per row (whether that decision is taken the
//! defective way) and a constant listing the rows (each defect appears in exactly one row of
//! exactly one table: the engine's, `policy.rs`, or the wire's, `wire/rewrites.rs`).

/// Declares the decisions of `$owner` and the table `$table` of `(decision, defect)` rows.
macro_rules! decisions {
    ($owner:ident, $table:ident { $( $decision:ident => $defect:ident, )* }) => {
        impl $owner {
            $(
                #[doc = concat!("Whether this decision is taken the defective way: ",
                    "[`Defect::", stringify!($defect), "`].")]
                pub(crate) fn $decision(&self) -> bool {
                    self.defects.has(Defect::$defect)
                }
            )*
        }

        /// Every decision of the table with the defect that turns it, in catalogue order.
        pub(in crate::known_bad) const $table: &[(&str, Defect)] = &[$( (stringify!($decision), Defect::$defect), )*];
    };
}

pub(super) use decisions;

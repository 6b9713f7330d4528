//! PostgreSQL `numeric`: arbitrary precision decimal with NaN and ±Infinity.

/// A numeric value. `Finite` holds the exact decimal with its display scale.
#[derive(Clone, Debug, PartialEq)]
pub enum Numeric {
    NaN,
    PosInf,
    NegInf,
    Finite(bigdecimal::BigDecimal),
}

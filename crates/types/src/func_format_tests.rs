//! Expected values were printed by PostgreSQL 15.

use super::*;

#[test]
fn smoke() {
    assert_eq!(quote_identifier("select"), "\"select\"");
}

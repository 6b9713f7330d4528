//! [`RelMap`]: one kind of catalog entry (tables, indexes or sequences) found by oid, by name
//! and by owner, in persistent maps, with the set of oids changed since the last
//! [`RelMap::clear_changes`].
//!
//! Invariants (kept by every mutating method, the only way to change the maps):
//! - `by_name[e.name] == e.oid` for every entry `e` in `by_oid` (names are unique per kind; the
//!   DDL checks the shared namespace before it inserts);
//! - `owned[o]` holds exactly the oids of the entries whose `owner()` is `o`, and no set is
//!   empty;
//! - `changed` holds every oid inserted, replaced or removed since the last `clear_changes`.
//!
//! All four are `imbl` persistent maps: a clone shares every node and costs O(1); an insert
//! copies only the O(log n) nodes on its path.

use keel_common::Oid;
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a [`RelMap`] needs to know of its entries.
pub trait CatalogEntry {
    fn oid(&self) -> Oid;
    fn name(&self) -> &str;
    /// The relation this entry belongs to, if any (an index's table, a serial sequence's
    /// table): `RelMap::owned_by` finds the entries of one owner without a scan.
    fn owner(&self) -> Option<Oid> {
        None
    }
}

#[derive(Clone, Debug)]
pub struct RelMap<T> {
    by_oid: imbl::OrdMap<Oid, Arc<T>>,
    by_name: imbl::OrdMap<String, Oid>,
    owned: imbl::OrdMap<Oid, imbl::OrdSet<Oid>>,
    changed: imbl::OrdSet<Oid>,
}

impl<T> Default for RelMap<T> {
    fn default() -> Self {
        RelMap {
            by_oid: imbl::OrdMap::new(),
            by_name: imbl::OrdMap::new(),
            owned: imbl::OrdMap::new(),
            changed: imbl::OrdSet::new(),
        }
    }
}

impl<T: CatalogEntry> RelMap<T> {
    pub fn get(&self, oid: &Oid) -> Option<&Arc<T>> {
        self.by_oid.get(oid)
    }

    pub fn contains_key(&self, oid: &Oid) -> bool {
        self.by_oid.contains_key(oid)
    }

    pub fn by_name(&self, name: &str) -> Option<&Arc<T>> {
        self.by_name.get(name).and_then(|oid| self.by_oid.get(oid))
    }

    /// The entries owned by `owner`, in oid order; O(their number · log n).
    pub fn owned_by(&self, owner: Oid) -> impl Iterator<Item = &Arc<T>> + '_ {
        self.owned
            .get(&owner)
            .into_iter()
            .flat_map(|set| set.iter())
            .filter_map(|oid| self.by_oid.get(oid))
    }

    /// Entries in oid order.
    pub fn values(&self) -> impl Iterator<Item = &Arc<T>> + '_ {
        self.by_oid.values()
    }

    pub fn keys(&self) -> impl Iterator<Item = &Oid> + '_ {
        self.by_oid.keys()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Oid, &Arc<T>)> + '_ {
        self.by_oid.iter()
    }

    pub fn len(&self) -> usize {
        self.by_oid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_oid.is_empty()
    }

    /// Adds or replaces the entry `oid` (which must be `entry.oid()`); returns the one replaced.
    pub fn insert(&mut self, oid: Oid, entry: Arc<T>) -> Option<Arc<T>> {
        debug_assert_eq!(oid, entry.oid());
        let old = self.unlink(oid);
        self.by_name.insert(entry.name().to_string(), oid);
        if let Some(owner) = entry.owner() {
            self.owned.entry(owner).or_default().insert(oid);
        }
        self.by_oid.insert(oid, entry);
        self.changed.insert(oid);
        old
    }

    pub fn remove(&mut self, oid: &Oid) -> Option<Arc<T>> {
        let old = self.unlink(*oid);
        if old.is_some() {
            self.changed.insert(*oid);
        }
        old
    }

    /// Keeps the entries for which `keep` holds (a scan: for rare DDL paths only).
    pub fn retain(&mut self, mut keep: impl FnMut(&Oid, &Arc<T>) -> bool) {
        let gone: Vec<Oid> = self
            .by_oid
            .iter()
            .filter(|(oid, e)| !keep(oid, e))
            .map(|(oid, _)| *oid)
            .collect();
        for oid in gone {
            self.remove(&oid);
        }
    }

    /// Takes `oid` out of every map, without noting a change.
    fn unlink(&mut self, oid: Oid) -> Option<Arc<T>> {
        let old = self.by_oid.remove(&oid)?;
        if self.by_name.get(old.name()) == Some(&oid) {
            self.by_name.remove(old.name());
        }
        if let Some(owner) = old.owner()
            && let Some(set) = self.owned.get_mut(&owner)
        {
            set.remove(&oid);
            if set.is_empty() {
                self.owned.remove(&owner);
            }
        }
        Some(old)
    }

    /// What changed since the last `clear_changes`: the entries now present (added or
    /// replaced) and the oids removed, both in oid order.
    pub fn changes(&self) -> (Vec<Arc<T>>, Vec<Oid>) {
        let mut put = Vec::new();
        let mut removed = Vec::new();
        for oid in &self.changed {
            match self.by_oid.get(oid) {
                Some(e) => put.push(e.clone()),
                None => removed.push(*oid),
            }
        }
        (put, removed)
    }

    pub fn has_changes(&self) -> bool {
        !self.changed.is_empty()
    }

    pub fn clear_changes(&mut self) {
        self.changed = imbl::OrdSet::new();
    }

    /// Applies changes logged by `changes` (recovery): puts win over what is there.
    pub(crate) fn apply(&mut self, put: &[Arc<T>], removed: &[Oid]) {
        for oid in removed {
            self.unlink(*oid);
        }
        for e in put {
            let oid = e.oid();
            self.unlink(oid);
            self.by_name.insert(e.name().to_string(), oid);
            if let Some(owner) = e.owner() {
                self.owned.entry(owner).or_default().insert(oid);
            }
            self.by_oid.insert(oid, e.clone());
        }
    }
}

impl<T: CatalogEntry + PartialEq> PartialEq for RelMap<T> {
    /// Same entries; the change set is bookkeeping, not content.
    fn eq(&self, other: &Self) -> bool {
        self.by_oid == other.by_oid
    }
}

impl<T: CatalogEntry> FromIterator<Arc<T>> for RelMap<T> {
    fn from_iter<I: IntoIterator<Item = Arc<T>>>(iter: I) -> Self {
        let mut m = RelMap::default();
        let all: Vec<Arc<T>> = iter.into_iter().collect();
        m.apply(&all, &[]);
        m
    }
}

/// Serialized as the map oid -> entry that the catalog had before it kept name and owner
/// maps, so catalogs written by either version load in the other.
impl<T: CatalogEntry + Serialize> Serialize for RelMap<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.by_oid.iter())
    }
}

impl<'de, T: CatalogEntry + Deserialize<'de>> Deserialize<'de> for RelMap<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let m = BTreeMap::<Oid, Arc<T>>::deserialize(d)?;
        Ok(m.into_values().collect())
    }
}

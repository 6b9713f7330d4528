//! Plans shared by all sessions: a statement parsed with the same text, offset and declared
//! parameter types against the same catalog yields the same plan (`keel_sql::prepare` is a pure
//! function of those), so every session can hold one `Arc` to it.
//!
//! Why: with hundreds of connections each session's private copy of the same few plans no
//! longer fits the per-core cache, and every Bind/Execute walks a plan tree from memory. One
//! shared copy stays cached however many sessions run it.
//!
//! Only Parse (and re-planning after DDL) goes through here, once per statement per session;
//! the mutex is never on the per-execution path. An entry planned against an older catalog, or
//! under older statistics (`Prepared::stats_generation`), is replaced on the next lookup; the map is cleared when it reaches `CAPACITY` entries or its
//! statements' text reaches `TEXT_CAPACITY` bytes (a plan is then simply made again; a plan's
//! size follows its text, so both bound the cache's memory). A statement longer than
//! `TEXT_CAPACITY / 16` is never kept: such texts are rarely run twice.

use keel_catalog::Catalog;
use keel_common::PgResult;
use keel_sql::Prepared;
use keel_types::TypeId;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

const CAPACITY: usize = 4096;
const TEXT_CAPACITY: usize = 16 << 20;

#[derive(PartialEq, Eq, Hash)]
struct PlanKey {
    text: String,
    char_offset: usize,
    declared: Vec<TypeId>,
}

#[derive(Default)]
pub struct PlanCache {
    plans: Mutex<Plans>,
}

#[derive(Default)]
struct Plans {
    map: HashMap<PlanKey, Arc<Prepared>>,
    /// Bytes of the keys' texts.
    text: usize,
}

impl PlanCache {
    /// The plan of `text` against `catalog`: the shared one when it exists, else a new one.
    pub(crate) fn prepare(
        &self,
        catalog: Arc<Catalog>,
        sizes: &dyn keel_sql::RelSizes,
        text: &str,
        char_offset: usize,
        declared: &[TypeId],
    ) -> PgResult<Arc<Prepared>> {
        let key = PlanKey {
            text: text.to_string(),
            char_offset,
            declared: declared.to_vec(),
        };
        if let Some(p) = self.plans.lock().map.get(&key)
            && Arc::ptr_eq(&p.catalog, &catalog)
            && p.stats_generation == sizes.stats_generation()
        {
            return Ok(p.clone());
        }
        // Planned outside the mutex: two sessions may plan the same text at once; the later
        // insert wins and both plans are equally valid.
        let plan = Arc::new(keel_sql::prepare(
            catalog,
            sizes,
            text,
            char_offset,
            declared,
        )?);
        if key.text.len() > TEXT_CAPACITY / 16 {
            return Ok(plan);
        }
        let mut plans = self.plans.lock();
        if plans.map.len() >= CAPACITY || plans.text + key.text.len() > TEXT_CAPACITY {
            plans.map.clear();
            plans.text = 0;
        }
        plans.text += key.text.len();
        if let Some(old) = plans.map.insert(key, plan.clone()) {
            plans.text -= old.text.len();
        }
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_a_plan_until_the_catalog_or_the_key_changes() {
        let cache = PlanCache::default();
        let old = Arc::new(Catalog::default());
        let sql = "SELECT $1 + 1";
        let a = cache
            .prepare(old.clone(), &keel_sql::NoSizes, sql, 0, &[TypeId::Int4])
            .unwrap();
        let b = cache
            .prepare(old.clone(), &keel_sql::NoSizes, sql, 0, &[TypeId::Int4])
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b), "same key and catalog: one shared plan");

        let c = cache
            .prepare(old.clone(), &keel_sql::NoSizes, sql, 0, &[TypeId::Int8])
            .unwrap();
        assert!(!Arc::ptr_eq(&a, &c), "other declared types: another plan");
        assert_eq!(c.params, vec![TypeId::Int8]);
        let d = cache
            .prepare(old.clone(), &keel_sql::NoSizes, sql, 3, &[TypeId::Int4])
            .unwrap();
        assert!(
            !Arc::ptr_eq(&a, &d),
            "other offset (error positions): another plan"
        );

        let new = Arc::new(Catalog::default());
        let e = cache
            .prepare(new.clone(), &keel_sql::NoSizes, sql, 0, &[TypeId::Int4])
            .unwrap();
        assert!(!Arc::ptr_eq(&a, &e), "a newer catalog is planned again");
        assert!(Arc::ptr_eq(&e.catalog, &new));
        let f = cache
            .prepare(new, &keel_sql::NoSizes, sql, 0, &[TypeId::Int4])
            .unwrap();
        assert!(Arc::ptr_eq(&e, &f), "and then shared");
    }

    #[test]
    fn errors_are_not_cached_and_the_map_stays_bounded() {
        let cache = PlanCache::default();
        let cat = Arc::new(Catalog::default());
        assert!(
            cache
                .prepare(cat.clone(), &keel_sql::NoSizes, "SELEC 1", 0, &[])
                .is_err()
        );
        assert!(cache.plans.lock().map.is_empty());
        for i in 0..CAPACITY + 10 {
            cache
                .prepare(
                    cat.clone(),
                    &keel_sql::NoSizes,
                    &format!("SELECT {i}"),
                    0,
                    &[],
                )
                .unwrap();
        }
        assert!(cache.plans.lock().map.len() <= CAPACITY);
        // Long texts: the cache's text stays within its budget, the longest are not kept.
        let long = format!("SELECT 1 {}", " ".repeat(TEXT_CAPACITY / 20));
        for i in 0..40 {
            cache
                .prepare(
                    cat.clone(),
                    &keel_sql::NoSizes,
                    &format!("{long}+{i}"),
                    0,
                    &[],
                )
                .unwrap();
            let p = cache.plans.lock();
            assert!(p.text <= TEXT_CAPACITY);
            assert_eq!(p.text, p.map.keys().map(|k| k.text.len()).sum::<usize>());
        }
        let huge = format!("SELECT 1 {}", " ".repeat(TEXT_CAPACITY / 8));
        cache
            .prepare(cat.clone(), &keel_sql::NoSizes, &huge, 0, &[])
            .unwrap();
        assert!(cache.plans.lock().map.keys().all(|k| k.text != huge));
    }
}

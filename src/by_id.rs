//! A list of entries by id, for the driver's tasks and the promise and timer slots they wait
//! on (a server may run thousands at once). Ids count up from 1 and never repeat: a JS number
//! holds 2^53 of them exactly, so a promise that settles after its slot was freed never reaches
//! a later slot, and an id the host passes back finds its own entry or none. Because ids only
//! grow, the list stays in id order and a lookup is a binary search; a removed entry leaves a
//! gap, swept out once the gaps outnumber the entries, so a removal is constant time on average.
//! It replaced a `HashMap`, whose code was 1.7 KB gzipped of each wasm and whose 32-bit ids
//! wrapped after four billion slots.

/// An entry's id, as JavaScript holds it: a whole number from 1 below 2^53.
pub type Id = f64;

/// Entries in the order of their ids.
pub struct ById<T> {
    entries: Vec<(Id, Option<T>)>,
    gaps: usize,
    last: Id,
}

impl<T> Default for ById<T> {
    fn default() -> Self {
        ById { entries: Vec::new(), gaps: 0, last: 0.0 }
    }
}

impl<T> ById<T> {
    /// Adds `value` under the next id, and returns that id.
    pub fn insert(&mut self, value: T) -> Id {
        self.last += 1.0;
        self.entries.push((self.last, Some(value)));
        self.last
    }

    /// The entry of `id`; none for any other number (a removed id, NaN, -0, 0.5).
    pub fn get_mut(&mut self, id: Id) -> Option<&mut T> {
        let at = self.find(id)?;
        self.entries[at].1.as_mut()
    }

    pub fn remove(&mut self, id: Id) -> Option<T> {
        let at = self.find(id)?;
        let value = self.entries[at].1.take()?;
        self.gaps += 1;
        if self.gaps * 2 > self.entries.len() {
            self.entries.retain(|(_, value)| value.is_some());
            self.gaps = 0;
        }
        Some(value)
    }

    fn find(&self, id: Id) -> Option<usize> {
        self.entries.binary_search_by(|(held, _)| held.total_cmp(&id)).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_up_from_one_and_are_not_reused_after_a_removal() {
        let mut list = ById::default();
        assert_eq!([list.insert('a'), list.insert('b')], [1.0, 2.0]);
        assert_eq!(list.remove(2.0), Some('b'));
        assert_eq!(list.insert('c'), 3.0);
        assert_eq!(list.get_mut(2.0), None, "a freed id finds nothing, not the next entry");
        assert_eq!(list.remove(2.0), None);
        assert_eq!(list.get_mut(3.0), Some(&mut 'c'));
        assert_eq!(list.get_mut(1.0), Some(&mut 'a'));
    }

    #[test]
    fn a_number_that_is_no_id_finds_nothing() {
        let mut list = ById::default();
        list.insert(1);
        for id in [0.0, -0.0, -1.0, 0.5, 1.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 2.0] {
            assert_eq!(list.get_mut(id), None, "{id}");
            assert_eq!(list.remove(id), None, "{id}");
        }
        assert_eq!(list.get_mut(1.0), Some(&mut 1));
    }

    #[test]
    fn gaps_are_swept_once_they_outnumber_the_entries_and_every_live_entry_stays_found() {
        let mut list = ById::default();
        let ids: Vec<Id> = (0..1_000).map(|i| list.insert(i)).collect();
        // Remove all but every tenth, oldest first, as calls that end in turn would.
        for (i, id) in ids.iter().enumerate() {
            if i % 10 != 0 {
                assert_eq!(list.remove(*id), Some(i));
            }
            assert!(list.gaps * 2 <= list.entries.len(), "swept by the removal that made gaps the majority");
        }
        assert_eq!(list.entries.len() - list.gaps, 100);
        assert!(list.entries.len() < 250, "{} entries held for 100 live ones", list.entries.len());
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(list.get_mut(*id).copied(), (i % 10 == 0).then_some(i), "id {id}");
        }
        assert_eq!(list.insert(1_000), 1_001.0);
    }

    #[test]
    fn a_long_lived_entry_is_kept_through_many_short_ones() {
        // A Baton's follower task lives on while a million body reads take and free a slot.
        let mut list = ById::default();
        let kept = list.insert("kept");
        for _ in 0..1_000_000 {
            let id = list.insert("read");
            assert_eq!(list.remove(id), Some("read"));
        }
        assert_eq!(list.get_mut(kept), Some(&mut "kept"));
        assert!(list.entries.len() <= 3, "{} entries held for one live one", list.entries.len());
        assert_eq!(list.insert("next"), 1_000_002.0);
    }
}

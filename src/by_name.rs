//! A map from names to values kept as a list sorted by name. A config names a few targets and
//! routes, and each `BTreeMap` of another value type was more code in the wasm (about 1.2 KB
//! gzipped for the breakers' alone); a sorted list keeps the name order callers show.

/// Values by name, in name order.
#[derive(Debug, Clone, PartialEq)]
pub struct ByName<T>(Vec<(String, T)>);

impl<T> Default for ByName<T> {
    fn default() -> Self {
        ByName(Vec::new())
    }
}

impl<T> ByName<T> {
    fn find(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(held, _)| held.as_str().cmp(name))
    }

    pub fn get(&self, name: &str) -> Option<&T> {
        self.find(name).ok().map(|at| &self.0[at].1)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.find(name).is_ok()
    }

    /// Sets `name` to `value`, replacing what it held.
    pub fn insert(&mut self, name: &str, value: T) {
        match self.find(name) {
            Ok(at) => self.0[at].1 = value,
            Err(at) => self.0.insert(at, (name.to_string(), value)),
        }
    }

    /// `name`'s value, made by `make` when it has none; a name is allocated only then.
    pub fn get_or_insert_with(&mut self, name: &str, make: impl FnOnce() -> T) -> &mut T {
        let at = self.find(name).unwrap_or_else(|at| {
            self.0.insert(at, (name.to_string(), make()));
            at
        });
        &mut self.0[at].1
    }

    /// The names, in name order.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(name, _)| name)
    }
}

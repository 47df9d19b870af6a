//! A TOML table of a lock being read: each key taken once, each string checked against
//! [`crate::limits`], every error naming its key path.

use crate::limits::{check_text, MAX_ITEMS, MAX_TABLES};
use crate::LockError;

/// A table being read: each key taken once, errors carry the key path.
pub(crate) struct Fields {
    table: toml::Table,
    path: String,
}

impl Fields {
    pub(crate) fn new(table: toml::Table, path: &str) -> Self {
        Self {
            table,
            path: path.to_owned(),
        }
    }

    pub(crate) fn key(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub(crate) fn error(&self, key: &str, message: impl Into<String>) -> LockError {
        LockError::new(self.key(key), message)
    }

    pub(crate) fn take(&mut self, key: &str) -> Option<toml::Value> {
        self.table.remove(key)
    }

    pub(crate) fn string(&mut self, key: &str) -> Result<Option<String>, LockError> {
        match self.take(key) {
            Some(toml::Value::String(text)) => match check_text(&text) {
                Ok(()) => Ok(Some(text)),
                Err(message) => Err(self.error(key, message)),
            },
            Some(_) => Err(self.error(key, "must be a string")),
            None => Ok(None),
        }
    }

    pub(crate) fn required_string(&mut self, key: &str) -> Result<String, LockError> {
        self.string(key)?
            .ok_or_else(|| self.error(key, "is missing"))
    }

    pub(crate) fn strings(&mut self, key: &str) -> Result<Vec<String>, LockError> {
        match self.take(key) {
            Some(toml::Value::Array(items)) => {
                if items.len() > MAX_ITEMS {
                    return Err(self.error(key, format!("has more than {MAX_ITEMS} items")));
                }
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| match item {
                        toml::Value::String(text) => match check_text(&text) {
                            Ok(()) => Ok(text),
                            Err(message) => Err(self.error(&format!("{key}[{i}]"), message)),
                        },
                        _ => Err(self.error(&format!("{key}[{i}]"), "must be a string")),
                    })
                    .collect()
            }
            Some(_) => Err(self.error(key, "must be an array of strings")),
            None => Ok(Vec::new()),
        }
    }

    pub(crate) fn table(&mut self, key: &str) -> Result<Option<toml::Table>, LockError> {
        match self.take(key) {
            Some(toml::Value::Table(table)) => Ok(Some(table)),
            Some(_) => Err(self.error(key, "must be a table")),
            None => Ok(None),
        }
    }

    pub(crate) fn tables(&mut self, key: &str) -> Result<Option<Vec<toml::Table>>, LockError> {
        match self.take(key) {
            Some(toml::Value::Array(items)) => {
                if items.len() > MAX_TABLES {
                    return Err(self.error(key, "has too many items"));
                }
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| match item {
                        toml::Value::Table(table) => Ok(table),
                        _ => Err(self.error(&format!("{key}[{i}]"), "must be a table")),
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some)
            }
            Some(_) => Err(self.error(key, "must be an array of tables")),
            None => Ok(None),
        }
    }

    /// The keys not taken, for preserving what vari does not model.
    pub(crate) fn rest(self) -> toml::Table {
        self.table
    }

    /// Refuses a key not taken, for the tables whose every key is modelled.
    pub(crate) fn refuse_rest(self) -> Result<(), LockError> {
        match self.table.keys().next() {
            Some(key) => Err(self.error(key, "is not a known key")),
            None => Ok(()),
        }
    }
}

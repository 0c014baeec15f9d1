//! The symbol signal: chunks defining a name the question uses, exactly
//! (any case) or one or two edits away; and name lookups for agents.

use super::Retrieval;
use crate::Result;
use crate::stores::catalog::Catalog;
use crate::stores::lexical::LexicalIndex;
use loupe_assemble::ChunkId;
use std::collections::HashMap;

/// The chunks defining some names, looked up for one use (a question's
/// identifiers, an agent's target): lower-cased name → chunk ids, lowest
/// first. Nothing holds every name in memory; see [`Catalog::definers`](crate::stores::catalog::Catalog::definers).
#[derive(Clone, Debug, Default)]
pub struct Definitions {
    pub(super) by_name: HashMap<String, Vec<ChunkId>>,
}

impl Definitions {
    /// From (name, chunk id) pairs, in any case and order.
    pub fn from_pairs(pairs: Vec<(String, ChunkId)>) -> Self {
        let mut by_name: HashMap<String, Vec<ChunkId>> = HashMap::new();
        for (name, id) in pairs {
            by_name.entry(name.to_lowercase()).or_default().push(id);
        }
        for ids in by_name.values_mut() {
            ids.sort_unstable();
            ids.dedup();
        }
        Self { by_name }
    }

    /// Chunks defining exactly `name` (case-insensitive), in id order;
    /// empty for a name that was not looked up.
    pub fn exact(&self, name: &str) -> &[ChunkId] {
        self.by_name
            .get(name.to_lowercase().as_str())
            .map_or(&[], Vec::as_slice)
    }
}

/// What the index knows of one name as a symbol.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameLookup {
    /// The chunks defining it (any case), lowest ids first.
    pub defined_by: Vec<ChunkId>,
    /// When nothing defines it: the defined names one edit away (two for
    /// names of 8 characters or more), sorted.
    pub similar: Vec<String>,
}

impl NameLookup {
    /// What `catalog` and `lexical` know of `name` as a symbol (an
    /// agent's target); the caller has caught up with other processes.
    pub(crate) async fn find(
        catalog: &Catalog,
        lexical: &LexicalIndex,
        name: &str,
    ) -> Result<Self> {
        let defined_by = Definitions::of(catalog, &[name.to_owned()], usize::MAX)
            .await?
            .exact(name)
            .to_vec();
        if !defined_by.is_empty() {
            return Ok(Self {
                defined_by,
                similar: Vec::new(),
            });
        }
        // The dictionary may still hold names whose chunks are gone.
        let near = lexical.similar_names(name)?;
        let live = Definitions::of(catalog, &near, 1).await?;
        Ok(Self {
            defined_by,
            similar: near
                .into_iter()
                .filter(|n| !live.exact(n).is_empty())
                .collect(),
        })
    }
}

impl Definitions {
    /// The chunks defining each of `names` (any case), at most `limit` per
    /// name, lowest ids first.
    pub(crate) async fn of(catalog: &Catalog, names: &[String], limit: usize) -> Result<Self> {
        let mut lower: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
        lower.sort_unstable();
        lower.dedup();
        let limit = u32::try_from(limit).unwrap_or(u32::MAX);
        Ok(Self::from_pairs(catalog.definers(&lower, limit).await?))
    }
}

impl Retrieval<'_> {
    /// Chunks defining the question's identifiers: exact first, then near
    /// misses (none for names under `lexical::FUZZY_MIN_LEN` characters:
    /// `get` ~ `set` is noise).
    pub(super) async fn gather_symbols(&mut self) -> Result<()> {
        let query = self.query;
        let limits = &query.limits;
        let mut near: Vec<Vec<String>> = Vec::with_capacity(query.identifiers.len());
        for ident in &query.identifiers {
            near.push(self.lexical.similar_names(ident)?);
        }
        let named: Vec<String> = query
            .identifiers
            .iter()
            .chain(near.iter().flatten())
            .cloned()
            .collect();
        let symbols = Definitions::of(self.catalog, &named, limits.per_symbol).await?;
        for (ident, near) in query.identifiers.iter().zip(&near) {
            for &id in symbols.exact(ident) {
                let s = self.g.get(id);
                s.symbol_hits += 1;
                s.symbol_exact = true;
            }
            for name in near {
                for &id in symbols.exact(name) {
                    self.g.get(id).symbol_hits += 1;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Definitions;

    #[test]
    fn definitions_are_case_blind_sorted_and_distinct() {
        let defs = Definitions::from_pairs(vec![
            ("Parse_Args".into(), 9),
            ("parse_args".into(), 2),
            ("parse_args".into(), 9),
            ("render".into(), 3),
        ]);
        assert_eq!(defs.exact("PARSE_ARGS"), &[2, 9]);
        assert_eq!(defs.exact("render"), &[3]);
        assert!(defs.exact("parse").is_empty());
    }
}

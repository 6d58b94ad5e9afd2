//! The Fashionpedia ontology in its released layout: categories and
//! attributes, each `{"id", "name", "supercategory", "level", "taxonomy_id"}`
//! (ids are not contiguous), and which attribute super-categories apply to
//! which categories.

use crate::core::kind::contract::Invalid;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One category or attribute as released.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its id (not contiguous).
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Category: its group (e.g. `upperbody`); attribute: its super-category,
    /// or a level-2 group (`leather`, `animal`).
    pub supercategory: String,
    /// 1 or 2.
    #[serde(default = "one")]
    pub level: u8,
    /// The taxonomy's id.
    #[serde(default)]
    pub taxonomy_id: String,
}

fn one() -> u8 {
    1
}

/// The ontology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ontology {
    /// Apparel categories (46 in the release).
    pub categories: Vec<Entry>,
    /// Attributes (294 in the release).
    pub attributes: Vec<Entry>,
}

/// Level-2 attribute groups and the super-category each belongs under.
pub const LEVEL_TWO_PARENTS: [(&str, &str); 2] =
    [("leather", "non-textile material type"), ("animal", "textile pattern")];

/// The 13 main garments with attributes (ids 0-12 of the release).
pub const MAIN_GARMENTS: [&str; 13] = [
    "shirt, blouse",
    "top, t-shirt, sweatshirt",
    "sweater",
    "cardigan",
    "jacket",
    "vest",
    "pants",
    "shorts",
    "skirt",
    "coat",
    "dress",
    "jumpsuit",
    "cape",
];

/// An attribute offered for a super-category, with its level-2 group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttributeChoice {
    /// Attribute id.
    pub id: u32,
    /// Attribute name.
    pub name: String,
    /// Its level-2 group (`leather`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

impl Ontology {
    /// Parses and checks an ontology file: ids unique, names present.
    pub fn parse(text: &str) -> Result<Self, Invalid> {
        let o: Ontology = serde_json::from_str(text).map_err(|e| {
            Invalid(format!(
                "ontology, line {}: {e} (expected {{\"categories\": [...], \"attributes\": [...]}})",
                e.line()
            ))
        })?;
        for (what, list) in [("category", &o.categories), ("attribute", &o.attributes)] {
            let mut ids = BTreeSet::new();
            for e in list {
                if !ids.insert(e.id) {
                    return Err(Invalid(format!("ontology: {what} id {} appears twice", e.id)));
                }
                if e.name.trim().is_empty() || e.supercategory.trim().is_empty() {
                    return Err(Invalid(format!("ontology: {what} {} needs a name and a supercategory", e.id)));
                }
            }
        }
        if o.categories.is_empty() || o.attributes.is_empty() {
            return Err(Invalid("ontology: no categories or no attributes".into()));
        }
        Ok(o)
    }

    /// The super-categories annotators choose from (level-2 groups folded
    /// into their parents).
    pub fn supercategories(&self) -> BTreeSet<String> {
        self.attributes.iter().map(|a| parent_of(&a.supercategory).to_owned()).collect()
    }

    /// The attributes of a super-category, level-2 groups after the rest.
    pub fn options(&self, supercategory: &str) -> Vec<AttributeChoice> {
        let mut out: Vec<AttributeChoice> = self
            .attributes
            .iter()
            .filter(|a| parent_of(&a.supercategory) == supercategory)
            .map(|a| AttributeChoice {
                id: a.id,
                name: a.name.clone(),
                group: (a.supercategory != supercategory).then(|| a.supercategory.clone()),
            })
            .collect();
        out.sort_by_key(|o| (o.group.is_some(), o.group.clone(), o.id));
        out
    }

    /// The attribute with this id.
    pub fn attribute(&self, id: u32) -> Option<&Entry> {
        self.attributes.iter().find(|a| a.id == id)
    }

    /// The category with this id.
    pub fn category(&self, id: u32) -> Option<&Entry> {
        self.categories.iter().find(|c| c.id == id)
    }

    /// The default of which super-categories apply to which categories,
    /// following the paper: the 13 main garments get every super-category
    /// but neckline type; of the parts, sleeves get nickname and length,
    /// necklines neckline type, pockets nickname and opening type, lapels
    /// and collars nickname.
    pub fn default_applicability(&self) -> BTreeMap<String, Vec<String>> {
        let all = self.supercategories();
        let mut out = BTreeMap::new();
        for c in &self.categories {
            let wanted: Vec<String> = if MAIN_GARMENTS.contains(&c.name.as_str()) {
                all.iter().filter(|s| s.as_str() != "neckline type").cloned().collect()
            } else {
                let names: &[&str] = match c.name.as_str() {
                    "sleeve" => &["nickname", "length"],
                    "neckline" => &["neckline type"],
                    "pocket" => &["nickname", "opening type"],
                    "lapel" | "collar" => &["nickname"],
                    _ => &[],
                };
                names.iter().filter(|n| all.contains(**n)).map(|n| (*n).to_owned()).collect()
            };
            if !wanted.is_empty() {
                out.insert(c.name.clone(), wanted);
            }
        }
        out
    }
}

/// The super-category a (possibly level-2) group belongs to.
pub fn parent_of(group: &str) -> &str {
    LEVEL_TWO_PARENTS.iter().find(|(g, _)| *g == group).map_or(group, |(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small ontology written for the tests (the release's layout).
    pub const SMALL: &str = r#"{"categories": [
        {"id": 0, "name": "shirt, blouse", "supercategory": "upperbody", "level": 2, "taxonomy_id": "c0"},
        {"id": 31, "name": "sleeve", "supercategory": "garment parts", "level": 2, "taxonomy_id": "c31"},
        {"id": 23, "name": "shoe", "supercategory": "legs and feet", "level": 2, "taxonomy_id": "c23"}],
      "attributes": [
        {"id": 115, "name": "symmetrical", "supercategory": "silhouette", "level": 1, "taxonomy_id": "a115"},
        {"id": 116, "name": "peplum", "supercategory": "silhouette", "level": 1, "taxonomy_id": "a116"},
        {"id": 160, "name": "wrist-length", "supercategory": "length", "level": 1, "taxonomy_id": "a160"},
        {"id": 205, "name": "leather", "supercategory": "non-textile material type", "level": 1, "taxonomy_id": "a205"},
        {"id": 290, "name": "suede", "supercategory": "leather", "level": 2, "taxonomy_id": "a290"}]}"#;

    #[test]
    fn level_two_groups_sit_under_their_parents_and_defaults_follow_the_paper() {
        let o = Ontology::parse(SMALL).expect("ontology");
        assert_eq!(
            o.supercategories().into_iter().collect::<Vec<_>>(),
            vec!["length", "non-textile material type", "silhouette"]
        );
        let materials = o.options("non-textile material type");
        assert_eq!(materials[1], AttributeChoice { id: 290, name: "suede".into(), group: Some("leather".into()) });
        let applies = o.default_applicability();
        assert_eq!(applies["shirt, blouse"].len(), 3);
        assert_eq!(applies["sleeve"], vec!["length".to_owned()]);
        assert!(!applies.contains_key("shoe"), "no attributes for shoes");
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let text = SMALL.replace("\"id\": 116", "\"id\": 115");
        assert!(Ontology::parse(&text).expect_err("duplicate").0.contains("attribute id 115 appears twice"));
    }
}

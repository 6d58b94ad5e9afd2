//! The A100 protocol's outfit rules (§3.1): what a fill-in-the-blank
//! question must look like for its completed outfit to be a plausible one.

use std::collections::HashMap;

/// The 20 item categories of the A100 protocol.
pub const CATEGORIES: [&str; 20] = [
    "Tops",
    "Skirts",
    "Pants",
    "Outwear",
    "Dresses",
    "Jumpsuits",
    "Shoes",
    "Bags",
    "Earrings",
    "Necklaces",
    "Rings",
    "Bracelets",
    "Watches",
    "Hats",
    "Eyewear",
    "Gloves",
    "Legwear",
    "Neckwear",
    "Hair wear",
    "Brooch",
];

/// Clothing categories (at most one item each).
const CLOTHING: [&str; 6] = ["Tops", "Skirts", "Pants", "Outwear", "Dresses", "Jumpsuits"];
/// Categories of which at most one may be worn at a time (lower body and one-pieces).
const EXCLUSIVE: [&str; 4] = ["Skirts", "Pants", "Dresses", "Jumpsuits"];
/// Accessory types (at most one of each).
const ACCESSORIES: [&str; 12] = [
    "Earrings",
    "Necklaces",
    "Rings",
    "Bracelets",
    "Watches",
    "Hats",
    "Eyewear",
    "Gloves",
    "Legwear",
    "Neckwear",
    "Hair wear",
    "Brooch",
];

/// A rule a question can break; admins may override any of them for one
/// question with a recorded reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Exactly five choices.
    FiveChoices,
    /// Every choice has the blanked item's category.
    ChoicesShareCategory,
    /// Exactly one pair of shoes in the completed outfit.
    OnePairOfShoes,
    /// Clothing covers the whole body: top and lower body, or a one-piece.
    CoversBody,
    /// Skirts, pants, dresses and jumpsuits exclude each other.
    ExclusiveLowerBody,
    /// At most one item per clothing category.
    OnePerClothing,
    /// At most one bag.
    OneBag,
    /// At most one of each accessory type.
    OnePerAccessory,
    /// 2 to 8 items in the completed outfit.
    ItemCount,
    /// An AAT sub-dimension is one of the paper's Table 2 for its dimension.
    KnownSubDimension,
}

impl Rule {
    /// The rule's name as used in import files and error messages.
    pub fn name(self) -> &'static str {
        match self {
            Rule::FiveChoices => "five_choices",
            Rule::ChoicesShareCategory => "choices_share_category",
            Rule::OnePairOfShoes => "one_pair_of_shoes",
            Rule::CoversBody => "covers_body",
            Rule::ExclusiveLowerBody => "exclusive_lower_body",
            Rule::OnePerClothing => "one_per_clothing",
            Rule::OneBag => "one_bag",
            Rule::OnePerAccessory => "one_per_accessory",
            Rule::ItemCount => "item_count",
            Rule::KnownSubDimension => "known_sub_dimension",
        }
    }
}

/// One broken rule, explained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule.
    pub rule: Rule,
    /// What exactly is wrong.
    pub detail: String,
}

/// Checks a question: the categories of its outfit items, the blanked
/// category, and the categories of its choices. Returns every violation.
pub fn check(outfit: &[&str], blank: &str, choices: &[&str]) -> Vec<Violation> {
    let mut v = Vec::new();
    let mut add = |rule: Rule, detail: String| v.push(Violation { rule, detail });
    if choices.len() != 5 {
        add(Rule::FiveChoices, format!("{} choices instead of 5", choices.len()));
    }
    let off: Vec<&str> = choices.iter().copied().filter(|c| *c != blank).collect();
    if !off.is_empty() {
        add(Rule::ChoicesShareCategory, format!("choices of category {} where the blank is {blank}", off.join(", ")));
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for c in outfit.iter().copied().chain(std::iter::once(blank)) {
        *counts.entry(c).or_default() += 1;
    }
    let n = |c: &str| counts.get(c).copied().unwrap_or(0);
    if n("Shoes") != 1 {
        add(Rule::OnePairOfShoes, format!("{} pairs of shoes", n("Shoes")));
    }
    let lower = n("Skirts") + n("Pants");
    let one_piece = n("Dresses") + n("Jumpsuits");
    if !((n("Tops") > 0 && lower > 0) || one_piece > 0) {
        add(Rule::CoversBody, "the clothing does not cover the whole body (top and lower body, or a one-piece)".into());
    }
    let exclusive: usize = EXCLUSIVE.iter().map(|c| n(c)).sum();
    if exclusive > 1 {
        add(Rule::ExclusiveLowerBody, "skirts, pants, dresses and jumpsuits exclude each other".into());
    }
    for c in CLOTHING {
        if n(c) > 1 {
            add(Rule::OnePerClothing, format!("{} items of {c}", n(c)));
        }
    }
    if n("Bags") > 1 {
        add(Rule::OneBag, format!("{} bags", n("Bags")));
    }
    for c in ACCESSORIES {
        if n(c) > 1 {
            add(Rule::OnePerAccessory, format!("{} items of {c}", n(c)));
        }
    }
    let total = outfit.len() + 1;
    if !(2..=8).contains(&total) {
        add(Rule::ItemCount, format!("{total} items in the completed outfit (2 to 8 allowed)"));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIVE_SHOES: [&str; 5] = ["Shoes"; 5];

    fn broken(outfit: &[&str], blank: &str, choices: &[&str]) -> Vec<Rule> {
        check(outfit, blank, choices).into_iter().map(|v| v.rule).collect()
    }

    #[test]
    fn a_valid_outfit_passes() {
        assert!(check(&["Tops", "Pants", "Bags"], "Shoes", &FIVE_SHOES).is_empty());
        assert!(check(&["Dresses"], "Shoes", &FIVE_SHOES).is_empty());
    }

    #[test]
    fn four_choices_break_five_choices() {
        assert_eq!(broken(&["Tops", "Pants"], "Shoes", &["Shoes"; 4]), vec![Rule::FiveChoices]);
    }

    #[test]
    fn a_choice_of_another_category_breaks_the_shared_category_rule() {
        assert_eq!(
            broken(&["Tops", "Pants"], "Shoes", &["Shoes", "Shoes", "Bags", "Shoes", "Shoes"]),
            vec![Rule::ChoicesShareCategory]
        );
    }

    #[test]
    fn no_shoes_or_two_pairs_break_the_shoe_rule() {
        assert_eq!(broken(&["Tops", "Pants"], "Bags", &["Bags"; 5]), vec![Rule::OnePairOfShoes]);
        assert_eq!(broken(&["Tops", "Pants", "Shoes"], "Shoes", &FIVE_SHOES), vec![Rule::OnePairOfShoes]);
    }

    #[test]
    fn a_top_alone_does_not_cover_the_body() {
        assert_eq!(broken(&["Tops", "Bags"], "Shoes", &FIVE_SHOES), vec![Rule::CoversBody]);
    }

    #[test]
    fn a_dress_with_pants_breaks_exclusivity() {
        assert_eq!(broken(&["Dresses", "Pants"], "Shoes", &FIVE_SHOES), vec![Rule::ExclusiveLowerBody]);
    }

    #[test]
    fn two_tops_break_one_per_clothing() {
        assert_eq!(broken(&["Tops", "Tops", "Pants"], "Shoes", &FIVE_SHOES), vec![Rule::OnePerClothing]);
    }

    #[test]
    fn two_bags_break_the_bag_rule() {
        assert_eq!(broken(&["Tops", "Pants", "Bags", "Bags"], "Shoes", &FIVE_SHOES), vec![Rule::OneBag]);
    }

    #[test]
    fn two_watches_break_one_per_accessory() {
        assert_eq!(broken(&["Tops", "Pants", "Watches", "Watches"], "Shoes", &FIVE_SHOES), vec![Rule::OnePerAccessory]);
    }

    #[test]
    fn nine_items_break_the_item_count() {
        let outfit = ["Tops", "Pants", "Bags", "Earrings", "Necklaces", "Rings", "Watches", "Hats"];
        assert_eq!(broken(&outfit, "Shoes", &FIVE_SHOES), vec![Rule::ItemCount]);
    }
}

//! DeepFashion2's per-image annotation files (`item1..itemN`, each with
//! `category_name`, `category_id`, `segmentation` polygons, `bounding_box`
//! [x1, y1, x2, y2], `landmarks`, `occlusion`, ...) as masks to annotate.
//! DeepFashion2's files do not carry the image's size, so an upload bundles
//! them by image file name with `width` and `height` added:
//! `{"000001.jpg": {"width": 500, "height": 700, "item1": {...}, ...}}`.
//! Its 13 categories map to ontology categories by an editable table.

use serde_json::{json, Value};
use std::collections::BTreeMap;

/// DeepFashion2's 13 categories and the ontology category each becomes by default.
pub const DEFAULT_MAPPING: [(&str, &str); 13] = [
    ("short sleeve top", "top, t-shirt, sweatshirt"),
    ("long sleeve top", "top, t-shirt, sweatshirt"),
    ("short sleeve outwear", "jacket"),
    ("long sleeve outwear", "jacket"),
    ("vest", "vest"),
    ("sling", "top, t-shirt, sweatshirt"),
    ("shorts", "shorts"),
    ("trousers", "pants"),
    ("skirt", "skirt"),
    ("short sleeve dress", "dress"),
    ("long sleeve dress", "dress"),
    ("vest dress", "dress"),
    ("sling dress", "dress"),
];

/// The mapping in use: the default, with the campaign's own entries over it.
pub fn mapping(custom: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> =
        DEFAULT_MAPPING.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
    m.extend(custom.iter().map(|(k, v)| (k.to_lowercase(), v.clone())));
    m
}

/// DeepFashion2's splits: each numbers its images from 1, so the same file
/// name stands for different images in two splits. Imported with its split,
/// an image is `<split>/<file>` and its id is offset by the split's place
/// times [`SPLIT_ID_OFFSET`].
pub const SPLITS: [&str; 3] = ["train", "validation", "test"];
/// The id offset between splits (DeepFashion2's largest split has 191,961 images).
pub const SPLIT_ID_OFFSET: u64 = 1_000_000;

/// [`to_coco`] for one split of DeepFashion2 (see [`SPLITS`]).
pub fn to_coco_split(
    text: &str,
    mapping: &BTreeMap<String, String>,
    ontology: &super::ontology::Ontology,
    split: Option<&str>,
) -> Result<Value, String> {
    let Some(split) = split else { return to_coco(text, mapping, ontology) };
    let place = SPLITS
        .iter()
        .position(|s| *s == split)
        .ok_or_else(|| format!("split: `{split}` is not one of {}", SPLITS.join(", ")))?;
    let mut coco = to_coco(text, mapping, ontology)?;
    let offset = (place as u64 + 1) * SPLIT_ID_OFFSET;
    for image in coco["images"].as_array_mut().into_iter().flatten() {
        image["id"] = Value::from(image["id"].as_u64().unwrap_or(0) + offset);
        image["file_name"] = Value::from(format!("{split}/{}", image["file_name"].as_str().unwrap_or_default()));
    }
    for a in coco["annotations"].as_array_mut().into_iter().flatten() {
        let (id, image) = (a["id"].as_u64().unwrap_or(0), a["image_id"].as_u64().unwrap_or(0));
        a["id"] = Value::from(id + offset * 100);
        a["image_id"] = Value::from(image + offset);
        a["split"] = Value::from(split);
    }
    Ok(coco)
}

/// Turns a bundle of DeepFashion2 files into COCO's layout (ids: the image's
/// digits, as DeepFashion2 numbers images; masks `image id × 100 + item`).
/// Errors name the image and item.
pub fn to_coco(
    text: &str,
    mapping: &BTreeMap<String, String>,
    ontology: &super::ontology::Ontology,
) -> Result<Value, String> {
    let bundle: BTreeMap<String, Value> = serde_json::from_str(text).map_err(|e| {
        format!("line {}: {e} (expected {{\"000001.jpg\": {{\"width\", \"height\", \"item1\": {{...}}}}}})", e.line())
    })?;
    let category_id = |name: &str| ontology.categories.iter().find(|c| c.name == name).map(|c| c.id);
    let (mut images, mut annotations) = (Vec::new(), Vec::new());
    for (n, (file, content)) in bundle.iter().enumerate() {
        let at = |m: String| format!("image {file}: {m}");
        let digits: String = file.chars().filter(char::is_ascii_digit).collect();
        let image_id = digits.parse::<u64>().unwrap_or(n as u64 + 1);
        let (Some(width), Some(height)) = (content["width"].as_u64(), content["height"].as_u64()) else {
            return Err(at("needs `width` and `height` (DeepFashion2's files do not carry them)".into()));
        };
        images.push(json!({"id": image_id, "width": width, "height": height, "file_name": file}));
        let items = content
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.strip_prefix("item")?.parse::<u64>().ok()?, v)));
        for (number, item) in items {
            let at = |m: String| format!("image {file}, item{number}: {m}");
            let name = item["category_name"].as_str().ok_or_else(|| at("no category_name".into()))?.to_lowercase();
            let target = mapping
                .get(&name)
                .ok_or_else(|| at(format!("category `{name}` has no ontology category in the mapping")))?;
            let category =
                category_id(target).ok_or_else(|| at(format!("`{target}` is not a category of the ontology")))?;
            let b: Vec<f64> = item["bounding_box"].as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
            let bbox = match b.as_slice() {
                [x1, y1, x2, y2] => json!([x1, y1, x2 - x1, y2 - y1]),
                _ => Value::Null,
            };
            // DeepFashion2's COCO-style conversion: landmarks as keypoints
            // (x, y, visibility triples), counting the visible ones.
            let keypoints: Vec<Value> = item["landmarks"].as_array().cloned().unwrap_or_default();
            let visible = keypoints.chunks(3).filter(|k| k.get(2).and_then(Value::as_f64).is_some_and(|v| v > 0.0));
            let num_keypoints = visible.count();
            let mut annotation = json!({
                "id": image_id * 100 + number,
                "image_id": image_id,
                "category_id": category,
                "segmentation": item["segmentation"],
                "bbox": bbox,
                "iscrowd": 0,
                "keypoints": keypoints,
                "num_keypoints": num_keypoints,
                "category_name": name,
            });
            for key in ["style", "occlusion", "zoom_in", "viewpoint", "scale"] {
                if let Some(v) = item.get(key) {
                    annotation[key] = v.clone();
                }
            }
            for key in ["pair_id", "source"] {
                if let Some(v) = content.get(key) {
                    annotation[key] = v.clone();
                }
            }
            annotations.push(annotation);
        }
    }
    Ok(json!({"images": images, "annotations": annotations}))
}

/// DeepFashion2's 13 categories in its own order (category ids 1 to 13)
/// with their numbers of landmarks: `deepfashion2_to_coco.py` places each
/// item's landmarks in one vector of 294 points, the categories' ranges one
/// after another (short sleeve top at points 0–24, ..., trousers at
/// 168–181, ..., sling dress at 275–293), zeros elsewhere.
pub const LANDMARK_SLOTS: [(&str, usize); 13] = [
    ("short sleeve top", 25),
    ("long sleeve top", 33),
    ("short sleeve outwear", 31),
    ("long sleeve outwear", 39),
    ("vest", 15),
    ("sling", 15),
    ("shorts", 10),
    ("trousers", 14),
    ("skirt", 8),
    ("short sleeve dress", 29),
    ("long sleeve dress", 37),
    ("vest dress", 19),
    ("sling dress", 19),
];

/// Points in DeepFashion2's landmark vector.
pub const LANDMARK_POINTS: usize = 294;

/// The first point and the number of points of a DeepFashion2 category's
/// landmarks in the 294-point vector.
pub fn landmark_slots(category_name: &str) -> Option<(usize, usize)> {
    let wanted = category_name.trim().to_lowercase().replace('_', " ");
    let mut first = 0;
    for (name, count) in LANDMARK_SLOTS {
        if name == wanted {
            return Some((first, count));
        }
        first += count;
    }
    None
}

/// An item's landmarks (x, y, visibility per point, in its category's own
/// order) in DeepFashion2's 294-point layout, as `keypoints` of its COCO
/// conversion: the item's points at its category's slots, zeros elsewhere.
/// `None` when the category is not DeepFashion2's or the list is not its
/// number of points.
pub fn keypoints_in_layout(category_name: &str, landmarks: &[Value]) -> Option<Vec<Value>> {
    let (first, count) = landmark_slots(category_name)?;
    if landmarks.len() != 3 * count {
        return None;
    }
    let mut out = vec![Value::from(0); 3 * LANDMARK_POINTS];
    out[3 * first..3 * (first + count)].clone_from_slice(landmarks);
    Some(out)
}

/// The sleeve length a DeepFashion2 category implies ("short sleeve top":
/// short; "long sleeve dress": wrist-length; "vest", "sling": sleeveless),
/// as the ids of the matching options of a task (none when the task's
/// super-category has no such attribute): offered to the expert as a
/// suggestion, never ticked for them.
pub fn sleeve_suggestion(
    deepfashion2: &serde_json::Map<String, Value>,
    options: &[super::ontology::AttributeChoice],
) -> Vec<u32> {
    let Some(category) = deepfashion2.get("category_name").and_then(Value::as_str) else { return Vec::new() };
    let implied = if category.starts_with("short sleeve") {
        "short (length)"
    } else if category.starts_with("long sleeve") {
        "wrist-length"
    } else if category.starts_with("vest") || category.starts_with("sling") {
        "sleeveless"
    } else {
        return Vec::new();
    };
    options.iter().filter(|o| o.name == implied).map(|o| o.id).collect()
}

#[cfg(test)]
mod sleeve_tests {
    use super::*;
    use crate::kinds::fashionpedia::ontology::AttributeChoice;

    #[test]
    fn the_category_suggests_the_sleeve_length_among_the_tasks_options() {
        let option = |id: u32, name: &str| AttributeChoice { id, name: name.into(), group: None };
        let length = [option(156, "sleeveless"), option(157, "short (length)"), option(160, "wrist-length")];
        let df2 = |name: &str| {
            let mut m = serde_json::Map::new();
            m.insert("category_name".into(), Value::from(name));
            m
        };
        assert_eq!(sleeve_suggestion(&df2("short sleeve top"), &length), vec![157]);
        assert_eq!(sleeve_suggestion(&df2("long sleeve dress"), &length), vec![160]);
        assert_eq!(sleeve_suggestion(&df2("sling dress"), &length), vec![156]);
        assert!(sleeve_suggestion(&df2("trousers"), &length).is_empty());
        assert!(sleeve_suggestion(&df2("short sleeve top"), &[option(115, "symmetrical")]).is_empty(), "not asked");
        assert!(sleeve_suggestion(&serde_json::Map::new(), &length).is_empty(), "not from DeepFashion2");
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    #[test]
    fn landmarks_sit_at_their_categorys_slots_of_deepfashion2s_294_points() {
        // DeepFashion2's deepfashion2_to_coco.py, written out: the ranges in category order.
        let table = [
            ("short sleeve top", 0, 25),
            ("long sleeve top", 25, 33),
            ("short sleeve outwear", 58, 31),
            ("long sleeve outwear", 89, 39),
            ("vest", 128, 15),
            ("sling", 143, 15),
            ("shorts", 158, 10),
            ("trousers", 168, 14),
            ("skirt", 182, 8),
            ("short sleeve dress", 190, 29),
            ("long sleeve dress", 219, 37),
            ("vest dress", 256, 19),
            ("sling dress", 275, 19),
        ];
        for (name, first, count) in table {
            assert_eq!(landmark_slots(name), Some((first, count)), "{name}");
        }
        assert_eq!(LANDMARK_SLOTS.iter().map(|s| s.1).sum::<usize>(), LANDMARK_POINTS);
        let trousers: Vec<Value> =
            (0..14).flat_map(|p| [Value::from(p * 10 + 1), Value::from(p * 10 + 2), Value::from(2)]).collect();
        let full = keypoints_in_layout("trousers", &trousers).expect("a layout");
        assert_eq!(full.len(), 882);
        assert_eq!(full[3 * 168], Value::from(1), "the first trousers point at slot 168");
        assert_eq!(full[3 * 181 + 1], Value::from(132), "the last at slot 181");
        assert!(full[..3 * 168].iter().chain(&full[3 * 182..]).all(|v| v.as_i64() == Some(0)));
        assert!(keypoints_in_layout("trousers", &trousers[..40]).is_none(), "not trousers' 14 points");
        assert!(keypoints_in_layout("hat", &trousers).is_none());
    }
}

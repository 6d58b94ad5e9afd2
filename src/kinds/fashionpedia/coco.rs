//! Images with masks in COCO's Fashionpedia layout (`images`, `annotations`
//! with `segmentation` as polygons or RLE, `bbox`, `area`, `category_id`,
//! optional `attribute_ids`), checked: images and categories exist, polygons
//! have an even number of coordinates inside their image, RLE sizes match;
//! zero-area masks are left out and counted. Every error names the annotation.

use super::masks::Mask;
use super::ontology::Ontology;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

/// An image of the file.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
pub struct Image {
    /// Its id in the file.
    pub id: u64,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Its file name (also its address, under the campaign's image base URL).
    pub file_name: String,
}

#[derive(Debug, Deserialize)]
struct RawAnnotation {
    id: u64,
    image_id: u64,
    category_id: u32,
    segmentation: Value,
    #[serde(default)]
    bbox: Option<[f64; 4]>,
    #[serde(default)]
    attribute_ids: Vec<u32>,
    #[serde(default)]
    iscrowd: u8,
    /// Every other field; those of DeepFashion2 ([`DF2_FIELDS`]) are kept.
    #[serde(flatten)]
    other: serde_json::Map<String, Value>,
}

/// DeepFashion2's fields of an annotation in its own COCO-style conversion
/// (landmarks as `keypoints` with `num_keypoints`): kept with the mask and
/// exported again, so DeepFashion2's evaluation can run on the export.
pub const DF2_FIELDS: [&str; 11] = [
    "style",
    "pair_id",
    "source",
    "keypoints",
    "num_keypoints",
    "occlusion",
    "zoom_in",
    "viewpoint",
    "scale",
    "split",
    "category_name",
];

#[derive(Debug, Deserialize)]
struct RawFile {
    images: Vec<Image>,
    annotations: Vec<RawAnnotation>,
}

/// A checked mask to annotate.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    /// Its id in the file.
    pub id: u64,
    /// Its image.
    pub image: Image,
    /// Its category.
    pub category_id: u32,
    /// The segmentation as given.
    pub segmentation: Value,
    /// The mask's area.
    pub area: f64,
    /// [x, y, width, height].
    pub bbox: [f64; 4],
    /// Attributes the file already gives (kept for reference).
    pub attribute_ids: Vec<u32>,
    /// COCO's crowd flag.
    pub iscrowd: u8,
    /// DeepFashion2's fields, as given ([`DF2_FIELDS`]).
    pub deepfashion2: serde_json::Map<String, Value>,
}

/// What an import found.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The masks to annotate.
    pub annotations: Vec<Annotation>,
    /// Masks with zero area, left out.
    pub zero_area: usize,
}

/// Parses and checks a COCO file against the ontology; the first problem is
/// reported naming its annotation.
pub fn parse(text: &str, ontology: &Ontology) -> Result<Parsed, String> {
    let file: RawFile = serde_json::from_str(text)
        .map_err(|e| format!("line {}: {e} (expected COCO JSON with `images` and `annotations`)", e.line()))?;
    let images = image_index(&file.images)?;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(file.annotations.len());
    let mut zero_area = 0;
    for a in file.annotations {
        match check(a, &images, ontology, &mut seen)? {
            Some(a) => out.push(a),
            None => zero_area += 1,
        }
    }
    Ok(Parsed { annotations: out, zero_area })
}

fn image_index(images: &[Image]) -> Result<HashMap<u64, Image>, String> {
    let index: HashMap<u64, Image> = images.iter().map(|i| (i.id, i.clone())).collect();
    if index.len() != images.len() {
        return Err("an image id appears twice".into());
    }
    for i in images {
        if i.width == 0 || i.height == 0 || i.file_name.trim().is_empty() {
            return Err(format!("image {}: needs a width, a height and a file_name", i.id));
        }
    }
    Ok(index)
}

/// Checks one annotation; `None` for a zero-area mask (left out).
fn check(
    a: RawAnnotation,
    images: &HashMap<u64, Image>,
    ontology: &Ontology,
    seen: &mut std::collections::HashSet<u64>,
) -> Result<Option<Annotation>, String> {
    let name = |m: String| format!("annotation {}: {m}", a.id);
    if !seen.insert(a.id) {
        return Err(name("its id appears twice".into()));
    }
    let image = images.get(&a.image_id).ok_or_else(|| name(format!("image {} does not exist", a.image_id)))?;
    if ontology.category(a.category_id).is_none() {
        return Err(name(format!("category {} is not in the ontology", a.category_id)));
    }
    if let Some(bad) = a.attribute_ids.iter().find(|id| ontology.attribute(**id).is_none()) {
        return Err(name(format!("attribute_ids: attribute {bad} is not in the ontology")));
    }
    let mask = Mask::parse(&a.segmentation, image.width, image.height).map_err(name)?;
    let area = mask.area();
    if area <= 0.0 {
        return Ok(None);
    }
    let bbox = a.bbox.unwrap_or_else(|| bounding_box(&mask));
    Ok(Some(Annotation {
        id: a.id,
        image: image.clone(),
        category_id: a.category_id,
        segmentation: a.segmentation,
        area,
        bbox,
        attribute_ids: a.attribute_ids,
        iscrowd: a.iscrowd,
        deepfashion2: a.other.into_iter().filter(|(k, _)| DF2_FIELDS.contains(&k.as_str())).collect(),
    }))
}

/// Reads a COCO file from disk without holding its annotations: a first
/// pass reads the images, a second hands each checked annotation to `each`
/// as it is parsed. Returns (masks read, zero-area masks left out).
pub fn stream_file(
    path: &std::path::Path,
    ontology: &Ontology,
    mut each: impl FnMut(Annotation) -> Result<(), String>,
) -> Result<(usize, usize), String> {
    #[derive(Deserialize)]
    struct ImagesOnly {
        images: Vec<Image>,
    }
    let open = || crate::text::open_file(path).map_err(|e| format!("{}: {e}", path.display()));
    let first: ImagesOnly = serde_json::from_reader(open()?)
        .map_err(|e| format!("line {}: {e} (expected COCO JSON with `images` and `annotations`)", e.line()))?;
    let images = image_index(&first.images)?;
    drop(first);
    let mut seen = std::collections::HashSet::new();
    let (mut read, mut zero_area) = (0usize, 0usize);
    let mut on_raw = |a: RawAnnotation| -> Result<(), String> {
        read += 1;
        match check(a, &images, ontology, &mut seen)? {
            Some(a) => each(a),
            None => {
                zero_area += 1;
                Ok(())
            }
        }
    };
    let mut de = serde_json::Deserializer::from_reader(open()?);
    serde::de::Deserializer::deserialize_map(&mut de, TopLevel { on_raw: &mut on_raw }).map_err(|e| {
        if e.is_data() && e.line() > 0 {
            format!("line {}: {e}", e.line())
        } else {
            e.to_string()
        }
    })?;
    Ok((read, zero_area))
}

/// Visits the file's top-level object, streaming `annotations`.
struct TopLevel<'a, F> {
    on_raw: &'a mut F,
}

impl<'de, F: FnMut(RawAnnotation) -> Result<(), String>> serde::de::Visitor<'de> for TopLevel<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a COCO object with `images` and `annotations`")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "annotations" {
                map.next_value_seed(Annotations { on_raw: &mut *self.on_raw })?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct Annotations<'a, F> {
    on_raw: &'a mut F,
}

impl<'de, F: FnMut(RawAnnotation) -> Result<(), String>> serde::de::DeserializeSeed<'de> for Annotations<'_, F> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(RawAnnotation) -> Result<(), String>> serde::de::Visitor<'de> for Annotations<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of annotations")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(a) = seq.next_element::<RawAnnotation>()? {
            (self.on_raw)(a).map_err(serde::de::Error::custom)?;
        }
        Ok(())
    }
}

/// The bounding box of a mask without one in the input: the extremes of
/// polygons' points, and an RLE mask's box as pycocotools' `toBbox` computes
/// it from the decoded runs.
fn bounding_box(mask: &Mask) -> [f64; 4] {
    match mask {
        Mask::Polygons(ps) => {
            let xs = ps.iter().flat_map(|p| p.iter().step_by(2).copied());
            let ys = ps.iter().flat_map(|p| p.iter().skip(1).step_by(2).copied());
            let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
            let (y0, y1) = ys.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
            [x0, y0, x1 - x0, y1 - y0]
        }
        Mask::Rle { height, counts, .. } => rle_bbox(*height, counts),
    }
}

/// pycocotools' `rleToBbox` (its C, step for step): runs are column-major,
/// alternating background and mask; a mask run that spans two columns
/// covers the whole height.
pub fn rle_bbox(height: u32, counts: &[u64]) -> [f64; 4] {
    let h = u64::from(height);
    let m = counts.len() / 2 * 2;
    if m == 0 || h == 0 {
        return [0.0; 4];
    }
    let (mut xs, mut ys, mut xe, mut ye) = (u64::MAX, u64::MAX, 0u64, 0u64);
    let (mut cc, mut xp) = (0u64, 0u64);
    for (j, &run) in counts[..m].iter().enumerate() {
        cc += run;
        let t = cc.saturating_sub((j % 2) as u64);
        let (y, x) = (t % h, t / h);
        if j % 2 == 0 {
            xp = x;
        } else if xp < x {
            ys = 0;
            ye = h - 1;
        }
        xs = xs.min(x);
        xe = xe.max(x);
        ys = ys.min(y);
        ye = ye.max(y);
    }
    [xs as f64, ys as f64, (xe - xs + 1) as f64, (ye - ys + 1) as f64]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ontology() -> Ontology {
        Ontology::parse(
            r#"{"categories": [{"id": 0, "name": "shirt, blouse", "supercategory": "upperbody"}],
                "attributes": [{"id": 115, "name": "symmetrical", "supercategory": "silhouette"}]}"#,
        )
        .expect("ontology")
    }

    fn file(annotation: &str) -> String {
        format!(
            r#"{{"images": [{{"id": 1, "width": 40, "height": 30, "file_name": "a.jpg"}}], "annotations": [{annotation}]}}"#
        )
    }

    #[test]
    fn an_rle_mask_gets_its_box_as_pycocotools_computes_it() {
        // pycocotools: toBbox of counts [35, 5, 25, 5, 1130] on 40x30 is [1, 5, 2, 5].
        assert_eq!(rle_bbox(30, &[35, 5, 25, 5, 1130]), [1.0, 5.0, 2.0, 5.0]);
        // A run crossing a column boundary covers the full height (as pycocotools).
        assert_eq!(rle_bbox(30, &[25, 10, 1165]), [0.0, 0.0, 2.0, 30.0]);
        assert_eq!(rle_bbox(30, &[1200]), [0.0; 4], "empty");
        let parsed = parse(
            &file(r#"{"id": 7, "image_id": 1, "category_id": 0, "segmentation": {"size": [30, 40], "counts": [35, 5, 25, 5, 1130]}}"#),
            &ontology(),
        )
        .expect("parses");
        assert_eq!(parsed.annotations[0].bbox, [1.0, 5.0, 2.0, 5.0]);
        assert_eq!(parsed.annotations[0].area, 10.0);
        let given = parse(
            &file(r#"{"id": 7, "image_id": 1, "category_id": 0, "bbox": [0, 0, 9, 9], "segmentation": {"size": [30, 40], "counts": [35, 5, 1160]}}"#),
            &ontology(),
        )
        .expect("parses");
        assert_eq!(given.annotations[0].bbox, [0.0, 0.0, 9.0, 9.0], "a box in the input is kept");
    }

    #[test]
    fn attribute_ids_must_be_in_the_ontology() {
        let polygon = r#""segmentation": [[1, 1, 10, 1, 10, 10]]"#;
        let ok = file(&format!(r#"{{"id": 3, "image_id": 1, "category_id": 0, "attribute_ids": [115], {polygon}}}"#));
        assert_eq!(parse(&ok, &ontology()).expect("known attribute").annotations[0].attribute_ids, vec![115]);
        let bad =
            file(&format!(r#"{{"id": 3, "image_id": 1, "category_id": 0, "attribute_ids": [115, 284], {polygon}}}"#));
        let e = parse(&bad, &ontology()).expect_err("284 is not in the ontology");
        assert!(e.contains("annotation 3") && e.contains("284"), "{e}");
    }
}

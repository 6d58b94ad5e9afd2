//! Segmentation masks as COCO stores them: polygons (`[[x1, y1, x2, y2,
//! ...], ...]`) or run-length encoding (`{"size": [h, w], "counts": ...}`,
//! counts as numbers or in COCO's compressed string), checked against
//! their image, with their area.

use serde_json::Value;

/// A checked mask.
#[derive(Debug, Clone, PartialEq)]
pub enum Mask {
    /// Polygons in image coordinates.
    Polygons(Vec<Vec<f64>>),
    /// Column-major runs alternating background and mask, starting with background.
    Rle {
        /// Image height.
        height: u32,
        /// Image width.
        width: u32,
        /// The runs.
        counts: Vec<u64>,
    },
}

impl Mask {
    /// Reads and checks a segmentation for an image of `width` × `height`.
    pub fn parse(segmentation: &Value, width: u32, height: u32) -> Result<Self, String> {
        match segmentation {
            Value::Array(polygons) => {
                let mut out = Vec::with_capacity(polygons.len());
                for (i, p) in polygons.iter().enumerate() {
                    let coords: Vec<f64> = p
                        .as_array()
                        .ok_or_else(|| format!("polygon {}: not a list of coordinates", i + 1))?
                        .iter()
                        .map(|v| v.as_f64().filter(|x| x.is_finite()))
                        .collect::<Option<_>>()
                        .ok_or_else(|| format!("polygon {}: coordinates must be numbers", i + 1))?;
                    if !coords.len().is_multiple_of(2) {
                        return Err(format!("polygon {}: an odd number of coordinates ({})", i + 1, coords.len()));
                    }
                    if coords.len() < 6 {
                        return Err(format!("polygon {}: fewer than 3 points", i + 1));
                    }
                    for pair in coords.chunks(2) {
                        let (x, y) = (pair[0], pair[1]);
                        if x < 0.0 || y < 0.0 || x > f64::from(width) || y > f64::from(height) {
                            return Err(format!(
                                "polygon {}: point ({x}, {y}) outside the {width}x{height} image",
                                i + 1
                            ));
                        }
                    }
                    out.push(coords);
                }
                if out.is_empty() {
                    return Err("no polygon".into());
                }
                Ok(Mask::Polygons(out))
            }
            Value::Object(rle) => {
                let size: Vec<u64> = rle
                    .get("size")
                    .and_then(Value::as_array)
                    .map(|s| s.iter().filter_map(Value::as_u64).collect())
                    .unwrap_or_default();
                if size.len() != 2 {
                    return Err("RLE: `size` must be [height, width]".into());
                }
                if size != [u64::from(height), u64::from(width)] {
                    return Err(format!(
                        "RLE: size [{}, {}] does not match the {width}x{height} image ([height, width] = [{height}, {width}])",
                        size[0], size[1]
                    ));
                }
                let counts = match rle.get("counts") {
                    Some(Value::String(s)) => decode_counts(s)?,
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(Value::as_u64)
                        .collect::<Option<Vec<u64>>>()
                        .ok_or("RLE: counts must be whole numbers")?,
                    _ => return Err("RLE: `counts` must be a string or a list".into()),
                };
                let total: u64 = counts.iter().sum();
                if total != u64::from(width) * u64::from(height) {
                    return Err(format!(
                        "RLE: counts cover {total} pixels, the image has {}",
                        u64::from(width) * u64::from(height)
                    ));
                }
                Ok(Mask::Rle { height, width, counts })
            }
            _ => Err("segmentation must be polygons or RLE".into()),
        }
    }

    /// The mask's area: pixels for RLE, the polygons' area (shoelace) otherwise.
    pub fn area(&self) -> f64 {
        match self {
            Mask::Polygons(ps) => ps
                .iter()
                .map(|p| {
                    let n = p.len() / 2;
                    let twice: f64 = (0..n)
                        .map(|i| {
                            let j = (i + 1) % n;
                            p[2 * i] * p[2 * j + 1] - p[2 * j] * p[2 * i + 1]
                        })
                        .sum();
                    twice.abs() / 2.0
                })
                .sum(),
            Mask::Rle { counts, .. } => counts.iter().skip(1).step_by(2).sum::<u64>() as f64,
        }
    }

    /// An SVG path of the mask in image coordinates (RLE as one-pixel-wide
    /// column runs), for drawing it over its image.
    pub fn svg_path(&self) -> String {
        use std::fmt::Write;
        let mut d = String::new();
        match self {
            Mask::Polygons(ps) => {
                for p in ps {
                    for (i, pair) in p.chunks(2).enumerate() {
                        let _ = write!(d, "{}{} {} ", if i == 0 { "M" } else { "L" }, pair[0], pair[1]);
                    }
                    d.push_str("Z ");
                }
            }
            Mask::Rle { height, counts, .. } => {
                let h = u64::from(*height).max(1);
                let mut pos = 0u64;
                for (i, run) in counts.iter().enumerate() {
                    if i % 2 == 1 {
                        // A run may continue over several columns.
                        let (mut start, end) = (pos, pos + run);
                        while start < end {
                            let (x, y) = (start / h, start % h);
                            let len = (h - y).min(end - start);
                            let _ = write!(d, "M{x} {y}h1v{len}h-1Z");
                            start += len;
                        }
                    }
                    pos += run;
                }
            }
        }
        d
    }
}

impl Mask {
    /// The mask's outline in image coordinates, for a thin stroke over the
    /// image: the polygons themselves, or for RLE the pixel edges between the
    /// mask and the rest (stroking the column runs instead would paint the
    /// whole part over).
    pub fn outline_path(&self) -> String {
        use std::fmt::Write;
        let Mask::Rle { height, width, counts } = self else { return self.svg_path() };
        let h = u64::from(*height).max(1);
        // Each column's runs of mask pixels, as [top, bottom) rows.
        let mut columns: Vec<Vec<(u64, u64)>> = vec![Vec::new(); *width as usize];
        let mut pos = 0u64;
        for (i, run) in counts.iter().enumerate() {
            if i % 2 == 1 {
                let (mut start, end) = (pos, pos + run);
                while start < end {
                    let (x, y) = (start / h, start % h);
                    let len = (h - y).min(end - start);
                    if let Some(column) = columns.get_mut(x as usize) {
                        column.push((y, y + len));
                    }
                    start += len;
                }
            }
            pos += run;
        }
        let mut d = String::new();
        let none = Vec::new();
        for (x, column) in columns.iter().enumerate() {
            let left = if x == 0 { &none } else { &columns[x - 1] };
            let right = columns.get(x + 1).unwrap_or(&none);
            for &(top, bottom) in column {
                let _ = write!(d, "M{x} {top}h1M{x} {bottom}h1");
            }
            for (top, bottom) in runs_without(column, left) {
                let _ = write!(d, "M{x} {top}V{bottom}");
            }
            for (top, bottom) in runs_without(column, right) {
                let _ = write!(d, "M{} {top}V{bottom}", x + 1);
            }
        }
        d
    }
}

/// The parts of sorted, disjoint runs `a` that no run of `b` covers.
fn runs_without(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(mut top, bottom) in a {
        while j < b.len() && b[j].1 <= top {
            j += 1;
        }
        let mut k = j;
        while top < bottom {
            match b.get(k) {
                Some(&(bt, bb)) if bt < bottom => {
                    if bt > top {
                        out.push((top, bt));
                    }
                    top = top.max(bb);
                    k += 1;
                }
                _ => {
                    out.push((top, bottom));
                    break;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod outline_tests {
    use super::*;

    /// Total stroke length of an outline path of `M x y h1` / `M x y V y2` segments.
    fn length(d: &str) -> u64 {
        d.split('M')
            .filter(|s| !s.is_empty())
            .map(|s| {
                if s.ends_with("h1") {
                    1
                } else {
                    let (head, to) = s.split_once('V').expect("vertical");
                    let from: u64 = head.split(' ').nth(1).expect("y").parse().expect("n");
                    to.parse::<u64>().expect("n") - from
                }
            })
            .sum()
    }

    #[test]
    fn an_rle_mask_is_outlined_by_its_perimeter_only() {
        // 4x4 image, column-major: a 2x2 square at columns 1-2, rows 1-2.
        let square = Mask::Rle { height: 4, width: 4, counts: vec![5, 2, 2, 2, 5] };
        assert_eq!(length(&square.outline_path()), 8, "{}", square.outline_path());
        assert!(!square.outline_path().contains("M2 1V"), "no edge between the square's own columns");
        // An L: column 0 rows 0-2 and column 1 row 2.
        let l = Mask::Rle { height: 3, width: 2, counts: vec![0, 3, 2, 1] };
        assert_eq!(length(&l.outline_path()), 10, "{}", l.outline_path());
        // Polygons are their own outline.
        let polygon = Mask::Polygons(vec![vec![0.0, 0.0, 2.0, 0.0, 2.0, 2.0]]);
        assert_eq!(polygon.outline_path(), polygon.svg_path());
    }
}

/// Decodes COCO's compressed RLE string (as `pycocotools`' `rleFrString`).
pub fn decode_counts(s: &str) -> Result<Vec<u64>, String> {
    let bytes = s.as_bytes();
    let mut counts: Vec<i64> = Vec::new();
    let mut p = 0;
    while p < bytes.len() {
        let (mut x, mut k, mut more) = (0i64, 0u32, true);
        while more {
            let c = i64::from(*bytes.get(p).ok_or("RLE: compressed counts end in the middle of a number")?) - 48;
            if !(0..64).contains(&c) {
                return Err("RLE: compressed counts hold a character outside COCO's alphabet".into());
            }
            x |= (c & 0x1f) << (5 * k);
            more = c & 0x20 != 0;
            p += 1;
            k += 1;
            if !more && (c & 0x10) != 0 {
                x |= -1i64 << (5 * k);
            }
            if k > 12 {
                return Err("RLE: a count is too long".into());
            }
        }
        if counts.len() > 2 {
            x += counts[counts.len() - 2];
        }
        counts.push(x);
    }
    counts.into_iter().map(|c| u64::try_from(c).map_err(|_| "RLE: a negative count".to_owned())).collect()
}

/// Encodes counts in COCO's compressed string (as `pycocotools`' `rleToString`).
pub fn encode_counts(counts: &[u64]) -> String {
    let mut out = String::new();
    for (i, &c) in counts.iter().enumerate() {
        let mut x = c as i64;
        if i > 2 {
            x -= counts[i - 2] as i64;
        }
        let mut more = true;
        while more {
            let mut c = x & 0x1f;
            x >>= 5;
            more = if c & 0x10 != 0 { x != -1 } else { x != 0 };
            if more {
                c |= 0x20;
            }
            out.push(char::from((c + 48) as u8));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compressed_rle_round_trips_like_pycocotools() {
        // Strings as pycocotools 2.0 writes them (frPyObjects / encode).
        assert_eq!(encode_counts(&[1, 4, 2, 1, 4]), "142M2");
        for counts in [vec![1u64, 4, 2, 1, 4], vec![0, 12], vec![5, 300, 2, 40, 1000, 1]] {
            assert_eq!(decode_counts(&encode_counts(&counts)).expect("decodes"), counts);
        }
        // pycocotools' encoding of a 10x10 image with a 3x3 square at (2, 2).
        assert_eq!(decode_counts("f037000`1").expect("decodes"), vec![22, 3, 7, 3, 7, 3, 55]);
    }

    #[test]
    fn masks_are_checked_against_their_image() {
        let square = json!([[1.0, 1.0, 5.0, 1.0, 5.0, 5.0, 1.0, 5.0]]);
        assert_eq!(Mask::parse(&square, 10, 10).expect("polygon").area(), 16.0);
        let odd = json!([[1.0, 1.0, 5.0]]);
        assert!(Mask::parse(&odd, 10, 10).expect_err("odd").contains("odd number"));
        let outside = json!([[1.0, 1.0, 50.0, 1.0, 5.0, 5.0]]);
        assert!(Mask::parse(&outside, 10, 10).expect_err("outside").contains("outside the 10x10 image"));
        let rle = json!({"size": [10, 10], "counts": "f037000`1"});
        assert_eq!(Mask::parse(&rle, 10, 10).expect("rle").area(), 9.0);
        assert!(Mask::parse(&rle, 12, 10).expect_err("size").contains("does not match"));
        let short = json!({"size": [10, 10], "counts": [5, 5]});
        assert!(Mask::parse(&short, 10, 10).expect_err("short").contains("cover 10 pixels"));
    }
}

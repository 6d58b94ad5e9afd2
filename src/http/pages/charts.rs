//! Small server-rendered SVG charts (no JavaScript needed to see them).

use std::fmt::Write;

/// A histogram of `values` over `[lo, hi]` in `bins` bins (values outside
/// fall into the edge bins), with a dashed line at the mean when given.
pub fn histogram(values: &[f64], bins: usize, lo: f64, hi: f64, title: &str, mean: Option<f64>) -> String {
    let (w, h, pad) = (360.0, 180.0, 28.0);
    let bins = bins.max(1);
    let mut counts = vec![0usize; bins];
    for v in values {
        let i = ((v - lo) / (hi - lo) * bins as f64).floor();
        counts[(i.max(0.0) as usize).min(bins - 1)] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let bar_w = (w - 2.0 * pad) / bins as f64;
    let x_of = |v: f64| pad + (v - lo) / (hi - lo) * (w - 2.0 * pad);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{title}"><text x="{pad}" y="14" font-size="12">{title}</text>"##
    );
    for (i, c) in counts.iter().enumerate() {
        let bh = (*c as f64) / top * (h - 2.0 * pad);
        let x = pad + i as f64 * bar_w;
        let y = h - pad - bh;
        let _ = write!(
            svg,
            r##"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{bh:.1}" fill="#7a3e9d" opacity="0.6"><title>{c}</title></rect>"##,
            bar_w - 1.0
        );
    }
    let _ = write!(svg, r##"<line x1="{pad}" y1="{0}" x2="{1}" y2="{0}" stroke="#888"/>"##, h - pad, w - pad);
    for t in [lo, (lo + hi) / 2.0, hi] {
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle">{t:.1}</text>"##,
            x_of(t),
            h - pad + 12.0
        );
    }
    if let Some(m) = mean {
        let x = x_of(m.clamp(lo, hi));
        // Near the right edge the label runs leftwards, so it is never cut off.
        let anchor = if (m.clamp(lo, hi) - lo) / (hi - lo) > 0.7 { "end" } else { "start" };
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" y1="{pad}" x2="{x:.1}" y2="{:.1}" stroke="#c0392b" stroke-dasharray="4 3"/><text x="{x:.1}" y="{:.1}" font-size="10" fill="#c0392b" text-anchor="{anchor}">mean {m:.3}</text>"##,
            h - pad,
            pad - 4.0
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_values_and_marks_the_mean() {
        let svg = histogram(&[0.05, 0.08, 0.9, -3.0], 10, 0.0, 1.0, "alpha", Some(0.5));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<rect").count(), 10);
        assert!(svg.contains("<title>3</title>"), "0.05, 0.08 and the clamped -3 share the first bin: {svg}");
        assert!(svg.contains("mean 0.500"));
    }
}

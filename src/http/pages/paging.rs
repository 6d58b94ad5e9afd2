//! Long lists on admin pages, one page of rows at a time, so that a page
//! stays small at any campaign size (a 30,000-question campaign's pages are
//! tens of kilobytes, not tens of megabytes).

use std::ops::Range;

/// How many rows one page of a list shows.
pub const ROWS: usize = 100;

/// The query string of a page, kept whole so that a list's links change only
/// their own page number and keep every other parameter (filters, the page
/// of another list on the same page).
#[derive(Debug, Clone, Default)]
pub struct PageQuery(Vec<(String, String)>);

impl PageQuery {
    /// Reads a raw query string; an unreadable one counts as empty (the
    /// first page of every list).
    pub fn parse(raw: Option<&str>) -> Self {
        Self(raw.and_then(|q| serde_urlencoded::from_str(q).ok()).unwrap_or_default())
    }

    /// The last value given for `key`, trimmed.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.trim())
    }

    /// Every value given for `key` (repeated parameters), in order.
    pub fn values<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0.iter().filter(move |(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The other parameters, without `key` (for a form that sets `key`).
    pub fn without(&self, key: &str) -> Vec<(String, String)> {
        self.0.iter().filter(|(k, _)| k != key).cloned().collect()
    }

    /// This query with `key` set to `value` (replacing any earlier value).
    fn with(&self, key: &str, value: &str) -> String {
        let mut pairs = self.without(key);
        pairs.push((key.to_owned(), value.to_owned()));
        serde_urlencoded::to_string(pairs).unwrap_or_default()
    }
}

/// One page of a list: which rows it shows and how to reach the others.
#[derive(Debug, Clone)]
pub struct Pager {
    /// The query parameter holding this list's page number (pages with two
    /// long lists give each its own).
    pub param: &'static str,
    /// The fragment the links return to (the list's section id).
    pub anchor: &'static str,
    /// This page's number, from 1.
    pub page: usize,
    /// How many pages the list has (at least 1).
    pub pages: usize,
    /// How many rows the whole list has.
    pub total: usize,
    /// The link to the previous page, if there is one.
    pub previous: Option<String>,
    /// The link to the next page, if there is one.
    pub next: Option<String>,
    /// The other query parameters, carried by the "go to page" form.
    pub kept: Vec<(String, String)>,
}

impl Pager {
    /// The page of a `total`-row list that `query` asks for under `param`;
    /// a missing, unreadable or out-of-range number shows the nearest page.
    pub fn new(total: usize, query: &PageQuery, param: &'static str, anchor: &'static str) -> Self {
        let pages = total.div_ceil(ROWS).max(1);
        let page = Self::requested(query, param).clamp(1, pages);
        let link = |n: usize| format!("?{}#{anchor}", query.with(param, &n.to_string()));
        Self {
            param,
            anchor,
            page,
            pages,
            total,
            previous: (page > 1).then(|| link(page - 1)),
            next: (page < pages).then(|| link(page + 1)),
            kept: query.without(param),
        }
    }

    /// The page number `query` asks for under `param` (1 when none is
    /// readable), before it is brought into the list's range.
    pub fn requested(query: &PageQuery, param: &str) -> usize {
        query.value(param).and_then(|p| p.parse::<usize>().ok()).unwrap_or(1)
    }

    /// The rows of a `total`-row list that page `requested` shows, brought
    /// into range as [`Pager::new`] does: what a list read page by page
    /// from the database fetches before it knows its length.
    pub fn rows_of(total: usize, requested: usize) -> Range<usize> {
        let page = requested.clamp(1, total.div_ceil(ROWS).max(1));
        let start = ((page - 1) * ROWS).min(total);
        start..(start + ROWS).min(total)
    }

    /// The positions of this page's rows in the whole list.
    pub fn range(&self) -> Range<usize> {
        Self::rows_of(self.total, self.page)
    }

    /// This page's rows of `all`.
    pub fn rows<'a, T>(&self, all: &'a [T]) -> &'a [T] {
        all.get(self.range()).unwrap_or_default()
    }

    /// Keeps only this page's rows of `all`.
    pub fn keep<T>(&self, mut all: Vec<T>) -> Vec<T> {
        let range = self.range();
        all.truncate(range.end);
        all.drain(..range.start);
        all
    }

    /// The number of the first row shown, from 1 (0 for an empty list).
    pub fn first(&self) -> usize {
        if self.total == 0 {
            0
        } else {
            self.range().start + 1
        }
    }

    /// The number of the last row shown.
    pub fn last(&self) -> usize {
        self.range().end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_shows_its_rows_and_links_keep_the_other_parameters() {
        let query = PageQuery::parse(Some("round=a&round=b&questions=2&members=3"));
        let pager = Pager::new(250, &query, "questions", "questions");
        assert_eq!((pager.page, pager.pages, pager.first(), pager.last()), (2, 3, 101, 200));
        assert_eq!(pager.previous.as_deref(), Some("?round=a&round=b&members=3&questions=1#questions"));
        assert_eq!(pager.next.as_deref(), Some("?round=a&round=b&members=3&questions=3#questions"));
        let all: Vec<usize> = (0..250).collect();
        assert_eq!(pager.rows(&all), &all[100..200]);
        assert_eq!(pager.keep(all.clone()), all[100..200].to_vec());
        assert_eq!(pager.kept.len(), 3);
    }

    #[test]
    fn out_of_range_or_unreadable_numbers_show_the_nearest_page() {
        for (raw, page) in [("p=0", 1), ("p=99", 3), ("p=x", 1), ("p=-1", 1), ("", 1), ("%zz", 1)] {
            let pager = Pager::new(201, &PageQuery::parse(Some(raw)), "p", "list");
            assert_eq!(pager.page, page, "{raw}");
        }
        let last = Pager::new(201, &PageQuery::parse(Some("p=3")), "p", "list");
        assert_eq!((last.first(), last.last(), last.next.is_none()), (201, 201, true));
        let empty = Pager::new(0, &PageQuery::default(), "p", "list");
        assert_eq!((empty.pages, empty.first(), empty.last()), (1, 0, 0));
        assert!(empty.rows::<u8>(&[]).is_empty());
    }
}

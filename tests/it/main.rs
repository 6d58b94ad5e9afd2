//! The integration test binary: one binary so it builds once.

mod fixtures;
mod support;

/// The benches' writer of BENCHMARKS.md's table, tested here (benches run no tests).
#[path = "../../benches/support/figures.rs"]
#[allow(dead_code)]
mod bench_figures;
mod bench_table;

mod a100_score;
mod a100_service;
mod accounts;
mod adaptive_overlap;
mod architecture;
mod backup;
mod browser;
mod cli_service;
mod cli_stats;
mod cli_vsd;
mod crowd_links;
mod data_browser;
mod db_answer_integrity;
mod db_release_guard;
mod demo;
mod fashionpedia_service;
mod ground_truth_cache;
mod hf_release;
mod http_annotation;
mod http_auth;
mod http_connections;
mod http_disconnect;
mod http_export;
mod http_instances;
mod http_kind_pages;
mod http_meta;
mod http_request_time;
mod http_roles;
mod http_security;
mod http_text_files;
mod link_guards;
mod object_storage;
mod page_refusals;
mod page_weight;
mod payouts;
mod plugin_kind;
mod releases;
mod stats_properties;
mod stats_reference;
mod vsd_case;
mod vsd_service;
mod vton_curation;
mod vton_released_code;
mod vton_service;

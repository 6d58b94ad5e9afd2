//! Rebuild when migrations change, so `sqlx::migrate!` embeds the new ones.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}

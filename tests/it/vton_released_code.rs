//! The `vton-qbench-code` preset against the released VTON-QBench code
//! itself: a release built to hit every rule at its edge is imported, curated
//! with the preset, exported again, and the released loader
//! (`load_reward_dataset_as_df` from `../shared/reference/vton-qbench`, as
//! its `dataset.py` calls it) runs on the export. Every response's verdict,
//! every kept questionnaire and every image's reward must agree.

use crate::fixtures::{admin_token, api};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The attention positions of the released v2 spec (rating 1; tolerance 1 at 35 and 45).
const ATTENTION: [usize; 5] = [5, 15, 25, 35, 45];

/// A small deterministic generator (the test must not depend on a seed's luck).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// One response: its id and its 50 ratings (1-3; 0 for an empty cell).
type Response = (String, Vec<u8>);

/// A row with rating 1 at the attention positions and `rest` elsewhere, in order.
fn with_attention(rest: &[u8]) -> Vec<u8> {
    let mut rest = rest.iter();
    (1..=50).map(|p| if ATTENTION.contains(&p) { 1 } else { *rest.next().unwrap_or(&2) }).collect()
}

/// The forms, each built to sit at one rule's edge.
fn forms() -> BTreeMap<String, Vec<Response>> {
    let mut rng = Lcg(11);
    let mut forms = BTreeMap::new();
    // f1: trolls at 9 and 10 opposite extremes of 50 columns (18 % and 20 %;
    // 9 of the 45 regular columns would be 20 %).
    let base = with_attention(&(0..45).map(|i| [1, 3][i % 2]).collect::<Vec<_>>());
    let flip = |n: usize| {
        let mut r = base.clone();
        let mut done = 0;
        for (p, v) in r.iter_mut().enumerate() {
            if done < n && !ATTENTION.contains(&(p + 1)) {
                *v = 4 - *v;
                done += 1;
            }
        }
        r
    };
    forms.insert(
        "f1".to_owned(),
        vec![
            ("r1a".to_owned(), base.clone()),
            ("r1b".to_owned(), base.clone()),
            ("r1c".to_owned(), base.clone()),
            ("r1-troll9".to_owned(), flip(9)),
            ("r1-troll10".to_owned(), flip(10)),
        ],
    );
    // f2: sample variance 0.3057 (population 0.2996) and 0.2841.
    let spread = |threes: usize| {
        let rest: Vec<u8> = [1, 1, 1].into_iter().chain(vec![3; threes]).chain(vec![2; 42 - threes]).collect();
        with_attention(&rest)
    };
    forms.insert(
        "f2".to_owned(),
        vec![
            ("r2a".to_owned(), spread(7)),
            ("r2b".to_owned(), spread(7)),
            ("r2c".to_owned(), spread(7)),
            ("r2-low".to_owned(), spread(6)),
        ],
    );
    // f3: runs of 40 (80 %, kept) and 41 (excluded) identical answers.
    // Position 45 (tolerance 1) is 2 where the run has ended, so only the run rule decides.
    let run = |n: usize| {
        (0..50)
            .map(|p| {
                if p < n {
                    1
                } else if p == 44 {
                    2
                } else {
                    3
                }
            })
            .collect::<Vec<u8>>()
    };
    // The others answer 1 or 2 where the runs answer 1, and 3 after: no troll among them.
    let varied = || {
        (1..=50usize)
            .map(|p| {
                if ATTENTION.contains(&p) {
                    1
                } else if p > 40 {
                    3
                } else {
                    [1, 2][p % 2]
                }
            })
            .collect::<Vec<u8>>()
    };
    forms.insert(
        "f3".to_owned(),
        vec![
            ("r3a".to_owned(), varied()),
            ("r3b".to_owned(), varied()),
            ("r3c".to_owned(), varied()),
            ("r3-run40".to_owned(), run(40)),
            ("r3-run41".to_owned(), run(41)),
        ],
    );
    // f4: attention tolerances: 2 at 35 passes, 2 at 25 fails, 3 at 45 fails, an empty 15 fails.
    let honest = |rng: &mut Lcg| {
        with_attention(&(0..45).map(|i| if rng.next(6) == 0 { 2 } else { [1, 2, 3][i % 3] }).collect::<Vec<_>>())
    };
    let at = |mut r: Vec<u8>, position: usize, rating: u8| {
        r[position - 1] = rating;
        r
    };
    let mut f4: Vec<Response> = (0..4).map(|k| (format!("r4-{k}"), honest(&mut rng))).collect();
    f4.push(("r4-35-off-by-1".to_owned(), at(honest(&mut rng), 35, 2)));
    f4.push(("r4-25-off-by-1".to_owned(), at(honest(&mut rng), 25, 2)));
    f4.push(("r4-45-off-by-2".to_owned(), at(honest(&mut rng), 45, 3)));
    f4.push(("r4-15-empty".to_owned(), at(honest(&mut rng), 15, 0)));
    forms.insert("f4".to_owned(), f4);
    // f5: three responses, one of them excluded: fewer than 3 left, dropped.
    forms.insert(
        "f5".to_owned(),
        vec![
            ("r5a".to_owned(), honest(&mut rng)),
            ("r5b".to_owned(), honest(&mut rng)),
            ("r5-run".to_owned(), run(45)),
        ],
    );
    // f6: seven noisy honest workers.
    forms.insert("f6".to_owned(), (0..7).map(|k| (format!("r6-{k}"), honest(&mut rng))).collect());
    forms
}

/// The release's two files.
fn release(forms: &BTreeMap<String, Vec<Response>>) -> (String, String) {
    let mut answers = String::from("form_id,answer_timestamp,gender,age,experience,response_id");
    for p in 1..=50 {
        answers.push_str(&format!(",{p}"));
    }
    answers.push('\n');
    let mut images = String::from(
        "form_id,answer_count,garment_type,dataset_type,vton_model_id,person_path,garment_path,ref_person_path,vton_path\n",
    );
    let models = ["catvton", "idm", "ladi", "fitdit"];
    for (form, responses) in forms {
        for (id, ratings) in responses {
            let cells: Vec<String> =
                ratings.iter().map(|&r| if r == 0 { String::new() } else { (r - 1).to_string() }).collect();
            answers.push_str(&format!("{form},2025-01-02T03:04:05Z,female,25-34,none,{id},{}\n", cells.join(",")));
        }
        for p in 1..=50 {
            if ATTENTION.contains(&p) {
                // As the released v2 dummies: the same image at 25 and 35.
                let d = if p == 35 { 25 } else { p };
                images.push_str(&format!(
                    "{form},{p},upper_body,dc,dummy,/p/d{d}.png,/g/d{d}.png,/r/d{d}.png,/t/dummy-{d}.png\n"
                ));
            } else {
                let model = models[p % models.len()];
                images.push_str(&format!(
                    "{form},{p},upper_body,dc,{model},/p/{form}-{}.png,/g/{form}-{}.png,/r/{form}-{}.png,/t/{form}-{p}.png\n",
                    p / 4,
                    p / 4,
                    p / 4
                ));
            }
        }
    }
    (answers, images)
}

/// The released loader's verdicts on `answers.csv` / `images.csv` in `dir`:
/// the kept response ids and, per try-on image, its reward, annotation count and annotators.
const RELEASED: &str = r#"
import json, os, sys, types
sys.modules["torch"] = types.ModuleType("torch")
sys.path.insert(0, sys.argv[1])
os.environ["DATASET_ROOT"] = sys.argv[2]
from util.curation import load_reward_dataset_as_df
df = load_reward_dataset_as_df(True, True, min_vote_num=3, min_alpha=None, version="v2")
images = {r["vton_path"]: {"reward": float(r["reward"]), "n": int(r["n_annotation"]),
          "annotators": sorted(str(a) for a in r["annotator_ids"])} for _, r in df.iterrows()}
print(json.dumps({"images": images, "forms": sorted({str(f) for f in df["form_id"]})}))
"#;

#[tokio::test]
async fn the_preset_agrees_with_the_released_code_on_every_verdict_and_reward() {
    let reference = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/vton-qbench");
    if !reference.join("util/curation.py").exists() {
        crate::support::say_skipped("released VTON-QBench code: ../shared/reference/vton-qbench not found");
        return;
    }
    let Some(python) =
        crate::support::python_with(&["pandas==2.3.3", "krippendorff==0.8.2", "numpy", "omegaconf", "PyYAML"])
    else {
        crate::support::say_skipped("released VTON-QBench code: no Python with pandas and krippendorff");
        return;
    };
    let forms = forms();
    let (answers, images) = release(&forms);
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let campaign = crate::fixtures::create_campaign(
        &app,
        &admin,
        json!({"kind": "vton", "name": "released code", "config": {"background": []}}),
    )
    .await;
    let attention: Vec<Value> =
        ATTENTION.iter().map(|&p| json!({"position": p, "expected": 1, "tolerance": u8::from(p >= 35)})).collect();
    let import = format!("/api/v1/admin/campaigns/{campaign}/vton/qbench");
    // A failure late in the import (a response id too long for a worker id,
    // found after the items were written) leaves nothing behind: the retry works.
    let long_id = "x".repeat(200);
    let broken = answers.replacen(",r1a,", &format!(",{long_id},"), 1);
    let body = json!({"answers": broken, "images": images, "attention": attention});
    let (status, error) = api(&app, &admin, Method::POST, &import, Some(body)).await;
    assert_eq!(status.as_u16() / 100, 4, "{error}");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("answers.csv line") && message.contains("response_id"), "{message}");
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items WHERE campaign_id = $1::uuid")
        .bind(&campaign)
        .fetch_one(&app.pool)
        .await
        .expect("count");
    assert_eq!(items, 0, "all or nothing");
    let body = json!({"answers": answers, "images": images, "attention": attention});
    let (status, summary) = api(&app, &admin, Method::POST, &import, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{summary}");
    assert_eq!(summary["attention_tasks"], 5, "the image at 25 and 35 is two attention tasks: {summary}");
    let (status, body) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/vton/curation"),
        Some(json!({"preset": "vton-qbench-code"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The released code on our export.
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("vtonqbench");
    std::fs::create_dir_all(&root).expect("dir");
    let mut exported = BTreeMap::new();
    for file in ["answers.csv", "images.csv"] {
        let text =
            crate::fixtures::get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{campaign}/vton/qbench/{file}"))
                .await;
        if file == "images.csv" {
            assert_eq!(text, images, "images.csv round trip, the repeated dummy included");
        }
        std::fs::write(root.join(file), &text).expect("write");
        exported.insert(file, text);
    }

    // The exported files imported again with the same seed give the same
    // bootstrapped alphas: each form's draws follow its exported name.
    let alphas = |gt: Value| -> Vec<String> {
        let mut v: Vec<String> = gt["curation"]["questionnaires"]
            .as_array()
            .expect("questionnaires")
            .iter()
            .map(|q| q["alpha_after"].to_string())
            .collect();
        v.sort();
        v
    };
    let again = crate::fixtures::create_campaign(
        &app,
        &admin,
        json!({"kind": "vton", "name": "again", "config": {"background": []}}),
    )
    .await;
    let body = json!({"answers": exported["answers.csv"], "images": exported["images.csv"], "attention": attention});
    let (status, summary) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{again}/vton/qbench"), Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{summary}");
    let preset = json!({"preset": "vton-qbench-code"});
    let (status, _) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{again}/vton/curation"), Some(preset)).await;
    assert_eq!(status, StatusCode::OK);
    let ground_truth = |id: String| {
        let (app, admin) = (&app, &admin);
        async move { api(app, admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await.1 }
    };
    let (first, second) = (alphas(ground_truth(campaign.clone()).await), alphas(ground_truth(again).await));
    assert!(first.iter().any(|a| a != "null"), "{first:?}");
    assert_eq!(first, second, "the same alphas from the same files");
    let out = std::process::Command::new(&python)
        .args(["-c", RELEASED])
        .arg(&reference)
        .arg(dir.path())
        .output()
        .expect("python");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let released: Value = serde_json::from_slice(&out.stdout).expect("json");
    let released_images = released["images"].as_object().expect("images");

    // Ours: the ground truth's images, and the responses curation kept.
    let (_, gt) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
    let ours: BTreeMap<String, (f64, usize, BTreeSet<String>)> = gt["images"]
        .as_array()
        .expect("images")
        .iter()
        .filter(|i| !i["tryon"].as_str().unwrap_or_default().contains("dummy"))
        .map(|i| {
            let who = i["worker_ids"]
                .as_array()
                .expect("worker ids")
                .iter()
                .map(|w| w.as_str().unwrap_or_default().trim_start_matches("vton-qbench:").to_owned())
                .collect();
            let n = usize::try_from(i["n_annotation"].as_u64().unwrap_or(0)).unwrap_or(0);
            (i["tryon"].as_str().unwrap_or_default().to_owned(), (i["mean"].as_f64().unwrap_or(f64::NAN), n, who))
        })
        .collect();
    let theirs: BTreeMap<String, (f64, usize, BTreeSet<String>)> = released_images
        .iter()
        .map(|(image, r)| {
            let who = r["annotators"].as_array().expect("a").iter().map(|a| a.as_str().unwrap_or("").to_owned());
            let n = usize::try_from(r["n"].as_u64().unwrap_or(0)).unwrap_or(0);
            (image.clone(), (r["reward"].as_f64().unwrap_or(f64::NAN), n, who.collect()))
        })
        .collect();
    assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>(), "the same images scored");
    for (image, (mean, n, who)) in &ours {
        let (reward, released_n, released_who) = &theirs[image];
        assert!((mean - reward).abs() < 1e-9, "{image}: ours {mean}, released {reward}");
        assert_eq!((n, who), (released_n, released_who), "{image}");
    }

    // The edges were really hit: each verdict as the released code gives it.
    let kept: BTreeSet<String> = theirs.values().flat_map(|(_, _, who)| who.iter().cloned()).collect();
    for (id, expect_kept) in [
        ("r1-troll9", true),
        ("r1-troll10", false),
        ("r2a", true),
        ("r2-low", false),
        ("r3-run40", true),
        ("r3-run41", false),
        ("r4-35-off-by-1", true),
        ("r4-25-off-by-1", false),
        ("r4-45-off-by-2", false),
        ("r4-15-empty", false),
        ("r5a", false),
        ("r6-0", true),
    ] {
        assert_eq!(kept.contains(id), expect_kept, "{id} in the released code's result");
    }
    // Our recorded exclusions name the same responses.
    let excluded: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT a.external_id FROM responses r JOIN assignments a ON a.id = r.assignment_id
         WHERE r.campaign_id = $1::uuid AND r.excluded_reason IS NOT NULL",
    )
    .bind(&campaign)
    .fetch_all(&app.pool)
    .await
    .expect("excluded");
    let excluded: BTreeSet<String> = excluded.into_iter().collect();
    let all: BTreeSet<String> = forms.values().flatten().map(|(id, _)| id.clone()).collect();
    assert_eq!(all.difference(&excluded).cloned().collect::<BTreeSet<_>>(), kept, "kept responses");
    let released_forms: BTreeSet<String> =
        released["forms"].as_array().expect("forms").iter().map(|f| f.as_str().unwrap_or("").to_owned()).collect();
    assert_eq!(released_forms, ["f1", "f2", "f3", "f4", "f6"].map(str::to_owned).into(), "f5 dropped");
}
